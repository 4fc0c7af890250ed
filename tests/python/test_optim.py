"""ember.optim against torch.optim: trajectories, state dicts both ways, base-class behaviour."""
import copy

import numpy as np
import pytest
import torch

import ember
import ember.optim as eoptim

STEPS = 20


def to_torch(x):
    if isinstance(x, ember.Tensor):
        return torch.from_numpy(np.array(x.detach().numpy(), copy=True))
    if isinstance(x, dict):
        return {k: to_torch(v) for k, v in x.items()}
    if isinstance(x, list):
        return [to_torch(v) for v in x]
    return x


def to_ember(x):
    if isinstance(x, torch.Tensor):
        return ember.tensor(x.detach().numpy())
    if isinstance(x, dict):
        return {k: to_ember(v) for k, v in x.items()}
    if isinstance(x, list):
        return [to_ember(v) for v in x]
    return x


def make_params(dtype, rng):
    """A matrix, a vector, a 0-d tensor and a non-contiguous (transposed) leaf, same values in both."""
    arrays = [rng.standard_normal((4, 5)), rng.standard_normal(7), np.array(rng.standard_normal()),
              rng.standard_normal((3, 6))]
    tp, ep = [], []
    for i, a in enumerate(arrays):
        t = torch.tensor(a, dtype=getattr(torch, dtype))
        e = ember.tensor(a, dtype=getattr(ember, dtype))
        if i == 3:
            t, e = t.t(), e.t()
        tp.append(t.requires_grad_())
        ep.append(e.requires_grad_())
    return tp, ep


def set_grads(tp, ep, coeffs, maximize_sign=1.0):
    # The gradient depends on the parameter, so any difference in the update feeds back.
    for t, e, (a, b) in zip(tp, ep, coeffs):
        ta = torch.tensor(a, dtype=t.dtype).reshape(t.shape)
        tb = torch.tensor(b, dtype=t.dtype).reshape(t.shape)
        t.grad = t.detach() * ta + tb
        e.grad = e.detach() * ember.tensor(a, dtype=e.dtype).reshape(tuple(e.shape)) + ember.tensor(
            b, dtype=e.dtype).reshape(tuple(e.shape))


def coeffs_for(tp, rng):
    return [(rng.uniform(0.5, 2.0, size=t.shape), rng.standard_normal(t.shape)) for t in tp]


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)


def assert_close(e, t, dtype, msg=""):
    # atol scales with the tensor's magnitude: an element near 0 of a tensor of values near 5 (a
    # centered RMSprop momentum buffer, say) carries the rounding of its larger neighbours, which
    # differs with FMA contraction (EMBER_CPU_CAPABILITY=default has none, torch's kernels do).
    tv = t.detach().numpy().astype(np.float64)
    kw = tol(dtype)
    kw["atol"] *= max(1.0, float(np.abs(tv).max(initial=0.0)))
    np.testing.assert_allclose(np.asarray(e.detach().numpy(), dtype=np.float64), tv, err_msg=msg, **kw)


def compare_state(eo, to, dtype):
    esd, tsd = eo.state_dict(), to.state_dict()
    assert esd["param_groups"] == [{k: v for k, v in g.items()} for g in tsd["param_groups"]] or \
        [{k: (float(v) if isinstance(v, (torch.Tensor, ember.Tensor)) else v) for k, v in g.items()}
         for g in esd["param_groups"]] == \
        [{k: (float(v) if isinstance(v, (torch.Tensor, ember.Tensor)) else v) for k, v in g.items()}
         for g in tsd["param_groups"]]
    assert list(esd["state"].keys()) == list(tsd["state"].keys())
    for idx, tstate in tsd["state"].items():
        estate = esd["state"][idx]
        assert list(estate.keys()) == list(tstate.keys()), (estate.keys(), tstate.keys())
        for k, tv in tstate.items():
            ev = estate[k]
            if isinstance(tv, torch.Tensor):
                assert isinstance(ev, ember.Tensor)
                assert str(ev.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], k
                assert tuple(ev.shape) == tuple(tv.shape), k
                assert_close(ev, tv, dtype, f"state {idx}.{k}")
            else:
                assert ev == tv


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, foreach=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, fused=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.99), eps=1e-6)),
    ("Adam", dict(lr=0.01, maximize=True, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, foreach=True)),
    ("Adam", dict(lr=0.01, fused=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.5)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01)),
    ("NAdam", dict(maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-5)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, alpha=0.9)),
    ("RMSprop", dict(lr=0.01, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True, eps=1e-4)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, t0=5, lambd=0.01, alpha=0.5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=3, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-4, 0.2))),
    ("Rprop", dict(maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.05, weight_decay=0.1, d=2.0)),
    ("Adafactor", dict(lr=1.0, beta2_decay=-0.5, eps=(1e-20, 1e-2), maximize=True)),
]


def _id(c):
    return c[0] + "-" + ",".join(f"{k}={v}" for k, v in c[1].items())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=[_id(c) for c in CONFIGS])
def test_trajectory_matches_torch(config, dtype):
    name, kw = config
    rng = np.random.default_rng(0)
    tp, ep = make_params(dtype, rng)
    coeffs = coeffs_for(tp, rng)
    to = getattr(torch.optim, name)(tp, **kw)
    eo = getattr(eoptim, name)(ep, **kw)
    for step in range(STEPS):
        set_grads(tp, ep, coeffs)
        to.step()
        eo.step()
        for i, (t, e) in enumerate(zip(tp, ep)):
            assert_close(e, t, dtype, f"{name} step {step} param {i}")
    compare_state(eo, to, dtype)


# Two chunks of the fused step (Note [Fused optimizer step]: 2^14 elements) plus a tail that no
# vector width divides: the vectorized element loops, their remainders and the chunk seams. The
# gradients hold zeros, and tiny and huge values, so Rprop's sign cases and the divisions see them.
BIG = 2 * (1 << 14) + 45


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=[_id(c) for c in CONFIGS])
def test_large_parameter_matches_torch(config, dtype):
    name, kw = config
    rng = np.random.default_rng(2)
    a = rng.standard_normal(BIG)
    t = torch.tensor(a, dtype=getattr(torch, dtype)).requires_grad_()
    e = ember.tensor(a, dtype=getattr(ember, dtype)).requires_grad_()
    to = getattr(torch.optim, name)([t], **kw)
    eo = getattr(eoptim, name)([e], **kw)
    for step in range(4):
        g = rng.standard_normal(BIG) * rng.choice([0.0, 1e-30, 1.0, 1e3], size=BIG, p=[0.1, 0.05, 0.8, 0.05])
        t.grad = torch.tensor(g, dtype=t.dtype)
        e.grad = ember.tensor(g, dtype=e.dtype)
        to.step()
        eo.step()
        assert_close(e, t, dtype, f"{name} step {step}")
    compare_state(eo, to, dtype)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adamax", "NAdam", "RAdam", "Adagrad", "RMSprop", "Adadelta", "ASGD",
                                  "Rprop", "Adafactor"])
def test_nonfinite_gradients_match_torch(name):
    """NaN and inf gradients inside vector bodies and in the tail give torch's NaN/inf pattern."""
    rng = np.random.default_rng(3)
    n = 1000
    a = rng.standard_normal(n)
    t = torch.tensor(a, dtype=torch.float32).requires_grad_()
    e = ember.tensor(a, dtype=ember.float32).requires_grad_()
    kw = dict(momentum=0.9) if name == "SGD" else {}
    to = getattr(torch.optim, name)([t], **kw)
    eo = getattr(eoptim, name)([e], **kw)
    for step in range(3):
        g = rng.standard_normal(n)
        g[[5, 17, 998]] = np.nan
        g[[9, 40, 999]] = np.inf
        g[[11, 997]] = -np.inf
        t.grad = torch.tensor(g, dtype=torch.float32)
        e.grad = ember.tensor(g, dtype=ember.float32)
        to.step()
        eo.step()
        tv, ev = t.detach().numpy(), e.detach().numpy()
        np.testing.assert_array_equal(np.isnan(ev), np.isnan(tv), err_msg=f"{name} step {step}")
        np.testing.assert_array_equal(np.isposinf(ev), np.isposinf(tv), err_msg=f"{name} step {step}")
        fin = np.isfinite(tv)
        np.testing.assert_allclose(ev[fin], tv[fin], rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("config", CONFIGS[1:2] + CONFIGS[8:9] + CONFIGS[21:22] + CONFIGS[32:33] + CONFIGS[38:39]
                         + CONFIGS[-2:-1],
                         ids=_id)
def test_state_dict_crosses_both_ways(config):
    """Run torch 5 steps, load its state into ember, continue both; then the other way round."""
    name, kw = config
    dtype = "float64"
    rng = np.random.default_rng(1)
    tp, ep = make_params(dtype, rng)
    coeffs = coeffs_for(tp, rng)
    to = getattr(torch.optim, name)(tp, **kw)
    for _ in range(5):
        set_grads(tp, ep, coeffs)
        to.step()
    # torch casts loaded state to the parameters' dtype (scalars like mu_product included): compare
    # against a torch optimizer that went through the same load.
    to.load_state_dict(copy.deepcopy(to.state_dict()))
    with ember.no_grad():
        for t, e in zip(tp, ep):
            e.copy_(ember.tensor(t.detach().numpy()))
    eo = getattr(eoptim, name)(ep, **kw)
    eo.load_state_dict(to_ember(to.state_dict()))
    compare_state(eo, to, dtype)
    for _ in range(5):
        set_grads(tp, ep, coeffs)
        to.step()
        eo.step()
    for t, e in zip(tp, ep):
        assert_close(e, t, dtype)
    # ember -> torch
    to2 = getattr(torch.optim, name)(tp, **kw)
    to2.load_state_dict(to_torch(eo.state_dict()))
    compare_state(eo, to2, dtype)
    for _ in range(5):
        set_grads(tp, ep, coeffs)
        to2.step()
        eo.step()
    for t, e in zip(tp, ep):
        assert_close(e, t, dtype)


def test_tensor_lr():
    rng = np.random.default_rng(2)
    tp, ep = make_params("float32", rng)
    coeffs = coeffs_for(tp, rng)
    to = torch.optim.Adam(tp, lr=torch.tensor(0.01))
    eo = eoptim.Adam(ep, lr=ember.tensor(0.01))
    for _ in range(5):
        set_grads(tp, ep, coeffs)
        to.step()
        eo.step()
    for t, e in zip(tp, ep):
        assert_close(e, t, "float32")
    with pytest.raises(ValueError):
        torch.optim.Adam(tp, lr=torch.tensor(0.01), foreach=True)
    with pytest.raises(ValueError):
        eoptim.Adam(ep, lr=ember.tensor(0.01), foreach=True)
    with pytest.raises(ValueError):
        eoptim.SGD(ep, lr=ember.tensor([0.01, 0.02]))


def test_param_groups_and_defaults():
    a = ember.randn(3, requires_grad=True)
    b = ember.randn(2, requires_grad=True)
    ta, tb = torch.randn(3, requires_grad=True), torch.randn(2, requires_grad=True)
    eo = eoptim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    to = torch.optim.SGD([{"params": [ta]}, {"params": tb, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [{k: v for k, v in g.items() if k != "params"} for g in eo.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in to.param_groups]
    assert eo.state_dict()["param_groups"] == to.state_dict()["param_groups"]
    c = ember.randn(4, requires_grad=True)
    eo.add_param_group({"params": [c], "weight_decay": 0.1})
    assert eo.param_groups[2]["lr"] == 0.1 and eo.param_groups[2]["weight_decay"] == 0.1
    assert [g["params"] for g in eo.state_dict()["param_groups"]] == [[0], [1], [2]]


def test_errors_match_torch():
    a = ember.randn(3, requires_grad=True)
    ta = torch.randn(3, requires_grad=True)
    cases = [
        (lambda m, x: m.optim.SGD(x, lr=0.1), TypeError),            # a bare tensor
        (lambda m, x: m.optim.SGD([], lr=0.1), ValueError),           # empty
        (lambda m, x: m.optim.SGD([{"params": {x}}], lr=0.1), TypeError),  # a set
        (lambda m, x: m.optim.SGD([x], lr=-1), ValueError),
        (lambda m, x: m.optim.SGD([x], lr=0.1, momentum=-1), ValueError),
        (lambda m, x: m.optim.SGD([x], lr=0.1, nesterov=True), ValueError),
        (lambda m, x: m.optim.Adam([x], betas=(1.0, 0.9)), ValueError),
        (lambda m, x: m.optim.Adam([x], eps=-1.0), ValueError),
        (lambda m, x: m.optim.Adam([x], weight_decay=-1.0), ValueError),
        (lambda m, x: m.optim.Adam([x], fused=True, foreach=True), RuntimeError),
        (lambda m, x: m.optim.SGD([x * 2], lr=0.1), ValueError),      # non-leaf
        (lambda m, x: m.optim.SGD([x, 1.0], lr=0.1), TypeError),
        (lambda m, x: m.optim.SGD([{"params": [x]}, {"params": [x]}], lr=0.1), ValueError),
    ]
    for make, exc in cases:
        with pytest.raises(exc):
            make(torch, ta)
        with pytest.raises(exc):
            make(ember, a)
    o = eoptim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        o.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        o.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0, 1]}]})


def test_duplicate_param_warns():
    a = ember.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        eoptim.SGD([a, a], lr=0.1)


def test_zero_grad_and_closure():
    a = ember.ones(3, requires_grad=True)
    o = eoptim.SGD([a], lr=0.1)
    (a * a).sum().backward()
    o.zero_grad(set_to_none=False)
    assert a.grad is not None and float(a.grad.abs().sum()) == 0.0
    o.zero_grad()
    assert a.grad is None

    calls = []

    def closure():
        o.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        calls.append(float(loss))
        return loss

    loss = o.step(closure)
    assert calls == [3.0] and float(loss) == 3.0
    np.testing.assert_allclose(a.detach().numpy(), np.full(3, 0.8), rtol=1e-6)
    # no gradient: parameter untouched, no state created
    b = ember.ones(2, requires_grad=True)
    o2 = eoptim.Adam([b])
    o2.step()
    assert len(o2.state) == 0 and float(b.sum()) == 2.0


def test_step_hooks_and_state_dict_hooks():
    a = ember.ones(3, requires_grad=True)
    o = eoptim.SGD([a], lr=0.1)
    log = []
    h1 = o.register_step_pre_hook(lambda opt, args, kwargs: log.append(("pre", opt is o)))
    h2 = o.register_step_post_hook(lambda opt, args, kwargs: log.append(("post", opt is o)))
    hg = eoptim.optimizer.register_optimizer_step_pre_hook(lambda opt, args, kwargs: log.append(("global", 1)))
    a.grad = ember.ones(3)
    o.step()
    assert log == [("global", 1), ("pre", True), ("post", True)]
    h1.remove()
    h2.remove()
    hg.remove()
    o.step()
    assert len(log) == 3

    o.register_state_dict_pre_hook(lambda opt: log.append("sd_pre"))
    o.register_state_dict_post_hook(lambda opt, sd: {**sd, "extra": 1})
    sd = o.state_dict()
    assert sd["extra"] == 1 and log[-1] == "sd_pre"

    def pre_load(opt, sd):
        sd = dict(sd)
        sd.pop("extra", None)
        log.append("load_pre")
        return sd
    o.register_load_state_dict_pre_hook(pre_load)
    o.register_load_state_dict_post_hook(lambda opt: log.append("load_post"))
    o.load_state_dict(sd)
    assert log[-2:] == ["load_pre", "load_post"]


def test_state_dict_structure_and_dtype_cast():
    """State loaded for float64 params becomes float64 except 'step' (torch's rule)."""
    tp = [torch.randn(3, dtype=torch.float32, requires_grad=True)]
    to = torch.optim.Adam(tp)
    tp[0].grad = torch.randn(3)
    to.step()
    e = ember.randn(3, dtype=ember.float64, requires_grad=True)
    eo = eoptim.Adam([e])
    eo.load_state_dict(to_ember(to.state_dict()))
    st = eo.state[e]
    assert st["exp_avg"].dtype == ember.float64 and st["step"].dtype == ember.float32
    assert eo.param_groups[0]["params"][0] is e


def test_adagrad_state_at_construction():
    t = torch.randn(3, requires_grad=True)
    e = ember.randn(3, requires_grad=True)
    tsd = torch.optim.Adagrad([t], initial_accumulator_value=0.3).state_dict()
    esd = eoptim.Adagrad([e], initial_accumulator_value=0.3).state_dict()
    assert list(esd["state"][0].keys()) == list(tsd["state"][0].keys())
    np.testing.assert_allclose(esd["state"][0]["sum"].numpy(), tsd["state"][0]["sum"].numpy())


def test_unsupported_dtype_and_differentiable():
    a = ember.ones(3, dtype=ember.float16, requires_grad=True)
    o = eoptim.SGD([a], lr=0.1)
    a.grad = ember.ones(3, dtype=ember.float16)
    with pytest.raises(NotImplementedError):
        o.step()
    with pytest.raises(NotImplementedError):
        eoptim.Adam([ember.ones(2, requires_grad=True)], differentiable=True)


def _reference_sgd(params, grads, bufs, lr, momentum, dampening, wd, nesterov):
    """Per-tensor reference written with ember ops (the fused kernel must agree)."""
    for i, (p, g) in enumerate(zip(params, grads)):
        d = g + wd * p if wd else g
        if momentum:
            bufs[i] = d.clone() if bufs[i] is None else bufs[i] * momentum + (1 - dampening) * d
            d = d + momentum * bufs[i] if nesterov else bufs[i]
        p.sub_(lr * d)


def test_fused_matches_per_tensor_reference_large():
    """A tensor spanning many chunks (threads) and many small tensors, against the ember-op reference."""
    rng = np.random.default_rng(3)
    shapes = [(100_003,)] + [(rng.integers(1, 50),) for _ in range(30)]
    ep = [ember.tensor(rng.standard_normal(s)).requires_grad_() for s in shapes]
    rp = [p.detach().clone() for p in ep]
    bufs = [None] * len(ep)
    o = eoptim.SGD(ep, lr=0.01, momentum=0.9, dampening=0.1, weight_decay=0.01, nesterov=False)
    for _ in range(3):
        grads = [ember.tensor(rng.standard_normal(s)) for s in shapes]
        for p, g in zip(ep, grads):
            p.grad = g
        o.step()
        with ember.no_grad():
            _reference_sgd(rp, grads, bufs, 0.01, 0.9, 0.1, 0.01, False)
    for p, r in zip(ep, rp):
        np.testing.assert_allclose(p.detach().numpy(), r.numpy(), rtol=1e-12, atol=1e-14)


def _rosenbrock(mod, x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + ((x[2:] - 0.5) ** 2).sum()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe"),
                                dict(lr=0.5, history_size=3, max_iter=7, line_search_fn="strong_wolfe"),
                                dict(lr=0.1, max_iter=4, history_size=2)], ids=str)
def test_lbfgs_matches_torch(kw, dtype):
    start = np.array([-1.2, 1.0, 0.3, -0.7])
    tx = torch.tensor(start, dtype=getattr(torch, dtype), requires_grad=True)
    ex = ember.tensor(start, dtype=getattr(ember, dtype)).requires_grad_()
    if dtype == "float32":
        # Rosenbrock's curvature amplifies last-bit differences of the float32 gradients (which
        # differ with FMA contraction, by CPU kernel level, in torch as in ember) over the 20
        # default inner iterations; 10 keep the trajectories comparable at every level.
        kw = dict(kw, max_iter=10)
    to = torch.optim.LBFGS([tx], **kw)
    eo = eoptim.LBFGS([ex], **kw)

    def closure(mod, opt, x):
        def f():
            opt.zero_grad()
            loss = _rosenbrock(mod, x)
            loss.backward()
            return loss
        return f
    # 80 iterations on an ill-conditioned problem amplify last-bit differences of the dot products
    t_tol = dict(rtol=1e-6, atol=1e-9) if dtype == "float64" else dict(rtol=1e-3, atol=1e-4)
    # float32: the gradients themselves differ in the last bit, which Rosenbrock's curvature
    # amplifies over many iterations, so fewer outer steps there
    for _ in range(4 if dtype == "float64" else 1):
        tl = to.step(closure(torch, to, tx))
        el = eo.step(closure(ember, eo, ex))
        np.testing.assert_allclose(float(el), float(tl.detach()), **t_tol)
        np.testing.assert_allclose(ex.detach().numpy(), tx.detach().numpy(), **t_tol)
    ts, es = to.state[tx], eo.state[ex]
    assert es["func_evals"] == ts["func_evals"] and es["n_iter"] == ts["n_iter"]
    assert set(es.keys()) == set(ts.keys())
    with pytest.raises(ValueError):
        eoptim.LBFGS([{"params": [ex]}, {"params": [ember.zeros(1, requires_grad=True)]}])


@pytest.mark.parametrize("kw", [dict(lr=-1.0), dict(beta2_decay=0.1), dict(eps=(-1.0, 1e-3)), dict(eps=(None, -1.0)),
                                dict(d=0.5), dict(weight_decay=-1.0)])
def test_adafactor_bad_arguments_as_torch(kw):
    with pytest.raises(ValueError) as te:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as ee:
        eoptim.Adafactor([ember.zeros(2, requires_grad=True)], **kw)
    assert str(ee.value) == str(te.value)


def test_adafactor_state_layout_and_unsupported_parameters_as_torch():
    shapes = [(3, 4), (5,), (2, 3, 4), ()]
    tp = [torch.ones(s, requires_grad=True) for s in shapes]
    ep = [ember.ones(s, requires_grad=True) for s in shapes]
    for t, e in zip(tp, ep):
        t.grad, e.grad = torch.ones(t.shape), ember.ones(e.shape)
    to, eo = torch.optim.Adafactor(tp), eoptim.Adafactor(ep)
    to.step()
    eo.step()
    assert eo.defaults == to.defaults
    for t, e in zip(tp, ep):  # factored rows/columns for matrices and up, a full variance below
        assert {k: tuple(v.shape) for k, v in eo.state[e].items()} == {k: tuple(v.shape) for k, v in to.state[t].items()}
    for make in (lambda L: L.zeros(2, 2, dtype=L.complex64, requires_grad=True),
                 lambda L: L.zeros(0, 3, requires_grad=True)):  # complex: RuntimeError; empty: ZeroDivisionError
        errors = []
        for L, opt in ((torch, torch.optim), (ember, eoptim)):
            p = make(L)
            p.grad = L.ones_like(p)
            with pytest.raises(Exception) as info:
                opt.Adafactor([p]).step()
            errors.append(type(info.value))
        assert errors[0] is errors[1]


def _muon_reference(p, grads, lr, weight_decay=0.1, momentum=0.95, nesterov=True,
                    ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None):
    """torch.optim.Muon's documented update in float64 NumPy, with the exact Newton-Schulz iteration."""
    a, b, c = ns_coefficients
    p, buf = p.copy(), np.zeros_like(p)
    rows, cols = p.shape
    scale = 0.2 * np.sqrt(max(rows, cols)) if adjust_lr_fn == "match_rms_adamw" else np.sqrt(max(1.0, rows / cols))
    for g in grads:
        buf = momentum * buf + (1 - momentum) * g
        u = (1 - momentum) * g + momentum * buf if nesterov else buf
        x = u.T if rows > cols else u
        x = x / max(np.linalg.norm(x), eps)
        for _ in range(ns_steps):
            gram = x @ x.T
            x = a * x + (b * gram + c * gram @ gram) @ x
        u = x.T if rows > cols else x
        p = p * (1 - lr * weight_decay) - lr * scale * u
    return p, buf


MUON_CONFIGS = [dict(lr=0.02), dict(lr=0.05, nesterov=False), dict(lr=0.02, adjust_lr_fn="match_rms_adamw", weight_decay=0.0),
                dict(lr=0.1, momentum=0.0, ns_steps=3), dict(lr=0.01, adjust_lr_fn="original", eps=1e-3, weight_decay=0.5)]


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (6, 6), (40, 24)])
@pytest.mark.parametrize("kw", MUON_CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_muon_against_the_documented_update_and_torch(shape, kw):
    """optim.Muon: four steps equal the documented update (lerp momentum, Nesterov, Newton-Schulz on the
    wide orientation, decoupled weight decay, shape-adjusted lr) in float64 to rounding; torch's runs its
    Newton-Schulz iteration in bfloat16, so its parameters differ by a few percent of the step (the
    momentum buffers exactly)."""
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(4)]
    results = {}
    for L, opt in ((torch, torch.optim), (ember, eoptim)):
        p = L.nn.Parameter(L.from_numpy(p0.copy()))
        o = opt.Muon([p], **kw)
        for g in grads:
            p.grad = L.from_numpy(g.copy())
            o.step()
        results[L.__name__] = (p.detach().numpy(), o.state[p]["momentum_buffer"].numpy())
    want_p, want_buf = _muon_reference(p0, grads, **kw)
    np.testing.assert_allclose(results["ember"][0], want_p, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results["ember"][1], want_buf, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results["ember"][1], results["torch"][1], rtol=1e-12, atol=1e-14)
    step = kw["lr"] * (0.2 * np.sqrt(max(shape)) if kw.get("adjust_lr_fn") == "match_rms_adamw" else np.sqrt(max(1, shape[0] / shape[1])))
    assert np.abs(results["ember"][0] - results["torch"][0]).max() <= 4 * 0.08 * step


def test_muon_orthogonalizes_and_keeps_state_across_save_and_load():
    """The update's singular values land in Newton-Schulz's band around 1 (a semi-orthogonal matrix, whatever
    the gradient's scale); state_dict round trip continues the same trajectory."""
    rng = np.random.default_rng(4)
    g = rng.standard_normal((32, 16)) * np.logspace(-1, 1, 16)  # singular values over 3 decades
    p = ember.nn.Parameter(ember.zeros(32, 16, dtype=ember.float64))
    o = eoptim.Muon([p], lr=1.0, weight_decay=0.0, momentum=0.0)
    p.grad = ember.from_numpy(g)
    o.step()
    s = np.linalg.svd(-p.detach().numpy() / np.sqrt(2.0), compute_uv=False)
    assert s.min() > 0.5 and s.max() < 1.3, s
    a = ember.nn.Parameter(ember.from_numpy(rng.standard_normal((8, 5))))
    b = ember.nn.Parameter(a.detach().clone())
    oa, ob = eoptim.Muon([a], lr=0.05), eoptim.Muon([b], lr=0.05)
    grads = [ember.from_numpy(rng.standard_normal((8, 5))) for _ in range(4)]
    for g in grads[:2]:
        a.grad, b.grad = g, g.clone()
        oa.step()
        ob.step()
    ob2 = eoptim.Muon([b], lr=0.05)
    ob2.load_state_dict(copy.deepcopy(ob.state_dict()))
    for g in grads[2:]:
        a.grad, b.grad = g, g.clone()
        oa.step()
        ob2.step()
    assert ember.equal(a, b)


@pytest.mark.parametrize("kw", [dict(lr=-1.0), dict(momentum=-0.1), dict(weight_decay=-1.0), dict(adjust_lr_fn="x")])
def test_muon_bad_arguments_as_torch(kw):
    with pytest.raises(ValueError) as te:
        torch.optim.Muon([torch.zeros(2, 2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as ee:
        eoptim.Muon([ember.zeros(2, 2, requires_grad=True)], **kw)
    assert str(ee.value) == str(te.value)


def test_muon_unsupported_parameters_as_torch():
    for shape in ((3,), (2, 3, 4)):  # 2-D only, at construction
        with pytest.raises(ValueError) as te:
            torch.optim.Muon([torch.zeros(shape, requires_grad=True)])
        with pytest.raises(ValueError) as ee:
            eoptim.Muon([ember.zeros(shape, requires_grad=True)])
        assert str(ee.value) == str(te.value).replace("torch.Size", "ember.Size")
    for L, opt in ((torch, torch.optim), (ember, eoptim)):
        p = L.zeros(2, 2, dtype=L.complex64, requires_grad=True)
        p.grad = L.ones_like(p)
        with pytest.raises(RuntimeError, match="complex"):
            opt.Muon([p]).step()
        e = L.zeros(0, 3, requires_grad=True)  # empty: a no-op step
        e.grad = L.ones_like(e)
        opt.Muon([e]).step()
