"""The evaluation preset that the pretrained classification weights name
(``weights.transforms()``): resize the shorter side, crop the centre,
scale to floats in [0, 1], normalise."""
from . import functional as F
from .functional import InterpolationMode

__all__ = ["ImageClassification"]


class ImageClassification:
    """PIL image or (..., C, H, W) uint8/float tensor -> float tensor."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406),
                 std=(0.229, 0.224, 0.225), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def __call__(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if F._is_pil(img):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        lines = [f"crop_size={self.crop_size}", f"resize_size={self.resize_size}",
                 f"mean={self.mean}", f"std={self.std}", f"interpolation={self.interpolation}"]
        return "ImageClassification(\n" + "".join(f"    {s}\n" for s in lines) + ")"

    def describe(self):
        return (f"Accepts PIL images and (B, C, H, W) tensors; resized to {self.resize_size} "
                f"with {self.interpolation} interpolation, centre-cropped to {self.crop_size}, "
                f"scaled to [0.0, 1.0] and normalised with mean={self.mean}, std={self.std}.")
