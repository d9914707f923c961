"""ember.fft: the transforms and the frequency helpers against NumPy, their
gradients (gradcheck/gradgradcheck in float64, complex ones through the
(re, im) pairs), dtypes, arguments and errors; stft/istft against the same
computation written with NumPy."""
import numpy as np
import pytest

import ember
import ember.fft
from ember.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies(n, d):
    f = ember.fft.fftfreq(n, d)
    assert f.dtype == ember.get_default_dtype()
    r = ember.fft.rfftfreq(n, d, dtype=ember.float64)
    assert r.dtype == ember.float64
    if n == 0:  # NumPy divides by zero; PyTorch gives empty and [nan], as here
        assert f.shape == (0,) and r.shape == (1,) and r.isnan().all()
        return
    np.testing.assert_allclose(f.numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(r.numpy(), np.fft.rfftfreq(n, d))


@pytest.mark.parametrize("shape,dim", [((5,), None), ((4, 7), None), ((4, 7), 1),
                                       ((3, 4, 5), (0, 2)), ((2, 3), ())])
def test_shifts(rng, shape, dim):
    a = rng.standard_normal(shape)
    t = ember.tensor(a)
    axes = dim if dim != () else ()
    np.testing.assert_array_equal(ember.fft.fftshift(t, dim).numpy(), np.fft.fftshift(a, axes))
    np.testing.assert_array_equal(ember.fft.ifftshift(t, dim).numpy(), np.fft.ifftshift(a, axes))
    np.testing.assert_array_equal(ember.fft.ifftshift(ember.fft.fftshift(t, dim), dim).numpy(), a)


def test_shift_gradient():
    x = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x: ember.fft.fftshift(x, 1), [x])


@pytest.fixture
def rng():
    return np.random.default_rng(7)


NORMS = (None, "backward", "ortho", "forward")


def _signal(rng, shape, complex_):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


def _noncontiguous(a):
    """The same values as a, in a tensor whose last dim has stride 2."""
    wide = np.zeros(a.shape + (2,), dtype=a.dtype)
    wide[..., 0] = a
    t = ember.tensor(wide)[..., 0]
    assert a.size < 2 or not t.is_contiguous()
    return t


ONE_D = [("fft", True, {}), ("fft", False, {"n": 5}), ("fft", True, {"n": 12}),
         ("ifft", True, {}), ("ifft", False, {"n": 7}), ("rfft", False, {}),
         ("rfft", False, {"n": 11}), ("rfft", False, {"n": 4}), ("irfft", True, {}),
         ("irfft", True, {"n": 9}), ("irfft", True, {"n": 3}), ("hfft", True, {}),
         ("hfft", True, {"n": 7}), ("ihfft", False, {}), ("ihfft", False, {"n": 5})]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,complex_,kw", ONE_D)
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("layout", ["contiguous", "noncontiguous"])
def test_one_dim_against_numpy(rng, name, complex_, kw, norm, dim, layout):
    a = _signal(rng, (6, 8), complex_)
    t = ember.tensor(a) if layout == "contiguous" else _noncontiguous(a)
    got = getattr(ember.fft, name)(t, dim=dim, norm=norm, **kw)
    want = getattr(np.fft, name)(a, axis=dim, norm=norm, **kw)
    assert got.dtype == (ember.float64 if name in ("irfft", "hfft") else ember.complex128)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)


N_D = [("fftn", True, {}), ("fftn", False, {"s": (3, 5)}), ("fftn", True, {"dim": (0, 2)}),
       ("ifftn", True, {"s": (4, -1)}), ("rfftn", False, {}), ("rfftn", False, {"dim": (2, 0)}),
       ("irfftn", True, {}), ("irfftn", True, {"s": (3, 4, 7)}), ("fft2", True, {}),
       ("ifft2", True, {"s": (2, 9)}), ("rfft2", False, {}), ("irfft2", True, {"s": (4, 6)})]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,complex_,kw", N_D)
def test_n_dims_against_numpy(rng, name, complex_, kw, norm):
    a = _signal(rng, (3, 4, 5), complex_)
    got = getattr(ember.fft, name)(ember.tensor(a), norm=norm, **kw)
    np_kw = {{"dim": "axes"}.get(k, k): v for k, v in kw.items()}
    if "s" in np_kw and "axes" not in np_kw and not name.endswith("2"):
        np_kw["axes"] = tuple(range(3 - len(np_kw["s"]), 3))
    want = getattr(np.fft, name)(a, norm=norm, **np_kw)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)


DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


@pytest.mark.parametrize("norm", NORMS)
def test_hermitian_n_dims_against_definitions(rng, norm):
    """hfft2/hfftn and ihfft2/ihfftn (NumPy has only the 1-d ones) as PyTorch
    defines them: irfftn of the conjugate with the other normalisation, and
    the conjugate of rfftn with the other normalisation."""
    c = _signal(rng, (3, 4, 5), True)
    a = _signal(rng, (3, 4, 5), False)
    t, u = ember.tensor(c), ember.tensor(a)
    np.testing.assert_allclose(ember.fft.hfftn(t, norm=norm).numpy(),
                               np.fft.irfftn(c.conj(), norm=DUAL[norm]), atol=1e-10)
    np.testing.assert_allclose(ember.fft.hfft2(t, s=(3, 6), norm=norm).numpy(),
                               np.fft.irfft2(c.conj(), s=(3, 6), norm=DUAL[norm]), atol=1e-10)
    np.testing.assert_allclose(ember.fft.ihfftn(u, dim=(0, 1), norm=norm).numpy(),
                               np.fft.rfftn(a, axes=(0, 1), norm=DUAL[norm]).conj(), atol=1e-10)
    np.testing.assert_allclose(ember.fft.ihfft2(u, norm=norm).numpy(),
                               np.fft.rfft2(a, norm=DUAL[norm]).conj(), atol=1e-10)


@pytest.mark.parametrize("name,complex_", [("fft", True), ("rfft", False), ("irfft", True),
                                           ("fftn", True), ("rfftn", False)])
def test_single_precision_and_promotion(rng, name, complex_):
    a = _signal(rng, (4, 6), complex_).astype(np.complex64 if complex_ else np.float32)
    got = getattr(ember.fft, name)(ember.tensor(a))
    want = getattr(np.fft, name)(a.astype(np.complex128 if complex_ else np.float64))
    assert got.dtype == (ember.float32 if name == "irfft" else ember.complex64)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    # integers and bools: the default float dtype first
    ints = ember.arange(8)
    assert ember.fft.fft(ints).dtype == ember.complex64
    assert ember.fft.rfft(ints).dtype == ember.complex64
    np.testing.assert_allclose(ember.fft.rfft(ints).numpy(), np.fft.rfft(np.arange(8)),
                               rtol=1e-5, atol=1e-4)


def test_batch_of_many_and_round_trips(rng):
    a = rng.standard_normal((64, 2, 30))
    t = ember.tensor(a)
    np.testing.assert_allclose(ember.fft.irfft(ember.fft.rfft(t), n=30).numpy(), a, atol=1e-12)
    np.testing.assert_allclose(ember.fft.ifftn(ember.fft.fftn(t)).real.numpy(), a, atol=1e-12)
    np.testing.assert_allclose(ember.fft.ihfft(ember.fft.hfft(ember.fft.ihfft(t))).numpy(),
                               np.fft.ihfft(a), atol=1e-12)


def test_empty_batches_and_zero_dims():
    x = ember.zeros(0, 8)
    assert ember.fft.fft(x).shape == (0, 8)
    assert ember.fft.rfft(x).shape == (0, 5)
    assert ember.fft.fftn(ember.ones(3, 4), dim=()).shape == (3, 4)
    y = ember.tensor(3.0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.fft.fft(y)


def test_errors():
    x = ember.randn(4, 6)
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "bad"'):
        ember.fft.fft(x, norm="bad")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        ember.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        ember.fft.irfft(ember.fft.rfft(x)[:, :1])
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor, but got "
                                           "ComplexFloat"):
        ember.fft.rfft(ember.fft.fft(x))
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.fft.fft(x, dim=2)
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        ember.fft.fftn(x, dim=(0, -2))
    with pytest.raises(RuntimeError, match="dim and shape arguments must have the same length"):
        ember.fft.fftn(x, s=(2,), dim=(0, 1))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        ember.fft.fft(x.half())
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.fft.fft([1.0, 2.0])
    assert x.isfinite().all()  # the input is untouched


def test_out_argument(rng):
    a = rng.standard_normal(8)
    out = ember.empty(5, dtype=ember.complex128)
    r = ember.fft.rfft(ember.tensor(a), out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), np.fft.rfft(a))


GRADIENTS = [
    ("fft", True, {}), ("fft", False, {"n": 6, "norm": "ortho"}), ("ifft", True, {"n": 9}),
    ("rfft", False, {}), ("rfft", False, {"n": 7, "norm": "forward"}), ("rfft", False, {"n": 3}),
    ("irfft", True, {}), ("irfft", True, {"n": 7, "norm": "ortho"}), ("irfft", True, {"n": 2}),
    ("hfft", True, {"n": 5}), ("ihfft", False, {"norm": "forward"}), ("fft2", True, {}),
    ("rfftn", False, {"s": (3, 4)}), ("irfftn", True, {}), ("irfft2", True, {"s": (2, 7)}),
    ("hfftn", True, {}), ("ihfftn", False, {"norm": "ortho"}), ("ifftn", False, {"dim": 0})]


@pytest.mark.parametrize("name,complex_,kw", GRADIENTS)
def test_gradients(rng, name, complex_, kw):
    x = ember.tensor(_signal(rng, (3, 5), complex_), requires_grad=True)
    f = getattr(ember.fft, name)
    assert gradcheck(lambda x: f(x, **kw), [x])
    assert gradgradcheck(lambda x: f(x, **kw), [x])


def test_gradient_of_a_real_loss_matches_pytorch_convention(rng):
    """For L = sum |fft(z)|^2 = n sum |z|^2 the gradient is 2 n z (PyTorch's
    dL/dx + i dL/dy)."""
    c = _signal(rng, 8, True)
    z = ember.tensor(c, requires_grad=True)
    ember.fft.fft(z).abs().pow(2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * 8 * c, rtol=1e-10)


def _stft_reference(x, n_fft, hop, window, center):
    if center:
        x = np.pad(x, n_fft // 2, mode="reflect")
    frames = [x[i:i + n_fft] * window for i in range(0, len(x) - n_fft + 1, hop)]
    return np.fft.rfft(np.array(frames), axis=-1).T


@pytest.mark.parametrize("n_fft,hop,center", [(16, 4, True), (15, 5, False), (32, 8, True)])
def test_stft_against_numpy_and_istft_inverts(rng, n_fft, hop, center):
    a = rng.standard_normal(200)
    w = ember.hann_window(n_fft, dtype=ember.float64)
    spec = ember.stft(ember.tensor(a), n_fft, hop, window=w, center=center,
                      return_complex=True)
    np.testing.assert_allclose(spec.numpy(), _stft_reference(a, n_fft, hop, w.numpy(), center),
                               atol=1e-10)
    batch = ember.stft(ember.tensor(np.stack([a, a])), n_fft, hop, window=w, center=center,
                       return_complex=True)
    np.testing.assert_allclose(batch[1].numpy(), spec.numpy())
    if center:
        back = ember.istft(spec, n_fft, hop, window=w, length=200)
        np.testing.assert_allclose(back.numpy(), a, atol=1e-10)
    pairs = ember.stft(ember.tensor(a), n_fft, hop, window=w, center=center,
                       return_complex=False)
    np.testing.assert_array_equal(pairs.numpy(), ember.view_as_real(spec).numpy())


def test_stft_gradients(rng):
    x = ember.tensor(rng.standard_normal(40), requires_grad=True)
    w = ember.hann_window(8, dtype=ember.float64)
    assert gradcheck(lambda x: ember.stft(x, 8, 2, window=w, return_complex=True), [x])
    assert gradcheck(lambda x: ember.istft(ember.stft(x, 8, 2, window=w, return_complex=True),
                                           8, 2, window=w, length=40), [x])


def test_stft_errors():
    x = ember.randn(100)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        ember.stft(x, 16)
    with pytest.raises(RuntimeError, match="expected a 1D or 2D tensor"):
        ember.stft(x.reshape(2, 5, 10), 4, return_complex=True)
    with pytest.raises(RuntimeError, match="window with size"):
        ember.stft(x, 16, window=ember.ones(8), return_complex=True)
    with pytest.raises(RuntimeError, match="requires a complex-valued input"):
        ember.istft(x.reshape(10, 10), 18)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        spec = ember.stft(x, 16, 4, window=ember.hann_window(16), center=False,
                          return_complex=True)
        ember.istft(spec, 16, 4, window=ember.hann_window(16), center=False)


def _child_rfft(q):
    x = ember.ones(8, 1 << 13)
    q.put(float(ember.fft.rfft(x).abs().sum()))


def test_batches_split_over_threads_and_a_forked_child(rng):
    """On NumPy's path (a length libTH has no kernel for: 4087 = 61 x 67),
    batches of 2^15 elements or more are split over ember's threads (NumPy
    releases the GIL); the values are the same, and a child forked after the
    pool started transforms too (the pool is not inherited)."""
    import multiprocessing as mp
    a = rng.standard_normal((6, 3, 4087)).astype(np.float32)
    old = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        t = ember.tensor(a)
        np.testing.assert_allclose(ember.fft.rfft(t).numpy(), np.fft.rfft(a.astype(np.float64)),
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(ember.fft.fft(t, dim=1).numpy(),
                                   np.fft.fft(a.astype(np.float64), axis=1), rtol=1e-4, atol=1e-3)
        back = ember.fft.irfft(ember.fft.rfft(t), n=4087)
        assert back.dtype == ember.float32
        np.testing.assert_allclose(back.numpy(), a, atol=1e-4)
        q = mp.get_context("fork").Queue()
        p = mp.get_context("fork").Process(target=_child_rfft, args=(q,))
        p.start()
        got = q.get(timeout=60)
        p.join(60)
        assert p.exitcode == 0 and got == 8 * 8192.0
    finally:
        ember.set_num_threads(old)


def test_library_lengths_do_not_use_numpy(rng, monkeypatch):
    """Lengths whose prime factors are <= 61 run on libTH's FFT (one dim
    after another); NumPy's transforms are not called."""
    def refuse(*args, **kwargs):
        raise AssertionError("numpy.fft called")
    a = _signal(rng, (4, 6, 10), True)
    want = {"fftn": np.fft.fftn(a, axes=(0, 2), norm="ortho"),
            "rfftn": np.fft.rfftn(a.real, axes=(0, 2)),
            "irfftn": np.fft.irfftn(a, s=(4, 18), axes=(0, 2), norm="forward")}
    for name in ("fftn", "ifftn", "rfftn", "irfftn"):
        monkeypatch.setattr(np.fft, name, refuse)
    t = ember.tensor(a)
    np.testing.assert_allclose(ember.fft.fftn(t, dim=(0, 2), norm="ortho").numpy(),
                               want["fftn"], atol=1e-12)
    np.testing.assert_allclose(ember.fft.rfftn(t.real, dim=(0, 2)).numpy(), want["rfftn"],
                               atol=1e-12)
    np.testing.assert_allclose(ember.fft.irfftn(t, s=(4, 18), dim=(0, 2), norm="forward").numpy(),
                               want["irfftn"], atol=1e-12)
    x = ember.tensor(a.real, requires_grad=True)
    assert gradcheck(lambda x: ember.fft.rfft2(x, dim=(0, 2)).abs(), [x])


@pytest.mark.parametrize("n", [67, 134, 4087])
def test_lengths_with_a_large_prime_factor(rng, n):
    """Lengths with a prime factor above 61 go through NumPy's pocketfft:
    the same results and gradients."""
    a = _signal(rng, (3, n), True)
    t = ember.tensor(a)
    np.testing.assert_allclose(ember.fft.fft(t).numpy(), np.fft.fft(a), atol=1e-10)
    np.testing.assert_allclose(ember.fft.rfft(t.real).numpy(), np.fft.rfft(a.real), atol=1e-10)
    np.testing.assert_allclose(ember.fft.irfft(t, n=n).numpy(), np.fft.irfft(a, n=n), atol=1e-12)
    if n < 200:
        x = ember.tensor(a.real, requires_grad=True)
        assert gradcheck(lambda x: ember.fft.rfft(x), [x])
        assert gradgradcheck(lambda x: ember.fft.irfft(ember.fft.fft(x), n=n), [x])
