"""Forward-mode AD: dual_level, make_dual, unpack_dual.

Note [Forward mode by double vjp]: tangents are not propagated op by op. make_dual returns a
primal that records reverse-mode history; unpack_dual(y) computes the tangent J·t exactly with
two reverse passes: g(u) = (dy/dx)^T u is linear in u, so d/du <g(u), t> = J t. Every op with
a (differentiable) backward formula therefore supports forward mode, at about three times the
cost of a forward pass. Dual tensors report requires_grad=True, unlike PyTorch's.
"""
from collections import namedtuple

import ember

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels = []  # one list of (primal, tangent) per open dual_level


class dual_level:
    """Context manager scoping dual tensors; tangents are dropped on exit."""

    def __enter__(self):
        _levels.append([])
        return len(_levels) - 1

    def __exit__(self, *exc):
        _levels.pop()


def enter_dual_level():
    _levels.append([])
    return len(_levels) - 1


def exit_dual_level(*, level=None):
    _levels.pop()


def _level(level):
    if not _levels:
        raise RuntimeError("make_dual/unpack_dual must be called inside a dual_level context (forward AD)")
    return _levels[-1 if level is None else level]


def make_dual(tensor, tangent, *, level=None):
    """A tensor whose forward-mode derivative is `tangent`."""
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {tuple(tensor.shape)} while the given "
                           f"forward gradient is of size {tuple(tangent.shape)}.")
    if not tensor.is_floating_point():
        raise ValueError("Expected primal to be floating point")
    primal = tensor.detach().requires_grad_()
    _level(level).append((primal, tangent.detach()))
    return primal


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor`; tangent is None when it does not depend on any dual."""
    duals = _level(level)
    for p, t in duals:
        if p is tensor:
            return UnpackedDualTensor(tensor.detach(), t)
    if not tensor.requires_grad or not duals:
        return UnpackedDualTensor(tensor, None)
    primals = [p for p, _ in duals]
    with ember.enable_grad():
        u = ember.zeros_like(tensor).requires_grad_()
        grads = ember.autograd.grad(tensor, primals, u, create_graph=True, allow_unused=True)
        terms = [(g * t).sum() for g, (_, t) in zip(grads, duals) if g is not None and g.requires_grad]
        if not terms:
            return UnpackedDualTensor(tensor.detach(), None)
        s = terms[0]
        for term in terms[1:]:
            s = s + term
        (tangent,) = ember.autograd.grad(s, u, allow_unused=True)
    if tangent is None:
        tangent = ember.zeros_like(tensor)
    return UnpackedDualTensor(tensor.detach(), tangent.detach())
