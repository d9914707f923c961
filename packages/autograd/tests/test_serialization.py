"""ember.save / ember.load: round trips, sharing, safety, atomicity, corruption,
PyTorch checkpoints."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import ember
from ember.serialization import UnpicklingError


def roundtrip(obj, **kw):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf, **kw)


DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int8, ember.uint8,
          ember.int16, ember.int32, ember.int64, ember.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dtypes_round_trip(dtype):
    t = (ember.arange(12) % 5).reshape(3, 4).to(dtype)
    r = roundtrip(t)
    assert r.dtype is dtype and r.shape == t.shape
    assert ember.equal(r, t)


@pytest.mark.parametrize("make", [
    lambda: ember.tensor(3.5), lambda: ember.zeros(0, 3), lambda: ember.randn(2, 3, 4),
    lambda: ember.randn(4, 5).t(), lambda: ember.randn(6, 6)[1::2, ::3]],
    ids=["0d", "empty", "3d", "transposed", "strided"])
def test_layouts_round_trip(make):
    t = make()
    r = roundtrip(t)
    assert r.shape == t.shape and r.stride() == t.stride()
    assert ember.equal(r, t)


def test_views_share_storage_after_load():
    base = ember.randn(4, 4)
    obj = {"base": base, "row": base[1], "col": base[:, 2], "t": base.t()}
    r = roundtrip(obj)
    r["base"][1, 2] = 42.0
    assert r["row"][2].item() == 42.0 and r["col"][1].item() == 42.0
    assert r["t"][2, 1].item() == 42.0
    # the saved file holds the storage once
    buf = io.BytesIO()
    ember.save(obj, buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert len([n for n in names if "/data/" in n]) == 1


def test_nested_state_dict_and_optimizer_state():
    sd = collections.OrderedDict(weight=ember.randn(3, 2), bias=ember.zeros(3))
    sd._metadata = {"": {"version": 1}}
    opt = {"state": {0: {"step": ember.tensor(3.0), "exp_avg": ember.randn(3, 2)}},
           "param_groups": [{"lr": 0.01, "betas": (0.9, 0.999), "params": [0, 1],
                             "nesterov": False, "name": None}]}
    obj = {"model": sd, "optim": opt, "epoch": 7, "tags": {"a", "b"}, "blob": b"\x00\x01",
           "dtype": ember.float64, "device": ember.device("cpu"), "size": ember.Size([2, 3]),
           "ratio": 0.25, "big": 2 ** 70}
    r = roundtrip(obj)
    assert isinstance(r["model"], collections.OrderedDict)
    assert list(r["model"]) == ["weight", "bias"]
    assert r["model"]._metadata == {"": {"version": 1}}
    assert ember.equal(r["model"]["weight"], sd["weight"])
    assert ember.equal(r["optim"]["state"][0]["exp_avg"], opt["state"][0]["exp_avg"])
    assert r["optim"]["param_groups"] == opt["param_groups"]
    for k in ("epoch", "tags", "blob", "dtype", "ratio", "big", "size"):
        assert r[k] == obj[k]
    assert r["dtype"] is ember.float64 and r["device"] == ember.device("cpu")


def test_requires_grad_kept_graph_dropped():
    w = ember.randn(3, requires_grad=True)
    y = w * 2
    r = roundtrip({"w": w, "y": y})
    assert r["w"].requires_grad and r["w"].is_leaf
    assert r["y"].requires_grad and r["y"].grad_fn is None
    r["w"].sum().backward()
    assert r["w"].grad is not None


def test_path_and_pathlike(tmp_path):
    t = ember.randn(5)
    ember.save(t, str(tmp_path / "a.pt"))
    ember.save(t, tmp_path / "b.pt")
    assert ember.equal(ember.load(tmp_path / "a.pt"), t)
    assert ember.equal(ember.load(str(tmp_path / "b.pt")), t)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_map_location_forms():
    t = ember.randn(3)
    for loc in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage,
                lambda storage, loc: "cpu"):
        assert ember.equal(roundtrip(t, map_location=loc), t)
    with pytest.raises(TypeError, match="map_location"):
        roundtrip(t, map_location=3)
    with pytest.raises(NotImplementedError, match="mmap"):
        roundtrip(t, mmap=True)
    if not ember.cuda.is_available():   # without ember-thc, or without a device
        with pytest.raises(RuntimeError, match="ember-thc|no cuda device"):
            roundtrip(t, map_location="cuda")


# ---- safety ------------------------------------------------------------------
class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


class Plain:
    def __init__(self):
        self.x = 1


def test_restricted_loader_refuses_and_names_the_type():
    buf = io.BytesIO()
    ember.save({"x": Evil()}, buf)
    buf.seek(0)
    with pytest.raises(UnpicklingError, match=r"posix\.system|os\.system") as e:
        ember.load(buf)
    assert "weights_only=False" in str(e.value)
    buf = io.BytesIO()
    ember.save([Plain()], buf)
    buf.seek(0)
    with pytest.raises(UnpicklingError, match="test_serialization.Plain"):
        ember.load(buf)
    buf.seek(0)
    assert ember.load(buf, weights_only=False)[0].x == 1
    assert isinstance(UnpicklingError("x"), pickle.UnpicklingError)


def test_malicious_persistent_ids_and_shapes_rejected():
    # a tensor whose view reaches beyond its storage
    buf = io.BytesIO()
    ember.save(ember.zeros(4), buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    recs = {n: z.read(n) for n in z.namelist()}
    pkl = recs["archive/data.pkl"]
    obj_bad = pkl.replace(b"K\x04\x85", b"K\x40\x85", 1)  # size (4,) -> (64,)
    assert obj_bad != pkl
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zw:
        for n, v in recs.items():
            zw.writestr(n, obj_bad if n.endswith("data.pkl") else v)
    out.seek(0)
    with pytest.raises(RuntimeError, match="beyond its storage"):
        ember.load(out)


# ---- corruption and atomicity ------------------------------------------------
def test_truncated_and_corrupt_files(tmp_path):
    path = tmp_path / "m.pt"
    ember.save({"w": ember.randn(100)}, path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 10, 10):
        (tmp_path / "cut.pt").write_bytes(data[:cut])
        with pytest.raises(RuntimeError, match="truncated or corrupt|corrupt|not an ember"):
            ember.load(tmp_path / "cut.pt")
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(RuntimeError, match="empty"):
        ember.load(tmp_path / "empty.pt")
    (tmp_path / "pickle.pt").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(RuntimeError, match="not an ember/PyTorch zip checkpoint"):
        ember.load(tmp_path / "pickle.pt")
    # a flipped byte inside the storage fails its CRC
    i = data.index(b"archive/data/0") + 40
    flipped = bytearray(data)
    flipped[i + 100] ^= 0xFF
    (tmp_path / "flip.pt").write_bytes(bytes(flipped))
    with pytest.raises(RuntimeError, match="corrupt"):
        ember.load(tmp_path / "flip.pt")


def test_missing_storage_record():
    buf = io.BytesIO()
    ember.save(ember.ones(3), buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zw:
        for n in z.namelist():
            if "/data/" not in n:
                zw.writestr(n, z.read(n))
    out.seek(0)
    with pytest.raises(RuntimeError, match="record 'archive/data/0' is missing"):
        ember.load(out)


class Boom:
    def __reduce__(self):
        raise OSError(28, "No space left on device")


def test_failed_save_keeps_previous_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"v": ember.arange(3)}, path)
    before = path.read_bytes()
    with pytest.raises(OSError, match="No space"):
        ember.save({"v": ember.arange(5), "bad": Boom()}, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]
    assert ember.equal(ember.load(path)["v"], ember.arange(3))


def test_failed_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ember.save(ember.arange(3), path)
    import ember.serialization as ser
    real = ser._storage_bytes

    def fail(data):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(ser, "_storage_bytes", fail)
    with pytest.raises(OSError):
        ember.save(ember.arange(9), path)
    monkeypatch.setattr(ser, "_storage_bytes", real)
    assert ember.equal(ember.load(path), ember.arange(3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


# ---- PyTorch checkpoints -----------------------------------------------------
def test_loads_torch_state_dict(tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    sd = lin.state_dict()
    sd["counts"] = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    sd["ints"] = torch.tensor([1, -2], dtype=torch.int32)
    sd["half"] = torch.randn(3, generator=g).half()
    sd["double_view"] = torch.randn(4, 4, dtype=torch.float64, generator=g)[:, 1]
    sd["flag"] = torch.tensor([True, False])
    path = tmp_path / "torch.pt"
    torch.save(sd, path)
    r = ember.load(path)
    assert list(r) == list(sd)
    for k, v in sd.items():
        assert r[k].dtype.name == str(v.dtype).replace("torch.", "")
        assert tuple(r[k].shape) == tuple(v.shape)
        np.testing.assert_array_equal(r[k].float().numpy(), v.float().numpy())
    # a Parameter, a dtype and nesting
    torch.save({"p": torch.nn.Parameter(torch.ones(2)), "dt": torch.float32, "n": [1, "a"]},
               path)
    r = ember.load(path)
    assert r["p"].requires_grad and r["dt"] is ember.float32 and r["n"] == [1, "a"]


def test_refuses_torch_pickled_code(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "evil.pt"
    torch.save({"x": Evil()}, path)
    with pytest.raises(UnpicklingError, match="system"):
        ember.load(path)


class HugeBytearray:
    def __reduce__(self):
        return (bytearray, (10 ** 12,))


def test_bytearray_only_from_bytes():
    assert roundtrip({"b": bytearray(b"xyz")})["b"] == bytearray(b"xyz")
    buf = io.BytesIO()
    ember.save([HugeBytearray()], buf)
    buf.seek(0)
    with pytest.raises(UnpicklingError, match="bytearray"):
        ember.load(buf)


def test_legacy_torch_format_refused(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy PyTorch format"):
        ember.load(path)
