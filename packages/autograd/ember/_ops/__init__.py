"""Ember's operations, defined family by family from one table
(:mod:`ember._ops.define`).  Importing this package attaches the methods
to ember.Tensor and fills ``NAMESPACE`` with the ``ember.<name>``
functions."""
from . import pointwise, reduction, linalg, shape, indexing, conversion, composite  # noqa: F401
from . import lapack  # noqa: F401,E402  (classic names on ember.linalg)
from .define import NAMESPACE, OPS  # noqa: F401
