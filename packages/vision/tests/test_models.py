"""ember.vision.models: shapes, parameter counts (torchvision's published
figures), initialisation, weights files, and — where PyTorch is installed —
outputs against small torch.nn reference implementations of ResNet-18 and
MobileNetV2 sharing the same state_dict."""
import functools
import math
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.vision import models
from ember.vision.models._weights import load_weights

# torchvision's published parameter counts
PARAMETER_COUNTS = {
    "alexnet": 61_100_840,
    "vgg11": 132_863_336, "vgg11_bn": 132_868_840,
    "vgg13": 133_047_848, "vgg13_bn": 133_053_736,
    "vgg16": 138_357_544, "vgg16_bn": 138_365_992,
    "vgg19": 143_667_240, "vgg19_bn": 143_678_248,
    "resnet18": 11_689_512, "resnet34": 21_797_672, "resnet50": 25_557_032,
    "resnet101": 44_549_160, "resnet152": 60_192_808,
    "squeezenet1_0": 1_248_424, "squeezenet1_1": 1_235_496,
    "mobilenet_v2": 3_504_872, "densenet121": 7_978_856,
}

# the smallest-cost valid input side for a forward pass; the other VGGs and
# the two deepest ResNets only get parameter counts (their forward is slow)
FORWARD_SIDES = {
    "lenet": 28, "alexnet": 63, "vgg11_bn": 32, "resnet18": 32, "resnet34": 32,
    "resnet50": 32, "squeezenet1_0": 32, "squeezenet1_1": 32, "mobilenet_v2": 32,
    "densenet121": 32,
}


def count(module):
    return sum(p.numel() for p in module.parameters())


@functools.lru_cache(maxsize=None)
def vgg11_bn():
    """One VGG built for several tests: filling its 130 M weights takes seconds."""
    return models.vgg11_bn()


@pytest.mark.parametrize("name", sorted(n for n in PARAMETER_COUNTS if not n.startswith("vgg")))
def test_parameter_count(name):
    assert count(models.get_model(name)) == PARAMETER_COUNTS[name]


def test_vgg_parameter_counts():
    """VGG-16 whole; every VGG as its own convolutions plus the classifier
    that all of them share (building eight 130 M-parameter models is slow)."""
    vgg16 = models.vgg16()
    assert count(vgg16) == PARAMETER_COUNTS["vgg16"]
    head = count(vgg16.classifier)
    for config, depth in (("A", 11), ("B", 13), ("D", 16), ("E", 19)):
        for bn in (False, True):
            name = f"vgg{depth}" + ("_bn" if bn else "")
            features = models.vgg.make_layers(models.vgg._CONFIGS[config], batch_norm=bn)
            assert count(features) + head == PARAMETER_COUNTS[name], name
    assert count(vgg11_bn()) == PARAMETER_COUNTS["vgg11_bn"]


@pytest.mark.parametrize("name", sorted(FORWARD_SIDES))
def test_output_shape(name):
    side = FORWARD_SIDES[name]
    channels = 1 if name == "lenet" else 3
    classes = 1000 if name == "vgg11_bn" else 7
    model = vgg11_bn() if name == "vgg11_bn" else models.get_model(name, num_classes=classes)
    model.eval()
    with ember.no_grad():
        out = model(ember.randn(2, channels, side, side))
    assert tuple(out.shape) == (2, classes)
    assert bool(ember.isfinite(out).all())


def test_training_step_reaches_every_parameter():
    model = models.resnet18(num_classes=5)
    loss = nn.functional.cross_entropy(model(ember.randn(4, 3, 32, 32)),
                                       ember.tensor([0, 1, 2, 3]))
    loss.backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None]
    assert missing == []


@pytest.mark.parametrize("side,fc1", [(8, 16 * 2 * 2), (28, 16 * 5 * 5), (12, 16),
                                      (32, 16 * 6 * 6)])
def test_lenet_image_sizes(side, fc1):
    model = models.LeNet(num_classes=10, image_size=side)
    assert model.fc1.in_features == fc1
    assert tuple(model(ember.randn(3, 1, side, side)).shape) == (3, 10)


def test_lenet_channels_and_names():
    model = models.lenet(in_channels=3, image_size=32, num_classes=4)
    assert tuple(model(ember.randn(1, 3, 32, 32)).shape) == (1, 4)
    assert list(model.state_dict()) == [f"{layer}.{kind}" for layer in
                                        ("conv1", "conv2", "fc1", "fc2", "fc3")
                                        for kind in ("weight", "bias")]


@pytest.mark.parametrize("kwargs", [dict(image_size=3), dict(image_size=0), dict(num_classes=0),
                                    dict(in_channels=1.5), dict(image_size=True)])
def test_lenet_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="LeNet"):
        models.LeNet(**kwargs)


def test_state_dict_keys_follow_torchvision():
    """Spot checks of torchvision's key layout for the models without a
    reference implementation below."""
    expected = {
        "alexnet": ["features.0.weight", "features.10.bias", "classifier.1.weight",
                    "classifier.6.bias"],
        "squeezenet1_1": ["features.0.weight", "features.3.squeeze.weight",
                          "features.12.expand3x3.bias", "classifier.1.weight"],
        "densenet121": ["features.conv0.weight", "features.norm0.running_mean",
                        "features.denseblock1.denselayer1.norm1.weight",
                        "features.denseblock4.denselayer16.conv2.weight",
                        "features.transition3.conv.weight", "features.norm5.bias",
                        "classifier.weight"],
        "resnet50": ["layer1.0.downsample.0.weight", "layer1.0.downsample.1.running_mean",
                     "layer4.2.bn3.weight", "fc.weight"],
    }
    for name, keys in expected.items():
        state = models.get_model(name).state_dict()
        for key in keys:
            assert key in state, (name, key)
        if name == "densenet121":
            assert tuple(state["classifier.weight"].shape) == (1000, 1024)
    state = vgg11_bn().state_dict()
    for key in ("features.1.running_var", "features.1.num_batches_tracked", "classifier.6.weight"):
        assert key in state, ("vgg11_bn", key)


def test_resnet_initialisation():
    ember.manual_seed(0)
    model = models.resnet50(num_classes=10)
    w = model.layer3[0].conv2.weight          # 256×256×3×3, fan_out = 256·9
    assert abs(float(w.std()) - math.sqrt(2.0 / (256 * 9))) < 0.002
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            assert bool((m.weight == 1).all()) and bool((m.bias == 0).all())
    zero = models.resnet18(zero_init_residual=True)
    assert bool((zero.layer2[1].bn2.weight == 0).all())
    assert bool((zero.layer2[1].bn1.weight == 1).all())


def test_vgg_mobilenet_squeezenet_initialisation():
    vgg = vgg11_bn()
    linear = vgg.classifier[3].weight
    assert abs(float(linear.std()) - 0.01) < 0.0005 and bool((vgg.classifier[3].bias == 0).all())
    conv = vgg.features[4].weight              # 128×64×3×3, fan_out = 128·9
    assert abs(float(conv.std()) - math.sqrt(2.0 / (128 * 9))) < 0.003
    mobile = models.mobilenet_v2()
    assert abs(float(mobile.classifier[1].weight.std()) - 0.01) < 0.0005
    squeeze = models.squeezenet1_0()
    assert abs(float(squeeze.classifier[1].weight.std()) - 0.01) < 0.001
    w = squeeze.features[3].expand3x3.weight   # kaiming_uniform_, fan_in = 16·9
    bound = math.sqrt(6.0 / (16 * 9))
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.9 * bound


def test_state_dict_round_trip(tmp_path):
    ember.manual_seed(1)
    model = models.squeezenet1_1(num_classes=4).eval()
    path = tmp_path / "squeezenet.pt"
    ember.save(model.state_dict(), path)
    restored = models.squeezenet1_1(num_classes=4, weights=path).eval()
    x = ember.randn(1, 3, 32, 32)
    with ember.no_grad():
        assert np.array_equal(model(x).numpy(), restored(x).numpy())
    state, again = model.state_dict(), restored.state_dict()
    assert list(state) == list(again)
    for key in state:
        assert np.array_equal(state[key].numpy(), again[key].numpy()), key


def test_weights_from_a_training_checkpoint(tmp_path):
    model = models.lenet(image_size=8)
    path = tmp_path / "checkpoint.pt"
    ember.save({"model": model.state_dict(), "epoch": 3}, path)
    restored = models.lenet(image_size=8, weights=str(path))
    assert np.array_equal(restored.fc3.weight.detach().numpy(),
                          model.fc3.weight.detach().numpy())


def test_densenet_reads_the_older_key_layout(tmp_path):
    """The published DenseNet files say "norm.1" for "norm1" and, like most
    files of that age, have no BatchNorm batch counters."""
    from ember.vision.models.densenet import _rename_old_keys
    ember.manual_seed(0)
    model = models.DenseNet(growth_rate=4, block_config=(1, 1), num_init_features=8,
                            num_classes=3)
    old = OrderedDict()
    for key, value in model.state_dict().items():
        if key.endswith("num_batches_tracked"):
            continue
        for new, former in (("norm1", "norm.1"), ("norm2", "norm.2"), ("conv1", "conv.1"),
                            ("conv2", "conv.2")):
            key = key.replace(f"denselayer1.{new}.", f"denselayer1.{former}.")
        old[key] = value
    assert "features.denseblock1.denselayer1.norm.1.weight" in old
    path = tmp_path / "old.pt"
    ember.save(old, path)
    fresh = models.DenseNet(growth_rate=4, block_config=(1, 1), num_init_features=8,
                            num_classes=3)
    load_weights(fresh, path, remap=_rename_old_keys)
    for key, value in model.state_dict().items():
        assert np.array_equal(fresh.state_dict()[key].numpy(), value.numpy()), key
    with pytest.raises(RuntimeError, match="Unexpected key"):
        load_weights(fresh, path)                    # without the renaming


def test_weights_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_HOME", str(tmp_path / "ember"))   # no cached files
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    with pytest.raises(FileNotFoundError, match="downloads nothing"):
        models.resnet18(weights="IMAGENET1K_V1")
    with pytest.raises(TypeError, match="weights must be None, a weights enum member or the "
                                        "path"):
        models.resnet18(weights=True)
    path = tmp_path / "list.pt"
    ember.save([1, 2, 3], path)
    with pytest.raises(TypeError, match="not a state_dict"):
        models.lenet(weights=path)
    ember.save(models.lenet(num_classes=5).state_dict(), path)
    with pytest.raises(RuntimeError, match="size mismatch"):
        models.lenet(num_classes=10, weights=path)


def test_get_model_and_errors():
    assert "resnet18" in models.list_models() and "lenet" in models.list_models()
    assert isinstance(models.get_model("ResNet18", num_classes=3), models.ResNet)
    with pytest.raises(ValueError, match="Unknown model 'resnet7'"):
        models.get_model("resnet7")
    with pytest.raises(ValueError, match="Unsupported SqueezeNet version"):
        models.SqueezeNet("2_0")
    with pytest.raises(ValueError, match="4 block counts"):
        models.ResNet(models.resnet.BasicBlock, [2, 2, 2])
    with pytest.raises(ValueError, match="BasicBlock only supports"):
        models.ResNet(models.resnet.BasicBlock, [1, 1, 1, 1], groups=2)


# ---------------------------------------------------------------------------
# conformance: the same architectures written directly in torch.nn


def _torch_resnet18(torch, num_classes):
    tnn = torch.nn

    class Block(tnn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = tnn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = tnn.BatchNorm2d(cout)
            self.relu = tnn.ReLU()
            self.conv2 = tnn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = tnn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = tnn.Sequential(tnn.Conv2d(cin, cout, 1, stride, bias=False),
                                                 tnn.BatchNorm2d(cout))

        def forward(self, x):
            shortcut = x if self.downsample is None else self.downsample(x)
            y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
            return self.relu(y + shortcut)

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = tnn.BatchNorm2d(64)
            self.relu = tnn.ReLU()
            self.maxpool = tnn.MaxPool2d(3, 2, 1)
            widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
            for i, (cin, cout, stride) in enumerate(widths):
                setattr(self, f"layer{i + 1}",
                        tnn.Sequential(Block(cin, cout, stride), Block(cout, cout, 1)))
            self.avgpool = tnn.AdaptiveAvgPool2d(1)
            self.fc = tnn.Linear(512, num_classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return Net()


def _torch_mobilenet_v2(torch, num_classes):
    tnn = torch.nn

    def cbr(cin, cout, kernel, stride=1, groups=1):
        return tnn.Sequential(tnn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups,
                                         bias=False), tnn.BatchNorm2d(cout), tnn.ReLU6())

    class Block(tnn.Module):
        def __init__(self, cin, cout, stride, t):
            super().__init__()
            hidden = cin * t
            layers = [cbr(cin, hidden, 1)] if t != 1 else []
            layers += [cbr(hidden, hidden, 3, stride, hidden),
                       tnn.Conv2d(hidden, cout, 1, bias=False), tnn.BatchNorm2d(cout)]
            self.conv = tnn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.conv(x) if self.residual else self.conv(x)

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            layers, cin = [cbr(3, 32, 3, 2)], 32
            for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
                for i in range(n):
                    layers.append(Block(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers.append(cbr(cin, 1280, 1))
            self.features = tnn.Sequential(*layers)
            self.classifier = tnn.Sequential(tnn.Dropout(0.2), tnn.Linear(1280, num_classes))

        def forward(self, x):
            x = self.features(x).mean((2, 3))
            return self.classifier(x)

    return Net()


def _torch_squeezenet1_1(torch, num_classes):
    tnn = torch.nn

    class Fire(tnn.Module):
        def __init__(self, cin, squeeze, e1, e3):
            super().__init__()
            self.squeeze = tnn.Conv2d(cin, squeeze, 1)
            self.expand1x1 = tnn.Conv2d(squeeze, e1, 1)
            self.expand3x3 = tnn.Conv2d(squeeze, e3, 3, padding=1)

        def forward(self, x):
            x = torch.relu(self.squeeze(x))
            return torch.cat([torch.relu(self.expand1x1(x)), torch.relu(self.expand3x3(x))], 1)

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            pool = lambda: tnn.MaxPool2d(3, 2, ceil_mode=True)  # noqa: E731
            self.features = tnn.Sequential(
                tnn.Conv2d(3, 64, 3, 2), tnn.ReLU(), pool(), Fire(64, 16, 64, 64),
                Fire(128, 16, 64, 64), pool(), Fire(128, 32, 128, 128), Fire(256, 32, 128, 128),
                pool(), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256), Fire(512, 64, 256, 256))
            self.classifier = tnn.Sequential(tnn.Dropout(), tnn.Conv2d(512, num_classes, 1),
                                             tnn.ReLU(), tnn.AdaptiveAvgPool2d(1))

        def forward(self, x):
            return self.classifier(self.features(x)).flatten(1)

    return Net()


def _torch_small_densenet(torch, num_classes):
    """DenseNet with growth 8, blocks of 2 and 3 layers, 16 initial maps."""
    tnn = torch.nn

    class Layer(tnn.Module):
        def __init__(self, cin):
            super().__init__()
            self.norm1, self.conv1 = tnn.BatchNorm2d(cin), tnn.Conv2d(cin, 32, 1, bias=False)
            self.norm2, self.conv2 = tnn.BatchNorm2d(32), tnn.Conv2d(32, 8, 3, padding=1,
                                                                     bias=False)

        def forward(self, x):
            return self.conv2(torch.relu(self.norm2(self.conv1(torch.relu(self.norm1(x))))))

    class Block(tnn.ModuleDict):
        def __init__(self, layers, cin):
            super().__init__({f"denselayer{i + 1}": Layer(cin + 8 * i) for i in range(layers)})

        def forward(self, x):
            for layer in self.values():
                x = torch.cat([x, layer(x)], 1)
            return x

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.features = tnn.Sequential(OrderedDict([
                ("conv0", tnn.Conv2d(3, 16, 7, 2, 3, bias=False)), ("norm0", tnn.BatchNorm2d(16)),
                ("relu0", tnn.ReLU()), ("pool0", tnn.MaxPool2d(3, 2, 1)),
                ("denseblock1", Block(2, 16)),
                ("transition1", tnn.Sequential(OrderedDict([
                    ("norm", tnn.BatchNorm2d(32)), ("relu", tnn.ReLU()),
                    ("conv", tnn.Conv2d(32, 16, 1, bias=False)), ("pool", tnn.AvgPool2d(2))]))),
                ("denseblock2", Block(3, 16)), ("norm5", tnn.BatchNorm2d(40))]))
            self.classifier = tnn.Linear(40, num_classes)

        def forward(self, x):
            return self.classifier(torch.relu(self.features(x)).mean((2, 3)))

    return Net()


def _randomise(torch, module):
    """Non-trivial BN statistics and affine terms, so eval mode means something."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(0.1 * torch.randn(m.num_features, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.num_features, generator=gen))
                m.weight.copy_(0.5 + torch.rand(m.num_features, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.num_features, generator=gen))
                m.num_batches_tracked.fill_(7)


def _small_densenet(num_classes=10, weights=None):
    model = models.DenseNet(growth_rate=8, block_config=(2, 3), num_init_features=16,
                            num_classes=num_classes)
    return load_weights(model, weights)


BUILDERS = {"squeezenet1_1": models.squeezenet1_1, "small_densenet": _small_densenet}


@pytest.mark.torch
@pytest.mark.parametrize("name,reference,side", [("resnet18", _torch_resnet18, 40),
                                                 ("mobilenet_v2", _torch_mobilenet_v2, 48),
                                                 ("squeezenet1_1", _torch_squeezenet1_1, 40),
                                                 ("small_densenet", _torch_small_densenet, 36)])
@pytest.mark.parametrize("through_file", [False, True])
def test_outputs_match_a_torch_reference(name, reference, side, through_file, tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ref = reference(torch, num_classes=10)
    _randomise(torch, ref)
    ref.eval()
    ref_state = ref.state_dict()
    build = BUILDERS.get(name, functools.partial(models.get_model, name))
    model = build(num_classes=10)
    ours = model.state_dict()
    assert list(ours) == list(ref_state)                  # same keys, same order
    for key in ours:
        assert tuple(ours[key].shape) == tuple(ref_state[key].shape), key
    if through_file:                                      # a torch.save file as weights=
        path = tmp_path / f"{name}.pth"
        torch.save(ref_state, path)
        model = build(num_classes=10, weights=path)
    else:
        model.load_state_dict({k: ember.from_numpy(v.numpy().copy())
                               for k, v in ref_state.items()})
    model.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, side, side)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = model(ember.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    counters = [v for k, v in model.state_dict().items() if k.endswith("num_batches_tracked")]
    assert all(int(v) == 7 for v in counters)
