"""PyTorch names that programs use at their top: ember.accelerator,
ember.onnx, ember.distributed (and DistributedSampler's module path),
Tensor.is_<kind>, ember.backends.mps, the legacy typed classes
(ember.FloatTensor, ...) and Tensor.type(name).  PyTorch's answers and
messages are written out; with torch installed they are also compared
live."""
import importlib
import warnings

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:
    torch = None

live = pytest.mark.skipif(torch is None, reason="needs torch")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- compared by type and message
        return type(e), str(e)
    return None


# ---- ember.accelerator -------------------------------------------------------
def test_accelerator_answers_from_the_installed_backends():
    acc = ember.accelerator
    if ember.cuda.is_available():
        assert acc.is_available() and acc.current_accelerator() == ember.device("cuda")
        assert acc.current_accelerator(check_available=True) == ember.device("cuda")
        assert acc.device_count() == ember.cuda.device_count()
        assert acc.current_device_index() == ember.cuda.current_device()
        acc.synchronize()
        acc.synchronize(0)
        with acc.device_index(acc.device_count() - 1):
            assert acc.current_device_index() == acc.device_count() - 1
        assert acc.current_device_index() == ember.cuda.current_device()
        with pytest.raises(ValueError, match="cpu doesn't match the current accelerator"):
            acc.synchronize("cpu")
        assert isinstance(acc.memory_allocated(), int)
        return
    assert acc.is_available() is False and acc.device_count() == 0
    assert acc.current_accelerator(check_available=True) is None
    msg = "Cannot access accelerator device when none is available."
    for call in (acc.current_device_index, acc.current_device_idx, acc.synchronize,
                 acc.empty_cache, acc.memory_allocated, lambda: acc.set_device_index(0),
                 lambda: acc.device_index(0).__enter__()):
        assert _error(call) == (RuntimeError, msg)
    with acc.device_index(None):   # no switch: no device needed
        pass


def test_accelerator_without_cuda_backend(monkeypatch):
    # a CPU-only install: no accelerator at all, as a CPU-only PyTorch build
    monkeypatch.setattr(ember.accelerator, "_cuda_installed", lambda: False)
    assert ember.accelerator.current_accelerator() is None
    assert ember.accelerator.is_available() is False
    assert ember.accelerator.device_count() == 0


def test_accelerator_cuda_installed_without_device(monkeypatch):
    # the backend is there but no device: the accelerator type is still CUDA
    # (as a CUDA build of PyTorch on a machine without a GPU), not available
    monkeypatch.setattr(ember.accelerator, "_cuda_installed", lambda: True)
    monkeypatch.setattr(ember.cuda, "is_available", lambda: False)
    assert ember.accelerator.current_accelerator() == ember.device("cuda")
    assert ember.accelerator.current_accelerator(check_available=True) is None
    assert ember.accelerator.is_available() is False


@live
def test_accelerator_matches_torch_on_cpu():
    if torch.accelerator.is_available() or ember.accelerator.is_available():
        pytest.skip("compares the no-device answers")
    assert ember.accelerator.device_count() == torch.accelerator.device_count()
    assert _error(ember.accelerator.synchronize) == _error(torch.accelerator.synchronize)
    assert _error(ember.accelerator.current_device_index) == \
        _error(torch.accelerator.current_device_index)


# ---- ember.onnx, ember.distributed --------------------------------------------
def test_onnx_imports_and_names_what_is_missing():
    onnx = importlib.import_module("ember.onnx")
    assert onnx.is_in_onnx_export() is False
    for name in ("dynamo_export", "register_custom_op_symbolic",
                 "unregister_custom_op_symbolic"):
        with pytest.raises(NotImplementedError, match=rf"ember\.onnx\.{name}: not available"):
            getattr(onnx, name)(lambda x: x * 2, (ember.ones(1, 2),), "model.onnx")
    assert issubclass(onnx.OnnxExporterError, RuntimeError)
    assert onnx.TrainingMode.EVAL == 0


def test_onnx_without_the_package_names_the_extra(monkeypatch):
    import sys
    onnx = importlib.import_module("ember.onnx")
    monkeypatch.setitem(sys.modules, "onnx", None)   # as if not installed
    with pytest.raises(ImportError, match=r"pip install ember\[onnx\]"):
        onnx.export(lambda x: x * 2, (ember.ones(1, 2),), "model.onnx")


def test_distributed_imports_and_is_unavailable():
    import ember.distributed as dist
    if dist.is_available():
        pytest.skip("ember-distributed is installed (its own tests cover ember.distributed)")
    from ember.utils.data.distributed import DistributedSampler
    assert dist.is_available() is False and dist.is_initialized() is False
    assert DistributedSampler is ember.utils.data.DistributedSampler
    for name in ("init_process_group", "get_rank", "get_world_size", "all_reduce", "barrier",
                 "broadcast", "destroy_process_group"):
        with pytest.raises(RuntimeError, match=rf"ember\.distributed\.{name}: "
                                               r"ember-distributed is not installed"):
            getattr(dist, name)()


def _sampler_cases():
    for n in (0, 1, 7, 10, 11):
        for replicas in (1, 3, 4):
            for drop_last in (False, True):
                for shuffle in (False, True):
                    yield n, replicas, drop_last, shuffle


@pytest.mark.parametrize("n,replicas,drop_last,shuffle", list(_sampler_cases()))
def test_distributed_sampler_partitions(n, replicas, drop_last, shuffle):
    from ember.utils.data.distributed import DistributedSampler
    for epoch in (0, 1):
        shares = []
        for rank in range(replicas):
            s = DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                   shuffle=shuffle, seed=5, drop_last=drop_last)
            s.set_epoch(epoch)
            shares.append(list(s))
            assert len(shares[-1]) == len(s)
        sizes = {len(sh) for sh in shares}
        assert len(sizes) == 1    # every rank gets as many samples
        per = sizes.pop()
        want = n // replicas if drop_last else -(-n // replicas)
        assert per == want
        flat = [i for sh in shares for i in sh]
        if drop_last:             # disjoint, within range
            assert len(set(flat)) == len(flat) and set(flat) <= set(range(n))
        else:                     # covers the data; the padding repeats from the start
            assert set(flat) == set(range(n))
        if not shuffle:           # rank r takes r, r + R, ...
            order = list(range(n)) + list(range(n)) * replicas
            for rank, sh in enumerate(shares):
                assert sh == order[rank:per * replicas:replicas]


def test_distributed_sampler_shuffle_follows_seed_and_epoch():
    from ember.utils.data.distributed import DistributedSampler

    def order(seed, epoch):
        s = DistributedSampler(range(50), num_replicas=2, rank=0, seed=seed)
        s.set_epoch(epoch)
        return list(s)
    assert order(3, 1) == order(3, 1)
    assert order(3, 1) != order(3, 2) and order(3, 1) != order(4, 1)


@pytest.mark.parametrize("kwargs,expected", [
    ({}, (RuntimeError, "Requires distributed package to be available")),
    ({"num_replicas": 2}, (RuntimeError, "Requires distributed package to be available")),
    ({"num_replicas": 2, "rank": 2},
     (ValueError, "Invalid rank 2, rank should be in the interval [0, 1]")),
    ({"num_replicas": 2, "rank": -1},
     (ValueError, "Invalid rank -1, rank should be in the interval [0, 1]")),
])
def test_distributed_sampler_errors(kwargs, expected):
    import ember.distributed as dist
    from ember.utils.data.distributed import DistributedSampler
    if "rank" not in kwargs and dist.is_available():
        # with ember-distributed installed, as PyTorch with its distributed package
        expected = (ValueError, "Default process group has not been initialized, please make "
                                "sure to call init_process_group.")
    assert _error(lambda: DistributedSampler(range(3), **kwargs)) == expected


@live
def test_distributed_sampler_unshuffled_matches_torch():
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from ember.utils.data.distributed import DistributedSampler
    for n, replicas, drop_last in ((10, 3, False), (10, 3, True), (2, 5, False), (7, 4, False)):
        for rank in range(replicas):
            a = TorchSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                             drop_last=drop_last)
            b = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                                   drop_last=drop_last)
            assert list(a) == list(b) and len(a) == len(b)


# ---- Tensor.is_<kind>, ember.backends.mps -------------------------------------
FALSE_FLAGS = ("is_xpu", "is_mps", "is_meta", "is_ipu", "is_maia", "is_mtia", "is_xla",
               "is_vulkan", "is_mkldnn", "is_quantized", "is_sparse", "is_sparse_csr",
               "is_nested")


def test_tensor_kind_flags():
    x = ember.ones(2, 3)
    for name in FALSE_FLAGS:
        assert getattr(x, name) is False, name
    assert x.is_cpu and not x.is_cuda
    assert not x.is_neg() and not x.is_conj() and not x.is_distributed()
    assert x.is_nonzero() if x.numel() == 1 else True
    assert ember.tensor([2.0]).is_nonzero() and not ember.tensor([0.0]).is_nonzero()
    assert x.is_set_to(x) and not x.is_set_to(x.clone()) and not x.is_set_to(x.t())
    assert _error(x.is_coalesced) == (
        RuntimeError, "is_coalesced expected sparse coordinate tensor layout but got Strided")
    assert ember.backends.mps.is_available() is False and ember.backends.mps.is_built() is False


@live
def test_tensor_kind_flags_cover_torch():
    names = [n for n in dir(torch.Tensor) if n.startswith("is_")]
    missing = [n for n in names if not hasattr(ember.Tensor, n)]
    assert missing == []
    t, e = torch.ones(2), ember.ones(2)
    for name in FALSE_FLAGS:
        assert getattr(t, name) == getattr(e, name), name
    assert _error(t.is_coalesced) == _error(e.is_coalesced)


# ---- legacy typed classes and Tensor.type ---------------------------------------
TYPES = [("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
         ("BFloat16Tensor", "bfloat16"), ("LongTensor", "int64"), ("IntTensor", "int32"),
         ("ShortTensor", "int16"), ("CharTensor", "int8"), ("ByteTensor", "uint8"),
         ("BoolTensor", "bool")]


@pytest.mark.parametrize("name,dtype", TYPES)
def test_legacy_constructor_forms(name, dtype):
    cls = getattr(ember, name)
    dt = getattr(ember, dtype)
    assert repr(cls) == f"<class 'ember.{name}'>" and cls.dtype is dt and not cls.is_cuda
    assert cls(2, 3).shape == (2, 3) and cls(2, 3).dtype is dt
    assert cls().shape == (0,) and cls(ember.Size([4, 1])).shape == (4, 1)
    data = cls([[1, 0], [3, 4]])
    assert data.dtype is dt and data.tolist() == ember.tensor([[1, 0], [3, 4]]).to(dt).tolist()
    assert cls((1, 2)).shape == (2,) and cls(np.array([1, 0])).dtype is dt
    alias = cls(data)
    assert alias.data_ptr() == data.data_ptr() and not alias.requires_grad
    assert type(data) is ember.Tensor and isinstance(data, ember.Tensor)
    other = ember.float32 if dt is ember.float64 else ember.float64
    assert isinstance(data, cls) and not isinstance(ember.ones(1, dtype=other), cls)
    assert not isinstance(np.ones(2), cls) and not issubclass(ember.Tensor, cls)
    assert data.type() == f"ember.{name}"
    assert not isinstance(data, getattr(ember.cuda, name))


def test_legacy_constructor_errors():
    F = ember.FloatTensor
    assert _error(lambda: F(ember.ones(2, dtype=ember.float64))) == (
        TypeError, "expected ember.FloatTensor (got ember.DoubleTensor)")
    assert _error(lambda: F(2.5)) == (TypeError, "new(): data must be a sequence (got float)")
    assert _error(lambda: F("a")) == (TypeError, "new(): invalid data type 'str'")
    assert _error(lambda: ember.LongTensor(-1)) == (
        RuntimeError, "Trying to create tensor with negative dimension -1: [-1]")
    assert _error(lambda: F([1, 2], [3]))[0] is TypeError
    assert _error(lambda: F(2, dtype=ember.float64))[0] is TypeError
    assert _error(lambda: F(2, device="cuda")) == (
        RuntimeError, "legacy constructor expects device type: cpu but device type: cuda "
                      "was passed")
    if not ember.cuda.is_available():
        err = _error(lambda: ember.cuda.FloatTensor(2))
        assert err[0] is TypeError and "type ember.cuda.FloatTensor not available" in err[1]
    else:
        t = ember.cuda.FloatTensor([1, 2])
        assert t.is_cuda and isinstance(t, ember.cuda.FloatTensor) and \
            not isinstance(t, ember.FloatTensor) and t.type() == "ember.cuda.FloatTensor"


def test_type_conversions():
    x = ember.tensor([1.5, 2.5], requires_grad=True)
    assert x.type() == "ember.FloatTensor"
    for spelling in ("torch.DoubleTensor", "ember.DoubleTensor", ember.DoubleTensor,
                     ember.float64):
        y = x.type(spelling)
        assert y.dtype is ember.float64 and y.tolist() == [1.5, 2.5]
    y = x.type("torch.DoubleTensor")
    y.sum().backward()   # float -> float stays differentiable, as to()
    assert x.grad.tolist() == [1.0, 1.0]
    assert x.type("torch.LongTensor").tolist() == [1, 2]
    assert x.type(ember.FloatTensor) is x
    assert _error(lambda: x.type("torch.Foo")) == (ValueError, "invalid type: 'torch.Foo'")
    assert _error(lambda: x.type("FloatTensor")) == (ValueError, "invalid type: 'FloatTensor'")
    assert _error(lambda: x.type(5)) == (TypeError, "dtype must be a type, str, or dtype object")


@live
def test_legacy_types_match_torch():
    for name, _ in TYPES:
        t, e = getattr(torch, name), getattr(ember, name)
        assert str(t.dtype).split(".")[1] == str(e.dtype).split(".")[1]
        assert torch.ones(2).to(t.dtype).type() == "torch." + name
        assert e([1, 0, 2]).tolist() == t([1, 0, 2]).tolist()
        assert isinstance(torch.ones(1, dtype=t.dtype), t) and \
            isinstance(ember.ones(1, dtype=e.dtype), e)
    for call in ("F(2.5)", "F('a')", "ember_or_torch.ones(2).type('torch.Foo')",
                 "ember_or_torch.ones(2).type(5)",
                 "F(2, device='cuda') if not cuda_ok else None"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = [_error(lambda: eval(call, {"F": lib.FloatTensor, "ember_or_torch": lib,
                                              "cuda_ok": ember.cuda.is_available()}))
                   for lib in (torch, ember)]
        assert got[0] == got[1], call


@live
def test_distributed_sampler_shuffled_partition_matches_torch(monkeypatch):
    # ember.randperm and torch.randperm draw different permutations from the
    # same seed (different generators): PyTorch's sampler is given Ember's
    # permutation, and the partitions (padding, drop_last, strides) must agree
    import torch
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from ember.utils.data.distributed import DistributedSampler

    def ember_perm(n, generator=None):
        g = ember.Generator()
        g.manual_seed(generator.initial_seed())
        return torch.tensor(ember.randperm(n, generator=g).tolist())
    monkeypatch.setattr(torch, "randperm", ember_perm)
    for n, replicas, drop_last in ((10, 3, False), (10, 3, True), (2, 5, False), (7, 4, False),
                                   (33, 4, True), (33, 4, False)):
        for epoch in (0, 3):
            for rank in range(replicas):
                a = TorchSampler(range(n), num_replicas=replicas, rank=rank, shuffle=True,
                                 seed=11, drop_last=drop_last)
                b = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=True,
                                       seed=11, drop_last=drop_last)
                a.set_epoch(epoch)
                b.set_epoch(epoch)
                assert list(a) == list(b) and len(a) == len(b), (n, replicas, epoch, rank)


# ---- ember.finfo, ember.iinfo ------------------------------------------------
def test_finfo_and_iinfo_give_the_dtypes_limits():
    f32 = ember.finfo(ember.float32)
    assert (f32.bits, f32.eps, f32.tiny, f32.resolution, f32.dtype) == \
        (32, 2.0 ** -23, 2.0 ** -126, 1e-06, "float32")
    assert f32.max == float(np.finfo(np.float32).max) and f32.min == -f32.max
    assert f32.smallest_normal == f32.tiny
    assert ember.finfo().dtype == ember.get_default_dtype().name
    bf = ember.finfo(ember.bfloat16)
    assert (bf.bits, bf.eps, bf.tiny) == (16, 2.0 ** -7, 2.0 ** -126)
    assert bf.max == float.fromhex("0x1.fep127")
    i8, u8, i64 = ember.iinfo(ember.int8), ember.iinfo(ember.uint8), ember.iinfo(ember.int64)
    assert (i8.bits, i8.min, i8.max, i8.dtype) == (8, -128, 127, "int8")
    assert (u8.min, u8.max) == (0, 255) and (i64.min, i64.max) == (-2 ** 63, 2 ** 63 - 1)
    with pytest.raises(TypeError, match="requires a floating point input type"):
        ember.finfo(ember.int32)
    with pytest.raises(TypeError, match="requires an integer input type"):
        ember.iinfo(ember.float32)
    with pytest.raises(TypeError, match="requires an integer input type"):
        ember.iinfo(ember.bool)


@live
def test_finfo_and_iinfo_agree_with_torch():
    for name in ("float32", "float64", "float16", "bfloat16"):
        e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                     "dtype"):
            assert getattr(e, attr) == getattr(t, attr), (name, attr)
    for name in ("int8", "uint8", "int16", "int32", "int64"):
        e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
        for attr in ("bits", "max", "min", "dtype"):
            assert getattr(e, attr) == getattr(t, attr), (name, attr)
