"""Views (sharing device memory), shaping composed from views and copies
(cat, stack, flip, roll, repeat, tril/triu), the in-place random samplers,
and the methods libTHC has no kernels for yet (real methods that raise
NotImplementedError, so the front's missing_features() is empty and users
get a clear message)."""
import numbers

import numpy as np

import ember.th as _th
from ember.th import dtypes as _dt

from ember.th._binding import decorator, registrar
from ember.th._binding_views import define_views, stack_with

from ._lib import check, ffi, lib
from ._tensor import (C, Tensor, int64_array, int_array, lib_version, operand,
                      parse_shape, scalar_tensor, upload, wrap, wrap_dim)

functions = {}
_add = registrar(Tensor, functions)
_register = decorator(_add)


# ---- views: ember.th's, over libTHC ---------------------------------------
define_views(_add, Tensor, C, wrap, int64_array, int_array, parse_shape)


# ---- concatenation and shaping by copies ------------------------------
def _device_tensors(tensors, what):
    for t in tensors:
        if isinstance(t, _th.Tensor):
            raise RuntimeError(f"{what}: expected all tensors to be on the same device, but "
                               "found at least two devices, cuda:0 and cpu!")
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: expected a sequence of Tensors, got "
                            f"{type(t).__name__}")
    return tensors


def cat(tensors, dim=0, *, out=None):
    """libTH's th_cat rules (promotion, legacy 1-d empties, messages):
    allocate the result, then one device copy per input."""
    tensors = _device_tensors(list(tensors), "torch.cat()")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dtype = tensors[0].dtype
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
        dtype = _dt.promote_types(dtype, t.dtype)
    parts = [(i, t) for i, t in enumerate(tensors) if not (t.ndim == 1 and t.shape[0] == 0)]
    if not parts:
        return _empty([0], dtype)
    ref = parts[0][1]
    d = wrap_dim(dim, ref.ndim)
    sizes = list(ref.shape)
    sizes[d] = 0
    for i, t in parts:
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} "
                               f"and {t.ndim}")
        for k in range(t.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[k]} but got size {t.shape[k]} "
                                   f"for tensor number {i} in the list.")
        sizes[d] += t.shape[d]
    r = _empty(sizes, dtype)
    off = 0
    for _, t in parts:
        n = t.shape[d]
        if n:
            part = r.narrow(d, off, n)  # a name keeps it alive across the C call
            check(lib.thc_copy(part._p, t._p))
        off += n
    return r if out is None else out.copy_(r)


def _empty(sizes, dtype):
    return wrap(lib.thc_empty(len(sizes), int64_array(sizes), dtype.code))


def stack(tensors, dim=0, *, out=None):
    return stack_with(cat, _device_tensors(list(tensors), "stack"), dim, out)


functions["cat"] = functions["concat"] = functions["concatenate"] = cat
functions["stack"] = stack


@_register()
def flip(input, dims):
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    return wrap(lib.thc_flip_view(input._p, len(dims), int_array(dims))).clone()


@_register()
def roll(input, shifts, dims=None):
    if dims is None:
        return roll(input.flatten(), shifts, 0).view(input.shape)
    shifts = [shifts] if isinstance(shifts, numbers.Integral) else list(shifts)
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    r = input
    for s, d in zip(shifts, dims):
        d = wrap_dim(d, input.ndim)
        n = input.shape[d]
        s = s % n if n else 0
        if s:  # the last s entries move to the front
            r = cat([r.narrow(d, n - s, s), r.narrow(d, 0, n - s)], d)
    return r.clone() if r is input else r


@_register(function=False)
def repeat(self, *sizes):
    reps = parse_shape(sizes)
    if len(reps) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                           "number of dimensions of tensor")
    shape = [1] * (len(reps) - self.ndim) + list(self.shape)
    for i, (r, s) in enumerate(zip(reps, shape)):
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: "
                               f"{list(reps)}")
        if r * s >= 2 ** 63:  # libTHC's sizes are int64, as libTH's
            raise RuntimeError(f"repeat: sizes {list(self.shape)} repeated {list(reps)} "
                               f"overflow int64 at dimension {i}")
    x = self.reshape(shape)
    for i in range(len(shape)):  # (1, s0, 1, s1, ...) then expand the 1s
        x = x.unsqueeze(2 * i)
    expanded = [v for r, s in zip(reps, shape) for v in (r, s)]
    return x.expand(expanded).reshape([r * s for r, s in zip(reps, shape)])


def _tri(input, diagonal, upper):
    if input.ndim < 2:
        raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least "
                           "2 dimensions")
    rows, cols = input.shape[-2:]
    keep = np.tri(rows, cols, diagonal - 1 if upper else diagonal, dtype=bool)
    mask = upload(_th.from_numpy(~keep if upper else keep))  # a small host-built mask
    return lib_where(mask, input, scalar_tensor(0, input.dtype))


def lib_where(cond, a, b):
    return wrap(lib.thc_where(cond._p, operand(a), operand(b)))


@_register()
def tril(input, diagonal=0):
    return _tri(input, diagonal, False)


@_register()
def triu(input, diagonal=0):
    return _tri(input, diagonal, True)


Tensor.tril_ = lambda self, diagonal=0: self.copy_(_tri(self, diagonal, False))
Tensor.triu_ = lambda self, diagonal=0: self.copy_(_tri(self, diagonal, True))


# ---- in-place random samplers -----------------------------------------
def gen_ptr(generator):
    """The C generator: the default one for None, else a thc Generator's."""
    if generator is None:
        return lib.thc_default_generator()
    g = getattr(generator, "_g", None)
    if g is None or ffi.typeof(g) is not ffi.typeof("thc_generator *"):
        found = str(getattr(generator, "device", type(generator).__name__)).split(":")[0]
        raise RuntimeError(f"Expected a 'cuda' device type for generator but found '{found}'")
    return g


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    check(lib.thc_uniform_(self._p, float(from_), float(to), gen_ptr(generator)))
    return self


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    check(lib.thc_normal_(self._p, float(mean), float(std), gen_ptr(generator)))
    return self


def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, (Tensor, _th.Tensor)):
        # per-element probabilities: uniform draws compared with p
        if isinstance(p, _th.Tensor):
            p = upload(p)
        u = _empty(list(self.shape), _dt.float64 if p.dtype is _dt.float64 else _dt.float32)
        uniform_(u, generator=generator)
        return self.copy_(u < p)
    check(lib.thc_bernoulli_(self._p, float(p), gen_ptr(generator)))
    return self


def bernoulli(input, p=None, *, generator=None, out=None):
    r = _empty(list(input.shape), input.dtype)
    bernoulli_(r, input if p is None else p, generator=generator)
    return r if out is None else out.copy_(r)


_RANDOM_MAX = {"int8": 1 << 7, "uint8": 1 << 8, "int16": 1 << 15, "int32": 1 << 31,
               "int64": (1 << 63) - 1, "bool": 2}


def random_(self, from_=0, to=None, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    if to is None:
        if from_ == 0 and not kw:
            to = 1 << 24 if self.dtype.is_floating_point else _RANDOM_MAX[self.dtype.name]
        else:
            from_, to = 0, from_
    check(lib.thc_randint_(self._p, int(from_), int(to), gen_ptr(generator)))
    return self


for _f in (uniform_, normal_, bernoulli_, random_, bernoulli):
    setattr(Tensor, _f.__name__, _f)
functions["bernoulli"] = bernoulli


# ---- what libTHC cannot do yet ------------------------------------------
#: The front's raw-tensor methods (backends.RAW_TENSOR_METHODS) that have
#: no libTHC kernel yet, plus a few close relatives (none at present).
NOT_IMPLEMENTED = ()
#: Namespace functions without a libTHC kernel yet.
NOT_IMPLEMENTED_FUNCTIONS = ()


def not_implemented(name):
    def method(*args, **kwargs):
        raise NotImplementedError(
            f"{name} is not implemented on CUDA tensors by ember-thc {lib_version()} yet")
    method.__name__ = name
    return method


for _name in NOT_IMPLEMENTED:
    setattr(Tensor, _name, not_implemented(_name))
    if not _name.endswith("_"):
        functions.setdefault(_name, getattr(Tensor, _name))
for _name in NOT_IMPLEMENTED_FUNCTIONS:
    functions[_name] = not_implemented(_name)
