"""Datasets on tiny files of their own formats, written by the tests."""
import gzip
import os
import pickle

import numpy as np
import pytest
from PIL import Image

import ember
from ember.utils.data import DataLoader
from ember.vision import datasets, transforms
from _formats import write_idx


# -- IDX files -------------------------------------------------------------
def make_mnist(folder, prefix="train", n=5, gz=False, seed=0, n_classes=10, names=None):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, size=(n, 28, 28)).astype(np.uint8)
    labels = rng.randint(0, n_classes, size=n).astype(np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    img_name, lbl_name = names or (f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte")
    write_idx(folder / img_name, images, gzipped=gz)
    write_idx(folder / lbl_name, labels, gzipped=gz)
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


def test_transform_assigned_after_construction_takes_effect(tmp_path):
    make_mnist(tmp_path, "train", n=2)
    ds = datasets.MNIST(tmp_path)
    assert isinstance(ds[0][0], Image.Image) and ds.transforms is None
    ds.transform = transforms.PILToTensor()
    ds.target_transform = str
    x, y = ds[0]
    assert x.shape == (1, 28, 28) and isinstance(y, str)
    joint = datasets.VisionDataset("r", transforms=lambda a, b: (b, a))
    assert joint._apply(1, 2) == (2, 1)
    with pytest.raises(ValueError, match="Only transforms or transform/target_transform"):
        datasets.vision.VisionDataset("r", transforms=lambda a, b: (a, b), transform=str)


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
    write_idx(tmp_path / "i.idx", np.array([-70000, 5], np.int32), gzipped=True)
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


@pytest.mark.parametrize("content,message", [
    (b"not gzip", "cannot read the digits table"),
    (None, "expected 1797 rows of 65 values"),
])
def test_damaged_digits_table_says_to_reinstall(tmp_path, monkeypatch, content, message):
    from ember.vision.datasets import digits as module
    bad = tmp_path / "digits.csv.gz"
    bad.write_bytes(content if content is not None else gzip.compress(b"1,2,3\n4,5,6\n"))
    monkeypatch.setattr(module, "_DATA_FILE", str(bad))
    module._load_all.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=message + ".*reinstall ember-vision"):
            datasets.Digits()
    finally:
        module._load_all.cache_clear()


def test_digits_with_transforms_and_dataloader():
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    ds = datasets.Digits(transform=tf)
    x, y = next(iter(DataLoader(ds, batch_size=16)))
    assert x.shape == (16, 1, 8, 8) and y.shape == (16,)
    assert float(x.min()) >= -1.0 and float(x.max()) <= 1.0
    assert "Split: Train" in repr(ds) and "Root location" not in repr(ds)


# -- CIFAR -----------------------------------------------------------------
def write_pickle(path, obj, protocol=2):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(obj, protocol=protocol))


def make_cifar10(root, n_per_batch=2, seed=0, byte_keys=False):
    rng = np.random.RandomState(seed)
    folder = root / "cifar-10-batches-py"
    key = (lambda k: k.encode()) if byte_keys else (lambda k: k)
    batches = {}
    for name in ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5",
                 "test_batch"]:
        data = rng.randint(0, 256, size=(n_per_batch, 3072)).astype(np.uint8)
        labels = rng.randint(0, 10, size=n_per_batch).tolist()
        write_pickle(folder / name, {key("data"): data, key("labels"): labels, key("batch_label"): name})
        batches[name] = (data, labels)
    names = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    write_pickle(folder / "batches.meta", {key("label_names"): names, key("num_vis"): 3072})
    return batches


@pytest.mark.parametrize("byte_keys", [False, True])
def test_cifar10_reads_pickled_batches(tmp_path, byte_keys):
    batches = make_cifar10(tmp_path, byte_keys=byte_keys)
    train = datasets.CIFAR10(tmp_path)
    assert len(train) == 10 and train.data.shape == (10, 32, 32, 3) and train.data.dtype == np.uint8
    assert train.classes[1] == "automobile" and train.class_to_idx["truck"] == 9
    data, labels = batches["data_batch_2"]
    img, target = train[3]                  # second image of the second batch
    assert img.mode == "RGB" and img.size == (32, 32)
    pixels = np.asarray(img)
    # the row layout: 1024 red values, then green, then blue, each row-major
    np.testing.assert_array_equal(pixels[0, 5], data[1, [5, 1024 + 5, 2048 + 5]])
    np.testing.assert_array_equal(pixels[2, 1], data[1, [65, 1024 + 65, 2048 + 65]])
    assert target == labels[1]
    test = datasets.CIFAR10(tmp_path, train=False, transform=transforms.ToTensor())
    x, y = test[0]
    assert x.shape == (3, 32, 32) and y == batches["test_batch"][1][0]
    assert "Split: Test" in repr(test)


def test_cifar100_uses_fine_labels(tmp_path):
    rng = np.random.RandomState(1)
    folder = tmp_path / "cifar-100-python"
    data = rng.randint(0, 256, size=(3, 3072)).astype(np.uint8)
    write_pickle(folder / "train", {"data": data, "fine_labels": [99, 0, 42], "coarse_labels": [1, 2, 3]})
    write_pickle(folder / "test", {"data": data[:1], "fine_labels": [5], "coarse_labels": [0]})
    write_pickle(folder / "meta", {"fine_label_names": [f"c{k}" for k in range(100)],
                                   "coarse_label_names": [f"s{k}" for k in range(20)]})
    ds = datasets.CIFAR100(tmp_path)
    assert ds.targets == [99, 0, 42] and len(ds.classes) == 100 and ds.classes[42] == "c42"
    assert len(datasets.CIFAR100(tmp_path, train=False)) == 1


class _Hostile:
    def __reduce__(self):
        import os
        return (os.system, ("echo hacked",))


@pytest.mark.parametrize("content,message", [
    (b"not a pickle at all", "not a readable CIFAR pickle"),
    (pickle.dumps({"data": np.zeros((2, 3072), np.uint8)}, protocol=2)[:-20], "not a readable CIFAR pickle"),
    (pickle.dumps([1, 2, 3]), "holds a list, not a dict"),
    (pickle.dumps({"data": np.zeros((2, 3072), np.uint8)}), "has no 'labels' entry"),
    (pickle.dumps({"data": np.zeros((2, 100), np.uint8), "labels": [0, 1]}), r"shape \(N, 3072\)"),
    (pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0]}), "2 images but 1 labels"),
    (pickle.dumps({"data": np.zeros((1, 3072), np.uint8), "labels": [10]}), r"labels must lie in \[0, 9\]"),
    (pickle.dumps(_Hostile()), "refuses the global"),
])
def test_corrupt_cifar_batches_raise_naming_the_file(tmp_path, content, message):
    make_cifar10(tmp_path)
    path = tmp_path / "cifar-10-batches-py" / "data_batch_3"
    path.write_bytes(content)
    with pytest.raises(RuntimeError, match=message) as info:
        datasets.CIFAR10(tmp_path)
    assert str(path) in str(info.value)


def test_cifar_missing_files(tmp_path):
    with pytest.raises(RuntimeError, match="not found: expected .*cifar-10-batches-py/batches.meta"):
        datasets.CIFAR10(tmp_path)
    make_cifar10(tmp_path)
    (tmp_path / "cifar-10-batches-py" / "data_batch_4").unlink()
    with pytest.raises(RuntimeError, match="expected .*data_batch_4"):
        datasets.CIFAR10(tmp_path)
    assert len(datasets.CIFAR10(tmp_path, train=False)) == 2      # the test split is complete


# -- SVHN ------------------------------------------------------------------
def test_svhn_reads_mat_files(tmp_path):
    sio = pytest.importorskip("scipy.io")
    rng = np.random.RandomState(2)
    X = rng.randint(0, 256, size=(32, 32, 3, 4)).astype(np.uint8)
    y = np.array([[10], [1], [9], [10]], dtype=np.uint8)
    sio.savemat(str(tmp_path / "test_32x32.mat"), {"X": X, "y": y})
    ds = datasets.SVHN(tmp_path, split="test")
    assert len(ds) == 4 and ds.data.shape == (4, 3, 32, 32)
    assert ds.labels.tolist() == [0, 1, 9, 0]
    img, target = ds[2]
    assert img.mode == "RGB" and target == 9
    np.testing.assert_array_equal(np.asarray(img), X[:, :, :, 2])
    assert "Split: test" in repr(ds)


def test_svhn_errors(tmp_path):
    pytest.importorskip("scipy.io")
    with pytest.raises(ValueError, match="Unknown value 'valid' for argument split"):
        datasets.SVHN(tmp_path, split="valid")
    with pytest.raises(RuntimeError, match="not found: expected .*train_32x32.mat"):
        datasets.SVHN(tmp_path)
    bad = tmp_path / "train_32x32.mat"
    bad.write_bytes(b"MATLAB? no" * 20)
    with pytest.raises(RuntimeError, match="not a readable MATLAB file") as info:
        datasets.SVHN(tmp_path)
    assert str(bad) in str(info.value)


def test_svhn_without_scipy_names_the_package(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name == "scipy" or name.startswith("scipy."):
            raise ImportError("No module named 'scipy'")
        return real_import(name, *args, **kwargs)

    (tmp_path / "train_32x32.mat").write_bytes(b"")
    monkeypatch.setattr(builtins, "__import__", no_scipy)
    with pytest.raises(ImportError, match="pip install scipy"):
        datasets.SVHN(tmp_path)


# -- folders ---------------------------------------------------------------
def make_image_folder(root):
    layout = {"cat": ["b.png", "a.jpg", "sub/c.png"], "dog": ["z.bmp"], "eel": ["notes.txt", "x.png"]}
    for cls, files in layout.items():
        for k, name in enumerate(files):
            path = root / cls / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if name.endswith(".txt"):
                path.write_text("not an image")
            else:
                colour = (len(cls) * 10 + k, 0, 0)
                Image.new("RGB", (4, 3), colour).save(path)
    return layout


def test_image_folder_classes_samples_and_items(tmp_path):
    make_image_folder(tmp_path)
    ds = datasets.ImageFolder(tmp_path)
    assert ds.classes == ["cat", "dog", "eel"]
    assert ds.class_to_idx == {"cat": 0, "dog": 1, "eel": 2}
    rel = [(os.path.relpath(p, tmp_path), t) for p, t in ds.samples]
    assert rel == [("cat/a.jpg", 0), ("cat/b.png", 0), ("cat/sub/c.png", 0), ("dog/z.bmp", 1),
                   ("eel/x.png", 2)]
    assert ds.targets == [0, 0, 0, 1, 2] and ds.imgs == ds.samples
    img, target = ds[3]
    assert img.mode == "RGB" and img.size == (4, 3) and target == 1
    assert np.asarray(img)[0, 0].tolist() == [30, 0, 0]


def test_dataset_folder_with_is_valid_file_and_loader(tmp_path):
    make_image_folder(tmp_path)
    ds = datasets.DatasetFolder(tmp_path, loader=lambda p: p.rsplit(".", 1)[1],
                                is_valid_file=lambda p: p.endswith(".png"), allow_empty=True,
                                target_transform=lambda t: -t)
    assert [s[1] for s in ds.samples] == [0, 0, 2]
    assert ds[2] == ("png", -2)
    ds = datasets.DatasetFolder(tmp_path, loader=open, extensions=".txt", allow_empty=True)
    assert len(ds) == 1 and ds.extensions == ".txt"


def test_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        datasets.ImageFolder(tmp_path)
    make_image_folder(tmp_path)
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes cat, dog"):
        datasets.DatasetFolder(tmp_path, loader=open, extensions=(".txt",))
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        datasets.DatasetFolder(tmp_path, loader=open)
    (tmp_path / "cat" / "broken.png").write_bytes(b"garbage")
    ds = datasets.ImageFolder(tmp_path)
    with pytest.raises(Exception, match="broken.png"):
        ds[ds.samples.index((str(tmp_path / "cat" / "broken.png"), 0))]


# -- FakeData --------------------------------------------------------------
def test_fake_data_is_deterministic_per_index():
    ds = datasets.FakeData(size=5, image_size=(1, 6, 4), num_classes=3, transform=transforms.PILToTensor())
    state = ember.get_rng_state()
    x, y = ds[2]
    assert ember.equal(ember.get_rng_state(), state)
    assert x.shape == (1, 6, 4) and x.dtype == ember.uint8 and 0 <= y < 3
    x2, y2 = ds[2]
    assert ember.equal(x, x2) and y == y2
    assert not ember.equal(ds[1][0], x)
    other = datasets.FakeData(size=5, image_size=(1, 6, 4), num_classes=3, random_offset=7,
                              transform=transforms.PILToTensor())
    assert not ember.equal(other[2][0], x)
    assert len(ds) == 5 and ds.classes == ["0", "1", "2"]
    with pytest.raises(IndexError):
        ds[5]
    with pytest.raises(ValueError, match="image_size"):
        datasets.FakeData(image_size=(2, 4, 4))
