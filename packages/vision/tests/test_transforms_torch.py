"""Tensor transforms against PyTorch's own operations (skipped without PyTorch)."""
import numpy as np
import pytest

import ember
from ember.vision.transforms import functional as F
from ember.vision.transforms import InterpolationMode

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def image(shape, seed=0):
    return np.random.RandomState(seed).rand(*shape).astype(np.float32)


@pytest.mark.parametrize("size", [(3, 5), (9, 4), (12, 12)])
@pytest.mark.parametrize("mode,torch_mode", [
    (InterpolationMode.NEAREST, "nearest"),
    (InterpolationMode.NEAREST_EXACT, "nearest-exact"),
    (InterpolationMode.BILINEAR, "bilinear"),
])
def test_resize_without_antialias_matches_interpolate(size, mode, torch_mode):
    x = image((2, 3, 7, 6))
    ours = F.resize(ember.from_numpy(x), list(size), interpolation=mode, antialias=False).numpy()
    kwargs = {} if "nearest" in torch_mode else {"align_corners": False}
    theirs = torch.nn.functional.interpolate(torch.from_numpy(x), size=size, mode=torch_mode, **kwargs)
    np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-5)


@pytest.mark.parametrize("size", [(3, 4), (5, 2)])
def test_antialiased_downscale_matches_interpolate(size):
    x = image((1, 2, 10, 8), seed=1)
    ours = F.resize(ember.from_numpy(x), list(size)).numpy()
    theirs = torch.nn.functional.interpolate(torch.from_numpy(x), size=size, mode="bilinear",
                                             align_corners=False, antialias=True)
    np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-4)


@pytest.mark.parametrize("mode,torch_mode", [("constant", "constant"), ("edge", "replicate"),
                                             ("reflect", "reflect")])
def test_pad_matches_functional_pad(mode, torch_mode):
    x = image((2, 4, 5), seed=2)
    ours = F.pad(ember.from_numpy(x), [1, 2, 3, 1], padding_mode=mode).numpy()
    theirs = torch.nn.functional.pad(torch.from_numpy(x)[None], (1, 3, 2, 1), mode=torch_mode)[0]
    np.testing.assert_allclose(ours, theirs.numpy())


def test_normalize_matches():
    x = image((3, 4, 4), seed=3)
    mean, std = [0.1, 0.2, 0.3], [0.5, 0.25, 2.0]
    ours = F.normalize(ember.from_numpy(x), mean, std).numpy()
    theirs = (torch.from_numpy(x) - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-6)
