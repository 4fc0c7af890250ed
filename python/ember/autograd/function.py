"""ember.autograd.Function: user-defined forward/backward pairs recorded in the graph."""
import functools

import ember
from ember import _C
from ember.autograd.grad_mode import no_grad


class FunctionCtx:
    """The `ctx` passed to forward and backward."""

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Tensors for jvp, where they are ctx.saved_tensors (call once, from forward)."""
        for t in tensors:
            assert isinstance(t, _C.Tensor) or t is None, (
                "save_for_forward expects all arguments to be tensors; you should save non-tensors as attributes on "
                "ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value

    @property
    def saved_tensors(self):
        if getattr(self, "_in_jvp", False):  # save_for_backward's tensors are not saved yet (as torch)
            return tuple(getattr(self, "saved_for_forward", None) or ())
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

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        ctx._backward_fn = cls.backward
        tensor_args = [a for a in args if isinstance(a, _C.Tensor)]
        levels = _C._fw_levels_with_tangents(tensor_args) if tensor_args else []
        # Forward runs on the primals: no tangents are visible in it (Note [Forward AD]).
        with no_grad(), _C._HideDualLevels(0):
            outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        with _C._HideDualLevels(0):
            result = _C._function_record(ctx, cls.__name__ + "Backward", tuple(args), tuple(outs),
                                         getattr(ctx, "to_save", None), getattr(ctx, "dirty_tensors", None),
                                         getattr(ctx, "non_differentiable", None))
        if levels:
            result = _forward_ad(cls, ctx, args, outs, result, levels)
        return result[0] if single else result


def _differentiable(t):
    return t.is_floating_point() or t.is_complex()


def _forward_ad(cls, ctx, args, outs, result, levels):
    """Output tangents from cls.jvp at each level where an input has a tangent (as torch's checks)."""
    dirty = getattr(ctx, "dirty_tensors", None) or ()
    non_diff = getattr(ctx, "non_differentiable", None) or ()
    materialize = getattr(ctx, "materialize_grads", True)
    result = list(result)
    input_ids = {}  # root TensorImpl -> input index, for outputs that are views of an input
    for j, a in enumerate(args):
        if isinstance(a, _C.Tensor):
            input_ids.setdefault(_C._fw_view_root(a)[1], j)
    for i, o in enumerate(outs):
        # An input returned as is (not modified in place) becomes a view of it with its own tangent.
        if isinstance(o, _C.Tensor) and any(o is a for a in args) and not any(o is d for d in dirty) and \
                _C._fw_view_root(result[i])[2] == _C._fw_view_root(o)[2]:
            result[i] = _C._fw_alias(o)
    try:
        for level in levels:
            grad_inputs, versions = [], []
            for a in args:
                t = _C._fw_tangent(a, level) if isinstance(a, _C.Tensor) else None
                versions.append(None if t is None else (t._version, _C._fw_view_root(t)[2]))
                if t is None and isinstance(a, _C.Tensor) and materialize and _differentiable(a):
                    t = ember.zeros_like(a)
                grad_inputs.append(t)
            ctx._in_jvp = True
            try:
                with _C._HideDualLevels(level):
                    res = cls.jvp(ctx, *grad_inputs)
            finally:
                ctx._in_jvp = False
            res = res if isinstance(res, tuple) else (res,)
            for k, g in enumerate(res):
                if g is not None and not isinstance(g, _C.Tensor):
                    raise RuntimeError(f"expected Variable or None (got {type(g).__name__}) for grad output {k}.")
            if len(res) != len(outs):
                raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                                   f"{len(outs)} but got {len(res)})")
            for i, (o, g) in enumerate(zip(outs, res)):
                if not isinstance(o, _C.Tensor):
                    continue
                if any(o is n for n in non_diff) or not _differentiable(o):
                    if g is not None:
                        raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the "
                                           "corresponding forward output is not a differentiable Tensor.You should "
                                           "return None at that position instead.")
                    continue
                if g is None:
                    continue
                if any(o is d for d in dirty):
                    j = next((j for j, a in enumerate(args) if a is o), None)
                    if j is None:
                        raise RuntimeError("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is "
                                           "not an input, there is no need to pass it to mark_dirty().")
                    if versions[j] is not None:
                        if g._version == versions[j][0]:
                            raise RuntimeError("An inplace custom Function is not modifying the forward mode "
                                               "gradients inplace. If the forward is modifying an input inplace, "
                                               "then the jvp function must modify the corresponding gradient "
                                               "inplace.")
                        if _C._fw_view_root(g)[2] != versions[j][1]:
                            raise RuntimeError("An inplace custom Function is not returning the forward mode "
                                               "gradients as-is. If the forward is modifying an input inplace, then "
                                               "the jvp function must modify a gradient inplace and return it "
                                               "as-is.")
                    else:
                        _C._fw_set_tangent(o, g, level, True)
                    continue
                o_view, o_root, _ = _C._fw_view_root(o)
                j = next((j for j, a in enumerate(args) if a is o), None)
                if j is None and o_view:
                    j = input_ids.get(o_root)
                if j is not None:
                    in_t = _C._fw_tangent(args[j], level)
                    if in_t is not None:
                        g_view, g_root, _ = _C._fw_view_root(g)
                        if not g_view:
                            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                                               "as-is) but the jvp is not returning a view.")
                        if g_root != _C._fw_view_root(in_t)[1]:
                            raise RuntimeError("A custom Function is returning a view but the jvp is not returning "
                                               "a view of the given grad input.")
                _C._fw_set_tangent(result[i], g, level, False)
    finally:
        ctx.saved_for_forward = None
    return tuple(result)


def once_differentiable(fn):
    """Marks a backward as not differentiable: it runs without recording a graph."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
