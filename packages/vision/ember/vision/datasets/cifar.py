"""CIFAR-10 and CIFAR-100 in their "python version" pickle format.

Each batch file is a pickled dict with ``data`` (N×3072 uint8: 1024 red,
1024 green, then 1024 blue values, rows first) and ``labels`` (CIFAR-10) or
``fine_labels``/``coarse_labels`` (CIFAR-100).  The pickles are read with an
unpickler that only accepts NumPy arrays and plain containers, so a hostile
file cannot run code.
"""
import os
import pickle

import numpy as np
from PIL import Image

from .utils import download_and_extract_archive
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100"]

# the globals a pickled NumPy array refers to (old and new NumPy module names)
_ALLOWED_GLOBALS = {
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
    ("_codecs", "encode"),
}


class _ArrayUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refuses the global '{module}.{name}' "
                                     f"(only NumPy arrays are expected)")


def load_batch(path):
    """Read one pickled batch file into a dict with str keys."""
    try:
        with open(path, "rb") as f:
            # the original files were written by Python 2: bytes strings are latin-1
            entry = _ArrayUnpickler(f, encoding="latin1").load()
    except FileNotFoundError:
        raise RuntimeError(f"CIFAR file not found: expected {path}. "
                           f"Use download=True to fetch it.") from None
    except Exception as e:          # any malformed pickle: say which file
        raise RuntimeError(f"{path}: not a readable CIFAR pickle ({type(e).__name__}: {e})") from None
    if not isinstance(entry, dict):
        raise RuntimeError(f"{path}: not a CIFAR pickle (holds a {type(entry).__name__}, not a dict)")
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in entry.items()}


def _field(entry, key, path):
    if key not in entry:
        raise RuntimeError(f"{path}: CIFAR pickle has no '{key}' entry (found {sorted(entry)})")
    return entry[key]


class CIFAR10(VisionDataset):
    """CIFAR-10: 32×32 colour images in 10 classes, 50 000 for training and
    10 000 for testing, from ``root/cifar-10-batches-py/``.  Items are
    ``(PIL Image 'RGB', int label)``; ``data`` is a uint8 NumPy array
    N×32×32×3 and ``targets`` a list of ints.

    ``mirrors`` lists the base URLs that ``download=True`` tries."""

    base_folder = "cifar-10-batches-py"
    mirrors = ["https://www.cs.toronto.edu/~kriz/"]
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    labels_key = "labels"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        if self.root is None:
            raise TypeError(f"{type(self).__name__}() needs a root folder")
        self.train = train
        if download:
            self.download()
        self.classes = self._load_meta()
        chunks, targets = [], []
        for name in (self.train_list if train else self.test_list):
            path = os.path.join(self.root, self.base_folder, name)
            data, labels = self._read(path)
            chunks.append(data)
            targets.extend(labels)
        self.data = np.concatenate(chunks).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()
        self.targets = targets

    def _read(self, path):
        entry = load_batch(path)
        data = np.asarray(_field(entry, "data", path))
        labels = [int(v) for v in np.asarray(_field(entry, self.labels_key, path)).reshape(-1)]
        if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
            raise RuntimeError(f"{path}: 'data' should be uint8 of shape (N, 3072), "
                               f"found {data.dtype} {data.shape}")
        if len(labels) != len(data):
            raise RuntimeError(f"{path}: {len(data)} images but {len(labels)} labels")
        if labels and not 0 <= min(labels) <= max(labels) < len(self.classes):
            raise RuntimeError(f"{path}: labels must lie in [0, {len(self.classes) - 1}], "
                               f"found {min(labels)}..{max(labels)}")
        return data, labels

    def _load_meta(self):
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        names = _field(load_batch(path), self.meta["key"], path)
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, (str, bytes)) for n in names):
            raise RuntimeError(f"{path}: '{self.meta['key']}' should be a list of names")
        return [n.decode("latin1") if isinstance(n, bytes) else n for n in names]

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def _check_exists(self):
        folder = os.path.join(self.root, self.base_folder)
        names = self.train_list + self.test_list + [self.meta["filename"]]
        return all(os.path.isfile(os.path.join(folder, n)) for n in names)

    def download(self):
        """Fetch and unpack the archive (MD5-checked) unless the files are there."""
        if self._check_exists():
            return
        download_and_extract_archive(self.mirrors, self.filename, self.root, md5=self.tgz_md5)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img = Image.fromarray(self.data[index])
        return self._apply(img, self.targets[index])

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: as CIFAR-10 with 100 classes (the fine labels), from
    ``root/cifar-100-python/``."""

    base_folder = "cifar-100-python"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
    labels_key = "fine_labels"
