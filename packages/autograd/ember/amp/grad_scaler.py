"""ember.amp.GradScaler: loss scaling for float16 training, as PyTorch's.

    scaler = ember.amp.GradScaler("cuda")
    with ember.autocast("cuda"):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)      # unscales; skipped if a gradient is inf/NaN
    scaler.update()             # backs off after an overflow, grows after clean steps

The scale and the growth tracker are plain Python numbers (the scale kept
to float32 values, as PyTorch's float32 tensor holds it).  The inf/NaN
check concatenates the gradients of each (device, dtype) in bounded
chunks and tests them in a few tensor ops; step() reads the verdict once
(one host read per device), and update() reuses it.
"""
import enum
import math
import numbers
import struct
import warnings
from collections import abc, defaultdict

import ember

__all__ = ["GradScaler", "OptState"]

_CHUNK = 1 << 24                      # elements per concatenation of the inf/NaN check
_FLOAT32_MAX = 3.4028234663852886e38


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    # found: the step's verdict once read (None: not read yet)
    return {"stage": OptState.READY, "found_inf_per_device": {}, "found": None}


def _float32(x):
    """x rounded to float32 (inf beyond its range), as PyTorch's scale tensor holds it."""
    if math.isnan(x) or abs(x) > _FLOAT32_MAX:
        return x if math.isnan(x) else math.copysign(math.inf, x)
    return struct.unpack("f", struct.pack("f", x))[0]


class GradScaler:
    """Scales losses and unscales gradients for mixed-precision training.

    device: where the scaled losses live ('cuda' or 'cpu'); with
    enabled=True and device 'cuda' but no CUDA, it warns and disables
    itself.  Disabled, every method passes through (scale returns its
    input, step calls optimizer.step, get_scale is 1.0).
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not ember.cuda.is_available():
            warnings.warn("ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None            # set by the first scale()
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ---- the iteration ---------------------------------------------------------
    def scale(self, outputs):
        """outputs (a tensor, or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = _float32(float(self._init_scale))
            self._growth_tracker = self._init_growth_tracker
        factor = self._scale

        def apply(value):
            if isinstance(value, ember.Tensor):
                return value * factor
            if isinstance(value, abc.Iterable) and not isinstance(value, (str, bytes)):
                scaled = map(apply, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale in place (once per
        step, e.g. before clipping them) and records whether any is inf/NaN."""
        if not self._enabled:
            return
        self._check_started("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = _float32(1.0 / self._scale)  # reciprocal in float64, as PyTorch
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) after unscaling (if unscale_ was
        not called), unless a gradient is inf/NaN: then the step is skipped
        and None returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_started("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        state["found"] = _read(state)
        result = None if state["found"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Ends the iteration: the scale is multiplied by backoff_factor if a
        step found inf/NaN, by growth_factor after growth_interval clean
        iterations in a row; or set to new_scale (a float or a 1-element tensor)."""
        if not self._enabled:
            return
        self._check_started("update")
        if new_scale is not None:
            self._scale = _float32(self._new_scale_value(new_scale))
        else:
            verdicts = [s["found"] if s["found"] is not None else _read(s)
                        for s in self._per_optimizer_states.values()
                        if s["found_inf_per_device"]]
            if not verdicts:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(any(verdicts))
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _update_scale(self, found_inf):
        if found_inf:
            self._scale = _float32(self._scale * self._backoff_factor)
            self._growth_tracker = 0
            return
        clean = self._growth_tracker + 1
        if clean == self._growth_interval:
            grown = _float32(self._scale * self._growth_factor)
            if math.isfinite(grown):
                self._scale = grown
            clean = 0
        self._growth_tracker = clean

    def _new_scale_value(self, new_scale):
        if isinstance(new_scale, numbers.Real) and not isinstance(new_scale, bool):
            return float(new_scale)
        if not (isinstance(new_scale, ember.Tensor) and new_scale.device.type == self._device
                and new_scale.numel() == 1 and not new_scale.requires_grad):
            raise AssertionError("new_scale should be a float or a 1-element "
                                 "ember.cuda.FloatTensor or ember.FloatTensor with "
                                 "requires_grad=False.")
        return float(new_scale.item())

    def _check_started(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may "
                                 "indicate your script did not use scaler.scale(loss or "
                                 "outputs) earlier in the iteration.")

    def _unscale_grads(self, optimizer, inv_scale):
        """Per device: a 0-d bool tensor, whether a gradient is inf/NaN.  The
        gradients are checked before they are multiplied by inv_scale."""
        buckets = defaultdict(list)
        with ember.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if grad.dtype is ember.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    buckets[(grad.device, grad.dtype)].append(grad)
            found = {}
            for (device, _), grads in buckets.items():
                bad = _non_finite(grads)
                found[device] = bad if device not in found else found[device].logical_or(bad)
                if inv_scale != 1.0:
                    for grad in grads:
                        grad.mul_(inv_scale)
        return found

    # ---- settings and state ----------------------------------------------------
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else self._growth_tracker

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and
        _growth_tracker (the clean steps in a row); {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _float32(float(state_dict["scale"]))
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]


def _read(state):
    """The step's verdict: one host read per device that holds gradients."""
    return any(bool(flag) for flag in state["found_inf_per_device"].values())


def _non_finite(grads):
    """A 0-d bool tensor: whether any of grads holds an inf or NaN, tested on
    concatenations of at most _CHUNK elements (a few ops, bounded memory)."""
    flags, chunk, size = [], [], 0
    for grad in grads:
        chunk.append(grad.reshape(-1))
        size += grad.numel()
        if size >= _CHUNK:
            flags.append(_chunk_non_finite(chunk))
            chunk, size = [], 0
    if chunk:
        flags.append(_chunk_non_finite(chunk))
    return flags[0] if len(flags) == 1 else ember.stack(flags).any()


def _chunk_non_finite(parts):
    flat = parts[0] if len(parts) == 1 else ember.cat(parts)
    return flat.isfinite().all().logical_not()
