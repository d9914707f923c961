"""The kernel dispatch point: a package registered in the `ember.kernels`
entry-point group takes over the kernels it provides; the others stay
composed; a broken package is skipped with a warning."""
import importlib.metadata

import pytest

import ember
import ember.nn.functional as F
import ember.th as th
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


class RecordingConv2d:
    """A spec over ember.th tensors that computes with the composed conv2d
    and records its calls."""
    differentiable = 3
    calls = []

    @staticmethod
    def forward(x, w, b, stride, pads, dilation, groups):
        RecordingConv2d.calls.append((tuple(x.shape), stride, pads, dilation, groups))
        if pads == (9, 9, 9, 9):
            return NotImplemented
        wrap = ember.from_numpy
        out = _kernels.COMPOSED["conv2d"](wrap(x.numpy()), wrap(w.numpy()),
                                          None if b is None else wrap(b.numpy()),
                                          stride, pads, dilation, groups)
        return out._data, "ctx"

    @staticmethod
    def backward(ctx, g, inputs, needs):
        assert ctx == "ctx"
        return tuple(th.full(t.shape, 7.0, dtype=t.dtype) if need else None
                     for t, need in zip(inputs, needs))


def provider(specs):
    return type("Provider", (), {"tensor_type": th.Tensor,
                                 "nn_kernels": staticmethod(lambda: specs)})


def test_provider_overrides_only_what_it_provides(entry_points):
    RecordingConv2d.calls.clear()
    entry_points.append(FakeEntryPoint("fake", provider(
        {"conv2d": RecordingConv2d, "not_a_kernel": RecordingConv2d})))
    x = ember.randn(1, 3, 5, 5, requires_grad=True)
    w = ember.randn(2, 3, 3, 3, requires_grad=True)
    y = F.conv2d(x, w, padding="same")
    assert y.shape == (1, 2, 5, 5)
    assert RecordingConv2d.calls == [((1, 3, 5, 5), (1, 1), (1, 1, 1, 1), (1, 1), 1)]
    assert y.grad_fn.name() == "ConvolutionBackward0"
    # first-order gradients come from the spec's backward
    y.sum().backward()
    assert (x.grad == 7).all() and (w.grad == 7).all()
    assert _kernels.providers() == ["fake"]
    assert _kernels.kernel("max_pool2d") is _kernels.COMPOSED["max_pool2d"]
    with pytest.raises(KeyError):
        _kernels.kernel("not_a_kernel")
    # a case the spec declines runs composed
    y = F.conv2d(x, w, padding=9)
    assert y.grad_fn.name() != "ConvolutionBackward0"


def test_double_backward_goes_through_the_composed_form(entry_points):
    entry_points.append(FakeEntryPoint("fake", provider({"conv2d": RecordingConv2d})))
    x = ember.randn(1, 2, 5, 5, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 2, 3, 3, dtype=ember.float64, requires_grad=True)
    (gx,) = ember.autograd.grad(F.conv2d(x, w).pow(2).sum(), x, create_graph=True)
    composed = _kernels.COMPOSED["conv2d"]
    (ref,) = ember.autograd.grad(composed(x, w, None, (1, 1), (0,) * 4, (1, 1), 1).pow(2).sum(),
                                 x, create_graph=True)
    assert ember.allclose(gx, ref)  # not the spec's 7s
    gx.sum().backward()
    assert w.grad is not None


def test_no_grad_and_version_checks(entry_points):
    entry_points.append(FakeEntryPoint("fake", provider({"conv2d": RecordingConv2d})))
    x = ember.randn(1, 2, 5, 5, requires_grad=True)
    w = ember.randn(3, 2, 3, 3)
    with ember.no_grad():
        assert F.conv2d(x, w).grad_fn is None
    xx = x * 1
    y = F.conv2d(xx, w)
    xx.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    y = F.conv2d(x, w)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_broken_provider_is_skipped(entry_points):
    entry_points.append(FakeEntryPoint("broken", ImportError("libthnn.so: cannot open")))
    with pytest.warns(RuntimeWarning, match="ignoring kernel package 'broken'"):
        assert _kernels.kernel("conv2d") is _kernels.COMPOSED["conv2d"]
    assert _kernels.providers() == []


def test_env_var_forces_composed(entry_points, monkeypatch):
    entry_points.append(FakeEntryPoint("fake", provider({"conv2d": RecordingConv2d})))
    monkeypatch.setenv("EMBER_NN_KERNELS", "composed")
    assert _kernels.kernel("conv2d") is _kernels.COMPOSED["conv2d"]


class WeightOnlyConv2d(RecordingConv2d):
    """differentiable given as positions: only the weight (argument 1)."""
    differentiable = (1,)

    @staticmethod
    def backward(ctx, g, inputs, needs):
        (w,) = inputs
        assert needs == (True,)
        return (th.full(w.shape, 3.0, dtype=w.dtype),)


def test_differentiable_positions(entry_points):
    entry_points.append(FakeEntryPoint("fake", provider({"conv2d": WeightOnlyConv2d})))
    x = ember.randn(1, 2, 5, 5, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 2, 3, 3, dtype=ember.float64, requires_grad=True)
    F.conv2d(x, w).sum().backward()
    assert x.grad is None and (w.grad == 3).all()
    # double backward recomputes the composed form with w put back in place
    (gw,) = ember.autograd.grad(F.conv2d(x, w).pow(2).sum(), w, create_graph=True)
    composed = _kernels.COMPOSED["conv2d"]
    (ref,) = ember.autograd.grad(composed(x, w, None, (1, 1), (0,) * 4, (1, 1), 1).pow(2).sum(),
                                 w, create_graph=True)
    assert ember.allclose(gw, ref)
