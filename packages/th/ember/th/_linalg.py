"""Matrix products: dot, mv, mm, bmm, matmul (@), outer, addmm/addmv/
addbmm/baddbmm, through OpenBLAS (or the built-in blocked GEMM); mm, bmm,
addmm and baddbmm are ember.th._binding_math's.  dot, mv, mm, bmm, matmul
and outer take complex operands too (four real products); the add*
forms do not."""
from ._binding import registrar
from ._complex import complex as complex_
from ._binding_math import check_scalars, define_products, out_to, register_products
from ._core import C, Tensor, scalar_tensor, wrap
from ._lib import lib

_functions = {}


def _check(*named):
    """TypeError for non-tensor operands, as PyTorch's argument parser."""
    for name, x in named:
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


def _input(x, like):
    """The `input` of the add* products: numbers take the matrices' dtype.
    Callers keep the returned Tensor alive across the C call."""
    return x if isinstance(x, Tensor) else scalar_tensor(x, like.dtype)


mm, bmm, addmm, baddbmm = define_products(C, wrap, _check, _input)


def dot(input, other, *, out=None):
    _check(("input", input), ("other", other))
    return out_to(wrap(lib.th_dot(input._p, other._p)), out)


def mv(input, vec, *, out=None):
    _check(("input", input), ("vec", vec))
    return out_to(wrap(lib.th_mv(input._p, vec._p)), out)


def matmul(input, other, *, out=None):
    _check(("input", input), ("other", other))
    return out_to(wrap(lib.th_matmul(input._p, other._p)), out)


def outer(input, vec2, *, out=None):
    _check(("input", input), ("vec2", vec2))
    return out_to(wrap(lib.th_outer(input._p, vec2._p)), out)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    _check(("mat", mat), ("vec", vec))
    check_scalars(mat, beta, alpha)
    inp = _input(input, mat)
    return out_to(wrap(lib.th_addmv(inp._p, mat._p, vec._p, float(beta), float(alpha))), out)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    _check(("batch1", batch1), ("batch2", batch2))
    check_scalars(batch1, beta, alpha)
    inp = _input(input, batch1)
    return out_to(wrap(lib.th_addbmm(inp._p, batch1._p, batch2._p, float(beta),
                                     float(alpha))), out)


def _complex_aware(fn):
    """fn, and for two complex operands of one dtype (which libTH's GEMM
    refuses) the product from four real ones over the real and imaginary
    parts: (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)."""
    def product(input, other, *, out=None):
        try:
            return fn(input, other, out=out)
        except TypeError:
            if not (isinstance(input, Tensor) and isinstance(other, Tensor) and
                    input.dtype.is_complex and input.dtype is other.dtype):
                raise
        ar, ai, br, bi = input.real, input.imag, other.real, other.imag
        r = complex_(fn(ar, br) - fn(ai, bi), fn(ar, bi) + fn(ai, br))
        return out_to(r, out)
    product.__name__ = fn.__name__
    product.__doc__ = fn.__doc__
    return product


dot, mv, mm, bmm, matmul, outer = (_complex_aware(f) for f in (dot, mv, mm, bmm, matmul, outer))
register_products(registrar(Tensor, _functions), Tensor, dot, mv, mm, bmm, matmul, outer,
                  addmm, addmv, baddbmm, addbmm,
                  matmul_c=lib.th_matmul, wrap=wrap)


def _matmul_operator(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    try:
        return wrap(lib.th_matmul(self._p, other._p))
    except TypeError:
        return matmul(self, other)  # complex operands (or the same error again)


Tensor.__matmul__ = _matmul_operator
Tensor.__rmatmul__ = lambda self, other: _matmul_operator(other, self) \
    if isinstance(other, Tensor) else NotImplemented
functions = _functions
