"""ONNX operators for the traced graph's op kinds: HANDLERS[kind](ctx, node).

A handler reads the node's arguments (values are graph Values; their
shapes and dtypes are what the trace saw), writes ONNX nodes through ctx
and binds the node's outputs (ctx.out).  Front ops and NN kernels share one
table, keyed by the op's name.
"""
import math

import numpy as np

from ..jit._graph import Value

HANDLERS = {}


def handles(*kinds):
    def deco(fn):
        for k in kinds:
            HANDLERS[k] = fn
        return fn
    return deco


def _arg(node, i, name, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def _pos(d, rank):
    return d + rank if d < 0 else d


def _reflected(node):
    return node.target.split(".", 1)[1].startswith("__r")


# ---- element-wise ------------------------------------------------------------------
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "gt": "Greater", "lt": "Less", "ge": "GreaterOrEqual", "le": "LessOrEqual",
           "eq": "Equal", "maximum": "Max", "minimum": "Min", "logical_and": "And",
           "logical_or": "Or"}


def _operand(ctx, x, like):
    return ctx.name(x) if isinstance(x, Value) else ctx.scalar(x, like)


@handles(*_BINARY, "rsub", "__eq__", "ne")
def _binary(ctx, node):
    a, b = node.args[0], _arg(node, 1, "other")
    like = a if isinstance(a, Value) else b
    if node.kind == "rsub" or _reflected(node):
        a, b = b, a
    kind = "sub" if node.kind == "rsub" else node.kind
    if kind == "div" and node.kwargs.get("rounding_mode") is not None:
        ctx.fail("with a rounding_mode has no mapping")
    alpha = node.kwargs.get("alpha", 1)
    bn = _operand(ctx, b, like)
    if alpha != 1:
        bn = ctx.op("Mul", [bn, ctx.scalar(alpha, like)])
    if kind == "ne":
        ctx.out(ctx.op("Not", [ctx.op("Equal", [_operand(ctx, a, like), bn])]))
        return
    if kind == "pow" and not isinstance(b, Value) and b == 2:
        an = _operand(ctx, a, like)
        ctx.out(ctx.op("Mul", [an, an]))
        return
    ctx.out(ctx.op(_BINARY[kind], [_operand(ctx, a, like), bn]))


_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "neg": "Neg", "abs": "Abs", "erf": "Erf", "reciprocal": "Reciprocal",
          "floor": "Floor", "ceil": "Ceil", "sin": "Sin", "cos": "Cos", "sign": "Sign",
          "logical_not": "Not", "clone": "Identity", "contiguous": "Identity",
          "detach": "Identity"}


@handles(*_UNARY)
def _unary(ctx, node):
    ctx.out(ctx.op(_UNARY[node.kind], [ctx.name(node.args[0])]))


@handles("rsqrt")
def _rsqrt(ctx, node):
    ctx.out(ctx.op("Reciprocal", [ctx.op("Sqrt", [ctx.name(node.args[0])])]))


@handles("expm1")
def _expm1(ctx, node):
    x = node.args[0]
    ctx.out(ctx.op("Sub", [ctx.op("Exp", [ctx.name(x)]), ctx.scalar(1, x)]))


@handles("silu")
def _silu(ctx, node):
    x = ctx.name(node.args[0])
    ctx.out(ctx.op("Mul", [x, ctx.op("Sigmoid", [x])]))


@handles("clamp", "clamp_min", "clamp_max")
def _clamp(ctx, node):
    x = node.args[0]
    lo = _arg(node, 1, "min") if node.kind != "clamp_max" else None
    hi = _arg(node, 2, "max") if node.kind == "clamp" else \
        _arg(node, 1, "max") if node.kind == "clamp_max" else None
    if isinstance(lo, Value) or isinstance(hi, Value):
        ctx.fail("with tensor bounds has no mapping")
    ins = [ctx.name(x), "" if lo is None else ctx.scalar(lo, x),
           "" if hi is None else ctx.scalar(hi, x)]
    while ins and ins[-1] == "":
        ins.pop()
    ctx.out(ctx.op("Clip", ins))


@handles("where")
def _where(ctx, node):
    cond, a, b = node.args[:3]
    like = a if isinstance(a, Value) else b
    ctx.out(ctx.op("Where", [ctx.name(cond), _operand(ctx, a, like), _operand(ctx, b, like)]))


@handles("copy", "copy_")
def _copy(ctx, node):
    dst, src = node.args[0], node.args[1]
    name = _operand(ctx, src, dst)
    if not isinstance(src, Value) or src.shape != dst.shape:
        name = ctx.op("Expand", [name, ctx.ints(ctx.static_shape(dst))])
    if not isinstance(src, Value) or src.dtype != dst.dtype:
        name = ctx.op("Cast", [name], to=_elem(ctx, dst.dtype))
    ctx.out(ctx.op("Identity", [name]))


def _elem(ctx, dtype):
    from ._export import NP_DTYPES
    return ctx.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(NP_DTYPES[dtype]))


@handles("to", "float", "double", "long", "int", "bool", "half", "type_as", "type")
def _cast(ctx, node):
    out = node.outputs[0]
    x = node.args[0]
    if out.dtype == x.dtype:
        ctx.out(ctx.op("Identity", [ctx.name(x)]))
    else:
        ctx.out(ctx.op("Cast", [ctx.name(x)], to=_elem(ctx, out.dtype)))


@handles("gelu")
def _gelu(ctx, node):
    x = node.args[0]
    approximate = _arg(node, 1, "approximate", "none")
    if ctx.opset >= 20:
        ctx.out(ctx.op("Gelu", [ctx.name(x)], approximate=approximate))
        return
    if approximate != "none":
        ctx.fail("approximate='tanh' needs opset 20")
    xn = ctx.name(x)
    erf = ctx.op("Erf", [ctx.op("Mul", [xn, ctx.scalar(1 / math.sqrt(2), x)])])
    half = ctx.op("Mul", [xn, ctx.scalar(0.5, x)])
    ctx.out(ctx.op("Mul", [half, ctx.op("Add", [erf, ctx.scalar(1.0, x)])]))


@handles("softmax", "log_softmax")
def _softmax(ctx, node):
    x = node.args[0]
    dim = _arg(node, 1, "dim")
    if dim is None:
        ctx.fail("without dim has no mapping")
    op = "Softmax" if node.kind == "softmax" else "LogSoftmax"
    ctx.out(ctx.op(op, [ctx.name(x)], axis=_pos(dim, len(x.shape))))


# ---- reductions --------------------------------------------------------------------
@handles("mean", "sum", "amax", "amin")
def _reduce(ctx, node):
    x = node.args[0]
    dim = _arg(node, 1, "dim")
    keep = bool(_arg(node, 2, "keepdim", False))
    if node.kwargs.get("dtype") is not None:
        ctx.fail("with dtype= has no mapping")
    op = {"mean": "ReduceMean", "sum": "ReduceSum", "amax": "ReduceMax",
          "amin": "ReduceMin"}[node.kind]
    rank = len(x.shape)
    dims = list(range(rank)) if dim is None else \
        [_pos(d, rank) for d in (dim if isinstance(dim, (tuple, list)) else [dim])]
    if op == "ReduceSum" or ctx.opset >= 18:
        ctx.out(ctx.op(op, [ctx.name(x), ctx.ints(dims, "axes")], keepdims=int(keep)))
    else:
        ctx.out(ctx.op(op, [ctx.name(x)], axes=dims, keepdims=int(keep)))


# ---- products ----------------------------------------------------------------------
@handles("matmul", "mm", "bmm")
def _matmul(ctx, node):
    a, b = node.args[0], _arg(node, 1, "other")
    if _reflected(node):
        a, b = b, a
    ctx.out(ctx.op("MatMul", [ctx.name(a), ctx.name(b)]))


@handles("addmm")
def _addmm(ctx, node):
    bias, a, b = node.args[:3]
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    ctx.out(ctx.op("Gemm", [ctx.name(a), ctx.name(b), ctx.name(bias)],
                   alpha=float(alpha), beta=float(beta)))


@handles("linear")
def _linear(ctx, node):
    x, w = node.args[0], node.args[1]
    b = _arg(node, 2, "bias")
    if len(x.shape) == 2 and b is not None:
        ctx.out(ctx.op("Gemm", [ctx.name(x), ctx.name(w), ctx.name(b)], transB=1))
        return
    wt = _transposed_const(ctx, w)
    y = ctx.op("MatMul", [ctx.name(x), wt])
    ctx.out(y if b is None else ctx.op("Add", [y, ctx.name(b)]))


def _transposed_const(ctx, w):
    if w.id in ctx.tensors and w.id not in ctx.names:   # a weight: stored transposed
        return ctx.const(ctx.tensors[w.id].detach().cpu().numpy().T.copy(), f"{w.name}.T")
    return ctx.op("Transpose", [ctx.name(w)], perm=[1, 0])


@handles("embedding")
def _embedding(ctx, node):
    idx, w = node.args[0], node.args[1]
    if _arg(node, 3, "max_norm") is not None:
        ctx.fail("with max_norm has no mapping")
    ctx.out(ctx.op("Gather", [ctx.name(w), ctx.name(idx)], axis=0))


# ---- shapes ------------------------------------------------------------------------
def _shape_arg(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def _reshape(ctx, x, shape):
    return ctx.op("Reshape", [ctx.name(x), ctx.ints(shape)])


def _shape_positions(node):
    """Argument path -> index in the target shape, for reshape/view."""
    if len(node.args) > 1:
        if len(node.args) == 2 and isinstance(node.args[1], (tuple, list)):
            return {(0, 1, k): k for k in range(len(node.args[1]))}
        return {(0, i): i - 1 for i in range(1, len(node.args))}
    return {(1, "shape", k): k for k in range(len(node.kwargs["shape"]))}


@handles("reshape", "view")
def _view(ctx, node):
    x = node.args[0]
    shape = _shape_arg(node.args[1:]) if len(node.args) > 1 else list(node.kwargs["shape"])
    if ctx.varying:   # sizes that follow a dynamic axis: one may be left to ONNX (-1)
        where = _shape_positions(node)
        free = {where[p] for p in ctx.varying if p in where}
        if len(free) > 1 or (free and -1 in shape and shape.index(-1) not in free):
            ctx.fail(f"to a shape with several sizes that follow the dynamic axes ({shape})")
        for k in free:
            shape[k] = -1
    ctx.out(_reshape(ctx, x, shape))


@handles("view_as", "reshape_as")
def _view_as(ctx, node):
    ctx.out(_reshape(ctx, node.args[0], ctx.static_shape(node.outputs[0])))


@handles("flatten")
def _flatten(ctx, node):
    x = node.args[0]
    rank = len(x.shape)
    start = _pos(_arg(node, 1, "start_dim", 0), rank) if rank else 0
    end = _pos(_arg(node, 2, "end_dim", -1), rank) if rank else 0
    if rank and end == rank - 1 and start in (0, 1):
        y = ctx.op("Flatten", [ctx.name(x)], axis=start)
        ctx.out(y if start == 1 else ctx.op("Reshape", [y, ctx.ints([-1])]))
        return
    ctx.out(_reshape(ctx, x, ctx.static_shape(node.outputs[0])))


@handles("unflatten")
def _unflatten(ctx, node):
    ctx.out(_reshape(ctx, node.args[0], ctx.static_shape(node.outputs[0])))


@handles("t", "transpose", "swapaxes", "permute", "movedim")
def _transpose(ctx, node):
    x = node.args[0]
    rank = len(x.shape)
    perm = list(range(rank))
    if node.kind == "t":
        perm = perm[::-1]
    elif node.kind in ("transpose", "swapaxes"):
        a, b = _pos(node.args[1], rank), _pos(node.args[2], rank)
        perm[a], perm[b] = perm[b], perm[a]
    elif node.kind == "permute":
        perm = [_pos(d, rank) for d in _shape_arg(node.args[1:])]
    else:
        src, dst = node.args[1], node.args[2]
        src = [src] if isinstance(src, int) else list(src)
        dst = [dst] if isinstance(dst, int) else list(dst)
        src, dst = [_pos(d, rank) for d in src], [_pos(d, rank) for d in dst]
        rest = [d for d in range(rank) if d not in src]
        perm = [None] * rank
        for s, d in zip(src, dst):
            perm[d] = s
        it = iter(rest)
        perm = [p if p is not None else next(it) for p in perm]
    ctx.out(ctx.op("Transpose", [ctx.name(x)], perm=perm))


@handles("unsqueeze")
def _unsqueeze(ctx, node):
    x = node.args[0]
    dim = _pos(node.args[1], len(x.shape) + 1)
    ctx.out(ctx.op("Unsqueeze", [ctx.name(x), ctx.ints([dim], "axes")]))


@handles("squeeze")
def _squeeze(ctx, node):
    x = node.args[0]
    dim = _arg(node, 1, "dim")
    rank = len(x.shape)
    dims = [d for d in range(rank) if x.shape[d] == 1] if dim is None else \
        [_pos(d, rank) for d in (dim if isinstance(dim, (tuple, list)) else [dim])
         if x.shape[_pos(d, rank)] == 1]
    ctx.static_shape(x, dims)   # a size-1 dimension that follows a dynamic axis
    if not dims:
        ctx.out(ctx.op("Identity", [ctx.name(x)]))
        return
    ctx.out(ctx.op("Squeeze", [ctx.name(x), ctx.ints(dims, "axes")]))


@handles("expand", "expand_as")
def _expand(ctx, node):
    ctx.out(ctx.op("Expand", [ctx.name(node.args[0]),
                              ctx.ints(ctx.static_shape(node.outputs[0]))]))


@handles("cat", "concat", "concatenate")
def _cat(ctx, node):
    tensors = [t for t in node.args[0] if not (isinstance(t, Value) and t.shape == (0,))]
    dim = _arg(node, 1, "dim", 0)
    rank = len(node.outputs[0].shape)
    ctx.out(ctx.op("Concat", [ctx.name(t) for t in tensors], axis=_pos(dim, rank)))


@handles("stack")
def _stack(ctx, node):
    dim = _pos(_arg(node, 1, "dim", 0), len(node.outputs[0].shape))
    parts = [ctx.op("Unsqueeze", [ctx.name(t), ctx.ints([dim], "axes")])
             for t in node.args[0]]
    ctx.out(ctx.op("Concat", parts, axis=dim))


@handles("chunk", "split", "unbind")
def _split(ctx, node):
    x = node.args[0]
    rank = len(x.shape)
    dim = _pos(_arg(node, 1 if node.kind == "unbind" else 2, "dim", 0), rank)
    sizes = [ctx.static_shape(v, [dim])[dim] if node.kind != "unbind" else 1
             for v in node.outputs]
    outs = ctx.op("Split", [ctx.name(x), ctx.ints(sizes, "split")], outputs=len(sizes),
                  axis=dim)
    outs = [outs] if isinstance(outs, str) else outs
    for i, o in enumerate(outs):
        if node.kind == "unbind":
            o = ctx.op("Squeeze", [o, ctx.ints([dim], "axes")])
        ctx.out(o, i)


@handles("__getitem__")
def _getitem(ctx, node):
    x, idx = node.args[0], node.args[1]
    idx = list(idx) if isinstance(idx, tuple) else [idx]
    rank = len(x.shape)
    if sum(1 for i in idx if i is not None and i is not Ellipsis) > rank:
        ctx.fail("with too many indices")
    if Ellipsis in idx:
        at = idx.index(Ellipsis)
        fill = rank - sum(1 for i in idx if i is not None and i is not Ellipsis)
        idx = idx[:at] + [slice(None)] * fill + idx[at + 1:]
    name, dim, out_dim, unsq = ctx.name(x), 0, 0, []
    starts, ends, axes, steps, gathers = [], [], [], [], []
    for i in idx:
        if i is None:
            unsq.append(out_dim)
            out_dim += 1
            continue
        if isinstance(i, slice):
            step = 1 if i.step is None else i.step
            if step <= 0:
                ctx.fail("with a non-positive slice step")
            if (i.start, i.stop, step) != (None, None, 1):
                starts.append(0 if i.start is None else i.start)
                ends.append(2 ** 62 if i.stop is None else i.stop)
                axes.append(dim)
                steps.append(step)
            dim += 1
            out_dim += 1
        elif isinstance(i, int):
            gathers.append((dim, i))
            dim += 1
        elif isinstance(i, Value) and len(i.shape) <= 1 and i.dtype == "int64":
            gathers.append((dim, i))
            dim += 1
            out_dim += len(i.shape)
        else:
            ctx.fail(f"with an index of type {type(i).__name__} has no mapping")
    if axes:
        name = ctx.op("Slice", [name, ctx.ints(starts, "starts"), ctx.ints(ends, "ends"),
                                ctx.ints(axes, "axes"), ctx.ints(steps, "steps")])
    removed = 0
    for d, i in gathers:
        at = d - removed
        if isinstance(i, Value):
            name = ctx.op("Gather", [name, ctx.name(i)], axis=at)
            removed += 1 - len(i.shape)
        else:
            name = ctx.op("Gather", [name, ctx.const(np.asarray(i, dtype=np.int64), "index")],
                          axis=at)
            removed += 1
    if unsq:
        name = ctx.op("Unsqueeze", [name, ctx.ints(unsq, "axes")])
    ctx.out(name if name != ctx.name(x) else ctx.op("Identity", [name]))


# ---- NN kernels ----------------------------------------------------------------------
def _conv_pads(pads):
    n = len(pads) // 2
    return [pads[2 * i] for i in range(n)] + [pads[2 * i + 1] for i in range(n)]


@handles("conv2d", "conv3d")
def _conv(ctx, node):
    x, w, b, stride, pads, dilation, groups = node.args[:7]
    ins = [ctx.name(x), ctx.name(w)] + ([] if b is None else [ctx.name(b)])
    ctx.out(ctx.op("Conv", ins, kernel_shape=list(w.shape[2:]), strides=list(stride),
                   pads=_conv_pads(pads), dilations=list(dilation), group=int(groups)))


@handles("conv_transpose2d")
def _conv_transpose(ctx, node):
    x, w, b, stride, padding, output_padding, groups, dilation = node.args[:8]
    ins = [ctx.name(x), ctx.name(w)] + ([] if b is None else [ctx.name(b)])
    ctx.out(ctx.op("ConvTranspose", ins, kernel_shape=list(w.shape[2:]), strides=list(stride),
                   pads=list(padding) * 2, dilations=list(dilation), group=int(groups),
                   output_padding=list(output_padding)))


@handles("max_pool2d", "max_pool3d")
def _max_pool(ctx, node):
    x, k, s, p, d, ceil, with_indices = node.args[:7]
    if with_indices:
        ctx.fail("with return_indices=True has no mapping")
    ctx.out(ctx.op("MaxPool", [ctx.name(x)], kernel_shape=list(k), strides=list(s),
                   pads=list(p) * 2, dilations=list(d), ceil_mode=int(bool(ceil))))


@handles("avg_pool2d", "avg_pool3d")
def _avg_pool(ctx, node):
    x, k, s, p, ceil, count_include_pad = node.args[:6]
    divisor = node.args[6] if len(node.args) > 6 else None
    if divisor is not None:
        ctx.fail("with divisor_override has no mapping")
    ctx.out(ctx.op("AveragePool", [ctx.name(x)], kernel_shape=list(k), strides=list(s),
                   pads=list(p) * 2, ceil_mode=int(bool(ceil)),
                   count_include_pad=int(bool(count_include_pad))))


@handles("adaptive_avg_pool1d", "adaptive_avg_pool2d")
def _adaptive_avg(ctx, node):
    x = node.args[0]
    out = node.outputs[0].shape
    ctx.static_shape(node.outputs[0], range(2, len(out)))
    ctx.static_shape(x, range(2, len(x.shape)))
    spatial_in, spatial_out = x.shape[-(len(out) - 2 if len(out) > 2 else 1):], \
        out[-(len(out) - 2 if len(out) > 2 else 1):]
    if len(x.shape) not in (3, 4) or node.kind == "adaptive_avg_pool2d" and len(x.shape) != 4:
        ctx.fail("on unbatched input has no mapping")
    if all(o == 1 for o in spatial_out):
        ctx.out(ctx.op("GlobalAveragePool", [ctx.name(x)]))
        return
    if all(i == 1 for i in spatial_in):   # one pixel: every output cell is a copy of it
        ctx.out(ctx.op("Expand", [ctx.name(x), ctx.ints([1, 1] + list(spatial_out))]))
        return
    if any(i % o for i, o in zip(spatial_in, spatial_out)):
        ctx.fail(f"from {list(spatial_in)} to {list(spatial_out)} (not a whole window) has "
                 f"no mapping")
    k = [i // o for i, o in zip(spatial_in, spatial_out)]
    ctx.out(ctx.op("AveragePool", [ctx.name(x)], kernel_shape=k, strides=k))


@handles("batch_norm")
def _batch_norm(ctx, node):
    x, w, b, mean, var, training, _, eps = node.args[:8]
    if training or mean is None:
        ctx.fail("in training mode (batch statistics) has no mapping; export in eval mode")
    c = x.shape[1]
    wn = ctx.name(w) if w is not None else ctx.const(np.ones(c, np.float32), "ones")
    bn = ctx.name(b) if b is not None else ctx.const(np.zeros(c, np.float32), "zeros")
    ctx.out(ctx.op("BatchNormalization", [ctx.name(x), wn, bn, ctx.name(mean), ctx.name(var)],
                   epsilon=float(eps)))


@handles("layer_norm")
def _layer_norm(ctx, node):
    x, w, b, shape, eps = node.args[:5]
    if ctx.opset < 17:   # no LayerNormalization yet: its formula
        axes = list(range(len(x.shape) - len(shape), len(x.shape)))

        def mean(t):
            return ctx.op("ReduceMean", [t], axes=axes, keepdims=1)
        xn = ctx.name(x)
        centred = ctx.op("Sub", [xn, mean(xn)])
        var = mean(ctx.op("Mul", [centred, centred]))
        y = ctx.op("Div", [centred, ctx.op("Sqrt", [ctx.op("Add", [var, ctx.scalar(eps, x)])])])
        if w is not None:
            y = ctx.op("Mul", [y, ctx.name(w)])
        ctx.out(y if b is None else ctx.op("Add", [y, ctx.name(b)]))
        return
    wn = ctx.name(w) if w is not None else ctx.const(np.ones(shape, np.float32), "ones")
    ins = [ctx.name(x), wn] + ([ctx.name(b)] if b is not None else [])
    ctx.out(ctx.op("LayerNormalization", ins, axis=-len(shape), epsilon=float(eps)))


@handles("group_norm")
def _group_norm(ctx, node):
    x, w, b, groups, eps = node.args[:5]
    c = x.shape[1]
    grouped = ctx.op("Reshape", [ctx.name(x), ctx.ints([0, groups, -1])])
    normed = ctx.op("InstanceNormalization", [
        grouped, ctx.const(np.ones(groups, np.float32), "ones"),
        ctx.const(np.zeros(groups, np.float32), "zeros")], epsilon=float(eps))
    y = ctx.op("Reshape", [normed, ctx.op("Shape", [ctx.name(x)])])
    bshape = [c] + [1] * (len(x.shape) - 2)
    if w is not None:
        y = ctx.op("Mul", [y, ctx.op("Reshape", [ctx.name(w), ctx.ints(bshape)])])
    if b is not None:
        y = ctx.op("Add", [y, ctx.op("Reshape", [ctx.name(b), ctx.ints(bshape)])])
    ctx.out(y)


@handles("dropout")
def _dropout(ctx, node):
    if _arg(node, 2, "training", True) and _arg(node, 1, "p", 0.5) > 0:
        ctx.fail("in training mode has no mapping; export in eval mode")
    ctx.out(ctx.op("Identity", [ctx.name(node.args[0])]))


@handles("hardtanh")
def _hardtanh(ctx, node):
    x = node.args[0]
    ctx.out(ctx.op("Clip", [ctx.name(x), ctx.scalar(node.args[1], x),
                            ctx.scalar(node.args[2], x)]))


# ---- recurrent layers ----------------------------------------------------------------
# ONNX orders the gates i, o, f, c (LSTM) and z, r, h (GRU); Ember as PyTorch i, f, g, o
# and r, z, n
_GATES = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}


def _gates(ctx, arr, mode, hidden):
    order = _GATES.get(mode)
    if order is None:
        return arr
    parts = [arr[i * hidden:(i + 1) * hidden] for i in range(len(order))]
    return np.concatenate([parts[i] for i in order], 0)


@handles("rnn_direction")
def _rnn_direction(ctx, node):
    mode, projected, state0, w_hh, b_hh, w_hr, batch_sizes, reverse = node.args[:8]
    if w_hr is not None:
        ctx.fail("with proj_size > 0 has no mapping")
    if len(set(batch_sizes)) > 1:
        ctx.fail("on a PackedSequence of unequal lengths has no mapping")
    steps = len(batch_sizes)
    hidden = w_hh.shape[1]
    producer = projected.node if isinstance(projected, Value) else None
    if producer is None or producer.kind != "linear" or producer.args[1].id not in ctx.tensors \
            or w_hh.id not in ctx.tensors:
        ctx.fail("needs its input projection and weights as constants of the graph")
    data, w_ih = producer.args[0], producer.args[1]
    b_proj = producer.args[2] if len(producer.args) > 2 else producer.kwargs.get("bias")
    t = ctx.tensors

    def arr(v):
        return t[v.id].detach().cpu().numpy()
    W = _gates(ctx, arr(w_ih), mode, hidden)[None]
    R = _gates(ctx, arr(w_hh), mode, hidden)[None]
    gates = W.shape[1]
    wb = np.zeros(gates, np.float32) if b_proj is None else \
        _gates(ctx, _const_of(ctx, b_proj), mode, hidden)
    rb = np.zeros(gates, np.float32) if b_hh is None or mode != "GRU" else \
        _gates(ctx, arr(b_hh), mode, hidden)
    B = np.concatenate([wb, rb])[None].astype(W.dtype)
    # the batch (dim 1) follows the input where it changes: -1
    x = ctx.op("Reshape", [ctx.name(data), ctx.ints([steps, -1, data.shape[-1]])])
    def initial(v):   # zeros (the layer's default state) are ONNX's default too
        if v.id in ctx.tensors and v.id not in ctx.names and \
                not ctx.tensors[v.id].detach().cpu().numpy().any():
            return ""
        return ctx.op("Unsqueeze", [ctx.name(v), ctx.ints([0], "axes")])
    ins = [x, ctx.const(W, "W"), ctx.const(R, "R"), ctx.const(B, "B"), "", initial(state0[0])]
    attrs = {"hidden_size": hidden, "direction": "reverse" if reverse else "forward"}
    if mode == "LSTM":
        ins.append(initial(state0[1]))
        outs = ctx.op("LSTM", ins, outputs=3, **attrs)
    elif mode == "GRU":
        outs = ctx.op("GRU", ins, outputs=2, linear_before_reset=1, **attrs)
    else:
        outs = ctx.op("RNN", ins, outputs=2, activations=["Tanh" if mode == "RNN_TANH"
                                                          else "Relu"], **attrs)
    y = ctx.op("Reshape", [outs[0], ctx.ints([-1, hidden])])   # (steps, 1, batch, H) -> rows
    ctx.out(y, 0)
    for i, o in enumerate(outs[1:], 1):
        ctx.out(ctx.op("Squeeze", [o, ctx.ints([0], "axes")]), i)


def _const_of(ctx, v):
    """A constant value's array (computing a node of constants, such as the
    LSTM's b_ih + b_hh, the way the graph does)."""
    if v.id in ctx.tensors:
        return ctx.tensors[v.id].detach().cpu().numpy()
    n = v.node
    if n is not None and n.kind == "add" and all(isinstance(a, Value) for a in n.args[:2]):
        return _const_of(ctx, n.args[0]) + _const_of(ctx, n.args[1])
    ctx.fail("needs its biases as constants of the graph")
