"""The Optimizer base class with PyTorch's behaviour (param groups, state, state dicts, hooks)."""
import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from itertools import chain

import ember
from ember.autograd.profiler import record_function as _record_function
from ember.utils.hooks import RemovableHandle

_is_profiling = ember._C._profiler._is_profiling

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook", "required"]


class _RequiredParameter:
    """Singleton marking a hyperparameter the caller must give (torch.optim.optimizer.required)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Registers hook(optimizer, args, kwargs) run before every optimizer's step."""
    handle = RemovableHandle(_global_step_pre_hooks)
    _global_step_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Registers hook(optimizer, args, kwargs) run after every optimizer's step."""
    handle = RemovableHandle(_global_step_post_hooks)
    _global_step_post_hooks[handle.id] = hook
    return handle


def _wrap_step(step):
    def hooked(self, args, kwargs):
        for hook in chain(_global_step_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
        out = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in chain(self._optimizer_step_post_hooks.values(), _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if _is_profiling():  # the profiler shows the step as one range, named as torch names it
            with _record_function(f"Optimizer.step#{type(self).__name__}.step"):
                return hooked(self, args, kwargs)
        return hooked(self, args, kwargs)

    wrapper._ember_hooked = True
    return wrapper


class Optimizer:
    """Base class for all optimizers.

    params: an iterable of Tensors, of (name, Tensor) pairs, or of dicts (parameter groups with
    their own options); defaults: the options a group does not set.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_ember_hooked", False):
            cls.step = _wrap_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, ember.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {params.type()}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)
        self._warned_capturable_if_run_uncaptured = True

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---- parameter groups ----
    def add_param_group(self, param_group):
        """Adds a parameter group (a dict with 'params' and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, ember.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        extracted, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
                names.append(p[0])
                extracted.append(p[1])
            else:
                extracted.append(p)
        if names and len(names) != len(extracted):
            raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        if names:
            param_group["param_names"] = names
        param_group["params"] = extracted

        for p in extracted:
            if not isinstance(p, ember.Tensor):
                mod = type(p).__module__
                name = type(p).__name__ if mod == "builtins" else f"{mod}.{type(p).__qualname__}"
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + name)
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        if len({id(p) for p in extracted}) != len(extracted):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; "
                          "see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)

        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in group) != ("param_names" in param_group):
                current = "with" if "param_names" in param_group else "without"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} names to the optimizer")
        if any(id(p) in seen for p in extracted):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients ----
    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized tensors (to None by default)."""
        if _is_profiling():
            with _record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
                return self._zero_grad(set_to_none)
        return self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # ---- hooks ----
    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), run before step()."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, run after step()."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _register(hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, run before state_dict() builds the dict."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, run on state_dict()'s result."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, run before load_state_dict()."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, run after load_state_dict()."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state dicts ----
    def state_dict(self):
        """{'state': {param index: state}, 'param_groups': [group options with 'params': [indices]]}."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mappings = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mappings.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mappings})
            packed["params"] = [mappings[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mappings[id(k)] if isinstance(k, ember.Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _cast_state(param, value, key=None):
        # Floating state follows the parameter's dtype; 'step' keeps its own (float32) dtype.
        if isinstance(value, ember.Tensor):
            if key == "step":
                return value
            if param.is_floating_point():
                return value.to(dtype=param.dtype)
            return value
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, k) for k, v in value.items()}
        return value

    def load_state_dict(self, state_dict):
        """Loads a state dict made by state_dict() (ember's or torch's, same structure)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state,
                           "param_groups": [update_group(g, ng) for g, ng in zip(groups, saved_groups)]})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---- helpers for the algorithms ----
    def _grads_of(self, group, name):
        """(params with a gradient, their gradients) of a group; sparse gradients are refused."""
        params, grads = [], []
        for p in group["params"]:
            g = p.grad
            if g is not None:
                if getattr(g, "is_sparse", False):
                    raise RuntimeError(f"{name} does not support sparse gradients")
                params.append(p)
                grads.append(g)
        return params, grads
