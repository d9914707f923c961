"""In-place operations under autograd: version counters, the leaf rules,
history rebasing, and writes through views (CopySlices)."""
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def leaf(*shape):
    return ember.randn(*shape, dtype=ember.float64, requires_grad=True)


MODIFIED = "one of the variables needed for gradient computation has been modified by " \
           "an inplace operation"


def test_modified_saved_output_names_the_op():
    x = ember.ones(2, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED + r": \[ember.FloatTensor \[2\]\], which "
                       r"is output 0 of ExpBackward0, is at version \d+; expected version \d+ "
                       r"instead"):
        y.sum().backward()


def test_modified_saved_leaf():
    w = ember.ones(3, requires_grad=True)
    z = ember.ones(3, requires_grad=True) * 1
    y = w * z
    with ember.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED + r": \[ember.FloatTensor \[3\]\] is at "
                       r"version \d+; expected version \d+ instead. Hint: MulBackward0 saved it"):
        y.sum().backward()


def test_modifying_a_view_bumps_the_shared_version():
    x = leaf(3)
    h = x * 1
    y = h * h
    h[0].mul_(2)  # through a view of h
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_unsaved_inputs_may_change():
    x = leaf(3)
    h = x * 1
    y = h + 1          # add saves nothing
    h.mul_(2)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_inplace_on_leaf_that_requires_grad():
    x = leaf(2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                       "in an in-place operation."):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x += 1
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                       "being used in an in-place operation."):
        x[0] = 1.0
    with ember.no_grad():  # what optimizers do
        x.add_(1)
        x[0] = 5.0
    assert x[0].item() == 5.0 and x.is_leaf and x.grad_fn is None


def test_inplace_rebases_history():
    x = leaf(3)
    y = x * 1
    version = y._version
    y.mul_(2)
    assert type(y.grad_fn).__name__ == "MulBackward0" and y._version == version + 1
    y.exp_()
    y.sum().backward()
    assert ember.allclose(x.grad, 2 * (2 * x.detach()).exp())


def test_inplace_with_grad_on_tensor_that_did_not_require_it():
    w = leaf(3)
    acc = ember.zeros(3, dtype=ember.float64)
    acc += w * 2
    assert acc.requires_grad and not acc.is_leaf
    acc.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_inplace_ops_match_out_of_place_gradients():
    def f(x, y):
        h = x.clone()
        # (sigmoid_ goes last: it saves its result, which a later write would change)
        h.mul_(y).add_(y, alpha=0.5).clamp_(min=-0.5).sigmoid_()
        return h
    assert gradcheck(f, (leaf(3, 4), leaf(4)))
    assert gradgradcheck(f, (leaf(3, 4), leaf(4)))


def test_setitem_routes_gradients():
    x, v = leaf(4, 3), leaf(3)
    y = x * 1
    y[1] = v
    y[2:, 0] = 0.0
    y.sum().backward()
    expected = [[1, 1, 1], [0, 0, 0], [0, 1, 1], [0, 1, 1]]
    assert x.grad.tolist() == expected and v.grad.tolist() == [1.0, 1.0, 1.0]


def test_setitem_advanced_index_gradcheck():
    def f(x, v):
        y = x.clone()
        y[ember.tensor([0, 2])] = v
        y[y > 10] = 0.0  # mask, selects nothing here
        return y * y
    assert gradcheck(f, (leaf(4, 3), leaf(3)))
    assert gradgradcheck(f, (leaf(4, 3), leaf(3)))


def test_writes_through_views_reach_the_base():
    def f(x, v):
        base = x * 1
        base[:, 1].mul_(v)           # a column view
        base.t()[0].add_(v[:2] * 3)  # a view of a view
        return base.exp()
    assert gradcheck(f, (leaf(2, 3), leaf(2)))
    assert gradgradcheck(f, (leaf(2, 3), leaf(2)))


def test_view_sees_base_history_after_base_changes():
    x = leaf(2, 3)
    base = x * 1
    row = base[0]
    base.mul_(3)  # written after the view was taken
    row.sum().backward()
    assert x.grad.tolist() == [[3, 3, 3], [0, 0, 0]]


def test_view_of_non_requiring_base_written_with_grad():
    w = leaf(3)
    buf = ember.zeros(2, 3, dtype=ember.float64)
    buf[1].copy_(w)
    assert buf.requires_grad
    (buf * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_detach_shares_storage_and_version():
    x = leaf(3)
    d = x.detach()
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    y = x * x
    before = x._version
    d.zero_()
    assert x._version == before + 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_detach_inplace_and_requires_grad_rules():
    x = leaf(3)
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                       "variables"):
        y.requires_grad_(False)
    y.detach_()
    assert y.is_leaf and not y.requires_grad
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (x * 1)[0].detach_()


def test_writing_a_no_grad_view_with_grad_mode_on_raises():
    x = leaf(2, 3)
    y = x * 2
    with ember.no_grad():
        row = y[0]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                       "modified inplace with grad mode enabled"):
        row.mul_(2)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        row[0] = 1.0
    with ember.no_grad():
        row.mul_(2)  # both inside no_grad: allowed, not tracked
