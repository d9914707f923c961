"""In-place operations on views.

A view (``x[0]``, ``x.t()``, ...) shares storage with its base, so writing
into it changes the base too.  As in PyTorch:

- the base's history becomes a CopySlices node: the gradient of the new
  base is the old gradient outside the view's region, and inside it
  whatever the in-place op's own node makes of it;
- a view's history is rebuilt from its base whenever the storage changed
  since the view's history was set (the base, or another view of it, was
  written), so every view sees the base's current history.

A view's region is kept as the logical (row-major) positions of its
elements in the base, computed once per in-place op, which works for any
base layout.
"""
from .. import _tensor
from .._tensor import meta_of
from .graph import Node, edge
from .nodes import SavingNode, _new_node, node_class


def region_of(view, base):
    """int64 raw tensor, view-shaped: each element's logical position in
    `base` (views are built from base's storage, so follow the storage)."""
    b, v = base._data, view._data
    ns = _namespace(b)
    if b.is_contiguous():
        positions = ns.arange(b.numel())
        offset = b.storage_offset()
    else:  # lay the positions out in base's own storage order
        positions = ns.empty_strided(tuple(b.shape), b.stride(), dtype=ns.int64)
        positions.copy_(ns.arange(b.numel()).view(tuple(b.shape)))
        offset = b.storage_offset()
    return positions.as_strided(tuple(v.shape), v.stride(), v.storage_offset() - offset)


def _namespace(raw):
    from .._device import namespace
    return namespace(raw.device)


class CopySlices(Node):
    """History of a base after an in-place op on one of its views."""

    __slots__ = ("fn", "_region", "_base_shape", "_view_shape")

    def _run(self, grads):
        from .._creation import zeros
        g = grads[0]
        flat = g.reshape(-1)
        region = _tensor._make(self._region)
        res = self.fn._run([flat.take(region)])
        inside = res[0] if res[0] is not None else \
            zeros(self._view_shape, dtype=g.dtype, device=g.device)
        result = flat.put(region, inside.reshape(self._view_shape)).view(self._base_shape)
        return (result,) + tuple(res[1:])

    def _release(self):
        self.fn._release()


class _AsStrided(SavingNode):
    __slots__ = ()

    @staticmethod
    def formula(g, region, base_shape, numel):
        from .._creation import zeros
        z = zeros(numel, dtype=g.dtype)
        return (z.put(region, g.reshape(region.shape), accumulate=True).view(base_shape),)

    def _run(self, grads):
        return self.formula(grads[0], *self._values())


AsStridedBackward0 = node_class(_AsStrided, "as_strided")


def rebase_view(view, fn):
    """After in-place op `fn` on `view`: base history -> CopySlices, and
    the view's history -> a view of the new base."""
    base = view._base
    region = region_of(view, base)
    copy = _new_node(CopySlices, (edge(base),) + fn.next_functions[1:])
    copy.fn = fn
    copy._region = region
    copy._base_shape = tuple(base._data.shape)
    copy._view_shape = tuple(view._data.shape)
    base._grad_fn = copy
    base._output_nr = 0
    base._requires_grad = True
    _set_view_history(view, base, region)


def _set_view_history(view, base, region=None):
    if region is None:
        region = region_of(view, base)
    node = _new_node(AsStridedBackward0, (edge(base),))
    node._save((_tensor._make(region), tuple(base._data.shape), base._data.numel()), None)
    view._grad_fn = node
    view._output_nr = 0
    view._requires_grad = True
    meta_of(view).view_version = view._data._version()


def note_view(view):
    """Called when a view op records: remembers the storage version its
    history belongs to."""
    meta_of(view).view_version = view._data._version()


def current_grad_fn(view):
    """The view's grad_fn, rebuilt from its base if the storage was written
    since it was set."""
    m = view._meta
    if m is not None and m.view_version is not None and \
            m.view_version != view._data._version() and view._base._requires_grad:
        _set_view_history(view, view._base)
    return view._grad_fn
