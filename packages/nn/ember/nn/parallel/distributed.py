"""DistributedDataParallel: one model replica per process (ember-distributed's
process group); each backward averages the gradients across the ranks.

Gradients are averaged in buckets of about bucket_cap_mb: the parameters,
in reverse order of registration (roughly the order backward produces
their gradients), fill buckets; when every gradient of a bucket has been
accumulated (a post-accumulate-grad hook per parameter), the bucket's
all-reduce starts asynchronously while backward goes on, and the hook of
the last gradient waits for all of them and writes the averages back."""
import contextlib

import ember

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


def _dist():
    import ember.distributed as dist
    if not dist.is_available():
        raise RuntimeError("DistributedDataParallel needs ember-distributed (the "
                           "ember.distributed package on MPI), which is not installed: "
                           "install packages/distributed (pip install ember-distributed)")
    return dist


def _tensors_in(obj):
    if isinstance(obj, ember.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)


class _Bucket:
    __slots__ = ("params", "pending", "flat", "work")

    def __init__(self, params):
        self.params = params
        self.pending = 0
        self.flat = None
        self.work = None


class DistributedDataParallel(Module):
    """Wraps module for data-parallel training across the ranks of
    process_group (the default group): parameters and buffers are copied
    from rank 0 at construction, buffers again before each forward
    (broadcast_buffers), and backward averages the gradients."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        super().__init__()
        dist = _dist()
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.dim = dim
        self.device_ids = device_ids
        self.output_device = output_device
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._params = params
        self._world = dist.get_world_size(process_group)
        # the same model on every rank: shapes and dtypes compared once
        shapes = [(tuple(p.shape), str(p.dtype)) for p in params]
        every = [None] * self._world
        dist.all_gather_object(every, shapes, group=process_group)
        for r, s in enumerate(every):
            if s != shapes:
                raise RuntimeError(f"DDP expects same model across all ranks, but rank {r} has "
                                   f"{len(s)} params, while rank "
                                   f"{dist.get_rank(process_group)} has inconsistent "
                                   f"{len(shapes)} params or shapes.")
        self._sync_from_rank0(list(module.parameters()) + list(module.buffers()))
        self._buckets = self._make_buckets(params)
        self._bucket_of = {}
        for b in self._buckets:
            for p in b.params:
                self._bucket_of[id(p)] = b
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._expect_backward = False
        self._launched = 0
        self._used = None

    # ---- construction ------------------------------------------------------------
    def _sync_from_rank0(self, tensors):
        dist = _dist()
        root = dist.get_process_group_ranks(self.process_group)[0] \
            if self.process_group is not None else 0
        works = [dist.broadcast(t.detach(), src=root, group=self.process_group, async_op=True)
                 for t in tensors]
        for w in works:
            if w is not None:
                w.wait()

    def _make_buckets(self, params):
        buckets, current, size = [], [], 0
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > self.bucket_bytes_cap or
                            p.dtype != current[0].dtype or p.device != current[0].device):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    # ---- forward -----------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._expect_backward and self.require_backward_grad_sync and \
                self._launched < len(self._buckets):
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`.")
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                self._sync_from_rank0(buffers)
        out = self.module(*inputs, **kwargs)
        self._prepare(out)
        return out

    def _prepare(self, out):
        """Resets the buckets for the backward of out."""
        sync = ember.is_grad_enabled() and self.require_backward_grad_sync
        self._expect_backward = sync
        self._launched = 0
        self._used = None
        for b in self._buckets:
            b.pending = len(b.params)
            b.flat = b.work = None
        if not sync or not self.find_unused_parameters:
            return
        # parameters that out's graph does not reach get no gradient: they
        # count as ready now (contributing zeros)
        reached, seen = set(), set()
        stack = [t.grad_fn for t in _tensors_in(out) if t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                reached.add(id(var))
            stack.extend(n for n, _ in node.next_functions)
        self._used = [id(p) in reached for p in self._params]
        for p, used in zip(self._params, self._used):
            if not used:
                self._mark_ready(p)

    # ---- backward ----------------------------------------------------------------
    def _grad_ready(self, p):
        if self._expect_backward and self.require_backward_grad_sync:
            self._mark_ready(p)
            for b in self._buckets:      # lets MPI progress the all-reduces in flight
                if b.work is not None:
                    b.work.is_completed()

    def _mark_ready(self, p):
        b = self._bucket_of[id(p)]
        b.pending -= 1
        if b.pending:
            return
        dist = _dist()
        with ember.no_grad():
            b.flat = ember.cat([(q.grad if q.grad is not None else ember.zeros_like(q)).reshape(-1)
                                for q in b.params])
        b.work = dist.all_reduce(b.flat, op=dist.ReduceOp.SUM, group=self.process_group,
                                 async_op=True)
        self._launched += 1
        if self._launched == len(self._buckets):
            self._finish()

    def _finish(self):
        dist = _dist()
        globally_used = None
        if self._used is not None:
            mask = ember.tensor([int(u) for u in self._used], dtype=ember.uint8)
            dist.all_reduce(mask, op=dist.ReduceOp.MAX, group=self.process_group)
            globally_used = [bool(v) for v in mask.tolist()]
            used_of = {id(p): u for p, u in zip(self._params, globally_used)}
        with ember.no_grad():
            for b in self._buckets:
                b.work.wait()
                b.flat.div_(self._world)
                offset = 0
                for q in b.params:
                    n = q.numel()
                    if globally_used is None or used_of[id(q)]:
                        g = b.flat[offset:offset + n].view_as(q)
                        if q.grad is None:
                            q.grad = g.clone()
                        else:
                            q.grad.copy_(g)
                    offset += n
                b.flat = b.work = None
        self._expect_backward = False

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients on this rank only; the
        first backward after it averages what was accumulated."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
