"""ember.linalg on CUDA tensors (ember.thc stages the LAPACK routines
through host memory): every routine's results on the operands' device and
equal to the CPU's, gradients on the device, PyTorch's errors.  Runs where
ember-thc has a device: a GPU, or the emulated device (the `thc-emulated`
tox env); skips elsewhere."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(),
                                reason="no CUDA device (nor ember-thc's emulated device)")

RNG = np.random.default_rng(20261129)


def mat(*shape, spd=False, dtype=ember.float64):
    a = RNG.standard_normal(shape)
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return ember.tensor(a, dtype=dtype)


def both(fn, *tensors):
    """fn on the CPU tensors and on their CUDA copies: (cpu result, cuda result)."""
    return fn(*tensors), fn(*(t.cuda() for t in tensors))


def same(cpu, gpu, rtol=1e-10, atol=1e-12):
    if isinstance(cpu, tuple):
        assert isinstance(gpu, tuple) and len(cpu) == len(gpu)
        if hasattr(cpu, "_fields"):
            assert type(gpu)._fields == type(cpu)._fields
        for c, g in zip(cpu, gpu):
            same(c, g, rtol, atol)
        return
    assert gpu.is_cuda and gpu.dtype is cpu.dtype and gpu.shape == cpu.shape
    np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name, fn, shapes, spd", [
    ("solve", ember.linalg.solve, [(3, 4, 4), (3, 4, 2)], False),
    ("solve broadcast", ember.linalg.solve, [(4, 4), (2, 4, 3)], False),
    ("inv", ember.linalg.inv, [(2, 5, 5)], False),
    ("inv_ex", ember.linalg.inv_ex, [(5, 5)], False),
    ("det", ember.linalg.det, [(3, 4, 4)], False),
    ("slogdet", ember.linalg.slogdet, [(3, 4, 4)], False),
    ("cholesky", ember.linalg.cholesky, [(2, 4, 4)], True),
    ("cholesky upper", lambda a: ember.linalg.cholesky(a, upper=True), [(4, 4)], True),
    ("qr", ember.linalg.qr, [(2, 5, 3)], False),
    ("qr complete", lambda a: ember.linalg.qr(a, mode="complete"), [(5, 3)], False),
    ("svdvals", ember.linalg.svdvals, [(2, 4, 6)], False),
    ("eigvalsh", ember.linalg.eigvalsh, [(3, 4, 4)], True),
    ("lstsq", lambda a, b: ember.linalg.lstsq(a, b).solution, [(6, 3), (6, 2)], False),
    ("lu_factor", ember.linalg.lu_factor, [(2, 4, 4)], False),
    ("lu", ember.linalg.lu, [(4, 3)], False),
    ("solve_triangular", lambda a, b: ember.linalg.solve_triangular(a.triu(), b, upper=True),
     [(4, 4), (4, 2)], True),
    ("pinv", ember.linalg.pinv, [(5, 3)], False),
    ("matrix_rank", ember.linalg.matrix_rank, [(2, 4, 4)], False),
    ("cond", ember.linalg.cond, [(4, 4)], True),
    ("matrix_norm nuc", lambda a: ember.linalg.matrix_norm(a, "nuc"), [(3, 5)], False),
    ("cholesky_solve", lambda a, b: ember.cholesky_solve(b, ember.linalg.cholesky(a)),
     [(4, 4), (4, 2)], True),
])
def test_routine_on_the_device_equals_the_cpu(name, fn, shapes, spd):
    tensors = [mat(*s, spd=spd and i == 0) for i, s in enumerate(shapes)]
    cpu, gpu = both(fn, *tensors)
    same(cpu, gpu)


def test_decompositions_reconstruct_on_the_device():
    a = mat(3, 5, 4).cuda()
    U, S, Vh = ember.linalg.svd(a, full_matrices=False)
    assert U.is_cuda and S.is_cuda and Vh.is_cuda
    np.testing.assert_allclose((U * S.unsqueeze(-2) @ Vh).cpu().numpy(), a.cpu().numpy(),
                               atol=1e-12)
    s = mat(2, 4, 4, spd=True).cuda()
    w, V = ember.linalg.eigh(s)
    np.testing.assert_allclose((V * w.unsqueeze(-2) @ V.mT).cpu().numpy(), s.cpu().numpy(),
                               atol=1e-10)
    LU, piv = ember.linalg.lu_factor(s)
    b = mat(2, 4, 3).cuda()
    x = ember.linalg.lu_solve(LU, piv, b)
    np.testing.assert_allclose((s @ x).cpu().numpy(), b.cpu().numpy(), atol=1e-10)


def test_float32_and_empty_and_non_contiguous():
    a = mat(4, 4, dtype=ember.float32)
    cpu, gpu = both(ember.linalg.inv, a)
    same(cpu, gpu, rtol=1e-5, atol=1e-6)
    assert ember.linalg.inv(ember.zeros(0, 3, 3, device="cuda")).shape == (0, 3, 3)
    t = mat(4, 4).cuda().mT                 # a transposed view
    np.testing.assert_allclose(ember.linalg.det(t).cpu().numpy(),
                               np.linalg.det(t.cpu().numpy()), rtol=1e-12)


def test_gradients_on_the_device():
    a = mat(3, 3, spd=True).cuda().requires_grad_()
    b = mat(3, 2).cuda().requires_grad_()
    assert gradcheck(ember.linalg.solve, (a, b))
    # the symmetric routines read one triangle: differentiate through a symmetric input
    assert gradcheck(lambda x: ember.linalg.cholesky((x + x.mT) / 2), (a,))
    assert gradcheck(lambda x: ember.linalg.eigvalsh((x + x.mT) / 2), (a,))
    assert gradgradcheck(ember.linalg.inv, (a,))
    c = mat(4, 3).cuda().requires_grad_()
    assert gradcheck(ember.linalg.svdvals, (c,))
    (ember.linalg.det(a) * 2).backward()
    assert a.grad.is_cuda


def test_errors_are_pytorchs():
    singular = ember.ones(3, 3, device="cuda", dtype=ember.float64)
    with pytest.raises(ember.linalg.LinAlgError, match="singular"):
        ember.linalg.inv(singular)
    with pytest.raises(ember.linalg.LinAlgError, match="positive-definite"):
        ember.linalg.cholesky(-ember.eye(3, device="cuda", dtype=ember.float64))
    _, info = ember.linalg.inv_ex(singular)
    assert info.is_cuda and info.item() > 0
    with pytest.raises(RuntimeError, match="same device"):
        ember.linalg.solve(mat(3, 3).cuda(), mat(3, 1))
    # shape errors are the CPU's, word for word
    for fn, shape in ((ember.linalg.inv, (2, 3)), (ember.linalg.cholesky, (3,)),
                      (ember.linalg.det, (4, 2, 3))):
        with pytest.raises(RuntimeError) as on_cpu:
            fn(ember.zeros(*shape, dtype=ember.float64))
        with pytest.raises(type(on_cpu.value)) as on_gpu:
            fn(ember.zeros(*shape, dtype=ember.float64, device="cuda"))
        assert str(on_gpu.value) == str(on_cpu.value)


def test_orthogonal_init_on_the_device():
    nn = pytest.importorskip("ember.nn")
    w = ember.empty(6, 4, device="cuda")
    nn.init.orthogonal_(w)
    assert w.is_cuda
    np.testing.assert_allclose((w.mT @ w).cpu().numpy(), np.eye(4), atol=1e-5)
