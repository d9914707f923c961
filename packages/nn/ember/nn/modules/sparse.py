"""PyTorch's module path for the Embedding and EmbeddingBag (torch.nn.modules.sparse), so that
whole models pickled by either library load; the classes live in layers.py and are named here."""
from ._paths import publish
from .layers import (Embedding, EmbeddingBag)

__all__ = ["Embedding", "EmbeddingBag"]
publish(__name__, globals(), __all__)
