"""Every op of the table against PyTorch (where installed): the same
values forward and the same gradients backward, on the table's samples."""
import numpy as np
import pytest

import ember
from ember._ops import OPS

from conftest import leaves, make_sample, sample_cases

torch = pytest.importorskip("torch", exc_type=ImportError)


def _to_torch(x):
    if isinstance(x, ember.Tensor):
        t = torch.from_numpy(x.detach().numpy().copy())
        return t.requires_grad_() if x.requires_grad else t
    if isinstance(x, list):
        return [_to_torch(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_to_torch(v) for v in x)
    return x


def _torch_callable(info):
    if info.function is not None and hasattr(torch, info.torch):
        return getattr(torch, info.torch)
    return getattr(torch.Tensor, info.torch)


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _comparable(info):
    return info.torch is not None and info.samples and (
        hasattr(torch, info.torch) or hasattr(torch.Tensor, info.torch))


@pytest.mark.parametrize("info,sample,layout", sample_cases(_comparable, ("contiguous",)))
def test_matches_pytorch(info, sample, layout):
    args, kwargs = make_sample(sample, layout)
    t_args, t_kwargs = _to_torch(args), {k: _to_torch(v) for k, v in kwargs.items()}
    ours = _outputs(info.call(*args, **kwargs))
    theirs = _outputs(_torch_callable(info)(*t_args, **t_kwargs))
    assert len(ours) == len(theirs)
    rng = np.random.default_rng(7)
    loss_ours, loss_theirs = 0, 0
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape), info.name
        np.testing.assert_allclose(o.detach().numpy(), t.detach().resolve_conj().numpy(),
                                   rtol=1e-6, atol=1e-8, err_msg=info.name)
        if o.requires_grad:
            assert t.requires_grad
            if o.is_complex():  # a real loss of the (re, im) pairs
                o, t = ember.view_as_real(o), torch.view_as_real(t.resolve_conj())
            w = rng.standard_normal(tuple(o.shape))
            loss_ours = loss_ours + (o * ember.tensor(w)).sum()
            loss_theirs = loss_theirs + (t * torch.from_numpy(w)).sum()
        else:
            # PyTorch marks unique's outputs as requiring grad, but has no
            # derivative for them (backward raises NotImplementedError)
            assert not t.requires_grad or info.name in (
                "__getitem__", "unique", "unique_consecutive"), info.name
    if isinstance(loss_ours, int):
        return
    mine = leaves(args, kwargs)
    ref = [x for x in _flatten(t_args + list(t_kwargs.values()))
           if isinstance(x, torch.Tensor) and x.requires_grad]
    g_ours = ember.autograd.grad(loss_ours, mine, allow_unused=True)
    g_theirs = torch.autograd.grad(loss_theirs, ref, allow_unused=True)
    for a, b in zip(g_ours, g_theirs):
        if a is None or b is None:
            assert (a is None or not a.abs().sum().item()) and \
                (b is None or not b.abs().sum().item())
            continue
        np.testing.assert_allclose(a.numpy(), b.resolve_conj().numpy(), rtol=1e-6, atol=1e-8,
                                   err_msg=f"gradient of {info.name}")


def _flatten(xs):
    out = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out += _flatten(x)
        else:
            out.append(x)
    return out


def test_every_comparable_op_is_known_to_pytorch():
    """Names in the table match PyTorch's (or say torch=None)."""
    unknown = [name for name, info in OPS.items()
               if info.torch and info.call is not None and not name.startswith("_")
               and not hasattr(torch, info.torch) and not hasattr(torch.Tensor, info.torch)]
    assert unknown == []
