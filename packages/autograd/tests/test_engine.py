"""The engine and the graph: accumulation, retain_graph, create_graph,
autograd.grad, inputs=, hooks, retain_grad, long chains, freeing."""
import gc
import threading
import weakref

import pytest

import ember
from ember import autograd


def leaf(*values, dtype=ember.float64):
    return ember.tensor(list(values), dtype=dtype, requires_grad=True)


def test_leaf_gradients_accumulate_across_backward_calls():
    x = leaf(1.0, 2.0, 3.0)
    (x * 2).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0, 8.0]


def test_stored_gradient_never_aliases_other_tensors():
    x, y = leaf(1.0, 2.0), leaf(3.0, 4.0)
    g = ember.tensor([1.0, 1.0], dtype=ember.float64)
    (x + y).backward(g)
    x.grad.mul_(10)  # an optimizer may update .grad in place
    assert y.grad.tolist() == [1.0, 1.0] and g.tolist() == [1.0, 1.0]


def test_grad_fn_chain_and_next_functions():
    x = leaf(1.0, 2.0)
    y = x * 2 + 1
    assert type(y.grad_fn).__name__ == "AddBackward0" and y.grad_fn.name() == "AddBackward0"
    mul, nr = y.grad_fn.next_functions[0]
    assert type(mul).__name__ == "MulBackward0" and nr == 0
    assert y.grad_fn.next_functions[1] == (None, 0)  # the number 1
    acc = mul.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x
    assert acc.next_functions == ()
    assert x.is_leaf and not y.is_leaf and y.requires_grad


def test_grad_fn_is_callable():
    x = leaf(1.0, 2.0)
    y = x * 3
    assert y.grad_fn(ember.ones(2, dtype=ember.float64))[0].tolist() == [3.0, 3.0]


def test_backward_twice_through_freed_graph_raises():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                       "time .* Specify retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_graph_without_saved_tensors_backwards_twice():
    x = leaf(1.0, 2.0)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_saved_tensors_are_freed_after_backward():
    x = leaf(1.0, 2.0)
    h = x * 2
    ref = weakref.ref(h)
    y = (h * h).sum()  # MulBackward0 saves h
    del h
    gc.collect()
    assert ref() is not None
    y.backward()
    gc.collect()
    assert ref() is None


def test_non_scalar_backward_needs_a_gradient():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                       "outputs"):
        (x * 2).backward()
    (x * 2).backward(ember.tensor([1.0, 0.5], dtype=ember.float64))
    assert x.grad.tolist() == [2.0, 1.0]


def test_gradient_shape_must_match():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape "
                       r"of ember.Size\(\[3\]\) and output\[0\] has a shape of "
                       r"ember.Size\(\[2\]\)"):
        (x * 2).backward(ember.ones(3, dtype=ember.float64))


def test_backward_of_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and "
                       "does not have a grad_fn"):
        ember.ones(2).sum().backward()


def test_backward_of_a_leaf_sets_its_grad():
    x = leaf(5.0)
    x.backward()
    assert x.grad.tolist() == [1.0]


def test_several_outputs_at_once():
    x = leaf(1.0, 2.0)
    autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]


def test_broadcast_gradients_are_reduced_to_operand_shapes():
    a = ember.randn(3, 1, dtype=ember.float64, requires_grad=True)
    b = ember.randn(4, dtype=ember.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    assert ember.allclose(a.grad, b.detach().sum().expand(3, 1))
    assert ember.allclose(b.grad, a.detach().sum().expand(4))


def test_gradient_dtype_follows_each_input():
    a = ember.ones(2, dtype=ember.float32, requires_grad=True)
    b = ember.ones(2, dtype=ember.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is ember.float32 and b.grad.dtype is ember.float64


def test_int_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype "
                       "can require gradients"):
        ember.ones(2, dtype=ember.int64, requires_grad=True)


# ---- autograd.grad ---------------------------------------------------------
def test_autograd_grad_returns_without_accumulating():
    x = leaf(1.0, 2.0)
    (g,) = autograd.grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None and not g.requires_grad


def test_autograd_grad_of_a_non_leaf():
    x = leaf(1.0, 2.0)
    h = x * 3
    (g,) = autograd.grad((h * h).sum(), [h])
    assert g.tolist() == [6.0, 12.0]


def test_autograd_grad_unused_input():
    x, z = leaf(1.0), leaf(2.0)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors appears to not "
                       "have been used in the graph. Set allow_unused=True"):
        autograd.grad((x * 2).sum(), [x, z])
    gx, gz = autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gx.tolist() == [2.0] and gz is None
    gx, gz = autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0]


def test_autograd_grad_input_must_require_grad():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not "
                       "require grad"):
        autograd.grad((x * 2).sum(), [ember.ones(1)])


def test_create_graph_gives_higher_derivatives():
    x = leaf(2.0)
    y = x ** 3
    (dy,) = autograd.grad(y, x, create_graph=True)
    assert dy.requires_grad and dy.tolist() == [12.0]
    (d2y,) = autograd.grad(dy, x, create_graph=True)
    assert d2y.tolist() == [12.0]  # 6x
    (d3y,) = autograd.grad(d2y, x)
    assert d3y.tolist() == [6.0]


def test_hessian_vector_product_and_gradient_penalty():
    w = ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ember.float64, requires_grad=True)
    x = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    y = (w @ x).tanh().sum()
    (gx,) = autograd.grad(y, x, create_graph=True)
    penalty = (gx * gx).sum()
    penalty.backward()
    assert w.grad is not None and x.grad is not None
    # matches a finite-difference estimate of d penalty / d x
    assert autograd.gradcheck(
        lambda xx: (autograd.grad((w.detach() @ xx).tanh().sum(), xx, create_graph=True)[0]
                    ** 2).sum(), (x.detach().requires_grad_(),))


def test_backward_with_create_graph_keeps_the_grad_graph():
    x = leaf(3.0)
    (x ** 2).backward(create_graph=True)
    assert x.grad.requires_grad
    g = x.grad
    x.grad = None
    g.backward()
    assert x.grad.tolist() == [2.0]


def test_backward_inputs_limits_accumulation():
    a, b = leaf(1.0), leaf(2.0)
    (a * b).backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be "
                       "empty"):
        (a * b).backward(inputs=[])


def test_backward_inputs_accumulates_into_non_leaves():
    a = leaf(1.0)
    h = a * 2
    (h * h).backward(inputs=[h])
    assert h.grad.tolist() == [4.0] and a.grad is None


# ---- hooks and retain_grad ---------------------------------------------------
def test_retain_grad_on_non_leaf():
    x = leaf(1.0, 2.0)
    h = x * 2
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 8.0]


def test_non_leaf_grad_access_warns():
    x = leaf(1.0)
    h = x * 2
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf "
                      "Tensor is being accessed"):
        assert h.grad is None


def test_tensor_hooks_see_and_replace_gradients():
    x = leaf(1.0, 2.0)
    seen = []
    h = x * 2
    h.register_hook(lambda g: seen.append(g.tolist()))
    handle = x.register_hook(lambda g: g * 10)
    (h * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [60.0, 60.0]
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                       "require gradient"):
        ember.ones(1).register_hook(lambda g: g)


def test_node_hooks():
    x = leaf(1.0, 2.0)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda grads_out: calls.append("pre"))
    y.grad_fn.register_hook(lambda grads_in, grads_out: calls.append("post"))
    y.sum().backward()
    assert calls == ["pre", "post"]


# ---- graph shape ---------------------------------------------------------------
def test_long_chain_does_not_recurse():
    x = leaf(1.0)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]
    del y  # freeing a 100 000-node graph must not recurse either


def test_diamond_graph_sums_both_paths():
    x = leaf(2.0)
    a = x * 3
    y = a * a + a
    y.backward()
    assert x.grad.tolist() == [3 * (2 * 6 + 1)]


def test_grad_mode_is_thread_local():
    results = []
    x = leaf(1.0)

    def worker():
        results.append((x * 2).requires_grad)

    with ember.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        results.append((x * 2).requires_grad)
    assert results == [True, False]


def test_post_accumulate_grad_hook():
    x = leaf(1.0, 2.0)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                       "non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_inplace_view_ops():
    x = leaf(1.0, 2.0)
    y = x * 1
    y.unsqueeze_(0).t_()
    assert y.shape == (2, 1) and type(y.grad_fn).__name__ == "TBackward0"
    (y * ember.tensor([[1.0], [2.0]], dtype=ember.float64)).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0]
    z = ember.zeros(3, 1)
    assert z.squeeze_().shape == (3,) and z.transpose_(0, 0).shape == (3,)
