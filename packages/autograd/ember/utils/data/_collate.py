"""default_collate / default_convert: samples -> batches, recursively."""
import collections.abc
import numbers
import re

import numpy as np

import ember

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def default_convert(data):
    """NumPy arrays and numbers to tensors, recursively (no batching)."""
    if isinstance(data, ember.Tensor):
        return data
    if isinstance(data, np.ndarray) and not _np_str_obj_array_pattern.search(data.dtype.str):
        return ember.as_tensor(data)
    if isinstance(data, np.generic) and not _np_str_obj_array_pattern.search(data.dtype.str):
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _stack_fast(batch):
    """Stacks same-shape contiguous CPU tensors by copying their bytes; in a
    DataLoader worker, straight into shared memory (the batch then crosses to
    the main process as is).  None where it does not apply."""
    for b in batch:
        if type(b) is not ember.Tensor or str(b.device) != "cpu":
            return None
    from ember.backends import sharing
    from ember._tensor import _make
    from ._worker import get_worker_info
    out = sharing().stack([b._data for b in batch], transient=get_worker_info() is not None)
    return None if out is None else _make(out)


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors, NumPy arrays and numbers
    become tensors with a new first dimension; dicts, (named) tuples and
    lists are collated field by field; strings stay a list."""
    from .dataset import Rows
    if type(batch) is Rows:  # TensorDataset.__getitems__: already columns
        return [c.detach() if c.requires_grad else c for c in batch.columns]
    elem = batch[0]
    if isinstance(elem, ember.Tensor):
        fast = _stack_fast(batch)
        if fast is not None:
            return fast
        return ember.stack([b.detach() if b.requires_grad else b for b in batch], 0)
    if isinstance(elem, np.ndarray) or (isinstance(elem, np.generic)
                                        and not isinstance(elem, (np.str_, np.bytes_))):
        if _np_str_obj_array_pattern.search(elem.dtype.str):
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([ember.as_tensor(np.asarray(b)) for b in batch])
    if isinstance(elem, bool):
        return ember.tensor(batch, dtype=ember.bool)
    if isinstance(elem, int):
        return ember.tensor(batch, dtype=ember.int64)
    if isinstance(elem, float):
        return ember.tensor(batch, dtype=ember.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        n = len(next(it))
        if not all(len(e) == n for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return type(elem)([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    if isinstance(elem, numbers.Number):
        return ember.tensor(batch)
    raise TypeError(_ERR.format(type(elem)))
