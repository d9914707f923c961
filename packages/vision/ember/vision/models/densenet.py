"""DenseNet-121 (Huang et al., 2016), laid out as torchvision's."""
import re
from collections import OrderedDict

import ember
import ember.nn as nn
import ember.nn.functional as F

from ._weights import load_weights
from ._weights_enum import with_weights

__all__ = ["DenseNet", "densenet121"]


class _DenseLayer(nn.Module):
    """BN-ReLU-1×1 conv to ``bn_size·growth_rate`` channels, then BN-ReLU-3×3
    conv to ``growth_rate`` new feature maps."""

    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1,
                               stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1,
                               padding=1, bias=False)
        self.drop_rate = float(drop_rate)

    def forward(self, features):
        # a layer sees every earlier output of its block, concatenated
        x = ember.cat(features, 1) if isinstance(features, (list, tuple)) else features
        x = self.conv1(self.relu1(self.norm1(x)))
        x = self.conv2(self.relu2(self.norm2(x)))
        if self.drop_rate > 0:
            x = F.dropout(x, p=self.drop_rate, training=self.training)
        return x


class _DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate):
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate=growth_rate,
                                bn_size=bn_size, drop_rate=drop_rate)
            self.add_module(f"denselayer{i + 1}", layer)

    def forward(self, init_features):
        features = [init_features]
        for layer in self.values():
            features.append(layer(features))
        return ember.cat(features, 1)


class _Transition(nn.Sequential):
    """BN-ReLU-1×1 conv halving the channels, then 2×2 average pooling."""

    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1,
                              stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """A 7×7/2 stem with 3×3/2 max pooling, dense blocks of ``block_config``
    layers joined by transitions, a final norm, global average pooling and a
    linear classifier.  Inputs of at least 29×29 (224×224 for the published
    weights)."""

    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64,
                 bn_size=4, drop_rate=0, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3,
                                bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(num_layers, num_features, bn_size, growth_rate, drop_rate)
            self.features.add_module(f"denseblock{i + 1}", block)
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f"transition{i + 1}",
                                         _Transition(num_features, num_features // 2))
                num_features //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = F.relu(self.features(x))
        x = F.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(ember.flatten(x, 1))


# the published DenseNet files name a dense layer's members "norm.1", "conv.2", …
_OLD_KEY = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\."
                      r"(?:weight|bias|running_mean|running_var))$")


def _rename_old_keys(state):
    renamed = OrderedDict()
    for key, value in state.items():
        match = _OLD_KEY.match(key)
        renamed[match.group(1) + match.group(2) if match else key] = value
    return renamed


@with_weights
def densenet121(*, weights=None, progress=True, **kwargs):
    """DenseNet-121: growth rate 32, blocks of (6, 12, 24, 16) layers.  A
    weights file in the older "norm.1"-style key layout is renamed on load."""
    model = DenseNet(32, (6, 12, 24, 16), 64, **kwargs)
    return load_weights(model, weights, remap=_rename_old_keys)
