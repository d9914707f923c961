"""CUDA tensors (on the emulated device under EMBER_THC_EMULATE=1): staged
through host memory, the results on the device."""
import numpy as np

import ember
import ember.distributed as dist

assert ember.cuda.is_available()
dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
for dt in (ember.float32, ember.float16, ember.int64):
    x = ember.full((4, 3), R + 1, dtype=dt, device="cuda")
    dist.all_reduce(x)
    assert x.device.type == "cuda" and x.cpu().tolist() == [[N * (N + 1) / 2] * 3] * 4, x
    xt = ember.arange(12, device="cuda").to(dt).reshape(3, 4).t()     # non-contiguous
    w = dist.all_reduce(xt, op=dist.ReduceOp.MAX, async_op=True)
    w.wait()
    assert np.array_equal(xt.cpu().to(ember.float64).numpy(), np.arange(12.).reshape(3, 4).T)
    b = ember.full((5,), float(R), device="cuda").to(dt)
    dist.broadcast(b, src=N - 1)
    assert b.cpu().tolist() == [N - 1] * 5
    out = ember.zeros(N * 2, device="cuda").to(dt)
    dist.all_gather_into_tensor(out, ember.full((2,), float(R), device="cuda").to(dt))
    assert out.cpu().tolist() == [r for r in range(N) for _ in range(2)]
    if R == 0:
        dist.send(ember.arange(3, device="cuda").to(dt), 1)
    elif R == 1:
        t = ember.zeros(3, device="cuda").to(dt)
        assert dist.recv(t, 0) == 0 and t.cpu().tolist() == [0, 1, 2]
dist.barrier()
dist.destroy_process_group()
print(f"rank {R} DONE", flush=True)
