"""ember.autograd.Function: user-defined forward/backward pairs recorded in the graph."""
import functools

from ember import _C
from ember.autograd.grad_mode import no_grad


class FunctionCtx:
    """The `ctx` passed to forward and backward."""

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def mark_dirty(self, *tensors):
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value

    @property
    def saved_tensors(self):
        saved = getattr(self, "_saved", None)
        if saved is None:
            return ()
        return saved.unpack()


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call via .apply."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. "
                           "Please use new-style autograd function with static forward method.")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        ctx._backward_fn = cls.backward
        with no_grad():
            outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        result = _C._function_record(ctx, cls.__name__ + "Backward", tuple(args), tuple(outs),
                                     getattr(ctx, "to_save", None), getattr(ctx, "dirty_tensors", None),
                                     getattr(ctx, "non_differentiable", None))
        return result[0] if single else result


def once_differentiable(fn):
    """Marks a backward as not differentiable: it runs without recording a graph."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
