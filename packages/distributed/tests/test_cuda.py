import importlib.util
import os

import pytest

from conftest import expect_ok, launch

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ember.thc") is None,
                                reason="needs ember-thc (a GPU or its emulated device)")


def test_cuda_tensors_staged_through_the_host():
    # a GPU where there is one, else the emulated device (host-only builds)
    env = {} if os.environ.get("EMBER_THC_EMULATE") == "0" else \
        {"EMBER_THC_EMULATE": os.environ.get("EMBER_THC_EMULATE", "1")}
    expect_ok(launch("cuda.py", 2, env=env), 2)
