"""Process groups on MPI communicators, the Work that every operation
returns, and the watchdog.

Every operation is a generator that posts nonblocking MPI requests and
yields them; a Work drives it.  Collectives of a group post in the order the
program called them (MPI's rule), whatever order their Works are waited in:
a group keeps its Works in a queue and only the head may post.  Waiting polls
the requests against the group's timeout and a fault channel (a duplicate
communicator): a rank whose program dies of an exception tells the others,
which then fail naming it; a rank that never joins is named when the timeout
expires (the ranks still waiting answer a roll call, the others do not)."""
import atexit
import collections
import datetime
import os
import pickle
import sys
import time

_TAG_FAULT, _TAG_ROLL, _TAG_ANSWER, _TAG_EXIT, _TAG_ACK = 1, 2, 3, 4, 5
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)

_state = {"default": None, "groups": [], "hook": None}


_MPI = []


def mpi():
    """mpi4py's MPI module, initialised on first use (not at import, so that
    `import ember.distributed` costs nothing where it is not used)."""
    if _MPI:
        return _MPI[0]
    import mpi4py
    if "mpi4py.MPI" not in sys.modules:
        mpi4py.rc.initialize = False
        mpi4py.rc.finalize = False
    from mpi4py import MPI
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
        atexit.register(_finalize)
    _MPI.append(MPI)
    return MPI


def _finalize():
    from mpi4py import MPI
    # a group left with requests in flight (after a fault or a timeout) cannot
    # finalize: MPI would wait for them forever
    if MPI.Is_initialized() and not MPI.Is_finalized() and \
            not any(g.broken for g in _state["groups"]):
        for g in _state["groups"]:
            g.announce_exit()
        MPI.Finalize()


class DistributedError(RuntimeError):
    """A failure of the group rather than of this rank's program (another rank
    failed, or the timeout expired)."""
    __module__ = "ember.distributed"


class ProcessGroup:
    def __init__(self, comm, ranks, timeout, name):
        self.comm = comm                       # None on ranks outside the group
        self.ranks = ranks                     # global rank of each group rank
        self.timeout = timeout.total_seconds()
        self.name = name
        self.queue = collections.deque()       # Works not yet done posting, in call order
        self.broken = None
        self.fault_comm = comm.Dup() if comm is not None else None
        self.exited = set()
        self.blocking = False                  # whether the Work now posting is waited at once
        self.failed_rank = None                # the rank whose failure broke this group

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return len(self.ranks)

    def global_rank(self, group_rank):
        return self.ranks[group_rank]

    # ---- the fault channel -------------------------------------------------
    def _peers(self):
        me = self.rank()
        return [r for r in range(self.size()) if r != me]

    def notify(self, tag, payload):
        if self.fault_comm is None:
            return []
        data = pickle.dumps(payload)
        return [self.fault_comm.Isend([data, mpi().BYTE], dest=r, tag=tag) for r in self._peers()]

    def announce_exit(self):
        if self.fault_comm is not None and self.broken is None:
            reqs = self.notify(_TAG_EXIT, None)
            mpi().Request.Waitall(reqs)

    def _receive(self, status):
        MPI = mpi()
        buf = bytearray(status.Get_count(MPI.BYTE))
        self.fault_comm.Recv([buf, MPI.BYTE], source=status.Get_source(), tag=status.Get_tag())
        return pickle.loads(bytes(buf)) if buf else None

    def check_faults(self, what):
        """Raises if another rank reported a failure; answers roll calls."""
        MPI = mpi()
        status = MPI.Status()
        while self.fault_comm.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG, status):
            tag, src = status.Get_tag(), status.Get_source()
            payload = self._receive(status)
            if tag == _TAG_FAULT:
                self.failed_rank = src
                self.break_(f"ember.distributed.{what}: rank {self.global_rank(src)} failed: "
                            f"{payload}")
            elif tag == _TAG_ROLL:
                self.fault_comm.Isend([pickle.dumps(what), MPI.BYTE], dest=src,
                                      tag=_TAG_ANSWER)
            elif tag == _TAG_EXIT:
                self.exited.add(src)

    def roll_call(self, what, waited):
        """After a timeout: names the ranks that are not waiting in a
        collective (dead, hung, or elsewhere in their program)."""
        MPI = mpi()
        self.notify(_TAG_ROLL, what)
        answers = {}
        deadline = time.monotonic() + min(2.0, max(0.2, self.timeout))
        status = MPI.Status()
        while time.monotonic() < deadline and len(answers) < self.size() - 1:
            if self.fault_comm.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG, status):
                src, tag = status.Get_source(), status.Get_tag()
                payload = self._receive(status)
                if tag == _TAG_ANSWER:
                    answers[src] = payload
                elif tag == _TAG_FAULT:
                    self.failed_rank = src
                    self.break_(f"ember.distributed.{what}: rank {self.global_rank(src)} "
                                f"failed: {payload}")
                elif tag == _TAG_EXIT:
                    self.exited.add(src)
                elif tag == _TAG_ROLL:     # another rank timed out too: it is waiting
                    answers[src] = payload
                    self.fault_comm.Isend([pickle.dumps(what), MPI.BYTE], dest=src,
                                          tag=_TAG_ANSWER)
            else:
                time.sleep(0.001)
        parts = []
        for r in self._peers():
            g = self.global_rank(r)
            if r in self.exited:
                parts.append(f"rank {g} has exited")
            elif r not in answers:
                parts.append(f"rank {g} did not answer (failed, hung or busy elsewhere)")
            elif answers[r] != what:
                parts.append(f"rank {g} is waiting in {answers[r]}")
        detail = "; ".join(parts) or "every rank is waiting in it (a mismatch of calls)"
        self.break_(f"ember.distributed.{what}: timed out after {waited:.1f} s "
                    f"(init_process_group's timeout): {detail}")

    def break_(self, message):
        self.broken = message
        raise DistributedError(message)

    # ---- driving Works ---------------------------------------------------
    def progress(self):
        """Lets the queue's head post what it can; returns when it must wait."""
        while self.queue:
            head = self.queue[0]
            head.step()
            if not head.posting:
                self.queue.popleft()
            else:
                break


class Work:
    """What an operation returns with async_op=True: wait() blocks until it is
    done (raising what it raised), is_completed() tells without blocking."""

    def __init__(self, group, gen, what, ordered=True, blocking=False):
        self.group = group
        self.blocking = blocking
        self.what = what
        self._gen = gen
        self._requests = []
        self.posting = True          # the generator has more to post
        self._done = False
        self._error = None
        self._result = None
        self._ordered = ordered
        if group.broken:
            raise DistributedError(group.broken)
        if ordered:
            group.queue.append(self)
            group.progress()
        else:
            self.step()

    def step(self):
        """Posts the generator's next requests once the current ones are done."""
        try:
            while self.posting:
                reqs = self._requests
                status = None
                if reqs:
                    if isinstance(reqs, WithStatus):
                        status = reqs.status
                        if not reqs.request.Test(status):
                            return
                    elif not _Testall(reqs):
                        return
                try:
                    # a WithStatus request sends its status back (recv's sender)
                    self.group.blocking = self.blocking
                    reqs = self._gen.send(status)
                except StopIteration as stop:
                    self._result = stop.value
                    self.posting = False
                    self._done = True
                    self._requests = []
                    return
                self._requests = reqs if isinstance(reqs, (list, WithStatus)) else \
                    list(reqs) if isinstance(reqs, tuple) else [reqs]
        except DistributedError:
            raise
        except Exception as e:       # e.g. an argument error found by the exchange (on every rank)
            self._error = e
            self.posting = False
            self._done = True

    def _poll(self):
        if self._ordered:
            self.group.progress()
        else:
            self.step()
        return self._done

    def is_completed(self):
        if not self._done and self.group.broken is None:
            self._poll()
            self.group.check_faults(self.what)
        return self._done

    def is_success(self):
        return self._done and self._error is None

    def exception(self):
        return self._error

    def wait(self, timeout=None):
        group = self.group
        limit = group.timeout if timeout is None else (
            timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout)
        start = time.monotonic()
        deadline = start + limit
        next_check = start
        spins = 0
        # spin as MPI's own blocking calls do (a yield or a sleep costs a
        # timeslice when the other ranks are on the same cores); past 20 ms,
        # yield; past 0.2 s, sleep between polls
        while not self._poll():
            spins += 1
            if spins & 63:
                continue
            if group.broken:
                raise DistributedError(group.broken)
            now = time.monotonic()
            if now >= next_check:
                group.check_faults(self.what)
                next_check = now + 0.01
                if now >= deadline:
                    group.roll_call(self.what, now - start)
            waited = now - start
            if waited > 0.2:
                time.sleep(0.0005)
            elif waited > 0.02:
                os.sched_yield()
        if self._error is not None:
            raise self._error
        return True

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        raise RuntimeError("ember.distributed: Work.get_future() is not supported; use wait()")


class WithStatus:
    """A request whose status the generator wants back (yielded alone)."""
    __slots__ = ("request", "status")

    def __init__(self, request):
        self.request = request
        self.status = mpi().Status()


def _Testall(reqs):
    return _MPI[0].Request.Testall(reqs)


def run(group, gen, what, async_op, ordered=True):
    work = Work(group, gen, what, ordered, blocking=not async_op)
    if async_op:
        return work
    return work.result()


# ---- uncaught exceptions: tell the other ranks --------------------------------
def _excepthook(kind, value, tb):
    prev = _state["prev_hook"]
    prev(kind, value, tb)
    if not _state["groups"]:
        return
    if isinstance(value, DistributedError):
        # the failed rank waits for this (so that mpiexec does not end this
        # process before it has said why)
        reqs = [g.fault_comm.Isend([b"", mpi().BYTE], dest=g.failed_rank, tag=_TAG_ACK)
                for g in _state["groups"] if g.failed_rank is not None]
        _wait_sends(reqs, 0.5)
        _exit_now()
    summary = f"{kind.__name__}: {value}".splitlines()[0][:400]
    rank = _state["default"].rank()
    print(f"[ember.distributed] rank {rank} failed ({summary}); telling the other ranks",
          file=sys.stderr, flush=True)
    reqs, waiting = [], []
    for g in _state["groups"]:
        if g.fault_comm is not None and not g.broken:
            reqs += g.notify(_TAG_FAULT, summary)
            waiting.append((g, set(g._peers())))
    _wait_sends(reqs, 1.0)
    # the ranks waiting in a collective report the failure, then answer; a
    # rank busy elsewhere finds the message at its next collective
    MPI = mpi()
    status = MPI.Status()
    end = time.monotonic() + min(3.0, min((g.timeout for g, _ in waiting), default=0))
    while any(peers for _, peers in waiting) and time.monotonic() < end:
        for g, peers in waiting:
            if g.fault_comm.Iprobe(MPI.ANY_SOURCE, _TAG_ACK, status):
                g._receive(status)
                peers.discard(status.Get_source())
        time.sleep(0.001)
    _exit_now()


def _wait_sends(reqs, seconds):
    MPI = mpi()
    end = time.monotonic() + seconds
    while reqs and not MPI.Request.Testall(reqs) and time.monotonic() < end:
        time.sleep(0.001)


def _exit_now():
    sys.stdout.flush()
    sys.stderr.flush()
    # requests may be in flight: MPI_Finalize would wait for them
    os._exit(1)


def install_excepthook():
    if _state["hook"] is None:
        _state["prev_hook"] = sys.excepthook
        sys.excepthook = _excepthook
        _state["hook"] = _excepthook


def remove_excepthook():
    if _state["hook"] is not None and sys.excepthook is _state["hook"]:
        sys.excepthook = _state["prev_hook"]
    _state["hook"] = None

