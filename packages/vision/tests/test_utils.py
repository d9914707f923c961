"""make_grid, save_image and draw_bounding_boxes: shapes and pixel values."""
import numpy as np
import pytest
from PIL import Image

import ember
from ember.vision.utils import draw_bounding_boxes, make_grid, save_image


def batch(n, c=3, h=2, w=3, start=0.0):
    values = np.arange(n * c * h * w, dtype=np.float32).reshape(n, c, h, w) + start
    return ember.from_numpy(values)


def test_make_grid_layout_and_padding():
    x = batch(5, h=2, w=3)
    grid = make_grid(x, nrow=2, padding=1, pad_value=-1)
    # 2 columns, 3 rows of 2×3 cells with one pixel of padding around each
    assert grid.shape == (3, 3 * 3 + 1, 2 * 4 + 1)
    g = grid.numpy()
    np.testing.assert_array_equal(g[:, 1:3, 1:4], x.numpy()[0])
    np.testing.assert_array_equal(g[:, 1:3, 5:8], x.numpy()[1])
    np.testing.assert_array_equal(g[:, 4:6, 1:4], x.numpy()[2])
    np.testing.assert_array_equal(g[:, 7:9, 1:4], x.numpy()[4])
    assert (g[:, 7:9, 5:8] == -1).all()               # the empty sixth cell
    assert (g[:, 0, :] == -1).all() and (g[:, :, 0] == -1).all()


def test_make_grid_grey_list_single_and_2d():
    imgs = [ember.ones(1, 2, 2) * k for k in range(3)]
    grid = make_grid(imgs, padding=0)
    assert grid.shape == (3, 2, 6)                     # grey repeated into RGB
    assert grid.numpy()[:, :, 4:].min() == 2
    single = make_grid(ember.ones(1, 4, 5))
    assert single.shape == (3, 4, 5)                  # one image: no padding
    assert make_grid(ember.zeros(4, 5)).shape == (3, 4, 5)
    assert make_grid(ember.zeros(2, 3, 4, 5, dtype=ember.uint8)).dtype == ember.uint8


def test_make_grid_normalize_range_and_scale_each():
    x = ember.from_numpy(np.array([[[[0.0, 2.0]]], [[[4.0, 8.0]]]], dtype=np.float32))
    g = make_grid(x, padding=0, normalize=True).numpy()[0]
    np.testing.assert_allclose(g, [[0.0, 0.25, 0.5, 1.0]])
    g = make_grid(x, padding=0, normalize=True, scale_each=True).numpy()[0]
    np.testing.assert_allclose(g, [[0.0, 1.0, 0.0, 1.0]])
    g = make_grid(x, padding=0, normalize=True, value_range=(2, 4)).numpy()[0]
    np.testing.assert_allclose(g, [[0.0, 0.0, 1.0, 1.0]])
    assert x.numpy()[1, 0, 0, 1] == 8.0                 # input untouched


def test_make_grid_errors():
    with pytest.raises(TypeError, match="tensor or list of tensors expected"):
        make_grid(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="2, 3 or 4 dimensions"):
        make_grid(ember.zeros(1, 1, 1, 2, 2))
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        make_grid(ember.zeros(2, 1, 2, 2), normalize=True, value_range=3)
    with pytest.raises(ValueError, match="empty list"):
        make_grid([])


def test_save_image_rounds_and_reads_back(tmp_path):
    x = ember.from_numpy(np.array([[[[0.0, 0.5], [1.0, 2.0]]], [[[0.2, -1.0], [0.999, 0.0]]]],
                                  dtype=np.float32))
    path = tmp_path / "grid.png"
    save_image(x, path, nrow=2, padding=1, pad_value=1.0)
    img = np.asarray(Image.open(path))
    assert img.shape == (4, 7, 3)
    np.testing.assert_array_equal(img[1:3, 1:3, 0], [[0, 128], [255, 255]])
    np.testing.assert_array_equal(img[1:3, 4:6, 1], [[51, 0], [255, 0]])
    assert (img[0] == 255).all()
    save_image(ember.zeros(3, 2, 2, dtype=ember.uint8) + 7, tmp_path / "u8.png")
    assert np.asarray(Image.open(tmp_path / "u8.png")).max() == 7
    with pytest.raises(ValueError, match="cannot tell the image format"):
        save_image(x, tmp_path / "noext")


def test_draw_bounding_boxes_outline_pixels():
    image = ember.zeros(3, 6, 7, dtype=ember.uint8)
    out = draw_bounding_boxes(image, ember.tensor([[1, 1, 4, 3]]), colors="red")
    assert out.shape == (3, 6, 7) and out.dtype == ember.uint8
    o = out.numpy()
    red = np.zeros((6, 7), bool)
    red[1, 1:5] = red[3, 1:5] = True
    red[1:4, 1] = red[1:4, 4] = True
    np.testing.assert_array_equal(o[0] == 255, red)
    assert (o[1:] == 0).all()
    assert image.numpy().max() == 0                     # input untouched


def test_draw_bounding_boxes_fill_colours_grey_and_labels():
    image = ember.zeros(1, 8, 8, dtype=ember.uint8) + 100
    out = draw_bounding_boxes(image, [[0, 0, 4, 4], [5, 5, 7, 7]], colors=["blue", (0, 255, 0)],
                              fill=True, labels=["a", "b"]).numpy()
    assert out.shape == (3, 8, 8)
    assert tuple(out[:, 0, 0]) == (0, 0, 255)           # outline
    inside = out[:, 6, 6]
    assert inside[1] > 100 and inside[0] < 100          # translucent green over grey
    assert tuple(out[:, 7, 0]) == (100, 100, 100)       # untouched pixel


def test_draw_bounding_boxes_errors():
    img = ember.zeros(3, 4, 4, dtype=ember.uint8)
    with pytest.raises(ValueError, match="Tensor uint8 expected"):
        draw_bounding_boxes(ember.zeros(3, 4, 4), [[0, 0, 1, 1]])
    with pytest.raises(ValueError, match=r"\(xmin, ymin, xmax, ymax\) format"):
        draw_bounding_boxes(img, [[2, 0, 1, 1]])
    with pytest.raises(ValueError, match="Number of boxes \\(1\\) and labels \\(2\\) mismatch"):
        draw_bounding_boxes(img, [[0, 0, 1, 1]], labels=["a", "b"])
    with pytest.raises(ValueError, match="Pass individual images"):
        draw_bounding_boxes(ember.zeros(1, 3, 4, 4, dtype=ember.uint8), [[0, 0, 1, 1]])
    with pytest.raises(ValueError, match="unknown colour"):
        draw_bounding_boxes(img, [[0, 0, 1, 1]], colors="notacolour")
