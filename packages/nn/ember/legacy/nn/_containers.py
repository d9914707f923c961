"""Containers: Sequential, Concat, ConcatTable, ParallelTable.  ``get`` and
Concat's dimension are 1-based, as in Lua Torch."""
import ember

from ._base import Module, raw, wrap

__all__ = ["Container", "Sequential", "Concat", "ConcatTable", "ParallelTable"]


def _add(a, b):
    """a + b for tensors or (nested) lists of them: how gradients that reach
    one input from several branches are summed."""
    if isinstance(a, (list, tuple)):
        return [_add(x, y) for x, y in zip(a, b)]
    return wrap(raw(a) + raw(b))


class Container(Module):
    def __init__(self, *modules):
        super().__init__()
        self.modules = []
        for m in modules:
            self.add(m)

    def add(self, module):
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.add: expected an ember.legacy.nn.Module, "
                            f"got {type(module).__name__}")
        self.modules.append(module)
        return self

    def get(self, index):
        if not 1 <= index <= len(self.modules):
            raise IndexError(f"{type(self).__name__}.get: index {index} out of range "
                             f"(1 to {len(self.modules)})")
        return self.modules[index - 1]

    def size(self):
        return len(self.modules)

    def __len__(self):
        return len(self.modules)

    def _slots(self):
        for m in self.modules:
            yield from m._slots()

    def zeroGradParameters(self):
        for m in self.modules:
            m.zeroGradParameters()

    def updateParameters(self, learningRate):
        for m in self.modules:
            m.updateParameters(learningRate)

    def training(self):
        self.train = True
        for m in self.modules:
            m.training()
        return self

    def evaluate(self):
        self.train = False
        for m in self.modules:
            m.evaluate()
        return self

    def __repr__(self):
        inner = "\n".join(f"  ({i}): " + repr(m).replace("\n", "\n  ")
                          for i, m in enumerate(self.modules, 1))
        return f"nn.{type(self).__name__} {{\n{inner}\n}}"


class Sequential(Container):
    def _inputs(self, input):
        return [input] + [m.output for m in self.modules[:-1]]

    def updateOutput(self, input):
        out = input
        for m in self.modules:
            out = m.updateOutput(out)
        self.output = out
        return self.output

    def updateGradInput(self, input, gradOutput):
        g = gradOutput
        for m, x in reversed(list(zip(self.modules, self._inputs(input)))):
            g = m.updateGradInput(x, g)
        self.gradInput = g
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        g = gradOutput
        for m, x in reversed(list(zip(self.modules, self._inputs(input)))):
            m.accGradParameters(x, g, scale)
            g = m.gradInput

    def backward(self, input, gradOutput, scale=1):
        g = gradOutput
        for m, x in reversed(list(zip(self.modules, self._inputs(input)))):
            g = m.backward(x, g, scale)
        self.gradInput = g
        return self.gradInput


class _SameInput(Container):
    """Every module on the same input: the input's gradient is the sum of
    theirs.  ``_pairs(gradOutput)`` yields each module with its share of
    the output's gradient."""

    def _pairs(self, gradOutput):
        raise NotImplementedError

    def _summed(self, step, gradOutput):
        total = None
        for m, g in self._pairs(gradOutput):
            gi = step(m, g)
            total = gi if total is None else _add(total, gi)
        self.gradInput = total
        return self.gradInput

    def updateGradInput(self, input, gradOutput):
        return self._summed(lambda m, g: m.updateGradInput(input, g), gradOutput)

    def accGradParameters(self, input, gradOutput, scale=1):
        for m, g in self._pairs(gradOutput):
            m.accGradParameters(input, g, scale)

    def backward(self, input, gradOutput, scale=1):
        return self._summed(lambda m, g: m.backward(input, g, scale), gradOutput)


class Concat(_SameInput):
    """Every module on the same input; their outputs joined along
    ``dimension`` (1-based)."""

    def __init__(self, dimension, *modules):
        super().__init__(*modules)
        self.dimension = dimension

    def _dim(self, out):
        if not 1 <= self.dimension <= out.dim():
            raise IndexError(f"Concat: dimension {self.dimension} out of range for "
                             f"{out.dim()}D output")
        return self.dimension - 1

    def updateOutput(self, input):
        outs = [raw(m.updateOutput(input)) for m in self.modules]
        self.output = wrap(ember.th.cat(outs, self._dim(outs[0])))
        return self.output

    def _pairs(self, gradOutput):
        go = raw(gradOutput)
        d, offset = self._dim(go), 0
        for m in self.modules:
            n = m.output.shape[d]
            yield m, wrap(go.narrow(d, offset, n).contiguous())
            offset += n


class ConcatTable(_SameInput):
    """Every module on the same input; the output is the list of theirs."""

    def updateOutput(self, input):
        self.output = [m.updateOutput(input) for m in self.modules]
        return self.output

    def _pairs(self, gradOutput):
        if not isinstance(gradOutput, (list, tuple)) or len(gradOutput) != len(self.modules):
            raise ValueError(f"ConcatTable: expected a list of {len(self.modules)} gradients, "
                             f"got {type(gradOutput).__name__}")
        return zip(self.modules, gradOutput)


class ParallelTable(Container):
    """Module i on input[i]; the output is the list of theirs."""

    def _check(self, value, what):
        if not isinstance(value, (list, tuple)) or len(value) != len(self.modules):
            raise ValueError(f"ParallelTable: expected {what} to be a list of "
                             f"{len(self.modules)} elements, got {type(value).__name__}"
                             + (f" of {len(value)}" if isinstance(value, (list, tuple)) else ""))
        return value

    def updateOutput(self, input):
        self._check(input, "input")
        self.output = [m.updateOutput(x) for m, x in zip(self.modules, input)]
        return self.output

    def updateGradInput(self, input, gradOutput):
        inputs = self._check(input, "input")
        self._check(gradOutput, "gradOutput")
        self.gradInput = [m.updateGradInput(x, g)
                          for m, x, g in zip(self.modules, inputs, gradOutput)]
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        self._check(gradOutput, "gradOutput")
        for m, x, g in zip(self.modules, self._check(input, "input"), gradOutput):
            m.accGradParameters(x, g, scale)

    def backward(self, input, gradOutput, scale=1):
        inputs = self._check(input, "input")
        self._check(gradOutput, "gradOutput")
        self.gradInput = [m.backward(x, g, scale)
                          for m, x, g in zip(self.modules, inputs, gradOutput)]
        return self.gradInput
