"""gradcheck and gradgradcheck (float64 finite differences) for every
differentiable op of the table, on each of its samples (broadcasting,
numbers, 0-d ...), with contiguous and non-contiguous inputs, and for the
in-place forms."""
import pytest

import ember
from ember._ops import OPS
from ember.autograd import gradcheck, gradgradcheck

from conftest import leaves, make_sample, sample_cases


def _differentiable(info):
    return info.differentiable and info.samples


def _call(info, args, kwargs):
    return lambda *_: info.call(*args, **kwargs)


@pytest.mark.parametrize("info,sample,layout", sample_cases(_differentiable))
def test_gradcheck(info, sample, layout):
    args, kwargs = make_sample(sample, layout)
    inputs = leaves(args, kwargs)
    assert gradcheck(_call(info, args, kwargs), inputs)


@pytest.mark.parametrize("info,sample,layout", sample_cases(_differentiable))
def test_gradgradcheck(info, sample, layout):
    args, kwargs = make_sample(sample, layout, seed=1)
    inputs = leaves(args, kwargs)
    assert gradgradcheck(_call(info, args, kwargs), inputs)


def _has_inplace(info):
    return info.inplace is not None and info.differentiable and info.samples


@pytest.mark.parametrize("info,sample,layout", sample_cases(_has_inplace))
def test_inplace_gradcheck(info, sample, layout):
    """x.op_(...) on a copy of x: the same gradient as the out-of-place op,
    and the result is the modified tensor itself."""
    args, kwargs = make_sample(sample, layout, seed=2)
    inputs = leaves(args, kwargs)

    def fn(*_):
        target = args[0].clone()
        out = info.inplace(target, *args[1:], **kwargs)
        assert out is target
        return out

    if not _inplace_applies(info, args, kwargs):
        # the result would not fit in self (it broadcasts self to a larger
        # shape or changes its dtype): the in-place form must refuse
        with pytest.raises((RuntimeError, TypeError)):
            info.inplace(args[0].detach().clone(), *args[1:], **kwargs)
        return
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def _inplace_applies(info, args, kwargs):
    try:
        expected = info.call(*args, **kwargs)
    except Exception:
        return False
    out = expected[0] if isinstance(expected, tuple) else expected
    return isinstance(out, ember.Tensor) and out.shape == args[0].shape and \
        out.dtype == args[0].dtype


def _non_differentiable(info):
    return not info.differentiable and info.samples


@pytest.mark.parametrize("info,sample,layout", sample_cases(_non_differentiable,
                                                            layouts=("contiguous",)))
def test_non_differentiable_results_have_no_grad_fn(info, sample, layout):
    args, kwargs = make_sample(sample, layout)
    for a in args:
        if isinstance(a, ember.Tensor) and a.is_floating_point():
            a.requires_grad_()
    out = info.call(*args, **kwargs)
    for o in out if isinstance(out, tuple) else (out,):
        assert o.grad_fn is None and not o.requires_grad


def test_every_table_op_has_samples_or_is_internal():
    """New ops come with samples, so that the tests above cover them."""
    missing = [name for name, info in OPS.items()
               if info.differentiable and info.call is not None and not info.samples
               and name not in ("to", "atleast_1d", "atleast_2d")]
    assert missing == []
