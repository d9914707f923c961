"""The CUDA sweep: every public function of ember.nn.functional, every layer
of ember.nn, nn.init and the utilities run on CUDA tensors and give what
they give on the CPU.  Each case runs once on CPU tensors and once on the
same values moved to 'cuda'; outputs, buffers, and the gradients (of float
inputs and parameters, through the backward of a random-weighted sum of the
float outputs) are compared.  Random functions are compared by shape and
statistics.  Whichever of ember.thcunn's kernels are installed run; the
other layers run their composed forms on libTHC's operations.  Runs on a GPU
or on ember-thc's emulated device; skips elsewhere."""
import copy
import inspect

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.utils import rnn as rnn_utils

from test_module_table import MODULES

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(),
                                reason="no CUDA device (nor ember-thc's emulated device)")


@pytest.fixture(params=["kernels", "composed"])
def kernels(request, monkeypatch):
    """Each case runs with the installed kernel packages (ember.thnn on the
    CPU, ember.thcunn on the device, where present) and with the composed
    forms alone, so both paths are checked on the device."""
    from ember.nn import _kernels
    if request.param == "composed":
        monkeypatch.setenv("EMBER_NN_KERNELS", "composed")
    _kernels.reset()
    yield request.param
    monkeypatch.undo()
    _kernels.reset()


TOL = {"float64": dict(rtol=1e-9, atol=1e-9), "float32": dict(rtol=1e-4, atol=1e-4)}
DTYPES = ["float64", "float32"]


# input specs (the module table's: randn, scaled, randint, const) and two more
def R(*shape):
    return ("randn", shape)


def S(scale, *shape):
    return ("scaled", scale, shape)


def I(high, *shape):  # noqa: E743 (an index tensor)
    return ("randint", high, shape)


def C(values):
    return ("const", values)


def U(lo, hi, *shape):
    return ("uniform", lo, hi, shape)


def NG(spec):
    """An input that takes no gradient (running statistics, masks)."""
    return ("nograd", spec)


def make_arrays(specs, rng, dtype):
    out = []
    for spec in specs:
        grad = spec[0] != "nograd"
        if not grad:
            spec = spec[1]
        kind = spec[0]
        if kind == "randn":
            a = rng.standard_normal(spec[1])
        elif kind == "scaled":
            a = spec[1] * rng.standard_normal(spec[2])
        elif kind == "uniform":
            a = rng.uniform(spec[1], spec[2], spec[3])
        elif kind == "randint":
            a = rng.integers(0, spec[1], spec[2])
        else:
            a = np.array(spec[1])
        if a.dtype.kind == "f":
            a = a.astype(dtype)
        out.append((a, grad))
    return out


def tensors(arrays, device):
    ts = []
    for a, grad in arrays:
        t = ember.tensor(a, device=device)
        if grad and t.is_floating_point():
            t.requires_grad_()
        ts.append(t)
    return ts


def strided(ts):
    """The same values in non-contiguous tensors (last two dimensions
    stored transposed), as leaves like the originals."""
    out = []
    for t in ts:
        if t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1:
            u = t.detach().transpose(-1, -2).contiguous().transpose(-1, -2)
            assert not u.is_contiguous()
            t = u.requires_grad_() if t.requires_grad else u
        out.append(t)
    return out


def flatten(out):
    """The tensors of a result (tuples, PackedSequences, None) in order."""
    if isinstance(out, ember.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return []


def compare(cpu, dev, tol, what):
    assert dev.is_cuda, f"{what}: not on the device"
    assert cpu.dtype == dev.dtype and tuple(cpu.shape) == tuple(dev.shape), what
    c, d = cpu.detach().numpy(), dev.detach().cpu().numpy()
    if c.dtype.kind == "f":
        np.testing.assert_allclose(d, c, err_msg=what, **tol)
    else:
        np.testing.assert_array_equal(d, c, err_msg=what)


def weighted_sum(outs, seed):
    rng = np.random.default_rng(seed)
    total = None
    for o in outs:
        if o.is_floating_point() and o.requires_grad:
            w = ember.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=o.device)
            term = (o * w).sum()
            total = term if total is None else total + term
    return total


def run_both(call, cpu_inputs, dev_inputs, cpu_params, dev_params, dtype):
    """Runs call on both devices, compares outputs, then gradients."""
    tol = TOL[dtype]
    outs = []
    for inputs in (cpu_inputs, dev_inputs):
        outs.append(flatten(call(inputs)))
    oc, od = outs
    assert len(oc) == len(od)
    for i, (c, d) in enumerate(zip(oc, od)):
        compare(c, d, tol, f"output {i}")
    lc, ld = weighted_sum(oc, 1), weighted_sum(od, 1)
    if lc is None:
        return
    lc.backward()
    ld.backward()
    for i, (c, d) in enumerate(zip(cpu_inputs + cpu_params, dev_inputs + dev_params)):
        if not (isinstance(c, ember.Tensor) and c.requires_grad):
            continue
        assert (c.grad is None) == (d.grad is None), f"gradient {i}"
        if c.grad is not None:
            compare(c.grad, d.grad, tol, f"gradient of input/parameter {i}")


# ---------------------------------------------------------------- functional
def _bn(x, w, b, rm, rv):
    return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3), rm, rv


def _in(x, w, b, rm, rv):
    return F.instance_norm(x, rm, rv, w, b, use_input_stats=True), rm, rv


def _unpool(pool, unpool, k):
    def f(x):
        y, i = pool(x, k, return_indices=True)
        return unpool(y, i, k), i
    return f


def _mha(q, k, v, w_in, b_in, w_out, b_out, bk, bv, mask):
    return F.multi_head_attention_forward(
        q, k, v, 4, 2, w_in, b_in, bk, bv, True, 0.0, w_out, b_out, training=False,
        key_padding_mask=mask, need_weights=True)


def _mha_separate(q, k, v, wq, wk, wv, b_in, w_out, b_out):
    return F.multi_head_attention_forward(
        q, k, v, 4, 2, None, b_in, None, None, False, 0.0, w_out, b_out, training=False,
        need_weights=True, use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk,
        v_proj_weight=wv, average_attn_weights=False)


PM1 = C([1.0, -1.0, -1.0, 1.0, 1.0])
IDX5 = C([2, 0, 3, 1, 2])

# (id — the function's name, then '-variant' —, function, input specs)
FUNCTIONAL = [
    ("linear", F.linear, [R(3, 4), R(2, 4), R(2)]),
    ("bilinear", F.bilinear, [R(3, 2), R(3, 4), R(5, 2, 4), R(5)]),
    ("relu", F.relu, [R(3, 4)]),
    ("relu_", lambda x: F.relu_(x * 1), [R(3, 4)]),
    ("relu-inplace", lambda x: F.relu(x * 1, inplace=True), [R(3, 4)]),
    ("relu6", F.relu6, [S(5, 3, 4)]),
    # the in-place forms (on a non-leaf copy)
    ("relu6-inplace", lambda x: F.relu6(x * 3, inplace=True), [R(3, 4)]),
    ("leaky_relu-inplace", lambda x: F.leaky_relu(x * 1, 0.3, inplace=True), [R(3, 4)]),
    ("elu-inplace", lambda x: F.elu(x * 1, inplace=True), [R(3, 4)]),
    ("selu-inplace", lambda x: F.selu(x * 1, inplace=True), [R(3, 4)]),
    ("celu-inplace", lambda x: F.celu(x * 1, 0.5, inplace=True), [R(3, 4)]),
    ("silu-inplace", lambda x: F.silu(x * 1, inplace=True), [R(3, 4)]),
    ("hardtanh-inplace", lambda x: F.hardtanh(x * 1, inplace=True), [R(3, 4)]),
    ("hardswish-inplace", lambda x: F.hardswish(x * 4, inplace=True), [R(3, 4)]),
    ("hardsigmoid-inplace", lambda x: F.hardsigmoid(x * 4, inplace=True), [R(3, 4)]),
    ("mish-inplace", lambda x: F.mish(x * 1, inplace=True), [R(3, 4)]),
    ("threshold-inplace", lambda x: F.threshold(x * 1, 0.2, -1.0, inplace=True), [R(3, 4)]),
    ("dropout-eval-inplace", lambda x: F.dropout(x * 1, training=False, inplace=True),
     [R(3, 4)]),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), [R(3, 4)]),
    ("elu", lambda x: F.elu(x, 0.7), [R(3, 4)]),
    ("selu", F.selu, [R(3, 4)]),
    ("celu", lambda x: F.celu(x, 1.3), [R(3, 4)]),
    ("gelu", F.gelu, [R(3, 4)]),
    ("gelu-tanh", lambda x: F.gelu(x, approximate="tanh"), [R(3, 4)]),
    ("silu", F.silu, [R(3, 4)]),
    ("softplus", lambda x: F.softplus(x, 2.0, 3.0), [S(3, 3, 4)]),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.8), [R(3, 4)]),
    ("hardswish", F.hardswish, [S(4, 3, 4)]),
    ("hardsigmoid", F.hardsigmoid, [S(4, 3, 4)]),
    ("mish", F.mish, [R(3, 4)]),
    ("sigmoid", F.sigmoid, [R(3, 4)]),
    ("tanh", F.tanh, [R(3, 4)]),
    ("logsigmoid", F.logsigmoid, [R(3, 4)]),
    ("softsign", F.softsign, [R(3, 4)]),
    ("tanhshrink", F.tanhshrink, [R(3, 4)]),
    ("hardshrink", F.hardshrink, [R(3, 4)]),
    ("softshrink", lambda x: F.softshrink(x, 0.3), [R(3, 4)]),
    ("prelu", F.prelu, [R(2, 3, 4), R(3)]),
    ("glu", lambda x: F.glu(x, 1), [R(2, 6, 3)]),
    ("threshold", lambda x: F.threshold(x, 0.1, 20.0), [R(3, 4)]),
    ("softmax", lambda x: F.softmax(x, 1), [R(3, 4)]),
    ("log_softmax", lambda x: F.log_softmax(x, 0), [R(3, 4, 2)]),
    ("softmin", lambda x: F.softmin(x, -1), [R(3, 4)]),
    ("dropout-eval", lambda x: F.dropout(x, 0.5, training=False), [R(3, 4)]),
    ("dropout1d-eval", lambda x: F.dropout1d(x, training=False), [R(2, 3, 4)]),
    ("dropout2d-eval", lambda x: F.dropout2d(x, training=False), [R(2, 3, 4, 4)]),
    ("dropout3d-eval", lambda x: F.dropout3d(x, training=False), [R(2, 3, 2, 2, 2)]),
    ("embedding", lambda w, i: F.embedding(i, w), [R(10, 3), I(10, 2, 5)]),
    ("embedding-pad", lambda w, i: F.embedding(i, w, padding_idx=2),
     [R(10, 3), C([[2, 1, 2, 9], [0, 2, 3, 3]])]),
    ("embedding-max_norm", lambda w, i: (F.embedding(i, w.detach().clone(), max_norm=1.0),),
     [S(3, 10, 3), I(10, 7)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), [R(3, 4), R(4), R(4)]),
    ("rms_norm", lambda x, w: F.rms_norm(x, (4,), w), [R(3, 4), R(4)]),
    ("batch_norm", _bn, [R(4, 3, 2), R(3), R(3), NG(R(3)), NG(U(0.5, 2, 3))]),
    ("batch_norm-eval", lambda x, rm, rv: F.batch_norm(x, rm, rv),
     [R(4, 3, 5, 2), NG(R(3)), NG(U(0.5, 2, 3))]),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1),
     [R(2, 2, 5, 4), R(3, 2, 3, 2), R(3)]),
    ("conv2d-groups", lambda x, w: F.conv2d(x, w, groups=2, dilation=2),
     [R(1, 4, 5, 5), R(2, 2, 2, 2)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), [R(2, 2, 7, 6)]),
    ("max_pool2d-ceil-dil", lambda x: F.max_pool2d(x, 2, 1, dilation=2, ceil_mode=True),
     [R(1, 2, 6, 5)]),
    ("max_pool2d_with_indices", lambda x: F.max_pool2d_with_indices(x, 2), [R(2, 3, 6, 6)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
     [R(2, 2, 7, 6)]),
    ("avg_pool2d-ceil-divisor", lambda x: F.avg_pool2d(x, 2, ceil_mode=True, divisor_override=3),
     [R(1, 2, 5, 7)]),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2),
     [R(2, 2, 7), R(3, 2, 2), R(3)]),
    ("conv1d-same", lambda x, w: F.conv1d(x, w, padding="same"), [R(2, 7), R(2, 2, 4)]),
    ("max_pool1d", lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True), [R(2, 2, 7)]),
    ("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), [R(2, 2, 8)]),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), [R(2, 3, 7, 5)]),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (4, 3), return_indices=True),
     [R(2, 3, 9, 5)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [R(2, 4, 3), R(4), R(4)]),
    ("instance_norm", F.instance_norm, [R(2, 2, 3, 3)]),
    ("instance_norm-stats", _in, [R(2, 3, 4), R(3), R(3), NG(R(3)), NG(U(0.5, 2, 3))]),
    ("pad", lambda x: F.pad(x, (1, 2, -1, 1), value=0.5), [R(2, 3, 4)]),
    ("pad-reflect", lambda x: F.pad(x, (1, 2, 3, 0), mode="reflect"), [R(2, 2, 4, 3)]),
    ("pad-reflect-1d", lambda x: F.pad(x, (3, 1), mode="reflect"), [R(2, 3, 5)]),
    ("pad-reflect-3d", lambda x: F.pad(x, (1, 0, 2, 1, 1, 1), mode="reflect"),
     [R(1, 2, 3, 3, 2)]),
    ("pad-replicate", lambda x: F.pad(x, (1, 3, 2, 0), mode="replicate"), [R(2, 2, 3, 3)]),
    ("pad-replicate-3d", lambda x: F.pad(x, (2, 2, 1, 0, 0, 1), mode="replicate"),
     [R(1, 2, 2, 2, 3)]),
    ("pad-circular", lambda x: F.pad(x, (1, 0, 2, 2), mode="circular"), [R(2, 2, 3, 3)]),
    ("one_hot", lambda i: F.one_hot(i, 5), [I(5, 2, 3)]),
    ("one_hot-infer", F.one_hot, [C([0, 3, 1])]),
    ("normalize", F.normalize, [R(3, 4)]),
    ("cosine_similarity", F.cosine_similarity, [R(3, 4), R(3, 4)]),
    ("pairwise_distance", lambda a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True),
     [R(3, 4), R(3, 4)]),
    ("mse_loss", F.mse_loss, [R(3, 4), R(3, 4)]),
    ("l1_loss", lambda x, y: F.l1_loss(x, y, reduction="sum"), [R(3, 4), R(3, 4)]),
    ("smooth_l1_loss", lambda x, y: F.smooth_l1_loss(x, y, beta=0.5, reduction="none"),
     [R(3, 4), R(3, 4)]),
    ("huber_loss", lambda x, y: F.huber_loss(x, y, delta=0.5), [R(3, 4), R(3, 4)]),
    ("nll_loss", lambda x, t, w: F.nll_loss(x, t, w, ignore_index=1),
     [R(5, 4), IDX5, U(0.5, 2, 4)]),
    ("nll_loss-2d", lambda x, t: F.nll_loss(x, t, reduction="none"),
     [R(2, 3, 4, 2), I(3, 2, 4, 2)]),
    ("cross_entropy", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1, ignore_index=1),
     [R(5, 4), IDX5]),
    ("cross_entropy-weight", lambda x, t, w: F.cross_entropy(x, t, w),
     [R(5, 4), IDX5, U(0.5, 2, 4)]),
    ("cross_entropy-probs", lambda x, p: F.cross_entropy(x, p.softmax(1), label_smoothing=0.2),
     [R(5, 4), R(5, 4)]),
    ("cross_entropy-2d", lambda x, t: F.cross_entropy(x, t), [R(2, 3, 4), I(3, 2, 4)]),
    ("binary_cross_entropy", lambda x, y, w: F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), w),
     [R(5, 4), R(5, 4), U(0.5, 2, 4)]),
    ("binary_cross_entropy_with_logits",
     lambda x, y, w, pw: F.binary_cross_entropy_with_logits(x, y.sigmoid(), w, pos_weight=pw),
     [S(3, 5, 4), R(5, 4), U(0.5, 2, 4), U(0.5, 2, 4)]),
    ("kl_div", lambda x, y: F.kl_div(x.log_softmax(1), y.softmax(1), reduction="batchmean"),
     [R(5, 4), R(5, 4)]),
    ("kl_div-log_target", lambda x, y: F.kl_div(x, y, log_target=True, reduction="none"),
     [R(5, 4), R(5, 4)]),
    ("conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1)),
     [R(2, 2, 4, 5, 4), R(3, 2, 2, 3, 2), R(3)]),
    ("conv3d-groups", lambda x, w: F.conv3d(x, w, dilation=(2, 1, 1), groups=2),
     [R(1, 4, 5, 3, 3), R(2, 2, 2, 2, 2)]),
    ("conv_transpose1d", lambda x, w, b: F.conv_transpose1d(x, w, b, 3, 1, 2),
     [R(2, 3, 5), R(3, 2, 4), R(2)]),
    ("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, (2, 3), (1, 0), (1, 2)),
     [R(2, 2, 4, 3), R(2, 4, 3, 2), R(4)]),
    ("conv_transpose2d-groups", lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=2,
                                                                dilation=3),
     [R(1, 4, 3, 3), R(4, 3, 2, 2)]),
    ("conv_transpose3d", lambda x, w, b: F.conv_transpose3d(x, w, b, stride=(1, 2, 2)),
     [R(1, 2, 2, 3, 2), R(2, 2, 2, 2, 2), R(2)]),
    ("max_pool3d", lambda x: F.max_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 0, 1), (1, 2, 1),
                                          return_indices=True), [R(1, 2, 5, 5, 6)]),
    ("max_pool3d-ceil", lambda x: F.max_pool3d(x, 2, ceil_mode=True), [R(2, 3, 5, 5)]),
    ("avg_pool3d", lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
     [R(1, 2, 5, 4, 5)]),
    ("avg_pool3d-ceil-divisor", lambda x: F.avg_pool3d(x, (2, 3, 2), ceil_mode=True,
                                                       divisor_override=5), [R(1, 2, 5, 5, 3)]),
    ("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 3), [R(2, 3, 7)]),
    ("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, (2, None, 3)),
     [R(2, 2, 5, 3, 7)]),
    ("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True),
     [R(2, 3, 9)]),
    ("adaptive_max_pool3d", lambda x: F.adaptive_max_pool3d(x, (2, 3, None), True),
     [R(2, 2, 5, 4, 3)]),
    ("adaptive_max_pool2d-empty", lambda x: F.adaptive_max_pool2d(x, 2, return_indices=True),
     [R(0, 2, 5, 5)]),
    ("adaptive_max_pool3d-empty", lambda x: F.adaptive_max_pool3d(x, (2, 0, 1), True),
     [R(1, 2, 4, 4, 4)]),
    ("max_unpool1d", _unpool(F.max_pool1d, F.max_unpool1d, 2), [R(2, 3, 8)]),
    ("max_unpool2d", _unpool(F.max_pool2d, F.max_unpool2d, 2), [R(2, 3, 4, 6)]),
    ("max_unpool2d-size", lambda x: (lambda y, i: F.max_unpool2d(y, i, 2, output_size=(5, 5)))(
        *F.max_pool2d(x, 2, return_indices=True)), [R(1, 2, 5, 5)]),
    ("max_unpool3d", _unpool(F.max_pool3d, F.max_unpool3d, 2), [R(1, 2, 4, 4, 2)]),
    ("interpolate", lambda x: F.interpolate(x, scale_factor=2), [R(2, 2, 3, 4)]),
    ("interpolate-nearest-1d", lambda x: F.interpolate(x, size=7), [R(2, 2, 3)]),
    ("interpolate-nearest-3d", lambda x: F.interpolate(x, scale_factor=(1.5, 2, 0.7)),
     [R(1, 2, 3, 2, 5)]),
    ("interpolate-nearest-exact", lambda x: F.interpolate(x, size=(5, 3), mode="nearest-exact"),
     [R(1, 2, 3, 4)]),
    ("interpolate-linear", lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"),
     [R(2, 2, 4)]),
    ("interpolate-bilinear", lambda x: F.interpolate(x, (5, 7), mode="bilinear"),
     [R(2, 2, 3, 4)]),
    ("interpolate-bilinear-ac", lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear",
                                                        align_corners=True), [R(1, 2, 4, 3)]),
    ("interpolate-bicubic", lambda x: F.interpolate(x, scale_factor=(1.5, 2), mode="bicubic"),
     [R(1, 2, 3, 4)]),
    ("interpolate-trilinear", lambda x: F.interpolate(x, scale_factor=(2, 1.5, 0.5),
                                                      mode="trilinear"), [R(1, 2, 2, 3, 4)]),
    ("interpolate-area", lambda x: F.interpolate(x, size=(2, 3), mode="area"), [R(1, 2, 5, 7)]),
    ("upsample", lambda x: F.upsample(x, scale_factor=2, mode="linear"), [R(2, 2, 3)]),
    ("upsample_nearest", lambda x: F.upsample_nearest(x, size=(5, 3)), [R(2, 2, 3, 2)]),
    ("upsample_bilinear", lambda x: F.upsample_bilinear(x, scale_factor=2), [R(2, 2, 3, 2)]),
    ("embedding_bag", lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"),
     [R(10, 3), C([1, 4, 4, 9, 0, 2, 7]), C([0, 2, 2, 5])]),
    ("embedding_bag-mean-2d", lambda w, i: F.embedding_bag(i, w), [R(10, 3), I(10, 4, 3)]),
    ("embedding_bag-max-pad", lambda w, i, o: F.embedding_bag(i, w, o, mode="max",
                                                              padding_idx=3),
     [R(8, 2), C([1, 3, 5, 3, 3, 7, 0]), C([0, 3, 5])]),
    ("embedding_bag-last-pad", lambda w, i, o: F.embedding_bag(
        i, w, o, include_last_offset=True, padding_idx=0),
     [R(8, 4), C([1, 0, 5, 6, 0, 7]), C([0, 2, 2, 6])]),
    ("embedding_bag-weights", lambda w, i, o, p: F.embedding_bag(
        i, w, o, mode="sum", per_sample_weights=p),
     [R(8, 4), C([1, 0, 5, 6, 0, 7]), C([0, 4]), R(6)]),
    ("embedding_bag-max_norm", lambda w, i, o: F.embedding_bag(
        i, w.detach().clone(), o, max_norm=1.0), [S(3, 8, 4), C([1, 0, 5, 6, 5, 7]), C([0, 4])]),
    ("margin_ranking_loss", lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.3),
     [R(5), R(5), PM1]),
    ("hinge_embedding_loss", lambda x, t: F.hinge_embedding_loss(x, t, reduction="none"),
     [R(5), PM1]),
    ("soft_margin_loss", F.soft_margin_loss, [R(5), PM1]),
    ("cosine_embedding_loss", lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.1),
     [R(5, 3), R(5, 3), PM1]),
    ("multi_margin_loss", F.multi_margin_loss, [R(5, 4), IDX5]),
    ("multi_margin_loss-p2-weight", lambda x, t, w: F.multi_margin_loss(x, t, p=2, margin=0.7,
                                                                        weight=w,
                                                                        reduction="none"),
     [R(5, 4), IDX5, U(0.5, 2, 4)]),
    ("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
     [R(4, 3), R(4, 3), R(4, 3)]),
    ("triplet_margin_with_distance_loss", lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, margin=0.5), [R(4, 3), R(4, 3), R(4, 3)]),
    ("triplet_margin_with_distance_loss-fn", lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), swap=True),
     [R(4, 3), R(4, 3), R(4, 3)]),
    ("poisson_nll_loss", F.poisson_nll_loss, [R(3, 4), U(0, 3, 3, 4)]),
    ("poisson_nll_loss-full", lambda x, t: F.poisson_nll_loss(x.exp(), t, log_input=False,
                                                              full=True, reduction="none"),
     [R(3, 4), U(0, 3, 3, 4)]),
    ("gaussian_nll_loss", lambda x, t, v: F.gaussian_nll_loss(x, t, v.exp(), full=True),
     [R(3, 4), R(3, 4), R(3, 1)]),
    ("gaussian_nll_loss-scalar-var", lambda x, t: F.gaussian_nll_loss(x, t, 0.7),
     [R(3, 4), R(3, 4)]),
    ("multilabel_margin_loss", F.multilabel_margin_loss,
     [R(3, 4), C([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])]),
    ("multilabel_margin_loss-1d", lambda x, t: F.multilabel_margin_loss(x, t, reduction="none"),
     [R(4), C([2, 1, -1, 0])]),
    ("multilabel_soft_margin_loss", lambda x, t, w: F.multilabel_soft_margin_loss(x, t, w),
     [R(3, 4), C([[1.0, 0, 0, 1], [0, 1, 1, 1], [0, 0, 0, 1]]), U(0.5, 2, 4)]),
    ("scaled_dot_product_attention", F.scaled_dot_product_attention,
     [R(2, 3, 4), R(2, 5, 4), R(2, 5, 3)]),
    ("scaled_dot_product_attention-causal", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, scale=0.3), [R(2, 2, 4, 3), R(2, 2, 4, 3), R(2, 2, 4, 2)]),
    ("scaled_dot_product_attention-mask", lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [R(2, 3, 4), R(2, 5, 4), R(2, 5, 3),
                                C([[True, False, True, True, False]] * 3)]),
    ("scaled_dot_product_attention-float-mask-gqa",
     lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True),
     [R(1, 4, 3, 2), R(1, 2, 5, 2), R(1, 2, 5, 3), NG(R(3, 5))]),
    ("multi_head_attention_forward", _mha,
     [R(3, 2, 4), R(5, 2, 4), R(5, 2, 4), R(12, 4), R(12), R(4, 4), R(4), R(1, 1, 4),
      R(1, 1, 4), C([[False, False, True, False, False], [False] * 5])]),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [R(2, 8, 2, 3)]),
    ("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), [R(2, 2, 4, 6)]),
    ("multi_head_attention_forward-separate", _mha_separate,
     [R(3, 2, 4), R(5, 2, 4), R(5, 2, 4), R(4, 4), R(4, 4), R(4, 4), R(12), R(4, 4), R(4)]),
]

RANDOM_FUNCTIONS = {"dropout", "dropout1d", "dropout2d", "dropout3d"}


def test_every_public_function_is_swept():
    swept = {case[0].split("-")[0] for case in FUNCTIONAL}
    assert set(F.__all__) - swept == set()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,specs", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_functional_matches_the_cpu(name, fn, specs, dtype, kernels):
    arrays = make_arrays(specs, np.random.default_rng(0), dtype)
    xc, xd = tensors(arrays, "cpu"), tensors(arrays, "cuda")
    run_both(lambda xs: fn(*xs), xc, xd, [], [], dtype)


@pytest.mark.parametrize("name,fn,specs", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_functional_on_strided_inputs_matches_the_cpu(name, fn, specs):
    arrays = make_arrays(specs, np.random.default_rng(0), "float64")
    xc, xd = strided(tensors(arrays, "cpu")), strided(tensors(arrays, "cuda"))
    run_both(lambda xs: fn(*xs), xc, xd, [], [], "float64")


# -------------------------------------------------------------------- layers
class _Call(nn.Module):
    """Wraps a layer whose call needs keyword arguments or returns a state."""

    def __init__(self, inner, call):
        super().__init__()
        self.inner, self.call = inner, call

    def forward(self, *xs):
        return self.call(self.inner, *xs)


def _loss(cls, **kw):
    return lambda nn: getattr(nn, cls)(**kw)


def _packed(rnn, x, lengths):
    packed = rnn_utils.pack_padded_sequence(x, lengths.cpu(), batch_first=True,
                                            enforce_sorted=False)
    out, state = rnn(packed)
    padded, out_lengths = rnn_utils.pad_packed_sequence(out, batch_first=True)
    assert not out_lengths.is_cuda  # as PyTorch: the lengths come back on the CPU
    return padded, state


EXTRA_MODULES = [
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), [R(2, 8, 2, 3)]),
    ("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(3), [R(2, 2, 6, 3)]),
    # losses
    ("L1Loss", _loss("L1Loss"), [R(3, 4), R(3, 4)]),
    ("MSELoss", _loss("MSELoss", reduction="sum"), [R(3, 4), R(3, 4)]),
    ("SmoothL1Loss", _loss("SmoothL1Loss", beta=0.5), [R(3, 4), R(3, 4)]),
    ("HuberLoss", _loss("HuberLoss", delta=0.3), [R(3, 4), R(3, 4)]),
    ("NLLLoss", lambda nn: nn.Sequential(nn.LogSoftmax(1), nn.NLLLoss(ignore_index=0)),
     [R(5, 4)]),  # the target comes from _TARGETS
    ("CrossEntropyLoss", _loss("CrossEntropyLoss", label_smoothing=0.1), [R(5, 4), IDX5]),
    ("BCELoss", lambda nn: _Call(nn.BCELoss(), lambda m, x, y: m(x.sigmoid(), y.sigmoid())),
     [R(3, 4), R(3, 4)]),
    ("BCEWithLogitsLoss", _loss("BCEWithLogitsLoss", reduction="none"), [R(3, 4), U(0, 1, 3, 4)]),
    ("KLDivLoss", _loss("KLDivLoss", reduction="batchmean", log_target=True), [R(3, 4), R(3, 4)]),
    ("PoissonNLLLoss", _loss("PoissonNLLLoss", full=True), [R(3, 4), U(0, 3, 3, 4)]),
    ("GaussianNLLLoss", lambda nn: _Call(nn.GaussianNLLLoss(),
                                         lambda m, x, t, v: m(x, t, v.exp())),
     [R(3, 4), R(3, 4), R(3, 4)]),
    ("MarginRankingLoss", _loss("MarginRankingLoss", margin=0.2), [R(5), R(5), PM1]),
    ("HingeEmbeddingLoss", _loss("HingeEmbeddingLoss"), [R(5), PM1]),
    ("SoftMarginLoss", _loss("SoftMarginLoss"), [R(5), PM1]),
    ("CosineEmbeddingLoss", _loss("CosineEmbeddingLoss"), [R(5, 3), R(5, 3), PM1]),
    ("MultiMarginLoss", _loss("MultiMarginLoss", p=2), [R(5, 4), IDX5]),
    ("MultiLabelMarginLoss", _loss("MultiLabelMarginLoss"),
     [R(3, 4), C([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])]),
    ("MultiLabelSoftMarginLoss", _loss("MultiLabelSoftMarginLoss"),
     [R(3, 4), C([[1.0, 0, 0, 1], [0, 1, 1, 1], [0, 0, 0, 1]])]),
    ("TripletMarginLoss", _loss("TripletMarginLoss", p=1.0), [R(4, 3), R(4, 3), R(4, 3)]),
    ("TripletMarginWithDistanceLoss", _loss("TripletMarginWithDistanceLoss", swap=True),
     [R(4, 3), R(4, 3), R(4, 3)]),
    # unpooling (the indices from the pooling layer, inside the call)
    ("MaxUnpool1d", lambda nn: _Call(nn.MaxUnpool1d(2), lambda m, x: m(
        *nn.functional.max_pool1d(x, 2, return_indices=True))), [R(2, 3, 8)]),
    ("MaxUnpool2d", lambda nn: _Call(nn.MaxUnpool2d(2), lambda m, x: m(
        *nn.functional.max_pool2d(x, 2, return_indices=True), output_size=(5, 5))),
     [R(2, 3, 5, 5)]),
    ("MaxUnpool3d", lambda nn: _Call(nn.MaxUnpool3d(2), lambda m, x: m(
        *nn.functional.max_pool3d(x, 2, return_indices=True))), [R(1, 2, 4, 4, 2)]),
    # recurrent layers
    ("RNN", lambda nn: nn.RNN(3, 4, num_layers=2, nonlinearity="relu"), [R(5, 2, 3)]),
    ("RNN-state", lambda nn: nn.RNN(3, 4, batch_first=True), [R(2, 5, 3), R(1, 2, 4)]),
    ("LSTM", lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True), [R(5, 2, 3)]),
    ("LSTM-proj-state", lambda nn: _Call(nn.LSTM(3, 4, proj_size=2),
                                         lambda m, x, h, c: m(x, (h, c))),
     [R(5, 2, 3), R(1, 2, 2), R(1, 2, 4)]),
    ("GRU", lambda nn: nn.GRU(3, 4, bidirectional=True, batch_first=True), [R(2, 5, 3)]),
    ("LSTM-packed", lambda nn: _Call(nn.LSTM(3, 4, batch_first=True, bidirectional=True),
                                     _packed), [R(3, 5, 3), C([5, 2, 4])]),
    ("GRU-packed", lambda nn: _Call(nn.GRU(3, 4, num_layers=2, batch_first=True), _packed),
     [R(3, 5, 3), C([3, 5, 1])]),
    ("RNNCell", lambda nn: nn.RNNCell(3, 4, nonlinearity="tanh"), [R(2, 3), R(2, 4)]),
    ("LSTMCell", lambda nn: nn.LSTMCell(3, 4), [R(2, 3)]),
    ("GRUCell", lambda nn: nn.GRUCell(3, 4, bias=False), [R(3), R(4)]),
    # attention and transformers (no dropout: the values are compared)
    ("MultiheadAttention", lambda nn: _Call(
        nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5),
        lambda m, q, k, v, mask: m(q, k, v, key_padding_mask=mask)),
     [R(3, 2, 4), R(5, 2, 3), R(5, 2, 5), C([[False, False, True, False, False], [False] * 5])]),
    ("MultiheadAttention-batch-first", lambda nn: _Call(
        nn.MultiheadAttention(4, 2, batch_first=True),
        lambda m, x, mask: m(x, x, x, attn_mask=mask, average_attn_weights=False)),
     [R(2, 3, 4), NG(R(3, 3))]),
    ("TransformerEncoderLayer", lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0),
     [R(3, 2, 4)]),
    ("TransformerEncoder", lambda nn: _Call(
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True,
                                                         norm_first=True, activation="gelu"),
                              2, enable_nested_tensor=False),
        lambda m, x, mask: m(x, src_key_padding_mask=mask)),
     [R(2, 3, 4), C([[False, False, True], [False] * 3])]),
    ("TransformerDecoderLayer", lambda nn: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0),
     [R(3, 2, 4), R(5, 2, 4)]),
    ("TransformerDecoder", lambda nn: _Call(
        nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 2,
                              norm=nn.LayerNorm(4)),
        lambda m, x, mem: m(x, mem, tgt_is_causal=True,
                            tgt_mask=nn.Transformer.generate_square_subsequent_mask(
                                3, device=x.device, dtype=x.dtype))),
     [R(3, 2, 4), R(5, 2, 4)]),
    ("Transformer", lambda nn: nn.Transformer(4, 2, 1, 1, 8, dropout=0.0),
     [R(5, 2, 4), R(3, 2, 4)]),
    ("ReLU-inplace", lambda nn: nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True),
                                              nn.Linear(4, 4), nn.Hardtanh(inplace=True)),
     [R(2, 3)]),
    # training-mode normalisation updating running statistics
    ("BatchNorm1d-train-momentum", lambda nn: nn.BatchNorm1d(3, momentum=None), [R(4, 3, 2)]),
    ("Identity-args", lambda nn: nn.Identity(3, unused=True), [R(2, 2)]),
]

_TARGETS = {"NLLLoss": IDX5}
LAYERS = MODULES + EXTRA_MODULES
# not layers; DataParallel (a wrapper over devices) has tests/test_data_parallel.py
CONTAINERS = {"Module", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
              "RNNBase", "RNNCellBase", "DataParallel"}


def test_every_layer_is_swept():
    layers = {n for n in dir(nn) if inspect.isclass(getattr(nn, n))
              and issubclass(getattr(nn, n), nn.Module)} - CONTAINERS
    swept = set()
    for _, build, _ in LAYERS:
        swept |= {type(m).__name__ for m in build(nn).modules()}
    assert layers - swept == set()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[m[0] for m in LAYERS])
def test_layer_matches_the_cpu(name, build, specs, dtype, kernels):
    ember.manual_seed(0)
    m = build(nn).to(getattr(ember, dtype))
    md = copy.deepcopy(m).cuda()
    specs = specs + ([_TARGETS[name]] if name in _TARGETS else [])
    arrays = make_arrays(specs, np.random.default_rng(0), dtype)
    xc, xd = tensors(arrays, "cpu"), tensors(arrays, "cuda")
    if name == "NLLLoss":  # Sequential passes one input: the loss takes the target
        m, md = (_Call(m, lambda s, x, t: s[1](s[0](x), t)),
                 _Call(md, lambda s, x, t: s[1](s[0](x), t)))
    assert all(p.is_cuda for p in md.parameters())
    run_both(lambda xs: (m if xs is xc else md)(*xs), xc, xd,
             list(m.parameters()), list(md.parameters()), dtype)
    bc, bd = dict(m.named_buffers()), dict(md.named_buffers())
    for key in bc:
        compare(bc[key], bd[key], TOL[dtype], key)


FACTORY = [  # layers built straight on the device (device=... in the constructor)
    lambda nn, kw: nn.Linear(3, 2, **kw),
    lambda nn, kw: nn.Bilinear(3, 2, 4, **kw),
    lambda nn, kw: nn.Conv2d(2, 3, 3, **kw),
    lambda nn, kw: nn.ConvTranspose3d(2, 3, 2, **kw),
    lambda nn, kw: nn.Embedding(5, 3, padding_idx=0, **kw),
    lambda nn, kw: nn.EmbeddingBag(5, 3, **kw),
    lambda nn, kw: nn.LayerNorm(4, **kw),
    lambda nn, kw: nn.BatchNorm2d(3, **kw),
    lambda nn, kw: nn.InstanceNorm1d(3, affine=True, track_running_stats=True, **kw),
    lambda nn, kw: nn.GroupNorm(2, 4, **kw),
    lambda nn, kw: nn.LSTM(3, 4, proj_size=2, bidirectional=True, **kw),
    lambda nn, kw: nn.GRUCell(3, 4, **kw),
    lambda nn, kw: nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, **kw),
    lambda nn, kw: nn.Transformer(4, 2, 1, 1, 8, **kw),
]


@pytest.mark.parametrize("build", FACTORY)
def test_layers_built_on_the_device(build):
    m = build(nn, dict(device="cuda", dtype=ember.float64))
    tensors_ = list(m.parameters()) + list(m.buffers())
    assert tensors_ and all(t.is_cuda for t in tensors_)
    assert all(p.dtype == ember.float64 for p in m.parameters())
    ember.manual_seed(0)
    ref = build(nn, {})
    shapes = [tuple(p.shape) for p in m.parameters()]
    assert [tuple(p.shape) for p in ref.parameters()] == shapes


# ------------------------------------------------- random layers and functions
@pytest.mark.parametrize("fn,shape,channel", [
    (lambda x: F.dropout(x, 0.3), (4000,), False),
    (lambda x: F.dropout(x * 1, 0.3, inplace=True), (4000,), False),
    (lambda x: F.dropout1d(x, 0.3), (20, 200, 3), True),
    (lambda x: F.dropout2d(x, 0.3), (20, 200, 2, 2), True),
    (lambda x: F.dropout3d(x, 0.3), (20, 200, 1, 2, 2), True),
    (nn.Dropout(0.3), (4000,), False),
    (nn.Dropout2d(0.3), (20, 200, 2, 2), True),
], ids=["dropout", "dropout-inplace", "dropout1d", "dropout2d", "dropout3d", "Dropout",
        "Dropout2d"])
def test_dropout_statistics_on_the_device(fn, shape, channel):
    x = ember.ones(*shape, dtype=ember.float64, device="cuda", requires_grad=True)
    y = fn(x)
    assert y.is_cuda and tuple(y.shape) == shape
    a = y.detach().cpu().numpy()
    assert set(np.unique(a)) <= {0.0, 1 / 0.7}
    assert abs((a == 0).mean() - 0.3) < 0.05
    if channel:  # whole channels are kept or dropped
        per_channel = a.reshape(shape[0], shape[1], -1)
        assert (per_channel.min(-1) == per_channel.max(-1)).all()
    y.sum().backward()
    assert x.grad.is_cuda
    np.testing.assert_array_equal(x.grad.cpu().numpy(), a)


def test_recurrent_dropout_and_transformer_dropout_run_on_the_device():
    ember.manual_seed(0)
    lstm = nn.LSTM(3, 8, num_layers=2, dropout=0.5).cuda()
    out, _ = lstm(ember.randn(4, 2, 3, device="cuda"))
    out.sum().backward()
    assert out.is_cuda and all(p.grad.is_cuda for p in lstm.parameters())
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5).cuda()
    y = layer(ember.randn(3, 2, 8, device="cuda"))
    y.sum().backward()
    assert y.is_cuda and all(p.grad.is_cuda for p in layer.parameters())
    attn = F.scaled_dot_product_attention(*(ember.randn(2, 3, 4, device="cuda") for _ in "qkv"),
                                          dropout_p=0.5)
    assert attn.is_cuda and tuple(attn.shape) == (2, 3, 4)


# ---------------------------------------------------------------------- init
DETERMINISTIC_INIT = [
    ("constant_", lambda t: nn.init.constant_(t, 0.3)),
    ("zeros_", nn.init.zeros_),
    ("ones_", nn.init.ones_),
    ("eye_", nn.init.eye_),
    ("dirac_", nn.init.dirac_),
    ("dirac_-groups", lambda t: nn.init.dirac_(t, groups=2)),
]


@pytest.mark.parametrize("name,init", DETERMINISTIC_INIT, ids=[c[0] for c in DETERMINISTIC_INIT])
@pytest.mark.parametrize("dtype", DTYPES)
def test_deterministic_init_matches_the_cpu(name, init, dtype):
    shape = (6, 4) if name.startswith("eye") else (6, 3, 3, 3)
    c = nn.Parameter(ember.randn(*shape, dtype=getattr(ember, dtype)))
    d = nn.Parameter(c.detach().cuda())
    assert init(c) is c and init(d) is d
    compare(c, d, TOL[dtype], name)


RANDOM_INIT = [  # (name, init, the expected std of the values)
    ("uniform_", lambda t: nn.init.uniform_(t, -2, 2), 4 / np.sqrt(12)),
    ("normal_", lambda t: nn.init.normal_(t, 1.0, 0.5), 0.5),
    ("trunc_normal_", lambda t: nn.init.trunc_normal_(t, std=1.0, a=-1, b=1), None),
    ("xavier_uniform_", nn.init.xavier_uniform_, np.sqrt(2 / (60 + 80))),
    ("xavier_normal_", lambda t: nn.init.xavier_normal_(t, gain=2.0), 2 * np.sqrt(2 / 140)),
    ("kaiming_uniform_", nn.init.kaiming_uniform_, np.sqrt(2 / 80)),
    ("kaiming_normal_", lambda t: nn.init.kaiming_normal_(t, mode="fan_out"), np.sqrt(2 / 60)),
    ("orthogonal_", lambda t: nn.init.orthogonal_(t, gain=1.5), None),
    ("sparse_", lambda t: nn.init.sparse_(t, 0.5), None),
]


@pytest.mark.parametrize("name,init,std", RANDOM_INIT, ids=[c[0] for c in RANDOM_INIT])
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_init_on_the_device(name, init, std, dtype):
    ember.manual_seed(0)
    p = nn.Parameter(ember.zeros(60, 80, dtype=getattr(ember, dtype), device="cuda"))
    storage = p.data_ptr()
    assert init(p) is p
    assert p.is_cuda and p.data_ptr() == storage and p.dtype == getattr(ember, dtype)
    a = p.detach().cpu().numpy().astype(np.float64)
    if std is not None:
        assert abs(a.std() - std) < 0.1 * std
    if name == "trunc_normal_":
        assert a.min() >= -1 and a.max() <= 1 and a.std() > 0.3
    elif name == "orthogonal_":
        np.testing.assert_allclose(a @ a.T, 2.25 * np.eye(60), atol=1e-4)
    elif name == "sparse_":
        assert ((a == 0).sum(0) == 30).all()


def test_calculate_gain_and_legacy_init_names():
    assert nn.init.calculate_gain("relu") == pytest.approx(np.sqrt(2))
    p = ember.empty(3, 4, device="cuda")
    nn.init.uniform(p)
    nn.init.constant(p, 2.0)
    assert p.is_cuda and (p.cpu().numpy() == 2).all()


# ----------------------------------------------------------------- utilities
def _params(device, dtype=ember.float64):
    ember.manual_seed(3)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).to(dtype)
    m.to(device)
    m(ember.randn(5, 3, dtype=dtype).to(device)).pow(2).sum().backward()
    return list(m.parameters())


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_the_cpu(norm_type):
    pc, pd = _params("cpu"), _params("cuda")
    tc = nn.utils.clip_grad_norm_(pc, 0.1, norm_type)
    td = nn.utils.clip_grad_norm_(pd, 0.1, norm_type)
    compare(tc, td, TOL["float64"], "total norm")
    for c, d in zip(pc, pd):
        compare(c.grad, d.grad, TOL["float64"], "clipped gradient")
    gc = nn.utils.get_total_norm([p.grad for p in pc], norm_type)
    gd = nn.utils.get_total_norm([p.grad for p in pd], norm_type)
    compare(gc, gd, TOL["float64"], "get_total_norm")


def test_clip_grad_norm_of_no_gradients_is_on_the_parameters_device():
    total = nn.utils.clip_grad_norm_([nn.Parameter(ember.zeros(2, device="cuda"))], 1.0)
    assert float(total) == 0.0


def test_clip_grad_value_and_parameter_vectors_match_the_cpu():
    pc, pd = _params("cpu"), _params("cuda")
    nn.utils.clip_grad_value_(pc, 0.05)
    nn.utils.clip_grad_value_(pd, 0.05)
    for c, d in zip(pc, pd):
        compare(c.grad, d.grad, TOL["float64"], "clipped gradient")
    vc, vd = nn.utils.parameters_to_vector(pc), nn.utils.parameters_to_vector(pd)
    compare(vc, vd, TOL["float64"], "vector")
    nn.utils.vector_to_parameters(vd * 2, pd)
    nn.utils.vector_to_parameters(vc * 2, pc)
    for c, d in zip(pc, pd):
        compare(c, d, TOL["float64"], "parameter from the vector")


@pytest.mark.parametrize("lengths_device", ["cpu", "cuda"])
def test_rnn_packing_utilities_match_the_cpu(lengths_device):
    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, 3)) for n in (2, 5, 3)]
    results = []
    for device in ("cpu", "cuda"):
        xs = [ember.tensor(s, device=device, requires_grad=True) for s in seqs]
        padded = rnn_utils.pad_sequence(xs, batch_first=True, padding_value=-1.0)
        lengths = ember.tensor([2, 5, 3], device=lengths_device)
        packed = rnn_utils.pack_padded_sequence(padded, lengths, batch_first=True,
                                                enforce_sorted=False)
        assert packed.data.is_cuda == (device == "cuda")
        assert not packed.batch_sizes.is_cuda  # as PyTorch: batch sizes stay on the CPU
        unpadded, out_lengths = rnn_utils.pad_packed_sequence(packed, total_length=6)
        seq_packed = rnn_utils.pack_sequence(xs, enforce_sorted=False)
        unpacked = rnn_utils.unpack_sequence(seq_packed)
        unpadded2 = rnn_utils.unpad_sequence(padded, ember.tensor([2, 5, 3]), batch_first=True)
        perm = rnn_utils.invert_permutation(packed.sorted_indices)
        outs = [padded, packed.data, unpadded, seq_packed.data, *unpacked, *unpadded2, perm]
        (sum((o * (i + 1)).sum() for i, o in enumerate(outs) if o.is_floating_point())
         ).backward()
        results.append((outs, out_lengths, [x.grad for x in xs], packed))
    (oc, lc, gc, pc), (od, ld, gd, pd) = results
    for c, d in zip(oc, od):
        compare(c, d, TOL["float64"], "packing output")
    np.testing.assert_array_equal(lc.numpy(), ld.cpu().numpy())
    np.testing.assert_array_equal(pc.batch_sizes.numpy(), pd.batch_sizes.numpy())
    for c, d in zip(gc, gd):
        compare(c, d, TOL["float64"], "gradient")
    moved = pc.to("cuda")
    assert moved.data.is_cuda and moved.sorted_indices.is_cuda
    compare(pc.data, moved.data, TOL["float64"], "PackedSequence.to")
