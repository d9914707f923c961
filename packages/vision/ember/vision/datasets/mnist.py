"""MNIST and its relatives, stored as IDX files (plain or gzipped).

Files are looked for in ``root/<ClassName>/raw/`` (where ``download=True``
puts them) and then directly in ``root``; each may be plain or ``.gz``.
"""
import gzip
import os
import string
import zlib

import numpy as np
from PIL import Image

import ember
from .utils import download_from_mirrors, extract_archive
from .vision import VisionDataset, resolve_raw_file

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "read_idx"]

# IDX type codes (third byte of the magic number) -> big-endian NumPy dtypes
_IDX_DTYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
               0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def _read_bytes(path):
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError, zlib.error) as e:
        raise RuntimeError(f"{path}: cannot read the file ({e})") from None


def read_idx(path):
    """Read an IDX file (plain or ``.gz``) into a NumPy array in native byte order."""
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise RuntimeError(f"{path}: not an IDX file (bad magic number "
                           f"{raw[:4].hex() or 'in an empty file'})")
    dtype, ndim = _IDX_DTYPES[raw[2]], raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise RuntimeError(f"{path}: truncated IDX header")
    shape = tuple(int(d) for d in np.frombuffer(raw, ">u4", ndim, 4))
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    found = len(raw) - header
    if found != expected:
        kind = "truncated" if found < expected else "longer than its header says"
        raise RuntimeError(f"{path}: IDX data is {kind}: shape {shape} needs "
                           f"{expected} bytes, found {found}")
    return np.frombuffer(raw, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


class MNIST(VisionDataset):
    """The MNIST handwritten digits: 28×28 grey images, 60 000 for training
    and 10 000 for testing.  Items are ``(PIL Image 'L', int label)``.

    ``mirrors`` (a class or instance attribute) lists the base URLs that
    ``download=True`` tries in turn."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
               "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        if self.root is None:
            raise TypeError(f"{type(self).__name__}() needs a root folder")
        self.train = train
        if download:
            self.download()
        images, labels = self._file_names()
        self._images = self._load(images, "images", ndim=3)
        self._labels = self._load(labels, "labels", ndim=1).astype(np.int64)
        if len(self._images) != len(self._labels):
            raise RuntimeError(f"{self._images_path} holds {len(self._images)} images but "
                               f"{self._labels_path} holds {len(self._labels)} labels")
        if len(self._labels) and (self._labels.min() < 0 or self._labels.max() >= len(self.classes)):
            raise RuntimeError(f"{self._labels_path}: labels must lie in [0, {len(self.classes) - 1}],"
                               f" found {self._labels.min()}..{self._labels.max()}")
        self.data = ember.from_numpy(self._images)
        self.targets = ember.from_numpy(self._labels)

    # -- files --------------------------------------------------------------
    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    def _file_names(self):
        prefix = "train" if self.train else "t10k"
        return f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"

    def _find(self, name):
        return resolve_raw_file([self.raw_folder, self.root], name,
                                f"{type(self).__name__} file {name}")

    def _load(self, name, what, ndim):
        path = self._find(name)
        array = read_idx(path)
        if array.ndim != ndim:
            raise RuntimeError(f"{path}: expected {what} with {ndim} dimension(s), "
                               f"found shape {array.shape}")
        setattr(self, f"_{what}_path", path)
        return array

    def _check_exists(self):
        try:
            for name in self._file_names():
                self._find(name)
        except RuntimeError:
            return False
        return True

    def download(self):
        """Fetch the gzipped IDX files into ``raw_folder`` (MD5-checked)."""
        if self._check_exists():
            return
        for filename, md5 in self.resources:
            download_from_mirrors(self.mirrors, filename, self.raw_folder, md5)

    # -- items --------------------------------------------------------------
    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __len__(self):
        return len(self._images)

    def __getitem__(self, index):
        img = Image.fromarray(self._images[index])
        return self._apply(img, int(self._labels[index]))

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 28×28 grey images of 10 kinds of clothing."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST: 28×28 grey images of 10 cursive Japanese characters."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


_DIGITS = list(string.digits)
_UPPER = list(string.ascii_uppercase)
_LOWER = list(string.ascii_lowercase)
# bymerge/balanced merge the lowercase letters that look like their capitals
_MERGED = set("cijklmopsuvwxyz")


class EMNIST(MNIST):
    """Extended MNIST (NIST Special Database 19 in MNIST's format).

    ``split`` is one of ``SPLITS``; files are ``emnist-<split>-<train|test>-
    <images-idx3|labels-idx1>-ubyte`` (plain or ``.gz``).  As with the
    original files, images are stored transposed."""

    mirrors = ["https://biometrics.nist.gov/cs_links/EMNIST/"]
    archive = ("gzip.zip", "58c8d27c78d21e728a6bc7b3cc06412e")
    SPLITS = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    classes_split_dict = {
        "byclass": _DIGITS + _UPPER + _LOWER,
        "bymerge": _DIGITS + _UPPER + [c for c in _LOWER if c not in _MERGED],
        "balanced": _DIGITS + _UPPER + [c for c in _LOWER if c not in _MERGED],
        "letters": ["N/A"] + _UPPER,
        "digits": _DIGITS,
        "mnist": _DIGITS,
    }

    def __init__(self, root, split, **kwargs):
        if split not in self.SPLITS:
            raise ValueError(f"Unknown value '{split}' for argument split. "
                             f"Valid values are {{{', '.join(map(repr, self.SPLITS))}}}.")
        self.split = split
        self.classes = self.classes_split_dict[split]
        super().__init__(root, **kwargs)

    def _file_names(self):
        part = "train" if self.train else "test"
        stem = f"emnist-{self.split}-{part}"
        return f"{stem}-images-idx3-ubyte", f"{stem}-labels-idx1-ubyte"

    def download(self):
        """Fetch NIST's zip of all splits and unpack its IDX files into ``raw_folder``."""
        if self._check_exists():
            return
        filename, md5 = self.archive
        path = download_from_mirrors(self.mirrors, filename, self.raw_folder, md5)
        extract_archive(path, self.raw_folder)
        # the archive keeps its files in a gzip/ folder: move them up
        inner = os.path.join(self.raw_folder, "gzip")
        if os.path.isdir(inner):
            for name in os.listdir(inner):
                os.replace(os.path.join(inner, name), os.path.join(self.raw_folder, name))
            os.rmdir(inner)
        os.remove(path)

    def extra_repr(self):
        return f"Split: {self.split} ({'train' if self.train else 'test'})"
