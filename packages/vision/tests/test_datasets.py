"""Datasets on tiny files of their own formats, written by the tests."""
import gzip
import struct

import numpy as np
import pytest
from PIL import Image

import ember
from ember.utils.data import DataLoader
from ember.vision import datasets, transforms


# -- IDX files -------------------------------------------------------------
def idx_bytes(array):
    codes = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C,
             np.float32: 0x0D, np.float64: 0x0E}
    code = codes[array.dtype.type]
    header = bytes([0, 0, code, array.ndim]) + struct.pack(">" + "I" * array.ndim, *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path, array, gz=False):
    data = idx_bytes(array)
    if gz:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)


def make_mnist(folder, prefix="train", n=5, gz=False, seed=0, n_classes=10, names=None):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, size=(n, 28, 28)).astype(np.uint8)
    labels = rng.randint(0, n_classes, size=n).astype(np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    img_name, lbl_name = names or (f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte")
    write_idx(folder / img_name, images, gz)
    write_idx(folder / lbl_name, labels, gz)
    return images, labels


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_mnist_reads_idx_in_torchvision_layout(tmp_path, gz, train):
    prefix = "train" if train else "t10k"
    images, labels = make_mnist(tmp_path / "MNIST" / "raw", prefix, n=7, gz=gz)
    ds = datasets.MNIST(tmp_path, train=train)
    assert len(ds) == 7
    assert ds.data.shape == (7, 28, 28) and ds.data.dtype == ember.uint8
    assert ds.targets.dtype == ember.int64
    np.testing.assert_array_equal(ds.data.numpy(), images)
    np.testing.assert_array_equal(ds.targets.numpy(), labels)
    img, target = ds[3]
    assert isinstance(img, Image.Image) and img.mode == "L" and img.size == (28, 28)
    np.testing.assert_array_equal(np.asarray(img), images[3])
    assert target == labels[3] and type(target) is int
    assert ds.classes[0] == "0 - zero" and ds.class_to_idx["9 - nine"] == 9


def test_mnist_accepts_files_directly_in_root(tmp_path):
    images, _ = make_mnist(tmp_path, "t10k", n=3, gz=True)
    ds = datasets.MNIST(tmp_path, train=False)
    np.testing.assert_array_equal(ds.data.numpy(), images)


def test_mnist_transforms_and_repr(tmp_path):
    images, labels = make_mnist(tmp_path, "train", n=4)
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.25,))])
    ds = datasets.MNIST(tmp_path, transform=tf, target_transform=lambda t: t + 100)
    x, y = ds[1]
    assert x.shape == (1, 28, 28) and x.dtype == ember.float32
    np.testing.assert_allclose(x.numpy()[0], (images[1] / 255.0 - 0.5) / 0.25, rtol=1e-5, atol=1e-5)
    assert y == labels[1] + 100
    text = repr(ds)
    assert text.startswith("Dataset MNIST\n    Number of datapoints: 4\n")
    assert "Split: Train" in text and "Normalize(mean=(0.5,), std=(0.25,))" in text


@pytest.mark.parametrize("cls", [datasets.FashionMNIST, datasets.KMNIST])
def test_mnist_relatives_use_their_own_folder_and_classes(tmp_path, cls):
    make_mnist(tmp_path / cls.__name__ / "raw", "train", n=2)
    ds = cls(tmp_path)
    assert len(ds) == 2 and len(ds.classes) == 10
    assert ds.classes[0] in ("T-shirt/top", "o")


@pytest.mark.parametrize("split,n_classes", [("byclass", 62), ("bymerge", 47), ("balanced", 47),
                                             ("letters", 27), ("digits", 10), ("mnist", 10)])
def test_emnist_splits(tmp_path, split, n_classes):
    names = (f"emnist-{split}-test-images-idx3-ubyte", f"emnist-{split}-test-labels-idx1-ubyte")
    images, labels = make_mnist(tmp_path / "EMNIST" / "raw", n=6, gz=True,
                                n_classes=n_classes, names=names)
    ds = datasets.EMNIST(tmp_path, split=split, train=False)
    assert len(ds.classes) == n_classes
    np.testing.assert_array_equal(ds.targets.numpy(), labels)
    assert f"Split: {split}" in repr(ds)


def test_emnist_rejects_unknown_split(tmp_path):
    with pytest.raises(ValueError, match="Unknown value 'bogus' for argument split"):
        datasets.EMNIST(tmp_path, split="bogus")


def test_mnist_missing_files_name_the_expected_path(tmp_path):
    with pytest.raises(RuntimeError, match="not found: expected .*MNIST/raw/train-images-idx3-ubyte"):
        datasets.MNIST(tmp_path)


@pytest.mark.parametrize("damage,message", [
    (lambda b: b"\x00\x00\x07\x03" + b[4:], "bad magic number"),
    (lambda b: b[:-10], "truncated"),
    (lambda b: b + b"\x00", "longer than its header says"),
    (lambda b: b"", "bad magic number in an empty file"),
])
def test_corrupt_idx_images_raise_naming_the_file(tmp_path, damage, message):
    make_mnist(tmp_path, "train", n=3)
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(RuntimeError, match=message) as info:
        datasets.MNIST(tmp_path)
    assert str(path) in str(info.value)


def test_corrupt_gzip_and_mismatched_counts(tmp_path):
    make_mnist(tmp_path, "train", n=3, gz=True)
    gz = tmp_path / "train-images-idx3-ubyte.gz"
    gz.write_bytes(gz.read_bytes()[:30])
    with pytest.raises(RuntimeError, match="cannot read the file") as info:
        datasets.MNIST(tmp_path)
    assert "train-images-idx3-ubyte.gz" in str(info.value)

    other = tmp_path / "counts"
    make_mnist(other, "train", n=3)
    write_idx(other / "train-labels-idx1-ubyte", np.zeros(4, np.uint8))
    with pytest.raises(RuntimeError, match="3 images but .* 4 labels"):
        datasets.MNIST(other)


def test_labels_out_of_range_and_wrong_rank(tmp_path):
    make_mnist(tmp_path, "train", n=3)
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.array([1, 2, 10], np.uint8))
    with pytest.raises(RuntimeError, match=r"labels must lie in \[0, 9\]"):
        datasets.MNIST(tmp_path)
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros((3, 2), np.uint8))
    with pytest.raises(RuntimeError, match="expected labels with 1 dimension"):
        datasets.MNIST(tmp_path)


def test_read_idx_other_dtypes(tmp_path):
    from ember.vision.datasets.mnist import read_idx
    values = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    write_idx(tmp_path / "f.idx", values)
    out = read_idx(str(tmp_path / "f.idx"))
    assert out.dtype == np.float32 and out.dtype.isnative
    np.testing.assert_array_equal(out, values)
    write_idx(tmp_path / "i.idx", np.array([-70000, 5], np.int32), gz=True)
    np.testing.assert_array_equal(read_idx(str(tmp_path / "i.idx.gz")), [-70000, 5])


# -- Digits ----------------------------------------------------------------
def test_digits_ships_with_the_package_and_has_a_fixed_split():
    train, test = datasets.Digits(), datasets.Digits(train=False)
    assert len(train) == 1437 and len(test) == 360
    assert train.data.shape == (1437, 8, 8) and train.data.dtype == ember.uint8
    assert train.classes == [str(d) for d in range(10)]
    both = np.concatenate([train.targets.numpy(), test.targets.numpy()])
    assert np.bincount(both).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    # pixels are round(v * 255 / 16) of counts v in 0..16
    allowed = {int(round(v * 255 / 16)) for v in range(17)}
    assert set(np.unique(train.data.numpy()).tolist()) <= allowed
    assert train.data.numpy().max() == 255
    # the same split every time
    again = datasets.Digits()
    np.testing.assert_array_equal(again.targets.numpy(), train.targets.numpy())


def test_digits_rows_are_the_shipped_table():
    from ember.vision.datasets import digits as module
    with gzip.open(module._DATA_FILE, "rt") as f:
        table = np.loadtxt(f, delimiter=",")
    train_rows, test_rows = module.split_indices()
    assert len(set(train_rows) | set(test_rows)) == 1797
    test = datasets.Digits(train=False)
    expected = np.rint(table[test_rows[5], :64] * 255 / 16).reshape(8, 8)
    img, label = test[5]
    assert img.mode == "L" and img.size == (8, 8)
    np.testing.assert_array_equal(np.asarray(img), expected)
    assert label == int(table[test_rows[5], 64])


def test_digits_with_transforms_and_dataloader():
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    ds = datasets.Digits(transform=tf)
    x, y = next(iter(DataLoader(ds, batch_size=16)))
    assert x.shape == (16, 1, 8, 8) and y.shape == (16,)
    assert float(x.min()) >= -1.0 and float(x.max()) <= 1.0
    assert "Split: Train" in repr(ds) and "Root location" not in repr(ds)
