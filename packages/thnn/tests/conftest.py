"""Fixtures of ember.thnn's tests (helpers: thnn_testing.py)."""
import pytest


@pytest.fixture
def torch():
    """PyTorch, or a skip where it is not installed."""
    return pytest.importorskip("torch")
