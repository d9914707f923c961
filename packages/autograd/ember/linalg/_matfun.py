"""Matrix functions of ember.linalg: householder_product (the backend's
orgqr) and matrix_exp (Pade approximation with scaling and squaring on
matmul and solve), with gradients written in ember ops so that they
differentiate again."""
import math

from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Function
from ._functions import raw_call


def _eye(rows, cols, like):
    from .._creation import eye
    return eye(rows, cols, dtype=like.dtype, device=like.device)


def _stack(xs, dim):
    from .._ops.shape import stack
    return stack(xs, dim)


def _cat(xs, dim):
    from .._ops.shape import cat
    return cat(xs, dim)


# ---- householder_product ----------------------------------------------------
class HouseholderProduct(Function):
    """Q = H_0 ... H_{k-1} E (E: the first n columns of I), H_i = I - tau_i
    v_i v_i^H with v_i the reflector in column i of A below the diagonal
    (v_i[i] = 1).  With G_i = W_i S_i^H the gradient reaching H_i
    (W_i = H_{i-1}^H ... H_0^H gQ, S_i = H_{i+1} ... H_{k-1} E):
    g tau_i = -v_i^H G_i v_i and g v_i = -conj(tau_i) G_i v_i - tau_i G_i^H v_i
    (-tau_i (G_i + G_i^T) v_i for real matrices)."""

    @staticmethod
    def forward(ctx, A, tau):
        Q = _make(raw_call("linalg_householder_product", A, tau))
        ctx.save_for_backward(A, tau)
        return Q

    @staticmethod
    def backward(ctx, gQ):
        A, tau = ctx.saved_tensors
        m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
        if k == 0 or m == 0:
            return A.new_zeros(A.shape), tau.new_zeros(tau.shape)
        V = A.narrow(-1, 0, k).tril(-1) + _eye(m, k, A)
        vs = [V.narrow(-1, i, 1) for i in range(k)]          # (*, m, 1)
        ts = [tau.narrow(-1, i, 1).unsqueeze(-1) for i in range(k)]  # (*, 1, 1)

        def reflect(i, X, t):  # (I - t v_i v_i^H) X
            return X - t * vs[i].matmul(vs[i].mH.matmul(X))
        S = [None] * k
        S[k - 1] = _eye(m, n, A).expand(gQ.shape)
        for i in range(k - 1, 0, -1):
            S[i - 1] = reflect(i, S[i], ts[i])
        W = gQ
        gtau, gv = [], []
        for i in range(k):
            a = S[i].mH.matmul(vs[i])   # S_i^H v
            b = W.mH.matmul(vs[i])      # W_i^H v
            gtau.append(-(b.conj() * a).sum((-2, -1)))
            gv.append(-ts[i].conj() * W.matmul(a) - ts[i] * S[i].matmul(b))
            if i + 1 < k:
                W = reflect(i, W, ts[i].conj())  # H_i^H W
        gV = _cat(gv, -1).tril(-1)
        if n > k:
            gV = _cat([gV, gV.new_zeros(gV.shape[:-1] + (n - k,))], -1)
        return gV, _stack(gtau, -1)


def householder_product(A, tau, *, out=None):
    for name, x in (("input", A), ("tau", tau)):
        if not isinstance(x, Tensor):
            raise TypeError(f"linalg_householder_product(): argument '{name}' must be Tensor, "
                            f"not {type(x).__name__}")
    Q = HouseholderProduct.apply(A, tau)
    return Q if out is None else out.copy_(Q)


# ---- matrix_exp -------------------------------------------------------------
# Pade coefficients b_0..b_m and the 1-norm bounds theta_m under which the
# degree-m approximant is accurate to unit roundoff (Higham 2005; single
# precision bounds for float32).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
_THETA64 = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
            (9, 2.097847961257068), (13, 5.371920351148152))
_THETA32 = ((3, 4.258730016922831e-1), (5, 1.880152677804762), (7, 3.925724783138660))


def _pade(A, degree):
    """U (odd part) and V (even part) of the degree-m Pade approximant."""
    b = _PADE[degree]
    eye = _eye(A.shape[-1], A.shape[-1], A)
    A2 = A.matmul(A)
    if degree == 13:
        A4 = A2.matmul(A2)
        A6 = A4.matmul(A2)
        U = A6.matmul(b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + \
            b[3] * A2 + b[1] * eye
        V = A6.matmul(b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + \
            b[2] * A2 + b[0] * eye
        return A.matmul(U), V
    U, V, P = b[1] * eye, b[0] * eye, eye
    for j in range(1, degree // 2 + 1):
        P = P.matmul(A2) if j > 1 else A2
        U = U + b[2 * j + 1] * P
        V = V + b[2 * j] * P
    return A.matmul(U), V


def _expm(A):
    """exp of each matrix of the batch, without gradient tracking."""
    from . import solve
    thetas = _THETA64 if A.dtype.itemsize == 8 else _THETA32
    norms = A.abs().sum(-2).amax(-1)  # 1-norms, one per matrix
    finite = norms.isfinite()
    worst = float(norms.where(finite, norms.new_zeros(())).amax()) if norms.numel() else 0.0
    for degree, theta in thetas:
        if worst <= theta:
            U, V = _pade(A, degree)
            return solve(V - U, V + U)
    degree, theta = thetas[-1]
    # halve each matrix s times until its norm is within theta, square back
    ratio = (norms / theta).where(finite, norms.new_ones(()))
    s = ratio.log2().ceil().clamp(min=0)
    As = A * (-s).exp2()[..., None, None]
    U, V = _pade(As, degree)
    R = solve(V - U, V + U)
    for t in range(int(math.ceil(float(s.amax())))):
        R = R.matmul(R).where((s > t)[..., None, None], R)
    return R


class MatrixExp(Function):
    """exp(A); the gradient of a matrix function f at A is the upper right
    block of f([[A^H, g], [0, A^H]]), so backward is matrix_exp again."""

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        with grad_mode.no_grad():
            return _expm(A)

    @staticmethod
    def backward(ctx, g):
        A, = ctx.saved_tensors
        n = A.shape[-1]
        At = A.mH.expand(g.shape)
        top = _cat([At, g], -1)
        bottom = _cat([g.new_zeros(g.shape), At], -1)
        return MatrixExp.apply(_cat([top, bottom], -2)).narrow(-2, 0, n).narrow(-1, n, n)


def matrix_exp(A):
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_matrix_exp(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {A.dtype._title}")
    if A.numel() == 0:
        return A.clone()
    return MatrixExp.apply(A)
