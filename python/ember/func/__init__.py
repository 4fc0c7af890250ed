"""ember.func (torch.func): composable function transforms.

vmap dispatches through batching rules per op family (ember/_functorch/batched.py, Note [vmap
dispatch]); grad/vjp/jvp/jacrev/jacfwd/hessian compose with it (Note [Transforms under vmap]).
"""
from ember._functorch.apis import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap
from ember.nn.utils.stateless import functional_call

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state"]


def stack_module_state(models):
    """(params, buffers): each a dict of name -> the models' tensors stacked along a new dim 0.

    The stacked parameters are new leaves that require grad where the originals do (torch's
    behaviour), ready for vmap(functional_call) over an ensemble of same-shaped models.
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    t0 = type(models[0])
    if not all(type(m) is t0 for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    import ember

    def stack(named):
        names = [n for n, _ in named(models[0])]
        out = {}
        for n in names:
            ts = [dict(named(m))[n] for m in models]
            s = ember.stack([t.detach() for t in ts])
            if ts[0].requires_grad:
                s.requires_grad_()
            out[n] = s
        return out

    return stack(lambda m: m.named_parameters()), stack(lambda m: m.named_buffers())
