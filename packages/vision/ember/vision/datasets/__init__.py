"""ember.vision.datasets: image datasets with torchvision's names, layouts
and semantics."""
from .cifar import CIFAR10, CIFAR100
from .digits import Digits
from .fakedata import FakeData
from .folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder
from .mnist import EMNIST, KMNIST, MNIST, FashionMNIST
from .svhn import SVHN
from .vision import StandardTransform, VisionDataset

__all__ = ["VisionDataset", "StandardTransform", "Digits", "MNIST", "FashionMNIST", "KMNIST",
           "EMNIST", "CIFAR10", "CIFAR100", "SVHN", "DatasetFolder", "ImageFolder",
           "IMG_EXTENSIONS", "FakeData"]
