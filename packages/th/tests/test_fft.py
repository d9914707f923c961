"""libTH's FFT through ember.th (fft_c2c, fft_r2c, fft_c2r, fft_supported)
against NumPy's on fresh random data: every radix, the lane and four-step
paths, both precisions, non-contiguous inputs, transforms along any dim,
zero-stride and empty inputs, one and two threads, and the errors."""
import numpy as np
import pytest

import ember.th as th
from th_testing import complex_normal as _c

C2C_LENGTHS = [1, 2, 3, 5, 7, 9, 16, 30, 49, 61, 64, 96, 120, 256, 343, 1000, 1024, 3125,
               4096, 5000, 12288]
REAL_LENGTHS = [1, 2, 3, 6, 11, 64, 90, 122, 255, 256, 1000, 2048, 4100, 10000, 32768]
TOL = {np.complex64: 3e-6, np.complex128: 1e-13, np.float32: 3e-6, np.float64: 1e-13}



def _close(got, want, tol):
    scale = max(1.0, np.abs(want).max()) if want.size else 1.0
    assert got.shape == want.shape
    err = np.abs(got - want).max() / scale if want.size else 0.0
    assert err < tol * max(1.0, np.log2(max(want.shape))), err


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", C2C_LENGTHS)
def test_c2c_against_numpy(rng, dtype, n):
    for lines in (1, 3, 40):
        a = _c(rng, (lines, n), dtype)
        ref = a.astype(np.complex128)
        _close(th.fft_c2c(th.from_numpy(a), -1).numpy(), np.fft.fft(ref), TOL[dtype])
        _close(th.fft_c2c(th.from_numpy(a), 1, True, 1 / n).numpy(), np.fft.ifft(ref),
               TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", REAL_LENGTHS)
def test_real_transforms_against_numpy(rng, dtype, n):
    for lines in (1, 20):
        x = rng.standard_normal((lines, n)).astype(dtype)
        spec = th.fft_r2c(th.from_numpy(x), 1)
        _close(spec.numpy(), np.fft.rfft(x.astype(np.float64)), TOL[dtype])
        back = th.fft_c2r(spec, 1, n, 1 / n)
        assert back.dtype == th.from_numpy(x).dtype
        _close(back.numpy(), x.astype(np.float64), TOL[dtype])


def test_c2r_reads_only_the_half_and_ignores_the_edges_imaginary_parts(rng):
    spec = _c(rng, (4, 9), np.complex128)  # 9 values for n = 16 or 17
    for n in (16, 17):
        got = th.fft_c2r(th.from_numpy(spec), 1, n).numpy()
        np.testing.assert_allclose(got, np.fft.irfft(spec, n, axis=1) * n, atol=1e-12)
    longer = np.concatenate([spec, _c(rng, (4, 5), np.complex128)], 1)
    np.testing.assert_allclose(th.fft_c2r(th.from_numpy(longer), 1, 16).numpy(),
                               np.fft.irfft(spec, 16, axis=1) * 16, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_any_dim_and_non_contiguous(rng, threads):
    old = th.get_num_threads()
    th.set_num_threads(threads)
    try:
        a = _c(rng, (6, 40, 18), np.complex128)
        t = th.from_numpy(a)
        for view, ref in ((t.transpose(0, 2), a.swapaxes(0, 2)),
                          (t[:, ::3, 1:], a[:, ::3, 1:]),
                          (t.flip(1), a[:, ::-1])):
            for dim in range(3):
                got = th.fft_c2c(view, dim)
                assert got.is_contiguous()
                _close(got.numpy(), np.fft.fft(ref, axis=dim), 1e-13)
        x = rng.standard_normal((30, 1000))
        xt = th.from_numpy(x).transpose(0, 1)  # transform along dim 0, stride 1000
        _close(th.fft_r2c(xt, 0).numpy(), np.fft.rfft(x.T, axis=0), 1e-13)
        spec = th.fft_r2c(xt, 0)
        _close(th.fft_c2r(spec.transpose(0, 1), 1, 1000).numpy(), x * 1000, 1e-13)
        # one long line, split over the threads (the four-step path)
        big = _c(rng, (1 << 16,), np.complex64)
        _close(th.fft_c2c(th.from_numpy(big), 0).numpy(), np.fft.fft(big.astype(np.complex128)),
               3e-6)
    finally:
        th.set_num_threads(old)


def test_zero_stride_and_empty_inputs(rng):
    row = _c(rng, (1, 24), np.complex128)
    t = th.from_numpy(row).expand(5, 24)  # stride 0 along the batch
    np.testing.assert_allclose(th.fft_c2c(t, 1).numpy(), np.fft.fft(np.repeat(row, 5, 0)),
                               atol=1e-12)
    col = th.from_numpy(rng.standard_normal((1,))).expand(8)  # stride 0 along the dim
    np.testing.assert_allclose(th.fft_r2c(col, 0).numpy(), np.fft.rfft(np.full(8, col[0].item())),
                               atol=1e-12)
    empty = th.fft_c2c(th.from_numpy(np.zeros((0, 8), np.complex64)), 1)
    assert empty.shape == (0, 8) and empty.dtype == th.complex64
    assert th.fft_r2c(th.from_numpy(np.zeros((3, 0, 6))), 2).shape == (3, 0, 4)


def test_input_left_intact(rng):
    a = _c(rng, (3, 64), np.complex64)
    keep = a.copy()
    th.fft_c2c(th.from_numpy(a), 1)
    spec = th.from_numpy(_c(rng, (3, 33), np.complex128))
    keep_spec = spec.numpy().copy()
    th.fft_c2r(spec, 1, 64)
    np.testing.assert_array_equal(a, keep)
    np.testing.assert_array_equal(spec.numpy(), keep_spec)


def test_supported_lengths():
    assert th.fft_supported(1) and th.fft_supported(61) and th.fft_supported(2 ** 20 * 3 ** 5)
    assert not th.fft_supported(67) and not th.fft_supported(0) and not th.fft_supported(2 * 67)
    assert th.fft_supported(122, real=True) and not th.fft_supported(134, real=True)
    assert th.fft_supported(61, real=True)
    assert th.fft_supported(2 ** 62) and th.fft_supported(3 ** 39)  # from the factors, at once
    with pytest.raises(RuntimeError, match="needs"):
        th.fft_c2r(th.zeros(8, dtype=th.complex64), 0, 2 ** 62)


def test_errors():
    z = th.zeros(8, dtype=th.complex64)
    r = th.zeros(8)
    with pytest.raises(TypeError, match="complex tensor"):
        th.fft_c2c(r, 0)
    with pytest.raises(TypeError, match="float32 or float64"):
        th.fft_r2c(z, 0)
    with pytest.raises(TypeError, match="float32 or float64"):
        th.fft_r2c(th.zeros(8, dtype=th.int64), 0)
    with pytest.raises(IndexError):
        th.fft_c2c(z, 2)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        th.fft_c2r(z, 0, 0)
    with pytest.raises(RuntimeError, match="needs 9 frequencies"):
        th.fft_c2r(z, 0, 16)
    with pytest.raises(NotImplementedError, match="length 67"):
        th.fft_c2c(th.zeros(67, dtype=th.complex128), 0)
    with pytest.raises(IndexError):
        th.fft_c2c(th.zeros((), dtype=th.complex128), 0)
