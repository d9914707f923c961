"""ember.nn.functional: pixel_shuffle and pixel_unshuffle, a reshape and a
permute each (autograd follows them)."""

__all__ = ["pixel_shuffle", "pixel_unshuffle"]


def _factor(fn, name, factor):
    if isinstance(factor, bool) or not isinstance(factor, int):
        raise TypeError(f"{fn}(): argument '{name}' (position 2) must be int, not "
                        f"{type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {factor}")
    return factor


def _rank(fn, input):
    if input.dim() < 3:
        raise RuntimeError(f"{fn} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")


def pixel_shuffle(input, upscale_factor):
    """(*, C r², H, W) -> (*, C, H r, W r): channel blocks of r² become r×r
    pixel blocks."""
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    _rank("pixel_shuffle", input)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    # (..., C, r, r, H, W) -> (..., C, H, r, W, r)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r², H, W): the inverse of pixel_shuffle."""
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    _rank("pixel_unshuffle", input)
    *batch, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={w} is not divisible by {r}")
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    # (..., C, H, r, W, r) -> (..., C, r, r, H, W)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import S, T  # noqa: E402

SAMPLES = {
    "pixel_shuffle": [S(T(1, 8, 2, 3), 2)],
    "pixel_unshuffle": [S(T(1, 2, 4, 6), 2)],
}
