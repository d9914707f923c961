"""eig and eigvals of general (real or complex) matrices (libTH's geev),
with PyTorch's gradient (its complex solve is ember.linalg.solve, so it
differentiates again)."""
from .._tensor import _make
from ..autograd.function import Function
from ._functions import raw_call


class Eig(Function):
    @staticmethod
    def forward(ctx, A):
        W, V = (_make(x) for x in raw_call("linalg_eig", A))
        ctx.save_for_backward(W, V)
        ctx.set_materialize_grads(False)
        ctx.real_input = not A.is_complex()
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
        from . import solve
        gA = solve(Vh, inner.matmul(Vh))
        return gA.real if ctx.real_input else gA
