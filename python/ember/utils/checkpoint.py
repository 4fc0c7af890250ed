"""Activation checkpointing: keep only a segment's inputs, recompute its activations in backward."""
import ember
from ember import _C


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


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, context_fn=None,
               determinism_check="default", debug=False, **kwargs):
    """Runs function(*args) without saving its activations; backward recomputes them."""
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not None:
        raise NotImplementedError("checkpoint(context_fn=...) is not supported")
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Splits a sequence of modules/functions into `segments` checkpointed chunks."""
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
        input = checkpoint(run(start, end), input, **kwargs)
    return run(end, len(functions))(input)
