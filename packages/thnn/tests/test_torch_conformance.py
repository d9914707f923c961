"""Against PyTorch, where it is installed (skips otherwise): float32 conv2d
forward and backward, pooling, cross-entropy, batch norm, activations."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn
from thnn_testing import N, T

torch = pytest.importorskip("torch")
F = torch.nn.functional


def close(a, b, tol=1e-4):
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("xs,ws,s,p,d,g", [
    ((4, 1, 28, 28), (20, 1, 5, 5), 1, 0, 1, 1),
    ((2, 8, 14, 14), (8, 8, 3, 3), 1, 1, 1, 1),
    ((2, 6, 9, 11), (4, 3, 3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((1, 4, 7, 7), (4, 1, 3, 3), 2, 1, 1, 4),
])
def test_conv2d(xs, ws, s, p, d, g):
    rng = np.random.default_rng(20)
    x, w, b = (rng.standard_normal(v).astype(np.float32) for v in (xs, ws, (ws[0],)))
    tx, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
    ty = F.conv2d(tx, tw, tb, s, p, d, g)
    gy = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.from_numpy(gy))
    close(N(nn.conv2d_forward(T(x), T(w), T(b), s, p, d, g)), ty)
    close(N(nn.conv2d_backward_input(T(gy), xs, T(w), s, p, d, g)), tx.grad)
    gw, gb = nn.conv2d_backward_params(T(gy), T(x), ws, s, p, d, g)
    close(N(gw), tw.grad, 1e-3)
    close(N(gb), tb.grad, 1e-3)


@pytest.mark.parametrize("ceil", [False, True])
def test_pooling(ceil):
    x = np.random.default_rng(21).standard_normal((2, 3, 9, 8)).astype(np.float32)
    tx = torch.from_numpy(x)
    y, ind = nn.max_pool2d_forward(T(x), 3, 2, 1, 1, ceil)
    ty, tind = F.max_pool2d(tx, 3, 2, 1, 1, ceil, return_indices=True)
    close(N(y), ty)
    np.testing.assert_array_equal(N(ind), tind.numpy())
    for cip in (True, False):
        close(N(nn.avg_pool2d_forward(T(x), 3, 2, 1, ceil, cip)),
              F.avg_pool2d(tx, 3, 2, 1, ceil, cip))


def test_cross_entropy_and_batch_norm():
    rng = np.random.default_rng(22)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    t = rng.integers(0, 5, 6).astype(np.int64)
    w = rng.uniform(0.5, 2, 5).astype(np.float32)
    out, _, _ = nn.cross_entropy_forward(T(x), T(t), T(w), "mean", 2)
    close(N(out), F.cross_entropy(torch.from_numpy(x), torch.from_numpy(t),
                                  torch.from_numpy(w), ignore_index=2))
    xb = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    trm, trv = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
    erm, erv = T(rm.copy()), T(rv.copy())
    y, _, _ = nn.batch_norm_forward(T(xb), None, None, erm, erv, True, 0.1, 1e-5)
    close(N(y), F.batch_norm(torch.from_numpy(xb), trm, trv, training=True))
    close(N(erm), trm)
    close(N(erv), trv)


@pytest.mark.parametrize("name,a,b,tf", [
    ("gelu", 0, 0, lambda x: F.gelu(x)), ("gelu", 1, 0, lambda x: F.gelu(x, approximate="tanh")),
    ("silu", 0, 0, F.silu), ("mish", 0, 0, F.mish), ("hardswish", 0, 0, F.hardswish),
    ("elu", 1.0, 0, F.elu), ("selu", 0, 0, F.selu), ("softplus", 1, 20, F.softplus),
])
def test_activations(name, a, b, tf):
    x = (np.random.default_rng(23).standard_normal(100) * 4).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_()
    ty = tf(tx)
    ty.backward(torch.ones_like(ty))
    close(N(nn.activation_forward(name, T(x), a, b)), ty)
    close(N(nn.activation_backward_input(name, th.ones(100), T(x), a, b)), tx.grad)


def torch_or_skip():
    return pytest.importorskip("torch")


# ---- PyTorch conformance ---------------------------------------------------------------
def test_against_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, 4, 5, 6))
    tx = torch.from_numpy(x)
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    np.testing.assert_allclose(
        N(nn.group_norm_forward(T(x), 2, T(w), T(b))[0]),
        F.group_norm(tx, 2, torch.from_numpy(w), torch.from_numpy(b)).numpy(), rtol=1e-10,
        atol=1e-12)
    for size in [(7, 9), (12, 12), (3, 4), (10, 13)]:
        np.testing.assert_array_equal(N(nn.upsample_nearest2d_forward(T(x), size)),
                                      F.interpolate(tx, size=size, mode="nearest").numpy())
        for ac in (False, True):
            np.testing.assert_allclose(
                N(nn.upsample_bilinear2d_forward(T(x), size, ac)),
                F.interpolate(tx, size=size, mode="bilinear", align_corners=ac).numpy(),
                rtol=1e-12, atol=1e-12)
    for sf in (1.7, 2.5, 0.6, 1.1):
        want = F.interpolate(tx, scale_factor=sf, mode="nearest")
        got = nn.upsample_nearest2d_forward(T(x), tuple(want.shape[-2:]), (sf, sf))
        np.testing.assert_array_equal(N(got), want.numpy())
        want = F.interpolate(tx, scale_factor=sf, mode="bilinear")
        got = nn.upsample_bilinear2d_forward(T(x), tuple(want.shape[-2:]), False, (sf, sf))
        np.testing.assert_allclose(N(got), want.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(N(nn.reflection_pad2d_forward(T(x), (1, 2, 3, 1))),
                                  F.pad(tx, (1, 2, 3, 1), mode="reflect").numpy())
    np.testing.assert_array_equal(N(nn.replication_pad2d_forward(T(x), (-1, 2, 3, -2))),
                                  F.pad(tx, (-1, 2, 3, -2), mode="replicate").numpy())
    x5 = rng.standard_normal((2, 3, 3, 4, 5))
    np.testing.assert_array_equal(N(nn.reflection_pad3d_forward(T(x5), (1, 2, 3, 1, 2, 0))),
                                  F.pad(torch.from_numpy(x5), (1, 2, 3, 1, 2, 0),
                                        mode="reflect").numpy())
    wt = rng.standard_normal((6, 3))
    idx, psw = np.array([0, 2, 5, 5, 1, 3]), rng.standard_normal(6)
    for ofs, last in [(np.array([0, 1, 1, 4]), False), (np.array([0, 2, 3]), True)]:
        for mode in ("sum", "mean", "max"):
            p = psw if mode == "sum" else None
            tw = torch.from_numpy(wt).requires_grad_()
            want = F.embedding_bag(torch.from_numpy(idx), tw, torch.from_numpy(ofs), mode=mode,
                                   per_sample_weights=None if p is None else torch.from_numpy(p),
                                   include_last_offset=last, padding_idx=5)
            got, o2b, bsz, mi = nn.embedding_bag_forward(T(wt), T(idx), T(ofs), mode,
                                                         None if p is None else T(p), last, 5)
            np.testing.assert_allclose(N(got), want.detach().numpy(), rtol=1e-12, atol=1e-12)
            gy = rng.standard_normal(tuple(want.shape))
            want.backward(torch.from_numpy(gy))
            gw = nn.embedding_bag_backward_params(T(gy), T(idx), o2b, bsz, mi, 6, mode,
                                                  None if p is None else T(p), 5)
            np.testing.assert_allclose(N(gw), tw.grad.numpy(), rtol=1e-12, atol=1e-12)
            if p is not None:
                tp = torch.from_numpy(p).requires_grad_()
                F.embedding_bag(torch.from_numpy(idx), torch.from_numpy(wt), torch.from_numpy(ofs),
                                mode="sum", per_sample_weights=tp, include_last_offset=last,
                                padding_idx=5).backward(torch.from_numpy(gy))
                gp = nn.embedding_bag_backward_per_sample_weights(T(gy), T(wt), T(idx), o2b,
                                                                  "sum", 5)
                np.testing.assert_allclose(N(gp), tp.grad.numpy(), rtol=1e-12, atol=1e-12)
    a, c = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    y = np.array([1.0, -1, 1, -1, -1])
    np.testing.assert_allclose(
        N(nn.cosine_embedding_loss_forward(T(a), T(c), T(y), 0.1, "mean")),
        F.cosine_embedding_loss(torch.from_numpy(a), torch.from_numpy(c), torch.from_numpy(y),
                                0.1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        N(nn.kl_div_forward(T(a), T(np.abs(c)), "sum")),
        F.kl_div(torch.from_numpy(a), torch.from_numpy(np.abs(c)), reduction="sum").numpy(),
        rtol=1e-12)
