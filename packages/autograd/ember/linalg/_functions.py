"""The differentiable primitives of ember.linalg: each runs one backend
routine forward (the raw ``linalg_*`` functions of the backend interface)
and gives its gradient as ember ops, so gradients differentiate again
(double backward).  The formulas are the standard ones that PyTorch uses,
written with conjugate transposes (mH: transposes for real matrices), so
that complex matrices get PyTorch's complex gradients (plus the SVD's
phase term); also its conventions: symmetric (Hermitian) gradients for the Cholesky
factorisation and the symmetric eigendecomposition, gradients projected on
the triangle a triangular solve reads."""
from .. import backends
from .._device import device_of
from .._tensor import Tensor, _make
from ..autograd.function import Function


def raw_call(name, A, *args, **kwargs):
    """The backend's raw routine `name` on the raw tensors of A (and of
    any Tensor in args)."""
    ns = backends.get_backend(device_of(A._data).type).namespace
    fn = getattr(ns, name, None)
    if fn is None:
        raise NotImplementedError(f"{name}: not implemented for '{device_of(A._data).type}' "
                                  "tensors")
    args = tuple(a._data if isinstance(a, Tensor) else a for a in args)
    return fn(A._data, *args, **kwargs)


def linalg_error():
    """The backend's LinAlgError class (RuntimeError if it has none)."""
    ns = backends.get_backend("cpu").namespace
    return getattr(ns, "LinAlgError", RuntimeError)


def _sym(X):
    return (X + X.mT) * 0.5


class Solve(Function):
    """X = A^-1 B for matrices (*, n, n) and (*, n, k), batches broadcast."""

    @staticmethod
    def forward(ctx, A, B):
        X, _ = raw_call("linalg_solve_ex", A, B, check_errors=True)
        X = _make(X)
        ctx.save_for_backward(A, X)
        ctx.shapes = (A.shape, B.shape)
        return X

    @staticmethod
    def backward(ctx, gX):
        A, X = ctx.saved_tensors
        gB = Solve.apply(A.mH, gX)
        gA = -gB.matmul(X.mH) if ctx.needs_input_grad[0] else None
        return (None if gA is None else gA.sum_to_size(ctx.shapes[0]),
                gB.sum_to_size(ctx.shapes[1]) if ctx.needs_input_grad[1] else None)


class Inv(Function):
    @staticmethod
    def forward(ctx, A):
        X, _ = raw_call("linalg_inv_ex", A, check_errors=True)
        X = _make(X)
        ctx.save_for_backward(X)
        return X

    @staticmethod
    def backward(ctx, gX):
        X, = ctx.saved_tensors
        return -X.mH.matmul(gX).matmul(X.mH)


class Det(Function):
    """det(A): the gradient is g adj(A)^H, g conj(det A) A^-H for invertible
    matrices and, when a matrix of the batch is singular, through the SVD
    A = U S Vh: g conj(det(U Vh)) U diag(prod_{j != i} S_j) Vh (PyTorch's
    way)."""

    @staticmethod
    def forward(ctx, A):
        d = _make(raw_call("linalg_det", A))
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx, g):
        A, d = ctx.saved_tensors
        if A.shape[-1] == 0:
            return A.new_zeros(A.shape)
        if bool((d != 0).all()):
            return (g * d.conj())[..., None, None] * Inv.apply(A).mH
        U, S, Vh = SVD.apply(A)
        ones = S.new_ones(S.shape[:-1] + (1,))
        before = _cat([ones, S[..., :-1].cumprod(-1)])  # prod of S_j for j < i
        after = _cat([ones, S.flip(-1)[..., :-1].cumprod(-1)]).flip(-1)  # j > i
        sign = Det.apply(U.matmul(Vh)).detach().conj()  # the phase det(U Vh)
        return (g * sign)[..., None, None] * (U * (before * after).unsqueeze(-2)).matmul(Vh)


def _cat(xs):
    from .._ops.shape import cat
    return cat(xs, -1)


class Slogdet(Function):
    """(sign, log|det A|); sign is differentiable for complex matrices
    only.  With log det A = log|det A| + i arg(det A), the gradient is
    (g_logabs + i Im(g_sign conj(sign))) A^-H."""

    @staticmethod
    def forward(ctx, A):
        sign, logabs = raw_call("linalg_slogdet", A)
        sign, logabs = _make(sign), _make(logabs)
        if not A.is_complex():
            ctx.mark_non_differentiable(sign)
        ctx.save_for_backward(A, sign)
        return sign, logabs

    @staticmethod
    def backward(ctx, gsign, glogabs):
        A, sign = ctx.saved_tensors
        g = glogabs
        if A.is_complex():
            from .._ops.complex import complex as _complex
            g = g if g is not None else sign.new_zeros(sign.shape).real
            arg = (gsign * sign.conj()).imag if gsign is not None else g.new_zeros(g.shape)
            g = _complex(g, arg)
        return g[..., None, None] * Inv.apply(A).mH


class Cholesky(Function):
    @staticmethod
    def forward(ctx, A, upper):
        L, _ = raw_call("linalg_cholesky_ex", A, upper=upper, check_errors=True)
        L = _make(L)
        ctx.save_for_backward(L)
        ctx.upper = upper
        return L

    @staticmethod
    def backward(ctx, gL):
        L, = ctx.saved_tensors
        if ctx.upper:
            L, gL = L.mH, gL.mH
        # A = L L^H: gA = L^-H Φ(L^H gL) L^-1, Φ keeping the lower
        # triangle with half the diagonal, made Hermitian
        P = L.mH.matmul(gL).tril()
        P = (P + P.tril(-1).mH) * 0.5
        gA = SolveTriangular.apply(L.mH, P, True, True, False)
        gA = SolveTriangular.apply(L, gA, False, False, False)
        return gA, None


def _tri(X, upper, unit):
    """X's part on the triangle a triangular solve reads."""
    if upper:
        return X.triu(1 if unit else 0)
    return X.tril(-1 if unit else 0)


class SolveTriangular(Function):
    """X with A X = B (left) or X A = B, A upper or lower triangular."""

    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        if left:
            X = _make(raw_call("linalg_solve_triangular", A, B, upper=upper,
                               unitriangular=unitriangular))
        else:  # X A = B  <=>  A^H X^H = B^H (the raw routine's transpose is the adjoint)
            X = _make(raw_call("linalg_solve_triangular", A, B.mH, upper=upper,
                               transpose=True, unitriangular=unitriangular)).mH
        ctx.save_for_backward(A, X)
        ctx.args = (upper, left, unitriangular, A.shape, B.shape)
        return X

    @staticmethod
    def backward(ctx, gX):
        A, X = ctx.saved_tensors
        upper, left, unit, ashape, bshape = ctx.args
        gB = SolveTriangular.apply(A.mH, gX, not upper, left, unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -gB.matmul(X.mH) if left else -X.mH.matmul(gB)
            gA = _tri(gA, upper, unit).sum_to_size(ashape)
        return gA, gB.sum_to_size(bshape) if ctx.needs_input_grad[1] else None, \
            None, None, None


class QR(Function):
    @staticmethod
    def forward(ctx, A, mode):
        Q, R = raw_call("linalg_qr", A, mode)
        Q, R = _make(Q), _make(R)
        ctx.save_for_backward(A, Q, R)
        ctx.mode = mode
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        A, Q, R = ctx.saved_tensors
        m, n = A.shape[-2], A.shape[-1]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not "
                               "computed when mode='r'. Please use linalg.qr(A, "
                               "mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        return _qr_grad(Q, R, gQ, gR, A), None


def _syminvadj(X):
    """X + X^H with the diagonal counted once (real for complex X)."""
    r = X + X.mH
    return r - r.diagonal(0, -2, -1).diag_embed() * 0.5


def _qr_grad(Q, R, gQ, gR, A):
    m, n = A.shape[-2], A.shape[-1]
    if m >= n:
        # gA = [gQ + Q syminvadj(triu(gR R^H - Q^H gQ))] R^-H
        M = gR.matmul(R.mH) - Q.mH.matmul(gQ)
        gA = Q.matmul(_syminvadj(M.triu())) + gQ
        return SolveTriangular.apply(R.mH, gA, False, False, False)
    # wide A = [X | Y] with X = Q U square: the square part's gradient plus Y's
    Y = A.narrow(-1, m, n - m)
    U = R.narrow(-1, 0, m)
    gV = gR.narrow(-1, 0, m)
    gRY = gR.narrow(-1, m, n - m)
    gY = Q.matmul(gRY)
    gQ2 = gQ + Y.matmul(gRY.mH)
    M = gV.matmul(U.mH) - Q.mH.matmul(gQ2)
    gX = Q.matmul(_syminvadj(M.triu())) + gQ2
    gX = SolveTriangular.apply(U.mH, gX, False, False, False)
    from .._ops.shape import cat
    return cat([gX, gY], -1)


class SVD(Function):
    """U, S, Vh (reduced); gradients as PyTorch's svd_backward: repeated
    singular values make the U/V terms infinite, while the singular values
    alone (svdvals) always have a gradient; for complex inputs the loss
    must not depend on the singular vectors' phases (as PyTorch's)."""

    @staticmethod
    def forward(ctx, A):
        U, S, Vh = raw_call("linalg_svd", A, False)
        U, S, Vh = _make(U), _make(S), _make(Vh)
        ctx.save_for_backward(U, S, Vh)
        ctx.set_materialize_grads(False)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        return svd_grad(U, S, Vh, gU, gS, gVh)


def svd_grad(U, S, Vh, gU, gS, gVh):
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return U.matmul(gS.unsqueeze(-1) * Vh)
    V = Vh.mH
    gV = None if gVh is None else gVh.mH
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    k = S.shape[-1]
    from .._creation import eye
    E = E + eye(k, dtype=S.dtype, device=S.device)  # 1 on the diagonal
    if gU is not None:
        UhgU = U.mH.matmul(gU)
        UhgU = UhgU - UhgU.mH
    if gV is not None:
        VhgV = Vh.matmul(gV)
        VhgV = VhgV - VhgV.mH
    if gU is not None and gV is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif gU is not None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if U.is_complex() and gU is not None:
        # the phase of each pair of singular vectors: i Im(diag(U^H gU)) / S
        gA = gA + (UhgU.diagonal(0, -2, -1).imag / (2 * S) * 1j).diag_embed()
    if m > n and gU is not None:
        gA = U.matmul(gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U.matmul(U.mH.matmul(gUSinv))
        return gA.matmul(Vh)
    if m < n and gV is not None:
        gA = gA.matmul(Vh)
        gVSinv = gV / S.unsqueeze(-2)
        gA = gA + gVSinv.mH - gVSinv.mH.matmul(V).matmul(Vh)
        return U.matmul(gA)
    return U.matmul(gA.matmul(Vh)) if m >= n else U.matmul(gA).matmul(Vh)


class Eigh(Function):
    @staticmethod
    def forward(ctx, A, uplo):
        W, V = raw_call("linalg_eigh", A, uplo)
        W, V = _make(W), _make(V)
        ctx.save_for_backward(W, V)
        ctx.set_materialize_grads(False)
        return W, V

    @staticmethod
    def backward(ctx, gW, gV):
        W, V = ctx.saved_tensors
        if gV is None:
            if gW is None:
                return None, None
            return (V * gW.unsqueeze(-2)).matmul(V.mH), None
        VhgV = V.mH.matmul(gV)
        VhgV = (VhgV - VhgV.mH) * 0.5  # the part that moves V on its manifold
        from .._creation import eye
        n = W.shape[-1]
        E = W.unsqueeze(-2) - W.unsqueeze(-1) + eye(n, dtype=W.dtype, device=W.device)
        gA = VhgV / E
        if gW is not None:
            gA = gA + gW.diag_embed()
        return V.matmul(gA.matmul(V.mH)), None


class Pinv(Function):
    """The pseudo-inverse through the SVD, singular values at or below
    max(atol, rtol * largest) dropped; PyTorch's pinv gradient."""

    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        if hermitian:
            W, V = (_make(x) for x in raw_call("linalg_eigh", A, "L"))
            absw = W.abs()
            tol = _tolerance(absw.amax(-1, keepdim=True) if W.shape[-1] else absw, atol, rtol)
            inv = (1 / W).where(absw > tol, W.new_zeros(()))
            P = (V * inv.unsqueeze(-2)).matmul(V.mH)
        else:
            U, S, Vh = (_make(x) for x in raw_call("linalg_svd", A, False))
            tol = _tolerance(S[..., :1] if S.shape[-1] else S, atol, rtol)
            inv = (1 / S).where(S > tol, S.new_zeros(()))
            P = (Vh.mH * inv.unsqueeze(-2)).matmul(U.mH)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, g):
        A, P = ctx.saved_tensors
        m, n = A.shape[-2], A.shape[-1]
        Ph, gh = P.mH, g.mH
        if m <= n:
            K = gh.matmul(P)
            KPh = K.matmul(Ph)
            gA = -P.matmul(K).mH + KPh - A.matmul(P).matmul(KPh) + \
                Ph.matmul(P).matmul(gh - K.matmul(A))
        else:
            K = P.matmul(gh)
            PhK = Ph.matmul(K)
            gA = -K.matmul(P).mH + (gh - A.matmul(K)).matmul(P).matmul(Ph) + PhK - \
                PhK.matmul(P).matmul(A)
        return gA, None, None, None


def _tolerance(smax, atol, rtol):
    tol = smax * rtol
    if atol is not None:
        tol = tol.clamp(min=atol) if not isinstance(atol, Tensor) else \
            tol.maximum(atol.unsqueeze(-1))
    return tol


def copy_out(result, out):
    """result, or (an out= argument given) result written into out."""
    if out is None:
        return result
    if isinstance(result, tuple):
        for o, r in zip(out, result):
            o.copy_(r)
        return out
    return out.copy_(result)
