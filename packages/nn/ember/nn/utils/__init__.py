"""ember.nn.utils: gradient clipping, flat parameter vectors, (in .rnn)
packed sequences, (in .parametrize and .parametrizations) parametrized
tensors, and the hook-based spectral_norm."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from . import parametrizations, parametrize, rnn

__all__ = ["rnn", "parametrize", "parametrizations", "clip_grad_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "spectral_norm",
           "remove_spectral_norm"]
