"""Finite-difference checks of autograd gradients (use float64 inputs)."""
import ember
from ember import _C


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _flat_outputs(fn, inputs):
    # Every floating output counts: one that does not require grad has an analytical Jacobian of
    # zero, which the numerical one must match (this catches backward formulas that are not
    # themselves differentiable when checking second derivatives).
    return tuple(o for o in _as_tuple(fn(*inputs)) if isinstance(o, _C.Tensor) and o.is_floating_point())


def _unravel(j, shape):
    idx = []
    for s in reversed(shape):
        idx.append(j % s)
        j //= s
    return tuple(reversed(idx))


def _numerical_jacobian(fn, inputs, idx, eps):
    """Column j: d(all outputs flattened)/d(inputs[idx].flat[j]) by central differences."""
    x = inputs[idx].detach()  # an alias: writes reach the input even when it is non-contiguous
    cols = []
    with ember.no_grad():
        for j in range(x.numel()):
            pos = _unravel(j, tuple(x.shape))
            orig = x[pos].item()
            x[pos] = orig + eps
            plus = [o.detach().reshape(-1).clone() for o in _as_tuple(fn(*inputs)) if isinstance(o, _C.Tensor)]
            x[pos] = orig - eps
            minus = [o.detach().reshape(-1).clone() for o in _as_tuple(fn(*inputs)) if isinstance(o, _C.Tensor)]
            x[pos] = orig
            cols.append([((p - m) / (2 * eps)).tolist() for p, m in zip(plus, minus)])
    return cols  # cols[j][k][i]: output k element i w.r.t. input element j


def _analytical_jacobian(outputs, inputs, idx, create_graph=False):
    """rows[k][i][j]: d output k element i / d inputs[idx] element j, via one vjp per output element."""
    rows = []
    for out in outputs:
        per_out = []
        flat_n = out.numel()
        if not out.requires_grad:
            rows.append([[0.0] * inputs[idx].numel() for _ in range(flat_n)])
            continue
        for i in range(flat_n):
            g = ember.zeros(*out.shape, dtype=out.dtype) if out.dim() else ember.zeros((), dtype=out.dtype)
            g.reshape(-1)[i] = 1.0
            (gi,) = ember.autograd.grad(out, inputs[idx], g, retain_graph=True, allow_unused=True,
                                        create_graph=create_graph)
            per_out.append([0.0] * inputs[idx].numel() if gi is None else gi.reshape(-1).tolist())
        rows.append(per_out)
    return rows


def _forward_jacobian(fn, inputs, idx):
    """Column j: the forward-mode JVP of every tensor output with the unit tangent at inputs[idx].flat[j].

    cols[j][k] is None for an output that is not floating point (it gets no tangent).
    """
    from ember.autograd import forward_ad as fwAD
    x = inputs[idx].detach()
    cols = []
    for j in range(x.numel()):
        t = ember.zeros_like(x)
        t.reshape(-1)[j] = 1.0
        with fwAD.dual_level():
            args = list(inputs)
            args[idx] = fwAD.make_dual(x, t)
            col = []
            for o in _as_tuple(fn(*args)):
                if not isinstance(o, _C.Tensor):
                    continue
                if not o.is_floating_point():
                    col.append(None)
                    continue
                tan = fwAD.unpack_dual(o).tangent
                col.append([0.0] * o.numel() if tan is None else tan.detach().reshape(-1).tolist())
        cols.append(col)
    return cols


def _realify(func, inputs):
    """Complex inputs and outputs as their view_as_real pairs, so the real check applies.

    The backward of view_as_complex/view_as_real maps PyTorch's complex gradient (dL/dx + i dL/dy
    for z = x + iy) to the pair (dL/dx, dL/dy), so a formula missing a conjugate fails here.
    """
    cidx = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.is_complex()]
    new_inputs = list(inputs)
    for i in cidx:
        new_inputs[i] = ember.view_as_real(inputs[i].detach()).clone().requires_grad_(inputs[i].requires_grad)

    def f(*xs):
        xs = list(xs)
        for i in cidx:
            xs[i] = ember.view_as_complex(xs[i])
        outs = _as_tuple(func(*xs))
        return tuple(ember.view_as_real(o) if isinstance(o, _C.Tensor) and o.is_complex() else o for o in outs)
    return f, tuple(new_inputs)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when autograd's gradients of `func` at `inputs` match central finite differences."""
    assert check_forward_ad or check_backward_ad, \
        "Expected at least one of check_forward_ad or check_backward_ad to be True"
    func, inputs = _realify(func, _as_tuple(inputs))
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]
    for i in diff_idx:
        if inputs[i].dtype != ember.float64:
            import warnings
            warnings.warn("Input #%d requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point." % i)
    for idx in diff_idx:
        numerical = _numerical_jacobian(func, inputs, idx, eps)
        if check_forward_ad:
            forward = _forward_jacobian(func, inputs, idx)
            for j, col in enumerate(forward):
                for k, f_out in enumerate(col):
                    if f_out is None:  # not a differentiable output
                        continue
                    for i, a in enumerate(f_out):
                        n = numerical[j][k][i]
                        if abs(a - n) > atol + rtol * abs(n):
                            msg = (f"Jacobian computed with forward mode mismatch for output {k} with respect to "
                                   f"input {idx},\nnumerical:{n}\nanalytical:{a}\n(at output element {i}, input "
                                   f"element {j})")
                            if raise_exception:
                                raise GradcheckError(msg)
                            return False
        if not check_backward_ad:
            continue
        # Recompute after the perturbations: they bumped the inputs' versions.
        outputs = _flat_outputs(func, inputs)
        analytical = _analytical_jacobian(outputs, inputs, idx)
        for k in range(len(outputs)):  # noqa: B007
            for i in range(len(analytical[k])):
                for j in range(len(numerical)):
                    a = analytical[k][i][j]
                    n = numerical[j][k][i]
                    if abs(a - n) > atol + rtol * abs(n):
                        msg = (f"Jacobian mismatch for output {k} with respect to input {idx},\n"
                               f"numerical:{n}\nanalytical:{a}\n(at output element {i}, input element {j})")
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the vector-Jacobian product of `func`: checks second derivatives."""
    inputs = _as_tuple(inputs)
    outputs = _flat_outputs(func, inputs)
    if grad_outputs is None:
        gen = ember.Generator().manual_seed(0) if hasattr(ember, "Generator") else None
        grad_outputs = tuple(
            (ember.rand(*o.shape, dtype=o.dtype, generator=gen) if gen is not None and o.dim()
             else ember.ones(*o.shape, dtype=o.dtype) if o.dim() else ember.ones((), dtype=o.dtype)) + 0.5
            for o in outputs)
    grad_outputs = tuple(g.detach().requires_grad_(True) for g in _as_tuple(grad_outputs))
    diff_pos = {i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad}
    n_in = len(inputs)

    def vjp(*args):
        ins, gos = list(args[:n_in]), args[n_in:]
        with ember.enable_grad():
            # The finite differences call this under no_grad, where a complex input rebuilt from its
            # real pair (see _realify) comes back without requires_grad: restore it.
            for i in diff_pos:
                if not ins[i].requires_grad:
                    ins[i] = ins[i].detach().requires_grad_(True)
            outs = _flat_outputs(func, ins)
            d = [ins[i] for i in sorted(diff_pos)]
            grads = ember.autograd.grad(outs, d, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
