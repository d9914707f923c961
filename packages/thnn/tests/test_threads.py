"""libTHNN's kernels on libTH's thread pool: no OpenMP runtime in the
process, results bitwise the same on 1 and 2 threads (the reductions sum
fixed blocks), and kernels that run in parallel in a parent also run in a
forked child."""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn
from thnn_testing import embedding_bag_ref, fd_check, group_norm_ref, linear_weights, \
    nearest_index, pad_ref

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads ldd and /proc/self/maps")


def T(a):
    return th.from_numpy(np.ascontiguousarray(a))


def N(t):
    return np.array(t.numpy())


def _python(code):
    """stdout of `code` run by a fresh Python, which must succeed."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@linux_only
def test_libthnn_links_no_openmp_runtime():
    lib = os.path.join(nn.get_lib_dir(), "libTHNN.so")
    out = subprocess.run(["ldd", lib], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "libTH.so" in out.stdout          # ldd did list the dependencies
    assert "gomp" not in out.stdout, out.stdout


@linux_only
def test_running_kernels_loads_no_openmp_runtime():
    code = (
        "import numpy as np, ember.th as th, ember.thnn as nn\n"
        "th.set_num_threads(2)\n"
        "x = th.from_numpy(np.random.default_rng(0).standard_normal((8, 16, 32, 32)))\n"
        "nn.batch_norm_forward(x); nn.softmax_forward(x, 1)\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'libTHNN.so' in maps\n"
        "print('gomp' in maps)\n")
    assert _python(code).strip() == "False"


def test_products_inside_a_serial_region_make_no_threads():
    """One thread set while OpenBLAS's width is still 2 (its default on a
    2-core machine, or left by an earlier product): the Winograd
    convolution's products run inside a region that runs serially, and
    OpenBLAS must run them on one job, not ask libTH for threads made for
    each product."""
    code = (
        "import os, ctypes, numpy as np, scipy_openblas32, re\n"
        "os.environ['EMBER_CONV_WINOGRAD'] = '1'\n"
        "import ember.th as th, ember.thnn as nn\n"
        "ob = ctypes.CDLL(os.path.join(scipy_openblas32.get_lib_dir(), 'libscipy_openblas.so'))\n"
        "ob.scipy_openblas_set_num_threads(2)\n"
        "th.set_num_threads(1)\n"
        "rng = np.random.default_rng(0)\n"
        "x = th.from_numpy(rng.standard_normal((2, 64, 40, 40)).astype(np.float32))\n"
        "w = th.from_numpy(rng.standard_normal((64, 64, 3, 3)).astype(np.float32))\n"
        "for _ in range(3): nn.conv2d_forward(x, w, None, 1, 1)\n"
        "print(re.search(r'products on threads made for them: (\\d+)', th.parallel_info())[1],\n"
        "      ob.scipy_openblas_get_num_threads())\n")
    assert _python(code).split() == ["0", "1"]


def _regions():
    return int(re.search(r"regions run: (\d+)", th.parallel_info()).group(1))


def _on_threads(n, run):
    """run() with n threads; the previous count restored."""
    old = th.get_num_threads()
    th.set_num_threads(n)
    try:
        return run()
    finally:
        th.set_num_threads(old)


def _same_on_1_and_2_threads(run):
    """run() (a list of arrays) on 1 thread, then on 2 until the pool ran a
    region in parallel (a busy machine makes it back off to the caller
    alone for up to a second): every 2-thread result bitwise equal."""
    one = _on_threads(1, run)
    for _ in range(4):
        before = _regions()
        two = _on_threads(2, run)
        for a, b in zip(one, two):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes()
        if _regions() > before:
            return one
        time.sleep(1.1)
    pytest.skip("the pool ran no region on 2 threads (machine busy)")


# (n, d): blocks of rows with an odd tail; a row per block; a column
REDUCTION_SIZES = [(5003, 37), (7, 40001), (300017, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nd", REDUCTION_SIZES)
def test_reductions_bitwise_equal_on_1_and_2_threads(dtype, nd):
    n, d = nd
    rng = np.random.default_rng(n + d)
    x = rng.standard_normal((n, d)).astype(dtype)
    t = rng.standard_normal((n, d)).astype(dtype)
    p = (1 / (1 + np.exp(-x))).astype(dtype)        # probabilities for bce
    yb = rng.integers(0, 2, (n, d)).astype(dtype)
    ys = np.where(rng.random((n, d)) < 0.5, -1, 1).astype(dtype)
    yr = np.where(rng.random(n) < 0.5, -1, 1).astype(dtype)
    w = rng.random((n, d)).astype(dtype)
    pw = rng.random(d).astype(dtype) + 0.5
    X, Tt, P, YB, YS, YR, W, PW = map(T, (x, t, p, yb, ys, yr, w, pw))

    def run():
        out = []
        for red in ("sum", "mean"):
            out += [N(nn.pointwise_loss_forward("mse", X, Tt, W, None, red)),
                    N(nn.pointwise_loss_forward("huber", X, Tt, None, None, red, 0.7)),
                    N(nn.pointwise_loss_forward("bce", P, YB, W, None, red)),
                    N(nn.pointwise_loss_forward("bce_with_logits", X, YB, None, PW, red)),
                    N(nn.kl_div_forward(X, P, red)),
                    N(nn.kl_div_forward(X, Tt, red, log_target=True)),
                    N(nn.margin_ranking_loss_forward(X, Tt, YS, 0.1, red)),
                    N(nn.cosine_embedding_loss_forward(X, Tt, YR, 0.2, red))]
        return out

    sums = _same_on_1_and_2_threads(run)
    # and right: against float64 sums
    x64, t64, p64 = x.astype(np.float64), t.astype(np.float64), p.astype(np.float64)
    cos = (x64 * t64).sum(1) / np.sqrt(((x64 ** 2).sum(1) + 1e-12) *
                                       ((t64 ** 2).sum(1) + 1e-12))
    ref = [(w * (x64 - t64) ** 2).sum(),
           np.maximum(0, -ys.astype(np.float64) * (x64 - t64) + 0.1).sum(),
           np.where(yr == 1, 1 - cos, np.maximum(0, cos - 0.2)).sum()]
    tol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose([sums[0], sums[6], sums[7]], ref, rtol=tol)
    np.testing.assert_allclose(sums[8], ref[0] / (n * d), rtol=tol)


def test_reductions_past_the_block_cap_bitwise_equal():
    # over 256 * THNN_GRAIN elements: 256 blocks, longer than the grain
    n = 256 * 32768 + 4099
    rng = np.random.default_rng(11)
    x = rng.standard_normal(n).astype(np.float32)
    p = rng.random(n).astype(np.float32)
    X, P = T(x), T(p)

    def run():
        return [N(nn.pointwise_loss_forward("mse", X, P, None, None, "sum")),
                N(nn.kl_div_forward(X, P, "mean"))]

    mse, _ = _same_on_1_and_2_threads(run)
    np.testing.assert_allclose(mse, ((x.astype(np.float64) - p) ** 2).sum(), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_other_parallel_kernels_bitwise_equal_on_1_and_2_threads(dtype):
    rng = np.random.default_rng(7)
    x = T(rng.standard_normal((8, 16, 24, 24)).astype(dtype))
    gy = T(rng.standard_normal((8, 16, 24, 24)).astype(dtype))
    w, b = T(rng.random(16).astype(dtype) + 0.5), T(rng.standard_normal(16).astype(dtype))

    def run():
        y, m, s = nn.batch_norm_forward(x, w, b)
        gw, gb = nn.batch_norm_backward_params(gy, x, m, s)
        yl, ml, sl = nn.layer_norm_forward(x, (24, 24), None, None)
        yg, mg, rg = nn.group_norm_forward(x, 4, w, b)
        sm = nn.softmax_forward(x, 1)
        lsm = nn.log_softmax_forward(x, 3)   # last dim: float32's vectorized rows
        gl = nn.layer_norm_backward_input(gy, x, (24, 24), None, ml, sl)
        glw, glb = nn.layer_norm_backward_params(gy, x, (24, 24), ml, sl)
        return [N(a) for a in (y, m, s, nn.batch_norm_backward_input(gy, x, w, m, s),
                               gw, gb, yl, ml, sl, yg, mg, rg, sm,
                               nn.softmax_backward_input(gy, sm, 1), lsm,
                               nn.log_softmax_backward_input(gy, lsm, 3),
                               nn.softmax_forward(x, -1), gl, glw, glb,
                               nn.activation_forward("gelu", x),
                               nn.avg_pool2d_forward(x, 3, 2, 1))]

    _same_on_1_and_2_threads(run)


def _conv_ref(x, w, stride, pad, dil, groups):
    """float64 conv2d forward by explicit windows (NumPy)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil:i * dil + stride * oh:stride,
                           j * dil:j * dil + stride * ow:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                         w[g * og:(g + 1) * og, :, i, j])
    return out


# samples side by side on the pool: LeNet's two layers (one sample per GEMM),
# small planes several samples per GEMM (at least 3 such batches, so that
# there are blocks to spread), groups, stride, dilation; batches below, at
# and past the weight gradient's 8 blocks; and samples past BLAS's threshold
# (a stride-2 layer and a stem, one sample per GEMM) in batches of at least
# two per thread
SIDE_BY_SIDE = [((13, 1, 28, 28), (6, 1, 5, 5), 1, 2, 1, 1),
                ((4, 32, 64, 64), (32, 32, 3, 3), 2, 1, 1, 1),
                ((5, 3, 96, 96), (16, 3, 7, 7), 2, 3, 1, 1),
                ((64, 6, 14, 14), (16, 6, 5, 5), 1, 0, 1, 1),
                ((40, 4, 6, 6), (8, 2, 3, 3), 1, 1, 1, 2),
                ((70, 3, 9, 9), (4, 3, 3, 3), 2, 1, 2, 1),
                ((60, 2, 7, 5), (3, 2, 2, 3), 1, 0, 1, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SIDE_BY_SIDE, ids=lambda s: "x".join(map(str, s[0])))
def test_small_convolutions_side_by_side(shape, dtype):
    """Blocks of samples run side by side on the pool: forward and both
    gradients bitwise equal on 1 and 2 threads, and
    equal to float64 references (the input gradient by the adjoint identity
    <conv(x), gy> = <x, conv^T(gy)>, the weight gradient against one built
    from the reference)."""
    xs, ws, stride, pad, dil, groups = shape
    rng = np.random.default_rng(17)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    ref = _conv_ref(x, w, stride, pad, dil, groups) + b[None, :, None, None]
    gy = rng.standard_normal(ref.shape).astype(dtype)

    def run():
        y = nn.conv2d_forward(T(x), T(w), T(b), stride, pad, dil, groups)
        gi = nn.conv2d_backward_input(T(gy), xs, T(w), stride, pad, dil, groups)
        gw, gb = nn.conv2d_backward_params(T(gy), T(x), ws, stride, pad, dil, groups)
        return [N(y), N(gi), N(gw), N(gb)]

    y, gi, gw, gb = _same_on_1_and_2_threads(run)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(y, ref, rtol=tol, atol=tol * np.abs(ref).max())
    # <conv(x'), gy> is linear in x' and in w': check both gradients through it
    dx = rng.standard_normal(xs)
    lin_x = (_conv_ref(dx, w, stride, pad, dil, groups) * gy).sum()
    np.testing.assert_allclose((gi.astype(np.float64) * dx).sum(), lin_x, rtol=tol * 10)
    dw = rng.standard_normal(ws)
    lin_w = (_conv_ref(x, dw, stride, pad, dil, groups) * gy).sum()
    np.testing.assert_allclose((gw.astype(np.float64) * dw).sum(), lin_w, rtol=tol * 10)
    np.testing.assert_allclose(gb, gy.astype(np.float64).sum((0, 2, 3)), rtol=tol * 10,
                               atol=tol)


FORK_SCRIPT = r"""
import os, sys, numpy as np, ember.th as th, ember.thnn as nn
th.set_num_threads(2)
x = th.from_numpy(np.random.default_rng(1).standard_normal((16, 32, 32, 32)))

def run():
    y, m, s = nn.batch_norm_forward(x)
    return [np.array(t.numpy()) for t in (y, m, s, nn.softmax_forward(x, 1),
                                          nn.log_softmax_forward(x, 3))]

parent = run()                     # the pool's workers are running now
pid = os.fork()
if pid == 0:
    ok = all(np.array_equal(a, b) for a, b in zip(run(), parent))
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
assert all(np.array_equal(a, b) for a, b in zip(run(), parent))   # and the parent's pool
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_child_runs_parallel_kernels():
    # before libTHNN used libTH's pool, the child hung in libgomp here
    proc = subprocess.Popen([sys.executable, "-c", FORK_SCRIPT], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)      # the script and its forked child
        proc.communicate()
        pytest.fail("a kernel in the forked child did not finish within 120 s")
    assert proc.returncode == 0, err


# ---- sizes past THNN_GRAIN (the loops on the thread pool) ---------------------------------
def test_large_inputs_take_the_parallel_paths():
    rng = np.random.default_rng(32)
    x = rng.standard_normal((4, 16, 24, 24))                      # 36864 elements
    w, b = rng.standard_normal(16), rng.standard_normal(16)
    y, m, r = nn.group_norm_forward(T(x), 4, T(w), T(b))
    np.testing.assert_allclose(N(y), group_norm_ref(x, 4, w, b, 1e-5)[0], rtol=1e-10, atol=1e-10)

    def gn_bwd(gy):
        gw, gb = nn.group_norm_backward_params(T(gy), T(x), 4, m, r)
        return [N(nn.group_norm_backward_input(T(gy), T(x), 4, T(w), m, r)), N(gw), N(gb)]
    fd_check(lambda x, w, b: N(nn.group_norm_forward(T(x), 4, T(w), T(b))[0]), [x, w, b],
             gn_bwd)

    # linear maps: the backward is the adjoint, <gy, f(x)> = <f*(gy), x>
    def adjoint(f, fstar, x):
        y = f(x)
        gy = rng.standard_normal(y.shape)
        np.testing.assert_allclose(np.sum(gy * y), np.sum(fstar(gy) * x), rtol=1e-10)
        return y

    xs = rng.standard_normal((2, 16, 40, 40))
    y = adjoint(lambda x: N(nn.upsample_bilinear2d_forward(T(x), (88, 56), False)),
                lambda g: N(nn.upsample_bilinear2d_backward_input(T(g), xs.shape, False)), xs)
    ref = np.einsum("oh,nchw,pw->ncop", linear_weights(88, 40, False, None), xs,
                    linear_weights(56, 40, False, None))
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)
    y = adjoint(lambda x: N(nn.upsample_nearest2d_forward(T(x), (88, 56))),
                lambda g: N(nn.upsample_nearest2d_backward_input(T(g), xs.shape)), xs)
    np.testing.assert_array_equal(y, xs[..., nearest_index(88, 40, None), :]
                                  [..., nearest_index(56, 40, None)])
    y = adjoint(lambda x: N(nn.reflection_pad2d_forward(T(x), (3, 2, 1, 4))),
                lambda g: N(nn.reflection_pad2d_backward_input(T(g), xs.shape, (3, 2, 1, 4))),
                xs)
    np.testing.assert_array_equal(y, pad_ref(xs, 2, "reflect", (3, 2, 1, 4)))
    x3 = rng.standard_normal((2, 4, 12, 14, 14))
    y = adjoint(lambda x: N(nn.replication_pad3d_forward(T(x), (1, 2, 3, 0, 2, 2))),
                lambda g: N(nn.replication_pad3d_backward_input(T(g), x3.shape,
                                                                (1, 2, 3, 0, 2, 2))), x3)
    np.testing.assert_array_equal(y, pad_ref(x3, 3, "edge", (1, 2, 3, 0, 2, 2)))

    table = rng.standard_normal((50, 160))
    idx = rng.integers(0, 50, 400)
    offs = np.sort(rng.integers(0, 400, 60))
    offs[0] = 0
    it, ot = T(idx), T(offs)
    for mode in ("sum", "mean"):
        _, o2b, bsz, mi = nn.embedding_bag_forward(T(table), it, ot, mode, None, False, 7)
        y = adjoint(lambda t: N(nn.embedding_bag_forward(T(t), it, ot, mode, None, False, 7)[0]),
                    lambda g: N(nn.embedding_bag_backward_params(T(g), it, o2b, bsz, mi, 50,
                                                                 mode, None, 7)), table)
        np.testing.assert_allclose(y, embedding_bag_ref(table, idx, offs, mode, None, False, 7),
                                   rtol=1e-12, atol=1e-12)

    a, c = rng.standard_normal((300, 120)), rng.standard_normal((300, 120))
    t = np.sign(rng.standard_normal(300))
    fd_check(lambda a, c: N(nn.cosine_embedding_loss_forward(T(a), T(c), T(t), 0.1, "sum")),
             [a, c], lambda gy: [N(g) for g in nn.cosine_embedding_loss_backward_input(
                 th.from_numpy(np.array(gy)), T(a), T(c), T(t), 0.1, "sum")])
    big = rng.standard_normal(40000)
    np.testing.assert_allclose(N(nn.kl_div_forward(T(big), T(np.abs(big)), "mean")),
                               np.mean(np.abs(big) * (np.log(np.abs(big)) - big)), rtol=1e-10)
