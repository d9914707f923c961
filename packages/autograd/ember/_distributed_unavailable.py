"""ember.distributed when ember-distributed is not installed (imported under
that name by ember._fallbacks): PyTorch's distributed names on a build without
distributed support.  is_available() is False, as on such PyTorch builds;
is_initialized() is False (no process group ever exists); the calls that
need a process group raise RuntimeError saying that ember-distributed
is not installed.  ``ember.utils.data.distributed.DistributedSampler``
works without it when num_replicas and rank are given."""

__all__ = ["is_available", "is_initialized", "is_torchelastic_launched", "ReduceOp",
           "init_process_group", "destroy_process_group", "get_rank", "get_world_size",
           "get_backend", "new_group", "barrier", "all_reduce", "reduce", "broadcast",
           "all_gather", "all_gather_object", "gather", "scatter", "reduce_scatter",
           "all_to_all", "send", "recv", "isend", "irecv", "broadcast_object_list"]


def is_available():
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    return False


class ReduceOp:
    """The reduction names collective calls take (there are no collectives)."""
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    AVG = "avg"


def _missing(name):
    def unsupported(*args, **kwargs):
        raise RuntimeError(
            f"ember.distributed.{name}: ember-distributed is not installed "
            f"(ember.distributed.is_available() is False); install it, run on one "
            f"process, or give DistributedSampler num_replicas and rank explicitly")
    unsupported.__name__ = unsupported.__qualname__ = name
    unsupported.__doc__ = "Not available: ember-distributed is not installed (raises " \
                          "RuntimeError)."
    return unsupported


for _name in __all__[4:]:
    globals()[_name] = _missing(_name)
del _name
