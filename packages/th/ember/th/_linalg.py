"""Matrix products: dot, mv, mm, bmm, matmul (@), outer, addmm/addmv/
addbmm/baddbmm, through OpenBLAS (or the built-in blocked GEMM); mm, bmm,
addmm and baddbmm are ember.th._binding_math's."""
from ._binding import registrar
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


register_products(registrar(Tensor, _functions), Tensor, dot, mv, mm, bmm, matmul, outer,
                  addmm, addmv, baddbmm, addbmm,
                  matmul_c=lib.th_matmul, wrap=wrap)
functions = _functions
