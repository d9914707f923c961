"""ember.nn.utils: gradient clipping, flat parameter vectors, (in .rnn)
packed sequences, (in .parametrize and .parametrizations) parametrized
tensors, the hook-based spectral_norm, and (in .fusion) folding eval-mode
batch norms into the layer before them."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from . import fusion, parametrizations, parametrize, rnn

__all__ = ["rnn", "fusion", "parametrize", "parametrizations", "clip_grad_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "spectral_norm",
           "remove_spectral_norm"]
