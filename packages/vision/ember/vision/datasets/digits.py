"""The 8×8 handwritten digits shipped with the package (no download).

``data/digits.csv.gz`` is the UCI "Optical Recognition of Handwritten
Digits" test set as scikit-learn distributes it: 1797 rows of 64 pixel
counts (0–16) followed by the label.  See the package README for origin and
licence.
"""
import functools
import gzip
import os

import numpy as np
from PIL import Image

import ember
from .vision import VisionDataset

__all__ = ["Digits"]

_DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "digits.csv.gz")
_N_ITEMS = 1797
_N_TEST = 360
# the split is a permutation drawn once from this seed; never change it, or
# results reported on the test set stop being comparable
_SPLIT_SEED = 0


@functools.lru_cache(maxsize=1)
def _load_all():
    """(counts N×8×8, labels N) of the whole table, parsed once per process
    (callers index into them, which copies)."""
    try:
        with gzip.open(_DATA_FILE, "rt") as f:
            table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    except (OSError, EOFError, ValueError) as e:
        raise RuntimeError(f"{_DATA_FILE}: cannot read the digits table ({e}); "
                           f"reinstall ember-vision") from None
    if table.shape != (_N_ITEMS, 65):
        raise RuntimeError(f"{_DATA_FILE}: expected {_N_ITEMS} rows of 65 values, "
                           f"found shape {table.shape}; reinstall ember-vision")
    return table[:, :64].reshape(-1, 8, 8), table[:, 64]


def split_indices():
    """(train, test) row indices of the fixed split: 1437 and 360 rows."""
    order = np.random.RandomState(_SPLIT_SEED).permutation(_N_ITEMS)
    return np.sort(order[_N_TEST:]), np.sort(order[:_N_TEST])


class Digits(VisionDataset):
    """8×8 grey images of handwritten digits, 1437 for training and 360 for
    testing, shipped inside the package.

    Items are ``(PIL Image 'L' 8×8, int label)`` with pixel ``round(v*255/16)``
    of the original count ``v`` in 0..16, like MNIST's so the same
    transforms apply.  ``data`` is a uint8 tensor N×8×8 (0–255), ``targets``
    an int64 tensor.  The split is a fixed permutation (NumPy
    ``RandomState(0).permutation(1797)``: its first 360 rows are the test
    set), each side kept in file order.  ``root`` is accepted for the same
    signature as the other datasets and not used."""

    classes = [str(d) for d in range(10)]

    def __init__(self, root=None, train=True, transform=None, target_transform=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        counts, labels = _load_all()
        rows = split_indices()[0 if train else 1]
        pixels = np.rint(counts[rows] * (255.0 / 16.0)).astype(np.uint8)
        self._images = np.ascontiguousarray(pixels)
        self._labels = np.ascontiguousarray(labels[rows])
        self.data = ember.from_numpy(self._images)
        self.targets = ember.from_numpy(self._labels)

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
