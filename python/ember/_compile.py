"""``ember.compile``: torch.compile's interface, run eagerly.

ember has no graph compiler: a compiled model or function runs op by op exactly as the original
does (torch.compile's ``backend="eager"``), so results, autograd and hooks are the original's.
What a program written for torch.compile relies on is kept: the decorator forms, the argument
checks, and, for a module, torch's ``OptimizedModule`` wrapper with the original under
``_orig_mod`` (its state_dict keys carry the ``_orig_mod.`` prefix, as torch's do).
"""
import functools

from ember.nn.modules.module import Module

_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class OptimizedModule(Module):
    """A module returned by ``ember.compile``: calls run the original module (``_orig_mod``)."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile's signature; the result runs eagerly (see the module docstring)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not (isinstance(backend, str) or callable(backend)):
        raise TypeError(f"backend must be a string or a callable, got {type(backend).__name__}")
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    compiled._torchdynamo_orig_callable = model
    return compiled


def cond(pred, true_fn, false_fn, operands=()):
    """torch.cond: true_fn(*operands) if pred else false_fn(*operands). pred is a bool, a number or
    a one-element tensor. Ember runs eagerly, so only the branch taken runs (torch traces both)."""
    from ember._C import Tensor
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return true_fn(*operands) if pred else false_fn(*operands)
