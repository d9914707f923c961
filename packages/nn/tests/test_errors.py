"""Bad input raises PyTorch's error type with PyTorch's message (checked
against torch where it is installed), and leaves the module unchanged."""
import pytest

import ember
import ember.nn

from conftest import torch

# (id, build(nn), call(module, lib) -> result, expected type, message fragment)
CASES = [
    ("conv2d-rank", lambda nn: nn.Conv2d(3, 4, 3), lambda m, L: m(L.ones(2, 3)),
     RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
                   "size: [2, 3]"),
    ("conv2d-channels", lambda nn: nn.Conv2d(3, 4, 3), lambda m, L: m(L.ones(1, 2, 5, 5)),
     RuntimeError, "Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, 5, 5] to "
                   "have 3 channels, but got 2 channels instead"),
    ("conv2d-too-small", lambda nn: nn.Conv2d(1, 1, 5), lambda m, L: m(L.ones(1, 1, 3, 3)),
     RuntimeError, "Calculated padded input size per channel: (3 x 3). Kernel size: (5 x 5). "
                   "Kernel size can't be greater than actual input size"),
    ("conv2d-groups", lambda nn: nn.Conv2d, lambda m, L: m(3, 4, 3, groups=2), ValueError,
     "in_channels must be divisible by groups"),
    ("conv2d-padding", lambda nn: nn.Conv2d, lambda m, L: m(3, 4, 3, padding="full"),
     ValueError, "Invalid padding string 'full'"),
    ("linear-shape", lambda nn: nn.Linear(3, 2), lambda m, L: m(L.ones(4, 5)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)"),
    ("linear-shape-3d", lambda nn: nn.Linear(3, 2), lambda m, L: m(L.ones(2, 4, 5)),
     RuntimeError, "mat1 and mat2 shapes cannot be multiplied (8x5 and 3x2)"),
    ("linear-0d", lambda nn: nn.Linear(3, 2), lambda m, L: m(L.tensor(1.0)), RuntimeError,
     "both arguments to linear need to be at least 1D, but they are 0D and 2D"),
    ("conv1d-rank", lambda nn: nn.Conv1d(3, 4, 3), lambda m, L: m(L.ones(1, 2, 3, 5)),
     RuntimeError, "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input "
                   "of size: [1, 2, 3, 5]"),
    ("groupnorm-groups", lambda nn: nn.GroupNorm, lambda m, L: m(3, 4), ValueError,
     "num_channels (4) must be divisible by num_groups (3)"),
    ("batchnorm-rank", lambda nn: nn.BatchNorm2d(3), lambda m, L: m(L.ones(2, 3)), ValueError,
     "expected 4D input (got 2D input)"),
    ("batchnorm1d-rank", lambda nn: nn.BatchNorm1d(3), lambda m, L: m(L.ones(2, 3, 4, 5)),
     ValueError, "expected 2D or 3D input (got 4D input)"),
    ("batchnorm-one-value", lambda nn: nn.BatchNorm1d(3), lambda m, L: m(L.ones(1, 3)),
     ValueError, "Expected more than 1 value per channel when training, got input size "),
    ("layernorm-shape", lambda nn: nn.LayerNorm(4), lambda m, L: m(L.ones(2, 3)), RuntimeError,
     "Given normalized_shape=[4], expected input with shape [*, 4], but got input of "
     "size[2, 3]"),
    ("maxpool-pad", lambda nn: nn.MaxPool2d(2, padding=2), lambda m, L: m(L.ones(1, 1, 6, 6)),
     RuntimeError, "pad should be at most half of effective kernel size"),
    ("maxpool-rank", lambda nn: nn.MaxPool2d(2), lambda m, L: m(L.ones(6, 6)), RuntimeError,
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    ("dropout-p", lambda nn: nn.Dropout, lambda m, L: m(1.5), ValueError,
     "dropout probability has to be between 0 and 1, but got 1.5"),
    ("embedding-index", lambda nn: nn.Embedding(3, 2),
     lambda m, L: m(L.tensor([0, 3])), IndexError, "index out of range in self"),
    ("embedding-dtype", lambda nn: nn.Embedding(3, 2), lambda m, L: m(L.tensor([0.0, 1.0])),
     RuntimeError, "Expected tensor for argument #1 'indices' to have one of the following "
                   "scalar types: Long, Int; but got "),
    ("nll-target-dtype", lambda nn: nn.NLLLoss(),
     lambda m, L: m(L.zeros(3, 4), L.zeros(3)), RuntimeError,
     "expected target dtype to be Long or Byte, but got Float"),
    ("nll-target-range", lambda nn: nn.NLLLoss(),
     lambda m, L: m(L.zeros(3, 4), L.tensor([0, 4, 1])), IndexError,
     "Target 4 is out of bounds."),
    ("nll-batch", lambda nn: nn.NLLLoss(), lambda m, L: m(L.zeros(3, 4), L.tensor([0, 1])),
     ValueError, "Expected input batch_size (3) to match target batch_size (2)."),
    ("ce-target-range", lambda nn: nn.CrossEntropyLoss(),
     lambda m, L: m(L.zeros(2, 4), L.tensor([-1, 1])), IndexError,
     "Target -1 is out of bounds."),
    ("ce-smoothing", lambda nn: nn.CrossEntropyLoss(label_smoothing=1.5),
     lambda m, L: m(L.zeros(2, 4), L.tensor([0, 1])), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    ("bce-range", lambda nn: nn.BCELoss(), lambda m, L: m(L.ones(3) * 2, L.ones(3)),
     RuntimeError, "all elements of input should be between 0 and 1"),
    ("bce-size", lambda nn: nn.BCELoss(), lambda m, L: m(L.ones(3, 1) / 2, L.ones(3)),
     ValueError, "is deprecated. Please ensure they have the same size."),
    ("bce-logits-size", lambda nn: nn.BCEWithLogitsLoss(),
     lambda m, L: m(L.ones(3, 1), L.ones(3)), ValueError, "must be the same as input size"),
    ("reduction", lambda nn: nn.MSELoss(reduction="avg"),
     lambda m, L: m(L.ones(3), L.ones(3)), ValueError, "avg is not a valid value for reduction"),
    ("missing-forward", lambda nn: nn.Module(), lambda m, L: m(1), NotImplementedError,
     'Module [Module] is missing the required "forward" function'),
    ("prelu-channels", lambda nn: nn.PReLU(3), lambda m, L: m(L.ones(2, 4, 5)), RuntimeError,
     "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and "
     "channel size = 4."),
    ("glu-odd", lambda nn: nn.GLU(1), lambda m, L: m(L.ones(2, 5)), RuntimeError,
     "Halving dimension must be even, but dimension 1 is size 5"),
    ("softshrink-negative", lambda nn: nn.Softshrink(-0.5), lambda m, L: m(L.ones(2, 3)),
     RuntimeError, "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found "
                   "-0.5"),
    ("rmsnorm-shape", lambda nn: nn.RMSNorm(4), lambda m, L: m(L.ones(2, 5)), RuntimeError,
     "Given normalized_shape=[4], expected input with shape [*4], but got input of size[2, 5]"),
    ("softmax2d-rank", lambda nn: nn.Softmax2d(), lambda m, L: m(L.ones(2, 5)), ValueError,
     "Softmax2d: expected input to be 3D or 4D, got 2D instead"),
]


@pytest.mark.parametrize("name,build,call,exc,message", CASES, ids=[c[0] for c in CASES])
def test_error(name, build, call, exc, message):
    m = build(ember.nn)
    before = {k: v.clone() for k, v in m.state_dict().items()} \
        if isinstance(m, ember.nn.Module) else {}
    with pytest.raises(exc) as err:
        call(m, ember)
    assert message in str(err.value)
    for k, v in (m.state_dict().items() if before else ()):
        assert ember.equal(v, before[k]), f"{k} changed by a failing call"


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name,build,call,exc,message", CASES, ids=[c[0] for c in CASES])
def test_torch_agrees(name, build, call, exc, message):
    if name in ("embedding-dtype",):
        pytest.skip("ember names its own tensor types")
    m = build(torch.nn)
    with pytest.raises(Exception) as err:
        call(m, torch)
    assert isinstance(err.value, exc)
    assert message.replace("ember", "torch") in str(err.value)


def test_mse_warns_on_broadcast():
    with pytest.warns(UserWarning, match="Using a target size"):
        ember.nn.functional.mse_loss(ember.ones(3, 1), ember.ones(3))


def test_ceil_mode_pooling_keeps_one_overhanging_window():
    """A 2x2 input with a 3x3 window, stride 2, ceil_mode: one output (as
    PyTorch), where floor mode has none."""
    import ember.nn.functional as F
    x = ember.randn(1, 1, 2, 2)
    assert F.max_pool2d(x, 3, 2, ceil_mode=True).item() == x.max().item()
    assert abs(F.avg_pool2d(x, 3, 2, ceil_mode=True).item() - x.mean().item()) < 1e-6
    with pytest.raises(RuntimeError, match="Calculated output size is too small"):
        F.max_pool2d(x, 3, 2)
