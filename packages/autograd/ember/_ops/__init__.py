"""Ember's operations, defined family by family from one table
(:mod:`ember._ops.define`).  Importing this package attaches the methods
to ember.Tensor and fills ``NAMESPACE`` with the ``ember.<name>``
functions."""
from . import pointwise, reduction, linalg, shape, indexing, conversion, composite  # noqa: F401
from . import complex as _complex  # noqa: F401,E402
from . import lapack  # noqa: F401,E402  (classic names on ember.linalg)
from .define import NAMESPACE, OPS  # noqa: F401
from . import out as _out  # noqa: E402
_out.install(NAMESPACE)  # ember.add(a, b, out=c), ... for every op function

# methods written outside the table that still compute a tensor from tensors
from .._tensor import Tensor as _Tensor  # noqa: E402
from .define import dispatch_point as _point  # noqa: E402
for _name in ("detach", "reshape_as", "cpu", "cuda", "clamp_min_", "clamp_max_", "addcmul_",
              "addcdiv_", "deg2rad_", "rad2deg_", "logit_"):
    _point(getattr(_Tensor, _name), _name.rstrip("_") if _name.endswith("_") else _name)
