"""Views share storage: view/reshape, transpose/permute/t/T/mT, narrow,
select, slicing, expand/broadcast_to, squeeze/unsqueeze, flatten/unflatten,
unfold, as_strided, diagonal, movedim, contiguous/clone.  Shapes, strides
and values against NumPy; writes through each view; every error path."""
import re

import numpy as np
import pytest

import ember.th as th

from th_testing import DTYPES, assert_close, each, ids, to_numpy


def strides_of(a):
    """NumPy strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


def check_view(v, ref, base=None):
    """v holds ref's values (and shape); if base is given, v shares its
    storage: a write through v is seen in base, and the other way round."""
    assert_close(v, ref, shape=ref.shape)
    if base is None or v.numel() == 0:
        return
    assert v.data_ptr() - v.storage_offset() * v.element_size() == \
        base.data_ptr() - base.storage_offset() * base.element_size(), "not the same storage"
    saved = base.clone()
    before = to_numpy(base)
    v.fill_(7)  # through the view...
    seen = to_numpy(base)
    assert (seen == 7).sum() >= 1 and ((seen != before).any() or (before == 7).all())
    base.fill_(3)  # ...and back
    assert (to_numpy(v) == 3).all()
    base.copy_(saved)  # restored for the caller's next checks


@pytest.fixture
def x(rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    return th.tensor(a), a


def err(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


# ---- view / reshape ----------------------------------------------------
@pytest.mark.parametrize("shape", [(24,), (4, 6), (2, 12), (-1,), (4, -1), (-1, 3, 2),
                                   (2, 3, 4, 1), (1, 24, 1)])
def test_view_shapes(shape, x):
    t, a = x
    v = t.view(*shape)
    check_view(v, a.reshape(shape), base=t)
    assert v.is_contiguous()
    assert_close(t.view(shape), a.reshape(shape))  # a tuple works too
    assert_close(t.view(list(shape)), a.reshape(shape))
    assert_close(th.reshape(t, shape), a.reshape(shape))
    assert_close(t.reshape(*shape), a.reshape(shape))


def test_view_of_non_contiguous_compatible_strides(x):
    t, a = x
    # a slice of whole rows keeps the trailing dims contiguous: viewable
    s = t[:, 1:]
    v = s.view(2, 8)
    check_view(v, a[:, 1:].reshape(2, 8), base=t)
    # a uniform step flattens too: (2, 3, 2) with strides (12, 4, 2)
    check_view(t[:, :, ::2].view(12), a[:, :, ::2].reshape(12), base=t)
    # splitting and merging dims of a transposed tensor that stay together
    tt = t.transpose(0, 2)  # (4, 3, 2)
    v2 = tt.view(2, 2, 3, 2)
    assert_close(v2, a.transpose(2, 1, 0).reshape(2, 2, 3, 2))
    assert v2.stride() == (2, 1, 4, 12)


def test_view_errors(x):
    t, a = x
    with err(RuntimeError, "view size is not compatible with input tensor's size and stride"):
        t.transpose(0, 1).view(-1)
    with err(RuntimeError, "Use .reshape(...) instead"):
        t[:, ::2].view(-1)
    with err(RuntimeError, "shape '[5, -1]' is invalid for input of size 24"):
        t.view(5, -1)
    with err(RuntimeError, "shape '[5, 5]' is invalid for input of size 24"):
        t.view(5, 5)
    with err(RuntimeError, "only one dimension can be inferred"):
        t.view(-1, -1)
    with err(RuntimeError, "invalid shape dimension -2"):
        t.view(-2, 12)
    with err(RuntimeError, "shape '[]' is invalid for input of size 24"):
        t.reshape(())
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        t.view((2, True))
    with pytest.raises(NotImplementedError):
        t.view(th.int32)
    assert_close(t, a)  # nothing changed


def test_float_sizes_are_type_errors():
    with pytest.raises(TypeError):
        th.zeros(24).view(2.5, 12)


def test_reshape_copies_only_when_it_must(x):
    t, a = x
    r = t.reshape(6, 4)
    assert r.data_ptr() == t.data_ptr()  # a view
    tt = t.transpose(0, 2)
    r2 = tt.reshape(-1)
    assert_close(r2, a.transpose(2, 1, 0).reshape(-1))
    r2.fill_(0)  # a copy: the original is untouched
    assert_close(t, a)


def test_view_as_reshape_as(x):
    t, a = x
    other = th.empty(6, 4)
    assert_close(t.view_as(other), a.reshape(6, 4))
    assert_close(t.transpose(0, 1).reshape_as(other), a.transpose(1, 0, 2).reshape(6, 4))


def test_view_zero_d_and_empty():
    s = th.tensor(3.5)
    assert_close(s.view(1, 1), np.full((1, 1), 3.5, np.float32))
    assert_close(s.reshape(-1), np.full((1,), 3.5, np.float32))
    assert tuple(s.view(()).shape) == ()
    e = th.zeros(0, 4)
    assert tuple(e.view(2, 0, 2).shape) == (2, 0, 2)
    assert tuple(e.reshape(4, 0).shape) == (4, 0)
    assert tuple(e.t().view(0).shape) == (0,)
    with err(RuntimeError, "shape '[0, -1]' is invalid for input of size 0"):
        e.view(0, -1)  # -1 is ambiguous for 0 elements


# ---- transpose / permute / t / T / mT ------------------------------------
@pytest.mark.parametrize("d0,d1", [(0, 1), (0, 2), (1, 2), (-1, 0), (-3, -1), (1, 1)])
def test_transpose(d0, d1, x):
    t, a = x
    v = t.transpose(d0, d1)
    check_view(v, np.swapaxes(a, d0, d1), base=t)
    assert v.stride() == strides_of(np.swapaxes(np.empty((2, 3, 4), np.float32), d0, d1))
    assert_close(th.transpose(t, d0, d1), np.swapaxes(a, d0, d1))
    assert_close(th.swapaxes(t, d0, d1), np.swapaxes(a, d0, d1))
    assert_close(t.swapdims(d0, d1), np.swapaxes(a, d0, d1))


@pytest.mark.parametrize("dims", [(0, 1, 2), (2, 1, 0), (1, 2, 0), (-1, 0, 1), (2, 0, 1)])
def test_permute(dims, x):
    t, a = x
    check_view(t.permute(*dims), a.transpose(dims), base=t)
    assert_close(t.permute(dims), a.transpose(dims))
    assert_close(th.permute(t, dims), a.transpose(dims))


def test_transpose_permute_errors(x):
    t, a = x
    with err(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)"):
        t.transpose(0, 3)
    with err(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got -4)"):
        t.transpose(-4, 0)
    with err(RuntimeError, "number of dimensions in the tensor input does not match the length "
                           "of the desired ordering of dimensions"):
        t.permute(0, 1)
    with err(RuntimeError, "permute(): duplicate dims are not allowed."):
        t.permute(0, 0, 1)
    with err(IndexError, "Dimension out of range"):
        t.permute(0, 1, 3)
    assert_close(t, a)


def test_t_T_mT(x, rng):
    t, a = x
    m = th.tensor(a[0])
    check_view(m.t(), a[0].T, base=m)
    assert_close(th.t(m), a[0].T)
    v = th.tensor(a[0, 0])
    assert v.t() is v or tuple(v.t().shape) == (4,)  # 0-d and 1-d: unchanged
    s = th.tensor(1.5)
    assert tuple(s.t().shape) == ()
    check_view(t.T, a.transpose(2, 1, 0), base=t)
    check_view(t.mT, np.swapaxes(a, -1, -2), base=t)
    assert_close(m.T, a[0].T)
    assert tuple(s.T.shape) == ()
    with err(RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D"):
        t.t()
    with pytest.raises((IndexError, RuntimeError)):
        v.mT  # 1-d: no matrix dims


# ---- narrow / select / slicing -----------------------------------------
@pytest.mark.parametrize("dim,start,length", [(0, 0, 1), (0, 1, 1), (1, 1, 2), (2, 0, 4),
                                              (-1, 2, 2), (1, -2, 2), (2, 4, 0), (1, -3, 0)])
def test_narrow(dim, start, length, x):
    t, a = x
    idx = [slice(None)] * 3
    s = start if start >= 0 else start + a.shape[dim]
    idx[dim] = slice(s, s + length)
    v = t.narrow(dim, start, length)
    check_view(v, a[tuple(idx)], base=t)
    assert_close(th.narrow(t, dim, start, length), a[tuple(idx)])


def test_narrow_errors(x):
    t, a = x
    with err(IndexError, "start out of range (expected to be in range of [-2, 2], but got 3)"):
        t.narrow(0, 3, 1)
    with err(IndexError, "start out of range (expected to be in range of [-2, 2], but got -3)"):
        t.narrow(0, -3, 1)
    with err(RuntimeError, "start (1) + length (2) exceeds dimension size (2)."):
        t.narrow(0, 1, 2)
    with pytest.raises(RuntimeError):
        t.narrow(0, 0, -1)
    with err(IndexError, "Dimension out of range"):
        t.narrow(3, 0, 1)
    with err(RuntimeError, "narrow() cannot be applied to a 0-dim tensor."):
        th.tensor(1.0).narrow(0, 0, 1)


@pytest.mark.parametrize("dim,index", [(0, 0), (0, 1), (0, -1), (1, 2), (2, -4), (-1, 3)])
def test_select(dim, index, x):
    t, a = x
    v = t.select(dim, index)
    check_view(v, np.take(a, index, axis=dim), base=t)
    assert_close(th.select(t, dim, index), np.take(a, index, axis=dim))


def test_select_errors(x):
    t, a = x
    with err(IndexError, "index 2 is out of bounds for dimension 0 with size 2"):
        t.select(0, 2)
    with err(IndexError, "index -3 is out of bounds for dimension 0 with size 2"):
        t.select(0, -3)
    with err(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)"):
        t.select(3, 0)
    with err(IndexError, "select() cannot be applied to a 0-dim tensor."):
        th.tensor(1.0).select(0, 0)


@pytest.mark.parametrize("idx", [
    (slice(1, None, 2),), (slice(None, None, 3),), (slice(-3, -1),), (slice(0, 100, 2),),
    (slice(None), slice(None, None, 2)), (slice(None), slice(1, 3), slice(None, None, 3)),
    (Ellipsis, slice(1, None, 2)), (slice(5, 10),), (slice(-100, 1),), (slice(2, 1),),
    (1, slice(None, None, 2), -1), (slice(None, None, 5), 0),
], ids=str)
def test_slicing_with_steps(idx, x):
    t, a = x
    check_view(t[idx], a[idx], base=t)


def test_slicing_errors(x):
    t, a = x
    with err(ValueError, "step must be greater than zero"):
        t[::-1]
    with pytest.raises(ValueError):
        t[::0]


def test_nested_views_offsets(x):
    t, a = x
    v = t[1][:, 1:][::2, ::3]
    check_view(v, a[1][:, 1:][::2, ::3], base=t)
    assert v.storage_offset() == 12 + 1
    assert v.stride() == (8, 3)
    assert not v.is_contiguous()


# ---- expand / broadcast_to ---------------------------------------------
@pytest.mark.parametrize("src,target", [
    ((3, 1), (3, 4)), ((1,), (5,)), ((1, 4), (2, 3, 4)), ((), (2, 2)), ((2, 1, 3), (2, 5, 3)),
    ((3,), (2, 3)), ((1, 1), (0, 4)),
])
def test_expand(src, target, rng):
    a = rng.standard_normal(src).astype(np.float32)
    t = th.tensor(a)
    v = t.expand(*target)
    want = np.broadcast_to(a, target)
    assert_close(v, want)
    assert v.stride() == strides_of(want) or v.numel() == 0
    assert_close(t.expand(target), want)
    assert_close(th.broadcast_to(t, target), want)
    assert_close(t.expand_as(th.empty(target)), want)
    if t.numel() and v.numel():  # shares storage: a write to the source shows everywhere
        t.fill_(5)
        assert (to_numpy(v) == 5).all()


def test_expand_minus_one_keeps_size(x):
    t, a = x
    v = t[:, :1].expand(2, -1, 4)
    assert_close(v, np.broadcast_to(a[:, :1], (2, 1, 4)))
    v = t[:, :1].expand(5, 2, 3, 4) if False else t[:, :1].expand(2, 3, -1)
    assert_close(v, np.broadcast_to(a[:, :1], (2, 3, 4)))


def test_expand_errors(x):
    t, a = x
    with err(RuntimeError, "the number of sizes provided (2) must be greater or equal to the "
                           "number of dimensions in the tensor (3)"):
        t.expand(3, 4)
    with err(RuntimeError, "The expanded size of the tensor (2) must match the existing size (3) "
                           "at non-singleton dimension 1.  Target sizes: [2, 2, 4].  Tensor "
                           "sizes: [2, 3, 4]"):
        t.expand(2, 2, 4)
    with err(RuntimeError, "The expanded size of the tensor (-1) isn't allowed in a leading, "
                           "non-existing dimension 0"):
        t.expand(-1, 2, 3, 4)
    with pytest.raises(RuntimeError, match="must match the existing size"):
        th.broadcast_to(t, (3, 3, 4))


def test_broadcast_shapes_and_tensors(rng):
    assert th.broadcast_shapes((3, 1), (1, 4)) == (3, 4)
    assert th.broadcast_shapes((2, 1, 5), (4, 1), 5) == (2, 4, 5)
    assert th.broadcast_shapes() == ()
    with pytest.raises(RuntimeError, match="Shape mismatch: objects cannot be broadcast"):
        th.broadcast_shapes((3,), (4,))
    a, b = rng.standard_normal((3, 1)), rng.standard_normal((4,))
    x, y = th.broadcast_tensors(th.tensor(a), th.tensor(b))
    na, nb = np.broadcast_arrays(a, b)
    assert_close(x, na)
    assert_close(y, nb)


# ---- squeeze / unsqueeze -------------------------------------------------
def test_squeeze_unsqueeze(rng):
    a = rng.standard_normal((1, 3, 1, 2)).astype(np.float32)
    t = th.tensor(a)
    check_view(t.squeeze(), a.squeeze(), base=t)
    check_view(t.squeeze(0), a.squeeze(0), base=t)
    check_view(t.squeeze(-2), a.squeeze(-2), base=t)
    assert_close(t.squeeze(1), a)  # size 3: unchanged
    assert_close(t.squeeze((0, 2)), a.squeeze((0, 2)))
    assert_close(th.squeeze(t, (0, -2)), a.squeeze((0, 2)))
    assert_close(th.squeeze(t), a.squeeze())
    for d in range(-5, 5):
        check_view(t.unsqueeze(d), np.expand_dims(a, d), base=t)
    assert_close(th.unsqueeze(t, 1), np.expand_dims(a, 1))
    s = th.tensor(2.0)
    assert tuple(s.squeeze().shape) == () and tuple(s.squeeze(0).shape) == ()
    assert tuple(s.unsqueeze(0).shape) == (1,) and tuple(s.unsqueeze(-1).shape) == (1,)
    e = th.zeros(0, 1)
    assert tuple(e.squeeze().shape) == (0,)


def test_squeeze_unsqueeze_errors(x):
    t, a = x
    with err(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)"):
        t.squeeze(3)
    with err(IndexError, "Dimension out of range (expected to be in range of [-4, 3], but got 4)"):
        t.unsqueeze(4)
    with err(IndexError, "Dimension out of range (expected to be in range of [-4, 3], but got -5)"):
        t.unsqueeze(-5)
    with err(IndexError, "but got 5"):
        t.squeeze((0, 5))


# ---- flatten / unflatten ------------------------------------------------
@pytest.mark.parametrize("start,end", [(0, -1), (1, -1), (0, 1), (1, 2), (2, 2), (-2, -1), (0, 0)])
def test_flatten(start, end, x):
    t, a = x
    e = end % 3
    shape = a.shape[:start % 3] + (-1,) + a.shape[e + 1:]
    check_view(t.flatten(start, end), a.reshape(shape), base=t)
    assert_close(th.flatten(t, start, end), a.reshape(shape))


def test_flatten_non_contiguous_and_0d(x):
    t, a = x
    tt = t.transpose(0, 2)
    r = tt.flatten()
    assert_close(r, a.transpose(2, 1, 0).reshape(-1))
    assert tuple(th.tensor(1.0).flatten().shape) == (1,)
    assert tuple(th.zeros(3, 0).flatten().shape) == (0,)
    assert tuple(th.zeros(0, 2, 3).flatten(0, 1).shape) == (0, 3)
    with err(RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim"):
        t.flatten(2, 1)
    with err(IndexError, "Dimension out of range"):
        t.flatten(0, 3)


def test_flatten_with_zero_size_dim_elsewhere():
    assert tuple(th.zeros(0, 2, 3).flatten(1).shape) == (0, 6)


@pytest.mark.parametrize("dim,sizes,shape", [
    (1, (3, 1), (2, 3, 1, 4)), (-1, (2, 2), (2, 3, 2, 2)), (2, (-1, 2), (2, 3, 2, 2)),
    (0, (1, 2), (1, 2, 3, 4)), (1, (-1,), (2, 3, 4)),
])
def test_unflatten(dim, sizes, shape, x):
    t, a = x
    check_view(t.unflatten(dim, sizes), a.reshape(shape), base=t)
    assert_close(th.unflatten(t, dim, sizes), a.reshape(shape))


def test_unflatten_errors(x):
    t, a = x
    with pytest.raises(RuntimeError, match="invalid for input of size 24|don't multiply up"):
        t.unflatten(1, (2, 2))
    with err(IndexError, "Dimension out of range"):
        t.unflatten(3, (1,))


# ---- unfold --------------------------------------------------------------
@pytest.mark.parametrize("dim,size,step", [(0, 2, 1), (1, 2, 1), (2, 2, 2), (2, 3, 1), (-1, 4, 1),
                                           (2, 1, 3), (1, 3, 5), (2, 0, 1)])
def test_unfold(dim, size, step, x):
    t, a = x
    d = dim % 3
    win = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    idx = [slice(None)] * win.ndim
    idx[d] = slice(None, None, step)
    want = win[tuple(idx)]
    v = t.unfold(dim, size, step)
    check_view(v, want, base=t)


def test_unfold_0d_and_errors(x):
    t, a = x
    s = th.tensor(4.0)
    assert_close(s.unfold(0, 1, 1), np.array([4.0], np.float32))
    with err(RuntimeError, "maximum size for tensor at dimension 0 is 2 but size is 3"):
        t.unfold(0, 3, 1)
    with err(RuntimeError, "step is 0 but must be > 0"):
        t.unfold(0, 1, 0)
    with pytest.raises(RuntimeError):
        t.unfold(0, -1, 1)
    with err(IndexError, "Dimension out of range"):
        t.unfold(3, 1, 1)


# ---- as_strided ----------------------------------------------------------
@pytest.mark.parametrize("size,stride,offset", [
    ((2, 2), (1, 2), None), ((3, 3), (1, 1), 0), ((4,), (6,), 1), ((2, 3), (0, 1), 5),
    ((5,), (1,), 19), ((0, 3), (1, 1), 0), ((), (), 7),
])
def test_as_strided(size, stride, offset, rng):
    base = rng.standard_normal(24).astype(np.float32)
    t = th.tensor(base)
    off = 0 if offset is None else offset
    want = np.lib.stride_tricks.as_strided(base[off:], size, [s * 4 for s in stride])
    v = t.as_strided(size, stride) if offset is None else t.as_strided(size, stride, offset)
    check_view(v, want, base=t)
    assert v.stride() == tuple(stride) and v.storage_offset() == off
    assert_close(th.as_strided(th.tensor(base), size, stride, off), want)


def test_as_strided_keeps_view_offset(rng):
    base = rng.standard_normal(24).astype(np.float32)
    t = th.tensor(base)[5:]
    v = t.as_strided((2,), (1,))  # storage_offset defaults to the view's own
    assert_close(v, base[5:7])
    v = t.as_strided((2,), (1,), 0)  # offsets count from the storage start
    assert_close(v, base[0:2])


def test_as_strided_errors(rng):
    t = th.tensor(rng.standard_normal(24).astype(np.float32))
    with err(RuntimeError, "setStorage: sizes [2, 2]"):
        t.as_strided((2, 2), (1, 30))
    with err(RuntimeError, "setStorage: sizes [2, 2]"):
        t.as_strided((2, 2), (1, 2), 100)
    with err(RuntimeError, "mismatch in length of strides and shape"):
        t.as_strided((2, 2), (1,))
    with pytest.raises(RuntimeError):
        t.as_strided((2,), (-1,))  # would reach before the storage


def test_as_strided_negative_offset_is_an_error():
    with pytest.raises(RuntimeError):
        th.zeros(24).as_strided((2,), (1,), -5)


# ---- diagonal ------------------------------------------------------------
@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (0, 1, 2), (2, 1, 2),
                                          (-2, 2, 1), (0, -1, 0), (5, 0, 1), (-5, 1, 2)])
def test_diagonal(offset, d1, d2, x):
    t, a = x
    v = t.diagonal(offset, d1, d2)
    check_view(v, np.diagonal(a, offset, d1, d2), base=t)
    assert_close(th.diagonal(t, offset, d1, d2), np.diagonal(a, offset, d1, d2))
    assert_close(t.diagonal(offset=offset, dim1=d1, dim2=d2), np.diagonal(a, offset, d1, d2))


def test_diagonal_errors(x):
    t, a = x
    with err(RuntimeError, "diagonal dimensions cannot be identical 0, 0"):
        t.diagonal(0, 0, 0)
    with pytest.raises((RuntimeError, IndexError)):
        t[0, 0].diagonal()
    with err(IndexError, "Dimension out of range"):
        t.diagonal(0, 0, 3)


# ---- movedim -------------------------------------------------------------
@pytest.mark.parametrize("src,dst", [(0, 2), (2, 0), (-1, 0), ((0, 1), (2, 0)), ((0, 2), (1, 2)),
                                     ((), ()), (1, 1)])
def test_movedim(src, dst, x):
    t, a = x
    want = np.moveaxis(a, src, dst)
    check_view(t.movedim(src, dst), want, base=t)
    assert_close(th.movedim(t, src, dst), want)
    assert_close(th.moveaxis(t, src, dst), want)


def test_movedim_errors(x):
    t, a = x
    with err(RuntimeError, "movedim: Invalid source or destination dims: source ([0, 1] dims) "
                           "should contain the same number of dims as destination ([2] dims)"):
        t.movedim((0, 1), (2,))
    with err(IndexError, "Dimension out of range"):
        t.movedim(0, 3)
    with pytest.raises(RuntimeError):
        t.movedim((0, 0), (1, 2))


def test_movedim_repeated_destination_is_runtime_error():
    with pytest.raises(RuntimeError, match="repeated dim"):
        th.zeros(2, 3, 4).movedim((0, 1), (1, 1))


# ---- contiguous / clone / detach -----------------------------------------
def test_contiguous_and_clone(x):
    t, a = x
    assert t.is_contiguous() and t.contiguous() is t
    tt = t.transpose(0, 2)
    assert not tt.is_contiguous()
    c = tt.contiguous()
    assert c.is_contiguous() and c is not tt
    assert c.stride() == (6, 2, 1)
    assert_close(c, a.transpose(2, 1, 0))
    c.fill_(0)
    assert_close(t, a)  # a copy
    k = th.clone(tt)
    assert_close(k, a.transpose(2, 1, 0))
    assert k.data_ptr() != t.data_ptr()
    k2 = t.clone()
    k2.fill_(1)
    assert_close(t, a)
    d = t.detach()
    assert d.data_ptr() == t.data_ptr() and d is not t
    e = th.zeros(3).expand(2, 3)
    assert not e.is_contiguous() and e.contiguous().stride() == (3, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_views_every_dtype(dtype, make):
    """The same chain of views on each dtype: views know nothing of dtypes,
    but element sizes must be right."""
    t, a = make((3, 4, 5), dtype)

    def check(case):
        name, f, g = case
        assert_close(f(t), g(a), dtype)
    each([
        ("transpose", lambda t: t.transpose(0, 2), lambda a: a.transpose(2, 1, 0)),
        ("slice", lambda t: t[1:, ::2, 1::3], lambda a: a[1:, ::2, 1::3]),
        ("select", lambda t: t.select(1, 2), lambda a: a[:, 2]),
        ("diag", lambda t: t.diagonal(1, 1, 2), lambda a: np.diagonal(a, 1, 1, 2)),
        ("unfold", lambda t: t.unfold(2, 2, 2), lambda a: np.lib.stride_tricks
         .sliding_window_view(a, 2, axis=2)[:, :, ::2]),
        ("expand", lambda t: t[:, :1].expand(3, 4, 5), lambda a: np.broadcast_to(a[:, :1],
                                                                                  (3, 4, 5))),
        ("view", lambda t: t.view(12, 5), lambda a: a.reshape(12, 5)),
        ("reshape", lambda t: t.transpose(0, 1).reshape(-1), lambda a: a.transpose(1, 0, 2)
         .reshape(-1)),
        ("contiguous", lambda t: t.permute(2, 0, 1).contiguous(), lambda a: a.transpose(2, 0, 1)),
    ], check)


def test_write_through_views_is_seen_in_base(rng):
    a = rng.standard_normal((4, 6)).astype(np.float64)
    t = th.tensor(a)
    t.t()[1:3].fill_(9)
    a.T[1:3] = 9
    t[::2, ::3].mul_(2)
    a[::2, ::3] *= 2
    t.diagonal().zero_()
    np.fill_diagonal(a, 0)
    t.unfold(1, 2, 2)[:, :, 0].add_(1)
    a[:, 0::2] += 1
    t.view(24)[5] = -1
    a.reshape(24)[5] = -1
    t.select(0, 3).copy_(th.arange(6))
    a[3] = np.arange(6)
    assert_close(t, a)


def test_base_write_seen_in_view_and_version(rng):
    t = th.zeros(3, 4)
    v = t[1:, ::2]
    ver = t._version()
    t.fill_(2)
    assert t._version() > ver
    assert (to_numpy(v) == 2).all()
    v.add_(1)
    want = np.full((3, 4), 2, np.float32)
    want[1:, ::2] = 3
    assert_close(t, want)


def test_views_keep_storage_alive():
    t = th.arange(10)
    v = t[2:5]
    del t
    import gc
    gc.collect()
    _ = th.zeros(1000)  # reuse freed memory, if it were freed
    assert v.tolist() == [2, 3, 4]


def test_size_stride_dim_accessors(x):
    t, a = x
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12 and t.stride(-2) == 4
    assert t.dim() == t.ndim == t.ndimension() == 3
    assert t.numel() == t.nelement() == 24 and len(t) == 2
    assert repr(t.shape) == "ember.Size([2, 3, 4])" and t.shape.numel() == 24
    with err(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)"):
        t.size(3)
    with err(IndexError, "Dimension out of range"):
        t.stride(-4)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(th.tensor(1.0))
    assert th.tensor(1.0).size() == ()
    # a 0-d tensor has no dim: asking for one is an IndexError (as in PyTorch)
    with err(IndexError, "Dimension specified as -1 but tensor has no dimensions"):
        th.tensor(1.0).size(-1)
    with err(IndexError, "Dimension specified as 0 but tensor has no dimensions"):
        th.tensor(1.0).stride(0)


# ---- copy_ / fill_ / zero_ -------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_copy_fill_zero_every_dtype(dtype, make):
    """copy_ converts between dtypes and broadcasts; fill_/zero_ write
    through non-contiguous views."""
    def check(src_dtype):
        dst, d = make((3, 4), dtype, "transposed")  # a non-contiguous (3, 4)
        src, s = make((4,), src_dtype)
        assert dst.copy_(src) is dst  # (3, 4) <- (4,): broadcast over rows
        want = np.broadcast_to(s.astype(np.float64), (3, 4))
        if dtype is th.bool:
            want = want != 0  # float -> bool: any nonzero value is True
        elif not dtype.is_floating_point and src_dtype.is_floating_point:
            want = np.trunc(want)  # float -> int truncates
        assert_close(dst, want, dtype)
    each(DTYPES, check)
    t, a = make((4, 6), dtype)
    t[:, ::2].fill_(1)
    a = a.copy()
    a[:, ::2] = 1
    assert_close(t, a, dtype)
    t.t()[1:3].zero_()
    a.T[1:3] = 0
    assert_close(t, a, dtype)
    t.fill_(th.ones((), dtype=th.int64))  # a 0-d tensor value
    assert_close(t, np.ones((4, 6)), dtype)


def test_copy_fill_errors():
    t = th.zeros(2, 4)
    with pytest.raises(RuntimeError, match=re.escape("copy: source of shape [3] cannot be "
                                                     "broadcast to the destination shape [2, 4]")):
        t.copy_(th.ones(3))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        t.fill_(th.ones(2))
    assert (to_numpy(t) == 0).all()
    t.copy_(th.tensor([1.7, -2.2, 3.9, 0.5]))
    i = th.zeros(4, dtype=th.int32)
    i.copy_(t[0])
    assert i.tolist() == [1, -2, 3, 0]  # float -> int truncates
