"""ember.onnx.load: an ONNX graph as an nn.Module computing with Ember's ops.

Floating-point initializers of at least one dimension are the module's
Parameters (so a loaded model can be fine-tuned), the others buffers.
Each ONNX node runs through RUNNERS[op_type](module, inputs, attrs); the
operators are those ember.onnx.export writes (and their usual forms).
"""
import math
import os

import numpy as np

__all__ = ["load", "RUNNERS"]

RUNNERS = {}


def runs(*names):
    def deco(fn):
        for n in names:
            RUNNERS[n] = fn
        return fn
    return deco


def _ints(t):
    return [int(v) for v in (t.tolist() if hasattr(t, "tolist") else t)]


def _F():
    from ember.nn import functional
    return functional


# ---- element-wise ---------------------------------------------------------------------
def _unary(fn):
    return lambda m, ins, a: fn(ins[0])


for _name, _fn in {
        "Relu": lambda x: x.relu(), "Sigmoid": lambda x: x.sigmoid(), "Tanh": lambda x: x.tanh(),
        "Exp": lambda x: x.exp(), "Log": lambda x: x.log(), "Sqrt": lambda x: x.sqrt(),
        "Neg": lambda x: -x, "Abs": lambda x: x.abs(), "Erf": lambda x: x.erf(),
        "Reciprocal": lambda x: x.reciprocal(), "Floor": lambda x: x.floor(),
        "Ceil": lambda x: x.ceil(), "Sin": lambda x: x.sin(), "Cos": lambda x: x.cos(),
        "Sign": lambda x: x.sign(), "Not": lambda x: x.logical_not(),
        "Identity": lambda x: x}.items():
    RUNNERS[_name] = _unary(_fn)

_BIN = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow",
        "Greater": "gt", "Less": "lt", "GreaterOrEqual": "ge", "LessOrEqual": "le",
        "Equal": "eq", "And": "logical_and",
        "Or": "logical_or"}


for _name, _method in _BIN.items():
    RUNNERS[_name] = (lambda method: lambda m, ins, a: getattr(ins[0], method)(ins[1]))(_method)


@runs("Clip")
def _clip(m, ins, a):
    lo = ins[1] if len(ins) > 1 and ins[1] is not None else None
    hi = ins[2] if len(ins) > 2 and ins[2] is not None else None
    return ins[0].clamp(min=None if lo is None else float(lo),
                        max=None if hi is None else float(hi))


@runs("Where")
def _where(m, ins, a):
    import ember
    return ember.where(ins[0], ins[1], ins[2])


@runs("Expand")
def _expand(m, ins, a):
    import ember
    shape = _ints(ins[1])
    return ins[0].expand(*ember.broadcast_shapes(tuple(ins[0].shape), tuple(shape))).clone()


_DTYPES = {1: "float32", 11: "float64", 10: "float16", 3: "int8", 2: "uint8", 5: "int16",
           6: "int32", 7: "int64", 9: "bool"}


@runs("Cast")
def _cast(m, ins, a):
    import ember
    to = _DTYPES.get(a["to"])
    if to is None:
        raise NotImplementedError(f"ember.onnx.load: Cast to ONNX type {a['to']} is not "
                                  f"supported")
    return ins[0].to(getattr(ember, to))


@runs("Gelu")
def _gelu(m, ins, a):
    return _F().gelu(ins[0], approximate=a.get("approximate", "none"))


RUNNERS["Softmax"] = lambda m, ins, a: ins[0].softmax(a.get("axis", -1))
RUNNERS["LogSoftmax"] = lambda m, ins, a: ins[0].log_softmax(a.get("axis", -1))


def _reduce(method):
    def run(m, ins, a):
        x = ins[0]
        axes = a.get("axes")
        if axes is None and len(ins) > 1 and ins[1] is not None:
            axes = _ints(ins[1])
        keep = bool(a.get("keepdims", 1))
        if not axes:
            if a.get("noop_with_empty_axes", 0):
                return x
            axes = list(range(x.dim()))
        return getattr(x, method)(dim=tuple(axes), keepdim=keep)
    return run


RUNNERS.update({"ReduceMean": _reduce("mean"), "ReduceSum": _reduce("sum"),
                "ReduceMax": _reduce("amax"), "ReduceMin": _reduce("amin")})


# ---- activations and operators other exporters write ---------------------------------
RUNNERS.update({
    "Dropout": lambda m, ins, a: [ins[0]],   # inference: the input (no mask output read)
    "LeakyRelu": lambda m, ins, a: _F().leaky_relu(ins[0], a.get("alpha", 0.01)),
    "Elu": lambda m, ins, a: _F().elu(ins[0], a.get("alpha", 1.0)),
    "Selu": lambda m, ins, a: _F().selu(ins[0]),
    "Softplus": lambda m, ins, a: _F().softplus(ins[0]),
    "HardSigmoid": lambda m, ins, a: (ins[0] * a.get("alpha", 0.2) + a.get("beta", 0.5))
    .clamp(0.0, 1.0),
    "HardSwish": lambda m, ins, a: _F().hardswish(ins[0]),
    "PRelu": lambda m, ins, a: ins[0].clamp(min=0) + ins[1] * ins[0].clamp(max=0),
    "Tile": lambda m, ins, a: ins[0].repeat(*_ints(ins[1])),
})


def _variadic(method):
    def run(m, ins, a):
        out = ins[0]
        for x in ins[1:]:
            out = getattr(out, method)(x)
        return out
    return run


RUNNERS.update({"Sum": _variadic("add"), "Max": _variadic("maximum"),
                "Min": _variadic("minimum")})
RUNNERS["Mean"] = lambda m, ins, a: _variadic("add")(m, ins, a) / len(ins)


def _argmax(fn):
    def run(m, ins, a):
        if a.get("select_last_index", 0):
            raise NotImplementedError("ember.onnx.load: ArgMax/ArgMin with select_last_index")
        return getattr(ins[0], fn)(a.get("axis", 0), keepdim=bool(a.get("keepdims", 1)))
    return run


RUNNERS.update({"ArgMax": _argmax("argmax"), "ArgMin": _argmax("argmin")})


@runs("Pad")
def _pad(m, ins, a):
    x = ins[0]
    pads = a.get("pads") or _ints(ins[1])
    mode = a.get("mode", "constant")
    value = float(ins[2]) if len(ins) > 2 and ins[2] is not None else a.get("value", 0.0)
    if len(ins) > 3 and ins[3] is not None:
        raise NotImplementedError("ember.onnx.load: Pad with axes")
    n = x.dim()
    torch_pads = []
    for d in range(n - 1, -1, -1):   # last dimension first, as F.pad
        torch_pads += [pads[d], pads[d + n]]
    while len(torch_pads) > 2 and torch_pads[-2:] == [0, 0]:
        torch_pads = torch_pads[:-2]
    mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}.get(mode)
    if mode is None:
        raise NotImplementedError(f"ember.onnx.load: Pad mode {a.get('mode')!r}")
    return _F().pad(x, torch_pads, mode, value) if mode == "constant" else \
        _F().pad(x, torch_pads, mode)


# ---- products ---------------------------------------------------------------------------
RUNNERS["MatMul"] = lambda m, ins, a: ins[0].matmul(ins[1])


@runs("Gemm")
def _gemm(m, ins, a):
    x, w = ins[0], ins[1]
    if a.get("transA", 0):
        x = x.t()
    if a.get("transB", 0):
        w = w.t()
    y = x.matmul(w)
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    if alpha != 1.0:
        y = y * alpha
    if len(ins) > 2 and ins[2] is not None:
        y = y + (ins[2] if beta == 1.0 else ins[2] * beta)
    return y


@runs("Gather")
def _gather(m, ins, a):
    x, idx = ins[0], ins[1]
    axis = a.get("axis", 0)
    if axis < 0:
        axis += x.dim()
    if idx.dim() == 0:
        return x.select(axis, int(idx))
    flat = x.index_select(axis, idx.reshape(-1).long())
    shape = tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:])
    return flat.reshape(shape)


# ---- shapes ---------------------------------------------------------------------------
@runs("Reshape")
def _reshape(m, ins, a):
    x = ins[0]
    shape = _ints(ins[1])
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


@runs("Flatten")
def _flatten(m, ins, a):
    x = ins[0]
    axis = a.get("axis", 1)
    if axis < 0:
        axis += x.dim()
    lead = math.prod(x.shape[:axis])
    return x.reshape(lead, -1)


RUNNERS["Transpose"] = lambda m, ins, a: ins[0].permute(
    *(a.get("perm") or list(range(ins[0].dim()))[::-1]))


@runs("Unsqueeze")
def _unsqueeze(m, ins, a):
    x = ins[0]
    axes = a.get("axes") or _ints(ins[1])
    rank = x.dim() + len(axes)
    for d in sorted(ax + rank if ax < 0 else ax for ax in axes):
        x = x.unsqueeze(d)
    return x


@runs("Squeeze")
def _squeeze(m, ins, a):
    x = ins[0]
    axes = a.get("axes") or (_ints(ins[1]) if len(ins) > 1 and ins[1] is not None else None)
    if axes is None:
        return x.squeeze()
    for d in sorted((ax + x.dim() if ax < 0 else ax for ax in axes), reverse=True):
        x = x.squeeze(d)
    return x


@runs("Concat")
def _concat(m, ins, a):
    import ember
    return ember.cat([t for t in ins if t is not None], a["axis"])


@runs("Split")
def _split(m, ins, a):
    x = ins[0]
    axis = a.get("axis", 0)
    sizes = a.get("split") or (_ints(ins[1]) if len(ins) > 1 and ins[1] is not None else None)
    if sizes is None:
        n = a["num_outputs"]
        size = -(-x.shape[axis] // n)
        return list(x.split(size, axis))
    return list(x.split(sizes, axis))


@runs("Slice")
def _slice(m, ins, a):
    x = ins[0]
    starts, ends = _ints(ins[1]), _ints(ins[2])
    axes = _ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
    steps = _ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    import ember
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax = ax + x.dim() if ax < 0 else ax
        n = x.shape[ax]
        s, e = s + n if s < 0 else s, e + n if e < 0 else e
        if st > 0:
            idx = [slice(None)] * x.dim()
            idx[ax] = slice(min(max(s, 0), n), min(max(e, 0), n), st)
            x = x[tuple(idx)]
        elif st < 0:   # ONNX's clamping for backward steps, then the rows in that order
            rows = list(range(min(max(s, 0), n - 1), min(max(e, -1), n - 1), st))
            x = x.index_select(ax, ember.tensor(rows, dtype=ember.int64))
        else:
            raise ValueError("ember.onnx.load: Slice with a step of 0")
    return x


@runs("Shape")
def _shape(m, ins, a):
    import ember
    return ember.tensor(list(ins[0].shape), dtype=ember.int64)


@runs("Constant")
def _constant(m, ins, a):
    import ember
    if "value" not in a:
        for key in ("value_float", "value_int", "value_floats", "value_ints"):
            if key in a:
                dtype = np.float32 if "float" in key else np.int64
                return ember.from_numpy(np.array(a[key], dtype=dtype))
        raise NotImplementedError("ember.onnx.load: a Constant without a tensor or number value")
    return ember.from_numpy(np.array(a["value"], order="C"))


@runs("ConstantOfShape")
def _constant_of_shape(m, ins, a):
    import ember
    value = a.get("value", np.zeros(1, np.float32))
    return ember.from_numpy(np.full(_ints(ins[0]), value.reshape(-1)[0], dtype=value.dtype))


# ---- NN -------------------------------------------------------------------------------
def _pads(a, n):
    p = a.get("pads") or [0] * (2 * n)
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise NotImplementedError("ember.onnx.load: auto_pad SAME_* is not supported")
    return p[:n], p[n:]


def _symmetric(a, n, what):
    begin, end = _pads(a, n)
    if begin != end:
        raise NotImplementedError(f"ember.onnx.load: {what} with asymmetric pads {begin + end}")
    return begin


@runs("Conv")
def _conv(m, ins, a):
    F = _F()
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    n = w.dim() - 2
    begin, end = _pads(a, n)
    stride = a.get("strides") or [1] * n
    dil = a.get("dilations") or [1] * n
    if begin != end:
        pad = []
        for lo, hi in zip(reversed(begin), reversed(end)):
            pad += [lo, hi]
        x, begin = F.pad(x, pad), [0] * n
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    return conv(x, w, b, stride, begin, dil, a.get("group", 1))


@runs("ConvTranspose")
def _conv_transpose(m, ins, a):
    F = _F()
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    n = w.dim() - 2
    pads = _symmetric(a, n, "ConvTranspose")
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[n]
    return fn(x, w, b, a.get("strides") or [1] * n, pads, a.get("output_padding") or [0] * n,
              a.get("group", 1), a.get("dilations") or [1] * n)


@runs("MaxPool")
def _max_pool(m, ins, a):
    F = _F()
    k = a["kernel_shape"]
    n = len(k)
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n]
    return fn(ins[0], k, a.get("strides") or [1] * n, _symmetric(a, n, "MaxPool"),
              a.get("dilations") or [1] * n, bool(a.get("ceil_mode", 0)))


@runs("AveragePool")
def _avg_pool(m, ins, a):
    F = _F()
    k = a["kernel_shape"]
    n = len(k)
    fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[n]
    return fn(ins[0], k, a.get("strides") or [1] * n, _symmetric(a, n, "AveragePool"),
              bool(a.get("ceil_mode", 0)), bool(a.get("count_include_pad", 0)))


@runs("GlobalAveragePool")
def _global_avg(m, ins, a):
    x = ins[0]
    return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)


@runs("BatchNormalization")
def _batch_norm(m, ins, a):
    x, w, b, mean, var = ins[:5]
    return _F().batch_norm(x, mean, var, w, b, False, 0.0, a.get("epsilon", 1e-5))


@runs("LayerNormalization")
def _layer_norm(m, ins, a):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    axis = a.get("axis", -1)
    axis = axis + x.dim() if axis < 0 else axis
    return _F().layer_norm(x, tuple(x.shape[axis:]), w, b, a.get("epsilon", 1e-5))


@runs("InstanceNormalization")
def _instance_norm(m, ins, a):
    x, w, b = ins[:3]
    return _F().instance_norm(x, None, None, w, b, True, 0.0, a.get("epsilon", 1e-5))


# ---- recurrent layers (the exporter's form: one direction) ----------------------------
def _recurrent(kind):
    def run(m, ins, a):
        import ember
        x, w, r = ins[0], ins[1], ins[2]
        b = ins[3] if len(ins) > 3 else None
        if len(ins) > 4 and ins[4] is not None:
            raise NotImplementedError(f"ember.onnx.load: {kind} with sequence_lens")
        if w.shape[0] != 1:
            raise NotImplementedError(f"ember.onnx.load: bidirectional {kind} (one direction "
                                      f"per operator is supported)")
        hidden = a["hidden_size"]
        batch = x.shape[1]
        h = ins[5][0] if len(ins) > 5 and ins[5] is not None else \
            ember.zeros(batch, hidden, dtype=x.dtype)
        c = ins[6][0] if len(ins) > 6 and ins[6] is not None else \
            ember.zeros(batch, hidden, dtype=x.dtype)
        gates = w.shape[1]
        wb, rb = (b[0, :gates], b[0, gates:]) if b is not None else (None, None)
        xp = x.matmul(w[0].t())
        if wb is not None:
            xp = xp + wb
        steps = range(x.shape[0] - 1, -1, -1) if a.get("direction") == "reverse" \
            else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            hp = h.matmul(r[0].t())
            if rb is not None:
                hp = hp + rb
            if kind == "LSTM":
                i, o, f, g = (xp[t] + hp).chunk(4, 1)
                c = f.sigmoid() * c + i.sigmoid() * g.tanh()
                h = o.sigmoid() * c.tanh()
            elif kind == "GRU":
                xz, xr, xh = xp[t].chunk(3, 1)
                hz, hr, hh = hp.chunk(3, 1)
                z, rr = (xz + hz).sigmoid(), (xr + hr).sigmoid()
                if not a.get("linear_before_reset", 0):
                    raise NotImplementedError("ember.onnx.load: GRU with linear_before_reset=0")
                n = (xh + rr * hh).tanh()
                h = (1 - z) * n + z * h
            else:
                act = (a.get("activations") or ["Tanh"])[0]
                h = (xp[t] + hp).tanh() if act == "Tanh" else (xp[t] + hp).relu()
            outs[t] = h
        y = ember.stack(outs).unsqueeze(1)
        result = [y, h.unsqueeze(0)]
        if kind == "LSTM":
            result.append(c.unsqueeze(0))
        return result
    return run


RUNNERS.update({"LSTM": _recurrent("LSTM"), "GRU": _recurrent("GRU"), "RNN": _recurrent("RNN")})


# ---- the module -----------------------------------------------------------------------
def _attrs(onnx, node):
    out = {}
    for at in node.attribute:
        v = onnx.helper.get_attribute_value(at)
        if isinstance(v, onnx.TensorProto):
            out[at.name] = onnx.numpy_helper.to_array(v).copy()
            continue
        out[at.name] = v.decode() if isinstance(v, bytes) else \
            [x.decode() if isinstance(x, bytes) else x for x in v] if isinstance(v, list) else v
    return out


def load(onnx, f):
    if isinstance(f, onnx.ModelProto):
        proto = f
    else:
        data = open(f, "rb").read() if isinstance(f, (str, os.PathLike)) else f.read()
        try:
            proto = onnx.load_model_from_string(data)
        except Exception as e:
            raise RuntimeError(f"ember.onnx.load: not an ONNX model ({e})") from None
    for imp in proto.opset_import:
        if imp.domain not in ("", "ai.onnx"):
            raise NotImplementedError(f"ember.onnx.load: operators of domain {imp.domain!r} "
                                      f"are not supported")
    g = proto.graph
    missing = sorted({n.op_type for n in g.node if n.op_type not in RUNNERS})
    if missing:
        raise NotImplementedError(f"ember.onnx.load: no Ember implementation of the ONNX "
                                  f"operator(s) {', '.join(missing)}")
    return OnnxModule(onnx, g)


def _param_name(name):
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "_"


def _module_class():
    from ember import nn

    class OnnxModule(nn.Module):
        """An ONNX graph run on Ember's ops."""

        def __init__(self, onnx, graph):
            import ember
            super().__init__()
            self.__dict__["_onnx_nodes"] = [(n.op_type, list(n.input), list(n.output),
                                             _attrs(onnx, n)) for n in graph.node]
            inits = {i.name for i in graph.initializer}
            self.__dict__["_onnx_inputs"] = [i.name for i in graph.input if i.name not in inits]
            self.__dict__["_onnx_outputs"] = [o.name for o in graph.output]
            names = {}
            for init in graph.initializer:
                arr = onnx.numpy_helper.to_array(init).copy()
                t = ember.from_numpy(np.array(arr, order="C"))
                attr = _param_name(init.name)
                while attr in names.values():
                    attr += "_"
                names[init.name] = attr
                if t.is_floating_point() and t.dim() >= 1:
                    self.register_parameter(attr, nn.Parameter(t))
                else:
                    self.register_buffer(attr, t)
            self.__dict__["_onnx_names"] = names

        def forward(self, *inputs):
            if len(inputs) != len(self._onnx_inputs):
                raise TypeError(f"forward() takes {len(self._onnx_inputs)} inputs "
                                f"({', '.join(self._onnx_inputs)}) but {len(inputs)} were given")
            env = dict(zip(self._onnx_inputs, inputs))
            for onnx_name, attr in self._onnx_names.items():
                env[onnx_name] = getattr(self, attr)
            env[""] = None
            for op, ins, outs, attrs in self._onnx_nodes:
                res = RUNNERS[op](self, [env[i] for i in ins], attrs)
                if isinstance(res, (list, tuple)):
                    for name, t in zip(outs, res):
                        env[name] = t
                else:
                    env[outs[0]] = res
            out = [env[o] for o in self._onnx_outputs]
            return out[0] if len(out) == 1 else tuple(out)

    return OnnxModule


def OnnxModule(onnx, graph):
    global _cls
    if _cls is None:
        _cls = _module_class()
    return _cls(onnx, graph)


_cls = None
