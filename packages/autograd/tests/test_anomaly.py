"""detect_anomaly points at the forward line whose backward failed, and
gradcheck catches wrong gradients."""
import pytest

import ember
from ember.autograd import (Function, GradcheckError, detect_anomaly, gradcheck,
                            set_detect_anomaly)


def test_nan_in_backward_reports_the_forward_call_site():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = detect_anomaly()
    with mode:
        y = x.log() * 0  # the culprit: LogBackward0 computes 0 / 0
        with pytest.warns(RuntimeWarning, match="Error detected in LogBackward0") as record:
            with pytest.raises(RuntimeError, match="Function 'LogBackward0' returned nan "
                               "values in its 0th output.") as info:
                y.sum().backward()
    trace = str(record[0].message)
    assert "Traceback of forward call that caused the error" in trace
    assert "test_anomaly.py" in trace and "y = x.log() * 0" in trace
    assert "ember/_ops" not in trace  # only the user's frames
    assert any("y = x.log() * 0" in note for note in info.value.__notes__)


class Broken(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("broken backward")


def test_error_in_backward_reports_the_forward_call_site():
    x = ember.ones(2, requires_grad=True)
    with set_detect_anomaly(True):
        y = Broken.apply(x)
        with pytest.warns(RuntimeWarning, match="Error detected in BrokenBackward"):
            with pytest.raises(ValueError, match="broken backward") as info:
                y.sum().backward()
    assert any("y = Broken.apply(x)" in note for note in info.value.__notes__)
    assert not ember.autograd.is_anomaly_enabled()


def test_without_anomaly_mode_nothing_is_recorded():
    x = ember.tensor([0.0], requires_grad=True)
    y = x.log() * 0
    assert y.grad_fn._extra is None
    y.sum().backward()  # NaN passes silently, as in PyTorch
    assert x.grad.isnan().all()


class WrongGradient(Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


def test_gradcheck_catches_a_wrong_gradient():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                       "input 0"):
        gradcheck(WrongGradient.apply, (x,))
    assert gradcheck(WrongGradient.apply, (x,), raise_exception=False) is False


def test_gradcheck_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to "
                       "require gradient"):
        gradcheck(lambda t: t * 2, (ember.ones(2, dtype=ember.float64),))
