"""Anomaly detection: while enabled, every recorded node keeps the stack of
the forward call that created it, and backward reports that stack when the
node's backward raises or (with check_nan) returns NaN."""
import os
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _State:
    enabled = False
    check_nan = True


state = _State()
_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
    return state.check_nan


def capture_forward_trace():
    """The current stack without Ember's own frames: where the user's code
    called the operation."""
    frames = [f for f in traceback.extract_stack()[:-1]
              if not os.path.abspath(f.filename).startswith(_EMBER_DIR + os.sep)]
    return "".join(traceback.format_list(frames))


def report(node, problem):
    """Warns with the forward trace of `node` (as PyTorch does) and returns
    the text, for the exception's notes."""
    trace = (node._extra or {}).get("trace")
    if trace is None:
        return None
    text = (f"Error detected in {type(node).__name__}. Traceback of forward call that "
            f"caused the error:\n{trace}")
    warnings.warn(text, RuntimeWarning, stacklevel=3)
    return text


def check_nan(node, grads):
    for i, g in enumerate(grads):
        if g is not None and g._data.dtype.is_floating_point and bool(g._data.isnan().any()):
            raise RuntimeError(f"Function '{type(node).__name__}' returned nan values in its "
                               f"{i}th output.")


class _Switch:
    def __init__(self, mode, check_nan):
        self._mode = bool(mode)
        self._check_nan = bool(check_nan)

    def __enter__(self):
        self._prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = self._mode, self._check_nan
        return self

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self._prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self._mode, self._check_nan):
                return fn(*args, **kwargs)
        return wrapper


class detect_anomaly(_Switch):
    """Context manager and decorator enabling anomaly detection."""

    def __init__(self, check_nan=True):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", UserWarning,
                      stacklevel=2)
        super().__init__(True, check_nan)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _Switch(True, self._check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly(_Switch):
    """Sets anomaly detection on or off at once; as a context manager,
    restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        super().__init__(mode, check_nan)
        self._prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = self._mode, self._check_nan

    def __enter__(self):
        return self
