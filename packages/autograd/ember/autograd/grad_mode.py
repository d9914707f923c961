"""Whether operations record the graph: no_grad, enable_grad,
set_grad_enabled and inference_mode, as context managers and decorators.

The mode is thread-local, as in PyTorch.  Operations read ``state.enabled``
only after they found an input that requires grad, so the mode costs nothing
on the path where nothing does.
"""
import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]


class _State(threading.local):
    enabled = True
    inference = False


state = _State()


def is_grad_enabled():
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _ModeContext:
    """Base of the mode switches: a context manager that also decorates
    functions (``@no_grad()`` and ``@no_grad`` alike)."""

    def __new__(cls, *args, **kwargs):
        # @no_grad without parentheses: the class is called with the function
        if cls._bare_decorator and len(args) == 1 and not kwargs and callable(args[0]):
            return cls()(args[0])
        return super().__new__(cls)

    _bare_decorator = True

    def _clone(self):
        return self.__class__()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_ModeContext):
    """Operations inside do not record the graph (their results do not
    require grad)."""

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self._prev


class enable_grad(_ModeContext):
    """Re-enables recording inside a no_grad block."""

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = True

    def __exit__(self, *exc):
        state.enabled = self._prev


class set_grad_enabled(_ModeContext):
    """Sets the mode at once (``set_grad_enabled(False)`` as a statement) and
    restores the previous one when used as a context manager."""

    _bare_decorator = False

    def __init__(self, mode):
        self._mode = bool(mode)
        self._prev = state.enabled
        state.enabled = self._mode

    def _clone(self):
        return self.__class__(self._mode)

    def __call__(self, fn):
        state.enabled = self._prev  # decorating must not change the mode
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled = self._prev


class inference_mode(_ModeContext):
    """Like no_grad (Ember has no separate inference tensors: see README)."""

    def __init__(self, mode=True):
        self._mode = bool(mode)

    def _clone(self):
        return self.__class__(self._mode)

    def __enter__(self):
        self._prev = (state.enabled, state.inference)
        if self._mode:
            state.enabled = False
            state.inference = True

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev
