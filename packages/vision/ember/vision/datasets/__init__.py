"""ember.vision.datasets: image datasets with torchvision's names, layouts
and semantics."""
from .digits import Digits
from .mnist import EMNIST, KMNIST, MNIST, FashionMNIST
from .vision import StandardTransform, VisionDataset

__all__ = ["VisionDataset", "StandardTransform", "Digits", "MNIST", "FashionMNIST",
           "KMNIST", "EMNIST"]
