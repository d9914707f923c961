"""no_grad, enable_grad, set_grad_enabled, inference_mode: as context
managers and as decorators (with and without parentheses)."""
import ember
from ember import autograd


def _x():
    return ember.ones(2, requires_grad=True)


def test_no_grad_context_and_nesting():
    x = _x()
    with ember.no_grad():
        assert not (x * 2).requires_grad and not ember.is_grad_enabled()
        with ember.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad and ember.is_grad_enabled()


def test_no_grad_as_decorator_with_and_without_parentheses():
    x = _x()

    @ember.no_grad()
    def f():
        return x * 2

    @ember.no_grad
    def g():
        return x * 2

    assert not f().requires_grad and not g().requires_grad
    assert f.__name__ == "f" and ember.is_grad_enabled()


def test_set_grad_enabled_as_statement_and_context():
    x = _x()
    ember.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        ember.set_grad_enabled(True)
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @ember.set_grad_enabled(False)
    def f():
        return x * 2
    assert ember.is_grad_enabled() and not f().requires_grad


def test_inference_mode():
    x = _x()
    with ember.inference_mode():
        assert not (x * 2).requires_grad and ember.is_inference_mode_enabled()
    with ember.inference_mode(False):
        assert (x * 2).requires_grad

    @ember.inference_mode()
    def f():
        return x * 2
    assert not f().requires_grad and not ember.is_inference_mode_enabled()


def test_mode_restored_after_exception():
    try:
        with ember.no_grad():
            raise ValueError
    except ValueError:
        pass
    assert ember.is_grad_enabled()


def test_autograd_namespace_exports_the_modes():
    assert autograd.no_grad is ember.no_grad and autograd.grad_mode.no_grad is ember.no_grad
