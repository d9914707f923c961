"""ember.Tensor outside the graph: creation, dtypes and devices, NumPy
exchange, printing, Python conversions, pickling, seeds and threads."""
import copy
import pickle

import numpy as np
import pytest

import ember


# ---- creation ------------------------------------------------------------------
@pytest.mark.parametrize("make,shape", [
    (lambda **kw: ember.zeros(2, 3, **kw), (2, 3)),
    (lambda **kw: ember.ones((2, 3), **kw), (2, 3)),
    (lambda **kw: ember.empty([4], **kw), (4,)),
    (lambda **kw: ember.full((2,), 1.5, **kw), (2,)),
    (lambda **kw: ember.rand(3, **kw), (3,)),
    (lambda **kw: ember.randn(2, 2, **kw), (2, 2)),
    (lambda **kw: ember.eye(3, **kw), (3, 3)),
    (lambda **kw: ember.linspace(0, 1, 5, **kw), (5,)),
    (lambda **kw: ember.arange(0.0, 2.0, 0.5, **kw), (4,)),
    (lambda **kw: ember.tensor([[1.0, 2.0]], **kw), (1, 2)),
    (lambda **kw: ember.zeros_like(ember.ones(3, 1), **kw), (3, 1)),
    (lambda **kw: ember.ones_like(ember.ones(3), **kw), (3,)),
    (lambda **kw: ember.randn_like(ember.ones(2), **kw), (2,)),
    (lambda **kw: ember.full_like(ember.ones(2), 4.0, **kw), (2,)),
])
def test_creation_functions(make, shape):
    t = make()
    assert t.shape == shape and t.dtype is ember.float32 and t.device == ember.device("cpu")
    assert t.is_leaf and not t.requires_grad
    g = make(dtype=ember.float64, requires_grad=True)
    assert g.dtype is ember.float64 and g.requires_grad and g.is_leaf


def test_integer_creation_and_inference():
    assert ember.arange(5).tolist() == [0, 1, 2, 3, 4] and ember.arange(5).dtype is ember.int64
    assert ember.tensor([1, 2]).dtype is ember.int64 and ember.tensor([True]).dtype is ember.bool
    r = ember.randint(0, 10, (100,))
    assert r.dtype is ember.int64 and 0 <= r.min().item() and r.max().item() < 10
    assert sorted(ember.randperm(6).tolist()) == list(range(6))
    assert ember.randint(5, (2, 2)).shape == (2, 2)


def test_tensor_from_tensors_and_legacy_constructor():
    assert ember.tensor([ember.tensor(1.0), ember.tensor(2.0)]).tolist() == [1.0, 2.0]
    assert ember.Tensor(2, 3).shape == (2, 3) and ember.Tensor([1, 2]).dtype is ember.float32
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        ember.tensor(ember.ones(2))


def test_new_methods_follow_the_tensor():
    a = ember.ones(2, dtype=ember.float64)
    assert a.new_zeros(3).dtype is ember.float64 and a.new_ones(2, 2).shape == (2, 2)
    assert a.new_full((2,), 5).tolist() == [5.0, 5.0] and a.new_tensor([1, 2]).dtype is \
        ember.float64 and a.new_empty(1).shape == (1,)


def test_dtypes_are_shared_with_the_backend():
    assert ember.float32 is ember.th.float32 and ember.long is ember.int64
    assert repr(ember.float64) == "ember.float64" and ember.float is ember.float32
    assert ember.promote_types(ember.int32, ember.float32) is ember.float32
    assert ember.result_type(ember.ones(1, dtype=ember.int32), 2.5) is ember.float32


def test_default_dtype():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.zeros(1).dtype is ember.float64 and ember.tensor([1.0]).dtype is \
            ember.float64 and ember.get_default_dtype() is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(TypeError):
        ember.set_default_dtype(ember.int64)


def test_manual_seed_reproduces():
    ember.manual_seed(123)
    a = ember.randn(5)
    ember.manual_seed(123)
    assert ember.equal(a, ember.randn(5))


def test_num_threads():
    n = ember.get_num_threads()
    ember.set_num_threads(1)
    assert ember.get_num_threads() == 1
    ember.set_num_threads(n)


def test_conversions():
    x = ember.tensor([1.5, 2.5], requires_grad=True)
    assert x.double().dtype is ember.float64 and x.double().requires_grad
    assert x.long().tolist() == [1, 2] and not x.long().requires_grad
    assert x.to(ember.float32) is x and x.to("cpu") is x
    assert x.to(ember.float64, copy=True).grad_fn is not None
    assert x.type() == "ember.FloatTensor" and x.type_as(ember.ones(1, dtype=ember.int32)) \
        .dtype is ember.int32


# ---- devices ----------------------------------------------------------------------
def test_devices():
    assert ember.device("cpu") == ember.device("cpu") and str(ember.device("cuda:1")) == "cuda:1"
    assert repr(ember.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert ember.ones(1).device.type == "cpu" and not ember.ones(1).is_cuda
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type at start of "
                       "device string: tpu"):
        ember.device("tpu")


def test_cuda_without_backend_names_the_package():
    import importlib.util
    if importlib.util.find_spec("ember.thc") is not None:
        pytest.skip("ember-thc is installed")
    from ember.backends import BackendError
    with pytest.raises(BackendError, match=r"install ember-thc \(pip install ember-thc\)"):
        ember.zeros(2, device="cuda")
    with pytest.raises(BackendError, match="ember-thc"):
        ember.ones(2).cuda()
    with pytest.raises(BackendError, match="ember-thc"):
        ember.ones(2).to("cuda:0")
    assert ember.cuda.device_count() == 0
    # seeding is a no-op without a GPU; what needs one says what is missing
    ember.cuda.seed()
    ember.cuda.manual_seed_all(3)
    assert not ember.cuda.is_bf16_supported() and not ember.cuda.is_initialized()
    assert ember.cuda.get_arch_list() == []
    for call in (ember.cuda.get_rng_state, ember.cuda.init, ember.cuda.memory_summary):
        with pytest.raises(RuntimeError, match="ember-thc is not installed"):
            call()


# ---- NumPy ------------------------------------------------------------------------------
def test_numpy_is_zero_copy_both_ways():
    arr = np.arange(6.0).reshape(2, 3)
    t = ember.from_numpy(arr)
    arr[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    t.numpy()[1, 2] = -1.0
    assert arr[1, 2] == -1.0 and ember.as_tensor(arr).data_ptr() == t.data_ptr()


def test_numpy_refuses_tensors_that_require_grad():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires "
                       r"grad. Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        np.asarray(x)
    assert x.detach().numpy().tolist() == [1.0, 1.0]
    assert x.numpy(force=True).tolist() == [1.0, 1.0]


# ---- printing ---------------------------------------------------------------------------
def test_printing_shows_autograd_state():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((x + 1).sum()) == "tensor(5., grad_fn=<SumBackward0>)"
    assert repr(x.detach()) == "tensor([1., 2.])"
    assert str(ember.ones(1, dtype=ember.float64) * x) == \
        "tensor([1., 2.], dtype=ember.float64, grad_fn=<MulBackward0>)"
    assert f"{ember.tensor(1.5):.2f}" == "1.50"


# ---- Python protocol ---------------------------------------------------------------------
def test_python_conversions():
    x = ember.tensor([3.0, 4.0])
    assert len(x) == 2 and [t.item() for t in x] == [3.0, 4.0] and 4.0 in x
    assert float(x[0]) == 3.0 and int(x[1]) == 4 and x.tolist() == [3.0, 4.0]
    assert [0, 1, 2][ember.tensor(1)] == 1 and bool(ember.tensor(True))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value "
                       "is ambiguous"):
        bool(x)
    assert hash(x) != hash(ember.tensor([3.0, 4.0]))  # by identity, usable in sets


def test_pickle_and_deepcopy_keep_leaf_state():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == [1.0, 2.0] and y.requires_grad and y.is_leaf
    z = copy.deepcopy(x)
    assert z.requires_grad and z.grad.tolist() == [3.0, 3.0] and z.data_ptr() != x.data_ptr()
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(x * 2)


def test_subclass_through_make_subclass():
    class Parameter(ember.Tensor):
        def __new__(cls, data, requires_grad=True):
            return ember.Tensor._make_subclass(cls, data, requires_grad)

    p = Parameter(ember.ones(2))
    assert isinstance(p, Parameter) and p.requires_grad and p.is_leaf
    y = p * 2 + p
    assert type(y) is ember.Tensor
    y.sum().backward()
    assert p.grad.tolist() == [3.0, 3.0]
    p.tag = "weight"  # subclasses may carry attributes
    assert copy.deepcopy(p).tag == "weight"


def test_data_property():
    x = ember.ones(2, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    x.data = ember.zeros(3)
    assert x.shape == (3,) and x.requires_grad


def test_grad_setter_checks():
    x = ember.ones(2, requires_grad=True)
    x.grad = ember.zeros(2)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = ember.zeros(3)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype"):
        x.grad = ember.zeros(2, dtype=ember.float64)
    x.grad = None
    assert x.grad is None


def test_wrong_argument_types():
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' \(position 1\) must be "
                       r"Tensor, not int"):
        ember.exp(3)
    with pytest.raises(TypeError, match="unsupported operand"):
        ember.ones(2) + "a"
    with pytest.raises(TypeError, match=r"sum\(\): argument 'input' \(position 1\) must be "
                       r"Tensor, not list"):
        ember.sum([1, 2])
    with pytest.raises(TypeError, match=r"atan2\(\): argument 'input' \(position 1\) must be "
                       r"Tensor, not float"):
        ember.atan2(1.0, ember.ones(2))
    assert ember.add(2, ember.ones(2)).tolist() == [3.0, 3.0]


def test_dlpack_on_the_cpu_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = ember.from_dlpack(a)
    assert t.device.type == "cpu" and np.shares_memory(t.numpy(), a)
    t[0, 0] = 7.0
    assert a[0, 0] == 7.0
    assert t.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(t)   # and back to NumPy, still shared
    assert np.shares_memory(b, a)


def test_median_and_nanmedian_with_nan():
    # median propagates NaN (the first one, with its index); nanmedian is the
    # lower median of the other values, NaN only where every value is NaN
    nan = float("nan")
    rows = np.array([[1.0, nan, 2.0, nan, 0.5], [3.0, 1.0, 2.0, 0.0, 4.0],
                     [nan, nan, nan, nan, nan]])
    x = ember.tensor(rows)
    m = x.median(1)
    assert np.isnan(m.values[0].item()) and m.indices[0].item() == 1
    assert m.values[1].item() == 2.0 and m.indices[1].item() == 2
    assert np.isnan(ember.median(x).item())
    n = x.nanmedian(1)
    for r, v, i in zip(rows, n.values.tolist(), n.indices.tolist()):
        kept = np.sort(r[~np.isnan(r)])
        if kept.size:
            assert v == kept[(kept.size - 1) // 2] and r[i] == v
        else:
            assert np.isnan(v)
    assert ember.nanmedian(x).item() == np.sort(rows[~np.isnan(rows)])[(8 - 1) // 2]
    assert ember.tensor([4, 1, 3, 2]).median().item() == 2
