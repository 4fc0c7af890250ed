"""Higher-level autograd helpers: jacobian, hessian, vjp, jvp, hvp, vhp (built on autograd.grad)."""
import ember
from ember import _C


def _tuple(x):
    return (x, False) if isinstance(x, tuple) or isinstance(x, list) else ((x,), True)


def _prep(inputs, create_graph):
    return tuple(x.detach().requires_grad_(True) if not create_graph or not x.requires_grad else x for x in inputs)


def _zeros_like(x):
    return ember.zeros(*x.shape, dtype=x.dtype) if x.dim() else ember.zeros((), dtype=x.dtype)


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=True):
    outs = [o for o in outputs]
    gs = ember.autograd.grad(outs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
                             allow_unused=True)
    return tuple(_zeros_like(i) if g is None else g for g, i in zip(gs, inputs))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    inputs, single_in = _tuple(inputs)
    inputs = _prep(inputs, create_graph)
    with ember.enable_grad():
        outputs, single_out = _tuple(func(*inputs))
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            v = (ember.ones((), dtype=outputs[0].dtype).reshape(outputs[0].shape),)
        v, _ = _tuple(v)
        res = _grad(outputs, inputs, v, create_graph)
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    res = tuple(r if create_graph else r.detach() for r in res)
    return (outs[0] if single_out else outs), (res[0] if single_in else res)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), computed with the double-vjp trick."""
    inputs, single_in = _tuple(inputs)
    inputs = _prep(inputs, True)
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        v = (ember.ones((), dtype=inputs[0].dtype).reshape(inputs[0].shape),)
    v, _ = _tuple(v)
    with ember.enable_grad():
        outputs, single_out = _tuple(func(*inputs))
        us = tuple(_zeros_like(o).requires_grad_(True) for o in outputs)
        g = _grad(outputs, inputs, us, create_graph=True)
        res = _grad(g, us, v, create_graph=create_graph)
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    res = tuple(r if create_graph else r.detach() for r in res)
    return (outs[0] if single_out else outs), (res[0] if single_out else res)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """Jacobian of func at inputs: output.shape + input.shape per (output, input) pair."""
    inputs, single_in = _tuple(inputs)
    inputs = _prep(inputs, create_graph)
    with ember.enable_grad():
        outputs, single_out = _tuple(func(*inputs))
        result = []
        for out in outputs:
            per_in = [[] for _ in inputs]
            flat = out.reshape(-1)
            for i in range(flat.numel()):
                gs = _grad([flat[i]], inputs, None, create_graph)
                for k, g in enumerate(gs):
                    per_in[k].append(g if create_graph else g.detach())
            row = []
            for k, x in enumerate(inputs):
                if per_in[k]:
                    jac = ember.stack(per_in[k]) if hasattr(ember, "stack") else _stack(per_in[k])
                else:
                    jac = ember.zeros(0, *x.shape, dtype=x.dtype)
                row.append(jac.reshape(tuple(out.shape) + tuple(x.shape)))
            result.append(tuple(row))
    if single_out and single_in:
        return result[0][0]
    if single_out:
        return result[0]
    if single_in:
        return tuple(r[0] for r in result)
    return tuple(result)


def _stack(ts):
    out = ember.empty(len(ts), *ts[0].shape, dtype=ts[0].dtype)
    for i, t in enumerate(ts):
        out[i] = t
    return out


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """Hessian of a scalar function."""
    inputs_t, single_in = _tuple(inputs)

    def grad_fn(*xs):
        with ember.enable_grad():
            out = func(*xs)
            gs = _grad([out], xs, None, create_graph=True)
        return gs[0] if single_in else gs

    return jacobian(grad_fn, inputs_t[0] if single_in else inputs_t, create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    inputs, single_in = _tuple(inputs)
    inputs = _prep(inputs, True)
    v, _ = _tuple(v)
    with ember.enable_grad():
        out = func(*inputs)
        g = _grad([out], inputs, None, create_graph=True)
        res = _grad(g, inputs, v, create_graph=create_graph)
    res = tuple(r if create_graph else r.detach() for r in res)
    return (out if create_graph else out.detach()), (res[0] if single_in else res)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v); equal to vhp for the symmetric Hessian of a twice-differentiable function."""
    return vhp(func, inputs, v, create_graph, strict)
