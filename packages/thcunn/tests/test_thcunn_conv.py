"""conv1d, conv3d and conv_transpose2d of ember.thcunn against ember.thnn's
(the CPU kernels are the reference) on fresh random float64 and float32
data: forward and both gradients, the options, bias and gradients left
out, non-contiguous inputs, empty batches, the errors (same exception and
message as libTHNN), and ember.nn's layers on CUDA tensors through these
kernels.  Runs on a GPU or on libTHC's emulated device."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device
DTYPES = [("float64", 1e-10), ("float32", 1e-4)]


def pair(shape, rng, dtype="float64", perm=None):
    """The same random values as an ember.th and an ember.thc tensor; with
    perm, the thc tensor is a non-contiguous permuted view of other memory
    (the th one a contiguous copy of the same values)."""
    a = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if perm is None:
        return th.from_numpy(a.copy()), thc.from_numpy(a.copy())
    inv = np.argsort(perm)
    g = thc.from_numpy(np.ascontiguousarray(a.transpose(inv))).permute(*perm)
    assert not g.is_contiguous() and tuple(g.shape) == a.shape
    return th.from_numpy(a.copy()), g


def same(cpu, gpu, tol):
    if cpu is None or gpu is None:
        assert cpu is None and gpu is None
        return
    c, g = cpu.numpy(), gpu.cpu().numpy()
    assert c.shape == g.shape and c.dtype == g.dtype
    assert np.allclose(c, g, rtol=tol, atol=tol), np.abs(c - g).max()


def check_family(name, x_shape, w_shape, n_bias, opts, dtype, tol, rng, bias=True,
                 perm=None):
    """forward, backward_input and backward_params (all need_* combinations)
    of `name` on both packages; opts are the positional options after bias."""
    xc, xg = pair(x_shape, rng, dtype, perm)
    wc, wg = pair(w_shape, rng, dtype)
    bc, bg = pair((n_bias,), rng, dtype) if bias else (None, None)
    fc, fg = getattr(thnn, name + "_forward"), getattr(k, name + "_forward")
    out_c, out_g = fc(xc, wc, bc, *opts), fg(xg, wg, bg, *opts)
    same(out_c, out_g, tol)
    gc, gg = pair(tuple(out_c.shape), rng, dtype, perm if perm and len(perm) == len(x_shape)
                  else None)
    bi = name + "_backward_input"
    same(getattr(thnn, bi)(gc, tuple(xc.shape), wc, *opts),
         getattr(k, bi)(gg, tuple(xg.shape), wg, *opts), tol)
    bp = name + "_backward_params"
    for nw, nb in [(True, True), (True, False), (False, True)]:
        rc = getattr(thnn, bp)(gc, xc, tuple(wc.shape), *opts, need_weight=nw, need_bias=nb)
        rg = getattr(k, bp)(gg, xg, tuple(wg.shape), *opts, need_weight=nw, need_bias=nb)
        for a, b in zip(rc, rg):
            same(a, b, tol * 10)
    return out_g


# ---- conv1d -------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2), ((3,), (1,), (2,), 4), (2, 3, 1, 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_conv1d(dtype, tol, stride, padding, dilation, groups, bias):
    rng = np.random.default_rng(10)
    check_family("conv1d", (3, 4, 11), (8, 4 // groups, 3), 8,
                 (stride, padding, dilation, groups), dtype, tol, rng, bias)


def test_conv1d_non_contiguous_and_empty_batch():
    rng = np.random.default_rng(11)
    check_family("conv1d", (2, 3, 9), (4, 3, 2), 4, (1, 1, 1, 1), "float64", 1e-10, rng,
                 perm=(0, 2, 1))
    out = check_family("conv1d", (0, 3, 9), (4, 3, 2), 4, (2, 0, 1, 1), "float64", 1e-10, rng)
    assert tuple(out.shape) == (0, 4, 4)


# ---- conv3d -------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), ((1, 2, 1), (1, 0, 2), (2, 1, 1), 2), (1, 1, (1, 2, 2), 4),
    ([2], [0], [1], 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_conv3d(dtype, tol, stride, padding, dilation, groups, bias):
    rng = np.random.default_rng(20)
    check_family("conv3d", (2, 4, 6, 7, 5), (8, 4 // groups, 3, 2, 3), 8,
                 (stride, padding, dilation, groups), dtype, tol, rng, bias)


def test_conv3d_non_contiguous_1x1_and_degenerate():
    rng = np.random.default_rng(21)
    check_family("conv3d", (2, 3, 4, 5, 6), (2, 3, 2, 2, 2), 2, (1, 0, 1, 1), "float64",
                 1e-10, rng, perm=(0, 4, 2, 3, 1))
    check_family("conv3d", (3, 2, 1, 4, 4), (5, 2, 1, 1, 1), 5, (1, 0, 1, 1), "float32",
                 1e-4, rng)
    # kernel as large as the padded input: one output position
    out = check_family("conv3d", (1, 2, 3, 3, 3), (2, 2, 5, 5, 5), 2, (1, 1, 1, 1),
                       "float64", 1e-10, rng)
    assert tuple(out.shape) == (1, 2, 1, 1, 1)
    out = check_family("conv3d", (0, 2, 3, 4, 4), (4, 2, 2, 2, 2), 4, (1, 0, 1, 1),
                       "float64", 1e-10, rng)
    assert tuple(out.shape) == (0, 4, 2, 3, 3)


def test_conv3d_no_input_channels_gives_the_bias():
    rng = np.random.default_rng(22)
    check_family("conv3d", (2, 0, 3, 3, 3), (3, 0, 2, 2, 2), 3, (1, 0, 1, 1), "float64",
                 1e-10, rng)


# ---- conv_transpose2d ------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), ((2, 3), (1, 0), (1, 2), 1, 2),
    (1, 1, 1, 2, 1),                     # output_padding >= stride, < dilation
    ((1, 2), 2, (0, 1), (2, 1), 4), (3, 0, 0, 2, 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose2d(dtype, tol, stride, padding, output_padding, dilation, groups, bias):
    rng = np.random.default_rng(30)
    check_family("conv_transpose2d", (3, 4, 5, 6), (4, 8 // groups, 3, 2), 8,
                 (stride, padding, output_padding, dilation, groups), dtype, tol, rng, bias)


def test_conv_transpose2d_non_contiguous_and_degenerate():
    rng = np.random.default_rng(31)
    check_family("conv_transpose2d", (2, 3, 4, 5), (3, 2, 2, 2), 2, (2, 0, 0, 1, 1),
                 "float64", 1e-10, rng, perm=(0, 3, 2, 1))
    out = check_family("conv_transpose2d", (0, 3, 4, 5), (3, 2, 2, 2), 2, (1, 0, 0, 1, 1),
                       "float64", 1e-10, rng)
    assert tuple(out.shape) == (0, 2, 5, 6)
    check_family("conv_transpose2d", (2, 0, 3, 3), (0, 3, 2, 2), 3, (1, 0, 0, 1, 1),
                 "float64", 1e-10, rng)
    check_family("conv_transpose2d", (1, 2, 1, 1), (2, 3, 1, 1), 3, (1, 0, 0, 1, 1),
                 "float32", 1e-4, rng)


# ---- errors: libTHNN's exception type and message ---------------------------------
def same_error(call_cpu, call_gpu, exc, match):
    with pytest.raises(exc, match=match) as ec:
        call_cpu()
    with pytest.raises(exc, match=match) as eg:
        call_gpu()
    assert str(ec.value) == str(eg.value)


def both(shape, rng, dtype="float64"):
    return pair(shape, rng, dtype)


@pytest.mark.parametrize("case", ["input_2d", "weight_4d", "grad_input_2d", "grad_weight_2d"])
def test_conv1d_wants_3d_tensors(case):
    rng = np.random.default_rng(40)
    (xc, xg), (wc, wg) = both((2, 3, 8), rng), both((4, 3, 3), rng)
    (gc, gg) = both((2, 4, 6), rng)
    if case == "input_2d":
        (xc, xg) = both((3, 8), rng)
        cpu, gpu = (lambda: thnn.conv1d_forward(xc, wc)), (lambda: k.conv1d_forward(xg, wg))
    elif case == "weight_4d":
        (wc, wg) = both((4, 3, 1, 3), rng)
        cpu, gpu = (lambda: thnn.conv1d_forward(xc, wc)), (lambda: k.conv1d_forward(xg, wg))
    elif case == "grad_input_2d":
        cpu = lambda: thnn.conv1d_backward_input(gc, (3, 8), wc)          # noqa: E731
        gpu = lambda: k.conv1d_backward_input(gg, (3, 8), wg)             # noqa: E731
    else:
        cpu = lambda: thnn.conv1d_backward_params(gc, xc, (4, 3))         # noqa: E731
        gpu = lambda: k.conv1d_backward_params(gg, xg, (4, 3))            # noqa: E731
    same_error(cpu, gpu, RuntimeError, r"conv1d: expected a 3-D tensor but got \[")


def test_conv1d_errors_of_the_2d_kernel_name_the_sizes():
    rng = np.random.default_rng(41)
    (xc, xg), (wc, wg) = both((2, 3, 8), rng), both((4, 2, 3), rng)
    with pytest.raises(RuntimeError, match=r"expected input\[2, 3, 1, 8\] to have 2 channels"):
        thnn.conv1d_forward(xc, wc)
    with pytest.raises(RuntimeError, match=r"expected input\[2, 3, 1, 8\] to have 2 channels"):
        k.conv1d_forward(xg, wg)


CONV3D_ERRORS = [
    # (input shape, weight shape, bias shape, options, exception, message)
    ((2, 4, 5, 5, 5), (6, 3, 3, 3, 3), None, (1, 0, 1, 1), RuntimeError,
     r"Given groups=1, weight of size \[6, 3, 3, 3, 3\], expected input\[2, 4, 5, 5, 5\] to "
     r"have 3 channels, but got 4 channels instead"),
    ((4, 5, 5, 5), (6, 4, 3, 3, 3), None, (1, 0, 1, 1), RuntimeError,       # unbatched
     r"Expected 5-dimensional input for 5-dimensional weight \[6, 4, 3, 3, 3\], but got "
     r"4-dimensional input of size \[4, 5, 5, 5\] instead"),
    ((2, 4, 5, 5, 5), (6, 4, 3, 3), None, (1, 0, 1, 1), RuntimeError,
     r"conv3d_forward: expected weight to be 5-D, but got weight of size \[6, 4, 3, 3\]"),
    ((2, 4, 2, 5, 5), (6, 4, 3, 3, 3), None, (1, 0, 1, 1), RuntimeError,
     r"Calculated padded input size per channel: \(2 x 5 x 5\). Kernel size: \(3 x 3 x 3\)"),
    ((2, 4, 5, 5, 5), (6, 2, 3, 3, 3), None, (1, 0, 1, 4), RuntimeError,
     r"conv3d_forward: out_channels \(6\) must be divisible by groups \(4\)"),
    ((2, 4, 5, 5, 5), (6, 4, 3, 3, 3), (5,), (1, 0, 1, 1), RuntimeError,
     r"conv3d_forward: expected bias of shape \[6\] but got \[5\]"),
    ((2, 4, 5, 5, 5), (6, 4, 3, 3, 3), None, ((1, 0, 1), 0, 1, 1), RuntimeError,
     "conv3d_forward: non-positive stride is not supported"),
    ((2, 4, 5, 5, 5), (6, 4, 3, 3, 3), None, (1, -1, 1, 1), RuntimeError,
     "conv3d_forward: negative padding is not supported"),
    ((2, 4, 5, 5, 5), (6, 4, 3, 3, 3), None, (1, 0, 0, 1), RuntimeError,
     "conv3d_forward: dilation should be greater than zero"),
    ((2, 4, 5, 5, 5), (6, 4, 3, 3, 3), None, (1, 0, 1, 0), RuntimeError,
     "conv3d_forward: non-positive groups is not supported"),
]


@pytest.mark.parametrize("x_shape,w_shape,b_shape,opts,exc,match", CONV3D_ERRORS)
def test_conv3d_errors(x_shape, w_shape, b_shape, opts, exc, match):
    rng = np.random.default_rng(42)
    (xc, xg), (wc, wg) = both(x_shape, rng), both(w_shape, rng)
    bc, bg = both(b_shape, rng) if b_shape else (None, None)
    same_error(lambda: thnn.conv3d_forward(xc, wc, bc, *opts),
               lambda: k.conv3d_forward(xg, wg, bg, *opts), exc, match)


def test_conv3d_gradient_errors():
    rng = np.random.default_rng(43)
    (xc, xg), (wc, wg) = both((2, 4, 5, 5, 5), rng), both((6, 4, 3, 3, 3), rng)
    (gc, gg) = both((2, 6, 3, 3, 4), rng)
    same_error(lambda: thnn.conv3d_backward_input(gc, (2, 4, 5, 5, 5), wc),
               lambda: k.conv3d_backward_input(gg, (2, 4, 5, 5, 5), wg), RuntimeError,
               r"conv3d_backward_input: expected grad_output of shape \[2, 6, 3, 3, 3\] but "
               r"got \[2, 6, 3, 3, 4\]")
    (gc, gg) = both((3, 6, 3, 3, 3), rng)
    same_error(lambda: thnn.conv3d_backward_params(gc, xc, (6, 4, 3, 3, 3)),
               lambda: k.conv3d_backward_params(gg, xg, (6, 4, 3, 3, 3)), RuntimeError,
               r"conv3d_backward_params: grad_output \[3, 6, 3, 3, 3\] \(Double\) and input "
               r"\[2, 4, 5, 5, 5\] \(Double\) must have one dtype and batch size")
    (gc, gg) = both((2, 6, 3, 3), rng)
    same_error(lambda: thnn.conv3d_backward_params(gc, xc, (6, 4, 3, 3, 3)),
               lambda: k.conv3d_backward_params(gg, xg, (6, 4, 3, 3, 3)), RuntimeError,
               r"expected 5-D input and grad_output, but got input of size \[2, 4, 5, 5, 5\] "
               r"and grad_output of size \[2, 6, 3, 3\]")


def test_mixed_dtypes_and_cpu_tensors_are_refused():
    rng = np.random.default_rng(44)
    (xc, xg) = both((2, 4, 5, 5, 5), rng)
    (wc, wg) = both((6, 4, 3, 3, 3), rng, "float32")
    same_error(lambda: thnn.conv3d_forward(xc, wc), lambda: k.conv3d_forward(xg, wg),
               RuntimeError, r"Input type \(Double\) and weight type \(Float\) should be the same")
    (wc, wg) = both((4, 2, 3, 3), rng, "float32")
    (xc, xg) = both((2, 4, 5, 5), rng)
    same_error(lambda: thnn.conv_transpose2d_forward(xc, wc),
               lambda: k.conv_transpose2d_forward(xg, wg), RuntimeError,
               r"Input type \(Double\) and weight type \(Float\) should be the same")
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.conv3d_forward(th.empty(2, 4, 5, 5, 5), wg)
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.conv1d_forward(xg.cpu(), wg)
    xi = thc.from_numpy(np.ones((2, 4, 5, 5), dtype=np.int64))
    with pytest.raises(TypeError, match="float32 or float64"):
        k.conv_transpose2d_forward(xi, wg)


CONVT_ERRORS = [
    ((2, 4, 5, 5), (3, 2, 3, 3), (1, 0, 0, 1, 1),
     r"Given transposed=1, weight of size \[3, 2, 3, 3\], expected input\[2, 4, 5, 5\] to have "
     r"3 channels, but got 4 channels instead"),
    ((2, 4, 5, 5), (4, 2, 3, 3), (2, 0, (2, 0), 1, 1),
     r"conv_transpose2d_forward: output padding must be smaller than either stride or "
     r"dilation, but got output_padding_height: 2 output_padding_width: 0 stride_height: 2 "
     r"stride_width: 2 dilation_height: 1 dilation_width: 1"),
    ((2, 4, 5, 5), (4, 2, 3, 3), (1, 0, 0, 1, 3),
     r"conv_transpose2d_forward: in_channels \(4\) must be divisible by groups \(3\)"),
    ((2, 4, 1, 1), (4, 2, 2, 2), (1, 2, 0, 1, 1),
     r"Given input size per channel: \(1 x 1\). Calculated output size per channel: \(-2 x -2\)"
     r". Output size is too small"),
    ((4, 5, 5), (4, 2, 3, 3), (1, 0, 0, 1, 1),                              # unbatched
     r"Expected 4-dimensional input for 4-dimensional weight \[4, 2, 3, 3\], but got "
     r"3-dimensional input of size \[4, 5, 5\] instead"),
    ((2, 4, 5, 5), (4, 2, 3, 3), (1, -1, 0, 1, 1),
     "conv_transpose2d_forward: negative padding is not supported"),
]


@pytest.mark.parametrize("x_shape,w_shape,opts,match", CONVT_ERRORS)
def test_conv_transpose2d_errors(x_shape, w_shape, opts, match):
    rng = np.random.default_rng(45)
    (xc, xg), (wc, wg) = both(x_shape, rng), both(w_shape, rng)
    same_error(lambda: thnn.conv_transpose2d_forward(xc, wc, None, *opts),
               lambda: k.conv_transpose2d_forward(xg, wg, None, *opts), RuntimeError, match)


def test_conv_transpose2d_gradient_errors():
    rng = np.random.default_rng(46)
    (xc, xg), (wc, wg) = both((2, 4, 5, 5), rng), both((4, 2, 3, 3), rng)
    (gc, gg) = both((2, 2, 7, 6), rng)
    same_error(lambda: thnn.conv_transpose2d_backward_input(gc, (2, 4, 5, 5), wc),
               lambda: k.conv_transpose2d_backward_input(gg, (2, 4, 5, 5), wg), RuntimeError,
               r"conv_transpose2d_backward_input: expected grad_output of shape "
               r"\[2, 2, 7, 7\] but got \[2, 2, 7, 6\]")
    same_error(lambda: thnn.conv_transpose2d_backward_params(gc, xc, (4, 2, 3, 3)),
               lambda: k.conv_transpose2d_backward_params(gg, xg, (4, 2, 3, 3)), RuntimeError,
               r"conv_transpose2d_backward_params: expected grad_output of shape "
               r"\[2, 2, 7, 7\] but got \[2, 2, 7, 6\]")


def test_nothing_written_on_error():
    # a failed call leaves its caller's tensors as they were
    rng = np.random.default_rng(47)
    (_, xg), (_, wg) = both((2, 4, 5, 5), rng), both((3, 2, 3, 3), rng)
    before = xg.cpu().numpy().copy(), wg.cpu().numpy().copy()
    with pytest.raises(RuntimeError):
        k.conv_transpose2d_forward(xg, wg)
    assert np.array_equal(before[0], xg.cpu().numpy())
    assert np.array_equal(before[1], wg.cpu().numpy())


# ---- ember.nn's layers on CUDA tensors through these kernels ------------------------
@pytest.mark.parametrize("layer,kw,shape,kernel", [
    ("Conv3d", dict(in_channels=4, out_channels=6, kernel_size=(2, 3, 2), stride=(1, 2, 1),
                    padding=1, dilation=(1, 1, 2), groups=2), (2, 4, 5, 6, 7), "conv3d"),
    ("Conv3d", dict(in_channels=2, out_channels=3, kernel_size=2, bias=False), (2, 4, 4, 4),
     "conv3d"),                                                             # unbatched
    ("ConvTranspose2d", dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1,
                             output_padding=1, groups=2, dilation=1), (2, 4, 5, 6),
     "conv_transpose2d"),
    ("ConvTranspose2d", dict(in_channels=2, out_channels=3, kernel_size=(2, 3), dilation=2,
                             output_padding=1, bias=False), (2, 4, 4), "conv_transpose2d"),
])
def test_nn_layers_on_cuda_match_the_cpu(monkeypatch, layer, kw, shape, kernel):
    ember = pytest.importorskip("ember")
    nn = pytest.importorskip("ember.nn")
    if not ember.cuda.is_available():
        pytest.skip("ember has no CUDA device")
    from ember.nn import _kernels
    _kernels.reset()
    calls = []
    for suffix in ("_forward", "_backward_input", "_backward_params"):
        real = getattr(k, kernel + suffix)
        monkeypatch.setattr(k, kernel + suffix,
                            lambda *a, _r=real, _n=suffix, **kk: calls.append(_n) or _r(*a, **kk))
    ember.manual_seed(0)
    m = getattr(nn, layer)(**kw).double()
    x = ember.randn(*shape, dtype=ember.float64, requires_grad=True)
    m(x).pow(2).sum().backward()
    grads = [x.grad.numpy()] + [p.grad.numpy() for p in m.parameters()]
    mg = m.cuda()
    for p in mg.parameters():
        p.grad = None
    xg = x.detach().cuda().requires_grad_()
    out = mg(xg)
    out.pow(2).sum().backward()
    assert calls == ["_forward", "_backward_input", "_backward_params"]
    got = [xg.grad.cpu().numpy()] + [p.grad.cpu().numpy() for p in mg.parameters()]
    for a, b in zip(grads, got):
        assert np.allclose(a, b, rtol=1e-10, atol=1e-10), np.abs(a - b).max()
    _kernels.reset()


# ---- conv2d ----------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), ((2, 1), (1, 2), (2, 1), 2), (1, 1, 1, 4)])
def test_conv2d(dtype, tol, stride, padding, dilation, groups):
    rng = np.random.default_rng(0)
    xc, xg = pair((3, 4, 9, 8), rng, dtype)
    wc, wg = pair((8, 4 // groups, 3, 3), rng, dtype)
    bc, bg = pair((8,), rng, dtype)
    out_c = thnn.conv2d_forward(xc, wc, bc, stride, padding, dilation, groups)
    out_g = k.conv2d_forward(xg, wg, bg, stride, padding, dilation, groups)
    same(out_c, out_g, tol)
    gc, gg = pair(tuple(out_c.shape), rng, dtype)
    same(thnn.conv2d_backward_input(gc, xc.shape, wc, stride, padding, dilation, groups),
         k.conv2d_backward_input(gg, xg.shape, wg, stride, padding, dilation, groups), tol)
    for a, b in zip(thnn.conv2d_backward_params(gc, xc, wc.shape, stride, padding, dilation,
                                                groups),
                    k.conv2d_backward_params(gg, xg, wg.shape, stride, padding, dilation,
                                             groups)):
        same(a, b, tol * 10)


def test_conv2d_errors_name_the_sizes():
    rng = np.random.default_rng(1)
    _, x = pair((2, 3, 5, 5), rng)
    _, w = pair((4, 2, 3, 3), rng)
    with pytest.raises(RuntimeError, match=r"expected input\[2, 3, 5, 5\] to have 2 channels"):
        k.conv2d_forward(x, w)
    _, wi = pair((4, 3, 3, 3), rng, "float32")
    with pytest.raises(RuntimeError, match="same dtype"):
        k.conv2d_forward(x, wi)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_conv2d_weight_gradient_of_a_large_batch(dtype, tol, groups):
    """Many samples in one chunk: their weight gradients summed by one
    product over the chunk's samples and positions."""
    rng = np.random.default_rng(5)
    xc, xg = pair((24, 8, 6, 5), rng, dtype)
    gc, gg = pair((24, 12, 6, 5), rng, dtype)
    for a, b in zip(thnn.conv2d_backward_params(gc, xc, (12, 8 // groups, 3, 3), 1, 1, 1, groups),
                    k.conv2d_backward_params(gg, xg, (12, 8 // groups, 3, 3), 1, 1, 1, groups)):
        same(a, b, tol * 10)


def test_conv2d_weight_gradient_temporaries_stay_near_the_columns():
    """The weight gradient's temporaries are about the columns' size, not
    one weight per sample (64 x 64 x 576 here)."""
    rng = np.random.default_rng(6)
    n, c, o, hw = 64, 64, 64, 4
    _, x = pair((n, c, hw, hw), rng)
    _, g = pair((n, o, hw, hw), rng)
    thc.synchronize()
    thc.reset_peak_memory_stats()
    base = thc.memory_allocated()
    k.conv2d_backward_params(g, x, (o, c, 3, 3), 1, 1, 1, 1, need_bias=False)
    peak = thc.max_memory_allocated() - base
    cols = n * c * 9 * hw * hw * 8
    per_sample_weights = n * o * c * 9 * 8
    assert peak < 3 * cols < per_sample_weights, (peak, cols)
