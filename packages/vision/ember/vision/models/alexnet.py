"""AlexNet, in the one-GPU layout that torchvision uses (64-192-384-256-256
filters), with the same module names."""
import ember
import ember.nn as nn

from ._weights import load_weights
from ._weights_enum import with_weights

__all__ = ["AlexNet", "alexnet"]


class AlexNet(nn.Module):
    """Five convolutions and three fully connected layers; inputs of at
    least 63×63 (224×224 for the published weights).  PyTorch's default
    layer initialisation, as torchvision."""

    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(256 * 6 * 6, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = ember.flatten(x, 1)
        return self.classifier(x)


@with_weights
def alexnet(*, weights=None, progress=True, **kwargs):
    """AlexNet (Krizhevsky et al., 2012) as in torchvision; ``weights``:
    None or a local state_dict file."""
    return load_weights(AlexNet(**kwargs), weights)
