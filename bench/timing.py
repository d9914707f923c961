"""The shared timing helper: interleaved, calibrated samples and their medians.

Every workload hands the harness one statement per library (a string that
`timeit` compiles into its own loop, so no Python call overhead is added to
any library's figure).  The helper then

1. warms each statement up once (first-call costs: allocator, thread pool,
   lazy imports),
2. calibrates, per library, how many calls make one sample last at least
   `min_sample_s` (doubling, like `timeit.Timer.autorange`),
3. takes `rounds` samples per library *interleaved*: one sample of each
   library per round (A B C, then a new order, ...), the order of each round
   a seeded shuffle, so that drift on a shared machine (another process,
   frequency changes) lands on all libraries alike and no library always runs
   right after the same other one,
4. pauses `settle_s` before each sample when thread pools are in use: after a
   call, OpenBLAS's worker threads busy-wait for about 2^28 cycles (~0.1 s)
   and OpenMP's for a shorter while, so a library timed right after another
   one's multi-threaded call shares its cores with those spinning threads
   (measured here on 2 cores: PyTorch's 2-thread matmul n=1024 took ~30%
   longer right after NumPy's than after a 150 ms pause).

`timeit` disables the garbage collector while a sample runs.

Nothing here, nor anywhere in bench/, asserts on a time: the figures are
reported, never checked.
"""
from __future__ import annotations

import math
import random
import statistics
import time
import timeit
from dataclasses import dataclass, field


@dataclass
class Stmt:
    """One library's form of a workload.

    stmt:    the statement that is timed, e.g. ``"th.add(a, b, out=c)"``.
    globals: the names it uses.
    result:  an expression (evaluated once, outside timing, after the
             statement has run) whose value is compared against the
             reference library's, e.g. ``"c"``; None skips the check.
    """

    stmt: str
    globals: dict
    result: str | None = None


@dataclass
class Samples:
    """Per-call seconds of each sample of one library."""

    number: int  # calls per sample
    per_call_s: list[float] = field(default_factory=list)

    @property
    def median_s(self) -> float:
        return statistics.median(self.per_call_s)

    @property
    def spread(self) -> float:
        """(max - min) / median of the samples: a rough noise indicator."""
        if not self.per_call_s:
            return float("nan")
        return (max(self.per_call_s) - min(self.per_call_s)) / self.median_s


def calibrate(timer: timeit.Timer, min_sample_s: float, max_number: int = 1 << 24) -> int:
    """Smallest power of two of calls whose total time reaches min_sample_s."""
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_sample_s or number >= max_number:
            return number
        if t > 0:  # jump to the power of two that should reach the target
            want = number * min_sample_s / t * 1.05
            nxt = 1 << max(math.ceil(math.log2(want)), 0)
        else:
            nxt = number * 2
        number = min(max(number * 2, nxt), max_number)


def interleaved(stmts: dict[str, Stmt], rounds: int, min_sample_s: float,
                errors: dict[str, str] | None = None, settle_s: float = 0.0,
                seed: int = 0, make_timer=None, warmup: int = 1) -> dict[str, Samples]:
    """Time each library's statement, interleaved; see the module docstring.

    A library whose statement raises (during warm-up or a round) is dropped
    from the comparison; its error text goes into `errors` (if given).
    make_timer(lib, stmt) gives the timeit.Timer of a library (the default
    times the statement with the process clock; bench/gpu.py passes one whose
    clock synchronizes the device); warmup: calls before calibration.
    """
    timers: dict[str, timeit.Timer] = {}
    numbers: dict[str, int] = {}
    for lib, s in stmts.items():
        try:
            timer = (make_timer(lib, s) if make_timer
                     else timeit.Timer(s.stmt, globals=s.globals))
            timer.timeit(warmup)
            numbers[lib] = calibrate(timer, min_sample_s)
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            if errors is not None:
                errors[lib] = f"{type(e).__name__}: {e}"
            continue
        timers[lib] = timer
    libs = list(timers)
    out = {lib: Samples(numbers[lib]) for lib in libs}
    rng = random.Random(seed)
    for _ in range(rounds):
        order = libs[:]
        rng.shuffle(order)
        for lib in order:
            if settle_s:
                time.sleep(settle_s)
            if lib not in timers:
                continue
            n = numbers[lib]
            try:
                out[lib].per_call_s.append(timers[lib].timeit(n) / n)
            except Exception as e:  # noqa: BLE001 - reported, not hidden
                if errors is not None:
                    errors[lib] = f"{type(e).__name__}: {e}"
                del timers[lib], out[lib]
    return out
