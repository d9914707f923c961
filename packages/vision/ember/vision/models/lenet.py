"""LeNet-5-style convolutional network (not in torchvision; Ember's small
default model for the training command)."""
import ember
import ember.nn as nn
import ember.nn.functional as F

from ._weights import load_weights

__all__ = ["LeNet", "lenet"]


class LeNet(nn.Module):
    """LeNet-5 with ReLU and max pooling:
    conv(5×5, 6) → pool → conv(5×5, 16) → pool → fc 120 → fc 84 → fc classes.

    ``image_size`` is the side of the square input (28 for MNIST, the
    default; 8 for the 8×8 Digits; 32 for CIFAR-10) and ``in_channels`` its
    channel count.  The first convolution pads by 2, as LeNet-5 on 28×28
    MNIST does, so it keeps the size.  On inputs smaller than 12×12 the
    second convolution pads by 2 as well, because a valid 5×5 convolution
    would not fit after the first pooling (8×8 Digits: 8 → 4 → 2, so fc1
    sees 16·2·2 features).  Larger inputs use the classic valid convolution
    (28×28: 28 → 14 → 10 → 5, fc1 sees 16·5·5).
    """

    def __init__(self, num_classes=10, in_channels=1, image_size=28):
        super().__init__()
        for name, value in (("num_classes", num_classes), ("in_channels", in_channels),
                            ("image_size", image_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LeNet: {name} must be a positive int, got {value!r}")
        if image_size < 4:
            raise ValueError(f"LeNet: image_size must be at least 4, got {image_size}")
        self.image_size = image_size
        conv2_padding = 2 if image_size < 12 else 0
        self.conv1 = nn.Conv2d(in_channels, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5, padding=conv2_padding)
        side = (image_size // 2 + 2 * conv2_padding - 4) // 2
        self.fc1 = nn.Linear(16 * side * side, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = ember.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def lenet(*, weights=None, progress=True, **kwargs):
    """LeNet-5-style CNN; ``kwargs`` go to :class:`LeNet` (``num_classes``,
    ``in_channels``, ``image_size``)."""
    return load_weights(LeNet(**kwargs), weights)
