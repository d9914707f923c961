"""Dtypes: one set of objects shared by every backend, defined by ember-th
(``ember.float32 is ember.th.float32``)."""
from ember.th import (bfloat16, bool, double, dtype, float, float16, float32,  # noqa: F401
                      float64, half, int, int8, int16, int32, int64, long,
                      promote_types, short, uint8)

ALL = (float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64, bool)
