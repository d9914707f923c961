"""VGG 11/13/16/19 (configurations A, B, D, E of Simonyan & Zisserman),
with and without batch normalisation, laid out as torchvision's."""
import ember
import ember.nn as nn

from ._weights import load_weights
from ._weights_enum import with_weights

__all__ = ["VGG", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn",
           "vgg19", "vgg19_bn"]

# numbers are 3×3 convolution widths, "M" a 2×2 max pooling
_CONFIGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
          512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}


def make_layers(config, batch_norm=False):
    layers = []
    in_channels = 3
    for v in config:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    """``features`` (from :func:`make_layers`), a 7×7 adaptive average pool
    and three fully connected layers.  Inputs of at least 32×32."""

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = ember.flatten(x, 1)
        return self.classifier(x)


def _vgg(config, batch_norm, weights, kwargs):
    if weights is not None:
        kwargs.setdefault("init_weights", False)   # the file overwrites everything
    model = VGG(make_layers(_CONFIGS[config], batch_norm=batch_norm), **kwargs)
    return load_weights(model, weights)


@with_weights
def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11 (configuration A)."""
    return _vgg("A", False, weights, kwargs)


@with_weights
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 with batch normalisation."""
    return _vgg("A", True, weights, kwargs)


@with_weights
def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13 (configuration B)."""
    return _vgg("B", False, weights, kwargs)


@with_weights
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 with batch normalisation."""
    return _vgg("B", True, weights, kwargs)


@with_weights
def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16 (configuration D)."""
    return _vgg("D", False, weights, kwargs)


@with_weights
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 with batch normalisation."""
    return _vgg("D", True, weights, kwargs)


@with_weights
def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19 (configuration E)."""
    return _vgg("E", False, weights, kwargs)


@with_weights
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 with batch normalisation."""
    return _vgg("E", True, weights, kwargs)
