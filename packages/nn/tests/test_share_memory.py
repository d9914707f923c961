"""Module.share_memory() puts parameters and buffers in shared memory that a
child process writes through."""
import multiprocessing as mp

import ember
import ember.nn as nn


def _bump(model):
    with ember.no_grad():
        for p in model.parameters():
            p.add_(1.0)


def test_share_memory_is_seen_by_a_child_process():
    import ember.multiprocessing as emp
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    before = [p.detach().clone() for p in model.parameters()]
    assert model.share_memory() is model
    assert all(t.is_shared() for t in list(model.parameters()) + list(model.buffers()))
    ctx = emp.get_context("fork")
    proc = ctx.Process(target=_bump, args=(model,))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0
    for b, p in zip(before, model.parameters()):
        assert ember.allclose(p.detach(), b + 1.0)
