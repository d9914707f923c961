"""Datasets laid out as one folder per class: ``root/<class>/.../<file>``."""
import os

from PIL import Image

from .vision import VisionDataset

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "find_classes", "make_dataset",
           "has_file_allowed_extension", "pil_loader", "default_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename, extensions):
    """Whether ``filename`` ends with one of ``extensions`` (case-insensitive)."""
    if isinstance(extensions, str):
        extensions = (extensions,)
    return filename.lower().endswith(tuple(e.lower() for e in extensions))


def find_classes(directory):
    """(sorted class folder names, {name: index})."""
    try:
        names = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    except FileNotFoundError:
        raise FileNotFoundError(f"Couldn't find the folder {directory}.") from None
    if not names:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return names, {name: i for i, name in enumerate(names)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None, allow_empty=False):
    """[(path, class index)] of the valid files under each class folder, in
    sorted order (sub-folders included)."""
    directory = os.path.expanduser(os.fspath(directory))
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if extensions is not None:
        def is_valid_file(path):
            return has_file_allowed_extension(path, extensions)

    samples, found = [], set()
    for name in sorted(class_to_idx):
        index = class_to_idx[name]
        folder = os.path.join(directory, name)
        if not os.path.isdir(folder):
            continue
        for walk_root, dirs, files in sorted(os.walk(folder, followlinks=True)):
            dirs.sort()
            for fname in sorted(files):
                path = os.path.join(walk_root, fname)
                if is_valid_file(path):
                    samples.append((path, index))
                    found.add(name)
    empty = set(class_to_idx) - found
    if empty and not allow_empty:
        message = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            exts = extensions if isinstance(extensions, str) else ", ".join(extensions)
            message += f"Supported extensions are: {exts}"
        raise FileNotFoundError(message)
    return samples


def pil_loader(path):
    """Open an image file as RGB (the file is closed before returning)."""
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


def default_loader(path):
    return pil_loader(path)


class DatasetFolder(VisionDataset):
    """Samples ``root/<class>/**/<file>`` read by ``loader``; a file counts when
    it has one of ``extensions`` or when ``is_valid_file(path)`` says so
    (give exactly one of the two).

    Attributes: ``classes`` (sorted folder names), ``class_to_idx``,
    ``samples`` ([(path, class index)]), ``targets``, ``extensions``,
    ``loader``."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None, allow_empty=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx, extensions, is_valid_file,
                                    allow_empty=allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
        return make_dataset(directory, class_to_idx, extensions, is_valid_file, allow_empty)

    def find_classes(self, directory):
        return find_classes(directory)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        path, target = self.samples[index]
        return self._apply(self.loader(path), target)


class ImageFolder(DatasetFolder):
    """Images in ``root/<class>/**/<image>`` with the usual image extensions
    (``IMG_EXTENSIONS``), opened as RGB PIL images by default."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader,
                 is_valid_file=None, allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples
