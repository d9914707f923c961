"""Inputs PyTorch refuses are refused with its error type and wording (they
used to hang, or to return a wrong result quietly), and small signature
gaps of the front."""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember


def raises(kind, message):
    return pytest.raises(kind, match="^" + re.escape(message) + "$")


def run_python(code, timeout=60):
    """Runs code in a fresh interpreter: a hang fails on the timeout, a crash
    on the exit status."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


# ---- nested lists ------------------------------------------------------------------
def test_self_referential_list_raises_instead_of_hanging():
    out = run_python("""
        import ember
        a = []
        a.append(a)
        for make in (ember.tensor, ember.as_tensor, ember.th.tensor):
            try:
                make(a)
            except ValueError as e:
                print(e)
    """)
    assert out.splitlines() == ["too many dimensions 'list'"] * 3


def test_deeply_nested_list_raises_value_error():
    deep = 1.0
    for _ in range(100_000):
        deep = [deep]
    with raises(ValueError, "too many dimensions 'list'"):
        ember.tensor(deep)
    inner = ember.ones(())
    for _ in range(100_000):
        inner = [inner]
    with raises(ValueError, "too many dimensions 'list'"):
        ember.tensor(inner)   # a tensor inside: the front's own walk


def test_nesting_up_to_max_dims_still_works():
    x = 2.0
    for _ in range(16):
        x = [x]
    t = ember.tensor(x)
    assert t.shape == (1,) * 16 and t.item() == 2.0
    assert ember.tensor([[ember.tensor(1.0), 2.0]]).tolist() == [[1.0, 2.0]]


# ---- eye, gather / scatter --------------------------------------------------------
def test_eye_negative_m():
    with raises(RuntimeError, "m must be greater or equal to 0, got -2"):
        ember.eye(3, -2)
    with raises(RuntimeError, "n must be greater or equal to 0, got -1"):
        ember.eye(-1)
    assert ember.eye(3, 0).shape == (3, 0)
    assert ember.eye(2).tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize("call", [
    lambda x, i: ember.gather(x, 0, i),
    lambda x, i: x.scatter(0, i, ember.ones(1)),
    lambda x, i: x.scatter(0, i, 5.0),
    lambda x, i: x.scatter_add(0, i, ember.ones(1)),
    lambda x, i: x.scatter_reduce(0, i, ember.ones(1), "amax"),
    lambda x, i: x.clone().scatter_(0, i, ember.ones(1)),
], ids=["gather", "scatter", "scatter_value", "scatter_add", "scatter_reduce", "scatter_"])
def test_gather_scatter_refuse_negative_indices(call):
    x = ember.arange(3.)
    with raises(RuntimeError, "index -1 is out of bounds for dimension 0 with size 3"):
        call(x, ember.tensor([-1]))
    with raises(RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"):
        call(x, ember.tensor([3]))
    assert x.tolist() == [0., 1., 2.]


def test_index_select_index_add_index_copy_refuse_negative_indices():
    x = ember.zeros(3)
    with raises(IndexError, "index out of range in self"):
        x.index_select(0, ember.tensor([-1]))
    with raises(IndexError, "index out of range in self"):
        x.index_add(0, ember.tensor([-1]), ember.ones(1))
    with raises(IndexError, "index_copy_(): index -1 is out of bounds for dimension 0 with "
                            "size 3"):
        x.index_copy(0, ember.tensor([-1]), ember.ones(1))
    # as PyTorch, these wrap negative indices
    assert x.index_fill(0, ember.tensor([-1]), 1.0).tolist() == [0, 0, 1]
    assert x.take(ember.tensor([-1])).tolist() == [0]
    assert x.put(ember.tensor([-1]), ember.ones(1)).tolist() == [0, 0, 1]
    assert x.index_put((ember.tensor([-1]),), ember.ones(1)).tolist() == [0, 0, 1]
    assert x.tolist() == [0, 0, 0]


def test_gather_gradient_with_valid_indices():
    x = ember.arange(6.).reshape(2, 3).requires_grad_()
    i = ember.tensor([[2, 0], [1, 1]])
    y = x.gather(1, i)
    assert y.tolist() == [[2., 0.], [4., 4.]]
    y.sum().backward()
    assert x.grad.tolist() == [[1., 0., 1.], [0., 2., 0.]]


# ---- smaller gaps ------------------------------------------------------------------
def test_flip_and_tile_take_varargs():
    t = ember.arange(6.).reshape(2, 3)
    ref = np.arange(6.).reshape(2, 3)
    for args in [(0, 1), ((0, 1),), ([0, 1],), (1,), (-1,)]:
        dims = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
        assert t.flip(*args).tolist() == np.flip(ref, dims).tolist()
    assert ember.flip(t, (0,)).tolist() == np.flip(ref, 0).tolist()
    assert t.tile(2).shape == (2, 6)
    assert t.tile(2, 1, 1).shape == (2, 2, 3)
    assert t.tile((2, 1)).tolist() == np.tile(ref, (2, 1)).tolist()
    assert ember.tile(t, (2,)).tolist() == np.tile(ref, 2).tolist()
    x = ember.arange(4.).requires_grad_()
    x.flip(0).mul(ember.arange(4.)).sum().backward()
    assert x.grad.tolist() == [3., 2., 1., 0.]


def test_searchsorted_sorter():
    seq = ember.tensor([3., 1., 2.])
    sorter = ember.tensor([1, 2, 0])
    assert ember.searchsorted(seq, ember.tensor([2., 0.5, 9.]), sorter=sorter).tolist() == \
        [1, 0, 3]
    assert ember.searchsorted(seq, ember.tensor([2.]), sorter=sorter, right=True).tolist() \
        == [2]
    with raises(RuntimeError, "torch.searchsorted(): sorter index out of range"):
        ember.searchsorted(seq, ember.tensor([2.]), sorter=ember.tensor([1, 5, 0]))


def test_median_of_empty():
    assert np.isnan(ember.empty(0).median().item())
    assert np.isnan(ember.empty(0, 3).nanmedian().item())
    with raises(IndexError, "median(): Expected reduction dim 0 to have non-zero size."):
        ember.empty(0).median(0)
    assert ember.tensor([3., 1., 2.]).median().item() == 2.


def test_movedim_repeated_dims():
    t = ember.ones(2, 3, 4)
    with raises(RuntimeError, "movedim: repeated dim in `source` ([0, 0])"):
        t.movedim((0, 0), (1, 2))
    with raises(RuntimeError, "movedim: repeated dim in `destination` ([2, 2])"):
        t.movedim((0, 1), (2, -1))
    assert t.movedim((0, 1), (2, 0)).shape == (3, 4, 2)


@pytest.mark.parametrize("call, message", [
    (lambda x: ember.ldexp(x, 2), "ldexp(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda x: x.ldexp(2.0), "ldexp(): argument 'other' (position 2) must be Tensor, not float"),
    (lambda x: x.ldexp_(2), "ldexp_(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda x: ember.ldexp(2, x), "ldexp(): argument 'input' (position 1) must be Tensor, not int"),
])
def test_ldexp_refuses_a_number_operand(call, message):
    x = ember.tensor([1.5, -0.25])
    with raises(TypeError, message):
        call(x)
    assert x.tolist() == [1.5, -0.25]
    assert ember.ldexp(x, ember.tensor([2, -1])).tolist() == [6.0, -0.125]
