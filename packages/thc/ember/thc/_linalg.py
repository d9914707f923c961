"""ember.linalg's raw routines (the backend interface's ``linalg_*``) on
CUDA tensors, staged through host memory: the operands are copied to the
host, ember.th's routine (libTH's LAPACK) runs there, and the results are
copied back to the operands' device.  The results are exact LAPACK
results, and the front's gradients (ember ops) run on the device; the
cost is two transfers per call, which is small beside a factorisation of
a large matrix and large beside one of a small one.  cuSOLVER routines are
not used yet: they wait for a GPU to be tested on."""
import ember.th as _th

from ._tensor import Tensor, to_host, upload

functions = {}


def _host(x, device):
    if isinstance(x, _th.Tensor):
        other = "cpu"
    elif isinstance(x, Tensor):
        if x.get_device() == device:
            return to_host(x)
        other = f"cuda:{x.get_device()}"
    else:
        return x
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                       f"two devices, cuda:{device} and {other}!")


def _device(result):
    """Host results back on the current device (the guard made it the
    operands'): tensors, and tuples and named tuples of them."""
    if isinstance(result, _th.Tensor):
        return upload(result)
    if isinstance(result, tuple):
        values = [_device(v) for v in result]
        return type(result)(*values) if hasattr(result, "_fields") else tuple(values)
    return result


def _staged(name):
    host_routine = getattr(_th, name)

    def routine(A, *args, **kwargs):
        if not isinstance(A, Tensor):
            return host_routine(A, *args, **kwargs)     # its own argument error
        device = A.get_device()
        args = tuple(_host(a, device) for a in args)
        kwargs = {k: _host(v, device) for k, v in kwargs.items()}
        return _device(host_routine(to_host(A), *args, **kwargs))
    routine.__name__ = routine.__qualname__ = name
    routine.__doc__ = (f"ember.th.{name} on CUDA tensors, staged through host memory "
                       f"(see ember.thc._linalg).")
    return routine


for _name in ("linalg_lu_factor_ex", "linalg_lu_solve", "linalg_solve_ex", "linalg_inv_ex",
              "linalg_det", "linalg_slogdet", "linalg_cholesky_ex", "linalg_solve_triangular",
              "linalg_qr", "linalg_svd", "linalg_eigh", "linalg_lstsq",
              "linalg_householder_product", "linalg_geqrf", "linalg_ldl_factor_ex",
              "linalg_ldl_solve"):
    functions[_name] = _staged(_name)
functions["has_lapack"] = _th.has_lapack
functions["LinAlgError"] = _th.LinAlgError
