"""Criterions: ClassNLLCriterion, CrossEntropyCriterion, MSECriterion,
BCECriterion.  Class targets are 1-based, as in Lua Torch; ``sizeAverage``
True averages over the batch (over the total weight when classes are
weighted), False sums."""
import ember
import ember.thnn as thnn

from ._base import Criterion, check_tensor, raw, wrap

__all__ = ["ClassNLLCriterion", "CrossEntropyCriterion", "MSECriterion", "BCECriterion"]


def _weights(weights):
    if weights is None:
        return None
    if not isinstance(weights, ember.Tensor):
        weights = ember.tensor(weights, dtype=ember.get_default_dtype())
    return weights


def _one(x):
    """The gradient of the loss with respect to itself."""
    return ember.th.ones((), dtype=x.dtype)


class ClassNLLCriterion(Criterion):
    """The negative log-likelihood of log-probabilities (a vector with a
    class number, or N × C with N class numbers), classes numbered from 1."""

    def __init__(self, weights=None, sizeAverage=True):
        super().__init__()
        self.weights = _weights(weights)
        self.sizeAverage = sizeAverage
        self.total_weight = None

    def _args(self, input, target):
        x = raw(check_tensor(self, input))
        if x.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: expected 1D or 2D input (got {x.dim()}D)")
        if isinstance(target, ember.Tensor):
            t = raw(target)
        elif isinstance(target, int) and not isinstance(target, bool):
            t = ember.th.tensor([target])
        else:
            raise TypeError(f"{type(self).__name__}: expected target to be an ember.Tensor of "
                            f"class numbers or an int, got {type(target).__name__}")
        if t.dtype.is_floating_point:
            if not bool((t == t.floor()).all()):
                raise ValueError(f"{type(self).__name__}: class targets must be whole numbers")
        x2 = x.unsqueeze(0) if x.dim() == 1 else x
        t = t.reshape(-1).to(ember.th.int64)
        if t.shape[0] != x2.shape[0]:
            raise ValueError(f"{type(self).__name__}: expected {x2.shape[0]} targets for input "
                             f"of size {list(x.shape)}, got {t.shape[0]}")
        n = x2.shape[1]
        if t.numel() and (int(t.min()) < 1 or int(t.max()) > n):
            bad = int(t.min()) if int(t.min()) < 1 else int(t.max())
            raise IndexError(f"{type(self).__name__}: target {bad} is out of bounds: class "
                             f"targets run from 1 to {n} (Lua Torch numbering)")
        w = raw(self.weights).to(x.dtype) if self.weights is not None else None
        return x, x2.contiguous(), t - 1, w

    def updateOutput(self, input, target):
        _, x, t, w = self._args(input, target)
        out, self.total_weight = thnn.nll_loss_forward(x, t, w, self._reduction())
        self.output = float(out.item())
        return self.output

    def updateGradInput(self, input, target):
        x0, x, t, w = self._args(input, target)
        self.updateOutput(input, target)   # the total weight of this target
        gi = thnn.nll_loss_backward_input(_one(x), tuple(x.shape), t, w, self.total_weight,
                                          self._reduction())
        self.gradInput = wrap(gi.reshape(tuple(x0.shape)))
        return self.gradInput


class CrossEntropyCriterion(ClassNLLCriterion):
    """LogSoftMax followed by ClassNLLCriterion, in one step."""

    def __init__(self, weights=None, sizeAverage=True):
        super().__init__(weights, sizeAverage)
        self.log_probs = None

    def updateOutput(self, input, target):
        _, x, t, w = self._args(input, target)
        out, self.log_probs, self.total_weight = thnn.cross_entropy_forward(
            x, t, w, self._reduction())
        self.output = float(out.item())
        return self.output

    def updateGradInput(self, input, target):
        x0, x, t, w = self._args(input, target)
        self.updateOutput(input, target)   # the log-probabilities of this input
        gi = thnn.cross_entropy_backward_input(_one(x), self.log_probs, t, w,
                                               self.total_weight, self._reduction())
        self.gradInput = wrap(gi.reshape(tuple(x0.shape)))
        return self.gradInput


class _Pointwise(Criterion):
    _loss = None

    def _args(self, input, target):
        x = raw(check_tensor(self, input))
        t = raw(check_tensor(self, target, "target"))
        if x.numel() != t.numel():
            raise ValueError(f"{type(self).__name__}: input and target must have the same "
                             f"number of elements, got input of size {list(x.shape)} and "
                             f"target of size {list(t.shape)}")
        return x.contiguous(), t.reshape(tuple(x.shape)).to(x.dtype).contiguous()

    def _weight(self, x):
        return None

    def updateOutput(self, input, target):
        x, t = self._args(input, target)
        out = thnn.pointwise_loss_forward(self._loss, x, t, self._weight(x),
                                          reduction=self._reduction())
        self.output = float(out.item())
        return self.output

    def updateGradInput(self, input, target):
        x, t = self._args(input, target)
        gi = thnn.pointwise_loss_backward_input(self._loss, _one(x), x, t,
                                                self._weight(x), reduction=self._reduction())
        self.gradInput = wrap(gi)
        return self.gradInput


class MSECriterion(_Pointwise):
    """Mean (or, without sizeAverage, sum) of squared differences."""
    _loss = "mse"

    def __init__(self, sizeAverage=True):
        super().__init__()
        self.sizeAverage = sizeAverage


class BCECriterion(_Pointwise):
    """Binary cross-entropy of probabilities; ``weights`` (one per element of
    a sample) apply to every sample of a batch."""
    _loss = "bce"

    def __init__(self, weights=None, sizeAverage=True):
        super().__init__()
        self.weights = _weights(weights)
        self.sizeAverage = sizeAverage

    def _weight(self, x):
        if self.weights is None:
            return None
        w = raw(self.weights).to(x.dtype)
        if w.numel() != x.shape[-1] and w.numel() != x.numel():
            raise ValueError(f"BCECriterion: weights of {w.numel()} elements do not match "
                             f"input of size {list(x.shape)}")
        return w.reshape(tuple(x.shape) if w.numel() == x.numel() else (x.shape[-1],)) \
            .expand(tuple(x.shape)).contiguous()
