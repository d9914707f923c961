"""The weights enums (torchvision's names: ResNet18_Weights.DEFAULT, ...),
their transforms() preset and meta, get_weight / get_model_weights, and
weights= with an enum member: found in $EMBER_HOME/hub/checkpoints or
PyTorch's cache, or an error naming the files looked for."""
import os

import numpy as np
import pytest
from PIL import Image

import ember
from ember.vision import models, transforms

# enum: (members, DEFAULT's target) as torchvision 0.28 names them
ENUMS = {
    "AlexNet_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "VGG11_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "VGG11_BN_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "VGG13_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "VGG13_BN_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "VGG16_Weights": (["IMAGENET1K_V1", "IMAGENET1K_FEATURES"], "IMAGENET1K_V1"),
    "VGG16_BN_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "VGG19_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "VGG19_BN_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "ResNet18_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "ResNet34_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "ResNet50_Weights": (["IMAGENET1K_V1", "IMAGENET1K_V2"], "IMAGENET1K_V2"),
    "ResNet101_Weights": (["IMAGENET1K_V1", "IMAGENET1K_V2"], "IMAGENET1K_V2"),
    "ResNet152_Weights": (["IMAGENET1K_V1", "IMAGENET1K_V2"], "IMAGENET1K_V2"),
    "SqueezeNet1_0_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "SqueezeNet1_1_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
    "MobileNet_V2_Weights": (["IMAGENET1K_V1", "IMAGENET1K_V2"], "IMAGENET1K_V2"),
    "DenseNet121_Weights": (["IMAGENET1K_V1"], "IMAGENET1K_V1"),
}


@pytest.fixture
def caches(tmp_path, monkeypatch):
    ember_home, torch_home = tmp_path / "ember_home", tmp_path / "torch_home"
    monkeypatch.setenv("EMBER_HOME", str(ember_home))
    monkeypatch.setenv("TORCH_HOME", str(torch_home))
    return ember_home / "hub" / "checkpoints", torch_home / "hub" / "checkpoints"


@pytest.mark.parametrize("name", sorted(ENUMS))
def test_enum_names_and_default(name):
    members, default = ENUMS[name]
    enum_cls = getattr(models, name)
    assert [m.name for m in enum_cls] == members
    assert enum_cls.DEFAULT is enum_cls[default]
    for m in enum_cls:
        assert repr(m) == f"{name}.{m.name}"
        assert m.url.startswith("https://") and m.url.endswith(".pth")
        assert m.meta["num_params"] > 0 and len(m.meta["min_size"]) == 2
        assert models.get_weight(f"{name}.{m.name}") is m
    assert models.get_weight(f"{name}.DEFAULT") is enum_cls.DEFAULT


def test_builders_know_their_enum():
    for builder, name in [("resnet18", "ResNet18_Weights"), ("vgg16_bn", "VGG16_BN_Weights"),
                          ("mobilenet_v2", "MobileNet_V2_Weights"),
                          ("densenet121", "DenseNet121_Weights")]:
        assert models.get_model_weights(builder) is getattr(models, name)
        assert models.get_model_weights(getattr(models, builder)) is getattr(models, name)
    with pytest.raises(ValueError, match="no pretrained weights"):
        models.get_model_weights("lenet")
    with pytest.raises(ValueError, match="Invalid weight name provided: 'ResNet18_Weights'"):
        models.get_weight("ResNet18_Weights")
    with pytest.raises(ValueError, match="Failed to find Weights IMAGENET1K_V9 in "
                                         "ResNet18_Weights"):
        models.get_weight("ResNet18_Weights.IMAGENET1K_V9")
    assert set(models.list_models()) >= {"resnet18", "vgg16", "lenet"}


def test_categories():
    cats = models.ResNet18_Weights.DEFAULT.meta["categories"]
    assert len(cats) == 1000 and cats[0] == "tench" and cats[1] == "goldfish"
    assert cats[207] == "golden retriever" and cats[999] == "toilet tissue"
    assert models.VGG16_Weights.IMAGENET1K_FEATURES.meta["categories"] is None
    acc = models.ResNet50_Weights.IMAGENET1K_V2.meta["_metrics"]["ImageNet-1K"]["acc@1"]
    assert acc == pytest.approx(80.858)


def test_transforms_preset():
    preset = models.ResNet50_Weights.IMAGENET1K_V2.transforms()
    assert preset.crop_size == [224] and preset.resize_size == [232]
    assert "crop_size=[224]" in repr(preset)
    rng = np.random.default_rng(0)
    array = rng.integers(0, 256, size=(300, 260, 3), dtype=np.uint8)
    img = Image.fromarray(array)
    manual = transforms.Compose([transforms.Resize(232), transforms.CenterCrop(224),
                                 transforms.PILToTensor(), transforms.ConvertImageDtype(
                                     ember.float32),
                                 transforms.Normalize((0.485, 0.456, 0.406),
                                                      (0.229, 0.224, 0.225))])
    out = preset(img)
    assert out.shape == (3, 224, 224) and out.dtype is ember.float32
    np.testing.assert_allclose(out.numpy(), manual(img).numpy(), rtol=1e-6, atol=1e-6)
    tensor_out = preset(ember.from_numpy(array.transpose(2, 0, 1).copy()))
    assert tensor_out.shape == (3, 224, 224)
    # the features-only entry normalises with its own mean and std
    feat = models.VGG16_Weights.IMAGENET1K_FEATURES.transforms()
    assert feat.std == [1 / 255.0] * 3


def _fake_weights_file(directory, enum_member):
    model = models.squeezenet1_1()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, enum_member.file_name)
    ember.save(model.state_dict(), path)
    return model


@pytest.mark.parametrize("spelling", ["member", "DEFAULT", "IMAGENET1K_V1", "full_name"])
def test_weights_from_ember_home(caches, spelling):
    member = models.SqueezeNet1_1_Weights.IMAGENET1K_V1
    saved = _fake_weights_file(caches[0], member)
    arg = {"member": member, "DEFAULT": "DEFAULT", "IMAGENET1K_V1": "IMAGENET1K_V1",
           "full_name": "SqueezeNet1_1_Weights.IMAGENET1K_V1"}[spelling]
    model = models.squeezenet1_1(weights=arg)
    for key, value in saved.state_dict().items():
        assert np.array_equal(model.state_dict()[key].numpy(), value.numpy()), key
    sd = member.get_state_dict()
    assert set(sd) == set(saved.state_dict())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        member.get_state_dict(check_hash=True)   # a stand-in file, not the published one


def test_weights_from_torch_cache(caches):
    member = models.SqueezeNet1_1_Weights.DEFAULT
    saved = _fake_weights_file(caches[1], member)
    model = models.squeezenet1_1(weights=member)
    w = "classifier.1.weight"
    assert np.array_equal(model.state_dict()[w].numpy(), saved.state_dict()[w].numpy())


def test_missing_weights_file_is_named(caches):
    member = models.ResNet18_Weights.DEFAULT
    with pytest.raises(FileNotFoundError) as info:
        models.resnet18(weights=member)
    msg = str(info.value)
    for directory in caches:
        assert repr(str(directory / "resnet18-f37072fd.pth")) in msg
    assert "downloads nothing" in msg and member.url in msg


def test_weights_argument_errors(caches):
    with pytest.raises(ValueError, match="The parameter 'num_classes' expected value 1000 but "
                                         "got 10 instead."):
        models.resnet18(weights=models.ResNet18_Weights.DEFAULT, num_classes=10)
    with pytest.raises(TypeError, match="expected ResNet18_Weights but received "
                                        "ResNet34_Weights"):
        models.resnet18(weights=models.ResNet34_Weights.DEFAULT)
    with pytest.raises(FileNotFoundError, match="downloads nothing"):
        models.resnet18(weights="IMAGENET1K_V7")   # neither a member nor a file
