"""Loading the ``weights=`` argument of the model constructors.

Ember downloads nothing: ``weights`` is ``None`` (random initialisation),
the path of a local file holding a state_dict written by ``ember.save`` or
``torch.save`` (``ember.load`` reads both), or a weights enum member whose
file is found locally (see _weights_enum).  A checkpoint written by
``ember-vision train`` (a dict with a ``"model"`` state_dict) works too.
"""
import os

import ember


def _read_state_dict(path):
    state = ember.load(path, map_location="cpu")
    if isinstance(state, dict) and isinstance(state.get("model"), dict) and "epoch" in state:
        state = state["model"]          # a training checkpoint
    if not isinstance(state, dict):
        raise TypeError(f"weights file {os.fspath(path)!r} holds a {type(state).__name__}, "
                        f"not a state_dict")
    return state


def _fill_batches_tracked(model, state):
    """Files saved before BatchNorm counted its batches (most published
    ImageNet weights) lack ``num_batches_tracked``; PyTorch starts such a
    counter at 0, and so does this."""
    for prefix, module in model.named_modules():
        counter = getattr(module, "num_batches_tracked", None)
        key = f"{prefix}.num_batches_tracked" if prefix else "num_batches_tracked"
        running = f"{prefix}.running_mean" if prefix else "running_mean"
        if isinstance(counter, ember.Tensor) and key not in state and running in state:
            state[key] = ember.zeros((), dtype=ember.int64)
    return state


def load_weights(model, weights, remap=None):
    """Load ``weights`` (None, a file path, or a weights enum member, whose
    file is looked for locally) into ``model``; return the model.

    ``remap`` optionally rewrites the keys of an older checkpoint layout
    before the strict ``load_state_dict``."""
    if weights is None:
        return model
    from ._weights_enum import WeightsEnum
    if isinstance(weights, WeightsEnum):
        weights = weights.local_path()
    if isinstance(weights, bool) or not isinstance(weights, (str, bytes, os.PathLike)):
        raise TypeError("weights must be None, a weights enum member or the path of a "
                        f"state_dict file, got {type(weights).__name__}")
    path = os.fspath(weights)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"weights file {path!r} does not exist (ember.vision downloads nothing: "
            f"pass None or the path of a state_dict saved with ember.save or torch.save)")
    state = _read_state_dict(path)
    if remap is not None:
        state = remap(state)
    model.load_state_dict(_fill_batches_tracked(model, dict(state)))
    return model
