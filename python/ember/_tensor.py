"""Tensor methods written in Python (printing, NumPy protocol), attached to the C++ class."""

from ember._C import Tensor


def _repr(self):
    from ember._tensor_str import tensor_repr
    import ember
    return tensor_repr(self, default_dtype=ember.get_default_dtype)


Tensor.__repr__ = _repr
Tensor.__str__ = _repr
