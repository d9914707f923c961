import ember


def parameters_to_vector(parameters):
    """One flat tensor of all the parameters (differentiable)."""
    return ember.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of vec into the parameters' values."""
    if not isinstance(vec, ember.Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    offset = 0
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.numel() != total:
        raise RuntimeError(f"vector has {vec.numel()} elements but the parameters have "
                           f"{total}")
    with ember.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view_as(p))
            offset += n
