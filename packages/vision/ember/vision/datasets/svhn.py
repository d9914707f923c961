"""SVHN (Street View House Numbers), the cropped 32×32 digits, from the
MATLAB files ``<split>_32x32.mat`` read through SciPy."""
import os

import numpy as np
from PIL import Image

from .utils import download_from_mirrors
from .vision import VisionDataset

__all__ = ["SVHN"]


def _loadmat(path):
    try:
        from scipy import io as sio
    except ImportError:
        raise ImportError("SVHN reads MATLAB .mat files with SciPy, which is not installed: "
                          "pip install scipy") from None
    try:
        return sio.loadmat(path)
    except Exception as e:          # scipy raises several kinds for damaged files
        raise RuntimeError(f"{path}: not a readable MATLAB file ({type(e).__name__}: {e})") from None


class SVHN(VisionDataset):
    """SVHN digits from ``root/<split>_32x32.mat`` (split 'train', 'test' or
    'extra').  Items are ``(PIL Image 'RGB' 32×32, int label)``; the files'
    label 10 (digit zero) becomes 0.  ``data`` is a uint8 NumPy array
    N×3×32×32 and ``labels`` an int64 array.  Needs SciPy."""

    mirrors = ["http://ufldl.stanford.edu/housenumbers/"]
    split_list = {
        "train": ("train_32x32.mat", "e26dedcc434d2e4c54c9b2d4a06d8373"),
        "test": ("test_32x32.mat", "eb5a983be6a315427106f1b164d9cef3"),
        "extra": ("extra_32x32.mat", "a93ce644f1a588dc4d68dda5feec44a7"),
    }
    classes = [str(d) for d in range(10)]

    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        if split not in self.split_list:
            raise ValueError(f"Unknown value '{split}' for argument split. "
                             f"Valid values are {{{', '.join(map(repr, self.split_list))}}}.")
        if self.root is None:
            raise TypeError("SVHN() needs a root folder")
        self.split = split
        self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        path = os.path.join(self.root, self.filename)
        if not os.path.isfile(path):
            raise RuntimeError(f"SVHN file not found: expected {path}. Use download=True to fetch it.")
        mat = _loadmat(path)
        if "X" not in mat or "y" not in mat:
            raise RuntimeError(f"{path}: an SVHN file holds 'X' and 'y', found "
                               f"{sorted(k for k in mat if not k.startswith('__'))}")
        images, labels = np.asarray(mat["X"]), np.asarray(mat["y"]).astype(np.int64).reshape(-1)
        if images.ndim != 4 or images.shape[:3] != (32, 32, 3) or images.dtype != np.uint8:
            raise RuntimeError(f"{path}: 'X' should be uint8 of shape (32, 32, 3, N), "
                               f"found {images.dtype} {images.shape}")
        if images.shape[3] != len(labels):
            raise RuntimeError(f"{path}: {images.shape[3]} images but {len(labels)} labels")
        if len(labels) and (labels.min() < 0 or labels.max() > 10):
            raise RuntimeError(f"{path}: labels must lie in [0, 10], found {labels.min()}..{labels.max()}")
        np.place(labels, labels == 10, 0)
        self.data = np.ascontiguousarray(images.transpose(3, 2, 0, 1))
        self.labels = labels

    def download(self):
        download_from_mirrors(self.mirrors, self.filename, self.root, self.file_md5)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img = Image.fromarray(np.ascontiguousarray(self.data[index].transpose(1, 2, 0)))
        return self._apply(img, int(self.labels[index]))

    def extra_repr(self):
        return f"Split: {self.split}"
