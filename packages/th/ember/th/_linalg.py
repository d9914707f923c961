"""Matrix products: dot, mv, mm, bmm, matmul (@), outer, addmm/addmv/
addbmm/baddbmm, through OpenBLAS (or the built-in blocked GEMM)."""
from ._core import Tensor, scalar_tensor, wrap
from ._lib import lib

_functions = {}


def _register(fn, names=None, method=True):
    for n in names or (fn.__name__,):
        _functions[n] = fn
        if method:
            setattr(Tensor, n, fn)
    return fn


def _check(*named):
    """TypeError for non-tensor operands, as PyTorch's argument parser."""
    for name, x in named:
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


def _check_scalars(like, beta, alpha):
    if not like.dtype.is_floating_point:
        for name, v in (("alpha", alpha), ("beta", beta)):
            if isinstance(v, float) and not isinstance(v, bool):
                raise RuntimeError(f"For integral input tensors, argument {name} must "
                                   "not be a floating point number.")


def _input(x, like):
    """The `input` of the add* products: numbers take the matrices' dtype.
    Callers keep the returned Tensor alive across the C call."""
    return x if isinstance(x, Tensor) else scalar_tensor(x, like.dtype)


def _out(r, out):
    return r if out is None else out.copy_(r)


def dot(input, other, *, out=None):
    _check(("input", input), ("other", other))
    return _out(wrap(lib.th_dot(input._p, other._p)), out)


def mv(input, vec, *, out=None):
    _check(("input", input), ("vec", vec))
    return _out(wrap(lib.th_mv(input._p, vec._p)), out)


def mm(input, mat2, *, out=None):
    _check(("input", input), ("mat2", mat2))
    return _out(wrap(lib.th_mm(input._p, mat2._p)), out)


def bmm(input, mat2, *, out=None):
    _check(("input", input), ("mat2", mat2))
    return _out(wrap(lib.th_bmm(input._p, mat2._p)), out)


def matmul(input, other, *, out=None):
    _check(("input", input), ("other", other))
    return _out(wrap(lib.th_matmul(input._p, other._p)), out)


def outer(input, vec2, *, out=None):
    _check(("input", input), ("vec2", vec2))
    return _out(wrap(lib.th_outer(input._p, vec2._p)), out)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    _check(("mat1", mat1), ("mat2", mat2))
    _check_scalars(mat1, beta, alpha)
    inp = _input(input, mat1)
    return _out(wrap(lib.th_addmm(inp._p, mat1._p, mat2._p, float(beta), float(alpha))), out)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    _check(("mat", mat), ("vec", vec))
    _check_scalars(mat, beta, alpha)
    inp = _input(input, mat)
    return _out(wrap(lib.th_addmv(inp._p, mat._p, vec._p, float(beta), float(alpha))), out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    _check(("batch1", batch1), ("batch2", batch2))
    _check_scalars(batch1, beta, alpha)
    inp = _input(input, batch1)
    return _out(wrap(lib.th_baddbmm(inp._p, batch1._p, batch2._p, float(beta),
                                    float(alpha))), out)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    _check(("batch1", batch1), ("batch2", batch2))
    _check_scalars(batch1, beta, alpha)
    inp = _input(input, batch1)
    return _out(wrap(lib.th_addbmm(inp._p, batch1._p, batch2._p, float(beta),
                                   float(alpha))), out)


for _f in (dot, mv, mm, bmm, matmul, outer, addmm, addmv, baddbmm, addbmm):
    _register(_f)
_register(outer, ["ger"])


def _inplace(fn):
    def inplace(self, *args, **kwargs):
        return self.copy_(fn(self, *args, **kwargs))
    inplace.__name__ = fn.__name__ + "_"
    return inplace


for _f in (addmm, addmv, baddbmm, addbmm):
    setattr(Tensor, _f.__name__ + "_", _inplace(_f))

Tensor.__matmul__ = lambda self, other: wrap(lib.th_matmul(self._p, other._p)) \
    if isinstance(other, Tensor) else NotImplemented
Tensor.__rmatmul__ = lambda self, other: wrap(lib.th_matmul(other._p, self._p)) \
    if isinstance(other, Tensor) else NotImplemented

functions = _functions
