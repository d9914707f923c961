"""Hostile sizes and strides on CUDA tensors: libTHC's size arithmetic that
would wrap in int64 raises PyTorch's errors instead of making a tensor that
addresses device memory outside its storage (the rules of libTH's, see
packages/th/tests/test_limits.py).  A regression shows as a crash or a
wrong tensor, so every refused call also checks the data is untouched."""
import re

import pytest

import ember.thc as thc
from ember.th.testing import BIG, HostileSizes

from thc_testing import requires_device

pytestmark = requires_device


def err(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


# libTH's rules (th_meta.h), checked as for ember.th's tensors (ember.th.testing)
LIMITS = HostileSizes(thc, lambda t: t.cpu().tolist())
(test_as_strided_wrapping_strides_refused, test_empty_strided_and_empty_overflow,
 test_expand_overflow, test_repeat_and_view_overflow, test_huge_slice_step) = LIMITS.tests()


def test_as_strided_write_refused_leaves_data():
    x = thc.zeros(4)
    with err(RuntimeError, "Storage size calculation overflowed"):
        x.as_strided((2, 2), (BIG - 1, BIG + 10)).fill_(1.0)
    assert x.cpu().tolist() == [0.0] * 4

