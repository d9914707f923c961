"""Workload families: one module per family, each exposing FAMILY and cases(scale).

A Case is one row of the results table: a named piece of work in a unit, and
a way to build that work for each library.  `make(lib, mod)` returns a
timing.Stmt for library `lib` ("ember", "torch" or "numpy"; `mod` is the
imported module: ember.th, torch or numpy), or raises Unsupported when that
library has no form of the workload.

scale is "full" (the sizes the figures are quoted for), or "smoke" (tiny sizes: used by
bench/tests to exercise the harness; its figures mean nothing).

To add a family (autograd overhead, conv2d, LeNet/MLP steps, import time,
memory, ...): write bench/workloads/<family>.py with FAMILY and cases(scale),
and list it in FAMILIES below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# unit -> how a per-call time becomes the reported figure
THROUGHPUT_UNITS = {"GFLOP/s": 1e9, "GB/s": 1e9}
TIME_UNITS = {"µs/op": 1e6, "ms/op": 1e3, "s": 1.0}


class Unsupported(Exception):
    """This library has no form of this workload (reported as a note)."""


@dataclass
class Case:
    family: str
    name: str
    unit: str  # a key of THROUGHPUT_UNITS or TIME_UNITS
    make: Callable  # (lib, mod) -> timing.Stmt
    work: float = 0.0  # flops or bytes per call, for throughput units
    rtol: float = 1e-5  # result check against NumPy's result
    atol: float = 0.0
    note: str = ""
    busy: int = 0  # processes kept busy on every core while this case runs

    def figure(self, per_call_s: float) -> float:
        """The reported figure (in self.unit) for one call's time."""
        if self.unit in THROUGHPUT_UNITS:
            return self.work / per_call_s / THROUGHPUT_UNITS[self.unit]
        return per_call_s * TIME_UNITS[self.unit]

    @property
    def higher_is_better(self) -> bool:
        return self.unit in THROUGHPUT_UNITS


def families():
    from . import autograd, compile, data, linalg, load, nn, th_ops, vision

    return {m.FAMILY: m for m in (th_ops, linalg, autograd, compile, data, nn, vision, load)}


def all_cases(scale: str = "full") -> list[Case]:
    out: list[Case] = []
    for mod in families().values():
        out.extend(mod.cases(scale))
    return out
