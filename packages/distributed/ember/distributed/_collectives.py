"""The collectives and point-to-point operations: argument checks on this
rank, then (for collectives) one small all-gather of every rank's call
signature, so that a call that differs across ranks (another shape, dtype,
operation or root) raises the same error on every rank instead of an MPI
abort or a hang, then the MPI operation itself."""
import enum
import pickle

import numpy as np

import ember

from . import _group
from ._buffers import DTYPE_CODES, Buffer, check_tensor, raw_view
from ._state import group_or_default, is_member, to_group_rank


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"


class ReduceOp:
    """The reduction of all_reduce, reduce and reduce_scatter_tensor
    (``ReduceOp.SUM``, ...; PyTorch's names)."""
    RedOpType = RedOpType


for _op in RedOpType:
    if _op not in (RedOpType.PREMUL_SUM, RedOpType.UNUSED):
        setattr(ReduceOp, _op.name, _op)

_KINDS = ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather",
          "scatter", "reduce_scatter_tensor", "all_to_all_single", "barrier",
          "broadcast_object_list", "all_gather_object", "new_group", "all_to_all")
_MAX_DIMS = 8
_FLOATS = (ember.float32, ember.float64, ember.float16, ember.bfloat16)


def _op_of(op):
    if isinstance(op, RedOpType) and op not in (RedOpType.PREMUL_SUM, RedOpType.UNUSED):
        return op
    raise ValueError(f"ember.distributed: unsupported reduce operation {op!r}; "
                     f"use one of ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR")


def _mpi_op(op, dtype, what):
    """The MPI operation for op on dtype (bool reduces logically)."""
    MPI = _group.mpi()
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype in _FLOATS:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op is RedOpType.AVG and dtype not in _FLOATS:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_title(dtype)}")
    if dtype is ember.bool:
        return {RedOpType.SUM: MPI.LOR, RedOpType.MAX: MPI.LOR, RedOpType.BOR: MPI.LOR,
                RedOpType.PRODUCT: MPI.LAND, RedOpType.MIN: MPI.LAND, RedOpType.BAND: MPI.LAND,
                RedOpType.BXOR: MPI.LXOR}[op]
    return {RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD,
            RedOpType.MIN: MPI.MIN, RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND,
            RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR}[op]


def _title(dtype):
    return {ember.int8: "Char", ember.uint8: "Byte", ember.int16: "Short", ember.int32: "Int",
            ember.int64: "Long", ember.bool: "Bool"}.get(dtype, str(dtype))


# ---- the signature exchange ----------------------------------------------------
def _signature(pg, what, t=None, op=None, root=-1, extra=()):
    sig = np.full(6 + _MAX_DIMS + pg.size(), -1, dtype=np.int64)
    sig[0] = _KINDS.index(what)
    if t is not None:
        sig[1] = DTYPE_CODES[t.dtype]
        sig[4] = t.numel()
        sig[5] = t.dim()
        shape = list(t.shape)[:_MAX_DIMS]
        sig[6:6 + len(shape)] = shape
    sig[2] = -1 if op is None else op.value
    sig[3] = root
    sig[6 + _MAX_DIMS:6 + _MAX_DIMS + len(extra)] = extra
    return sig


def _agree(pg, what, sig, compare=("dtype", "shape", "op", "root")):
    """Yields the all-gather of every rank's signature, then raises (the same
    error on every rank) where they differ; returns the table."""
    table = np.empty((pg.size(), sig.size), dtype=np.int64)
    yield pg.comm.Iallgather(sig, table)
    dtypes = list(DTYPE_CODES)
    ref = table[0]
    for r in range(1, pg.size()):
        row = table[r]
        g, g0 = pg.global_rank(r), pg.global_rank(0)
        if row[0] != ref[0]:
            raise RuntimeError(f"ember.distributed.{what}: rank {g} called "
                               f"{_KINDS[row[0]]} where rank {g0} called {_KINDS[ref[0]]}: "
                               f"every rank of a group must make the same collective calls "
                               f"in the same order")
        if "dtype" in compare and row[1] != ref[1]:
            raise RuntimeError(f"ember.distributed.{what}: invalid tensor type on rank {g} "
                               f"(expected {dtypes[ref[1]]} as on rank {g0}, got "
                               f"{dtypes[row[1]]})")
        if "shape" in compare and (row[4:6 + _MAX_DIMS] != ref[4:6 + _MAX_DIMS]).any():
            raise RuntimeError(f"ember.distributed.{what}: invalid tensor size on rank {g} "
                               f"(expected {_shape(ref)} as on rank {g0}, got {_shape(row)})")
        if "op" in compare and row[2] != ref[2]:
            raise RuntimeError(f"ember.distributed.{what}: rank {g} reduces with "
                               f"ReduceOp.{RedOpType(row[2]).name} where rank {g0} uses "
                               f"ReduceOp.{RedOpType(ref[2]).name}")
        if "root" in compare and row[3] != ref[3]:
            raise RuntimeError(f"ember.distributed.{what}: rank {g} names root rank "
                               f"{row[3]} where rank {g0} names {ref[3]}")
    return table


def _data(pg, name):
    """The MPI call that moves a collective's data, after the exchange: a
    blocking call where the caller waits anyway (every rank is known to be
    in this collective by then, and MPI's blocking algorithms are the
    faster ones), else the nonblocking one (async_op=True)."""
    if pg.blocking:
        method = getattr(pg.comm, name)

        def call(*args, **kwargs):
            method(*args, **kwargs)
            return []
        return call
    return getattr(pg.comm, "I" + name.lower())


def _shape(row):
    n = int(row[5])
    dims = [int(d) for d in row[6:6 + min(n, _MAX_DIMS)]]
    return "(" + ", ".join(map(str, dims)) + (", ...)" if n > _MAX_DIMS else ")")


def _prepare(group, what):
    pg = group_or_default(group)
    if not is_member(pg):
        return None
    return pg


def _root(pg, rank, what, name="root"):
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise TypeError(f"ember.distributed.{what}: {name} rank must be an int, got "
                        f"{type(rank).__name__}")
    return to_group_rank(pg, rank, what)


# ---- reductions ------------------------------------------------------------------
def _reduce_gen(pg, what, tensor, op, root):
    yield from _agree(pg, what, _signature(pg, what, tensor, op, root))
    MPI = _group.mpi()
    buf = Buffer(tensor, reduce=True)
    mop = _mpi_op(op, tensor.dtype, what)
    if root < 0:
        yield _data(pg, "Allreduce")(MPI.IN_PLACE, buf.array, op=mop)
    elif pg.rank() == root:
        yield _data(pg, "Reduce")(MPI.IN_PLACE, buf.array, op=mop, root=root)
    else:
        # MPI leaves the send buffer of the other ranks alone (PyTorch: their
        # tensors hold unspecified values; here, their own)
        yield _data(pg, "Reduce")(buf.array, None, op=mop, root=root)
        return
    if op is RedOpType.AVG:
        buf.array /= pg.size()
    buf.finish()


def all_reduce(tensor, op=RedOpType.SUM, group=None, async_op=False):
    """Reduces tensor across the group in place (every rank gets the result)."""
    check_tensor(tensor, "tensor", "all_reduce")
    op = _op_of(op)
    pg = _prepare(group, "all_reduce")
    if pg is None:
        return None
    _mpi_op(op, tensor.dtype, "all_reduce")
    return _group.run(pg, _reduce_gen(pg, "all_reduce", tensor, op, -1), "all_reduce", async_op)


def reduce(tensor, dst=None, op=RedOpType.SUM, group=None, async_op=False, group_dst=None):
    """Reduces tensor across the group into rank dst's tensor."""
    check_tensor(tensor, "tensor", "reduce")
    op = _op_of(op)
    pg = _prepare(group, "reduce")
    if pg is None:
        return None
    root = _pick_root(pg, dst, group_dst, "reduce", "dst")
    _mpi_op(op, tensor.dtype, "reduce")
    return _group.run(pg, _reduce_gen(pg, "reduce", tensor, op, root), "reduce", async_op)


def _pick_root(pg, rank, group_rank, what, name):
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"ember.distributed.{what}: invalid {name} group rank "
                             f"{group_rank}")
        return group_rank
    return _root(pg, 0 if rank is None else rank, what, name)


def _reduce_scatter_gen(pg, output, input, op):
    what = "reduce_scatter_tensor"
    yield from _agree(pg, what, _signature(pg, what, output, op))
    src = Buffer(input, reduce=True, output=False)
    out = Buffer(output, reduce=True)
    yield _data(pg, "Reduce_scatter_block")(src.array, out.array,
                                            op=_mpi_op(op, output.dtype, what))
    if op is RedOpType.AVG:
        out.array /= pg.size()
    out.finish()


def reduce_scatter_tensor(output, input, op=RedOpType.SUM, group=None, async_op=False):
    """Reduces input across the group and leaves rank r the r-th of its
    group-size equal chunks (input: output's size times the group size)."""
    what = "reduce_scatter_tensor"
    check_tensor(output, "output", what)
    check_tensor(input, "input", what)
    op = _op_of(op)
    pg = _prepare(group, what)
    if pg is None:
        return None
    _same_dtype(what, output, input)
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"ember.distributed.{what}: input tensor must be the same size as "
                         f"output size times world size (input {tuple(input.shape)}, output "
                         f"{tuple(output.shape)}, world size {pg.size()})")
    _mpi_op(op, output.dtype, what)
    return _group.run(pg, _reduce_scatter_gen(pg, output, input, op), what, async_op)


def _same_dtype(what, *tensors):
    dts = {t.dtype for t in tensors}
    if len(dts) > 1:
        a, b = [t.dtype for t in tensors][:2]
        raise ValueError(f"Invalid usage of tensors with different dtypes Found {a} and {b}"
                         if a != b else f"ember.distributed.{what}: tensors of different "
                         f"dtypes: {sorted(map(str, dts))}")


# ---- moving data -----------------------------------------------------------------
def _broadcast_gen(pg, tensor, root):
    yield from _agree(pg, "broadcast", _signature(pg, "broadcast", tensor, root=root))
    buf = Buffer(tensor, output=pg.rank() != root)
    yield _data(pg, "Bcast")(buf.array, root=root)
    buf.finish()


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies rank src's tensor into every rank's tensor."""
    check_tensor(tensor, "tensor", "broadcast")
    pg = _prepare(group, "broadcast")
    if pg is None:
        return None
    root = _pick_root(pg, src, group_src, "broadcast", "src")
    return _group.run(pg, _broadcast_gen(pg, tensor, root), "broadcast", async_op)


def _gather_gen(pg, what, sendt, recv, root, scatter=False):
    """all_gather / all_gather_into_tensor / gather / scatter: recv is the
    output tensor (or None on non-roots), chunked per rank."""
    t = sendt
    yield from _agree(pg, what, _signature(pg, what, t, root=root))
    send = Buffer(sendt, output=scatter)
    if recv is not None:
        out = Buffer(recv, output=not scatter)
    if what in ("all_gather", "all_gather_into_tensor"):
        yield _data(pg, "Allgather")(send.array, out.array)
        out.finish()
    elif what == "gather":
        if pg.rank() == root:
            yield _data(pg, "Gather")(send.array, out.array, root=root)
            out.finish()
        else:
            yield _data(pg, "Gather")(send.array, None, root=root)
    else:                                             # scatter: sendt is the output
        if pg.rank() == root:
            yield _data(pg, "Scatter")(out.array, send.array, root=root)
        else:
            yield _data(pg, "Scatter")(None, send.array, root=root)
        send.finish()


def _check_list(pg, what, tensors, t, name):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"Invalid function argument: {name} should be a list")
    for x in tensors:
        check_tensor(x, name, what)
    if len(tensors) != pg.size():
        raise RuntimeError(f"ember.distributed.{what}: invalid {name} at index 0 (expected "
                           f"length {pg.size()}, got {len(tensors)})")
    for i, x in enumerate(tensors):
        if x.dtype != t.dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypes Found {x.dtype} "
                             f"and  {t.dtype}")
        if tuple(x.shape) != tuple(t.shape):
            raise RuntimeError(f"ember.distributed.{what}: invalid tensor size at index {i} "
                               f"(expected {tuple(t.shape)}, got {tuple(x.shape)})")


def _list_gen(pg, what, t, tensors, root, scatter):
    """The list forms: one flat staging tensor for the ranks' chunks."""
    staged = None
    if tensors is not None:
        staged = ember.empty((len(tensors),) + tuple(t.shape), dtype=t.dtype)
        if scatter:
            with ember.no_grad():
                for i, x in enumerate(tensors):
                    staged[i].copy_(x.detach().to("cpu"))
    yield from _gather_gen(pg, what, t, staged, root, scatter)
    if tensors is not None and not scatter:
        with ember.no_grad():
            for i, x in enumerate(tensors):
                x.detach().copy_(staged[i])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] gets rank r's tensor, on every rank."""
    what = "all_gather"
    check_tensor(tensor, "tensor", what)
    pg = _prepare(group, what)
    if pg is None:
        return None
    _check_list(pg, what, tensor_list, tensor, "output tensor list")
    return _group.run(pg, _list_gen(pg, what, tensor, tensor_list, -1, False), what, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor (group size times input's size; concatenated or stacked
    along the first dimension) gets every rank's input_tensor."""
    what = "all_gather_into_tensor"
    check_tensor(output_tensor, "output_tensor", what)
    check_tensor(input_tensor, "input_tensor", what)
    pg = _prepare(group, what)
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError(f"ember.distributed.{what}: invalid tensor type (expected "
                           f"{input_tensor.dtype}, got {output_tensor.dtype})")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise RuntimeError(f"ember.distributed.{what}: invalid tensor size (output "
                           f"{tuple(output_tensor.shape)} must hold world size {pg.size()} "
                           f"times input {tuple(input_tensor.shape)})")
    return _group.run(pg, _gather_gen(pg, what, input_tensor, output_tensor, -1), what,
                      async_op)


def _root_list(pg, what, tensor, lst, root, name, role):
    """gather's/scatter's list: required (and checked) on the root rank,
    refused elsewhere, as PyTorch words it; None off the root."""
    if pg.rank() == root:
        if not lst:
            raise ValueError(f"Argument ``{name}`` must be specified on {role} rank.")
        _check_list(pg, what, lst, tensor, name)
        return lst
    if lst:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks.")
    return None


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank dst's gather_list[r] gets rank r's tensor."""
    what = "gather"
    check_tensor(tensor, "tensor", what)
    pg = _prepare(group, what)
    if pg is None:
        return None
    root = _pick_root(pg, dst, group_dst, what, "dst")
    lst = _root_list(pg, what, tensor, gather_list, root, "gather_list", "destination")
    return _group.run(pg, _list_gen(pg, what, tensor, lst, root, False), what, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's tensor gets rank src's scatter_list[r]."""
    what = "scatter"
    check_tensor(tensor, "tensor", what)
    pg = _prepare(group, what)
    if pg is None:
        return None
    root = _pick_root(pg, src, group_src, what, "src")
    lst = _root_list(pg, what, tensor, scatter_list, root, "scatter_list", "source")
    return _group.run(pg, _list_gen(pg, what, tensor, lst, root, True), what, async_op)


def _splits(what, t, splits, n, name):
    rows = t.shape[0] if t.dim() else 1
    if splits is None or len(splits) == 0:
        if rows % n:
            raise ValueError(f"ember.distributed.{what}: Tensor's dim 0 does not divide "
                             f"equally across group size")
        return [rows // n] * n
    splits = [int(s) for s in splits]
    if len(splits) != n:
        raise ValueError(f"ember.distributed.{what}: {name} must have one entry per rank "
                         f"({n}), got {len(splits)}")
    if sum(splits) != rows or min(splits) < 0:
        raise ValueError(f"ember.distributed.{what}: {name} {splits} do not sum to dim 0 "
                         f"({rows})")
    return splits


def _a2a_gen(pg, output, input, out_splits, in_splits):
    what = "all_to_all_single"
    row = input.numel() // max(1, input.shape[0]) if input.dim() else 1
    sig = _signature(pg, what, None, extra=in_splits)
    sig[1] = DTYPE_CODES[input.dtype]
    sig[4] = row                 # the ranks' dim 0 may differ, a row's size may not
    table = yield from _agree(pg, what, sig, compare=("dtype", "shape"))
    me = pg.rank()
    for r in range(pg.size()):
        sent = int(table[r, 6 + _MAX_DIMS + me])
        if sent != out_splits[r]:
            raise RuntimeError(f"ember.distributed.{what}: rank {pg.global_rank(r)} sends "
                               f"{sent} rows to rank {pg.global_rank(me)}, which expects "
                               f"{out_splits[r]} (output_split_sizes)")
    send = Buffer(input, output=False)
    recv = Buffer(output)
    scounts = [s * row for s in in_splits]
    rcounts = [s * row for s in out_splits]
    sdispl = np.cumsum([0] + scounts[:-1]).tolist()
    rdispl = np.cumsum([0] + rcounts[:-1]).tolist()
    yield _data(pg, "Alltoallv")([send.array, scounts, sdispl, send.array.dtype.char],
                             [recv.array, rcounts, rdispl, recv.array.dtype.char])
    recv.finish()


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Rank r sends the r-th chunk (input_split_sizes rows) of input to every
    rank, which stacks what it receives into output (output_split_sizes)."""
    what = "all_to_all_single"
    check_tensor(output, "output", what)
    check_tensor(input, "input", what)
    pg = _prepare(group, what)
    if pg is None:
        return None
    _same_dtype(what, output, input)
    n = pg.size()
    in_splits = _splits(what, input, input_split_sizes, n, "input_split_sizes")
    out_splits = _splits(what, output, output_split_sizes, n, "output_split_sizes")
    row_in = input.numel() // max(1, input.shape[0]) if input.dim() else 1
    row_out = output.numel() // max(1, output.shape[0]) if output.dim() else 1
    if input.dim() != output.dim() or tuple(input.shape[1:]) != tuple(output.shape[1:]) \
            or row_in != row_out:
        raise RuntimeError(f"ember.distributed.{what}: input {tuple(input.shape)} and output "
                           f"{tuple(output.shape)} differ beyond dim 0")
    return _group.run(pg, _a2a_gen(pg, output, input, out_splits, in_splits), what, async_op)


def _barrier_gen(pg):
    # the exchange completes on a rank only once every rank has joined it
    yield from _agree(pg, "barrier", _signature(pg, "barrier"), compare=())


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank of the group has called it."""
    pg = _prepare(group, "barrier")
    if pg is None:
        return None
    return _group.run(pg, _barrier_gen(pg), "barrier", async_op)


# ---- point to point ----------------------------------------------------------------
def _p2p_gen(pg, tensor, peer, tag, sending):
    MPI = _group.mpi()
    buf = Buffer(tensor, output=not sending)
    if sending:
        yield pg.comm.Isend(buf.array, dest=peer, tag=tag)
        return peer
    # a longer message fails with MPI's truncation error, a shorter one here
    status = yield _group.WithStatus(
        pg.comm.Irecv(buf.array, source=MPI.ANY_SOURCE if peer is None else peer, tag=tag))
    count = status.Get_count(MPI.BYTE)
    if count != buf.array.nbytes:
        raise RuntimeError(f"ember.distributed.recv: received {count} bytes from rank "
                           f"{pg.global_rank(status.Get_source())} into a tensor of "
                           f"{buf.array.nbytes} bytes (sizes differ between send and recv)")
    buf.finish()
    return pg.global_rank(status.Get_source())


def _p2p(tensor, peer, group, tag, sending, group_peer=None):
    what = "send" if sending else "recv"
    check_tensor(tensor, "tensor", what)
    pg = _prepare(group, what)
    if pg is None:
        return None, None
    if group_peer is not None:
        peer = pg.global_rank(group_peer)
    if peer is None and sending:
        raise ValueError("ember.distributed.send: dst must be given")
    gpeer = None if peer is None else _root(pg, peer, what, "dst" if sending else "src")
    if gpeer is not None and gpeer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process." if sending else
                         "Invalid source rank: source rank should not be the same as the rank "
                         "of the current process.")
    return pg, _p2p_gen(pg, tensor, gpeer, int(tag), sending)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    pg, gen = _p2p(tensor, dst, group, tag, True, group_dst)
    if pg is not None:
        _group.run(pg, gen, "send", False, ordered=False)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into tensor from src (any rank when None); returns the sender's rank."""
    pg, gen = _p2p(tensor, src, group, tag, False, group_src)
    if pg is None:
        return -1
    return _group.run(pg, gen, "recv", False, ordered=False)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    pg, gen = _p2p(tensor, dst, group, tag, True, group_dst)
    return None if pg is None else _group.run(pg, gen, "send", True, ordered=False)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    pg, gen = _p2p(tensor, src, group, tag, False, group_src)
    return None if pg is None else _group.run(pg, gen, "recv", True, ordered=False)


# ---- Python objects ------------------------------------------------------------------
def _pickled(obj):
    data = pickle.dumps(obj)
    return ember.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def _objects_gen(pg, what, objs, root):
    yield from _agree(pg, what, _signature(pg, what, root=root, extra=[len(objs)]),
                      compare=("root",))
    me = pg.rank()
    n = len(objs)
    if what == "broadcast_object_list":
        payload = _pickled(list(objs)) if me == root else None
        size = np.array([payload.numel() if payload is not None else 0], dtype=np.int64)
        yield pg.comm.Ibcast(size, root=root)
        if me != root:
            payload = ember.empty(int(size[0]), dtype=ember.uint8)
        yield pg.comm.Ibcast(raw_view(payload, np.uint8), root=root)
        if me != root:
            got = pickle.loads(raw_view(payload, np.uint8).tobytes())
            if len(got) != n:
                raise RuntimeError(f"ember.distributed.{what}: object_list has {n} entries "
                                   f"here and {len(got)} on the source rank")
            objs[:] = got
        return
    payload = _pickled(objs[0])
    objs.clear()
    sizes = np.empty(pg.size(), dtype=np.int64)
    yield pg.comm.Iallgather(np.array([payload.numel()], dtype=np.int64), sizes)
    width = int(sizes.max())
    padded = np.zeros(width, dtype=np.uint8)
    padded[:payload.numel()] = raw_view(payload, np.uint8)
    table = np.empty((pg.size(), width), dtype=np.uint8)
    yield pg.comm.Iallgather(padded, table)
    objs.extend(pickle.loads(table[r, :sizes[r]].tobytes()) for r in range(pg.size()))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replaces object_list's entries on every rank with rank src's (pickled)."""
    what = "broadcast_object_list"
    pg = _prepare(group, what)
    if pg is None:
        return None
    root = _pick_root(pg, src, group_src, what, "src")
    _group.run(pg, _objects_gen(pg, what, object_list, root), what, False)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] gets rank r's obj (pickled) on every rank; object_list
    must have one entry per rank."""
    what = "all_gather_object"
    pg = _prepare(group, what)
    if pg is None:
        return None
    if len(object_list) != pg.size():
        raise ValueError(f"ember.distributed.{what}: object_list must have one entry per "
                         f"rank ({pg.size()}), got {len(object_list)}")
    scratch = [obj]
    _group.run(pg, _objects_gen(pg, what, scratch, -1), what, False)
    object_list[:] = scratch
