"""The base class of the datasets: root, transforms and the printed form."""
import os

from ember.utils.data import Dataset


class VisionDataset(Dataset):
    """A map-style dataset of (image, target) items under a ``root`` folder.

    ``transform`` is applied to the image, ``target_transform`` to the
    target; ``transforms`` (a callable of both) may be given instead."""

    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, (str, os.PathLike)):
            root = os.path.expanduser(os.fspath(root))
        self.root = root
        has_separate = transform is not None or target_transform is not None
        if transforms is not None and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        self._joint_transforms = transforms

    @property
    def transforms(self):
        """The callable of (input, target) applied to each item."""
        if self._joint_transforms is not None:
            return self._joint_transforms
        if self.transform is None and self.target_transform is None:
            return None
        return StandardTransform(self.transform, self.target_transform)

    def _apply(self, img, target):
        # read transform/target_transform at each call: assigning them after
        # construction (train vs. test pipelines) takes effect
        if self._joint_transforms is not None:
            return self._joint_transforms(img, target)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def extra_repr(self):
        return ""

    def __repr__(self):
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if self.transforms is not None:
            body += repr(self.transforms).splitlines()
        lines = [head] + [" " * self._repr_indent + line for line in body]
        return "\n".join(lines)


class StandardTransform:
    """Applies ``transform`` to the input and ``target_transform`` to the target."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    @staticmethod
    def _format(transform, head):
        lines = repr(transform).splitlines()
        return [head + lines[0]] + [" " * len(head) + line for line in lines[1:]]

    def __repr__(self):
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += self._format(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += self._format(self.target_transform, "Target transform: ")
        return "\n".join(body)


def resolve_raw_file(candidates, name, what):
    """The first existing path among ``candidates`` (plain or ``.gz``)."""
    for folder in candidates:
        for fname in (name, name + ".gz"):
            path = os.path.join(folder, fname)
            if os.path.isfile(path):
                return path
    expected = os.path.join(candidates[0], name)
    raise RuntimeError(f"{what} not found: expected {expected} (or {name}.gz there"
                       f" or in {candidates[-1]}). Use download=True to fetch it.")
