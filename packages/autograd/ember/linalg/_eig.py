"""eig and eigvals of general real matrices (libTH's geev), with PyTorch's
gradient.  libTH's solves take real matrices only, so the complex solve
the gradient needs is written here over the real and imaginary parts (with
ember ops: it differentiates again)."""
from .._tensor import _make
from ..autograd.function import Function
from ._functions import raw_call


def _parts(x):
    return (x.real, x.imag) if x.is_complex() else (x, None)


def csolve(A, B):
    """X with A X = B for complex A and B: the real system
    [[Ar, -Ai], [Ai, Ar]] [Xr; Xi] = [Br; Bi] of twice the order."""
    from .._ops.complex import complex as _complex
    from .._ops.define import NAMESPACE
    from . import solve
    cat = NAMESPACE["cat"]
    ar, ai = _parts(A)
    br, bi = _parts(B)
    if ai is None:
        ai = ar * 0
    if bi is None:
        bi = br * 0
    big = cat([cat([ar, -ai], -1), cat([ai, ar], -1)], -2)
    x = solve(big, cat([br, bi], -2))
    n = A.shape[-1]
    return _complex(x[..., :n, :], x[..., n:, :])


class Eig(Function):
    @staticmethod
    def forward(ctx, A):
        W, V = (_make(x) for x in raw_call("linalg_eig", A))
        ctx.save_for_backward(W, V)
        ctx.set_materialize_grads(False)
        return W, V

    @staticmethod
    def backward(ctx, gW, gV):
        # gA = V^{-H} (diag(gW) + (V^H gV - V^H V diag(Re(V^H gV))) / conj(E)) V^H,
        # E_ij = W_j - W_i off the diagonal; the real part for a real A
        W, V = ctx.saved_tensors
        Vh = V.mH
        if gV is None:
            inner = gW.diag_embed()
        else:
            VhgV = Vh.matmul(gV)
            diag_re = VhgV.real.diagonal(0, -2, -1)
            VhgV = VhgV - Vh.matmul(V * diag_re.unsqueeze(-2))
            Wc = W.conj()
            E = Wc.unsqueeze(-2) - Wc.unsqueeze(-1)
            from .._creation import eye
            n = W.shape[-1]
            eye_n = eye(n, dtype=W.dtype.to_real(), device=W.device)
            inner = VhgV / (E + eye_n) * (1 - eye_n)  # the diagonal comes from gW
            if gW is not None:
                inner = inner + gW.diag_embed()
        gA = csolve(Vh, inner.matmul(Vh))
        return gA.real
