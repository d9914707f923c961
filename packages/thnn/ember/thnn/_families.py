"""The family modules bound to one kernel library: what ember.thnn (on
libTHNN) and ember.thcunn (on libTHCUNN) publish as their functions."""
from . import _activation, _conv, _embedding, _loss, _norm, _pool, _resample


def bind(library):
    """{name: function or table} of every family on `library` (a
    _library.KernelLibrary)."""
    out = _activation.define(library)
    for family in (_conv, _embedding, _norm, _pool, _resample):
        out.update(family.define(library))
    out.update(_loss.define(library, out["log_softmax_forward"],
                            out["log_softmax_backward_input"]))
    return out
