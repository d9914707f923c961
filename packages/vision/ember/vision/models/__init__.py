"""ember.vision.models: image classification networks with torchvision's
names, module layout and initialisation, so that a torchvision state_dict
loads into the matching Ember model one key to one key.

Every constructor takes ``weights=None`` (random initialisation), the path
of a local state_dict file (``ember.save`` or ``torch.save``) or one of
torchvision's weights enum members (``ResNet18_Weights.DEFAULT``, whose file
is looked for in the local caches), plus the model's own options such as
``num_classes``; ``progress`` is accepted for torchvision compatibility and
unused (nothing is downloaded).
"""
from .alexnet import AlexNet, alexnet
from .densenet import DenseNet, densenet121
from .lenet import LeNet, lenet
from .mobilenetv2 import MobileNetV2, mobilenet_v2
from .resnet import ResNet, resnet18, resnet34, resnet50, resnet101, resnet152
from .squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1
from .vgg import (VGG, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19,
                  vgg19_bn)
from ._weights_enum import ENUMS as _ENUMS
from ._weights_enum import Weights, WeightsEnum, get_model_weights, get_weight

globals().update(_ENUMS)   # ResNet18_Weights, VGG16_Weights, ...

_BUILDERS = {f.__name__: f for f in (
    lenet, alexnet, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn,
    resnet18, resnet34, resnet50, resnet101, resnet152, squeezenet1_0, squeezenet1_1,
    mobilenet_v2, densenet121)}


def list_models():
    """The names that :func:`get_model` accepts, sorted."""
    return sorted(_BUILDERS)


def get_model(name, **config):
    """Build the model called ``name`` (lower case, as ``list_models()``
    returns) with ``config`` passed to its constructor."""
    try:
        builder = _BUILDERS[name.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"Unknown model {name!r}; available: {', '.join(list_models())}") \
            from None
    return builder(**config)


__all__ = ["AlexNet", "DenseNet", "LeNet", "MobileNetV2", "ResNet", "SqueezeNet", "VGG",
           "alexnet", "densenet121", "lenet", "mobilenet_v2", "resnet18", "resnet34",
           "resnet50", "resnet101", "resnet152", "squeezenet1_0", "squeezenet1_1", "vgg11",
           "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
           "list_models", "get_model", "get_model_weights", "get_weight", "Weights",
           "WeightsEnum"] + sorted(_ENUMS)
