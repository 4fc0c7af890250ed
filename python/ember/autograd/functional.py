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
    """Jacobian of func at inputs: output.shape + input.shape per (output, input) pair.

    strategy="forward-mode" (with vectorize=True, as torch requires) pushes one unit tangent per
    input element through func with forward AD; "reverse-mode" pulls one vjp per output element.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
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


def _jacfwd(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are "
                           "not supported together (yet). Please either set `strict=False` or "
                           "`strategy=\"reverse-mode\"`.")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    from ember.autograd import forward_ad as fwAD
    inputs, single_in = _tuple(inputs)
    # One forward pass per input element (torch batches them with vmap; the values are the same).
    cols = []  # cols[c][k]: tangent of output k for the c-th unit tangent
    outputs, single_out = None, True
    for j, x in enumerate(inputs):
        for e in range(x.numel()):
            with fwAD.dual_level():
                duals = []
                for i, y in enumerate(inputs):
                    t = ember.zeros_like(y)
                    if i == j:
                        t.reshape(-1)[e] = 1.0
                    duals.append(fwAD.make_dual(y, t))
                outs, single_out = _tuple(func(*duals))
                primals, tans = [], []
                for o in outs:
                    p, t = fwAD.unpack_dual(o)
                    primals.append(p)
                    tans.append(ember.zeros_like(p) if t is None else t)
                outputs = primals
            cols.append(tans)
    if outputs is None:  # no input has an element
        outs, single_out = _tuple(func(*inputs))
        outputs = list(outs)
    result = []
    for k, out in enumerate(outputs):
        row, c = [], 0
        for x in inputs:
            n = x.numel()
            if n:
                jac = ember.stack([cols[c + e][k].reshape(-1) for e in range(n)], dim=-1)
            else:
                jac = ember.zeros(out.numel(), 0, dtype=out.dtype)
            row.append(jac.reshape(tuple(out.shape) + tuple(x.shape)))
            c += n
        result.append(tuple(row))
    # As torch's forward-mode: lists where the inputs were a tuple.
    if single_out and single_in:
        return result[0][0]
    if single_out:
        return list(result[0])
    if single_in:
        return tuple(r[0] for r in result)
    return [list(r) for r in result]


def _stack(ts):
    out = ember.empty(len(ts), *ts[0].shape, dtype=ts[0].dtype)
    for i, t in enumerate(ts):
        out[i] = t
    return out


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """Hessian of a scalar function."""
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs_t, single_in = _tuple(inputs)

    def grad_fn(*xs):
        with ember.enable_grad():
            if outer_jacobian_strategy == "forward-mode":  # forward-over-reverse: xs are duals
                xs = tuple(x.requires_grad_(True) for x in xs)
            out = func(*xs)
            gs = _grad([out], xs, None, create_graph=True)
        return gs[0] if single_in else gs

    return jacobian(grad_fn, inputs_t[0] if single_in else inputs_t, create_graph=create_graph,
                    vectorize=vectorize, strategy=outer_jacobian_strategy)


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
