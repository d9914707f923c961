"""Matrix products: dot, mv, mm, bmm, matmul (``@``), outer and the fused
add-multiply forms.  Gradients are products again, so they differentiate
any number of times."""
from .._tensor import Tensor
from .define import NAMESPACE, dispatch_point, op, raw, register
from .samples import S, T


def _operands(*names):
    """inputs(): the named differentiable arguments, in order."""
    def inputs(*args, **kwargs):
        return args[:len(names)] + tuple(kwargs.get(n) for n in names[len(args):])
    return inputs


@op()
class dot:
    """Inner product of two 1-D tensors."""
    holomorphic = True  # complex operands: the formulas conjugated

    def forward(input, other):
        return input._data.dot(other._data)

    inputs = _operands("input", "other")

    def save(out, input, other):
        return (input, other)

    backward = (lambda g, a, b: g * b, lambda g, a, b: g * a)
    samples = [S(T(4), T(4)), S(T(4, complex=True), T(4, complex=True), name="complex")]


@op()
class mv:
    """Matrix-vector product."""
    holomorphic = True

    def forward(input, vec):
        return input._data.mv(vec._data)

    inputs = _operands("input", "vec")

    def save(out, input, vec):
        return (input, vec)

    backward = (lambda g, m, v: g.outer(v), lambda g, m, v: m.t().mv(g))
    samples = [S(T(3, 4), T(4)),
               S(T(3, 4, complex=True), T(4, complex=True), name="complex")]


@op()
class mm:
    """Matrix product of two 2-D tensors."""
    holomorphic = True

    def forward(input, mat2):
        return input._data.mm(mat2._data)

    inputs = _operands("input", "mat2")

    def save(out, input, mat2):
        return (input, mat2)

    backward = (lambda g, a, b: _mat1_grad(g, b), lambda g, a, b: _mat2_grad(g, a, b))
    samples = [S(T(3, 4), T(4, 2)),
               S(T(3, 4, complex=True), T(4, 2, complex=True), name="complex")]


@op()
class bmm:
    """Batched matrix product of two 3-D tensors."""
    holomorphic = True

    def forward(input, mat2):
        return input._data.bmm(mat2._data)

    inputs = _operands("input", "mat2")

    def save(out, input, mat2):
        return (input, mat2)

    backward = (lambda g, a, b: g.bmm(b.mT), lambda g, a, b: a.mT.bmm(g))
    samples = [S(T(2, 3, 4), T(2, 4, 2)),
               S(T(2, 3, 4, complex=True), T(2, 4, 2, complex=True), name="complex")]


@op(aliases=("ger",))
class outer:
    """Outer product of two 1-D tensors."""
    holomorphic = True

    def forward(input, vec2):
        return input._data.outer(vec2._data)

    inputs = _operands("input", "vec2")

    def save(out, input, vec2):
        return (input, vec2)

    backward = (lambda g, a, b: g.mv(b), lambda g, a, b: g.t().mv(a))
    samples = [S(T(3), T(4)), S(T(3, complex=True), T(4, complex=True), name="complex")]


def _matmul_grad_a(g, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return g * b
    if a.ndim == 2 and b.ndim == 2:
        return g.mm(b.t())
    a2, b2, g2 = _as_matrices(g, a, b)
    ga = g2.matmul(b2.mT).sum_to_size(a2.shape)
    return ga.squeeze(0) if a.ndim == 1 else ga


def _matmul_grad_b(g, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return g * a
    if a.ndim == 2 and b.ndim == 2:
        return a.t().mm(g)
    a2, b2, g2 = _as_matrices(g, a, b)
    gb = a2.mT.matmul(g2).sum_to_size(b2.shape)
    return gb.squeeze(-1) if b.ndim == 1 else gb


def _as_matrices(g, a, b):
    """matmul's operands and gradient with vectors made into matrices (a
    vector on the left is a row, on the right a column)."""
    if a.ndim == 1:
        a, g = a.unsqueeze(0), g.unsqueeze(-2)
    if b.ndim == 1:
        b, g = b.unsqueeze(-1), g.unsqueeze(-1)
    return a, b, g


@op()
class matmul:
    """Matrix product with NumPy's rules: vectors, matrices and broadcast
    batches of matrices."""
    holomorphic = True

    def forward(input, other):
        return input._data.matmul(other._data)

    inputs = _operands("input", "other")

    def save(out, input, other):
        return (input, other)

    backward = (_matmul_grad_a, _matmul_grad_b)
    samples = [S(T(3, 4), T(4, 2)), S(T(4), T(4)), S(T(4), T(4, 2)), S(T(3, 4), T(4)),
               S(T(2, 3, 4), T(4, 2), name="batch_matrix"),
               S(T(2, 1, 3, 4), T(3, 4, 2), name="broadcast_batches"),
               S(T(4), T(2, 4, 3), name="vector_batch"), S(T(2, 3, 4), T(4), name="batch_vector"),
               S(T(2, 3, 4, complex=True), T(4, 2, complex=True), name="complex")]


def _transposed(t):
    """A 2-D tensor laid out as the transpose of a contiguous one."""
    st = t.stride()
    return t.dim() == 2 and st[0] == 1 and st[1] == t.shape[0] and t.shape[0] > 1


def _mat1_grad(g, mat2, alpha=1):
    out = g.mm(mat2.t())
    return out if alpha == 1 else out * alpha


def _mat2_grad(g, mat1, mat2, alpha=1):
    """mat1ᵀ g, in mat2's layout: for x @ w.t() (a linear layer) the
    gradient of w then arrives contiguous and needs no copy."""
    if _transposed(mat2):
        out = g.t().mm(mat1)
        return (out if alpha == 1 else out * alpha).t()
    out = mat1.t().mm(g)
    return out if alpha == 1 else out * alpha


def _fused_save(out, input, a, b, *, beta=1, alpha=1):
    return (_shape(input), a, b, beta, alpha)


def _shape(x):
    return x.shape if isinstance(x, Tensor) else None


def _input_grad(g, shape, beta):
    return (g if beta == 1 else g * beta).sum_to_size(shape)


@op()
class addmm:
    """beta * input + alpha * (mat1 @ mat2)."""

    def forward(input, mat1, mat2, *, beta=1, alpha=1):
        return _raw_addmm(input, mat1, mat2, beta, alpha)

    inputs = _operands("input", "mat1", "mat2")
    save = _fused_save
    backward = (
        lambda g, s, m1, m2, beta, alpha: _input_grad(g, s, beta),
        lambda g, s, m1, m2, beta, alpha: _mat1_grad(g, m2, alpha),
        lambda g, s, m1, m2, beta, alpha: _mat2_grad(g, m1, m2, alpha),
    )

    def inplace(input, mat1, mat2, *, beta=1, alpha=1):
        input._data.copy_(_raw_addmm(input, mat1, mat2, beta, alpha))

    samples = [S(T(3, 2), T(3, 4), T(4, 2)), S(T(2), T(3, 4), T(4, 2), beta=0.5, alpha=2.0)]


def _raw_addmm(input, mat1, mat2, beta, alpha):
    return raw(input).addmm(mat1._data, mat2._data, beta=beta, alpha=alpha)


@op()
class addmv:
    """beta * input + alpha * (mat @ vec)."""

    def forward(input, mat, vec, *, beta=1, alpha=1):
        return raw(input).addmv(mat._data, vec._data, beta=beta, alpha=alpha)

    inputs = _operands("input", "mat", "vec")
    save = _fused_save
    backward = (
        lambda g, s, m, v, beta, alpha: _input_grad(g, s, beta),
        lambda g, s, m, v, beta, alpha: g.outer(v) * alpha,
        lambda g, s, m, v, beta, alpha: m.t().mv(g) * alpha,
    )

    def inplace(input, mat, vec, *, beta=1, alpha=1):
        input._data.copy_(input._data.addmv(mat._data, vec._data, beta=beta, alpha=alpha))

    samples = [S(T(3), T(3, 4), T(4)), S(T(1), T(3, 4), T(4), beta=2.0, alpha=0.5)]


@op()
class baddbmm:
    """beta * input + alpha * (batch1 @ batch2), batched."""

    def forward(input, batch1, batch2, *, beta=1, alpha=1):
        return raw(input).baddbmm(batch1._data, batch2._data, beta=beta, alpha=alpha)

    inputs = _operands("input", "batch1", "batch2")
    save = _fused_save
    backward = (
        lambda g, s, b1, b2, beta, alpha: _input_grad(g, s, beta),
        lambda g, s, b1, b2, beta, alpha: g.bmm(b2.mT) * alpha,
        lambda g, s, b1, b2, beta, alpha: b1.mT.bmm(g) * alpha,
    )

    def inplace(input, batch1, batch2, *, beta=1, alpha=1):
        input._data.copy_(input._data.baddbmm(batch1._data, batch2._data, beta=beta,
                                              alpha=alpha))

    samples = [S(T(2, 3, 2), T(2, 3, 4), T(2, 4, 2)),
               S(T(3, 2), T(2, 3, 4), T(2, 4, 2), beta=0.5, alpha=2.0)]


@op()
class addbmm:
    """beta * input + alpha * sum over the batch of batch1[i] @ batch2[i]."""

    def forward(input, batch1, batch2, *, beta=1, alpha=1):
        return raw(input).addbmm(batch1._data, batch2._data, beta=beta, alpha=alpha)

    inputs = _operands("input", "batch1", "batch2")
    save = _fused_save
    backward = (
        lambda g, s, b1, b2, beta, alpha: _input_grad(g, s, beta),
        lambda g, s, b1, b2, beta, alpha:
            g.expand(b1.shape[0], *g.shape).bmm(b2.mT) * alpha,
        lambda g, s, b1, b2, beta, alpha:
            b1.mT.bmm(g.expand(b1.shape[0], *g.shape)) * alpha,
    )

    def inplace(input, batch1, batch2, *, beta=1, alpha=1):
        input._data.copy_(input._data.addbmm(batch1._data, batch2._data, beta=beta,
                                             alpha=alpha))

    samples = [S(T(3, 2), T(2, 3, 4), T(2, 4, 2)),
               S(T(2), T(2, 3, 4), T(2, 4, 2), beta=0.5, alpha=2.0)]


_matmul = NAMESPACE["matmul"]


def _matmul_operator(self, other):
    return _matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def _rmatmul_operator(self, other):
    return _matmul(other, self) if isinstance(other, Tensor) else NotImplemented


Tensor.__matmul__ = dispatch_point(_matmul_operator, "matmul")
Tensor.__rmatmul__ = dispatch_point(_rmatmul_operator, "matmul")


def trace(input):
    """Sum of the main diagonal of a 2-D tensor."""
    return input.diagonal().sum()


register("trace", function=trace, method=trace, samples=[S(T(3, 4)), S(T(3, 3))])
