"""ember.stft and ember.istft (PyTorch's signatures and defaults): framing,
windowing and overlap-add written with differentiable ember ops around
ember.fft's transforms."""
from .._creation import arange, ones, zeros
from .._tensor import Tensor
from . import fft as _fft, ifft as _ifft, irfft as _irfft, rfft as _rfft


def _cat(tensors, dim):
    from .._ops.define import NAMESPACE
    return NAMESPACE["cat"](tensors, dim)


def _window(window, win_length, n_fft, like, name):
    """The window zero-padded on both sides to n_fft (centred)."""
    if win_length is None:
        win_length = n_fft
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or win_length < n_fft:
        z = window.new_zeros
        window = _cat([z(left), window, z(n_fft - win_length - left)], 0)
    return window


def _pad(x, p, mode):
    """x padded by p on both ends of its last dim."""
    if p == 0:
        return x
    n = x.shape[-1]
    if mode == "reflect":
        if p >= n:
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({p}, {p}) "
                               f"at dimension {x.dim() - 1} of input {list(x.shape)}")
        return _cat([x[..., 1:p + 1].flip(-1), x, x[..., n - p - 1:n - 1].flip(-1)], -1)
    if mode == "constant":
        z = x.new_zeros(tuple(x.shape[:-1]) + (p,))
        return _cat([z, x, z], -1)
    if mode == "replicate":
        return _cat([x[..., :1].expand(*x.shape[:-1], p), x,
                     x[..., -1:].expand(*x.shape[:-1], p)], -1)
    if mode == "circular":
        return _cat([x[..., n - p:], x, x[..., :p]], -1)
    raise NotImplementedError(f"stft: pad_mode '{mode}' is not supported (reflect, constant, "
                              "replicate, circular)")


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform of a 1-d signal or a batch (B, L):
    (B?, n_fft // 2 + 1 or n_fft, frames) complex values."""
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    complex_input = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True "
                               "in a future PyTorch release.")
        return_complex = True
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D tensor")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.double() if x.dtype.itemsize == 8 else x.float()
    if center:
        x = _pad(x, n_fft // 2, pad_mode)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    w = _window(window, win_length, n_fft, x, "stft")
    frames = x.unfold(-1, n_fft, hop) * w                     # (B, frames, n_fft)
    if onesided is None:
        onesided = not complex_input
    if onesided and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = (_rfft if onesided else _fft)(frames, dim=-1, norm=norm).transpose(1, 2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    if return_complex:
        return spec
    from .._ops.complex import view_as_real
    return view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of stft by overlap-add, divided by the summed squared
    window (which must not vanish)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"values, but got {input.dim()}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    spec = input if input.dim() == 3 else input.unsqueeze(0)   # (B, freq, frames)
    if onesided is None:
        onesided = spec.shape[1] != n_fft
    if onesided and spec.shape[1] != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{spec.shape[1]}")
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    w = _window(window, win_length, n_fft, spec, "istft")
    norm = "ortho" if normalized else "backward"
    spec = spec.transpose(1, 2)                                  # (B, frames, freq)
    frames = _irfft(spec, n=n_fft, dim=-1, norm=norm) if onesided else \
        _ifft(spec, n=n_fft, dim=-1, norm=norm)
    if not onesided and not return_complex:
        frames = frames.real
    frames = frames * w
    n_frames = frames.shape[1]
    total = n_fft + hop * (n_frames - 1)
    index = (arange(n_frames, device=w.device).unsqueeze(1) * hop +
             arange(n_fft, device=w.device).unsqueeze(0)).reshape(-1)
    y = _overlap_add(frames.reshape(frames.shape[0], -1), index, total)
    envelope = zeros(total, dtype=w.dtype.to_real(), device=w.device).index_add(
        0, index, (w * w.conj()).real.repeat(n_frames) if w.is_complex()
        else (w * w).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + length
    kept = envelope[start:min(end, total)]
    if kept.numel() and float(kept.abs().min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: the sum of the squared window is 0 "
                           "somewhere (the window and hop_length do not satisfy NOLA)")
    y = y[:, start:min(end, total)] / kept
    if end > total:  # length asks for more: zeros after the signal
        y = _cat([y, y.new_zeros((y.shape[0], end - total))], 1)
    return y if input.dim() == 3 else y.squeeze(0)


def _overlap_add(frames, index, total):
    """Sums frames (B, frames * n_fft) into (B, total) at index."""
    if frames.is_complex():  # index_add sums real values: the parts one by one
        from .._ops.complex import complex as _complex
        return _complex(_overlap_add(frames.real, index, total),
                        _overlap_add(frames.imag, index, total))
    out = zeros(frames.shape[0], total, dtype=frames.dtype, device=frames.device)
    return out.index_add(1, index, frames)

