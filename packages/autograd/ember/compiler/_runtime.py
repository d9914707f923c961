"""A compiled program: the traced graph run step by step, fusion groups
through their generated kernels, every other node as traced.

Under autograd a group is one node (FusedGroup) whose backward is itself a
compiled graph (traced from the group's nodes and the front's gradient
rules); a group whose kernel could not be built runs its nodes as traced.
"""
import math
import os
import sys
import time

import ember
from ember.jit import _points
from ember.jit._graph import substitute
from ember.jit._tracer import flat_tensors

from . import _codegen, _toolchain
from ._partition import Group, partition

__all__ = ["CompiledGraph", "FusedGroup", "reproduces", "logs_fusion"]

_DTYPES = {name: getattr(ember, name) for name in
           ("float32", "float64", "int8", "uint8", "int16", "int32", "int64")}


def logs_fusion():
    """EMBER_LOGS=fusion (a comma-separated list) asks for the groups."""
    return "fusion" in os.environ.get("EMBER_LOGS", "").split(",")


def _log(msg):
    if logs_fusion():
        print(f"[ember.compile] {msg}", file=sys.stderr)


def _coalesce(shape, strides):
    """(sizes, strides per operand) with size-1 dims dropped and adjacent
    dims merged where every operand steps through them as one."""
    dims = [d for d, n in enumerate(shape) if n != 1]
    sizes = [shape[d] for d in dims]
    st = [[s[d] for d in dims] for s in strides]
    if not sizes:
        return [1], [[0] for _ in strides]
    out_sizes, out_st = [sizes[0]], [[s[0]] for s in st]
    for k in range(1, len(sizes)):
        if all(s[-1] == t[k] * sizes[k] for s, t in zip(out_st, st)):
            out_sizes[-1] *= sizes[k]
            for s, t in zip(out_st, st):
                s[-1] = t[k]
        else:
            out_sizes.append(sizes[k])
            for s, t in zip(out_st, st):
                s.append(t[k])
    return out_sizes, out_st


def _contiguous(shape):
    """Row-major element strides of `shape`."""
    out, step = [], 1
    for n in reversed(shape):
        out.insert(0, step)
        step *= n
    return out


def _broadcast_strides(t, shape):
    """t's element strides when broadcast to `shape` (0 where it repeats)."""
    lead = len(shape) - t.dim()
    out = []
    for d, n in enumerate(shape):
        j = d - lead
        out.append(0 if j < 0 or t.shape[j] != n else t.stride(j))
    return out


_HOST_MEMORY = {"cpu": True}


def _host_memory(device_type):
    """Whether the C kernels may run on this device type's tensors: the
    CPU's, and those of a backend whose memory is host memory (the
    emulated CUDA device)."""
    if device_type not in _HOST_MEMORY:
        from ember import backends
        try:
            probe = getattr(backends.get_backend(device_type), "host_memory", None)
            _HOST_MEMORY[device_type] = bool(probe and probe())
        except backends.BackendError:
            _HOST_MEMORY[device_type] = False
    return _HOST_MEMORY[device_type]


class _Plan:
    """A group's kernel and argument block for one layout of its inputs."""

    __slots__ = ("layouts", "kernel", "args", "nbytes", "units", "grain", "device")

    def __init__(self, layouts, kernel, args, nbytes, units, grain, device):
        self.layouts, self.kernel, self.args, self.nbytes = layouts, kernel, args, nbytes
        self.units, self.grain, self.device = units, grain, device


class FusedKernel:
    """A group's kernel for one layout of its operands."""

    def __init__(self, group, fn, key, source_path):
        self.group, self.fn, self.key, self.source_path = group, fn, key, source_path


def _last_reads(steps, graph):
    """{step index: ids of the values read last by that step} (the graph's
    outputs excepted: they are read at the end)."""
    last = {}
    for i, step in enumerate(steps):
        nodes = step.nodes if isinstance(step, Group) else (step,)
        for n in nodes:
            for v in n.inputs():
                last[v.id] = i
            for v in n.outputs:        # a value nothing reads goes at once
                last.setdefault(v.id, i)
    keep = {v.id for v in graph.output_values()}
    out = {}
    for vid, i in last.items():
        if vid not in keep:
            out.setdefault(i, []).append(vid)
    return out


class CompiledGraph:
    """The steps of one traced signature and the kernels built for them."""

    def __init__(self, graph, constant, label):
        self.graph = graph
        self.constant = constant     # value -> its tensor (parameters looked up live)
        self.label = label
        self.steps = partition(graph)
        self.groups = [s for s in self.steps if isinstance(s, Group)]
        self.kernels = {}            # (group index, layout) -> FusedKernel or None (failed)
        self.resolved = {}
        self.eager_groups = set()    # groups that could not be compiled
        self.plans = {}              # group index -> _Plan of the last layout seen
        self.backwards = {}          # (group index, needs, layouts) -> CompiledGraph or None
        self.compile_s = 0.0
        self.last_reads = _last_reads(self.steps, graph)

    # ---- running ---------------------------------------------------------
    def run(self, inputs, fuse=True):
        """The graph's outputs for these inputs; fuse=False runs every node
        as traced (the replay that validates a trace)."""
        env = {}
        for v, x in zip(self.graph.inputs, inputs):
            env[v.id] = x
        for v in self.graph.constants:
            env[v.id] = self.constant(v)

        def bind(v):
            return env[v.id]
        for gi, step in enumerate(self.steps):
            if isinstance(step, Group):
                if not (fuse and self._run_group(gi, step, env)):
                    for n in step.nodes:
                        self._run_node(n, env, bind)
            else:
                self._run_node(step, env, bind)
            # values nothing later reads go now, as eager code drops them
            # (holding every intermediate to the end raised the peak)
            for vid in self.last_reads.get(gi, ()):
                env.pop(vid, None)
        return substitute(self.graph.outputs, bind)

    def _run_node(self, n, env, bind, cached=True):
        fn = self.resolved.get(n.target) if cached else None
        if fn is None:
            fn = _points.resolve(n.target)
            if cached:
                self.resolved[n.target] = fn
        args = substitute(n.args, bind)
        kwargs = substitute(n.kwargs, bind)
        out = fn(*args, **kwargs)
        results = [args[0]] if n.inplace else flat_tensors(out)
        for v, t in zip(n.outputs, results):
            env[v.id] = t

    def _run_group(self, gi, group, env):
        """Runs the group's kernel; False when it must run eagerly."""
        if gi in self.eager_groups:
            return False
        ins = [env[v.id] for v in group.inputs]
        layouts = [t.stride() for t in ins]
        plan = self.plans.get(gi)
        if plan is None or plan.layouts != layouts:
            plan = self._plan(gi, group, ins, layouts)
            if plan is None:
                return False
        if ember.is_grad_enabled() and any(t.requires_grad for t in ins):
            outs = FusedGroup.apply(_GroupRunner(self, gi, group, plan), *ins)
        else:
            outs = self._launch(group, plan, ins)
        for v, t in zip(group.results(), outs):
            env[v.id] = t
        return True

    def _launch(self, group, plan, ins):
        """The group's outputs computed by its kernel (no autograd)."""
        dtype = _DTYPES[group.dtype]
        dev = plan.device
        outs = [ember.empty(group.shape, dtype=dtype, device=dev) for _ in group.outputs] + \
            [ember.empty(v.shape, dtype=dtype, device=dev) for v in group.row_outputs]
        if plan.units:
            ffi = _toolchain._ffi
            a = ffi.new("ember_fused_args *")
            ffi.memmove(a, plan.args, plan.nbytes)
            ptr = a.ptr
            for k, t in enumerate(ins):
                ptr[k] = ffi.cast("char *", t.data_ptr())
            for k, t in enumerate(outs, len(ins)):
                ptr[k] = ffi.cast("char *", t.data_ptr())
            plan.kernel.fn(a, plan.units, plan.grain)
        return outs

    def replay_group(self, group, ins):
        """The group's outputs computed by its nodes, as traced (autograd
        records them like any eager ops).  The ops are looked up anew, not
        from the cache: under a trace (the backward's) they must be the
        tracer's recording wrappers."""
        env = {v.id: t for v, t in zip(group.inputs, ins)}

        def bind(v):
            return env[v.id]
        for n in group.nodes:
            self._run_node(n, env, bind, cached=False)
        return [env[v.id] for v in group.results()]

    def _plan(self, gi, group, ins, layouts):
        """The kernel and its argument block (sizes, strides) for inputs of
        these layouts (every call of a signature has the same); None when
        the group runs eagerly."""
        device = ins[0].device
        if any(t.device != device for t in ins) or not _host_memory(device.type):
            return None            # a GPU's tensors: the group runs eagerly
        shape = list(group.shape)
        reducing = group.reduces
        if reducing and shape[-1] == 0 and any(
                kind == "reduce" and payload[0] in ("amax", "amin")
                for kind, _, payload in group.steps):
            return None            # eager says what is wrong (an empty max)
        strides = [_broadcast_strides(t, shape) for t in ins] + \
            [_contiguous(shape)] * len(group.outputs)
        if reducing:               # row outputs, as kept (N..., 1), broadcast along the row
            strides += [_contiguous(shape[:-1] + [1])[:-1] + [0]] * len(group.row_outputs)
            sizes, st = _coalesce(shape[:-1], [s_[:-1] for s_ in strides])
            if sizes == [1] and not shape[:-1]:
                sizes, st = [], [[] for _ in strides]
            sizes, st = sizes + [shape[-1]], [x + [s_[-1]] for x, s_ in zip(st, strides)]
        else:
            sizes, st = _coalesce(shape, strides)
        if len(sizes) > _codegen.MAX_DIMS or len(strides) > _codegen.MAX_OPERANDS:
            return None
        layout = tuple(1 if s_[-1] == 1 else 0 if s_[-1] == 0 else None for s_ in st)
        work = math.prod(shape[:-1]) if reducing else math.prod(shape)
        kernel = self._kernel(gi, group, layout) if work else None
        if kernel is None and work:
            return None
        ffi = _toolchain._ffi
        args = ffi.new("ember_fused_args *")
        for k in range(len(st)):
            args.strides[k][0:len(sizes)] = st[k]
        args.sizes[0:len(sizes)] = sizes
        args.ndim = len(sizes)
        inner = sizes[-1]
        args.nblocks = 1 if reducing else -(-inner // _codegen.BLOCK)
        units = math.prod(sizes[:-1]) * args.nblocks if work else 0
        per_unit = max(1, inner if reducing else min(inner, _codegen.BLOCK))
        # outputs on the inputs' device (None: the default CPU, cheapest to make)
        plan = _Plan(layouts, kernel, args, ffi.sizeof("ember_fused_args"), units=units,
                     grain=max(1, 32768 // per_unit),
                     device=None if device.type == "cpu" else device)
        self.plans[gi] = plan
        return plan

    # ---- building -----------------------------------------------------------
    def _kernel(self, gi, group, layout):
        k = (gi, layout)
        if k in self.kernels:
            return self.kernels[k]
        src = _codegen.source(group, layout)
        start = time.perf_counter()
        try:
            fn, key, compiled_in = _toolchain.load(src)
        except _toolchain.CompilerMissing as e:
            _warn_once(f"ember.compile: {e}; running eagerly")
            self.eager_groups.add(gi)
            self.kernels[k] = None
            return None
        except RuntimeError as e:
            detail = [ln for ln in str(e).splitlines() if "error" in ln][:1] or \
                str(e).splitlines()[:1]
            _warn_once(f"ember.compile: a fused kernel failed to build; running that group "
                       f"eagerly ({detail[0].strip()})")
            self.eager_groups.add(gi)
            self.kernels[k] = None
            return None
        took = time.perf_counter() - start
        self.compile_s += took
        path = f"{_toolchain.cache_dir()}/{key[:2]}/{key}.c"
        how = f"compiled in {compiled_in:.2f} s" if compiled_in is not None \
            else "from the cache"
        _log(f"{self.label}: group {gi}: {group.describe()}; {path} ({how})")
        kernel = self.kernels[k] = FusedKernel(group, fn, key, path)
        return kernel

    def explain(self):
        lines = [f"{self.label}: {len(self.graph.nodes)} ops, {len(self.groups)} fusion "
                 f"group(s)"]
        for gi, step in enumerate(self.steps):
            if isinstance(step, Group):
                built = [k for (g, _), k in self.kernels.items() if g == gi and k]
                where = f"; source {built[0].source_path}" if built else ""
                lines.append(f"  group {gi}: {step.describe()}{where}")
        eager = [s.kind for s in self.steps if not isinstance(s, Group)]
        if eager:
            lines.append(f"  eager: {', '.join(eager)}")
        return "\n".join(lines)


class _GroupRunner:
    """What a fused group's autograd node keeps: its graph, group and plan."""

    __slots__ = ("graph", "gi", "group", "plan")

    def __init__(self, graph, gi, group, plan):
        self.graph, self.gi, self.group, self.plan = graph, gi, group, plan


class FusedGroup(ember.autograd.Function):
    """One autograd node for a fused group: the forward is the kernel; the
    backward is a compiled graph traced from the group's nodes and the
    front's gradient rules (recomputing the group's values from its saved
    inputs instead of storing them), or, under create_graph=True, the
    same computation run eagerly so that it is differentiable again."""

    @staticmethod
    def forward(ctx, runner, *ins):
        ctx.runner = runner
        ctx.save_for_backward(*ins)
        return tuple(runner.graph._launch(runner.group, runner.plan, list(ins)))

    @staticmethod
    def backward(ctx, *grads):
        r = ctx.runner
        return (None,) + tuple(r.graph.group_backward(r.gi, r.group, list(ctx.saved_tensors),
                                                      list(grads), ctx.needs_input_grad[1:]))


def _group_backward(self, gi, group, ins, grads, needs):
    """Gradients of the group's inputs (None where not needed)."""
    if ember.is_grad_enabled():        # create_graph=True: differentiable, eager
        return _eager_backward(self, group, ins, grads, needs, create_graph=True)
    key = (gi, tuple(needs), tuple(t.stride() for t in ins), tuple(g.stride() for g in grads))
    compiled = self.backwards.get(key, False)
    if compiled is False:
        compiled = self.backwards[key] = _trace_backward(self, gi, group, ins, grads, needs)
    if compiled is None:
        return _eager_backward(self, group, ins, grads, needs, create_graph=False)
    got = iter(compiled.run(list(ins) + list(grads)))
    return [next(got) if need else None for need in needs]


def _program_of_backward(self, group, needs):
    n = len(group.inputs)

    def backward_program(*args):
        xs, gs = args[:n], args[n:]
        leaves = [x.detach().requires_grad_(bool(need)) for x, need in zip(xs, needs)]
        outs = self.replay_group(group, leaves)
        wrt = [x for x, need in zip(leaves, needs) if need]
        got = ember.autograd.grad(outs, wrt, gs, allow_unused=True, create_graph=True)
        return tuple(g if g is not None else x * 0.0 for g, x in zip(got, wrt))
    return backward_program


def _trace_backward(self, gi, group, ins, grads, needs):
    """The group's backward as a CompiledGraph, or None (run eagerly)."""
    from ember.jit import TracerWarning, trace_graph
    import warnings
    program = _program_of_backward(self, group, needs)
    example = tuple(t.detach() for t in ins) + tuple(g.detach() for g in grads)
    with warnings.catch_warnings(record=True) as caught, ember.enable_grad():
        warnings.simplefilter("always", TracerWarning)
        try:
            graph, consts, _ = trace_graph(program, example)
        except Exception:          # not traceable (another trace running, ...)
            return None
    if any(issubclass(w.category, TracerWarning) for w in caught):
        return None
    compiled = CompiledGraph(graph, lambda v: consts[v.id],
                             f"{self.label}: backward of group {gi}")
    if not reproduces(compiled, program, example, grad=True):
        return None
    _log(f"{compiled.explain()}")
    return compiled


def _eager_backward(self, group, ins, grads, needs, create_graph):
    with ember.enable_grad():
        if create_graph:
            leaves = list(ins)      # the saved inputs, with their history
        else:
            leaves = [x.detach().requires_grad_(bool(need)) for x, need in zip(ins, needs)]
        outs = self.replay_group(group, leaves)
        wrt = [x for x, need in zip(leaves, needs) if need]
        got = iter(ember.autograd.grad(outs, wrt, grads, allow_unused=True,
                                       create_graph=create_graph))
    return [next(got) if need else None for need in needs]


CompiledGraph.group_backward = _group_backward


def _probe(t):
    """Other values of t's shape and dtype (floating tensors only: integer
    ones may be indices)."""
    if not t.dtype.is_floating_point or t.numel() == 0:
        return t.detach().clone()
    return t.detach() * 1.3125 + 0.0625


def reproduces(compiled, program, tensors, grad=False):
    """Whether the graph, replayed op by op, gives what the program gives
    on probe inputs: the tracer sees ops through their dispatch points, so
    an op reached another way (a function object bound before compiling, a
    random factory) would be baked into the graph as a constant.  A graph
    without such constants (every tensor it reads is an input, a parameter,
    a buffer or a node's result) needs no check.  grad: the program runs
    under grad mode (a backward program calls autograd.grad)."""
    if not any(v.role == "const" for v in compiled.graph.constants):
        return True
    if not any(t.dtype.is_floating_point and t.numel() for t in tensors):
        return True
    probe = [_probe(t) for t in tensors]
    state = ember.get_rng_state()
    with (ember.enable_grad() if grad else ember.no_grad()):
        want = [t.detach() for t in flat_tensors(program(*[p.clone() for p in probe]))]
    after = ember.get_rng_state()
    ember.set_rng_state(state)
    with ember.no_grad():
        got = flat_tensors(compiled.run([p.clone() for p in probe], fuse=False))
    ember.set_rng_state(after)
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.numel() and not bool(ember.isclose(a, b, rtol=1e-5, atol=1e-6,
                                                equal_nan=True).all()):
            return False
    return True


_warned = set()


def _warn_once(msg):
    import warnings
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=4)
