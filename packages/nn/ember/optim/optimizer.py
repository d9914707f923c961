"""Optimizer: parameter groups with per-group options, per-parameter
state, state_dict/load_state_dict, zero_grad and closures, as PyTorch's."""
from collections import defaultdict
import copy
import functools

import ember

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class.  Subclasses implement ``step(closure=None)`` and update
    parameters in place under no_grad (decorate with ``_use_no_grad``)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, ember.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, ember.Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered "
                            "collections, but the ordering of tensors in sets will change "
                            "between runs. Please use a list instead.")
        params = list(params)
        for p in params:
            if not isinstance(p, ember.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", stacklevel=3)
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    # ---- state dict ----------------------------------------------------------
    def state_dict(self):
        """{'state': {index: per-parameter state}, 'param_groups': [options
        with 'params' as indices]} — parameters numbered in group order."""
        index = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: v for p, v in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(state_dict)
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(a["params"]) != len(b["params"]) for a, b in zip(self.param_groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = {}
        for g, s in zip(self.param_groups, saved):
            for p, i in zip(g["params"], s["params"]):
                id_map[i] = p

        def cast(p, value, key=None):
            if isinstance(value, ember.Tensor):
                # scalar bookkeeping (step counts, ASGD's rates) keeps its dtype
                if key in ("step", "mu_product", "eta", "mu"):
                    return value
                return value.to(p.dtype) if p.is_floating_point() and \
                    value.is_floating_point() else value
            if isinstance(value, dict):
                return {k: cast(p, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(p, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = cast(p, v)
        self.state = state
        self.param_groups = [dict(s, params=g["params"])
                             for g, s in zip(self.param_groups, saved)]


def _use_no_grad(step):
    """Runs a step with gradients off (the closure re-enables them)."""
    @functools.wraps(step)
    def wrapper(self, closure=None):
        with ember.no_grad():
            return step(self, closure)
    return wrapper


def _closure_loss(closure):
    if closure is None:
        return None
    with ember.enable_grad():
        return closure()
