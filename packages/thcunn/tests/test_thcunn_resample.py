"""ember.thcunn's upsampling (nearest, bilinear) and reflection/replication
padding against ember.thnn's (the CPU kernels are the reference) on fresh
random float64 and float32 data, batched and unbatched, on contiguous and
strided inputs; their errors; and ember.nn's kernel specs bound to them.
Runs on a GPU or on libTHC's emulated device."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k
from ember.thcunn._lib import check, ffi, lib

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device
DTYPES = [("float64", 1e-10), ("float32", 1e-4)]


def pair(shape, rng, dtype="float64", strided=False):
    """The same random values (never zeros) as an ember.th and an ember.thc
    tensor; strided: the thc one is a transposed (non-contiguous) view."""
    a = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    a = a.astype(dtype)
    if strided and a.ndim >= 2:
        base = thc.from_numpy(np.ascontiguousarray(a.swapaxes(-1, -2)))
        g = base.transpose(a.ndim - 2, a.ndim - 1)
        assert not g.is_contiguous() or min(shape[-2:]) == 1
    else:
        g = thc.from_numpy(a.copy())
    return th.from_numpy(a.copy()), g


def same(cpu, gpu, tol):
    c, g = cpu.numpy(), gpu.cpu().numpy()
    assert c.shape == g.shape and c.dtype == g.dtype, (c.shape, g.shape, c.dtype, g.dtype)
    assert np.allclose(c, g, rtol=tol, atol=tol), np.abs(c - g).max()


def raises_like(exc, match, cpu_call, gpu_call):
    """Both packages raise the same exception type, the GPU one with `match`."""
    with pytest.raises(exc):
        cpu_call()
    with pytest.raises(exc, match=match):
        gpu_call()


# ---- padding ---------------------------------------------------------------------
PAD_CASES = [  # k, batched input shape, padding (last dim first)
    (1, (2, 3, 6), (2, 3)),
    (1, (3, 2, 5), (4, 0)),
    (1, (2, 2, 7), (-2, 3)),
    (2, (2, 3, 4, 5), (1, 2, 3, 1)),
    (2, (1, 2, 5, 6), (0, 3, 2, 0)),
    (2, (2, 1, 5, 6), (-1, 2, 1, -2)),
    (3, (2, 2, 3, 4, 5), (2, 1, 0, 3, 1, 2)),
    (3, (1, 3, 4, 3, 4), (1, 1, 2, 2, 3, 0)),
    (3, (1, 2, 4, 4, 5), (-1, 2, 3, -2, 1, -1)),
]


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("kind", ["reflection", "replication"])
@pytest.mark.parametrize("k_,shape,padding", PAD_CASES)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("strided", [False, True])
def test_padding(dtype, tol, kind, k_, shape, padding, batched, strided):
    name = f"{kind}_pad{k_}d"
    if not batched:
        shape = shape[1:]
    rng = np.random.default_rng(hash((name, shape, padding)) % 2**32)
    xc, xg = pair(shape, rng, dtype, strided)
    yc = getattr(thnn, name + "_forward")(xc, padding)
    yg = getattr(k, name + "_forward")(xg, padding)
    same(yc, yg, 0)   # a copy: exact
    gc, gg = pair(tuple(yc.shape), rng, dtype, strided)
    same(getattr(thnn, name + "_backward_input")(gc, xc.shape, padding),
         getattr(k, name + "_backward_input")(gg, xg.shape, padding), tol)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("k_", [1, 2, 3])
def test_replication_pad_wider_than_the_input(dtype, tol, k_):
    """Edge inputs collect whole padded slabs (many outputs, atomic adds),
    and a single-element dim replicates into every output."""
    shape = (2, 3) + (1, 3, 2)[3 - k_:]
    padding = (7, 5, 0, 6, 4, 3)[:2 * k_]
    rng = np.random.default_rng(k_)
    xc, xg = pair(shape, rng, dtype)
    name = f"replication_pad{k_}d"
    yc = getattr(thnn, name + "_forward")(xc, padding)
    same(yc, getattr(k, name + "_forward")(xg, padding), 0)
    gc, gg = pair(tuple(yc.shape), rng, dtype)
    same(getattr(thnn, name + "_backward_input")(gc, xc.shape, padding),
         getattr(k, name + "_backward_input")(gg, xg.shape, padding), tol)


@pytest.mark.parametrize("kind", ["reflection", "replication"])
def test_padding_int_and_empty_batch(kind):
    rng = np.random.default_rng(11)
    xc, xg = pair((2, 3, 4), rng)
    same(getattr(thnn, f"{kind}_pad2d_forward")(xc, 2), getattr(k, f"{kind}_pad2d_forward")(xg, 2),
         0)
    e = thc.empty((0, 2, 3, 3), dtype=thc.float64)
    y = getattr(k, f"{kind}_pad2d_forward")(e, 1)
    assert tuple(y.shape) == (0, 2, 5, 5)
    gi = getattr(k, f"{kind}_pad2d_backward_input")(y, (0, 2, 3, 3), 1)
    assert tuple(gi.shape) == (0, 2, 3, 3)


def test_padding_errors_match_thnn():
    rng = np.random.default_rng(12)
    xc, xg = pair((1, 3, 4), rng)
    raises_like(RuntimeError, r"Padding size should be less than the corresponding input "
                r"dimension, but got: padding \(4, 1\) at dimension 2 of input \[1, 3, 4\]",
                lambda: thnn.reflection_pad1d_forward(xc, (4, 1)),
                lambda: k.reflection_pad1d_forward(xg, (4, 1)))
    raises_like(RuntimeError, r"padding \(1, 3\) at dimension 1 of input \[1, 3, 4\]",
                lambda: thnn.reflection_pad2d_forward(xc, (0, 0, 1, 3)),
                lambda: k.reflection_pad2d_forward(xg, (0, 0, 1, 3)))
    x4c, x4g = pair((1, 2, 3, 4), rng)
    raises_like(RuntimeError, r"padding \(2, 0\) at dimension 1 of input \[1, 2, 3, 4\]",
                lambda: thnn.reflection_pad3d_forward(x4c, (0, 0, 0, 0, 2, 0)),
                lambda: k.reflection_pad3d_forward(x4g, (0, 0, 0, 0, 2, 0)))
    raises_like(RuntimeError, r"Expected 4D or 5D \(batch mode\) tensor for input, but got: "
                r"\[1, 3, 4\]",
                lambda: thnn.replication_pad3d_forward(xc, 1),
                lambda: k.replication_pad3d_forward(xg, 1))
    raises_like(RuntimeError, r"non-zero dimensions for input, but got: \[1, 0, 4\]",
                lambda: thnn.replication_pad1d_forward(th.empty(1, 0, 4), 1),
                lambda: k.replication_pad1d_forward(thc.empty((1, 0, 4)), 1))
    raises_like(RuntimeError, r"input size 4 at dimension 2 of input \[1, 3, 4\] is too small "
                r"for padding \(-2, -2\): the calculated output size is 0",
                lambda: thnn.replication_pad1d_forward(xc, (-2, -2)),
                lambda: k.replication_pad1d_forward(xg, (-2, -2)))
    raises_like(ValueError, "padding must be an int or 4 ints",
                lambda: thnn.reflection_pad2d_forward(xc, (1, 1)),
                lambda: k.reflection_pad2d_forward(xg, (1, 1)))
    gc, gg = pair((1, 3, 7), rng)
    raises_like(RuntimeError, r"expected grad_output of shape \[1, 3, 6\]",
                lambda: thnn.reflection_pad1d_backward_input(gc, (1, 3, 4), (1, 1)),
                lambda: k.reflection_pad1d_backward_input(gg, (1, 3, 4), (1, 1)))
    raises_like(RuntimeError, r"Padding size should be less .* padding \(4, 4\) at dimension 2 "
                r"of input \[1, 3, 4\]",
                lambda: thnn.reflection_pad1d_backward_input(gc, (1, 3, 4), (4, 4)),
                lambda: k.reflection_pad1d_backward_input(gg, (1, 3, 4), (4, 4)))
    raises_like(TypeError, "int64",
                lambda: thnn.replication_pad1d_forward(th.empty(1, 3, 4, dtype=th.int64), 1),
                lambda: k.replication_pad1d_forward(thc.empty((1, 3, 4), dtype=thc.int64), 1))
    # (the C tensors' owners are kept in variables for the duration of the calls)
    g32 = thc.from_numpy(rng.uniform(1, 2, (1, 3, 6)).astype("float32"))
    gi64 = thc.empty((1, 3, 4), dtype=thc.float64)
    with pytest.raises(RuntimeError, match=r"grad_output of shape \[1, 3, 6\] and scalar type "
                                           r"float64 but got \[1, 3, 6\] \(float32\)"):
        check(lib.thcunn_reflection_pad1d_backward_input(gi64._p, g32._p, [1, 1]))
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.reflection_pad1d_forward(xc, 1)
    # a failed call leaves its input alone
    before = xg.cpu().numpy().copy()
    with pytest.raises(RuntimeError):
        k.reflection_pad1d_forward(xg, (9, 9))
    np.testing.assert_array_equal(xg.cpu().numpy(), before)


def test_padding_c_checks_the_output():
    """The C kernels take a pre-allocated output: wrong shape or NULL is an
    error, never a write out of bounds."""
    x = thc.from_numpy(np.ones((2, 3, 4)))
    bad, good = thc.empty((2, 3, 5), dtype=thc.float64), thc.empty((2, 3, 6), dtype=thc.float64)
    with pytest.raises(RuntimeError, match=r"output must be a float64 tensor of shape "
                                           r"\[2, 3, 6\]"):
        check(lib.thcunn_replication_pad1d_forward(bad._p, x._p, [1, 1]))
    with pytest.raises(ValueError, match="padding must not be NULL"):
        check(lib.thcunn_replication_pad1d_forward(good._p, x._p, ffi.NULL))
    with pytest.raises(ValueError, match="output is NULL"):
        check(lib.thcunn_replication_pad1d_forward(ffi.NULL, x._p, [1, 1]))
    gi = thc.empty((2, 4, 3), dtype=thc.float64).transpose(1, 2)
    with pytest.raises(RuntimeError, match="grad_input must be contiguous"):
        check(lib.thcunn_reflection_pad1d_backward_input(gi._p, good._p, [1, 1]))


# ---- upsampling -------------------------------------------------------------------
UP_CASES = [  # input shape, output size, scales (None: from the sizes)
    ((2, 3, 4, 5), (8, 10), None),          # exactly twice
    ((2, 3, 4, 5), (8, 10), (2.0, 2.0)),
    ((1, 2, 5, 3), (3, 7), None),           # down in H, up in W
    ((2, 1, 3, 4), (7, 9), (2.5, 2.3)),     # non-integer scales
    ((3, 4, 4), (4, 4), None),              # unbatched, same size: copied
    ((3, 4, 4), (4, 4), (1.7, 0.6)),        # same size, scale ignored
    ((1, 1, 1, 1), (3, 2), None),           # a single pixel
    ((1, 2, 6, 6), (4, 3), (0.7, 0.5)),     # downsampling scales
    ((2, 2, 3, 5), (3, 10), (1.3, 2.0)),
    ((2, 5, 7), (21, 14), (3, 2)),          # unbatched, integer scales
    ((1, 3, 5, 4), (1, 9), None),           # one output row
]


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape,size,scales", UP_CASES)
@pytest.mark.parametrize("strided", [False, True])
def test_upsample_nearest2d(dtype, tol, shape, size, scales, strided):
    rng = np.random.default_rng(sum(shape) + sum(size))
    xc, xg = pair(shape, rng, dtype, strided)
    yc = thnn.upsample_nearest2d_forward(xc, size, scales)
    same(yc, k.upsample_nearest2d_forward(xg, size, scales), 0)   # the same pixels
    gc, gg = pair(tuple(yc.shape), rng, dtype, strided)
    same(thnn.upsample_nearest2d_backward_input(gc, shape, scales),
         k.upsample_nearest2d_backward_input(gg, shape, scales), tol)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape,size,scales", UP_CASES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("strided", [False, True])
def test_upsample_bilinear2d(dtype, tol, shape, size, scales, align_corners, strided):
    rng = np.random.default_rng(sum(shape) * 7 + sum(size))
    xc, xg = pair(shape, rng, dtype, strided)
    yc = thnn.upsample_bilinear2d_forward(xc, size, align_corners, scales)
    same(yc, k.upsample_bilinear2d_forward(xg, size, align_corners, scales), tol)
    gc, gg = pair(tuple(yc.shape), rng, dtype, strided)
    same(thnn.upsample_bilinear2d_backward_input(gc, shape, align_corners, scales),
         k.upsample_bilinear2d_backward_input(gg, shape, align_corners, scales), tol)


@pytest.mark.parametrize("scale", [1.5, 2.0, 3.0, 0.75, 2.3])
def test_upsample_scalar_scale_and_boundaries(scale):
    """One number for both scales; sizes where source coordinates fall on
    pixel boundaries (integer and fractional scales) pick the same pixels."""
    rng = np.random.default_rng(int(scale * 100))
    shape = (2, 3, 8, 6)
    size = (int(8 * scale), int(6 * scale))
    xc, xg = pair(shape, rng)
    same(thnn.upsample_nearest2d_forward(xc, size, scale),
         k.upsample_nearest2d_forward(xg, size, scale), 0)
    for ac in (False, True):
        same(thnn.upsample_bilinear2d_forward(xc, size, ac, scale),
             k.upsample_bilinear2d_forward(xg, size, ac, scale), 1e-12)


def test_upsample_nearest_picks_pixels_in_single_precision():
    """3 -> 123 rows and 4 -> 82 columns: float32 and float64 source
    coordinates floor to different pixels; libTHNN (like PyTorch) uses float32."""
    rng = np.random.default_rng(17)
    xc, xg = pair((1, 2, 3, 4), rng)
    yc = thnn.upsample_nearest2d_forward(xc, (123, 82))
    same(yc, k.upsample_nearest2d_forward(xg, (123, 82)), 0)
    gc, gg = pair(tuple(yc.shape), rng)
    same(thnn.upsample_nearest2d_backward_input(gc, (1, 2, 3, 4)),
         k.upsample_nearest2d_backward_input(gg, (1, 2, 3, 4)), 1e-10)


def test_upsample_empty_batch():
    e = thc.empty((0, 2, 3, 3), dtype=thc.float32)
    assert tuple(k.upsample_nearest2d_forward(e, (6, 6)).shape) == (0, 2, 6, 6)
    y = k.upsample_bilinear2d_forward(e, (5, 4), True)
    assert tuple(y.shape) == (0, 2, 5, 4)
    assert tuple(k.upsample_bilinear2d_backward_input(y, (0, 2, 3, 3), True).shape) == \
        (0, 2, 3, 3)


def test_upsample_errors_match_thnn():
    rng = np.random.default_rng(13)
    x2c, x2g = pair((2, 3), rng)
    raises_like(RuntimeError, r"Expected 3D or 4D \(batch mode\) tensor for input, but got: "
                r"\[2, 3\]",
                lambda: thnn.upsample_nearest2d_forward(x2c, (4, 4)),
                lambda: k.upsample_nearest2d_forward(x2g, (4, 4)))
    raises_like(RuntimeError, r"greater than 0, but got input \(H: 0, W: 3\) output "
                r"\(H: 2, W: 2\)",
                lambda: thnn.upsample_bilinear2d_forward(th.empty(1, 1, 0, 3), (2, 2)),
                lambda: k.upsample_bilinear2d_forward(thc.empty((1, 1, 0, 3)), (2, 2)))
    xc, xg = pair((1, 1, 2, 3), rng)
    raises_like(RuntimeError, r"output \(H: 0, W: 2\)",
                lambda: thnn.upsample_nearest2d_forward(xc, (0, 2)),
                lambda: k.upsample_nearest2d_forward(xg, (0, 2)))
    raises_like(RuntimeError, "output size must be non-negative",
                lambda: thnn.upsample_nearest2d_forward(xc, (-1, 2)),
                lambda: k.upsample_nearest2d_forward(xg, (-1, 2)))
    raises_like(TypeError, "int64",
                lambda: thnn.upsample_nearest2d_forward(th.empty(1, 1, 2, 2, dtype=th.int64),
                                                        (4, 4)),
                lambda: k.upsample_nearest2d_forward(thc.empty((1, 1, 2, 2), dtype=thc.int64),
                                                     (4, 4)))
    gc, gg = pair((1, 2, 4, 4), rng)
    raises_like(RuntimeError, r"grad_output \[1, 2, 4, 4\] \(float64\) must have the batch and "
                r"channel sizes and dtype of grad_input \[1, 1, 2, 2\] \(float64\)",
                lambda: thnn.upsample_nearest2d_backward_input(gc, (1, 1, 2, 2)),
                lambda: k.upsample_nearest2d_backward_input(gg, (1, 1, 2, 2)))
    raises_like(RuntimeError, r"grad_output \[1, 2, 4, 4\]",
                lambda: thnn.upsample_bilinear2d_backward_input(gc, (1, 1, 2, 2), True),
                lambda: k.upsample_bilinear2d_backward_input(gg, (1, 1, 2, 2), True))
    raises_like(ValueError, "output_size",
                lambda: thnn.upsample_nearest2d_forward(xc, (1, 2, 3)),
                lambda: k.upsample_nearest2d_forward(xg, (1, 2, 3)))
    raises_like(ValueError, "scales must be None, a number or a pair",
                lambda: thnn.upsample_bilinear2d_forward(xc, (4, 4), False, (1, 2, 3)),
                lambda: k.upsample_bilinear2d_forward(xg, (4, 4), False, (1, 2, 3)))
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.upsample_bilinear2d_forward(xc, (4, 4))
    # the C kernel refuses a non-contiguous output and mismatched dtypes
    out = thc.empty((1, 1, 6, 4), dtype=thc.float64).transpose(2, 3)
    with pytest.raises(RuntimeError, match="output must be contiguous"):
        check(lib.thcunn_upsample_nearest2d_forward(out._p, xg._p, 0.0, 0.0))
    out32 = thc.empty((1, 1, 4, 6), dtype=thc.float32)
    with pytest.raises(RuntimeError, match=r"output \[1, 1, 4, 6\] \(float32\) must have"):
        check(lib.thcunn_upsample_bilinear2d_forward(out32._p, xg._p, 0, 0.0, 0.0))


# ---- ember.nn's kernel specs -------------------------------------------------------
SPEC_CASES = [  # spec name, input shape, the arguments after the input, as ember.nn passes them
    ("upsample_nearest2d", (2, 3, 4, 5), ((7, 9), (None, None))),
    ("upsample_nearest2d", (2, 3, 4, 5), ((10, 12), (2.5, 2.5))),
    ("upsample_bilinear2d", (2, 3, 4, 5), ((7, 9), False, (None, None))),
    ("upsample_bilinear2d", (2, 3, 4, 5), ((6, 10), True, (1.5, 2.0))),
    ("reflection_pad", (2, 3, 6), ((2, 1),)),
    ("reflection_pad", (2, 3, 4, 5), ((1, 2, 3, 0),)),
    ("reflection_pad", (1, 2, 3, 4, 5), ((1, 2, 0, 1, 2, 1),)),
    ("replication_pad", (2, 3, 4, 5), ((3, 0, 1, 1),)),
    ("replication_pad", (1, 2, 3, 4, 5), ((3, 0, 1, 1, 0, 2),)),
]


@pytest.mark.parametrize("name,shape,args", SPEC_CASES)
def test_nn_kernel_specs_run_these_kernels(name, shape, args):
    """ember.nn's one spec table binds these functions by name and calls
    them with its arguments: the CUDA specs give the CPU specs' results."""
    specs = pytest.importorskip("ember.nn.kernels")
    gpu, cpu = specs.specs_for(k.kernels)[name], specs.specs_for(thnn.kernels)[name]
    rng = np.random.default_rng(16)
    xc, xg = pair(shape, rng)
    yc, ctx_c = cpu.forward(xc, *args)
    yg, ctx_g = gpu.forward(xg, *args)
    same(yc, yg, 1e-12)
    gc, gg = pair(tuple(yc.shape), rng)
    same(cpu.backward(ctx_c, gc, (xc,), (True,))[0], gpu.backward(ctx_g, gg, (xg,), (True,))[0],
         1e-10)
