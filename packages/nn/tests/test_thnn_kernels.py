"""ember.nn on libTHNN: with ember-thnn installed, the kernels it provides
run (first-order gradients from its C backward kernels) and agree with the
composed ember-op forms; double backward goes through the composed forms."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _kernels

thnn = pytest.importorskip("ember.thnn", reason="ember-thnn (the C kernels) is not installed")

# (kernel name, differentiable-tensor shapes (None: no tensor), other arguments); in the
# other arguments, ("randn", shape) / ("rand", shape) / ("classes", n, shape) make fresh
# tensors (the same values for both forms compared)
CASES = [
    ("conv2d", [(2, 3, 7, 6), (4, 3, 3, 2), (4,)], [(1, 1), (1, 1, 0, 0), (1, 1), 1]),
    ("conv2d", [(2, 4, 9, 9), (6, 2, 3, 3), None], [(2, 1), (2, 2, 1, 1), (1, 2), 2]),
    ("max_pool2d", [(2, 3, 7, 8)], [(2, 2), (2, 2), (0, 0), (1, 1), False, False]),
    ("max_pool2d", [(1, 2, 9, 7)], [(3, 2), (2, 1), (1, 1), (1, 2), True, True]),
    ("max_pool2d", [(1, 2, 2, 2)], [(3, 3), (2, 2), (0, 0), (1, 1), True, True]),  # one
    ("avg_pool2d", [(1, 2, 2, 3)], [(3, 3), (2, 2), (0, 0), True, True, None]),  # overhang
    ("avg_pool2d", [(2, 3, 7, 8)], [(3, 3), (2, 2), (1, 1), True, False, None]),
    ("avg_pool2d", [(1, 2, 6, 6)], [(2, 2), (2, 2), (0, 0), False, True, None]),
    ("relu", [(3, 4, 5)], []),
    ("layer_norm", [(3, 4, 5), (4, 5), (4, 5)], [(4, 5), 1e-5]),
    ("layer_norm", [(6, 7), None, None], [(7,), 1e-3]),
    ("group_norm", [(3, 6, 4, 2), (6,), (6,)], [3, 1e-5]),
    ("group_norm", [(2, 4, 5), None, None], [4, 1e-3]),
    ("batch_norm", [(4, 3, 5), (3,), (3,)],
     [("randn", (3,)), ("rand", (3,)), True, 0.1, 1e-5]),
    ("batch_norm", [(5, 3, 2, 2), None, (3,)], [None, None, True, 0.3, 1e-5]),
    ("batch_norm", [(4, 3), (3,), (3,)], [("randn", (3,)), ("rand", (3,)), False, 0.1, 1e-5]),
    ("cross_entropy", [(6, 5)], [("classes", 5, (6,)), None, "mean", -100]),
    ("cross_entropy", [(6, 5)], [("classes", 5, (6,)), ("rand", (5,)), "sum", 2]),
    ("cross_entropy", [(7,)], [("classes", 7, ()), None, "none", -100]),
    ("conv3d", [(2, 3, 5, 4, 6), (4, 3, 2, 3, 2), (4,)],
     [(1, 1, 2), (1, 1, 0, 0, 1, 1), (1, 1, 1), 1]),
    ("conv3d", [(1, 4, 6, 5, 5), (2, 2, 3, 2, 2), None],
     [(2, 1, 1), (1, 1, 0, 0, 0, 0), (1, 2, 1), 2]),
    ("conv_transpose2d", [(2, 4, 4, 5), (4, 3, 3, 2), (3,)],
     [(2, 1), (1, 0), (1, 0), 1, (1, 1)]),
    ("conv_transpose2d", [(1, 4, 3, 3), (4, 1, 2, 2), None],
     [(2, 2), (0, 0), (0, 1), 2, (1, 2)]),
    ("max_pool3d", [(1, 2, 5, 6, 5)], [(2, 2, 2), (2, 2, 1), (1, 0, 1), (1, 1, 2), False, True]),
    ("max_pool3d", [(2, 1, 4, 4, 5)], [(2, 3, 2), (1, 2, 2), (0, 1, 0), (1, 1, 1), True, False]),
    ("avg_pool3d", [(1, 2, 5, 6, 5)], [(2, 3, 2), (2, 2, 1), (1, 1, 0), False, True, None]),
    ("avg_pool3d", [(2, 1, 4, 5, 4)], [(3, 2, 2), (1, 2, 2), (1, 0, 1), True, False, 5]),
    ("adaptive_max_pool2d", [(2, 3, 7, 5)], [(3, 2), True]),
    ("adaptive_max_pool2d", [(1, 2, 4, 9)], [(4, 4), False]),
    ("upsample_nearest2d", [(2, 3, 4, 5)], [(7, 9), (None, None)]),
    ("upsample_nearest2d", [(1, 2, 3, 3)], [(6, 7), (2.0, 2.5)]),
    ("upsample_bilinear2d", [(2, 3, 4, 5)], [(7, 9), False, (None, None)]),
    ("upsample_bilinear2d", [(1, 2, 3, 4)], [(5, 8), True, (None, None)]),
    ("reflection_pad", [(2, 3, 6)], [(2, 3)]),
    ("reflection_pad", [(1, 2, 4, 5)], [(1, 2, 3, 0)]),
    ("replication_pad", [(2, 1, 3, 4)], [(2, 1, 0, 3)]),
    ("replication_pad", [(1, 2, 2, 3, 2)], [(1, 1, 2, 0, 1, 2)]),
]


def _ids(case):
    return f"{case[0]}-{'x'.join(map(str, case[1][0]))}"


def _make(case, dtype, seed):
    """Fresh (tensors, other arguments) of a case; the same seed gives the same values."""
    _, shapes, args = case
    g = np.random.default_rng(seed)
    tensors = [None if s is None else
               ember.tensor(g.standard_normal(s), dtype=dtype, requires_grad=True)
               for s in shapes]
    out = []
    for a in args:
        if isinstance(a, tuple) and a and a[0] == "randn":
            a = ember.tensor(g.standard_normal(a[1]), dtype=dtype)
        elif isinstance(a, tuple) and a and a[0] == "rand":
            a = ember.tensor(g.random(a[1]) + 0.5, dtype=dtype)
        elif isinstance(a, tuple) and a and a[0] == "classes":
            a = ember.tensor(g.integers(0, a[1], a[2]), dtype=ember.int64)
        out.append(a)
    return tensors, out


def test_thnn_is_the_cpu_provider():
    _kernels.reset()
    assert "cpu" in _kernels.providers()
    for name in ("conv2d", "max_pool2d", "avg_pool2d", "relu", "layer_norm", "group_norm",
                 "batch_norm",
                 "cross_entropy", "conv3d", "conv_transpose2d", "max_pool3d", "avg_pool3d",
                 "adaptive_max_pool2d", "upsample_nearest2d", "upsample_bilinear2d",
                 "reflection_pad", "replication_pad", "embedding_bag"):
        assert _kernels.kernel(name) is not _kernels.COMPOSED[name]


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_kernel_matches_composed(case, dtype):
    name = case[0]
    fast, composed = _kernels.kernel(name), _kernels.COMPOSED[name]
    seed = np.random.SeedSequence().entropy
    xs, xargs = _make(case, dtype, seed)
    ys, yargs = _make(case, dtype, seed)
    a, b = fast(*xs, *xargs), composed(*ys, *yargs)
    if isinstance(a, tuple):
        assert (a[1] == b[1]).all()  # indices
        a, b = a[0], b[0]
    assert a.grad_fn is not None and type(a.grad_fn) is not type(b.grad_fn)  # the kernel ran
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is ember.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    for u, v in zip(xargs, yargs):  # running statistics updated alike
        if isinstance(u, ember.Tensor):
            np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)
    g = ember.randn(a.shape, dtype=dtype)
    a.backward(g)
    b.backward(g)
    for x, y in zip(xs, ys):
        if x is not None:
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), **tol)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_gradcheck_and_gradgradcheck(case):
    fast = _kernels.kernel(case[0])
    xs, args = _make(case, ember.float64, None)
    present = [t for t in xs if t is not None]

    def f(*ts):
        it = iter(ts)
        out = fast(*[None if x is None else next(it) for x in xs], *args)
        return out[0] if isinstance(out, tuple) else out
    assert gradcheck(f, present)
    assert gradgradcheck(f, present)


def test_double_backward_leaves_running_statistics_alone():
    x = ember.randn(4, 3, 5, dtype=ember.float64, requires_grad=True)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    y = _kernels.kernel("batch_norm")(x, None, None, rm, rv, True, 0.1, 1e-5)
    before = rm.clone(), rv.clone()
    (gx,) = ember.autograd.grad((y * y.detach()).sum(), x, create_graph=True)
    gx.sum().backward()
    assert (rm == before[0]).all() and (rv == before[1]).all()


def test_other_dtypes_fall_back_to_composed():
    x = ember.randn(1, 1, 4, 4).to(ember.float16)
    y = _kernels.kernel("avg_pool2d")(x, (2, 2), (2, 2), (0, 0), False, True, None)
    assert y.dtype is ember.float16 and y.shape == (1, 1, 2, 2)
    x = ember.randn(1, 1, 4, 4, requires_grad=True)
    y = _kernels.kernel("avg_pool2d")(x, (2, 2), (2, 2), (0, 0), False, True, 3)
    assert y.grad_fn.name() != "AvgPool2DBackward0"
    np.testing.assert_allclose(y.detach().numpy()[0, 0, 0, 0],
                               x.detach().numpy()[0, 0, :2, :2].sum() / 3, rtol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_kernel(mode):
    """Differentiable arguments by position: weight (0) and per_sample_weights (4)."""
    g = np.random.default_rng()
    w = g.standard_normal((7, 4))
    idx = ember.tensor(g.integers(0, 7, 9), dtype=ember.int64)
    offsets = ember.tensor([0, 3, 3, 7, 9], dtype=ember.int64)  # an empty bag too
    psw = g.standard_normal(9) if mode == "sum" else None
    fast, composed = _kernels.kernel("embedding_bag"), _kernels.COMPOSED["embedding_bag"]

    def args():
        wt = ember.tensor(w, requires_grad=True)
        pt = None if psw is None else ember.tensor(psw, requires_grad=True)
        return wt, pt
    (wa, pa), (wb, pb) = args(), args()
    a = fast(wa, idx, offsets, mode, pa, 2)
    b = composed(wb, idx, offsets, mode, pb, 2)
    assert type(a.grad_fn) is not type(b.grad_fn)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    gout = ember.randn(a.shape, dtype=ember.float64)
    a.backward(gout)
    b.backward(gout)
    np.testing.assert_allclose(wa.grad.numpy(), wb.grad.numpy(), rtol=1e-12, atol=1e-12)
    if psw is not None:
        np.testing.assert_allclose(pa.grad.numpy(), pb.grad.numpy(), rtol=1e-12, atol=1e-12)
    wt, pt = args()
    inputs = (wt,) if pt is None else (wt, pt)

    def f(*ts):
        return fast(ts[0], idx, offsets, mode, ts[1] if len(ts) > 1 else None, 2)
    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)
