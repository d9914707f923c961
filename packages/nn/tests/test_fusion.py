"""ember.nn.utils.fusion: an eval-mode batch norm folded into the
convolution or linear layer before it gives the unfused pair's output."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils.fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,
                                   fuse_linear_bn_eval, fuse_linear_bn_weights)

RNG = np.random.default_rng(7)


def _t(*shape, dtype=ember.float64):
    return ember.from_numpy(RNG.standard_normal(shape)).to(dtype)


def _np(t):
    return t.detach().to(ember.float64).numpy()


def _random_stats(bn):
    """Running statistics and affine parameters far from their defaults."""
    c = bn.num_features
    with ember.no_grad():
        bn.running_mean.copy_(ember.from_numpy(RNG.standard_normal(c)))
        bn.running_var.copy_(ember.from_numpy(RNG.uniform(0.2, 3.0, c)))
        if bn.weight is not None:
            bn.weight.copy_(ember.from_numpy(RNG.standard_normal(c)))
            bn.bias.copy_(ember.from_numpy(RNG.standard_normal(c)))


@pytest.mark.parametrize("dtype,tol", [(ember.float64, 1e-12), (ember.float32, 1e-5)])
@pytest.mark.parametrize("bias,affine,stride,groups", [
    (True, True, 1, 1), (False, True, 2, 1), (True, False, 1, 2), (False, False, 1, 3)])
def test_conv_bn(dtype, tol, bias, affine, stride, groups):
    conv = nn.Conv2d(6, 12, 3, stride=stride, padding=1, groups=groups, bias=bias).to(dtype)
    bn = nn.BatchNorm2d(12, eps=1e-3, affine=affine).to(dtype)
    _random_stats(bn)
    conv.eval(), bn.eval()
    x = _t(4, 6, 9, 11, dtype=dtype)[:, :, :, 1:]      # non-contiguous input
    fused = fuse_conv_bn_eval(conv, bn)
    want = _np(bn(conv(x)))
    got = _np(fused(x))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert fused is not conv and conv.weight.shape == fused.weight.shape
    # the originals are untouched
    np.testing.assert_allclose(_np(bn(conv(x))), want)
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)


def test_conv_transpose_bn():
    conv = nn.ConvTranspose2d(4, 6, 3, stride=2).double()
    bn = nn.BatchNorm2d(6).double()
    _random_stats(bn)
    conv.eval(), bn.eval()
    x = _t(2, 4, 5, 5)
    fused = fuse_conv_bn_eval(conv, bn, transpose=True)
    np.testing.assert_allclose(_np(fused(x)), _np(bn(conv(x))), rtol=1e-12, atol=1e-12)


def test_linear_bn():
    lin = nn.Linear(10, 7).double()
    bn = nn.BatchNorm1d(7).double()
    _random_stats(bn)
    lin.eval(), bn.eval()
    x = _t(5, 10)
    fused = fuse_linear_bn_eval(lin, bn)
    np.testing.assert_allclose(_np(fused(x)), _np(bn(lin(x))), rtol=1e-12, atol=1e-12)


def test_weights_functions_match_the_formula():
    w, b = _t(3, 2, 1, 1), _t(3)
    rm, rv, g, beta = _t(3), _t(3).abs() + 0.5, _t(3), _t(3)
    fw, fb = fuse_conv_bn_weights(w, b, rm, rv, 1e-5, g, beta)
    scale = g.numpy() / np.sqrt(rv.numpy() + 1e-5)
    np.testing.assert_allclose(fw.detach().numpy(), w.numpy() * scale[:, None, None, None])
    np.testing.assert_allclose(fb.detach().numpy(), (b.numpy() - rm.numpy()) * scale + beta.numpy())
    lw, lb = fuse_linear_bn_weights(_t(3, 4), None, rm, rv, 1e-5, None, None)
    np.testing.assert_allclose(lb.detach().numpy(), -rm.numpy() / np.sqrt(rv.numpy() + 1e-5))


def test_errors():
    conv, bn = nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        fuse_conv_bn_eval(conv, bn)                       # training mode
    conv.eval(), bn.eval()
    with pytest.raises(ValueError, match="4 channels but the convolution has 5"):
        fuse_conv_bn_eval(nn.Conv2d(2, 5, 3).eval(), bn)
    no_stats = nn.BatchNorm2d(4, track_running_stats=False).eval()
    with pytest.raises(ValueError, match="no running statistics"):
        fuse_conv_bn_eval(conv, no_stats)
    with pytest.raises(ValueError, match="has 4 features but the linear layer has 3"):
        fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(4).eval())
