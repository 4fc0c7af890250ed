"""Reverse-mode automatic differentiation (tape-based, engine in C++)."""
from ember import _C
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from ember.autograd.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from ember.autograd.grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
    set_multithreading_enabled,
)


def _tensors(x):
    if x is None:
        return ()
    if isinstance(x, _C.Tensor):
        return (x,)
    return tuple(x)


def _grads_for(outputs, grad_outputs):
    grads = list(_tensors(grad_outputs)) if grad_outputs is not None else []
    grads += [None] * (len(outputs) - len(grads))
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got {len(grads)} gradients "
                           f"for {len(outputs)} outputs")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the .grad of the leaves (or of `inputs`)."""
    outputs = _tensors(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    _C._run_backward(outputs, _grads_for(outputs, grad_tensors), retain_graph, create_graph,
                     _tensors(inputs), False, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple), without touching .grad."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported")
    outs = _tensors(outputs)
    ins = _tensors(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    res = _C._run_backward(outs, _grads_for(outs, grad_outputs), retain_graph, create_graph, ins,
                           allow_unused, False)
    if materialize_grads:
        import ember
        res = tuple(ember.zeros_like(i) if r is None else r for r, i in zip(res, ins))
    return res


from ember.autograd import forward_ad, functional  # noqa: E402,F401
from ember.autograd.gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401
from ember._legacy import Variable  # noqa: E402,F401  (torch.autograd.Variable, merged into Tensor)


def __getattr__(name):  # ember.autograd.profiler (the older profiler API) and graph on first use
    if name in ("profiler", "profiler_util", "graph"):
        import importlib
        return importlib.import_module("ember.autograd." + name)
    raise AttributeError(f"module 'ember.autograd' has no attribute {name!r}")
