"""gradcheck and gradgradcheck: analytical gradients (backward) against
central finite differences, in float64."""
import warnings

import numpy as np

from .._tensor import Tensor
from .engine import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A gradient did not match its finite-difference estimate."""


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _as_real(func, inputs):
    """func and inputs with complex tensors as (re, im) pairs: the check then
    runs on real numbers, and a complex gradient is checked in PyTorch's
    convention (dL/dx + i dL/dy) through view_as_real / view_as_complex."""
    from .._ops.complex import view_as_complex, view_as_real
    was_complex = [isinstance(x, Tensor) and x.is_complex() for x in inputs]
    real_inputs = tuple(view_as_real(x.detach()).clone().requires_grad_(x._requires_grad)
                        if c else x for x, c in zip(inputs, was_complex))

    def as_real(*args):
        args = tuple(view_as_complex(a) if c else a for a, c in zip(args, was_complex))
        return tuple(view_as_real(o) if isinstance(o, Tensor) and o.is_complex() else o
                     for o in _tuple(func(*args)))
    return as_real, real_inputs


def _float_outputs(outputs):
    return [o for o in outputs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _values(outputs):
    return [o.detach().cpu().numpy().astype(np.float64).ravel() for o in outputs]


def _numerical_jacobians(func, inputs, diff, eps):
    """[input][output] -> (n_in, n_out) matrices of central differences."""
    jacobians = []
    for x in diff:
        on_cpu = x.device.type == "cpu"
        # on the CPU a view perturbs x's storage in place; elsewhere a host
        # copy is written back to the device after each change
        arr = x.detach().numpy() if on_cpu else x.detach().cpu().numpy()
        from .._creation import from_numpy

        def write_back():
            if not on_cpu:
                x.detach().copy_(from_numpy(arr))

        columns = []
        for idx in np.ndindex(arr.shape):
            orig = arr[idx]
            arr[idx] = orig + eps
            write_back()
            plus = _values(_float_outputs(_tuple(func(*inputs))))
            arr[idx] = orig - eps
            write_back()
            minus = _values(_float_outputs(_tuple(func(*inputs))))
            arr[idx] = orig
            write_back()
            columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
        if not columns:  # an empty input: (0, n_out) Jacobians
            outs = _values(_float_outputs(_tuple(func(*inputs))))
            jacobians.append([np.zeros((0, o.size)) for o in outs])
            continue
        jacobians.append([np.stack([c[j] for c in columns]) for j in range(len(columns[0]))])
    return jacobians


def _analytical_jacobians(outputs, diff):
    """[input][output] -> (n_in, n_out) matrices from one backward per
    output element."""
    from .._creation import tensor
    result = [[np.zeros((x.numel(), o.numel())) for o in outputs] for x in diff]
    for j, o in enumerate(outputs):
        if not o._requires_grad:
            continue
        flat = np.zeros(o.numel())
        for m in range(o.numel()):
            flat[:] = 0
            flat[m] = 1
            seed = tensor(flat.reshape(tuple(o.shape)), dtype=o.dtype, device=o.device)
            grads = autograd_grad([o], diff, [seed], retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    if tuple(g.shape) != tuple(diff[i].shape):
                        raise GradcheckError(f"Gradient for input {i} has shape "
                                             f"{tuple(g.shape)}, expected "
                                             f"{tuple(diff[i].shape)}")
                    result[i][j][:, m] = g.detach().cpu().numpy().astype(np.float64).ravel()
    return result


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """True when the backward of `func` at `inputs` matches finite
    differences for every input that requires grad."""
    func, inputs = _as_real(func, _tuple(inputs))
    diff = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i, x in enumerate(diff):
        if x.dtype.name != "float64":
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point. This check will likely fail if all the inputs "
                          "are not of double precision floating point.", UserWarning)
    outputs = _float_outputs(_tuple(func(*inputs)))
    analytical = _analytical_jacobians(outputs, diff)
    numerical = _numerical_jacobians(func, inputs, diff, eps)
    for i in range(len(diff)):
        for j in range(len(outputs)):
            a, n = analytical[i][j], numerical[i][j]
            if n is None:
                continue
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                if raise_exception:
                    raise GradcheckError(f"Jacobian mismatch for output {j} with respect to "
                                         f"input {i},\nnumerical:{n}\nanalytical:{a}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradient of `func`: checks double backward."""
    from .._creation import randn
    func, inputs = _as_real(func, _tuple(inputs))
    outputs = _float_outputs(_tuple(func(*inputs)))
    if grad_outputs is None:
        grad_outputs = tuple(randn(tuple(o.shape), dtype=o.dtype, device=o.device,
                                   requires_grad=True)
                             for o in outputs if o._requires_grad)
    grad_outputs = _tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _float_outputs(_tuple(func(*ins))) if o._requires_grad]
        diff = [x for x in ins if isinstance(x, Tensor) and x._requires_grad]
        grads = autograd_grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
