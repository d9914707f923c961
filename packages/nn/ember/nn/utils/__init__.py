"""ember.nn.utils: gradient clipping, flat parameter vectors and (in .rnn)
packed sequences."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import rnn

__all__ = ["rnn", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]
