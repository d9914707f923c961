"""Bad arguments raise PyTorch's errors (the same on every rank where the
arguments differ across ranks), and the group still works afterwards."""
import datetime

import ember
import ember.distributed as dist


def raises(exc, text, fn):
    try:
        fn()
    except exc as e:
        assert text in str(e), f"rank {R}: {text!r} not in {e!r}"
        return
    except Exception as e:
        raise AssertionError(f"rank {R}: expected {exc.__name__}({text!r}), got {e!r}")
    raise AssertionError(f"rank {R}: expected {exc.__name__}({text!r}), nothing raised")


raises(ValueError, "Default process group has not been initialized",
       lambda: dist.all_reduce(ember.ones(2)))
raises(ValueError, "Default process group has not been initialized", dist.get_rank)
raises(AssertionError, "Unknown backend type foo", lambda: dist.init_process_group("foo"))
raises(TypeError, "Expected timeout argument to be of type datetime.timedelta",
       lambda: dist.init_process_group("mpi", timeout=5))
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
R, N = dist.get_rank(), dist.get_world_size()
raises(ValueError, "trying to initialize the default process group twice!",
       lambda: dist.init_process_group("mpi"))

# differ across ranks: every rank raises the same error, naming the rank
raises(RuntimeError, "all_reduce: invalid tensor size on rank 1 (expected (4) as on rank 0, "
       "got (5))", lambda: dist.all_reduce(ember.ones(4 + (R == 1))))
raises(RuntimeError, "broadcast: invalid tensor type on rank 1 (expected ember.float32 as on "
       "rank 0, got ember.float64)",
       lambda: dist.broadcast(ember.ones(4, dtype=ember.float64 if R == 1 else ember.float32),
                              0))
raises(RuntimeError, "rank 1 reduces with ReduceOp.MAX where rank 0 uses ReduceOp.SUM",
       lambda: dist.all_reduce(ember.ones(2), op=dist.ReduceOp.MAX if R == 1 else
                               dist.ReduceOp.SUM))
raises(RuntimeError, "rank 1 called barrier where rank 0 called all_reduce",
       lambda: dist.barrier() if R == 1 else dist.all_reduce(ember.ones(2)))
raises(RuntimeError, "rank 1 names root rank 1 where rank 0 names 0",
       lambda: dist.broadcast(ember.ones(2), src=0 if R != 1 else 1))
# wrong on this rank alone: PyTorch's local errors
raises(RuntimeError, f"invalid root rank: {N}", lambda: dist.broadcast(ember.ones(2), N))
raises(RuntimeError, "invalid root rank: -1", lambda: dist.reduce(ember.ones(2), -1))
raises(RuntimeError, f"invalid root rank: {N + 3}", lambda: dist.send(ember.ones(2), N + 3))
raises(RuntimeError, "Cannot use ReduceOp.BAND with non-integral dtype",
       lambda: dist.all_reduce(ember.ones(2), op=dist.ReduceOp.BAND))
raises(RuntimeError, "result type Float can't be cast to the desired output type Int",
       lambda: dist.all_reduce(ember.ones(2, dtype=ember.int32), op=dist.ReduceOp.AVG))
raises(TypeError, "Expected parameter `tensor` of type torch.Tensor",
       lambda: dist.all_reduce([1, 2]))
raises(RuntimeError, f"invalid output tensor list at index 0 (expected length {N}, got 1)",
       lambda: dist.all_gather([ember.ones(2)], ember.ones(2)))
raises(RuntimeError, "invalid tensor size at index 0 (expected (2,), got (3,))",
       lambda: dist.all_gather([ember.ones(3)] * N, ember.ones(2)))
raises(ValueError, "Invalid usage of tensors with different dtypes",
       lambda: dist.all_gather([ember.ones(2, dtype=ember.float64)] * N, ember.ones(2)))
raises(RuntimeError, "all_gather_into_tensor: invalid tensor size",
       lambda: dist.all_gather_into_tensor(ember.ones(3), ember.ones(2)))
raises(ValueError, "input tensor must be the same size as output size times world size",
       lambda: dist.reduce_scatter_tensor(ember.ones(3), ember.ones(2)))
raises(ValueError, "Argument ``gather_list`` must be specified on destination rank.",
       lambda: dist.gather(ember.ones(2), None, dst=R))
raises(ValueError, "Argument ``scatter_list`` must be specified on source rank.",
       lambda: dist.scatter(ember.ones(2), None, src=R))
raises(ValueError, "Tensor's dim 0 does not divide equally across group size",
       lambda: dist.all_to_all_single(ember.ones(N + 1), ember.ones(N + 1)))
raises(ValueError, "Invalid destination rank", lambda: dist.send(ember.ones(2), R))
raises(ValueError, "The new group's rank should be within the world_size",
       lambda: dist.new_group([0, N]))
# the data of a call that failed is left alone
keep = ember.arange(4.)
raises(RuntimeError, "invalid tensor size on rank 1",
       lambda: dist.all_reduce(keep if R != 1 else ember.ones(5)))
assert keep.tolist() == [0.0, 1.0, 2.0, 3.0], keep
# DistributedSampler takes its rank and replica count from the group
from ember.utils.data.distributed import DistributedSampler  # noqa: E402
s = DistributedSampler(range(10), shuffle=False)
assert (s.rank, s.num_replicas, list(s)) == (R, N, list(range(R, 10, N))), list(s)
# and the group still works
x = ember.ones(3)
dist.all_reduce(x)
assert x.tolist() == [float(N)] * 3
dist.destroy_process_group()
raises(AssertionError, "Process group cannot be None", dist.destroy_process_group)
print(f"rank {R} DONE", flush=True)
