"""MobileNetV2 (Sandler et al., 2018), laid out as torchvision's."""
import ember
import ember.nn as nn
import ember.nn.functional as F

from ._weights import load_weights
from ._weights_enum import with_weights

__all__ = ["MobileNetV2", "InvertedResidual", "Conv2dNormActivation", "mobilenet_v2"]


def _make_divisible(v, divisor, min_value=None):
    """Round a channel count to the nearest multiple of ``divisor`` without
    going more than 10% below it."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    """Convolution ("0"), norm ("1"), activation ("2"), with "same" padding
    for odd kernels; the convolution has a bias only without a norm."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(inplace=inplace))
        super().__init__(*layers)
        self.out_channels = out_channels


class InvertedResidual(nn.Module):
    """1×1 expansion (skipped when ``expand_ratio`` is 1), 3×3 depthwise
    (strided), linear 1×1 projection; a shortcut when shapes allow."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                 norm_layer=norm_layer, activation_layer=nn.ReLU6),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            norm_layer(oup),
        ]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


# t (expansion), c (channels), n (blocks), s (stride of the first block)
_DEFAULT_SETTING = [
    [1, 16, 1, 1],
    [6, 24, 2, 2],
    [6, 32, 3, 2],
    [6, 64, 4, 2],
    [6, 96, 3, 1],
    [6, 160, 3, 2],
    [6, 320, 1, 1],
]


class MobileNetV2(nn.Module):
    """A 3×3/2 stem, 17 inverted residual blocks, a 1×1 convolution to 1280
    channels, global average pooling, dropout and a linear classifier.
    ``width_mult`` scales every width (rounded to ``round_nearest``)."""

    def __init__(self, num_classes=1000, width_mult=1.0, inverted_residual_setting=None,
                 round_nearest=8, block=None, norm_layer=None, dropout=0.2):
        super().__init__()
        block = InvertedResidual if block is None else block
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        input_channel = 32
        last_channel = 1280
        setting = inverted_residual_setting
        if setting is None:
            setting = _DEFAULT_SETTING
        if len(setting) == 0 or any(len(row) != 4 for row in setting):
            raise ValueError("inverted_residual_setting should be non-empty and a list of "
                             f"4-element lists, got {setting}")
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                         activation_layer=nn.ReLU6)]
        for t, c, n, s in setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1,
                                      expand_ratio=t, norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout),
                                        nn.Linear(self.last_channel, num_classes))

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, (1, 1))
        x = ember.flatten(x, 1)
        return self.classifier(x)


@with_weights
def mobilenet_v2(*, weights=None, progress=True, **kwargs):
    """MobileNetV2 (width 1.0 unless ``width_mult`` says otherwise)."""
    return load_weights(MobileNetV2(**kwargs), weights)
