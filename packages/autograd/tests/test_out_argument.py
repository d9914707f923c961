"""``out=`` on the ember.<op> functions (ember/_ops/out.py): every op of the
table with a function writes the same values into ``out`` as it returns
without it, and PyTorch's rules hold: resizing (with its warning), dtype
casts and refusals, tuples for several results, aliasing an input, no
autograd, a refused call leaving ``out`` untouched."""
import warnings

import numpy as np
import pytest

import ember
from ember._ops import NAMESPACE, OPS

from conftest import make_sample


def _function_cases():
    cases = []
    for info in OPS.values():
        fn = NAMESPACE.get(info.name)
        if fn is None or not info.samples or not getattr(fn, "takes_out", False):
            continue
        cases.append(pytest.param(info.name, info.samples[0], id=info.name))
    return cases


def _empty_like_result(r):
    if isinstance(r, tuple):
        return tuple(ember.empty(0, dtype=x.dtype) for x in r)
    return ember.empty(0, dtype=r.dtype)


def _same(a, b):
    a, b = a.detach().numpy(), b.detach().numpy()  # resolve_conj(x) is x
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("name,sample", _function_cases())
def test_every_op_function_writes_its_result_into_out(name, sample):
    fn = NAMESPACE[name]
    args, kwargs = make_sample(sample, seed=5)
    with ember.no_grad():
        if name in ("dropout", "rrelu", "alpha_dropout", "feature_alpha_dropout",
                    "bernoulli", "multinomial", "normal", "poisson"):
            pytest.skip("random: the two calls draw different values")
        want = fn(*args, **kwargs)
        if not isinstance(want, (ember.Tensor, tuple)) or (
                isinstance(want, tuple) and not all(isinstance(x, ember.Tensor) for x in want)):
            pytest.skip(f"{name} returns {type(want).__name__}")
        out = _empty_like_result(want)
        got = fn(*args, out=out, **kwargs)
    if isinstance(want, tuple):
        assert all(g is o for g, o in zip(got, out))
        assert all(_same(w, o) for w, o in zip(want, out))
    else:
        assert got is out
        assert _same(want, out)


def test_takes_out_covers_the_common_functions():
    for name in ("add", "sub", "mul", "div", "pow", "exp", "log", "sigmoid", "tanh", "clamp",
                 "where", "sum", "mean", "max", "min", "sort", "topk", "cumsum", "argmax",
                 "cat", "stack", "mm", "bmm", "matmul", "addmm", "index_select", "gather"):
        assert getattr(getattr(ember, name), "takes_out", False), name


def test_out_of_another_shape_is_resized_with_pytorchs_warning():
    a = ember.randn(2, 3)
    out = ember.zeros(5)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized "
                                         r"since it had shape \[5\], which does not match the "
                                         r"required output shape \[2, 3\]"):
        ember.exp(a, out=out)
    assert out.shape == (2, 3) and _same(out, ember.exp(a))
    empty = ember.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        ember.exp(a, out=empty)
    assert _same(empty, ember.exp(a))


def test_same_shape_out_keeps_its_storage_and_views():
    out = ember.zeros(4)
    view = out.view(2, 2)
    ember.add(ember.ones(4), 2, out=out)
    assert _same(view.reshape(-1), ember.full((4,), 3.0))


def test_out_may_alias_an_input():
    x = ember.randn(3, 4)
    x_np = x.numpy().copy()
    ember.mul(x, x, out=x)
    np.testing.assert_array_equal(x.numpy(), x_np * x_np)
    m = ember.randn(4, 4)
    m_np = m.numpy().astype(np.float64)
    ember.mm(m, m, out=m)
    np.testing.assert_allclose(m.numpy(), m_np @ m_np, rtol=1e-5, atol=1e-5)


def test_result_casts_to_a_wider_out_dtype():
    out = ember.empty(3, dtype=ember.float64)
    ember.add(ember.tensor([1, 2, 3]), 1, out=out)
    assert out.dtype == ember.float64 and out.tolist() == [2.0, 3.0, 4.0]


def test_float_result_into_integer_out_is_refused_and_out_is_untouched():
    out = ember.tensor([7, 7, 7])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        ember.add(ember.randn(3), 1.0, out=out)
    assert out.tolist() == [7, 7, 7]
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired "
                                           "output type Bool"):
        ember.add(ember.tensor([1, 2]), 1, out=ember.empty(2, dtype=ember.bool))


def test_out_refuses_autograd():
    a = ember.randn(3, requires_grad=True)
    out = ember.full((3,), 5.0)
    with pytest.raises(RuntimeError, match=r"exp\(\): functions with out=\.\.\. arguments "
                                           "don't support automatic differentiation, but one "
                                           "of the arguments requires grad"):
        ember.exp(a, out=out)
    assert out.tolist() == [5.0, 5.0, 5.0]
    with ember.no_grad():  # outside grad mode it is allowed, as in PyTorch
        ember.exp(a, out=out)
    np.testing.assert_allclose(out.numpy(), np.exp(a.detach().numpy()), rtol=1e-6)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.exp(ember.randn(3), out=ember.zeros(3, requires_grad=True))


def test_several_results_take_a_tuple():
    x = ember.randn(4, 5)
    values, indices = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.sort(x, 1, out=(values, indices))
    want = ember.sort(x, 1)
    assert r.values is values and r.indices is indices
    assert _same(values, want.values) and _same(indices, want.indices)
    mv, mi = ember.empty(0), ember.empty(0, dtype=ember.int64)
    ember.max(x, 0, out=(mv, mi))
    assert _same(mv, x.max(0).values) and _same(mi, x.max(0).indices)
    with pytest.raises(TypeError, match=r"sort\(\): argument 'out' must be a tuple of 2 Tensors"):
        ember.sort(x, out=ember.empty(0))


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError, match=r"add\(\): argument 'out' must be Tensor, not list"):
        ember.add(ember.ones(2), 1, out=[0, 0])


def test_sparse_products_write_into_out():
    s = ember.sparse_coo_tensor(ember.tensor([[0, 1], [1, 0]]), ember.tensor([1.0, 2.0]), (2, 2))
    d = ember.randn(2, 3)
    out = ember.empty(0)
    assert ember.mm(s, d, out=out) is out
    np.testing.assert_allclose(out.numpy(), s.to_dense().numpy() @ d.numpy(), rtol=1e-6)


def test_resize_():
    t = ember.arange(6.0)
    v = t.view(2, 3)
    assert t.resize_(3, 2) is t and t.shape == (3, 2)
    t[0, 0] = 9.0  # same count, contiguous: the storage is kept
    assert v[0, 0].item() == 9.0
    t.resize_(8)
    assert t.shape == (8,) and t[:6].tolist() == [9.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    t.resize_(0)
    assert t.numel() == 0
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ember.zeros(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        ember.zeros(2).resize_(-1)


def test_factories_fill_out_with_its_dtype():
    t = ember.empty(0, dtype=ember.int64)
    assert ember.arange(5, out=t) is t
    assert t.dtype == ember.int64 and t.tolist() == [0, 1, 2, 3, 4]
    f = ember.empty(0, dtype=ember.float64)
    ember.linspace(0, 1, 5, out=f)
    np.testing.assert_allclose(f.numpy(), np.linspace(0, 1, 5))
    z = ember.full((2, 2), 9.0)
    view = z.view(4)
    ember.zeros(2, 2, out=z)  # same shape: the storage (and its views) kept
    assert view.tolist() == [0.0] * 4
    e = ember.empty(0)
    ember.eye(3, out=e)
    np.testing.assert_array_equal(e.numpy(), np.eye(3))
    ember.full((3,), 2.5, out=e.resize_(0))  # reused as PyTorch's warning advises
    assert e.tolist() == [2.5] * 3


def test_random_factories_draw_the_same_values_into_out():
    ember.manual_seed(3)
    want = ember.randn(4, 5)
    ember.manual_seed(3)
    out = ember.empty(0)
    ember.randn(4, 5, out=out)
    assert _same(out, want)
    ints = ember.empty(0, dtype=ember.int64)
    ember.randint(0, 10, (6,), out=ints)
    assert ints.dtype == ember.int64 and ints.shape == (6,)
    assert all(0 <= v < 10 for v in ints.tolist())


def test_factory_out_must_be_a_tensor():
    with pytest.raises(TypeError, match=r"zeros\(\): argument 'out' must be Tensor, not int"):
        ember.zeros(3, out=3)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.zeros(3, out=ember.empty(3), requires_grad=True)
