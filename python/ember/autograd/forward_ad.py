"""Forward-mode AD: dual_level, make_dual, unpack_dual (the API of torch.autograd.forward_ad).

Note [Forward AD] (csrc/ember/autograd/forward_ad.h): tangents are state in C++, one per tensor
per dual level, and every op propagates them as it runs: explicit formulas for the common ops
(elementwise, sum, matmul), views share their base's tangent, copy_ and every in-place op update
the destination's tangent, and any other differentiable op derives its output tangents exactly
from its backward formula (a local double vjp). Duals keep requires_grad=False and have no
grad_fn; tangents are ordinary tensors, differentiable by reverse mode. Leaving a level clears its
tangents. Unlike PyTorch, dual levels may be nested (torch raises); an inner level's computation
is differentiated at the outer levels only.
"""
from collections import namedtuple

from ember import _C

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_current_level = -1


def enter_dual_level():
    """Open a new forward AD level; returns its index."""
    global _current_level
    new_level = _C._enter_dual_level()
    _current_level = new_level
    return new_level


def exit_dual_level(*, level=None):
    """Close a forward AD level (the innermost one by default); its tangents are cleared."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _C._exit_dual_level(level=level)
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` that carries `tangent` as its forward gradient at `level`.

    The tangent must have the primal's size and a floating point or complex dtype; it is laid out
    like the primal (copied when its strides differ).
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    return _C._make_dual(tensor, tangent, level=level)


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """Namedtuple returned by :func:`unpack_dual`: the primal view and the tangent
(None when the tensor has no tangent at that level)."""


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor` at `level`; tangent is None when it has none."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    primal, tangent = _C._unpack_dual(tensor, level=level)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager for a forward AD level: duals made inside hold their tangents until exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
