"""Transforms against hand-computed results on small arrays."""
import numpy as np
import pytest
from PIL import Image

import ember
from ember.vision import transforms as T
from ember.vision.transforms import functional as F


def tensor(values, dtype=None):
    return ember.from_numpy(np.ascontiguousarray(np.asarray(values, dtype=dtype)))


def gray(values):
    return Image.fromarray(np.asarray(values, dtype=np.uint8))


def rgb(values):
    return Image.fromarray(np.asarray(values, dtype=np.uint8), mode="RGB")


# -- conversion ------------------------------------------------------------
def test_to_tensor_scales_uint8_and_moves_channels_first():
    pixels = np.array([[[0, 51, 255], [102, 0, 0]]], dtype=np.uint8)     # 1×2×3 HWC
    out = T.ToTensor()(rgb(pixels))
    assert out.shape == (3, 1, 2) and out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), pixels.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    out = F.to_tensor(gray([[0, 255], [128, 1]]))
    assert out.shape == (1, 2, 2)
    np.testing.assert_allclose(out.numpy()[0], [[0, 1], [128 / 255, 1 / 255]], rtol=1e-6)


def test_to_tensor_ndarray_keeps_non_uint8_values_and_copies():
    array = np.array([[1.5, -2.0]], dtype=np.float32)
    out = F.to_tensor(array)
    assert out.shape == (1, 1, 2) and out.dtype == ember.float32
    array[0, 0] = 9
    assert out.numpy()[0, 0, 0] == 1.5
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        F.to_tensor([1, 2])
    with pytest.raises(ValueError, match="pic should be 2 or 3 dimensional"):
        F.to_tensor(np.zeros(3))


def test_pil_to_tensor_keeps_values():
    out = T.PILToTensor()(gray([[0, 7], [200, 255]]))
    assert out.dtype == ember.uint8 and out.shape == (1, 2, 2)
    assert out.numpy().tolist() == [[[0, 7], [200, 255]]]


def test_normalize_per_channel():
    x = tensor(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    out = T.Normalize(mean=[1.0, 2.0], std=[2.0, 0.5])(x)
    expected = np.stack([(np.arange(4).reshape(2, 2) - 1) / 2, (np.arange(4, 8).reshape(2, 2) - 2) / 0.5])
    np.testing.assert_allclose(out.numpy(), expected)
    assert x.numpy()[0, 0, 0] == 0.0                       # input untouched
    batch = ember.stack([x, x])
    np.testing.assert_allclose(F.normalize(batch, [1.0, 2.0], [2.0, 0.5]).numpy()[1], expected)


def test_normalize_inplace_and_errors():
    x = tensor(np.ones((1, 2, 2), np.float32))
    out = F.normalize(x, [0.5], [0.25], inplace=True)
    assert out is x and x.numpy().tolist() == [[[2.0, 2.0], [2.0, 2.0]]]
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(x, [0.0], [0.0])
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        F.normalize(tensor(np.ones((1, 2, 2), np.uint8)), [0.0], [1.0])
    with pytest.raises(ValueError, match="tensor image of size"):
        F.normalize(tensor(np.ones((2, 2), np.float32)), [0.0], [1.0])
    with pytest.raises(ValueError, match="mean has 3 values for an image with 1 channels"):
        F.normalize(tensor(np.ones((1, 2, 2), np.float32)), [0.0, 0, 0], [1.0])
    assert x.numpy().tolist() == [[[2.0, 2.0], [2.0, 2.0]]]


def test_compose_chains_in_order_and_prints():
    tf = T.Compose([T.Lambda(lambda v: v + 1), T.Lambda(lambda v: v * 10)])
    assert tf(1) == 20
    text = repr(T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))]))
    assert text == "Compose(\n    ToTensor()\n    Normalize(mean=(0.1307,), std=(0.3081,))\n)"
    with pytest.raises(TypeError, match="should be callable"):
        T.Lambda(3)
