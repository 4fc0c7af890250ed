"""utils.checkpoint as torch's: both variants give the plain run's gradients, the non-reentrant one
(saved-tensor hooks) keeps no activations, works without inputs that require grad, with
autograd.grad, double backward, kwargs, context_fn and nesting, and checks the rerun; warnings and
errors as torch's."""
import warnings
import weakref

import numpy as np
import pytest

import ember
import ember.utils.checkpoint as C
from conftest import same_error, torch

import torch.utils.checkpoint as TC  # noqa: E402  (conftest has made torch importable or skipped)

_W = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.3, 0.2, 0.1]]
_X = [[1.0, 2.0, -3.0], [0.5, -0.5, 0.25]]


def _setup(lib, x_grad):
    w = lib.tensor(_W, dtype=lib.float64, requires_grad=True)
    x = lib.tensor(_X, dtype=lib.float64, requires_grad=x_grad)
    return w, x


def _block(lib, w, refs=None):
    def f(a, scale=1.0):
        h = (a @ w).exp()
        if refs is not None:
            refs.append(weakref.ref(h))
        return (h * h.sin()).tanh() * scale + lib.nn.functional.relu(a)
    return f


def _np(t):
    return None if t is None else t.detach().numpy()


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("x_grad", [True, False])
def test_gradients_equal_the_plain_run_and_torch(reentrant, x_grad):
    results = {}
    for name, lib, mod in (("ember", ember, C), ("torch", torch, TC)):
        w, x = _setup(lib, x_grad)
        f = _block(lib, w)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = mod.checkpoint(f, x, use_reentrant=reentrant, scale=2.0) if not reentrant else \
                mod.checkpoint(lambda a: f(a, 2.0), x, use_reentrant=True)
        msgs = [str(c.message) for c in caught]
        results[name] = (y.requires_grad, msgs)
        if y.requires_grad:
            y.sum().backward()
            results[name] += (_np(w.grad), _np(x.grad))
            w2, x2 = _setup(lib, x_grad)
            _block(lib, w2)(x2, 2.0).sum().backward()
            np.testing.assert_allclose(_np(w.grad), _np(w2.grad), rtol=1e-13)
    e, t = results["ember"], results["torch"]
    assert e[:2] == t[:2]  # requires_grad of the output, the warnings
    for ge, gt in zip(e[2:], t[2:]):
        assert (ge is None) == (gt is None)
        if ge is not None:
            np.testing.assert_allclose(ge, gt, rtol=1e-12)


def test_non_reentrant_keeps_no_activations_and_reruns_once():
    for lib, mod in ((ember, C), (torch, TC)):
        w, x = _setup(lib, True)
        refs, calls = [], []
        f = _block(lib, w, refs)

        def counted(a):
            calls.append(1)
            return f(a)
        y = mod.checkpoint(counted, x, use_reentrant=False)
        assert refs[0]() is None  # the segment's intermediate is not kept
        y.sum().backward()
        assert len(calls) == 2
        plain_refs = []
        keep = _block(lib, w, plain_refs)(x)
        assert plain_refs[0]() is not None and keep is not None  # without checkpoint it is


def test_non_reentrant_autograd_grad_and_double_backward_as_torch():
    out = {}
    for name, lib, mod in (("ember", ember, C), ("torch", torch, TC)):
        w, x = _setup(lib, True)

        def f(a):
            return (a * a * w[0]).sin() @ w
        y = mod.checkpoint(f, x, use_reentrant=False)
        gx, gw = lib.autograd.grad(y.sum(), (x, w), create_graph=True)
        assert w.grad is None and x.grad is None  # autograd.grad leaves .grad alone
        hx, hw = lib.autograd.grad((gx * gx).sum() + gw.sum(), (x, w))
        out[name] = [_np(t) for t in (gx, gw, hx, hw)]
    for a, b in zip(out["ember"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_non_reentrant_dropout_replays_the_same_mask():
    ember.manual_seed(0)
    lin = ember.nn.Linear(16, 16)
    x = ember.randn(8, 16)

    def f(a):
        return ember.nn.functional.dropout(lin(a), 0.5, training=True).pow(2)
    state = ember.get_rng_state()
    C.checkpoint(f, x, use_reentrant=False).sum().backward()
    g_ckpt = lin.weight.grad.clone()
    lin.weight.grad = None
    ember.set_rng_state(state)
    f(x).sum().backward()
    assert ember.equal(g_ckpt, lin.weight.grad)


def test_context_fn_wraps_forward_and_rerun():
    import contextlib
    log = []

    @contextlib.contextmanager
    def tag(name):
        log.append("enter " + name)
        yield
        log.append("exit " + name)
    w, x = _setup(ember, True)
    y = C.checkpoint(lambda a: (a @ w).exp(), x, use_reentrant=False,
                     context_fn=lambda: (tag("forward"), tag("recompute")))
    assert log == ["enter forward", "exit forward"]
    y.sum().backward()
    assert log == ["enter forward", "exit forward", "enter recompute", "exit recompute"]


def test_nested_and_sequential_checkpoints_match_plain():
    ember.manual_seed(1)
    layers = ember.nn.Sequential(*[ember.nn.Sequential(ember.nn.Linear(8, 8), ember.nn.Tanh()) for _ in range(4)])
    x = ember.randn(5, 8)
    layers(x).sum().backward()
    want = [p.grad.clone() for p in layers.parameters()]
    def nested(a):  # a checkpoint inside a checkpoint
        return layers[2:](C.checkpoint(layers[:2], a, use_reentrant=False))
    for run in (lambda: C.checkpoint_sequential(layers, 2, x, use_reentrant=False),
                lambda: C.checkpoint(nested, x, use_reentrant=False)):
        layers.zero_grad()
        run().sum().backward()
        for p, g in zip(layers.parameters(), want):
            np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-6, atol=1e-7)


def _changing(lib, w):
    n = [0]

    def g(a):
        n[0] += 1
        return (a * w[0]).exp() if n[0] == 1 else (a[:1] * w[0]).exp()
    return g


def test_rerun_that_differs_raises_checkpoint_error_as_torch():
    for lib, mod in ((ember, C), (torch, TC)):
        w, x = _setup(lib, True)
        with pytest.raises(mod.CheckpointError):
            mod.checkpoint(_changing(lib, w), x, use_reentrant=False).sum().backward()
        w, x = _setup(lib, True)
        mod.checkpoint(_changing(lib, w), x, use_reentrant=False, determinism_check="none").sum().backward()
    assert issubclass(C.CheckpointError, RuntimeError)


def test_bad_arguments_and_helpers_as_torch():
    w, x = _setup(ember, True)
    tw, tx = _setup(torch, True)
    same_error(lambda: C.checkpoint(lambda a: a, x, use_reentrant=True, context_fn=lambda: (None, None)),
               lambda: TC.checkpoint(lambda a: a, tx, use_reentrant=True, context_fn=lambda: (None, None)))
    same_error(lambda: C.checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="x"),
               lambda: TC.checkpoint(lambda a: a, tx, use_reentrant=False, determinism_check="x"))
    same_error(lambda: C.detach_variable([x]), lambda: TC.detach_variable([tx]))
    d = C.detach_variable((x, 3))
    assert d[0].requires_grad and d[0].grad_fn is None and d[1] == 3 and d[0] is not x
    assert [p.name for p in C.CheckpointPolicy] == [p.name for p in TC.CheckpointPolicy]
    assert all(isinstance(c, type(C.noop_context_fn()[0])) for c in C.noop_context_fn())
    with C.set_checkpoint_early_stop(False), C.set_checkpoint_debug_enabled(True):
        C.checkpoint(lambda a: a.exp(), x, use_reentrant=False).sum().backward()
    with pytest.raises(NotImplementedError):
        C.create_selective_checkpoint_contexts([])
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        C.checkpoint(lambda a: a.exp(), x)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant"):
        C.checkpoint_sequential([lambda a: a.exp(), lambda a: a.sin()], 2, x)
