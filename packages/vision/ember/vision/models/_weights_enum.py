"""Pretrained-weight descriptions with torchvision's names
(``ResNet18_Weights.IMAGENET1K_V1``, ``.DEFAULT``, ``.transforms()``,
``.meta["categories"]``) and the ``weights=`` handling of the builders.

Ember downloads nothing.  A weights entry names its file (the last part of
its URL); the file is looked for in ``$EMBER_HOME/hub/checkpoints`` (by
default ``~/.cache/ember/hub/checkpoints``) and then in PyTorch's cache
(``$TORCH_HOME/hub/checkpoints``, by default ``~/.cache/torch/...``), and a
missing file is an error naming the paths looked at and the URL to fetch it
from.  The entries (URLs, sizes, accuracies) and the ImageNet class names
are data files next to this module."""
import enum
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources

from ..transforms._presets import ImageClassification

__all__ = ["Weights", "WeightsEnum", "get_weight", "get_model_weights", "ember_home",
           "weight_dirs"]


@dataclass(frozen=True, eq=False)
class Weights:
    """One set of published weights: its URL, the preprocessing it expects
    (a callable making the transform) and facts about it."""
    url: str
    transforms: object
    meta: dict


class WeightsEnum(enum.Enum):
    """Base of the XXX_Weights enums; members delegate to their Weights."""

    @classmethod
    def verify(cls, obj):
        """A member from a member, its name ('IMAGENET1K_V1', 'DEFAULT') or
        its full name ('ResNet18_Weights.IMAGENET1K_V1'); None stays None."""
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj[len(cls.__name__) + 1:] if obj.startswith(cls.__name__ + ".") else obj
            if name in cls.__members__:
                return cls.__members__[name]
            raise ValueError(f"Failed to find Weights {obj} in {cls.__name__}; one of "
                             f"{', '.join(cls.__members__)}")
        raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                        f"{type(obj).__name__}.")

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta

    @property
    def file_name(self):
        return self.value.url.rsplit("/", 1)[-1]

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    def local_path(self, model_dir=None):
        """The local copy of this entry's file, or FileNotFoundError naming
        every path looked at."""
        tried = [os.path.join(d, self.file_name) for d in
                 ([model_dir] if model_dir is not None else weight_dirs())]
        for path in tried:
            if os.path.isfile(path):
                return path
        raise FileNotFoundError(
            f"{self!r}: weights file {self.file_name!r} not found; looked for "
            f"{' and '.join(repr(p) for p in tried)}. ember.vision downloads nothing: fetch "
            f"{self.url} into {os.path.dirname(tried[0])!r} (or set EMBER_HOME), or pass the "
            f"file's path as weights=")

    def get_state_dict(self, progress=True, check_hash=False, model_dir=None):
        """The state_dict in this entry's local file (check_hash: its SHA-256
        must start with the hex digits after the last '-' of its name)."""
        import ember
        path = self.local_path(model_dir)
        if check_hash:
            _check_hash(path)
        return ember.load(path, map_location="cpu")


def _check_hash(path):
    stem = os.path.basename(path).rsplit(".", 1)[0]
    prefix = stem.rsplit("-", 1)[-1] if "-" in stem else ""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if not prefix or not digest.hexdigest().startswith(prefix):
        raise RuntimeError(f"invalid hash value of {path!r}: its SHA-256 is "
                           f"{digest.hexdigest()}, the name expects one starting {prefix!r}")


def ember_home():
    """$EMBER_HOME, or $XDG_CACHE_HOME/ember, or ~/.cache/ember."""
    default = os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "ember")
    return os.path.expanduser(os.environ.get("EMBER_HOME", default))


def weight_dirs():
    """Where weights files are looked for, in order."""
    torch_home = os.path.expanduser(os.environ.get(
        "TORCH_HOME", os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "torch")))
    return [os.path.join(ember_home(), "hub", "checkpoints"),
            os.path.join(torch_home, "hub", "checkpoints")]


# ---- the entries -----------------------------------------------------------------
def _data(name):
    return resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")


IMAGENET_CATEGORIES = _data("imagenet_categories.txt").splitlines()


def _make_enums():
    enums = {}
    for enum_name, entries in json.loads(_data("weights.json")).items():
        members = {}
        for name, e in entries.items():
            if "alias" in e:
                members[name] = members[e["alias"]]
                continue
            meta = dict(e["meta"])
            meta["min_size"] = tuple(meta["min_size"])
            meta.setdefault("categories", IMAGENET_CATEGORIES)
            t = dict(e["transforms"])
            for k in ("mean", "std"):
                if k in t:
                    t[k] = tuple(t[k])
            members[name] = Weights(e["url"], functools.partial(ImageClassification, **t), meta)
        enums[enum_name] = WeightsEnum(enum_name, list(members.items()), module=__name__)
    return enums


ENUMS = _make_enums()
globals().update(ENUMS)
__all__ += list(ENUMS)

# builder name -> its enum (lenet has no published weights)
MODEL_WEIGHTS = {
    "alexnet": "AlexNet_Weights", "vgg11": "VGG11_Weights", "vgg11_bn": "VGG11_BN_Weights",
    "vgg13": "VGG13_Weights", "vgg13_bn": "VGG13_BN_Weights", "vgg16": "VGG16_Weights",
    "vgg16_bn": "VGG16_BN_Weights", "vgg19": "VGG19_Weights", "vgg19_bn": "VGG19_BN_Weights",
    "resnet18": "ResNet18_Weights", "resnet34": "ResNet34_Weights",
    "resnet50": "ResNet50_Weights", "resnet101": "ResNet101_Weights",
    "resnet152": "ResNet152_Weights", "squeezenet1_0": "SqueezeNet1_0_Weights",
    "squeezenet1_1": "SqueezeNet1_1_Weights", "mobilenet_v2": "MobileNet_V2_Weights",
    "densenet121": "DenseNet121_Weights",
}


def get_weight(name):
    """The member named 'ResNet50_Weights.IMAGENET1K_V2' (or '...DEFAULT')."""
    enum_name, _, member = name.partition(".")
    if enum_name not in ENUMS or not member:
        raise ValueError(f"Invalid weight name provided: '{name}'")
    return ENUMS[enum_name].verify(member)


def get_model_weights(name):
    """The weights enum of a builder (a function or its name)."""
    key = name if isinstance(name, str) else getattr(name, "__name__", None)
    key = key.lower() if isinstance(key, str) else key
    if key not in MODEL_WEIGHTS:
        raise ValueError(f"Unknown model {name!r} or it has no pretrained weights; models "
                         f"with weights: {', '.join(sorted(MODEL_WEIGHTS))}")
    return ENUMS[MODEL_WEIGHTS[key]]


def resolve(weights, enum_cls):
    """A builder's weights argument: None, a local path, or a member of
    enum_cls (given as a member or by name)."""
    if weights is None or isinstance(weights, (os.PathLike, bytes)):
        return weights
    if isinstance(weights, WeightsEnum):
        return enum_cls.verify(weights)
    if isinstance(weights, str) and not os.path.exists(weights):
        name = weights[len(enum_cls.__name__) + 1:] \
            if weights.startswith(enum_cls.__name__ + ".") else weights
        if name in enum_cls.__members__:
            return enum_cls.__members__[name]
    return weights


def with_weights(builder):
    """Builder decorator: weights= may be the builder's enum member (or its
    name); the model then gets as many classes as the weights have
    categories, as torchvision does."""
    enum_cls = ENUMS[MODEL_WEIGHTS[builder.__name__]]

    @functools.wraps(builder)
    def build(*, weights=None, progress=True, **kwargs):
        weights = resolve(weights, enum_cls)
        if isinstance(weights, WeightsEnum) and weights.meta["categories"] is not None:
            want = len(weights.meta["categories"])
            if kwargs.get("num_classes", want) != want:
                raise ValueError(f"The parameter 'num_classes' expected value {want} but got "
                                 f"{kwargs['num_classes']} instead.")
            kwargs["num_classes"] = want
        return builder(weights=weights, progress=progress, **kwargs)
    return build
