"""libTHNN's pointwise losses at their domain's edges, against PyTorch
2.13's numbers: BCE at inputs exactly 0 and 1 (logs clamped at -100, the
gradient's denominator x(1 - x) at 1e-12: large and finite, never NaN),
smooth_l1 and huber exactly at beta / delta."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn


def T(a, dt):
    return th.from_numpy(np.ascontiguousarray(np.asarray(a, dtype=dt)))


X = [1.0, 0.0, 0.5, 1.0, 0.0]
Y = [0.0, 1.0, 1.0, 1.0, 0.0]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("reduction,scale", [("none", 1.0), ("sum", 1.0), ("mean", 0.2)])
def test_bce_saturated_input(dt, reduction, scale):
    x, y = T(X, dt), T(Y, dt)
    out = np.asarray(nn.pointwise_loss_forward("bce", x, y, reduction=reduction).numpy())
    per = np.array([100.0, 100.0, np.log(2.0), 0.0, 0.0])
    want = per if reduction == "none" else per.sum() * scale
    np.testing.assert_allclose(out, want, rtol=1e-6)
    go = T(np.ones(5) if reduction == "none" else 1.0, dt)
    g = np.asarray(nn.pointwise_loss_backward_input("bce", go, x, y,
                                                    reduction=reduction).numpy())
    np.testing.assert_allclose(g, np.array([1e12, -1e12, -2.0, 0.0, 0.0]) * scale, rtol=1e-6)
    assert np.isfinite(g).all()


@pytest.mark.parametrize("loss,a,want_l,want_d", [
    # residuals -1, 0, 2, -1 with beta = 1: 0.5 r^2 / beta below beta, |r| - beta / 2 from it
    ("smooth_l1", 1.0, [0.5, 0.0, 1.5, 0.5], [-1.0, 0.0, 1.0, -1.0]),
    # huber, delta = 1: 0.5 r^2 up to delta (inclusive), delta (|r| - delta / 2) beyond
    ("huber", 1.0, [0.5, 0.0, 1.5, 0.5], [-1.0, 0.0, 1.0, -1.0]),
])
def test_boundary_losses(loss, a, want_l, want_d):
    x, y = T([0.0, 1.0, 2.0, -1.0], np.float64), T([1.0, 1.0, 0.0, 0.0], np.float64)
    out = nn.pointwise_loss_forward(loss, x, y, reduction="none", a=a)
    np.testing.assert_allclose(np.asarray(out.numpy()), want_l)
    g = nn.pointwise_loss_backward_input(loss, T(np.ones(4), np.float64), x, y,
                                         reduction="none", a=a)
    np.testing.assert_allclose(np.asarray(g.numpy()), want_d)
