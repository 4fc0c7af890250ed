"""Activation checkpointing: keep only a segment's inputs, recompute its activations in backward.

Two variants, as torch's: use_reentrant=True runs the segment in a custom autograd Function under
no_grad and, in backward, reruns it with grad and backpropagates through the rerun (the default
when use_reentrant is not given, with torch's warning); use_reentrant=False runs the segment
normally but under saved-tensor hooks that keep only an index per saved tensor, and the first
backward access reruns the segment once to recover them all (Note [Saved tensor hooks]). The
second works when no input requires grad, with autograd.grad, and with context_fn.
"""
import contextlib
import enum
import warnings

import ember
from ember import _C

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointPolicy", "detach_variable",
           "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "create_selective_checkpoint_contexts"]


class CheckpointError(RuntimeError):
    """The rerun of a non-reentrant checkpoint did not save the same tensors as the first run."""


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def noop_context_fn():
    """checkpoint's default context_fn: no context around the forward run or the rerun."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """The tensors of a tuple detached, each keeping its requires_grad; other items as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: " + type(inputs).__name__)
    out = []
    for x in inputs:
        if isinstance(x, _C.Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


_early_stop = True
_debug = False


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether a rerun may stop once it has the tensors backward needs (ember's reruns run the whole
    segment either way: the setting is kept for torch's interface)."""
    global _early_stop
    old, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = old


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """checkpoint(debug=...) for every call inside the block (None: each call's own setting)."""
    global _debug
    old, _debug = _debug, enabled
    try:
        yield
    finally:
        _debug = old


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """Selective activation checkpointing decides per operator what to save; it needs torch's
    dispatcher modes, which ember has not."""
    raise NotImplementedError("ember.utils.checkpoint.create_selective_checkpoint_contexts: selective activation "
                              "checkpointing is not supported (checkpoint recomputes the whole segment)")



class CheckpointFunction(ember.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = ember.get_rng_state()
        ctx.inputs = [a.detach() if isinstance(a, _C.Tensor) else a for a in args]
        ctx.input_requires_grad = [isinstance(a, _C.Tensor) and a.requires_grad for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, _C.Tensor)])
        with ember.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        ctx.saved_tensors  # version check: inputs must not have been modified in place
        inputs = [a.detach().requires_grad_(r) if isinstance(a, _C.Tensor) else a
                  for a, r in zip(ctx.inputs, ctx.input_requires_grad)]
        if ctx.preserve_rng_state:
            current = ember.get_rng_state()
            ember.set_rng_state(ctx.rng_state)
        try:
            with ember.enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if ctx.preserve_rng_state:
                ember.set_rng_state(current)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, _C.Tensor) and o.requires_grad]
        if pairs:
            # backward (not autograd.grad): parameters the function closes over get .grad too
            ember.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, _C.Tensor) else None for x in inputs)


_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """Runs function(*args, **kwargs) without keeping its activations; backward recomputes them."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if not any(isinstance(a, _C.Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check, *args,
                                         **kwargs)


class _Rerun:
    """The tensors a non-reentrant segment saved, recovered by rerunning it on first use."""

    def __init__(self, function, args, kwargs, rng_state, recompute_context, check):
        self.function, self.kwargs, self.rng_state = function, kwargs, rng_state
        # the inputs themselves, not detached copies: a double backward differentiates the rerun's
        # saved tensors with respect to them
        self.inputs = args
        self.recompute_context, self.check = recompute_context, check
        self.shapes = []  # (shape, dtype) of each tensor the first run saved, in order
        self.saved = None

    def get(self, index):
        if self.saved is None:
            self.rerun()
        if index >= len(self.saved):
            raise CheckpointError(
                f"torch.utils.checkpoint: the recomputation saved {len(self.saved)} tensors, the forward pass "
                f"{len(self.shapes)}: the checkpointed function must run the same operations both times")
        return self.saved[index]

    def rerun(self):
        saved = []

        def pack(t):  # the rerun's own graph keeps them too (double backward runs through it)
            saved.append(t)
            return t

        current = ember.get_rng_state() if self.rng_state is not None else None
        if self.rng_state is not None:
            ember.set_rng_state(self.rng_state)
        try:
            with ember.enable_grad(), ember.autograd.graph.saved_tensors_hooks(pack, lambda t: t), \
                    self.recompute_context:
                self.function(*self.inputs, **self.kwargs)
        finally:
            if current is not None:
                ember.set_rng_state(current)
        if self.check:
            got = [(tuple(t.shape), t.dtype) for t in saved[:len(self.shapes)]]
            if len(saved) < len(self.shapes) or got != self.shapes:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                    "than during the forward pass: the checkpointed function must save tensors of the same shapes "
                    f"and dtypes in both runs (forward: {len(self.shapes)} tensors, recomputation: {len(saved)})")
        self.saved = saved


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check, *args, **kwargs):
    forward_context, recompute_context = context_fn()
    rng_state = ember.get_rng_state() if preserve_rng_state else None
    rerun = _Rerun(function, args, kwargs, rng_state, recompute_context, determinism_check == "default")

    def pack(t):
        rerun.shapes.append((tuple(t.shape), t.dtype))
        return len(rerun.shapes) - 1

    with ember.autograd.graph.saved_tensors_hooks(pack, rerun.get), forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Splits a sequence of modules/functions into `segments` checkpointed chunks."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING.replace("checkpoint:", "checkpoint.checkpoint_sequential:", 1), stacklevel=2)
        use_reentrant = True
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, (len(functions) + segments - 1) // segments)

    def run(start, end):
        def f(x):
            for fn in functions[start:end]:
                x = fn(x)
            return x
        return f
    end = 0
    for start in range(0, len(functions) - size, size):
        end = start + size
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end, len(functions))(input)
