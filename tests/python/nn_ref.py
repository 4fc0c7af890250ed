"""Helpers for the nn functional tests: run one function in torch and in ember on the same data and
compare values and gradients."""
import numpy as np

import ember
import ember.nn.functional as EF
from conftest import assert_same, torch

TF = torch.nn.functional


def to_ember(t, requires_grad=None):
    """The same tensor in ember (values, dtype, requires_grad)."""
    e = ember.from_numpy(t.detach().numpy().copy())
    rg = t.requires_grad if requires_grad is None else requires_grad
    return e.requires_grad_() if rg else e


def run_both(fn, *tensors, grad=True, rtol=None, atol=None, seed=0):
    """fn(lib, F, *inputs) in torch and ember; compares outputs and, for the floating inputs that
    require grad, the gradients of sum(out * w) for a fixed random w."""
    tin = [t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t for t in tensors]
    ein = [to_ember(t) if isinstance(t, torch.Tensor) else t for t in tensors]
    to = fn(torch, TF, *tin)
    eo = fn(ember, EF, *ein)
    assert_same(eo, to, rtol=rtol, atol=atol)
    if not grad or not to.requires_grad:
        return eo, to
    g = torch.Generator().manual_seed(seed)
    w = torch.rand(to.shape, generator=g, dtype=to.dtype) + 0.5
    (to * w).sum().backward()
    (eo * to_ember(w)).sum().backward()
    for a, b in zip(ein, tin):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            if b.grad is None:  # used only through non-differentiable ops
                assert a.grad is None or not bool(a.grad.abs().sum())
                continue
            assert a.grad is not None
            assert_same(a.grad, b.grad, rtol=rtol, atol=atol)
    return eo, to


def same_exception(fn, *tensors):
    """fn raises in both libraries, with the same exception class."""
    err_t = err_e = None
    try:
        fn(torch, TF, *tensors)
    except Exception as e:  # noqa: BLE001
        err_t = e
    try:
        fn(ember, EF, *[to_ember(t) if isinstance(t, torch.Tensor) else t for t in tensors])
    except Exception as e:  # noqa: BLE001
        err_e = e
    assert err_t is not None, "torch did not raise"
    assert err_e is not None, f"ember did not raise (torch: {type(err_t).__name__}: {err_t})"
    assert type(err_e) is type(err_t), f"ember {type(err_e).__name__}: {err_e}; torch {type(err_t).__name__}: {err_t}"


def gradchecks(fn, *tensors, gradgrad=True):
    """ember's gradcheck (and gradgradcheck) of fn(ember, EF, *inputs) in float64."""
    ein = [to_ember(t) if isinstance(t, torch.Tensor) else t for t in tensors]
    inputs = tuple(e for e in ein if isinstance(e, ember.Tensor))
    idx = [i for i, e in enumerate(ein) if isinstance(e, ember.Tensor)]

    def f(*xs):
        args = list(ein)
        for i, x in zip(idx, xs):
            args[i] = x
        return fn(ember, EF, *args)

    assert ember.autograd.gradcheck(f, inputs)
    if gradgrad:
        assert ember.autograd.gradgradcheck(f, inputs)


def randn(*shape, dtype=torch.float64, rg=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).requires_grad_(rg)


__all__ = ["run_both", "same_exception", "gradchecks", "randn", "to_ember", "np"]
