"""parameters_to_vector / vector_to_parameters."""
import ember
from ember._C import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All parameters flattened into one vector."""
    return ember.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies slices of vec into the parameters' data (in order)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
