"""Fixtures of ember.thnn's tests (helpers: thnn_testing.py)."""
import os

import pytest

# libTH's look at the machine's load off: the thread tests compare 1- and
# 2-thread results and need the pool to run wide, whatever else the test
# machine runs (the look itself is tested by libTH's C tests)
os.environ.setdefault("EMBER_LOAD_CHECK", "0")


@pytest.fixture
def torch():
    """PyTorch, or a skip where it is not installed."""
    return pytest.importorskip("torch")
