"""ember.backends.cudnn: the cuDNN switches PyTorch scripts set.

Ember has no cuDNN: convolutions on CUDA tensors are libTHCUNN's (im2col and
cuBLAS products), so ``is_available()`` is False and these switches are
kept for scripts that set them but change nothing.  Those convolutions pick
no algorithm (``benchmark`` has nothing to search), give the same result on
every run (whatever ``deterministic`` says) and, being matrix products,
follow ``ember.backends.cuda.matmul.allow_tf32`` rather than ``allow_tf32``
here.
"""
import contextlib

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    """cuDNN's version: None, as Ember does not use it."""
    return None


def is_acceptable(tensor):
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Sets the switches inside a block and restores them after."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    module = globals()
    saved = {name: module[name] for name in names}
    module.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                  deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)
