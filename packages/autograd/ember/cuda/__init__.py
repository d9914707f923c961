"""ember.cuda: GPU availability and seeding.  The CUDA backend is the
separate ember-thc package (``pip install ember[cuda]``); without it nothing
here fails: is_available() is False and the seeding calls do nothing."""
from .. import backends as _backends


def is_available():
    return _backends.is_available("cuda")


def device_count():
    return _backends.get_backend("cuda").device_count() if is_available() else 0


def manual_seed(seed):
    if is_available():
        _backends.get_backend("cuda").manual_seed(seed)


manual_seed_all = manual_seed
