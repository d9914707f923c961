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


def test_sixteen_bit_images_widen_to_int32():
    img = Image.fromarray(np.array([[1, 40000]], np.uint16))
    out = F.pil_to_tensor(img)
    assert out.dtype == ember.int32 and out.numpy().tolist() == [[[1, 40000]]]
    assert F.to_tensor(img).numpy().tolist() == [[[1, 40000]]]


def test_normalize_per_channel():
    x = tensor(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    out = T.Normalize(mean=[1.0, 2.0], std=[2.0, 0.5])(x)
    expected = np.stack([(np.arange(4).reshape(2, 2) - 1) / 2, (np.arange(4, 8).reshape(2, 2) - 2) / 0.5])
    np.testing.assert_allclose(out.numpy(), expected)
    assert x.numpy()[0, 0, 0] == 0.0                       # input untouched
    batch = ember.stack([x, x])
    np.testing.assert_allclose(F.normalize(batch, [1.0, 2.0], [2.0, 0.5]).numpy()[1], expected)


def test_normalize_passes_gradients():
    x = ember.ones(2, 1, 1, dtype=ember.float64, requires_grad=True)
    F.normalize(x, [0.0, 1.0], [2.0, 4.0]).sum().backward()
    assert x.grad.numpy().ravel().tolist() == [0.5, 0.25]


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


def test_to_pil_image_modes_and_round_trip():
    x = tensor(np.array([[[0.0, 0.5], [1.0, 0.2]]], np.float32))
    img = F.to_pil_image(x)
    assert img.mode == "L" and np.asarray(img).tolist() == [[0, 127], [255, 51]]
    rgb_t = tensor(np.arange(12, dtype=np.uint8).reshape(3, 2, 2))
    img = T.ToPILImage()(rgb_t)
    assert img.mode == "RGB"
    assert ember.equal(F.pil_to_tensor(img), rgb_t)
    assert F.to_pil_image(tensor(np.ones((2, 2), np.float32)), mode="F").mode == "F"
    assert F.to_pil_image(np.zeros((2, 2, 4), np.uint8)).mode == "RGBA"
    with pytest.raises(ValueError, match="pic should not have > 4 channels"):
        F.to_pil_image(tensor(np.zeros((5, 2, 2), np.uint8)))
    with pytest.raises(TypeError, match="pic should be Tensor or ndarray"):
        F.to_pil_image([[1]])
    with pytest.raises(ValueError, match="Only modes"):
        F.to_pil_image(rgb_t, mode="RGBA")


def test_convert_image_dtype_rescales():
    u8 = tensor(np.array([0, 51, 255], np.uint8))
    np.testing.assert_allclose(T.ConvertImageDtype(ember.float32)(u8).numpy(), [0, 0.2, 1.0], rtol=1e-6)
    f = tensor(np.array([0.0, 0.5, 1.0], np.float32))
    assert F.convert_image_dtype(f, ember.uint8).tolist() == [0, 127, 255]
    assert F.convert_image_dtype(u8, ember.int16).tolist() == [0, 51 * 128, 255 * 128]
    assert F.convert_image_dtype(tensor(np.array([32767], np.int16)), ember.uint8).tolist() == [255]
    assert F.convert_image_dtype(f, ember.float64).dtype == ember.float64
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        F.convert_image_dtype(f, ember.int32)


# -- geometry --------------------------------------------------------------
def test_resize_sizes():
    img = gray(np.zeros((4, 8)))
    assert T.Resize(2)(img).size == (4, 2)                      # smaller edge -> 2
    assert T.Resize((3, 5))(img).size == (5, 3)
    assert T.Resize(2, max_size=3)(img).size == (3, 1)
    x = ember.zeros(2, 3, 8, 4)
    assert T.Resize(2)(x).shape == (2, 3, 4, 2)
    with pytest.raises(ValueError, match="max_size = 2 must be strictly greater"):
        F.resize(img, 2, max_size=2)
    with pytest.raises(TypeError, match="Size should be int or sequence"):
        T.Resize((1, 2, 3))


def test_resize_tensor_values():
    x = tensor(np.array([[[0.0, 10.0]]], np.float32))
    np.testing.assert_allclose(F.resize(x, [1, 4], antialias=False).numpy(), [[[0, 2.5, 7.5, 10]]])
    x = tensor(np.array([[[0.0, 1.0, 2.0, 3.0]]], np.float32))
    out = F.resize(x, [1, 2], interpolation=T.InterpolationMode.NEAREST)
    np.testing.assert_array_equal(out.numpy(), [[[0, 2]]])
    # the antialiased tensor path agrees with the PIL path to within rounding
    u = tensor((np.arange(64, dtype=np.uint8) * 3).reshape(1, 8, 8))
    a = F.resize(u, [3, 5]).numpy()[0].astype(int)
    b = np.asarray(F.resize(F.to_pil_image(u), [3, 5])).astype(int)
    assert a.dtype == b.dtype and np.abs(a - b).max() <= 1
    assert F.resize(u, [3, 5]).dtype == ember.uint8


def test_crop_and_center_crop():
    x = tensor(np.arange(25, dtype=np.float32).reshape(1, 5, 5))
    np.testing.assert_array_equal(F.crop(x, 1, 2, 2, 3).numpy()[0], [[7, 8, 9], [12, 13, 14]])
    np.testing.assert_array_equal(F.crop(x, -1, 3, 2, 3).numpy()[0], [[0, 0, 0], [3, 4, 0]])
    np.testing.assert_array_equal(T.CenterCrop(3)(x).numpy()[0], x.numpy()[0, 1:4, 1:4])
    # left = round((5 - 2) / 2) = 2 (round half to even)
    np.testing.assert_array_equal(T.CenterCrop((1, 2))(x).numpy()[0], [[12, 13]])
    big = T.CenterCrop(4)(ember.ones(1, 2, 2)).numpy()[0]
    assert big.tolist() == [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]]
    img = gray(np.arange(25).reshape(5, 5))
    np.testing.assert_array_equal(np.asarray(T.CenterCrop(3)(img)), np.arange(25).reshape(5, 5)[1:4, 1:4])
    assert T.CenterCrop(7)(img).size == (7, 7)


@pytest.mark.parametrize("mode,expected", [
    ("constant", [9, 9, 1, 2, 3, 9, 9]),
    ("edge", [1, 1, 1, 2, 3, 3, 3]),
    ("reflect", [3, 2, 1, 2, 3, 2, 1]),
    ("symmetric", [2, 1, 1, 2, 3, 3, 2]),
])
def test_pad_modes_on_tensor_and_pil(mode, expected):
    row = np.array([[1, 2, 3]], np.uint8)
    out = T.Pad([2, 0], fill=9, padding_mode=mode)(tensor(row[None]))
    assert out.shape == (1, 1, 7) and out.numpy().ravel().tolist() == expected
    out = F.pad(gray(row), [2, 0], fill=9, padding_mode=mode)
    assert out.mode == "L" and np.asarray(out).ravel().tolist() == expected


def test_pad_sides_fill_per_channel_and_negative():
    x = ember.zeros(3, 1, 1)
    out = F.pad(x, [1, 2, 3, 4], fill=(1.0, 2.0, 3.0))
    assert out.shape == (3, 1 + 2 + 4, 1 + 1 + 3)
    assert out.numpy()[:, 0, 0].tolist() == [1, 2, 3] and out.numpy()[:, 2, 1].tolist() == [0, 0, 0]
    assert F.pad(x, 1).shape == (3, 3, 3)
    img = F.pad(rgb(np.zeros((1, 1, 3))), 1, fill=(10, 20, 30))
    assert np.asarray(img)[0, 0].tolist() == [10, 20, 30]
    r = tensor(np.array([[[1, 2, 3]]], np.uint8))
    assert F.pad(r, [-1, 0, 0, 0]).numpy().tolist() == [[[2, 3]]]
    with pytest.raises(ValueError, match="Padding mode should be either"):
        F.pad(r, 1, padding_mode="wrap")
    with pytest.raises(ValueError, match="number of elements in 'fill'"):
        F.pad(x, 1, fill=(1.0, 2.0))
    with pytest.raises(ValueError, match="Padding must be an int or a 1, 2, or 4"):
        T.Pad([1, 2, 3])
    with pytest.raises(ValueError, match="Padding size should be less than"):
        F.pad(r, 3, padding_mode="reflect")


def test_flips():
    x = tensor(np.arange(6, dtype=np.float32).reshape(1, 2, 3))
    assert F.hflip(x).numpy().tolist() == [[[2, 1, 0], [5, 4, 3]]]
    assert F.vflip(x).numpy().tolist() == [[[3, 4, 5], [0, 1, 2]]]
    assert T.RandomHorizontalFlip(p=1.0)(x).numpy().tolist() == [[[2, 1, 0], [5, 4, 3]]]
    assert T.RandomVerticalFlip(p=0.0)(x) is x
    img = gray(np.arange(6).reshape(2, 3))
    assert np.asarray(T.RandomHorizontalFlip(1.0)(img)).tolist() == [[2, 1, 0], [5, 4, 3]]
    assert np.asarray(T.RandomVerticalFlip(1.0)(img)).tolist() == [[3, 4, 5], [0, 1, 2]]
    batch = ember.stack([x, x + 10])
    assert F.hflip(batch).numpy()[1, 0, 0].tolist() == [12, 11, 10]


def test_rotate_and_affine_quarter_turns():
    x = tensor(np.array([[[1.0, 2.0], [3.0, 4.0]]], np.float32))
    assert F.rotate(x, 90).numpy().tolist() == [[[2, 4], [1, 3]]]          # counter-clockwise
    assert F.affine(x, 90, [0, 0], 1.0, 0).numpy().tolist() == [[[3, 1], [4, 2]]]   # clockwise
    assert F.affine(x, 0, [1, 0], 1.0, 0).numpy().tolist() == [[[0, 1], [0, 3]]]
    assert F.affine(x, 0, [0, 1], 1.0, 0, fill=7.0).numpy().tolist() == [[[7, 7], [1, 2]]]
    img = gray([[1, 2], [3, 4]])
    assert np.asarray(F.rotate(img, 90)).tolist() == [[2, 4], [1, 3]]
    assert np.asarray(F.affine(img, 90, [0, 0], 1.0, 0)).tolist() == [[3, 1], [4, 2]]
    assert F.rotate(ember.zeros(1, 2, 4), 90, expand=True).shape == (1, 4, 2)
    big = tensor(np.ones((1, 5, 5), np.float32))
    out = F.rotate(big, 45, fill=[0.0]).numpy()[0]
    assert out[2, 2] == 1 and out[0, 0] == 0                              # corners uncovered
    corner = F.rotate(rgb(np.zeros((5, 5, 3))), 45, fill=7)
    assert np.asarray(corner)[0, 0].tolist() == [7, 7, 7]                # one value, every band
    corner = F.affine(rgb(np.zeros((5, 5, 3))), 45, [0, 0], 1.0, 0, fill=(1, 2, 3))
    assert np.asarray(corner)[0, 0].tolist() == [1, 2, 3]
    rgb_t = F.rotate(ember.zeros(3, 5, 5), 45, fill=[1.0, 2.0, 3.0])
    assert rgb_t.numpy()[:, 0, 0].tolist() == [1, 2, 3]


def test_affine_scale_and_shear():
    x = tensor(np.zeros((1, 5, 5), np.float32))
    x.numpy()[0, 2, 3] = 1.0
    # doubling around the centre (2.5, 2.5) moves pixel centre 3.5 to 4.5
    out = F.affine(x, 0, [0, 0], 2.0, 0, interpolation=T.InterpolationMode.NEAREST).numpy()[0]
    assert out[2, 4] == 1 and out[2, 2] == 0
    sheared = F.affine(x, 0, [0, 0], 1.0, [0.0, 0.0])
    assert ember.equal(sheared, x)
    with pytest.raises(ValueError, match="scale should be positive"):
        F.affine(x, 0, [0, 0], 0.0, 0)
    with pytest.raises(TypeError, match="translate should be a sequence of length 2"):
        F.affine(x, 0, 3, 1.0, 0)


# -- colour ----------------------------------------------------------------
def test_brightness_contrast_saturation_by_hand():
    x = tensor(np.array([[[0.2, 0.6]]], np.float32))
    np.testing.assert_allclose(F.adjust_brightness(x, 2.0).numpy(), [[[0.4, 1.0]]], rtol=1e-6)
    u = tensor(np.array([[[0, 100]]], np.uint8))
    assert F.adjust_contrast(u, 0.5).numpy().tolist() == [[[25, 75]]]      # mean grey 50
    assert F.adjust_brightness(u, 3.0).numpy().tolist() == [[[0, 255]]]    # clipped
    red = tensor(np.array([255, 0, 0], np.uint8).reshape(3, 1, 1))
    # grey of pure red: 0.299 * 255 = 76.2 -> 76
    assert F.adjust_saturation(red, 0.0).numpy().ravel().tolist() == [76, 76, 76]
    assert F.adjust_saturation(red, 1.0).numpy().ravel().tolist() == [255, 0, 0]
    with pytest.raises(ValueError, match="is not non-negative"):
        F.adjust_brightness(x, -1)


def test_hue_shift():
    red = tensor(np.array([1.0, 0.0, 0.0], np.float32).reshape(3, 1, 1))
    np.testing.assert_allclose(F.adjust_hue(red, 1 / 3).numpy().ravel(), [0, 1, 0], atol=1e-6)
    np.testing.assert_allclose(F.adjust_hue(red, -1 / 3).numpy().ravel(), [0, 0, 1], atol=1e-6)
    mix = tensor(np.random.RandomState(0).rand(3, 4, 4).astype(np.float32))
    np.testing.assert_allclose(F.adjust_hue(mix, 0.0).numpy(), mix.numpy(), atol=1e-6)
    img = F.adjust_hue(F.to_pil_image(red), 1 / 3)
    assert np.asarray(img).ravel().tolist() == [0, 255, 0]
    with pytest.raises(ValueError, match=r"is not in \[-0.5, 0.5\]"):
        F.adjust_hue(red, 0.7)


def test_grayscale():
    x = tensor(np.array([1.0, 0.0, 0.0], np.float32).reshape(3, 1, 1))
    np.testing.assert_allclose(T.Grayscale()(x).numpy().ravel(), [0.299], rtol=1e-6)
    three = T.Grayscale(num_output_channels=3)(x)
    assert three.shape == (3, 1, 1)
    img = rgb(np.array([[[255, 0, 0], [0, 255, 0]]]))
    assert T.Grayscale()(img).mode == "L"
    assert np.asarray(T.Grayscale()(img)).ravel().tolist() == [76, 150]
    u = tensor(np.array([[[255, 0]], [[0, 255]], [[0, 0]]], np.uint8))
    assert F.rgb_to_grayscale(u).numpy().ravel().tolist() == [76, 150]
    assert T.RandomGrayscale(p=1.0)(img).mode == "RGB"
    with pytest.raises(TypeError, match="should have 3 channels"):
        F.rgb_to_grayscale(ember.zeros(2, 3, 3))


def test_color_jitter_ranges_and_identity():
    cj = T.ColorJitter(brightness=0.5, contrast=(0.8, 1.2), saturation=0, hue=0.1)
    assert cj.brightness == (0.5, 1.5) and cj.contrast == (0.8, 1.2)
    assert cj.saturation is None and cj.hue == (-0.1, 0.1)
    x = tensor(np.random.RandomState(0).rand(3, 4, 4).astype(np.float32))
    assert ember.equal(T.ColorJitter()(x), x)
    ember.manual_seed(3)
    a = cj(x)
    ember.manual_seed(3)
    assert ember.equal(cj(x), a) and not ember.equal(a, x)
    assert cj(F.to_pil_image(x)).mode == "RGB"
    with pytest.raises(ValueError, match="hue values should be between"):
        T.ColorJitter(hue=0.8)
    with pytest.raises(ValueError, match="must be non negative"):
        T.ColorJitter(brightness=-1)


# -- random transforms -----------------------------------------------------
def test_random_crop_padding_and_reproducibility():
    x = tensor(np.arange(16, dtype=np.float32).reshape(1, 4, 4))
    crop = T.RandomCrop(4, padding=2, fill=-1)
    ember.manual_seed(0)
    first = [crop(x) for _ in range(5)]
    ember.manual_seed(0)
    again = [crop(x) for _ in range(5)]
    assert all(ember.equal(a, b) for a, b in zip(first, again))
    assert len({tuple(a.numpy().ravel()) for a in first}) > 1
    for out in first:          # every crop is a window of the padded image
        padded = np.pad(x.numpy()[0], 2, constant_values=-1)
        windows = [padded[i:i + 4, j:j + 4] for i in range(5) for j in range(5)]
        assert any((w == out.numpy()[0]).all() for w in windows)
    assert T.RandomCrop(5, pad_if_needed=True)(x).shape == (1, 5, 5)
    assert T.RandomCrop((2, 3))(gray(np.zeros((4, 4)))).size == (3, 2)
    with pytest.raises(ValueError, match=r"Required crop size \(5, 5\) is larger than input image size \(4, 4\)"):
        T.RandomCrop(5)(x)


def test_random_resized_crop():
    img = gray(np.arange(100).reshape(10, 10))
    tf = T.RandomResizedCrop(4, scale=(0.2, 0.5))
    ember.manual_seed(1)
    a = np.asarray(tf(img))
    ember.manual_seed(1)
    assert a.shape == (4, 4) and (np.asarray(tf(img)) == a).all()
    i, j, h, w = T.RandomResizedCrop.get_params(img, (0.25, 0.25), (1.0, 1.0))
    assert (h, w) == (5, 5) and 0 <= i <= 5 and 0 <= j <= 5
    assert T.RandomResizedCrop((3, 2))(ember.zeros(2, 3, 10, 10)).shape == (2, 3, 3, 2)
    # impossible ratio: falls back to the whole image clamped to the ratio
    assert T.RandomResizedCrop.get_params(img, (1.0, 1.0), (4.0, 5.0)) == (4, 0, 2, 10)


def test_random_rotation_and_affine_draws():
    x = tensor(np.random.RandomState(0).rand(1, 6, 6).astype(np.float32))
    rot = T.RandomRotation((30, 60))
    ember.manual_seed(5)
    angle = T.RandomRotation.get_params(rot.degrees)
    assert 30 <= angle <= 60
    ember.manual_seed(5)
    assert ember.equal(rot(x), F.rotate(x, angle))
    aff = T.RandomAffine(10, translate=(0.5, 0.5), scale=(0.9, 1.1), shear=(-5, 5, -5, 5))
    ember.manual_seed(2)
    angle, (tx, ty), scale, shear = T.RandomAffine.get_params(aff.degrees, aff.translate, aff.scale,
                                                              aff.shear, (6, 6))
    assert -10 <= angle <= 10 and abs(tx) <= 3 and abs(ty) <= 3 and 0.9 <= scale <= 1.1
    assert all(-5 <= s <= 5 for s in shear)
    ember.manual_seed(2)
    expected = F.affine(x, angle, [tx, ty], scale, list(shear))
    assert ember.equal(aff(x), expected)
    with pytest.raises(ValueError, match="translate should be a sequence of two values between 0 and 1"):
        T.RandomAffine(0, translate=(2, 0))


def test_random_erasing():
    x = ember.ones(3, 4, 4)
    erase = T.RandomErasing(p=1.0, scale=(0.25, 0.25), ratio=(1.0, 1.0), value=0)
    ember.manual_seed(0)
    out = erase(x)
    zeros = (out.numpy() == 0)
    assert zeros.sum() == 3 * 2 * 2 and (zeros[0] == zeros[2]).all()
    assert x.numpy().min() == 1                                    # input untouched
    ember.manual_seed(0)
    assert ember.equal(erase(x), out)
    coloured = T.RandomErasing(p=1.0, scale=(0.25, 0.25), ratio=(1.0, 1.0), value=(5, 6, 7))(x)
    assert sorted(set(coloured.numpy()[1].ravel().tolist())) == [1.0, 6.0]
    noisy = T.RandomErasing(p=1.0, value="random")(ember.zeros(3, 8, 8))
    assert noisy.shape == (3, 8, 8)
    assert T.RandomErasing(p=0.0)(x) is x
    same = T.RandomErasing(p=1.0, scale=(0.25, 0.25), ratio=(1.0, 1.0), inplace=True)
    assert same(x) is x and x.numpy().min() == 0
    with pytest.raises(TypeError, match="needs a tensor image"):
        erase(gray(np.zeros((4, 4))))
    with pytest.raises(ValueError, match="If value is str, it should be 'random'"):
        T.RandomErasing(value="noise")


def test_random_apply_choice_order():
    add = T.Lambda(lambda v: v + [1])
    mul = T.Lambda(lambda v: v + [2])
    assert T.RandomApply([add, mul], p=1.0)([]) == [1, 2]
    assert T.RandomApply([add], p=0.0)([]) == []
    assert T.RandomChoice([add, mul], p=[0.0, 1.0])([]) == [2]
    ember.manual_seed(0)
    orders = {tuple(T.RandomOrder([add, mul])([])) for _ in range(20)}
    assert orders == {(1, 2), (2, 1)}


def test_pipeline_reproducible_under_seed_and_varies_without():
    tf = T.Compose([T.RandomCrop(6, padding=1), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize((0.5,), (0.5,))])
    img = gray(np.random.RandomState(0).randint(0, 256, (6, 6)))
    ember.manual_seed(11)
    a = [tf(img) for _ in range(4)]
    ember.manual_seed(11)
    b = [tf(img) for _ in range(4)]
    assert all(ember.equal(p, q) for p, q in zip(a, b))
    assert len({tuple(t.numpy().ravel()) for t in a}) > 1


def test_type_errors():
    with pytest.raises(TypeError, match="img should be PIL Image or Tensor"):
        F.hflip(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="Tensor is not an image"):
        F.vflip(ember.zeros(3))
    with pytest.raises(TypeError, match="interpolation should be an InterpolationMode"):
        T.Resize(2, interpolation="sideways")
    assert T.Resize(2, interpolation=Image.Resampling.NEAREST).interpolation is T.InterpolationMode.NEAREST


def test_random_transforms_differ_across_dataloader_workers():
    from ember.utils.data import DataLoader, Dataset

    class Same(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return T.RandomCrop(3)(ember.arange(36, dtype=ember.float32).view(1, 6, 6))

    def run(seed):
        g = ember.Generator().manual_seed(seed)
        return ember.cat(list(DataLoader(Same(), batch_size=4, num_workers=2, generator=g)))

    a, b = run(0), run(0)
    assert ember.equal(a, b)                                   # seeded loader: reproducible
    first, second = a[:4], a[4:]                               # made by worker 0 and worker 1
    assert not ember.equal(first, second)
