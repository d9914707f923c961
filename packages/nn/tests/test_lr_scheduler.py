"""LR schedulers step for step against torch.optim.lr_scheduler (where
installed) and against their closed forms; state_dict round trips."""
import math

import pytest

import ember
import ember.nn as nn
import ember.optim as optim
from ember.optim import lr_scheduler as S

from conftest import torch

EPOCHS = 30

SCHEDULERS = [
    ("StepLR", lambda m, o: m.StepLR(o, step_size=4, gamma=0.5)),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.3)),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.9)),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=8, eta_min=0.01)),
    ("LambdaLR", lambda m, o: m.LambdaLR(o, lambda e: 0.95 ** e + 0.01 * e)),
    ("LinearLR", lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9,
                                         total_iters=6)),
    ("MultiplicativeLR", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 + 0.01 * e)),
    ("ConstantLR", lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=4)),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0)),
    ("CosineAnnealingWarmRestarts", lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001)),
    ("CyclicLR", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4,
                                         step_size_down=3)),
    ("CyclicLR-triangular2", lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                     mode="triangular2")),
    ("CyclicLR-exp-range", lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                   mode="exp_range", gamma=0.9)),
    ("SequentialLR", lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.5, total_iters=3),
                                                     m.ExponentialLR(o, 0.9),
                                                     m.StepLR(o, 3, 0.5)],
                                                 milestones=[4, 10])),
    ("OneCycleLR", lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=EPOCHS + 1)),
    ("OneCycleLR-3phase-linear", lambda m, o: m.OneCycleLR(
        o, max_lr=0.8, epochs=4, steps_per_epoch=8, anneal_strategy="linear",
        three_phase=True)),
]


def _optimizer(lib, adam=False):
    if lib is torch:
        a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))
        cls = torch.optim.Adam if adam else torch.optim.SGD
    else:
        a, b = nn.Parameter(ember.ones(2)), nn.Parameter(ember.ones(3))
        cls = optim.Adam if adam else optim.SGD
    kw = {} if adam else {"momentum": 0.9}
    return cls([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=0.1, **kw)


def _trace(lib, sched_mod, build, adam=False):
    opt = _optimizer(lib, adam)
    sched = build(sched_mod, opt)
    lrs, moms = [], []
    for _ in range(EPOCHS):
        opt.step()
        sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
        moms.append([g["betas"][0] if adam else g["momentum"] for g in opt.param_groups])
    return lrs, moms, sched.get_last_lr()


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("adam", [False, True])
@pytest.mark.parametrize("name,build", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_matches_torch(name, build, adam):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _trace(torch, torch.optim.lr_scheduler, build, adam)
    got = _trace(ember, S, build, adam)
    for a, b in zip(got[0], want[0]):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
    for a, b in zip(got[1], want[1]):
        assert a == pytest.approx(b, rel=1e-12)
    assert got[2] == pytest.approx(want[2], rel=1e-12)


def test_closed_forms():
    opt = _optimizer(ember)
    sched = S.CosineAnnealingLR(opt, T_max=10, eta_min=0.0)
    for epoch in range(1, 11):
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] == pytest.approx(
            0.05 * (1 + math.cos(math.pi * epoch / 10)), abs=1e-12)
    opt = _optimizer(ember)
    sched = S.StepLR(opt, 3, 0.1)
    lrs = []
    for _ in range(7):
        lrs.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001])


@pytest.mark.parametrize("name,build", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_state_dict_round_trip(name, build):
    opt = _optimizer(ember)
    sched = build(S, opt)
    for _ in range(5):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state
    opt2 = _optimizer(ember)   # the usual resume order: build, then load both
    sched2 = build(S, opt2)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(state)
    for _ in range(5):
        opt.step()
        sched.step()
        opt2.step()
        sched2.step()
        assert sched2.get_last_lr() == pytest.approx(sched.get_last_lr(), rel=1e-12)


def test_reduce_lr_on_plateau():
    opt = _optimizer(ember)
    sched = S.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1,
                                min_lr=[0.0, 0.2])
    lrs = []
    for metric in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.8]:
        sched.step(metric)
        lrs.append([g["lr"] for g in opt.param_groups])
    # 3 bad epochs after 0.9 -> halve at the 5th step; 1 epoch of cooldown, 3
    # more bad ones -> halve at the 9th
    assert [x[0] for x in lrs] == pytest.approx([0.1] * 4 + [0.05] * 4 + [0.025] * 2)
    assert lrs[-1][1] == pytest.approx(0.2)
    if torch is not None:
        topt = _optimizer(torch)
        ts = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, mode="min", factor=0.5,
                                                        patience=2, cooldown=1,
                                                        min_lr=[0.0, 0.2])
        want = []
        for metric in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.8]:
            ts.step(metric)
            want.append([g["lr"] for g in topt.param_groups])
        assert lrs == want
    state = sched.state_dict()
    sched2 = S.ReduceLROnPlateau(_optimizer(ember))
    sched2.load_state_dict(state)
    assert sched2.best == sched.best and sched2.patience == 2


def test_scheduler_errors():
    opt = _optimizer(ember)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), 3)
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        S.ReduceLROnPlateau(opt, factor=2.0)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        S.OneCycleLR(opt, max_lr=1.0)
    sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of "
                                         "total steps is 2"):
        sched.step()
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified"):
        S.StepLR(_optimizer(ember), 3, last_epoch=4)
