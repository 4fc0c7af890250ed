# Reliability of autograd (issue 10, classes 4, 5 and 9): thread safety of the engine (backward
# runs without the GIL), gradients through views whose base was modified in place, and the
# contracts of hooks and autograd APIs. Each case is checked against torch.
import gc
import os
import threading
import time

import numpy as np
import pytest
import torch

import ember


def run_both(fn):
    """fn(lib) under ember and torch: (value or exception class) for each."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(("ok", fn(lib)))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            out.append(("err", type(e)))
    return out


def to_np(x):
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return [to_np(v) for v in x]
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return np.asarray(x.detach().numpy())
    return x


def assert_same(fn):
    (ke, ve), (kt, vt) = run_both(fn)
    assert ke == kt, f"ember {ke} {ve}, torch {kt} {vt}"
    if ke == "err":
        assert ve is vt, f"ember raised {ve}, torch {vt}"
        return
    ve, vt = to_np(ve), to_np(vt)
    if isinstance(vt, list):
        assert len(ve) == len(vt)
        for a, b in zip(ve, vt):
            assert (a is None) == (b is None)
            if isinstance(b, np.ndarray):
                np.testing.assert_allclose(a, b)
            else:
                assert a == b
    elif isinstance(vt, np.ndarray):
        np.testing.assert_allclose(ve, vt)
    else:
        assert ve == vt


# ---------------------------------------------------------------------------------------------
# Class 4: threads. backward releases the GIL, so these runs really overlap in the engine.

THREADS = 4


def _run_threads(target, n=THREADS):
    errors = []
    bar = threading.Barrier(n)

    def wrap(i):
        try:
            bar.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def test_concurrent_backward_first_accumulation_loses_nothing():
    # The race of class 4: every thread's AccumulateGrad finds .grad undefined and sets it.
    rounds, lost = 60, 0
    for _ in range(rounds):
        x = ember.ones(50_000, dtype=ember.float64, requires_grad=True)
        losses = [(x * float(i + 1)).sum() for i in range(THREADS)]
        _run_threads(lambda i: losses[i].backward())
        expected = sum(range(1, THREADS + 1))
        g = x.grad
        if g.min().item() != expected or g.max().item() != expected:
            lost += 1
    assert lost == 0, f"{lost} of {rounds} rounds lost a gradient update"


def test_thread_stress_shared_leaf_and_shared_graph():
    # Ops and backward from several threads on shared tensors: per-thread losses, and one shared
    # graph (retain_graph) whose nodes run in several threads at once. Sums are exact in float64.
    w = ember.ones(64, 64, dtype=ember.float64, requires_grad=True)
    b = ember.zeros(64, dtype=ember.float64, requires_grad=True)
    x = ember.ones(8, 64, dtype=ember.float64)
    shared = ember.relu(x @ w + b)  # nodes shared by every thread's graph
    iters = 1500
    deadline = time.monotonic() + 20  # bounded on slow CI machines

    done = [0] * THREADS

    def work(i):
        for k in range(iters):
            if time.monotonic() > deadline:
                break
            (ember.relu(x @ w + b) * 2.0).sum().backward()  # own graph, shared leaves
            (shared * 3.0).sum().backward(retain_graph=True)  # shared graph
            done[i] += 1

    _run_threads(work)
    n = sum(done)
    assert n > 0
    print(f"thread stress: {n} iterations ({2 * n} backward passes) on {THREADS} threads")
    # Per iteration, d/dw of relu(x@w+b).sum() (all positive) is x^T @ ones: 8 per element;
    # d/db: 8. Each iteration adds 2x and 3x that.
    np.testing.assert_array_equal(w.grad.numpy(), np.full((64, 64), 8.0 * 5 * n))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(64, 8.0 * 5 * n))


def test_concurrent_backward_with_hooks_and_retain_grad():
    x = ember.ones(1000, dtype=ember.float64, requires_grad=True)
    calls = []
    x.register_hook(lambda g: calls.append(1))  # a Python hook, run by several engines at once
    y = x * 2.0
    y.retain_grad()
    n = 40

    def work(i):
        for _ in range(n):
            (y * 1.0).sum().backward(retain_graph=True)

    _run_threads(work)
    assert len(calls) == THREADS * n
    assert x.grad.min().item() == x.grad.max().item() == 2.0 * THREADS * n
    assert y.grad.min().item() == y.grad.max().item() == 1.0 * THREADS * n


def test_concurrent_backward_without_retain_graph_raises_or_succeeds():
    # A graph freed by one thread's backward: the others raise torch's "second time" error
    # (never crash); the gradient is that of the passes that ran.
    for _ in range(20):
        x = ember.ones(10_000, dtype=ember.float64, requires_grad=True)
        loss = (x * x).sum()
        ok, errs = [], []

        def work(i):
            try:
                loss.backward()
                ok.append(i)
            except RuntimeError as e:
                assert "second time" in str(e)
                errs.append(i)

        _run_threads(work)
        assert len(ok) >= 1 and len(ok) + len(errs) == THREADS
        assert x.grad.max().item() == 2.0 * len(ok)


def test_grad_mode_is_thread_local():
    # no_grad in one thread does not affect another (as torch).
    for lib in (ember, torch):
        seen = {}
        entered, release = threading.Event(), threading.Event()

        def a():
            with lib.no_grad():
                entered.set()
                release.wait(10)
                seen["a"] = lib.is_grad_enabled()

        def b():
            entered.wait(10)
            x = lib.ones(2, requires_grad=True)
            seen["b"] = lib.is_grad_enabled()
            seen["b_req"] = (x * 2).requires_grad
            release.set()

        ts = [threading.Thread(target=a), threading.Thread(target=b)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert seen == {"a": False, "b": True, "b_req": True}, lib.__name__


def test_anomaly_mode_scope_matches_torch():
    def probe(lib):
        seen = {}
        with lib.autograd.set_detect_anomaly(True):
            t = threading.Thread(target=lambda: seen.setdefault("other", lib.is_anomaly_enabled()))
            t.start()
            t.join()
        return seen["other"], lib.is_anomaly_enabled()

    assert probe(ember) == probe(torch)


def test_forward_ad_level_scope_matches_torch():
    def probe(lib):
        fwAD = lib.autograd.forward_ad
        seen = {}
        with fwAD.dual_level():
            p = lib.ones(3, dtype=lib.float64)
            d = fwAD.make_dual(p, lib.full((3,), 2.0, dtype=lib.float64))

            def other():
                out = d * 3.0
                seen["tangent"] = fwAD.unpack_dual(out).tangent
                seen["req"] = lib.is_grad_enabled()

            t = threading.Thread(target=other)
            t.start()
            t.join()
        return to_np(seen["tangent"]), seen["req"]

    e, t = probe(ember), probe(torch)
    np.testing.assert_array_equal(e[0], t[0])
    assert e[1] == t[1]


def test_default_generator_from_threads():
    # The default generator is shared: draws from threads never crash, and each draw advances it
    # once (so no two threads see the same numbers).
    ember.manual_seed(0)
    outs = [None] * THREADS

    def work(i):
        outs[i] = [ember.rand(1000) for _ in range(50)]

    _run_threads(work)
    rows = {tuple(t[:8].tolist()) for o in outs for t in o}
    assert len(rows) == THREADS * 50


def test_tensor_release_from_engine_threads_keeps_python_objects():
    # PyObject preservation under threads: the engine drops tensors (and hook closures) without
    # the GIL while Python threads create and drop their wrappers.
    x = ember.ones(100, requires_grad=True)
    keep = []

    def hook(g):
        keep.append(g)  # a Python object for an engine-made tensor
        return None

    x.register_hook(hook)

    def work(i):
        for _ in range(30):
            y = x * 2.0
            y.register_hook(lambda g: g * 1.0)
            y.sum().backward()
            keep.append(x.grad)
            if len(keep) > 50:
                del keep[:25]
            gc.collect(0)

    _run_threads(work)
    assert x.grad.max().item() == 2.0 * THREADS * 30
    assert all(isinstance(t, ember.Tensor) and t.shape == (100,) for t in keep)


# ---------------------------------------------------------------------------------------------
# Class 5: a view's history after an in-place op on its base or another view.


def _c1(lib):  # the reproducer
    x = lib.ones(4, requires_grad=True)
    y = x.clone()
    v = y[:2]
    y.mul_(3)
    v.sum().backward()
    return x.grad


def _c2(lib):  # the base had no history when the view was made
    b = lib.zeros(4)
    v = b[:2]
    w = lib.arange(4.0).requires_grad_()
    b.add_(w)
    (v * v).sum().backward()
    return v.requires_grad, w.grad


def _c5(lib):  # view of a view
    x = lib.ones(4, requires_grad=True)
    y = x.clone()
    u = y[:3][1:]
    y.mul_(2)
    u.sum().backward()
    return x.grad


def _c6(lib):  # in place on one view, another view used
    x = lib.ones(4, requires_grad=True)
    y = x.clone()
    a, b = y[:2], y[1:3]
    a.mul_(5)
    b.sum().backward()
    return x.grad


def _c7(lib):  # in place on a view with another input, then the base used
    x = lib.arange(4.0).requires_grad_()
    y = x.clone()
    y[:2].mul_(x[:2])
    (y * y).sum().backward()
    return x.grad


def _c8(lib):  # a detached alias modified in place: the view's history is rebuilt, unchanged
    x = lib.ones(4, requires_grad=True)
    y = x.clone()
    d = y.detach()
    v = y[:2]
    d.mul_(3)
    v.sum().backward()
    return x.grad


def _c9(lib):  # transposed view, two in-place ops on the base, a view of the view
    x = lib.ones(2, 3, requires_grad=True)
    y = x.clone()
    v = y.t()
    y.mul_(2)
    w = v[0]
    y.add_(1)
    (w * w).sum().backward()
    return x.grad


def _c11(lib):  # in place through a view of a view, then the base
    x = lib.ones(4, requires_grad=True)
    y = x.clone()
    v = y.view(2, 2)
    v[0].mul_(3)
    (y * lib.arange(4.0)).sum().backward()
    return x.grad


def _d5(lib):  # a real view of a complex base
    x = lib.ones(2, dtype=lib.complex64, requires_grad=True)
    y = x * 1
    r = lib.view_as_real(y)
    y.mul_(2)
    (r * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return x.grad


def _d6(lib):
    x = lib.ones(2, 2, requires_grad=True)
    y = x * 1
    v = y.view(4)
    y.mul_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
    (v * lib.arange(4.0)).sum().backward()
    return x.grad


def _d7(lib):  # expanded view
    x = lib.ones(2, 1, requires_grad=True)
    y = x * 1
    v = y.expand(2, 3)
    y.mul_(2)
    v.sum().backward()
    return x.grad


def _grad_fn_name(lib):
    x = lib.ones(4, requires_grad=True)
    y = x.clone()
    v = y[:2]
    y.mul_(3)
    return v.grad_fn.name(), v.is_leaf, v.requires_grad


def _double_backward(lib):
    x = lib.arange(1.0, 5.0, dtype=lib.float64).requires_grad_()
    y = x * x
    v = y[1:3]
    y.mul_(x)
    (g,) = lib.autograd.grad(v.sum(), x, create_graph=True)
    g.sum().backward()
    return g, x.grad


def _no_grad_view_inplace(lib):  # torch forbids it
    x = lib.ones(4, requires_grad=True)
    y = x * 1
    with lib.no_grad():
        v = y[:2]
    v.mul_(3)


def _no_grad_view_of_leaf_inplace(lib):
    x = lib.ones(4, requires_grad=True)
    with lib.no_grad():
        v = x[:2]
    v.mul_(3)


def _no_grad_view_other_input(lib):
    x = lib.ones(4)
    with lib.no_grad():
        v = x[:2]
    w = lib.ones(2, requires_grad=True)
    v.mul_(w)


def _no_grad_view_base_modified(lib):
    x = lib.ones(4, requires_grad=True)
    y = x * 1
    with lib.no_grad():
        v = y[:2]
    y.mul_(3)
    return v.grad_fn is not None


def _no_grad_inplace_both(lib):  # both in no_grad: allowed
    x = lib.ones(4, requires_grad=True)
    y = x * 1
    with lib.no_grad():
        v = y[:2]
        v.mul_(3)
    (y * 1).sum().backward()
    return x.grad, y.detach()


@pytest.mark.parametrize(
    "case",
    [_c1, _c2, _c5, _c6, _c7, _c8, _c9, _c11, _d5, _d6, _d7, _grad_fn_name, _double_backward,
     _no_grad_view_inplace, _no_grad_view_of_leaf_inplace, _no_grad_view_other_input,
     _no_grad_view_base_modified, _no_grad_inplace_both],
    ids=lambda f: f.__name__.strip("_"),
)
def test_view_history_after_inplace(case):
    assert_same(case)


def test_view_gradcheck_after_base_inplace():
    def f(a):
        y = a * 1.0
        v = y[1:, ::2]
        y.mul_(a)
        return v * v

    for lib in (ember,):
        x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradcheck(f, (x,))
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    (f(x).sum()).backward()
    (f(xt).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


# ---------------------------------------------------------------------------------------------
# Class 9: hook and API contracts.


def _hook_leaf_size(lib):
    a = lib.ones(3, requires_grad=True)
    a.register_hook(lambda g: lib.ones(5))
    (a * 2).sum().backward()
    return a.grad


def _hook_leaf_dtype(lib):
    a = lib.ones(3, requires_grad=True)
    a.register_hook(lambda g: lib.ones(3, dtype=lib.float64))
    (a * 2).sum().backward()
    return a.grad


def _hook_nonleaf_size(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: lib.ones(5))
    b.sum().backward()
    return a.grad


def _hook_nonleaf_dtype(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: lib.ones(3, dtype=lib.float64))
    b.sum().backward()


def _hook_returns_int(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: 5)
    b.sum().backward()


def _hook_returns_same_shape(lib):  # allowed: replaces the gradient
    a = lib.ones(3, requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: g * 10)
    b.sum().backward()
    return a.grad


def _post_accumulate_return_ignored(lib):
    a = lib.ones(3, requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda t: lib.ones(5))
    (a * 2).sum().backward()
    return a.grad


def _resize_numpy(lib):
    t = lib.from_numpy(np.zeros(3, dtype=np.float32))
    t.resize_(10)


def _resize_numpy_smaller(lib):
    n = np.zeros(3, dtype=np.float32)
    t = lib.from_numpy(n)
    t.resize_(2)
    t.fill_(7)
    return t, lib.from_numpy(n)


def _resize_views_see_growth(lib):
    a = lib.zeros(3)
    b = a[:]
    a.resize_(100)
    a[0] = 5
    return b


def _grad_assign(bad):
    def f(lib):
        a = lib.ones(3, requires_grad=True)
        a.grad = bad(lib)
        return a.grad

    f.__name__ = "grad_assign"
    return f


def _backward_nonscalar(lib):
    a = lib.ones(3, requires_grad=True)
    (a * 2).backward()


def _backward_wrong_shape(lib):
    a = lib.ones(3, requires_grad=True)
    (a * 2).backward(lib.ones(4))


def _autograd_grad_wrong_shape(lib):
    a = lib.ones(3, requires_grad=True)
    lib.autograd.grad((a * 2).sum(), a, lib.ones(2))


def _backward_twice(lib):
    a = lib.ones(3, requires_grad=True)
    b = (a * a).sum()
    b.backward()
    b.backward()


def _backward_twice_retained(lib):
    a = lib.ones(3, requires_grad=True)
    b = (a * a).sum()
    b.backward(retain_graph=True)
    b.backward()
    return a.grad


def _backward_no_grad_tensor(lib):
    lib.ones(3).sum().backward()


@pytest.mark.parametrize(
    "case",
    [_hook_leaf_size, _hook_leaf_dtype, _hook_nonleaf_size, _hook_nonleaf_dtype, _hook_returns_int,
     _hook_returns_same_shape, _post_accumulate_return_ignored, _resize_numpy, _resize_numpy_smaller,
     _resize_views_see_growth, _backward_nonscalar, _backward_wrong_shape, _autograd_grad_wrong_shape,
     _backward_twice, _backward_twice_retained, _backward_no_grad_tensor,
     _grad_assign(lambda lib: lib.ones(4)), _grad_assign(lambda lib: lib.ones(3, dtype=lib.float64)),
     _grad_assign(lambda lib: lib.ones(3, dtype=lib.int64)), _grad_assign(lambda lib: lib.full((3,), 2.0))],
    ids=lambda f: f.__name__.strip("_"),
)
def test_api_contracts(case):
    assert_same(case)


def test_hook_error_message_names_the_hook():
    a = ember.ones(3, requires_grad=True)

    def my_hook(g):
        return ember.ones(5)

    a.register_hook(my_hook)
    with pytest.raises(RuntimeError, match="hook 'my_hook' has changed the size of value"):
        (a * 2).sum().backward()
    b = ember.ones(3, requires_grad=True)
    b.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match=r"has changed the type of value \(was ember.FloatTensor got "
                                           r"ember.DoubleTensor\)"):
        (b * 2).sum().backward()


# ---------------------------------------------------------------------------------------------
# Memory growth: allocator statistics and RSS stay flat over 1,000 training-like steps.


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_flat_over_training_steps():
    ember.manual_seed(0)
    w1 = (ember.randn(64, 128) * 0.1).requires_grad_()
    b1 = ember.zeros(128, requires_grad=True)
    w2 = (ember.randn(128, 10) * 0.1).requires_grad_()
    x = ember.randn(32, 64)
    params = [w1, b1, w2]

    def step():
        loss = (ember.relu(x @ w1 + b1) @ w2).pow(2).mean()
        loss.backward()
        with ember.no_grad():
            for p in params:
                p.sub_(p.grad * 1e-3)
                p.grad = None
        return loss

    for _ in range(50):  # warm-up: caches, first-touch pages
        step()
    gc.collect()
    gc.disable()  # garbage of earlier tests must not be freed in between
    try:
        ember._C._cpu_reset_peak_stats()
        s0, rss0 = ember._C._cpu_memory_stats(), _rss_bytes()
        for i in range(1000):
            step()
            if i == 499:
                s_mid = ember._C._cpu_memory_stats()
        s1, rss1 = ember._C._cpu_memory_stats(), _rss_bytes()
    finally:
        gc.enable()
    # Every tensor of a step is freed by the next: live bytes return exactly to the start.
    assert s1["allocated_bytes"] == s0["allocated_bytes"] == s_mid["allocated_bytes"]
    assert s1["cached_bytes"] <= max(s0["cached_bytes"], 1 << 20)
    assert s1["peak_allocated_bytes"] - s0["allocated_bytes"] < 4 << 20
    print(f"allocated {s0['allocated_bytes']} -> {s1['allocated_bytes']} bytes, cached {s1['cached_bytes']}, "
          f"peak {s1['peak_allocated_bytes']}, RSS {rss0 / 2**20:.1f} -> {rss1 / 2**20:.1f} MiB")
    assert rss1 - rss0 < 16 << 20, f"RSS grew by {(rss1 - rss0) / 2**20:.1f} MiB over 1000 steps"
