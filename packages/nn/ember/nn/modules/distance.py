"""PyTorch's module path for CosineSimilarity and PairwiseDistance
(torch.nn.modules.distance), so that whole models pickled by either library load; the classes
live in layers.py and are named here."""
from ._paths import publish
from .layers import CosineSimilarity, PairwiseDistance

__all__ = ["CosineSimilarity", "PairwiseDistance"]
publish(__name__, globals(), __all__)
