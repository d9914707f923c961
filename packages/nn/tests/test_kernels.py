"""The kernel dispatch point: a package registered in the `ember.kernels`
entry-point group takes over the kernels it provides; the others stay
composed; a broken package is skipped with a warning."""
import importlib.metadata

import pytest

import ember
import ember.nn.functional as F
from ember.nn import _kernels


class FakeEntryPoint:
    def __init__(self, name, obj):
        self.name, self.value, self._obj = name, f"fake:{name}", obj

    def load(self):
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


@pytest.fixture
def entry_points(monkeypatch):
    registered = []
    real = importlib.metadata.entry_points

    def fake(group=None, **kw):
        if group != "ember.kernels":  # the backends, ...
            return real(group=group, **kw)
        return list(registered)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    _kernels.reset()
    yield registered
    _kernels.reset()


def test_provider_overrides_only_what_it_provides(entry_points):
    calls = []

    class Provider:
        @staticmethod
        def nn_kernels():
            def conv2d(input, weight, bias, stride, padding, dilation, groups):
                calls.append((tuple(input.shape), stride, padding, dilation, groups))
                return _kernels.COMPOSED["conv2d"](input, weight, bias, stride, padding,
                                                   dilation, groups)
            return {"conv2d": conv2d, "not_a_kernel": print}

    entry_points.append(FakeEntryPoint("fake", Provider))
    x = ember.randn(3, 5, 5)
    y = F.conv2d(x, ember.randn(2, 3, 3, 3), padding="same")
    assert y.shape == (2, 5, 5)
    assert calls == [((1, 3, 5, 5), (1, 1), (1, 1, 1, 1), (1, 1), 1)]
    assert _kernels.providers() == ["fake"]
    assert _kernels.kernel("max_pool2d") is _kernels.COMPOSED["max_pool2d"]
    with pytest.raises(KeyError):
        _kernels.kernel("not_a_kernel")


def test_broken_provider_is_skipped(entry_points):
    entry_points.append(FakeEntryPoint("broken", ImportError("libthnn.so: cannot open")))
    with pytest.warns(RuntimeWarning, match="ignoring kernel package 'broken'"):
        assert _kernels.kernel("conv2d") is _kernels.COMPOSED["conv2d"]
    assert _kernels.providers() == []


def test_env_var_forces_composed(entry_points, monkeypatch):
    entry_points.append(FakeEntryPoint("fake", type("P", (), {
        "nn_kernels": staticmethod(lambda: {"conv2d": None})})))
    monkeypatch.setenv("EMBER_NN_KERNELS", "composed")
    assert _kernels.kernel("conv2d") is _kernels.COMPOSED["conv2d"]
