"""ember.nn on libTHNN: with ember-thnn installed, the kernels it provides
run (first-order gradients from its C backward kernels) and agree with the
composed ember-op forms; double backward goes through the composed forms."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _kernels

thnn = pytest.importorskip("ember.thnn", reason="ember-thnn (the C kernels) is not installed")

# (kernel name, tensor-argument shapes (None: no tensor), other arguments)
CASES = [
    ("conv2d", [(2, 3, 7, 6), (4, 3, 3, 2), (4,)], [(1, 1), (1, 1, 0, 0), (1, 1), 1]),
    ("conv2d", [(2, 4, 9, 9), (6, 2, 3, 3), None], [(2, 1), (2, 2, 1, 1), (1, 2), 2]),
    ("max_pool2d", [(2, 3, 7, 8)], [(2, 2), (2, 2), (0, 0), (1, 1), False, False]),
    ("max_pool2d", [(1, 2, 9, 7)], [(3, 2), (2, 1), (1, 1), (1, 2), True, True]),
    ("avg_pool2d", [(2, 3, 7, 8)], [(3, 3), (2, 2), (1, 1), True, False, None]),
    ("avg_pool2d", [(1, 2, 6, 6)], [(2, 2), (2, 2), (0, 0), False, True, None]),
]


def _ids(case):
    return f"{case[0]}-{'x'.join(map(str, case[1][0]))}"


def _inputs(shapes, dtype, requires_grad=True):
    g = np.random.default_rng()
    return [None if s is None else
            ember.tensor(g.standard_normal(s), dtype=dtype, requires_grad=requires_grad)
            for s in shapes]


def test_thnn_is_the_cpu_provider():
    _kernels.reset()
    assert "cpu" in _kernels.providers()
    for name in ("conv2d", "max_pool2d", "avg_pool2d"):
        assert _kernels.kernel(name) is not _kernels.COMPOSED[name]


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_kernel_matches_composed(case, dtype):
    name, shapes, args = case
    fast, composed = _kernels.kernel(name), _kernels.COMPOSED[name]
    xs = _inputs(shapes, dtype)
    ys = [None if t is None else t.detach().clone().requires_grad_() for t in xs]
    a, b = fast(*xs, *args), composed(*ys, *args)
    if isinstance(a, tuple):
        assert (a[1] == b[1]).all()  # indices
        a, b = a[0], b[0]
    assert a.grad_fn is not None and a.grad_fn.name() != b.grad_fn.name()
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is ember.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    g = ember.randn(a.shape, dtype=dtype)
    a.backward(g)
    b.backward(g)
    for x, y in zip(xs, ys):
        if x is not None:
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), **tol)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_gradcheck_and_gradgradcheck(case):
    name, shapes, args = case
    fast = _kernels.kernel(name)
    xs = _inputs(shapes, ember.float64)
    n = len(xs)

    def f(*ts):
        out = fast(*ts, *args)
        return out[0] if isinstance(out, tuple) else out
    present = [t for t in xs if t is not None]

    def g(*ts):
        it = iter(ts)
        return f(*[None if x is None else next(it) for x in xs[:n]])
    assert gradcheck(g, present)
    assert gradgradcheck(g, present)


def test_other_dtypes_fall_back_to_composed():
    x = ember.randn(1, 1, 4, 4).to(ember.float16)
    y = _kernels.kernel("avg_pool2d")(x, (2, 2), (2, 2), (0, 0), False, True, None)
    assert y.dtype is ember.float16 and y.shape == (1, 1, 2, 2)
    x = ember.randn(1, 1, 4, 4, requires_grad=True)
    y = _kernels.kernel("avg_pool2d")(x, (2, 2), (2, 2), (0, 0), False, True, 3)
    assert y.grad_fn.name() != "AvgPool2DBackward0"
    np.testing.assert_allclose(y.detach().numpy()[0, 0, 0, 0],
                               x.detach().numpy()[0, 0, :2, :2].sum() / 3, rtol=1e-6)
