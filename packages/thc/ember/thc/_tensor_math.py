"""Reductions (sum, mean, var/std, max/min, norm, ...) and matrix products
(dot, mv, mm, bmm, matmul, outer, addmm, ...) on CUDA tensors.

libTHC has kernels for the reductions, mm, bmm, addmm and baddbmm; dot,
mv, matmul, outer, addmv, addbmm and norm are composed from them here,
with libTH's error messages."""
import builtins
import math
import numbers

import ember.th as _th
from ember.th._binding_math import (check_scalars as _check_scalars, define_products,
                                    define_reductions, norm_args, out_to as _out,
                                    register_products)

from ._lib import check, lib
from ._tensor import C, Tensor, int_array, registrar, scalar_tensor, wrap, wrap_dim

functions = {}
_register = registrar(Tensor, functions)


# ---- reductions: ember.th's, over libTHC; norm composed from them ----------
define_reductions(_register, Tensor, C, wrap, check, int_array)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    """The vector p-norm, composed from reductions: half types compute in
    float32, the result has the input's dtype (as libTH's th_norm)."""
    input, p = norm_args(input, p, dtype)
    d = input.dtype
    if not d.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {d._title}")
    p = float(p)
    if (p < 0 or math.isinf(p)) and input.numel() == 0:
        _no_identity(input, p, dim)
    x = (input.float() if d.code in (lib.THC_FLOAT16, lib.THC_BFLOAT16) else input).abs()
    if p == 2:
        r = (x * x).sum(dim, keepdim).sqrt()
    elif p == 1:
        r = x.sum(dim, keepdim)
    elif p == 0:
        r = (x != 0).sum(dim, keepdim)
    elif p == math.inf:
        r = x.amax(dim, keepdim)
    elif p == -math.inf:
        r = x.amin(dim, keepdim)
    else:
        r = (x ** p).sum(dim, keepdim) ** (1.0 / p)
    return _out(r.to(d), out)


def _no_identity(input, p, dim):
    """libTH's errors for max/min-like norms of empty tensors."""
    if dim is None or (not isinstance(dim, numbers.Integral) and not list(dim)):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty "
                           "tensor because the operation does not have an identity")
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    for d in sorted(wrap_dim(d, input.ndim) for d in dims):
        if input.shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on the "
                               f"dimension {d} because this dimension is empty and the "
                               "operation does not have an identity")


_register(norm)


# ---- matrix products ---------------------------------------------------
def _check(*named):
    """TypeError for operands that are not CUDA tensors (RuntimeError for
    CPU tensors, as PyTorch's device check)."""
    for name, x in named:
        if not isinstance(x, Tensor):
            if isinstance(x, _th.Tensor):
                raise RuntimeError("Expected all tensors to be on the same device, but found "
                                   "at least two devices, cuda:0 and cpu!")
            raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


def _input(x, like):
    """The `input` of the add* products: numbers take the matrices' dtype."""
    return x if isinstance(x, Tensor) else scalar_tensor(x, like.dtype)


mm, bmm, addmm, baddbmm = define_products(C, wrap, _check, _input)


def dot(input, other, *, out=None):
    _check(("input", input), ("other", other))
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{input.dtype._title} and {other.dtype._title}")
    k, k2 = input.shape[0], other.shape[0]
    if k != k2:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{k}] and src [{k2}] "
                           f"to have the same number of elements, but got {k} and {k2} "
                           "elements respectively")
    r = mm(input.unsqueeze(0), other.unsqueeze(1))  # (1 x k) @ (k x 1)
    return _out(r.reshape(()), out)


def _check_mv(in_dim, in_numel, m, v):
    if m.ndim != 2 or v.ndim != 1 or in_dim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {in_dim}, {m.ndim}, "
                           f"{v.ndim}")
    rows, cols = m.shape
    if cols != v.shape[0] or in_numel not in (rows, 1):
        raise RuntimeError(f"size mismatch, got input ({in_numel}), mat ({rows}x{cols}), "
                           f"vec ({v.shape[0]})")


def mv(input, vec, *, out=None):
    _check(("input", input), ("vec", vec))
    _check_mv(1, input.shape[0] if input.ndim else 0, input, vec)
    return _out(mm(input, vec.unsqueeze(1)).squeeze(1), out)


def _broadcast(a, b):
    """Broadcast of two batch shapes, with libTH's error."""
    n = builtins.max(len(a), len(b))
    a, b = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {len(out)}")
        out.append(y if x == 1 else x)
    return out


def _matmul_batched(a, b):
    """Broadcast batch dims, then one bmm; a 1-d a is (1, m) and a 1-d b is
    (m, 1), and the added dim is left out of the result."""
    da, db = a.ndim, b.ndim
    a3 = a.unsqueeze(0) if da == 1 else a
    b3 = b.unsqueeze(1) if db == 1 else b
    (n, m1), (m2, p) = a3.shape[-2:], b3.shape[-2:]
    batch = _broadcast(a3.shape[:-2], b3.shape[:-2])
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype._title} but found "
                           f"{b.dtype._title}")
    if m1 != m2:
        bs = math.prod(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {m1}] but got: [{bs}, {m2}].")
    ae = a3.expand(batch + [n, m1]).reshape(-1, n, m1)
    be = b3.expand(batch + [m2, p]).reshape(-1, m2, p)
    shape = batch + ([n] if da > 1 else []) + ([p] if db > 1 else [])
    return bmm(ae, be).view(shape)


def matmul(input, other, *, out=None):
    _check(("input", input), ("other", other))
    da, db = input.ndim, other.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        r = dot(input, other)
    elif da == 2 and db == 1:
        r = mv(input, other)
    elif da == 2 and db == 2:
        r = mm(input, other)
    elif da == 1 and db == 2:
        r = mm(input.unsqueeze(0), other).squeeze(0)
    elif da >= 3 and db <= 2:  # fold a's batch into the rows: one product
        a2 = input.reshape(-1, input.shape[-1])
        r2 = mm(a2, other) if db == 2 else mv(a2, other)
        r = r2.view(list(input.shape[:-1]) + ([other.shape[1]] if db == 2 else []))
    else:
        r = _matmul_batched(input, other)
    return _out(r, out)


def outer(input, vec2, *, out=None):
    _check(("input", input), ("vec2", vec2))
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return _out(input.unsqueeze(1) * vec2.unsqueeze(0), out)  # exact for every dtype


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    _check(("mat", mat), ("vec", vec))
    _check_scalars(mat, beta, alpha)
    inp = _input(input, mat)
    _check_mv(inp.ndim, inp.numel(), mat, vec)
    inp2 = inp.unsqueeze(1) if inp.ndim == 1 else inp  # (n) -> (n, 1)
    col = vec.unsqueeze(1)  # a name keeps it alive across the C call
    r = wrap(lib.thc_addmm(inp2._p, mat._p, col._p, float(beta), float(alpha)))
    return _out(r.squeeze(1), out)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b], as one addmm of
    (n, B*k) @ (B*k, p)."""
    _check(("batch1", batch1), ("batch2", batch2))
    _check_scalars(batch1, beta, alpha)
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (nb1, n, k1), (nb2, k2, p) = batch1.shape, batch2.shape
    if nb1 != nb2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {nb1} "
                           f"and {nb2}")
    if k1 != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k1} and {k2}x{p})")
    inp = _input(input, batch1)
    m1 = batch1.permute(1, 0, 2).reshape(n, nb1 * k1)
    m2 = batch2.reshape(nb2 * k2, p)
    return _out(wrap(lib.thc_addmm(inp._p, m1._p, m2._p, float(beta), float(alpha))), out)


register_products(_register, Tensor, dot, mv, mm, bmm, matmul, outer, addmm, addmv,
                  baddbmm, addbmm)
