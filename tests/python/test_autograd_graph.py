"""autograd.graph as torch's: saved-tensor hooks (Note [Saved tensor hooks]) see the same tensors
in the same order as torch's, backward uses what unpack returns, hooks nest and stay on their
thread; save_on_cpu, disable_saved_tensors_hooks and Node."""
import threading

import numpy as np
import pytest

import ember
from conftest import torch

_EXPRS = {
    "sin_mul": lambda L, x, w: (x.sin() * x).sum(),
    "exp_output": lambda L, x, w: x.exp().sum(),
    "matmul": lambda L, x, w: (x @ w).tanh().sum(),
    "softmax": lambda L, x, w: (x.softmax(-1) * w[0, :x.shape[-1]]).sum(),
    "linear_relu": lambda L, x, w: L.nn.functional.linear(x, w.t()).relu().sum(),
}


def _run(L, name, hooks):
    x = L.from_numpy(np.linspace(-1, 1, 12).reshape(3, 4).copy()).requires_grad_() if L is ember else \
        L.linspace(-1, 1, 12, dtype=L.float64).reshape(3, 4).requires_grad_()
    w = (L.from_numpy(np.linspace(0.5, 2, 20).reshape(4, 5).copy()) if L is ember else
         L.linspace(0.5, 2, 20, dtype=L.float64).reshape(4, 5)).requires_grad_()
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return t * 1

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t
    if hooks:
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = _EXPRS[name](L, x, w)
    else:
        y = _EXPRS[name](L, x, w)
    y.backward()
    return log, x.grad.detach().numpy(), None if w.grad is None else w.grad.detach().numpy()


@pytest.mark.parametrize("name", sorted(_EXPRS))
def test_hooks_see_what_torch_saves_and_keep_gradients(name):
    t_log, t_gx, t_gw = _run(torch, name, True)
    e_log, e_gx, e_gw = _run(ember, name, True)
    assert sorted(e_log) == sorted(t_log) and [k for k, _ in e_log] == [k for k, _ in t_log]
    _, p_gx, p_gw = _run(ember, name, False)
    np.testing.assert_allclose(e_gx, p_gx, rtol=1e-12)
    assert (e_gw is None) == (p_gw is None) == (t_gw is None)
    if e_gw is not None:
        np.testing.assert_allclose(e_gw, p_gw, rtol=1e-12)
    np.testing.assert_allclose(e_gx, t_gx, rtol=1e-10)


def test_backward_uses_what_unpack_returns_and_custom_functions_are_hooked():
    class Square(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    with ember.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or "token",
                                                  lambda token: ember.full((3,), 10.0)):
        y = Square.apply(x).sum()
    y.backward()
    assert len(seen) == 1 and seen[0] is x
    assert x.grad.tolist() == [20.0, 20.0, 20.0]  # 2 * a with a as unpacked, not as saved


def test_hooks_nest_and_stay_on_their_thread():
    calls = []
    x = ember.ones(2, requires_grad=True)
    outer = ember.autograd.graph.saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t)
    inner = ember.autograd.graph.saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda t: t)
    other = []

    def elsewhere():
        (x.sin()).sum()  # saves x on a thread without hooks
        other.append(len(calls))
    with outer:
        with inner:
            x.sin()
        x.cos()
        th = threading.Thread(target=elsewhere)
        th.start()
        th.join()
    x.tan()
    assert calls == ["inner", "outer"] and other == [2]


def test_double_backward_retain_graph_and_errors_under_hooks():
    x = ember.tensor([0.5, 1.5], dtype=ember.float64, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = x.exp().sum()  # exp saves its output
        (g,) = ember.autograd.grad(y, x, create_graph=True)
        (gg,) = ember.autograd.grad(g.sum(), x)
    assert ember.allclose(gg, x.exp())
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = (x * x).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="second time"):
        z.backward()
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
        z = (x * x).sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        z.backward()


def test_save_on_cpu_disable_and_node():
    x = ember.randn(4, requires_grad=True)
    with ember.autograd.graph.save_on_cpu(pin_memory=False):
        y = (x.sigmoid() * x).sum()
    y.backward()
    s = x.sigmoid()
    assert ember.allclose(x.grad, s + x * s * (1 - s))
    for L in (torch, ember):
        @L.autograd.graph.disable_saved_tensors_hooks("hooks are off here")
        def f():
            with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with pytest.raises(RuntimeError, match="hooks are off here"):
            f()
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass  # allowed again after the block
        assert isinstance((L.ones(1, requires_grad=True) * 2).grad_fn, L.autograd.graph.Node)
