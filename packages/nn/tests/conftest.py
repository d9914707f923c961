import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # the conformance tests skip
    torch = None


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def to_torch(x, requires_grad=False):
    t = torch.from_numpy(np.array(x.detach().numpy() if isinstance(x, ember.Tensor) else x))
    return t.requires_grad_(requires_grad) if t.is_floating_point() else t


def to_ember(a, requires_grad=False):
    t = ember.from_numpy(np.array(a))
    return t.requires_grad_(requires_grad) if t.is_floating_point() else t


def copy_state(ember_module, torch_module):
    """Loads the ember module's state into the torch one (same keys)."""
    state = {k: torch.from_numpy(np.array(v.numpy())) for k, v in
             ember_module.state_dict().items()}
    torch_module.load_state_dict(state)


requires_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
