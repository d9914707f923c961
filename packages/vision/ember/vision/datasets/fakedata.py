"""Random images for trying a pipeline without data."""
import numpy as np
from PIL import Image

from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """``size`` random images of shape ``image_size`` (C, H, W) with random
    labels in [0, ``num_classes``).  Item ``i`` is the same every time
    (drawn from a generator seeded with ``i + random_offset``) and drawing it
    leaves every global generator alone."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        image_size = tuple(int(s) for s in image_size)
        if len(image_size) != 3 or image_size[0] not in (1, 3) or min(image_size) <= 0:
            raise ValueError(f"image_size should be (C, H, W) with C 1 or 3, got {image_size}")
        if size < 0 or num_classes < 1:
            raise ValueError(f"size must be >= 0 and num_classes >= 1, got {size} and {num_classes}")
        self.size = int(size)
        self.image_size = image_size
        self.num_classes = int(num_classes)
        self.random_offset = int(random_offset)
        self.classes = [str(k) for k in range(self.num_classes)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if not -self.size <= index < self.size:
            raise IndexError(f"{type(self).__name__} index {index} out of range for size {self.size}")
        index %= self.size
        rng = np.random.default_rng(index + self.random_offset)
        c, h, w = self.image_size
        pixels = rng.integers(0, 256, size=(h, w, c), dtype=np.uint8)
        img = Image.fromarray(pixels[:, :, 0] if c == 1 else pixels)
        target = int(rng.integers(0, self.num_classes))
        return self._apply(img, target)
