"""Pruning, as ``torch.nn.utils.prune``.

Pruning ``name`` of a module moves the parameter to ``name + "_orig"``, registers the 0/1 buffer
``name + "_mask"`` and makes ``name`` the plain tensor ``orig * mask``, recomputed before every
forward by a pre-hook (the pruning method itself). Pruning the same tensor again combines the
methods in a ``PruningContainer``: the new method only chooses among entries still unpruned.
``remove`` makes the pruning permanent (``name`` becomes a parameter holding ``orig * mask``).
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import ember

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way of choosing the entries to prune: subclasses define ``compute_mask(t, default_mask)``
    and ``PRUNING_TYPE`` ("unstructured", "structured" with a ``dim``, or "global")."""

    _tensor_name: str

    def __call__(self, module, inputs):
        """The forward pre-hook: ``name`` from the current ``name_orig`` and ``name_mask``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """A mask for t that prunes no entry default_mask keeps pruned."""

    def apply_mask(self, module):
        if not hasattr(self, "_tensor_name"):
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes ``name`` of ``module`` with a new ``cls(*args, **kwargs)``, combined with any
        method already pruning it; returns the method (or container) now installed."""
        old_method = None
        hooks_to_remove = [k for k, hook in module._forward_pre_hooks.items()
                           if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
        if len(hooks_to_remove) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                                 f"{module}. Use a PruningContainer.")
        for k in hooks_to_remove:
            old_method = module._forward_pre_hooks.pop(k)
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            container = old_method if isinstance(old_method, PruningContainer) else PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ember.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):  # put the parameter back as it was
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t with this method's mask applied (no module involved)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor t")
        scores = importance_scores if importance_scores is not None else t
        default_mask = default_mask if default_mask is not None else ember.ones_like(t)
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        """Makes the pruning permanent: ``name`` becomes a parameter holding orig * mask."""
        if not hasattr(self, "_tensor_name"):
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """Pruning methods applied one after another to one tensor (iterative pruning)."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        elif len(args) == 1 and isinstance(args[0], Iterable):
            for method in args[0]:
                self.add_pruning_method(method)
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and hasattr(self, "_tensor_name") and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer. Found '{method._tensor_name}'")
        if method is not None and not hasattr(self, "_tensor_name"):
            self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The last method's mask, computed over the entries (unstructured), channels (structured)
        or whole tensor (global) the earlier masks left unpruned."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.clone()
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            keep = default_mask == 1
            partial = method.compute_mask(t[keep], default_mask=default_mask[keep])
            new_mask[keep] = partial.to(dtype=new_mask.dtype)
            return new_mask
        if kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim if method.dim >= 0 else t.dim() + method.dim
            others = [d for d in range(t.dim()) if d != dim]
            keep_channel = (default_mask.sum(dim=others) != 0) if others else (default_mask != 0)
            index = keep_channel.nonzero().reshape(-1)
            partial = method.compute_mask(t.index_select(dim, index),
                                          default_mask=default_mask.index_select(dim, index))
            new_mask.index_copy_(dim, index, partial.to(dtype=new_mask.dtype))
            return new_mask
        if kind == "global":
            return method.compute_mask(t, default_mask=default_mask).to(dtype=new_mask.dtype)
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


def _validate_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_amount(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")


def _n_to_prune(amount, size):
    """amount as a count: an integer as given, a fraction of size rounded to nearest."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * size)


class _ByScore(BasePruningMethod):
    """Unstructured pruning of the ``amount`` entries (a count, or a fraction) of lowest score."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def _scores(self, t):
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        size = t.numel()
        _validate_amount(self.amount, size)
        k = _n_to_prune(self.amount, size)
        mask = default_mask.clone()
        if k != 0:
            idx = ember.topk(self._scores(t).reshape(-1), k=k, largest=False).indices
            mask.reshape(-1)[idx] = 0
        return mask


class RandomUnstructured(_ByScore):
    """Prunes ``amount`` entries (a count, or a fraction) chosen at random."""

    def _scores(self, t):
        return ember.rand_like(t, dtype=ember.float32)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_ByScore):
    """Prunes the ``amount`` entries (a count, or a fraction) of smallest magnitude."""

    def _scores(self, t):
        return ember.abs(t)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, channels):
    """A mask of t's shape that is 1 on the given indices along dim, 0 elsewhere."""
    mask = ember.zeros_like(t)
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    keep = ember.zeros(t.shape[dim], dtype=t.dtype)
    keep[channels] = 1
    return mask + keep.reshape(shape)


def _check_structured(t, dim):
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {tuple(t.shape)} with {t.dim()} dims")
    if dim >= t.dim() or dim < -t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


class _ChannelsByScore(BasePruningMethod):
    """Structured pruning of the ``amount`` channels along ``dim`` of lowest score."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def _channel_scores(self, t, dim):
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        _validate_amount(self.amount, size)
        k = _n_to_prune(self.amount, size)
        if k == 0:
            return default_mask
        dim = self.dim if self.dim >= 0 else t.dim() + self.dim
        keep = ember.topk(self._channel_scores(t, dim), k=size - k, largest=True).indices
        return _channel_mask(t, dim, keep) * default_mask


class RandomStructured(_ChannelsByScore):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    def _channel_scores(self, t, dim):
        return ember.rand(t.shape[dim])

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_ChannelsByScore):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    def __init__(self, amount, n, dim=-1):
        super().__init__(amount, dim)
        self.n = n

    def _channel_scores(self, t, dim):
        return ember.linalg.vector_norm(t, ord=self.n, dim=[d for d in range(t.dim()) if d != dim])

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError("the mask must have the shape of the tensor it prunes")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Installs pruning on ``name`` without pruning anything; returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the (module, name) pairs together: ``pruning_method(**kwargs)`` chooses among all
    their entries at once (e.g. the 20% smallest over every layer)."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = ember.nn.utils.parameters_to_vector(
        [importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = ember.nn.utils.parameters_to_vector(
        [getattr(m, n + "_mask", ember.ones_like(getattr(m, n))) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for m, n in parameters:
        param = getattr(m, n)
        count = param.numel()
        custom_from_mask(m, n, mask=final_mask[pointer:pointer + count].view_as(param))
        pointer += count


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of ``name`` permanent and removes its hook; returns module."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether any submodule of module has a pruning hook."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
