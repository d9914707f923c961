"""Ready-made parametrizations (PyTorch's torch.nn.utils.parametrizations):
``orthogonal`` (a weight kept orthogonal through the matrix exponential,
the Cayley map or Householder reflectors), ``spectral_norm`` (a weight
divided by its largest singular value, estimated by power iteration)
and ``weight_norm`` (a weight split into magnitude and direction)."""
import ember

from .. import functional as F
from ..modules.layers import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from .parametrize import register_parametrization

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_MAPS = ("matrix_exp", "cayley", "householder")


def _eps(dtype):
    return 2.220446049250313e-16 if dtype == ember.float64 else 1.1920928955078125e-07


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = ember.eye(k, dtype=Q.dtype, device=Q.device)
    return bool(ember.allclose(Q.mT @ Q, eye.expand(Q.shape[:-2] + (k, k)),
                               atol=10.0 * n * _eps(Q.dtype)))


def _make_orthogonal(A):
    """The Q of A's QR with R's diagonal made positive."""
    Q, R = ember.linalg.qr(A)
    return Q * R.diagonal(0, -2, -1).sign().unsqueeze(-2)


class _Orthogonal(Module):
    """Maps an unconstrained (n, k) matrix (batch) to one with orthonormal
    columns (rows when n < k).  With use_trivialization the result is
    `base @ map(X)`, base being the last value assigned, so that
    assignment is exact and optimisation starts at X = 0's image."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map == "householder":
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = ember.linalg.householder_product(A, tau)
            # X's diagonal (+-1, not trained) chooses each column's sign
            Q = Q * X.diagonal(0, -2, -1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:  # embed in a square matrix
                X = ember.cat([X, X.new_zeros(X.shape[:-2] + (n, n - k))], -1)
            A = X - X.mT  # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                Q = ember.linalg.matrix_exp(A)
            else:
                eye = ember.eye(n, dtype=A.dtype, device=A.device)
                Q = ember.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transposed = n < k
        if transposed:
            Q, n, k = Q.mT, k, n
        if "base" not in self._buffers:
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # the reflectors of Q's QR, with R's diagonal signs on the
            # diagonal (flipped where LAPACK made no reflection)
            A, tau = ember.geqrf(Q)
            A = A.clone()
            sign = A.diagonal(0, -2, -1).sign()
            A.diagonal(0, -2, -1).copy_(sign.where(tau != 0, -sign))
            return A.mT if transposed else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q's columns to a basis
            N = ember.randn(Q.shape[:-2] + (n, n - k), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(ember.cat([Q, N], -1))
        self.base = Q
        # -I maps to I: householder(0 reflectors, tau 2) times the -1 diagonal
        neg_eye = ember.zeros_like(Q_init)
        neg_eye.diagonal(0, -2, -1).fill_(-1.0)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keeps ``module.<name>`` (a matrix or batch of matrices) orthogonal
    (orthonormal columns, or rows when it is wide).  orthogonal_map:
    "matrix_exp" (default for square matrices), "cayley" or "householder"
    (default otherwise).  The current weight becomes the initial value."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    register_parametrization(module, name, orth, unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma = u^T W v the largest singular value of the
    weight read as a matrix (dim `dim` first), u and v kept as buffers and
    refined by n_power_iterations steps at each training-mode access."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            W = self._matrix(weight)
            h, w = W.shape
            u = W.new_empty((h,)).normal_(0, 1)
            v = W.new_empty((w,)).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            self._power_method(W, 15)

    def _matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute([self.dim] + [d for d in range(weight.dim())
                                                  if d != self.dim])
        return weight.flatten(1)

    def _power_method(self, W, iterations):
        with ember.no_grad():
            for _ in range(iterations):
                self._u.copy_(F.normalize(ember.mv(W, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ember.mv(W.mT, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        W = self._matrix(weight)
        if self.training:
            self._power_method(W, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # later steps must not change this graph
        sigma = ember.dot(u, ember.mv(W, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides ``module.<name>`` by its spectral norm at each access
    (Miyato et al.); dim defaults to 1 for transposed convolutions (their
    output channels), 0 otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


class _WeightNorm(Module):
    """weight = g * v / ||v||, the norm over every dim but `dim`
    (dim None: over all of v)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def _norm(self, v):
        if self.dim == -1:
            return v.norm()
        d = self.dim % v.dim()
        others = [i for i in range(v.dim()) if i != d]
        return v.square().sum(others, keepdim=True).sqrt()

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / self._norm(weight_v))

    def right_inverse(self, weight):
        return self._norm(weight), weight


def weight_norm(module, name="weight", dim=0):
    """Splits ``module.<name>`` into original0 (its norm g) and original1
    (its direction v); the weight is g * v / ||v||."""
    if not isinstance(getattr(module, name, None), ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
