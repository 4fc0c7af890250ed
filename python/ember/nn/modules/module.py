"""nn.Module: the base class of every layer and model, with torch.nn.Module's semantics.

Parameters, buffers and submodules live in three ordered dicts (`_parameters`, `_buffers`,
`_modules`); attribute assignment routes values into them and attribute reads fall back to
them. Hooks are ordered dicts keyed by their handle's id.

Note [Module call fast path]: `__call__` checks the four hook dicts and one global flag; when
none is set it calls `forward` directly inside a `try` that costs nothing unless forward raises.
On that error path the exception (same type, same message) gets a note naming the module path
from the outermost module called, e.g. `in model.encoder.layers.2.linear1 (Linear)`; each
enclosing `__call__` extends the path by the child's attribute name.
"""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import ember
from ember._C import Tensor
from ember.nn.parameter import Parameter, Buffer, is_lazy
from ember.utils.hooks import RemovableHandle

__all__ = [
    "Module", "register_module_forward_pre_hook", "register_module_forward_hook",
    "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
    "register_module_buffer_registration_hook", "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

# ---- global hooks (apply to every module) ----
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_is_full_backward_hook = None
_has_global_call_hooks = False  # any global forward/backward hook: __call__ leaves its fast path


def _refresh_global_flag():
    global _has_global_call_hooks
    _has_global_call_hooks = bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_hooks
                                  or _global_backward_pre_hooks)


class _GlobalHandle(RemovableHandle):
    def remove(self):
        super().remove()
        _refresh_global_flag()


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) -> None or a replacement buffer, for every register_buffer."""
    handle = RemovableHandle(_global_buffer_registration_hooks)
    _global_buffer_registration_hooks[handle.id] = hook
    return handle


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) -> None or a replacement, for every register_module."""
    handle = RemovableHandle(_global_module_registration_hooks)
    _global_module_registration_hooks[handle.id] = hook
    return handle


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) -> None or a replacement, for every register_parameter."""
    handle = RemovableHandle(_global_parameter_registration_hooks)
    _global_parameter_registration_hooks[handle.id] = hook
    return handle


def register_module_forward_pre_hook(hook):
    """A forward pre-hook run before every module's own ones."""
    handle = _GlobalHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    _refresh_global_flag()
    return handle


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook run before every module's own ones."""
    handle = _GlobalHandle(_global_forward_hooks, extra_dict=[_global_forward_hooks_always_called,
                                                              _global_forward_hooks_with_kwargs])
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    _refresh_global_flag()
    return handle


def register_module_full_backward_pre_hook(hook):
    """A full backward pre-hook for every module."""
    handle = _GlobalHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    _refresh_global_flag()
    return handle


def register_module_full_backward_hook(hook):
    """A full backward hook for every module."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = True
    handle = _GlobalHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    _refresh_global_flag()
    return handle


def register_module_backward_hook(hook):
    """The old (non-full) global backward hook is not supported: use the full one."""
    raise NotImplementedError("register_module_backward_hook (non-full backward hooks) is not supported by ember; "
                              "use register_module_full_backward_hook")


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, spaces):
    """Indents every line but the first by `spaces` (nested module reprs)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class _WrappedHook:
    """A hook that is called with the module first; holds the module weakly (state-dict hooks)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# ---- the module-path note on errors (Note [Module call fast path]) ----

def _note_text(names, leaf):
    return "in " + ".".join(["model"] + names) + " (" + leaf + ")"


def _annotate_error(e, module):
    """Records `module` in the path note of an exception escaping its forward (error path only)."""
    try:
        info = e.__dict__.get("_ember_module_path")
    except AttributeError:  # an exception type without a __dict__: leave it as is
        return
    if info is None:
        note = _note_text([], type(module).__name__)
        e._ember_module_path = [module, [], type(module).__name__, note, True]
        e.add_note(note)
        return
    top, names, leaf, note, open_ = info
    if not open_ or top is module:
        return
    path = None
    for name, child in module._modules.items():
        if child is top:
            path = name
            break
    if path is None:
        for name, sub in module.named_modules():
            if sub is top and name:
                path = name
                break
    if path is None:  # called from code that does not own it: the path stops here
        info[4] = False
        return
    names[:0] = path.split(".")
    info[0] = module
    new = _note_text(names, leaf)
    notes = getattr(e, "__notes__", None)
    if notes is not None:
        for i, n in enumerate(notes):
            if n is note:
                notes[i] = new
                break
    info[3] = new


# ---- full backward hooks (register_full_backward_hook / _pre_hook) ----

class _BackwardHookState:
    """Per-call state shared by the identity Functions put on a module's inputs and outputs."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_requires_grad = False


class _BackwardHookFunction(ember.autograd.Function):
    """Identity on its tensors; its backward runs `state.on_grads` on the incoming gradients."""

    @staticmethod
    def forward(ctx, on_grads, *args):
        ctx.on_grads = on_grads
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return tuple(a.view_as(a) if isinstance(a, Tensor) else a for a in args)

    @staticmethod
    def backward(ctx, *grads):
        res = ctx.on_grads(grads)
        return (None,) + tuple(res)


def _setup_output_hook(state, result):
    def on_grads(grads):
        if state.user_pre_hooks:
            for hook in state.user_pre_hooks:
                out = hook(state.module, grads)
                if out is not None:
                    out = out if isinstance(out, tuple) else (out,)
                    if len(out) != len(grads):
                        raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                           f"{len(out)}, but expected {len(grads)}")
                    grads = out
        state.grad_outputs = grads
        if not state.input_requires_grad:  # no input gradient will come: call the hooks now
            if state.user_hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", stacklevel=2)
            grad_inputs = (None,) * state.n_inputs
            for hook in state.user_hooks:
                out = hook(state.module, grad_inputs, state.grad_outputs)
                if out is not None and not all(o is None for o in out):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            state.grad_outputs = None
        return grads

    single = isinstance(result, Tensor)
    outs = (result,) if single else result
    if not isinstance(outs, tuple) or not any(isinstance(o, Tensor) and o.requires_grad for o in outs):
        return result
    wrapped = _BackwardHookFunction.apply(on_grads, *outs)
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    return wrapped[0] if single else tuple(wrapped)


def _setup_input_hook(state, args):
    n = sum(1 for a in args if isinstance(a, Tensor))
    state.n_inputs = n
    if not ember.is_grad_enabled() or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        return args
    state.input_requires_grad = True

    def on_grads(grads):
        grads = tuple(grads)
        for hook in state.user_hooks:
            out = hook(state.module, grads, state.grad_outputs if state.grad_outputs is not None else ())
            if out is not None:
                out = out if isinstance(out, tuple) else (out,)
                if len(out) != len(grads):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                       f"expected {len(grads)}")
                grads = out
        state.grad_outputs = None
        return grads

    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    wrapped = _BackwardHookFunction.apply(on_grads, *[args[i] for i in tensor_pos])
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    new_args = list(args)
    for i, w in zip(tensor_pos, wrapped):
        new_args[i] = w
    return tuple(new_args)


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class Module:
    """Base class for all neural network modules (subclass it and define forward)."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False
    _compiled_call_impl = None

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were "
                            "given")
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", {})
        sa(self, "_buffers", {})
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_backward_pre_hooks", OrderedDict())
        sa(self, "_backward_hooks", OrderedDict())
        sa(self, "_is_full_backward_hook", None)
        sa(self, "_forward_hooks", OrderedDict())
        sa(self, "_forward_hooks_with_kwargs", OrderedDict())
        sa(self, "_forward_hooks_always_called", OrderedDict())
        sa(self, "_forward_pre_hooks", OrderedDict())
        sa(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        sa(self, "_state_dict_hooks", OrderedDict())
        sa(self, "_state_dict_pre_hooks", OrderedDict())
        sa(self, "_load_state_dict_pre_hooks", OrderedDict())
        sa(self, "_load_state_dict_post_hooks", OrderedDict())
        sa(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- registration ----

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (state that is not a parameter, e.g. running statistics)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = getattr(tensor, "persistent", persistent)
        for hook in _global_buffer_registration_hooks.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (a Parameter or None)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        for hook in _global_parameter_registration_hooks.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module (or None) under `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for add_module."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at dotted path `target` ('' is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replaces (or, unless strict, adds) the submodule at dotted path `target`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(".".join(atoms[:-1])) if len(atoms) > 1 else self
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The parameter at dotted path `target`."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path `target`."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        """Override with set_extra_state to store extra (picklable) state in the state_dict."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    # ---- conversions ----

    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with ember.no_grad():
                applied = fn(param)
            grad = param.grad
            # .data can only be swapped within a dtype; a new dtype makes a new Parameter (as torch does
            # with torch.__future__.set_overwrite_module_params_on_conversion(True)).
            if applied.dtype == param.dtype:
                param.data = applied
                out = param
            else:
                out = Parameter(applied, param.requires_grad)
                for k, v in param.__dict__.items():
                    out.__dict__.setdefault(k, v)
                self._parameters[key] = out
            if grad is not None:
                with ember.no_grad():
                    g = fn(grad)
                if out is param and g.dtype == grad.dtype:
                    grad.data = g
                else:
                    out.grad = g.requires_grad_(grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Calls fn on every submodule (children first) and then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None):
        raise NotImplementedError("Ember was built without CUDA support; cannot move a module to cuda")

    def ipu(self, device=None):
        raise NotImplementedError("ember has no IPU support")

    def xpu(self, device=None):
        raise NotImplementedError("ember has no XPU support")

    def mtia(self, device=None):
        raise NotImplementedError("ember has no MTIA support")

    def cpu(self):
        """Moves parameters and buffers to the CPU (where they already are)."""
        return self._apply(lambda t: t.cpu() if hasattr(t, "cpu") else t)

    def type(self, dst_type):
        """Casts all parameters and buffers to dst_type."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Casts floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Casts floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Casts floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Casts floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse=True):
        """Replaces parameters and buffers by uninitialized tensors of the same shape on `device`."""
        return self._apply(lambda t: ember.empty_like(t, device=device), recurse=recurse)

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None, non_blocking=False), to(dtype), to(tensor), to(memory_format=...)."""
        device, dtype, non_blocking, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype="
                                f"{dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers. Please file an issue at https://github.com/pytorch/pytorch/issues/new?"
                              "template=bug-report.yml if a complex module does not work as expected.")
        if device is not None and _as_device(device).type != "cpu":
            raise NotImplementedError(f"Ember was built without CUDA support; cannot move a module to "
                                      f"{_as_device(device)}")

        def convert(t):
            if memory_format is not None and t.dim() in (4, 5):
                t = t.contiguous(memory_format=memory_format)
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                return t.to(dtype)
            return t

        return self._apply(convert)

    def share_memory(self):
        """Moves parameters and buffers to shared memory (Tensor.share_memory_ for each)."""
        return self._apply(lambda t: t.share_memory_())

    # ---- hooks ----

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a new grad_output, before the module's input grads."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The old (non-full) backward hook is not supported: use register_full_backward_hook."""
        raise NotImplementedError("register_backward_hook (non-full backward hooks) is not supported by ember; use "
                                  "register_full_backward_hook")

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a new grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) (or (module, args, kwargs) with_kwargs) -> None or new args (and kwargs)."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) (or (module, args, kwargs, output)) -> None or a new output."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _register_state_dict_hook(self, hook):
        """Private post-hook: hook(module, state_dict, prefix, local_metadata) may return a new state_dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> None, after state_dict() fills its part."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars), before state_dict() runs."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(hook, self if with_module else None)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) -> None, after load_state_dict() loads this module."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- calling ----

    def __call__(self, *args, **kwargs):
        # Note [Module call fast path]
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                or _has_global_call_hooks):
            try:
                return self.forward(*args, **kwargs)
            except Exception as e:
                _annotate_error(e, self)
                raise
        try:
            return self._call_with_hooks(args, kwargs)
        except Exception as e:
            _annotate_error(e, self)
            raise

    _call_impl = __call__

    def _call_with_hooks(self, args, kwargs):
        forward_call = self.forward
        full_backward_hooks, backward_pre_hooks = [], []
        if self._backward_pre_hooks or _global_backward_pre_hooks:
            backward_pre_hooks = list(_global_backward_pre_hooks.values()) + list(self._backward_pre_hooks.values())
        if self._backward_hooks or _global_backward_hooks:
            full_backward_hooks = list(_global_backward_hooks.values()) + list(self._backward_hooks.values())
        called_always_hooks = set()
        result = None

        def run_forward_hooks(result, always_only=False):
            for hook_id, hook in itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()):
                is_always = hook_id in self._forward_hooks_always_called or \
                    hook_id in _global_forward_hooks_always_called
                if always_only and (not is_always or hook_id in called_always_hooks):
                    continue
                if is_always:
                    called_always_hooks.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None and not always_only:
                    result = out
            return result

        try:
            if _global_forward_pre_hooks or self._forward_pre_hooks:
                for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(),
                                                     self._forward_pre_hooks.items()):
                    if hook_id in self._forward_pre_hooks_with_kwargs:
                        out = hook(self, args, kwargs)
                        if out is not None:
                            if isinstance(out, tuple) and len(out) == 2:
                                args, kwargs = out
                            else:
                                raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                                   f"new_kwargs), but got {out}.")
                    else:
                        out = hook(self, args)
                        if out is not None:
                            args = out if isinstance(out, tuple) else (out,)
            state = None
            if full_backward_hooks or backward_pre_hooks:
                state = _BackwardHookState(self, full_backward_hooks, backward_pre_hooks)
                args = _setup_input_hook(state, args)
            result = forward_call(*args, **kwargs)
            if _global_forward_hooks or self._forward_hooks:
                result = run_forward_hooks(result)
            if state is not None:
                result = _setup_output_hook(state, result)
            return result
        except Exception:
            # always_call hooks run even when forward (or an earlier hook) raised; their errors are warned.
            for hook_id, hook in itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()):
                is_always = hook_id in self._forward_hooks_always_called or \
                    hook_id in _global_forward_hooks_always_called
                if is_always and hook_id not in called_always_hooks:
                    called_always_hooks.add(hook_id)
                    try:
                        if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                            hook(self, args, kwargs, result)
                        else:
                            hook(self, args, result)
                    except Exception as e:
                        warnings.warn("global module forward hook with ``always_call=True`` raised an exception "
                                      f"that was silenced as another error was raised in forward: {str(e)}")
            raise

    # ---- attributes ----

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        # Modules pickled before some attributes existed get them here.
        defaults = (("_forward_pre_hooks", OrderedDict), ("_forward_pre_hooks_with_kwargs", OrderedDict),
                    ("_forward_hooks", OrderedDict), ("_forward_hooks_with_kwargs", OrderedDict),
                    ("_forward_hooks_always_called", OrderedDict), ("_state_dict_hooks", OrderedDict),
                    ("_state_dict_pre_hooks", OrderedDict), ("_load_state_dict_pre_hooks", OrderedDict),
                    ("_load_state_dict_post_hooks", OrderedDict), ("_non_persistent_buffers_set", set),
                    ("_backward_pre_hooks", OrderedDict), ("_backward_hooks", OrderedDict))
        for name, factory in defaults:
            if name not in self.__dict__:
                object.__setattr__(self, name, factory())
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    def __getattr__(self, name):
        # Only reached when normal lookup fails: parameters, buffers and submodules.
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                for hook in _global_module_registration_hooks.values():
                    out = hook(self, name, value)
                    if out is not None:
                        value = out
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                for hook in _global_module_registration_hooks.values():
                    out = hook(self, name, value)
                    if out is not None:
                        value = out
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    if isinstance(value, Buffer):
                        persistent = getattr(value, "persistent", True)
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    # register_buffer would refuse an existing plain attribute of the same name.
                    if isinstance(value, Buffer):
                        remove_from(self.__dict__, self._parameters, self._modules)
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        parameters = list(self._parameters.keys())
        modules = list(self._modules.keys())
        buffers = list(self._buffers.keys())
        keys = module_attrs + attrs + parameters + modules + buffers
        keys = [key for key in keys if not key[0].isdigit()]
        return sorted(keys)

    # ---- state dict ----

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of parameters and persistent buffers keyed by dotted names (with `_metadata`)."""
        if args:
            # torch's deprecated positional form: (destination, prefix, keep_vars).
            if len(args) > 3:
                raise TypeError(f"state_dict() takes at most 3 positional arguments but {len(args)} were given")
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/"
                          "docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details.",
                          FutureWarning)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            out = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if out is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif out is not None:
                destination = out
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Copies this module's own parameters and buffers from state_dict (override point for versions)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        for k, v in self._buffers.items():
            if v is not None and k not in self._non_persistent_buffers_set:
                local_state[k] = v
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(input_param)}")
                continue
            lazy = is_lazy(param)
            if not lazy and param.dim() == 0 and input_param.dim() == 1 and input_param.numel() == 1:
                input_param = input_param[0]  # old checkpoints stored 0-d values with one dim
            if not lazy and tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {_size_str(input_param)} from "
                                  f"checkpoint, the shape in current model is {_size_str(param)}.")
                continue
            try:
                with ember.no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    elif lazy:
                        param.materialize(input_param.shape)
                        param.copy_(input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{_size_str(param)} and whose dimensions in the checkpoint are "
                                  f"{_size_str(input_param)}, an exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    head, dot, _ = key[len(prefix):].partition(".")
                    if dot:
                        if head not in self._modules:
                            unexpected_keys.append(key)
                    elif head not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and buffers from state_dict; returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, keys)
                if out is not None:
                    raise RuntimeError("Hooks registered with ``register_load_state_dict_post_hook`` are not expected "
                                       "to return new values, if incompatible_keys need to be modified, it should be "
                                       "done inplace.")

        load(self, state_dict)
        del load
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- iteration ----

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (module_prefix + "." + k if module_prefix else k), v

    def parameters(self, recurse=True):
        """Iterator over parameters (of submodules too when recurse)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over (dotted name, parameter)."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """Iterator over buffers (of submodules too when recurse)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over (dotted name, buffer)."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        """Iterator over immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """Iterator over (name, immediate child module), each module once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self):
        """Iterator over all modules in the tree (self first), each once."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterator over (dotted name, module) for the tree, self first under `prefix`."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # ---- modes ----

    def train(self, mode=True):
        """Sets training mode on this module and its descendants."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Sets evaluation mode (train(False))."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets requires_grad on every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets parameter gradients (to None by default, else to zeros)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def _replicate_for_data_parallel(self):
        raise NotImplementedError("DataParallel replication is not supported by ember")

    # ---- printing ----

    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The module-specific part of repr (override in subclasses)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"

    def compile(self, *args, **kwargs):
        raise NotImplementedError("ember has no compiler (torch.compile); call the module directly")


def _size_str(t):
    return "torch.Size(" + str(list(t.shape)) + ")"


def _parse_to(*args, **kwargs):
    """Splits Module.to's arguments into (device, dtype, non_blocking, memory_format)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    copy = kwargs.pop("copy", False)  # noqa: F841 (accepted, as torch's parser)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword "
                        f"'{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        t = rest.pop(0)
        device, dtype = t.device, t.dtype
    elif rest and (isinstance(rest[0], (str, ember.device)) or rest[0] is None):
        device = rest.pop(0)
    if rest and isinstance(rest[0], ember.dtype):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(f"to() received an invalid combination of arguments - got {tuple(type(a).__name__ for a in args)}")
    if isinstance(device, int):
        device = ember.device("cuda", device)
    return device, dtype, non_blocking, memory_format


def _as_device(d):
    return d if isinstance(d, ember.device) else ember.device(d)
