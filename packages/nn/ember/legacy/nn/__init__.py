"""Lua Torch's ``nn`` module API on libTHNN's kernels, without the autograd
tape: every module has ``forward``/``backward`` (and the finer
``updateOutput``/``updateGradInput``/``accGradParameters``), keeps its last
results in ``output``/``gradInput`` and its parameters' gradients in
``gradWeight``/``gradBias`` until ``zeroGradParameters``.  Dimensions, class
targets and container indices are 1-based, as in Lua Torch."""
from ._base import Criterion, Module
from ._containers import Concat, ConcatTable, Container, ParallelTable, Sequential
from ._criterions import BCECriterion, ClassNLLCriterion, CrossEntropyCriterion, MSECriterion
from ._layers import (Linear, SpatialAveragePooling, SpatialBatchNormalization,
                      SpatialConvolution, SpatialMaxPooling)
from ._simple import (CAddTable, Dropout, Identity, JoinTable, LogSoftMax, ReLU, Reshape,
                      Sigmoid, SoftMax, Tanh, View)

__all__ = ["Module", "Criterion", "Container", "Sequential", "Concat", "ConcatTable",
           "ParallelTable", "Linear", "SpatialConvolution", "SpatialMaxPooling",
           "SpatialAveragePooling", "SpatialBatchNormalization", "ReLU", "Tanh", "Sigmoid",
           "SoftMax", "LogSoftMax", "Dropout", "View", "Reshape", "Identity", "CAddTable",
           "JoinTable", "ClassNLLCriterion", "CrossEntropyCriterion", "MSECriterion",
           "BCECriterion"]
