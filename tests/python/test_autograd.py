"""Autograd engine behaviour, checked against torch where it has an answer."""
import threading

import pytest

import ember
from conftest import assert_same, same_error, torch


def leaf_pair(data, dtype="float64"):
    t = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=True)
    e = ember.zeros(*t.shape, dtype=getattr(ember, dtype)) if t.dim() else ember.zeros((), dtype=getattr(ember, dtype))
    flat = e.reshape(-1)
    for i, v in enumerate(t.detach().reshape(-1).tolist()):
        flat[i] = v
    return e.requires_grad_(), t


def test_mlp_gradients_match_torch():
    ex, tx = leaf_pair([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    ew, tw = leaf_pair([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]])
    eb, tb = leaf_pair([0.01, -0.02])
    for lib, x, w, b in ((ember, ex, ew, eb), (torch, tx, tw, tb)):
        h = (x @ w + b).relu()
        loss = ((h - 1) * (h - 1)).mean() / 3 + (x * x).sum()
        loss.backward()
    assert_same(ex.grad, tx.grad)
    assert_same(ew.grad, tw.grad)
    assert_same(eb.grad, tb.grad)


def test_grad_fn_names_and_leaves():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    assert x.is_leaf and not y.is_leaf
    assert y.grad_fn.name() == "MulBackward0"
    assert (y + 1).grad_fn.name() == "AddBackward0"
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name() == "AccumulateGrad" and acc.variable is not None
    assert y.grad_fn.next_functions[1][0] is None  # the constant 2 needs no gradient
    assert (y > 1).grad_fn is None and not (y > 1).requires_grad


def test_accumulates_across_backward_calls():
    x = ember.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


def test_backward_twice_without_retain_graph_raises():
    x = ember.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_non_scalar_backward_needs_gradient():
    same_error(lambda: (ember.ones(3, requires_grad=True) * 2).backward(),
               lambda: (torch.ones(3, requires_grad=True) * 2).backward())
    x = ember.ones(3, requires_grad=True)
    (x * 2).backward(ember.ones(3) * 0.5)
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_errors_match_torch():
    same_error(lambda: ember.ones(3).sum().backward(), lambda: torch.ones(3).sum().backward())
    same_error(lambda: ember.ones(3, dtype=ember.int64).requires_grad_(),
               lambda: torch.ones(3, dtype=torch.int64).requires_grad_())
    same_error(lambda: ember.ones(3, requires_grad=True).add_(1), lambda: torch.ones(3, requires_grad=True).add_(1))
    same_error(lambda: setattr(ember.ones(3, requires_grad=True) * 2, "requires_grad", False),
               lambda: setattr(torch.ones(3, requires_grad=True) * 2, "requires_grad", False))
    x = ember.ones(2, requires_grad=True)
    y = ember.ones(2, requires_grad=True)
    same_error(lambda: ember.autograd.grad((x * 2).sum(), [x, y]),
               lambda: torch.autograd.grad((torch.ones(2, requires_grad=True) * 2).sum(),
                                           [torch.ones(2, requires_grad=True)]))


def test_autograd_grad_does_not_touch_dot_grad():
    x = ember.ones(2, requires_grad=True)
    y = ember.ones(2, requires_grad=True)
    gx, gy = ember.autograd.grad((x * y * 3).sum(), (x, y))
    assert gx.tolist() == [3.0, 3.0] and gy.tolist() == [3.0, 3.0]
    assert x.grad is None and y.grad is None
    (gu,) = ember.autograd.grad((x * 2).sum(), [y], allow_unused=True)
    assert gu is None
    (gm,) = ember.autograd.grad((x * 2).sum(), [y], materialize_grads=True) if hasattr(ember, "zeros_like") else (0,)


def test_grad_wrt_intermediate():
    x = ember.ones(2, requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    (gh,) = ember.autograd.grad(y, h)
    assert gh.tolist() == [6.0, 6.0]


def test_backward_inputs_argument():
    x = ember.ones(2, requires_grad=True)
    y = ember.ones(2, requires_grad=True)
    (x * y).sum().backward(inputs=[x])
    assert x.grad.tolist() == [1.0, 1.0] and y.grad is None


def test_hooks_modify_and_observe():
    x = ember.ones(3, requires_grad=True)
    seen = []
    h1 = x.register_hook(lambda g: g * 10)
    y = x * 2
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.sum().backward()
    assert seen == [[1.0, 1.0, 1.0]]
    assert x.grad.tolist() == [20.0, 20.0, 20.0]
    h1.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    post = []
    x.register_post_accumulate_grad_hook(lambda p: post.append(p.grad.tolist()))
    (x * 1).sum().backward()
    assert post == [[3.0, 3.0, 3.0]]


def test_retain_grad():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 4.0] and y.retains_grad


def test_higher_order_gradients():
    ex, tx = leaf_pair([0.5, -1.5, 2.0])
    for lib, x in ((ember, ex), (torch, tx)):
        y = (x * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        x.result = (g, g2, g3)
    for e, t in zip(ex.result, tx.result):
        assert_same(e.detach(), t.detach())


def test_gradient_penalty_style_double_backward():
    ew, tw = leaf_pair([[0.3, -0.2], [0.1, 0.5]])
    ex, tx = leaf_pair([[1.0, 2.0]])
    for lib, w, x in ((ember, ew, ex), (torch, tw, tx)):
        out = (x @ w).relu().sum()
        (gx,) = lib.autograd.grad(out, x, create_graph=True)
        penalty = (gx * gx).sum()
        penalty.backward()
    assert_same(ew.grad, tw.grad)


def test_version_counter_error_names_the_inplace_op():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    z = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError) as err:
        z.sum().backward()
    msg = str(err.value)
    assert "modified by an inplace operation" in msg and "is at version 1; expected version 0" in msg
    assert "test_autograd.py" in msg, msg  # Ember also says where the in-place op ran
    t = torch.ones(3, requires_grad=True)
    ty = t * 2
    tz = ty * ty
    ty.add_(1)
    with pytest.raises(RuntimeError):
        tz.sum().backward()


def test_inplace_on_non_leaf_keeps_correct_gradients():
    ex, tx = leaf_pair([1.0, 2.0, 3.0])
    for x in (ex, tx):
        y = x * 2
        y.mul_(x)
        y.add_(x, alpha=3)
        y.sum().backward()
    assert_same(ex.grad, tx.grad)


def test_no_grad_enable_grad_nesting():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()

    @ember.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_inference_mode():
    x = ember.ones(2, requires_grad=True)
    with ember.inference_mode():
        y = x * 2
        assert not y.requires_grad and ember.is_inference_mode_enabled()
    assert not ember.is_inference_mode_enabled()


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["worker"] = ember.is_grad_enabled()
    with ember.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        seen["main"] = ember.is_grad_enabled()
    assert seen == {"worker": True, "main": False}


class Exp3(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        y = x * x * x * k
        ctx.save_for_backward(x)
        ctx.k = k
        return y

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.k, None


def test_custom_function():
    x = ember.ones(3, requires_grad=True)
    y = Exp3.apply(x, 2.0)
    assert y.grad_fn.name() == "Exp3Backward"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]


def test_custom_function_mark_dirty_and_non_differentiable():
    class AddOneInplace(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 1

    class SortLike(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x > 0
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        def backward(ctx, g, gidx):
            return g * 2

    a = ember.ones(3, requires_grad=True)
    b = a * 1
    c = AddOneInplace.apply(b)
    assert c.tolist() == [2.0, 2.0, 2.0] and c.grad_fn.name() == "AddOneInplaceBackward"
    c.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0]
    v, idx = SortLike.apply(a)
    assert not idx.requires_grad and v.requires_grad
    a.grad = None
    v.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_custom_function_wrong_gradient_count():
    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return (g,)

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(x, x).sum().backward()


def test_anomaly_mode_names_the_node_and_forward_line():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = ember.autograd.detect_anomaly()
    with mode:
        x = ember.zeros(2, requires_grad=True)
        y = x / x  # nan forward; backward produces nan
        with pytest.warns(UserWarning, match="Error detected in DivBackward0") as w:
            with pytest.raises(RuntimeError, match="DivBackward0") as err:
                y.sum().backward()
    assert "test_autograd.py" in str(w[-1].message)  # the forward traceback is in the warning, as torch


def test_saved_intermediates_freed_after_backward():
    ember._C._cpu_empty_cache()
    w = ember.ones(256, 256, requires_grad=True)
    x = ember.ones(64, 256)
    before = ember._C._cpu_memory_stats()["allocated_bytes"]
    h = (x @ w).relu()
    loss = (h * h).sum()
    del h
    loss.backward()
    del loss
    after = ember._C._cpu_memory_stats()["allocated_bytes"]
    grad_bytes = 256 * 256 * 4
    assert after - before <= grad_bytes + 4096, (before, after)


def test_gradcheck_basic_ops():
    x = ember.ones(2, 3, dtype=ember.float64) * 0.7
    x = x.requires_grad_()
    w = (ember.ones(3, 2, dtype=ember.float64) * 0.3).requires_grad_()
    assert ember.autograd.gradcheck(lambda a, b: ((a @ b).relu() * a.sum() / (b.sum() + 2)).sum(), (x, w))
    assert ember.autograd.gradgradcheck(lambda a, b: (a @ b * a.sum()).sum(), (x, w))


def test_checkpoint_matches_plain_backward():
    from ember.utils.checkpoint import checkpoint
    w = ember.randn(8, 8, dtype=ember.float64).requires_grad_()
    x = ember.randn(4, 8, dtype=ember.float64).requires_grad_()

    def block(a):
        return ((a @ w).relu() @ w).relu()

    plain = block(x).sum()
    plain.backward()
    gw, gx = w.grad.clone(), x.grad.clone()
    w.grad = None
    x.grad = None
    calls = []

    def counted(a):
        calls.append(1)
        return block(a)
    out = checkpoint(counted, x, use_reentrant=True)
    assert out.requires_grad
    out.sum().backward()
    assert len(calls) == 2  # forward, then recomputed in backward
    assert ember.allclose(w.grad, gw) if hasattr(ember, "allclose") else w.grad.tolist() == gw.tolist()
    assert x.grad.tolist() == gx.tolist()


def test_forward_ad_matches_jacobian():
    import ember.autograd.forward_ad as fwAD
    x = ember.randn(3, dtype=ember.float64)
    v = ember.randn(3, dtype=ember.float64)
    w = ember.randn(3, 3, dtype=ember.float64)

    def f(a):
        return ((a @ w).relu() * a).sum(0, keepdim=True) + a * 2
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        primal, tangent = fwAD.unpack_dual(f(dual))
    jac = ember.autograd.functional.jacobian(f, x)
    expected = (jac @ v).tolist()
    assert all(abs(a - b) < 1e-10 for a, b in zip(tangent.tolist(), expected))
    assert all(abs(a - b) < 1e-12 for a, b in zip(primal.tolist(), f(x).tolist()))


def test_functional_helpers_against_torch():
    tx = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    ex = ember.tensor(tx.tolist(), dtype=ember.float64)

    def f(lib):
        return lambda a: (a * a * a).sum()
    assert_same(ember.autograd.functional.hessian(f(ember), ex), torch.autograd.functional.hessian(f(torch), tx))
    tv = torch.tensor([1.0, 0.5, -2.0], dtype=torch.float64)
    ev = ember.tensor(tv.tolist(), dtype=ember.float64)
    assert_same(ember.autograd.functional.hvp(f(ember), ex, ev)[1], torch.autograd.functional.hvp(f(torch), tx, tv)[1])
    assert_same(ember.autograd.functional.vjp(lambda a: a * 3, ex, ev)[1],
                torch.autograd.functional.vjp(lambda a: a * 3, tx, tv)[1])
    assert_same(ember.autograd.functional.jvp(lambda a: a * a, ex, ev)[1],
                torch.autograd.functional.jvp(lambda a: a * a, tx, tv)[1])


def test_inplace_on_view_updates_base_history():
    ta = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    ty = torch.tensor([7.0, 8.0], dtype=torch.float64, requires_grad=True)
    ea = ember.tensor(ta.tolist(), dtype=ember.float64, requires_grad=True)
    ey = ember.tensor(ty.tolist(), dtype=ember.float64, requires_grad=True)
    for a, y in ((ea, ey), (ta, ty)):
        x = a.clone()
        x[:, 0] = y
        x[1] *= 3
        (x * x).sum().backward()
    assert_same(ea.grad, ta.grad)
    assert_same(ey.grad, ty.grad)


def test_inplace_on_view_of_tensor_without_grad():
    for lib in (ember, torch):
        y = lib.ones(2, dtype=lib.float64, requires_grad=True)
        x = lib.zeros(3, 2, dtype=lib.float64)
        x[1] = y * 2
        assert x.requires_grad and x.grad_fn is not None
        (x * x).sum().backward()
        y.result = y.grad.tolist()
    assert y.result == [8.0, 8.0]


def test_view_of_leaf_inplace_error():
    same_error(lambda: ember.ones(3, requires_grad=True)[0].mul_(2),
               lambda: torch.ones(3, requires_grad=True)[0].mul_(2))


def test_inplace_returns_self_and_factories_start_at_version_zero():
    t = ember.zeros(3)
    assert t._version == 0 == torch.zeros(3)._version
    assert t.add_(1) is t and t.mul_(2, ) is t
    u = t
    u += 1
    assert u is t and t._version == 3


def test_unfold_and_as_strided_gradients():
    tx = torch.arange(10, dtype=torch.float64, requires_grad=True)
    ex = ember.arange(10, dtype=ember.float64).requires_grad_()
    for x in (ex, tx):
        (x.unfold(0, 4, 2) * x.unfold(0, 4, 2)).sum().backward()
    assert_same(ex.grad, tx.grad)


def test_inference_tensors_match_torch():
    for lib in (ember, torch):
        with lib.inference_mode():
            x = lib.ones(3)
            v = x[1:]
            x.add_(1)  # allowed inside
        assert x.is_inference() and v.is_inference()
        assert not lib.ones(2).is_inference()
    with ember.inference_mode():
        ex = ember.ones(3)
    with torch.inference_mode():
        tx = torch.ones(3)
    same_error(lambda: ex.add_(1), lambda: tx.add_(1))
    w_e, w_t = ember.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    same_error(lambda: w_e * ex, lambda: w_t * tx)
    same_error(lambda: ex.requires_grad_(), lambda: tx.requires_grad_())
    assert (ex.clone() * w_e).requires_grad  # a clone is a normal tensor


def test_function_set_materialize_grads_false_passes_none():
    seen = []

    class TwoOut(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1 * 2 if g1 is not None else None

    x = ember.ones(2, requires_grad=True)
    a, b = TwoOut.apply(x)
    a.sum().backward()
    assert seen == [(False, True)]


def test_data_property_is_untracked_alias():
    # .data shares storage, is detached and has its own version counter: in-place writes through
    # it do not trip the saved-tensor check (torch's semantics); assigning swaps the contents.
    w = ember.ones(3, requires_grad=True)
    y = (w * w).sum()
    d = w.data
    assert not d.requires_grad and d.grad_fn is None and d.data_ptr() == w.data_ptr()
    d.mul_(2)
    assert w._version == 0
    y.backward()
    assert w.grad.tolist() == [4.0, 4.0, 4.0]
    w.data = ember.zeros(2, 2)
    assert tuple(w.shape) == (2, 2) and w.requires_grad and w.is_leaf and w.sum().item() == 0
    with pytest.raises(NotImplementedError):
        w.data = ember.zeros(2, dtype=ember.float64)


def test_cast_to_integer_or_bool_ends_the_graph():
    # As torch: integer/bool results never require grad, so x * x.int() has gradient x.int() only.
    ex, tx = leaf_pair([0.7, -1.2, 2.5])
    for cast in [lambda x: x.int(), lambda x: x.long(), lambda x: x.bool(), lambda x: x.to(ember.int16)
                 if isinstance(x, ember.Tensor) else x.to(torch.int16)]:
        assert cast(ex).requires_grad is cast(tx).requires_grad is False
        assert cast(ex).grad_fn is None
    assert ex.double().requires_grad and ex.to(ember.complex128).requires_grad
    (ex * ex.int()).sum().backward()
    (tx * tx.int()).sum().backward()
    assert_same(ex.grad, tx.grad)


# ---- Tensor.grad_dtype (torch 2.10): the dtype a leaf's .grad takes ----
def _grad_dtype_story(lib):
    out = []

    def step(label, fn):
        try:
            r = fn()
            out.append((label, "ok", str(r).replace("torch.", "").replace("ember.", "")))
        except Exception as e:  # noqa: BLE001 - the class and message are compared
            out.append((label, type(e).__name__, str(e)))

    w = lib.ones(3, requires_grad=True)
    step("default", lambda: w.grad_dtype)
    step("set float64", lambda: setattr(w, "grad_dtype", lib.float64))
    step("backward casts", lambda: ((w * 2).sum().backward(), w.grad.dtype, w.grad.tolist())[1:])
    step("accumulates in float64", lambda: ((w * 3).sum().backward(), w.grad.dtype, w.grad.tolist())[1:])
    step("assign float32", lambda: setattr(w, "grad", lib.zeros(3)))
    step("assign float64", lambda: (setattr(w, "grad", lib.zeros(3, dtype=lib.float64)), w.grad.dtype)[1])
    step("non-leaf", lambda: setattr(w * 1, "grad_dtype", lib.float64))
    v = lib.ones(3, requires_grad=True)
    step("own dtype refuses float64 grad", lambda: setattr(v, "grad", lib.zeros(3, dtype=lib.float64)))
    step("None", lambda: (setattr(v, "grad_dtype", None), v.grad_dtype)[1])
    step("None allows any", lambda: (setattr(v, "grad", lib.zeros(3, dtype=lib.float64)), v.grad.dtype)[1])
    h = lib.ones(3, dtype=lib.float16, requires_grad=True)
    h.grad_dtype = lib.float32
    step("half leaf, float grads", lambda: ((h.float() * 3).sum().backward(), h.grad.dtype, h.grad.tolist())[1:])
    step("leaf without grad", lambda: (setattr(lib.ones(2), "grad_dtype", lib.float64), "set")[1])
    for bad in ("float", 3, lib.ones(1)):  # not a dtype
        step(f"set {type(bad).__name__}", lambda bad=bad: setattr(lib.ones(2, requires_grad=True), "grad_dtype", bad))
    return out


def test_grad_dtype_matches_torch():
    e, t = _grad_dtype_story(ember), _grad_dtype_story(torch)
    for a, b in zip(e, t):
        assert a == b


def test_accumulated_grad_never_aliases_a_live_tensor():
    """.grad takes a gradient's buffer only when nothing else can reach it (AccumulateGrad)."""
    # a transposed view of a tensor the caller keeps: copied
    x = ember.randn(3, 4, requires_grad=True)
    g = ember.randn(4, 3)
    (x * 1).backward(g.t())
    x.grad.add_(1)
    assert not ember.equal(x.grad, g.t()) and ember.allclose(x.grad - 1, g.t())
    # a view whose base is dead but another view of it lives: copied
    x = ember.randn(4, requires_grad=True)
    base = ember.randn(2, 4)
    first, second = base[0], base[1]
    del base
    kept = (first.clone(), second.clone())
    (x * 1).backward(first)
    x.grad.mul_(0)
    assert ember.equal(first, kept[0]) and ember.equal(second, kept[1])
    # part of a dead buffer: copied, so .grad does not keep the whole buffer
    x = ember.randn(4, requires_grad=True)
    (x * 1).backward(ember.randn(1000)[:4])
    assert x.grad.untyped_storage().nbytes() == 16
    # a Linear's weight gradient (a transposed view of a dead product) is taken, dense
    lin = ember.nn.Linear(8, 16)
    lin(ember.randn(32, 8)).sum().backward()
    w = lin.weight.grad
    assert w.is_contiguous() and w.untyped_storage().nbytes() == w.numel() * 4


_INPLACE_AFTER = {
    "sum": lambda L, x: x.sum(), "sum_dim": lambda L, x: x.sum(0), "sum_keepdim": lambda L, x: x.sum(1, keepdim=True),
    "sum_dtype": lambda L, x: x.sum(0, dtype=L.float32), "trace": lambda L, x: x.trace(), "var": lambda L, x: x.var(1),
    "mean": lambda L, x: x.mean(0), "mm": lambda L, x: x @ L.ones(6, 3, dtype=L.float64),
    "linear_3d": lambda L, x: L.nn.functional.linear(x.reshape(2, 2, 6), L.ones(5, 6, dtype=L.float64)),
    "kron": lambda L, x: L.kron(x, L.ones(2, 2, dtype=L.float64)),
}


@pytest.mark.parametrize("name", sorted(_INPLACE_AFTER))
def test_in_place_ops_on_op_results_as_torch(name):
    """An op's result that is not a view in torch is not one here either: an in-place op on it under grad
    mode works and records itself (sum's and mm's results were views made under no_grad, which refused
    it; var's saved its result, which then failed the version check), with torch's gradients."""
    import numpy as np
    x0 = np.random.default_rng(0).standard_normal((4, 6))
    out = []
    for lib in (torch, ember):
        x = lib.tensor(x0, requires_grad=True)
        y = _INPLACE_AFTER[name](lib, x)
        assert y._base is None
        y.mul_(2).add_(1)
        assert y.grad_fn.name() == "AddBackward0"
        (y * y).sum().backward()
        out.append(x.grad.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6, atol=1e-6)
