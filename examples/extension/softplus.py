"""A scaled softplus whose forward and backward run in C (softplus.c),
wrapped in an ember.autograd.Function.

    python examples/extension/softplus.py

builds the extension (once; later runs take it from the cache), checks the
C forward against ember's own ops and the C backward with gradcheck in
float64.
"""
from pathlib import Path

import ember
from ember.autograd import Function
from ember.autograd.function import once_differentiable
from ember.utils.ffi import create_extension

HERE = Path(__file__).resolve().parent

_ext = None


def extension():
    """The compiled kernels (built on first use, then cached)."""
    global _ext
    if _ext is None:
        _ext = create_extension(
            "softplus_example",
            headers=[HERE / "softplus.h"],
            sources=[HERE / "softplus.c"],
            extra_compile_args=["-std=c99", "-Wall", "-Wextra", "-Werror"],
            libraries=["m"])
    return _ext


def _check(rc):
    if rc:
        raise ValueError(extension().ffi.string(extension().softplus_last_error()).decode())


class ScaledSoftplus(Function):
    @staticmethod
    def forward(ctx, x, beta=1.0):
        out = ember.empty(x.shape, dtype=x.dtype)
        _check(extension().softplus_forward(out, x, float(beta)))
        ctx.save_for_backward(x)
        ctx.beta = float(beta)
        return out

    @staticmethod
    @once_differentiable      # the backward leaves ember for C
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        grad_x = ember.empty(x.shape, dtype=x.dtype)
        _check(extension().softplus_backward(grad_x, grad_out, x, ctx.beta))
        return grad_x, None


def scaled_softplus(x, beta=1.0):
    return ScaledSoftplus.apply(x, beta)


def main():
    ember.manual_seed(0)
    x = (4 * ember.randn(3, 5, dtype=ember.float64)).requires_grad_()
    y = scaled_softplus(x, 2.0)
    expected = ember.log1p(ember.exp(2.0 * x.detach())) / 2.0
    assert ember.allclose(y.detach(), expected), "forward differs from ember's ops"
    y.sum().backward()
    assert ember.allclose(x.grad, ember.sigmoid(2.0 * x.detach()))
    ok = ember.autograd.gradcheck(lambda t: scaled_softplus(t, 2.0), (x,))
    print("forward matches ember's ops; gradcheck:", ok)


if __name__ == "__main__":
    main()
