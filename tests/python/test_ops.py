"""Generic checks over the op table (op_db.OPS) against torch."""
import pytest

import ember
from conftest import assert_same, torch
from op_db import OPS


def to_ember(x):
    """torch tensor -> ember tensor with the same values, dtype and layout kind."""
    if not isinstance(x, torch.Tensor):
        return x
    dt = getattr(ember, str(x.dtype).split(".")[-1])
    base = x.detach().contiguous()
    e = ember.from_dlpack(base).clone()  # own memory: tests mutate ember inputs in place
    if x.is_contiguous():
        return e
    # Rebuild the same strided layout so the ember op sees a non-contiguous input too.
    if x.dim() == 2 and x.t().is_contiguous():
        return to_ember(x.t().contiguous()).t()
    if 0 in x.stride():
        return to_ember(x.contiguous()).contiguous()[tuple(slice(None) for _ in range(x.dim()))]
    big = ember.zeros(*[s * 2 for s in x.shape], dtype=dt)
    view = big[tuple(slice(None, None, 2) for _ in range(x.dim()))]
    view.copy_(e)
    return view


def cases():
    for op in OPS:
        for dtype in op.dtypes:
            for s in op.samples(dtype):
                yield pytest.param(op, dtype, s, id=f"{op.name}-{dtype}-{s.name}")


def _run(op, lib, sample, convert):
    args = [convert(a) for a in sample.args]
    return op.call(lib, *args, **sample.kwargs)


@pytest.mark.parametrize("op,dtype,sample", list(cases()))
def test_forward_matches_torch(op, dtype, sample):
    try:
        expected = _run(op, torch, sample, lambda a: a)
    except Exception as e:  # torch rejects this combination: ember must raise the same type
        with pytest.raises(type(e)):
            _run(op, ember, sample, to_ember)
        return
    got = _run(op, ember, sample, to_ember)
    rtol = op.tol_per_dtype.get(dtype, op.rtol)
    assert_same(got, expected, rtol=rtol, atol=op.atol if op.atol is not None else rtol)


def error_cases():
    for op in OPS:
        for i, err in enumerate(op.errors):
            yield pytest.param(op, err, id=f"{op.name}-{i}")


@pytest.mark.parametrize("op,err", list(error_cases()))
def test_errors_match_torch(op, err):
    """A row's `errors` (callables lib -> None): ember raises the exception type torch raises."""
    with pytest.raises(Exception) as te:
        err(torch)
    with pytest.raises(Exception) as ee:
        err(ember)
    assert type(ee.value).__name__.lstrip("_") == type(te.value).__name__.lstrip("_"), \
        f"ember raised {type(ee.value).__name__}: {ee.value}; torch raised {type(te.value).__name__}: {te.value}"


def grad_cases(dtype="float64"):
    """(op, sample) for every differentiable row whose grad_dtypes include dtype; no empty inputs."""
    for op in OPS:
        if not op.grad or dtype not in op.grad_dtypes:
            continue
        for s in op.samples(dtype):
            if any(isinstance(a, torch.Tensor) and a.numel() == 0 for a in s.args):
                continue
            yield pytest.param(op, s, id=f"{op.name}-{s.name}")


@pytest.mark.parametrize("op,sample", list(grad_cases()))
def test_gradients_match_torch_and_gradcheck(op, sample):
    t_args = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in sample.args]
    e_args = [to_ember(a).detach().requires_grad_() if isinstance(a, torch.Tensor) else a for a in sample.args]
    t_out = op.call(torch, *t_args, **sample.kwargs)
    e_out = op.call(ember, *e_args, **sample.kwargs)
    weights = torch.linspace(-1, 1, max(t_out.numel(), 1), dtype=torch.float64)[: t_out.numel()].reshape(t_out.shape)
    t_diff = [a for a in t_args if isinstance(a, torch.Tensor)]
    t_grads = torch.autograd.grad((t_out * weights).sum(), t_diff, create_graph=op.grad_ref_create_graph)
    (e_out * to_ember(weights)).sum().backward()
    for tg, ea in zip(t_grads, [a for a in e_args if isinstance(a, ember.Tensor)]):
        assert_same(ea.grad, tg.detach(), rtol=op.grad_rtol)
    diff = [i for i, a in enumerate(e_args) if isinstance(a, ember.Tensor)]

    def f(*xs):
        args = list(e_args)
        for i, x in zip(diff, xs):
            args[i] = x
        return op.call(ember, *args, **sample.kwargs)
    inputs = tuple(to_ember(sample.args[i]).detach().requires_grad_() for i in diff)
    assert ember.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("op,sample", list(grad_cases()))
def test_in_place_on_result_as_torch(op, sample):
    """Where torch's result is not a view and may be changed in place before backward (no op saved it),
    ember's may too, with torch's gradients: a result that is a view made under no_grad (sum, mm) or
    saved by its own backward (var, erfinv, i0, entr) refused it."""
    t_args = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in sample.args]
    try:
        t_out = op.call(torch, *t_args, **sample.kwargs)
        if not isinstance(t_out, torch.Tensor) or not t_out.requires_grad or t_out._base is not None:
            pytest.skip("torch's result is not a tensor with history of its own")
        t_out.mul_(2)
        t_out.sum().backward()
    except RuntimeError:
        pytest.skip("torch refuses the in-place op too")
    e_args = [to_ember(a).detach().requires_grad_() if isinstance(a, torch.Tensor) else a for a in sample.args]
    e_out = op.call(ember, *e_args, **sample.kwargs)
    e_out.mul_(2)
    e_out.sum().backward()
    for ta, ea in zip([a for a in t_args if isinstance(a, torch.Tensor)],
                      [a for a in e_args if isinstance(a, ember.Tensor)]):
        assert_same(ea.grad, ta.grad, rtol=op.grad_rtol)


@pytest.mark.parametrize("op,sample", list(grad_cases("complex128")))
def test_complex_gradients_match_torch_and_gradcheck(op, sample):
    """PyTorch's convention: the gradient of a real loss is dL/dx + i dL/dy (conjugate Wirtinger)."""
    t_args = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in sample.args]
    e_args = [to_ember(a).detach().requires_grad_() if isinstance(a, torch.Tensor) else a for a in sample.args]
    t_out = op.call(torch, *t_args, **sample.kwargs)
    e_out = op.call(ember, *e_args, **sample.kwargs)
    n = max(t_out.numel(), 1)
    w = torch.complex(torch.linspace(-1, 1, n, dtype=torch.float64), torch.linspace(0.5, -2, n, dtype=torch.float64))
    w = w[: t_out.numel()].reshape(t_out.shape)
    if not t_out.is_complex():
        w = w.real
    (t_out * w).sum().real.backward()
    (e_out * to_ember(w)).sum().real.backward()
    for ta, ea in zip(t_args, e_args):
        if isinstance(ta, torch.Tensor):
            assert_same(ea.grad, ta.grad)
    diff = [i for i, a in enumerate(e_args) if isinstance(a, ember.Tensor)]

    def f(*xs):
        args = list(e_args)
        for i, x in zip(diff, xs):
            args[i] = x
        return op.call(ember, *args, **sample.kwargs)
    inputs = tuple(to_ember(sample.args[i]).detach().requires_grad_() for i in diff)
    assert ember.autograd.gradcheck(f, inputs)


# Differentiable rows without a gradgradcheck, each because torch itself has no double backward
# for it (so there is nothing to match). Keep this list to what torch does not support.
GRADGRAD_EXCEPTIONS = {}

# A gradgradcheck perturbs every input and grad_output element: keep the chosen sample small.
GRADGRAD_MAX_NUMEL = 100


def _numel(sample):
    return sum(a.numel() for a in sample.args if isinstance(a, torch.Tensor))


def gradgrad_sample(op, dtype="float64"):
    """The smallest non-empty sample of a differentiable row (None if it has none)."""
    samples = [s for s in op.samples(dtype)
               if any(isinstance(a, torch.Tensor) for a in s.args)
               and all(a.numel() > 0 for a in s.args if isinstance(a, torch.Tensor))]
    return min(samples, key=_numel, default=None)


def gradgrad_cases(dtype="float64"):
    """One sample per differentiable op: second derivatives via gradgradcheck."""
    for op in OPS:
        if op.grad and op.name not in GRADGRAD_EXCEPTIONS and dtype in op.grad_dtypes:
            s = gradgrad_sample(op, dtype)
            if s is not None and (dtype == "float64" or _numel(s) <= GRADGRAD_MAX_NUMEL):
                yield pytest.param(op, s, id=f"{op.name}-{s.name}")


def gradgrad_summary():
    diff = [op for op in OPS if op.grad]
    covered = [op for op in diff if op.name not in GRADGRAD_EXCEPTIONS and gradgrad_sample(op) is not None]
    return (f"gradgradcheck: {len(covered)} of {len(diff)} differentiable op rows"
            f" ({len(GRADGRAD_EXCEPTIONS)} on the exception list)")


def test_every_differentiable_row_is_gradgradchecked():
    diff = [op for op in OPS if op.grad]
    covered = [op for op in diff if op.name not in GRADGRAD_EXCEPTIONS and gradgrad_sample(op) is not None]
    missing = [op.name for op in diff if op not in covered and op.name not in GRADGRAD_EXCEPTIONS]
    assert not missing, f"differentiable rows without a gradgradcheck sample: {missing}"
    assert set(GRADGRAD_EXCEPTIONS) <= {op.name for op in diff}, "stale GRADGRAD_EXCEPTIONS entries"
    too_big = [(op.name, _numel(gradgrad_sample(op))) for op in covered
               if _numel(gradgrad_sample(op)) > GRADGRAD_MAX_NUMEL]
    assert not too_big, f"give these rows a smaller sample for gradgradcheck: {too_big}"


@pytest.mark.parametrize("op,sample", list(gradgrad_cases()) + list(gradgrad_cases("complex128")))
def test_gradgradcheck(op, sample):
    e_args = [to_ember(a) if isinstance(a, torch.Tensor) else a for a in sample.args]
    diff = [i for i, a in enumerate(e_args) if isinstance(a, ember.Tensor)]

    def f(*xs):
        args = list(e_args)
        for i, x in zip(diff, xs):
            args[i] = x
        return op.call(ember, *args, **sample.kwargs)
    inputs = tuple(e_args[i].detach().requires_grad_() for i in diff)
    assert ember.autograd.gradgradcheck(f, inputs)
