"""DistributedDataParallel on a small CNN for 20 steps equals one process
training on the concatenated batch: plainly, with no_sync() accumulation,
and with an unused parameter (find_unused_parameters=True); several small
buckets and one default bucket."""
import copy

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
B, STEPS = 3, 20


class Net(nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 3 * 3, 5)
        if unused:
            self.spare = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(F.max_pool2d(F.relu(self.conv(x)), 2).flatten(1))


def batch(step, micro=0):
    rng = np.random.default_rng(100 * step + micro)
    x = rng.standard_normal((N * B, 1, 8, 8))
    y = rng.integers(0, 5, N * B)
    return ember.tensor(x, dtype=ember.float64), ember.tensor(y)


def train(model, micro_steps, ddp):
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(STEPS):
        opt.zero_grad()
        for m in range(micro_steps):
            x, y = batch(step, m)
            if ddp is not None:      # this rank's share of the batch
                x, y = x[R * B:(R + 1) * B], y[R * B:(R + 1) * B]
                ctx = ddp.no_sync() if m < micro_steps - 1 else _null()
                with ctx:
                    F.cross_entropy(ddp(x), y).backward()
            else:
                F.cross_entropy(model(x), y).backward()
        opt.step()


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def case(micro_steps, unused, cap):
    ember.manual_seed(R)               # different on every rank: DDP copies rank 0's
    model = Net(unused).double()
    ddp = DDP(model, bucket_cap_mb=cap, find_unused_parameters=unused)
    ref = copy.deepcopy(model)         # rank 0's initial weights, one process
    train(model, micro_steps, ddp)
    train(ref, micro_steps, None)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        if unused and name.startswith("spare"):
            assert p.grad is None and q.grad is None, name
        assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-9, atol=1e-11), \
            f"rank {R} {name} micro={micro_steps} unused={unused} cap={cap}: " \
            f"{np.abs(p.detach().numpy() - q.detach().numpy()).max()}"
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]
    assert ddp.module is model
    return ddp


case(1, False, None)
ddp = case(1, False, 0.0005)          # several buckets (0.0005 MB each)
assert len(ddp._buckets) > 2
case(2, False, 0.0005)                 # no_sync accumulation
case(1, True, 0.0005)                  # an unused parameter

# an unused parameter without find_unused_parameters: the next forward says so
model = Net(unused=True).double()
ddp = DDP(model)
x, y = batch(0)
F.cross_entropy(ddp(x[:B]), y[:B]).backward()
try:
    ddp(x[:B])
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e)
else:
    raise AssertionError("no error for an unused parameter")
dist.barrier()
dist.destroy_process_group()
print(f"rank {R} DONE", flush=True)
