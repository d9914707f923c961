"""ResNet-18: forward and forward+backward at batch 8,
3x224x224, ember.vision.models.resnet18 against the same network in
torch.nn (torchvision's layout, built here so that torchvision is not
needed), both holding the same weights.  Training mode (batch statistics),
as in a training step; the forward rows compare the outputs.  Then each
distinct convolution of the network alone, forward+backward at batch 8
(no bias, as in the network; the stem's input needs no gradient).
"""
from __future__ import annotations

import numpy as np

from timing import Stmt

from . import Case, Unsupported
from .nn import _front

FAMILY = "vision"


def torch_resnet18(nn, num_classes=1000):
    """ResNet-18 with torchvision's module names, from torch.nn parts."""
    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + idt)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            chans = [64, 128, 256, 512]
            for i, c in enumerate(chans):
                cin = 64 if i == 0 else chans[i - 1]
                setattr(self, f"layer{i + 1}",
                        nn.Sequential(Block(cin, c, 1 if i == 0 else 2), Block(c, c, 1)))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet()


def _weights(seed):
    """The same weights for both libraries: state_dict entries by key."""
    import ember.vision.models as models
    model = models.resnet18()
    g = np.random.default_rng(seed)
    out = {}
    for k, v in model.state_dict().items():
        if v.is_floating_point() and not k.endswith(("running_var", "running_mean")):
            out[k] = (g.standard_normal(tuple(v.shape)) * 0.05).astype(np.float32)
        else:
            out[k] = v.numpy().copy()
    return out


def _model(lib, mod, batch):
    if lib == "numpy":
        raise Unsupported("NumPy has no nn")
    if lib == "ember":
        try:
            import ember
            import ember.vision.models as models
        except ImportError as e:
            raise Unsupported(f"ember.vision is not installed ({e})")
        ember.set_num_threads(mod.get_num_threads())
        m, model = ember, models.resnet18()
    else:
        m, model = mod, torch_resnet18(mod.nn)
    try:
        weights = _weights(0)
    except ImportError as e:
        raise Unsupported(f"ember.vision is not installed ({e})")
    model.load_state_dict({k: m.from_numpy(v) for k, v in weights.items()})
    model.train()
    x = np.random.default_rng(1).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    return m, model, m.from_numpy(x)


def _forward(batch):
    def make(lib, mod):
        m, model, x = _model(lib, mod, batch)
        return Stmt("with m.no_grad(): model(x)", {"m": m, "model": model, "x": x},
                    result="model(x).detach()")
    return make


def _forward_backward(batch):
    def make(lib, mod):
        m, model, x = _model(lib, mod, batch)
        return Stmt("model(x).sum().backward()", {"model": model, "x": x})
    return make


# ResNet-18's convolutions: (in channels, side, out channels, kernel, stride)
RESNET_CONVS = [(3, 224, 64, 7, 2),
                (64, 56, 64, 3, 1), (64, 56, 128, 3, 2), (64, 56, 128, 1, 2),
                (128, 28, 128, 3, 1), (128, 28, 256, 3, 2), (128, 28, 256, 1, 2),
                (256, 14, 256, 3, 1), (256, 14, 512, 3, 2), (256, 14, 512, 1, 2),
                (512, 7, 512, 3, 1)]


def _conv(n, c, hw, o, k, stride):
    def make(lib, mod):
        m, _, F = _front(lib, mod)
        g = np.random.default_rng(2)
        x = m.from_numpy(g.standard_normal((n, c, hw, hw)).astype(np.float32))
        w = m.from_numpy((g.standard_normal((o, c, k, k)) / np.sqrt(c * k * k))
                         .astype(np.float32))
        x.requires_grad_(c != 3)
        w.requires_grad_(True)
        call = f"F.conv2d(x, w, None, {stride}, {k // 2})"
        return Stmt(f"{call}.sum().backward()", {"F": F, "x": x, "w": w},
                    result=f"{call}.detach()")
    return make


def cases(scale: str = "full") -> list[Case]:
    batch = 1 if scale == "smoke" else 8
    convs = RESNET_CONVS if scale != "smoke" else [(3, 16, 4, 7, 2), (4, 8, 4, 3, 1)]
    return [
        Case(FAMILY, f"ResNet-18 forward (batch {batch}, 3x224x224, train mode)", "ms/op",
             _forward(batch), rtol=1e-3, atol=1e-3),
        Case(FAMILY, f"ResNet-18 forward+backward (batch {batch}, 3x224x224)", "ms/op",
             _forward_backward(batch)),
    ] + [Case(FAMILY, f"ResNet-18 conv fwd+bwd {batch}x{c}x{hw}x{hw} * {o}x{c}x{k}x{k} "
              f"stride {stride}", "ms/op", _conv(batch, c, hw, o, k, stride),
              rtol=1e-4, atol=1e-3)
         for c, hw, o, k, stride in convs]
