"""ember.func (torch.func): composable function transforms.

vmap dispatches through batching rules per op family (ember/_functorch/batched.py, Note [vmap
dispatch]); grad/vjp/jvp/jacrev/jacfwd/hessian compose with it (Note [Transforms under vmap]).
"""
from ember._functorch.apis import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap
from ember.nn.utils.stateless import functional_call

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state", "linearize", "functionalize", "replace_all_batch_norm_modules_"]


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


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product of func at primals,
    tangents shaped and typed as primals (func runs again per call, on forward-mode AD)."""
    import ember
    from ember.utils._pytree import tree_flatten
    flat_primals, primals_spec = tree_flatten(primals)
    for p in flat_primals:  # primals must be tensors (torch fails on the first non-tensor the same way)
        if not isinstance(p, ember.Tensor):
            raise AttributeError(f"'{type(p).__name__}' object has no attribute 'new_empty'")
    output = func(*primals)

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argspec as the primals "
                               f"{primals_spec}")
        for i, (p, t) in enumerate(zip(flat_primals, flat_tangents)):
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree doesn't match the shape "
                                   f"{p.shape} of the corresponding primal.")
            if t.dtype != p.dtype:
                raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                                   f"{p.dtype} of the corresponding primal.")
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def functionalize(func, *, remove="mutations"):
    """func with its intermediate mutations (and with remove='mutations_and_views', its aliasing)
    removed. Ember runs eagerly and does not trace, where the two programs compute the same values
    and mutate the inputs alike: the function comes back wrapped, unchanged in meaning."""
    import functools
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are: 'mutations' and 'mutations_and_views'.")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped


def replace_all_batch_norm_modules_(root):
    """Makes every batch norm module under root use batch statistics (running_mean/var None,
    track_running_stats False), as vmap over a model needs; returns root."""
    from ember.nn.modules.batchnorm import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
