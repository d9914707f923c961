"""The backend interface: discovery, version checks, and the surface the
front relies on."""
import pytest

import ember
from ember import backends


class GoodBackend:
    """A minimal backend of the current interface version."""
    device_type = "fakedev"
    api_version = backends.BACKEND_API_VERSION
    Tensor = object
    namespace = None

    def is_available(self):
        return True

    def device_count(self):
        return 1

    def from_numpy(self, array):
        return array

    def to_numpy(self, tensor):
        return tensor

    def manual_seed(self, seed):
        pass


class OldBackend:
    """A backend of another interface version."""
    device_type = "fakedev"
    api_version = backends.BACKEND_API_VERSION + 1


def test_cpu_backend_implements_the_interface():
    cpu = backends.get_backend("cpu")
    assert isinstance(cpu, backends.TensorBackend) and cpu.device_type == "cpu"
    assert backends.get_backend("cpu") is cpu and cpu.is_available()
    assert backends.missing_features(cpu) == []


def test_incompatible_backend_names_the_package(monkeypatch):
    monkeypatch.setitem(backends.PROVIDERS, "fakedev", ("ember-fake", "test_backend:OldBackend"))
    monkeypatch.setattr(backends, "_entry_point_target", lambda device_type: None)
    with pytest.raises(backends.BackendError, match="implements backend API version 2, but this "
                       "ember needs version 1: upgrade ember-fake and ember together"):
        backends.get_backend("fakedev")


def test_missing_backend_names_the_package(monkeypatch):
    monkeypatch.setitem(backends.PROVIDERS, "fakedev",
                        ("ember-fake", "ember.no_such_backend:Backend"))
    monkeypatch.setattr(backends, "_entry_point_target", lambda device_type: None)
    with pytest.raises(backends.BackendError, match=r"no Ember backend is installed for device "
                       r"type 'fakedev': install ember-fake \(pip install ember-fake\)"):
        backends.get_backend("fakedev")
    assert not backends.is_available("fakedev")


def test_namespace_extension_finds_the_cpu_package():
    import ember.th
    assert ember.th.__name__ == "ember.th" and ember.th.Tensor is \
        backends.get_backend("cpu").Tensor
    assert any(p.endswith("ember") for p in ember.__path__)


def test_backends_are_found_through_entry_points(monkeypatch):
    from importlib import metadata
    fake = metadata.EntryPoint(name="fakedev", value="test_backend:GoodBackend",
                               group="ember.backends")
    real = metadata.entry_points
    monkeypatch.setattr(metadata, "entry_points",
                        lambda **kw: [fake] if kw.get("group") == "ember.backends"
                        else real(**kw))
    monkeypatch.delitem(backends._loaded, "fakedev", raising=False)
    try:
        backend = backends.get_backend("fakedev")
        assert isinstance(backend, GoodBackend) and backends.is_available("fakedev")
    finally:
        backends._loaded.pop("fakedev", None)


def test_pytorch_switch_modules_are_there():
    import importlib
    cudnn = importlib.import_module("ember.backends.cudnn")   # `import ... as cudnn` works
    assert cudnn is ember.backends.cudnn and not cudnn.is_available()
    assert cudnn.version() is None
    cudnn.benchmark = True
    assert ember.backends.cudnn.benchmark
    cudnn.benchmark = False
    with cudnn.flags(enabled=False, deterministic=True):
        assert not cudnn.enabled and cudnn.deterministic
    assert cudnn.enabled and not cudnn.deterministic
    matmul = ember.backends.cuda.matmul
    assert ember.get_float32_matmul_precision() == "highest" and not matmul.allow_tf32
    try:
        ember.set_float32_matmul_precision("medium")
        assert matmul.allow_tf32
        matmul.allow_tf32 = False
        assert ember.get_float32_matmul_precision() == "highest"
        matmul.allow_tf32 = True
        assert ember.get_float32_matmul_precision() == "high"
    finally:
        ember.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="Invalid precision 'fast'"):
        ember.set_float32_matmul_precision("fast")
    with pytest.raises(AttributeError):
        matmul.allow_tf16 = True   # a misspelt switch is not silently kept
    assert ember.get_float32_matmul_precision() == "highest"


def test_missing_features_names_storage_and_sharing():
    """A CPU backend without the storage methods or the sharing module is
    reported; one whose sharing module lacks a function names it."""
    cpu = backends.get_backend("cpu")

    class Partial:
        device_type = "cpu"
        Tensor = cpu.Tensor
        namespace = cpu.namespace
        storage_key = cpu.storage_key
        sharing = None

    missing = backends.missing_features(Partial())
    assert {"storage_numel", "storage_bytes", "dtype_from_name", "sharing"} <= set(missing)
    assert "storage_key" not in missing

    class HalfSharing:
        share_memory_ = staticmethod(cpu.sharing.share_memory_)

    Partial.sharing = HalfSharing
    assert "sharing.rebuild" in backends.missing_features(Partial())
    assert "sharing" not in backends.missing_features(Partial())


def test_storage_methods_round_trip():
    cpu = backends.get_backend("cpu")
    base = ember.arange(12, dtype=ember.float64)._data
    view = base[3:7]
    assert cpu.storage_key(view) == cpu.storage_key(base) != cpu.storage_key(base.clone())
    assert cpu.storage_numel(view) == 12
    raw = bytes(cpu.storage_bytes(view))
    import numpy as np
    assert np.array_equal(np.frombuffer(raw, np.float64), np.arange(12.0))
    assert cpu.dtype_from_name("float64") is base.dtype
    with pytest.raises(KeyError):
        cpu.dtype_from_name("float128")


def test_front_modules_import_no_backend_internals():
    """The front talks to backends through the interface: no module of the
    ember package imports a private name of ember.th or ember.thc."""
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[1] / "ember"   # this distribution's sources
    private = re.compile(r"(from\s+ember\.thc?\s+import\s+_|from\s+ember\.thc?\._|"
                         r"import\s+ember\.thc?\._)")
    offenders = [f"{path.relative_to(root)}:{n}" for path in root.rglob("*.py")
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if private.search(line)]
    assert offenders == []
