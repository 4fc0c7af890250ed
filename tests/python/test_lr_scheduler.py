"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: lr sequences, momentum, state dicts."""
import math
import warnings

import pytest
import torch

import ember
import ember.optim as eoptim

STEPS = 100


def _opts(opt_name="SGD", n_groups=2, **kw):
    tparams = [torch.zeros(2, requires_grad=True) for _ in range(n_groups)]
    eparams = [ember.zeros(2, requires_grad=True) for _ in range(n_groups)]
    kw.setdefault("lr", 0.1)
    tgroups = [{"params": [p], "lr": kw["lr"] * (i + 1)} for i, p in enumerate(tparams)]
    egroups = [{"params": [p], "lr": kw["lr"] * (i + 1)} for i, p in enumerate(eparams)]
    return getattr(torch.optim, opt_name)(tgroups, **kw), getattr(eoptim, opt_name)(egroups, **kw)


def _make(mod, opt, name, kw):
    if name in ("SequentialLR", "ChainedScheduler"):
        s = mod.lr_scheduler
        parts = [s.ConstantLR(opt, factor=0.5, total_iters=4), s.ExponentialLR(opt, gamma=0.97),
                 s.CosineAnnealingLR(opt, T_max=17, eta_min=0.001)]
        if name == "SequentialLR":
            return s.SequentialLR(opt, parts, milestones=[10, 40])
        return s.ChainedScheduler(parts)
    return getattr(mod.lr_scheduler, name)(opt, **kw)


CONFIGS = [
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e + 0.01 * (e % 3)), "SGD", {}),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97 if e % 2 else 0.99), "SGD", {}),
    ("StepLR", dict(step_size=7, gamma=0.5), "SGD", {}),
    ("MultiStepLR", dict(milestones=[5, 20, 20, 60], gamma=0.3), "SGD", {}),
    ("ConstantLR", dict(factor=0.25, total_iters=13), "SGD", {}),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.9, total_iters=30), "SGD", {}),
    ("ExponentialLR", dict(gamma=0.96), "SGD", {}),
    ("PolynomialLR", dict(total_iters=60, power=2.0), "SGD", {}),
    ("CosineAnnealingLR", dict(T_max=23, eta_min=0.002), "SGD", {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=7, T_mult=2, eta_min=0.001), "SGD", {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=9), "SGD", {}),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=9, step_size_down=5), "SGD", {"momentum": 0.9}),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=6, mode="triangular2"), "SGD",
     {"momentum": 0.9}),
    ("CyclicLR", dict(base_lr=0.001, max_lr=0.01, step_size_up=8, mode="exp_range", gamma=0.99), "Adam", {}),
    ("CyclicLR", dict(base_lr=0.001, max_lr=0.01, step_size_up=8, cycle_momentum=False), "Adam", {}),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=STEPS + 1), "SGD", {"momentum": 0.9}),
    ("OneCycleLR", dict(max_lr=[0.5, 0.3], epochs=10, steps_per_epoch=11, anneal_strategy="linear",
                        three_phase=True), "Adam", {}),
    ("SequentialLR", {}, "SGD", {}),
    ("ChainedScheduler", {}, "SGD", {}),
]


def _momenta(opt):
    return [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c[0] + "-" + ",".join(sorted(c[1])))
def test_lr_sequence_matches_torch(config):
    name, kw, opt_name, opt_kw = config
    to, eo = _opts(opt_name, **opt_kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts, es = _make(torch.optim, to, name, kw), _make(eoptim, eo, name, kw)
        for step in range(STEPS):
            assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12, abs=1e-15), step
            assert [g["lr"] for g in eo.param_groups] == pytest.approx([g["lr"] for g in to.param_groups],
                                                                       rel=1e-12, abs=1e-15)
            assert _momenta(eo) == pytest.approx(_momenta(to), rel=1e-12)
            to.step()
            eo.step()
            ts.step()
            es.step()
    tsd, esd = ts.state_dict(), es.state_dict()
    assert set(esd.keys()) == set(tsd.keys())


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=3)), ("CosineAnnealingLR", dict(T_max=10)),
                                     ("MultiStepLR", dict(milestones=[2, 5])),
                                     ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2))])
def test_state_dict_from_torch_resumes(name, kw):
    to, eo = _opts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = _make(torch.optim, to, name, kw)
        for _ in range(7):
            to.step()
            ts.step()
        es = _make(eoptim, eo, name, kw)
        es.load_state_dict(ts.state_dict())
        for g_e, g_t in zip(eo.param_groups, to.param_groups):
            g_e["lr"] = g_t["lr"]
        for _ in range(10):
            to.step()
            eo.step()
            ts.step()
            es.step()
            assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)


def test_reduce_lr_on_plateau_matches_torch():
    to, eo = _opts()
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.89, 0.9, 0.91, 0.92, 0.93, 0.94, 0.5, 0.6, 0.6, 0.6, 0.6] * 4
    for kw in [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2, threshold_mode="abs",
                                      threshold=0.01, min_lr=[0.02, 0.05])]:
        to, eo = _opts()
        ts = torch.optim.lr_scheduler.ReduceLROnPlateau(to, **kw)
        es = eoptim.lr_scheduler.ReduceLROnPlateau(eo, **kw)
        for m in metrics:
            to.step()
            eo.step()
            ts.step(m)
            es.step(ember.tensor(m))
            assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
        assert set(es.state_dict()) == set(ts.state_dict())
    with pytest.raises(ValueError):
        eoptim.lr_scheduler.ReduceLROnPlateau(eo, factor=1.0)
    with pytest.raises(ValueError):
        eoptim.lr_scheduler.ReduceLROnPlateau(eo, mode="up")


def test_step_order_warning():
    _, eo = _opts()
    s = eoptim.lr_scheduler.StepLR(eo, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    _, eo = _opts()
    s = eoptim.lr_scheduler.StepLR(eo, step_size=2)
    eo.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()


def test_scheduler_errors_match_torch():
    to, eo = _opts()
    cases = [
        lambda m, o: m.optim.lr_scheduler.ConstantLR(o, factor=2.0),
        lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=0.0),
        lambda m, o: m.optim.lr_scheduler.LambdaLR(o, lr_lambda=[lambda e: 1.0]),
        lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
        lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1),
        lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, mode="bad"),
        lambda m, o: m.optim.lr_scheduler.SequentialLR(o, [], milestones=[]),
    ]
    for make in cases:
        with pytest.raises(ValueError):
            make(torch, to)
        with pytest.raises(ValueError):
            make(ember, eo)
    with pytest.raises(KeyError):
        torch.optim.lr_scheduler.StepLR(torch.optim.SGD([torch.zeros(1, requires_grad=True)]), 2, last_epoch=3)
    with pytest.raises(KeyError):
        eoptim.lr_scheduler.StepLR(eoptim.SGD([ember.zeros(1, requires_grad=True)]), 2, last_epoch=3)


def test_tensor_lr_filled_in_place():
    p = ember.zeros(2, requires_grad=True)
    lr = ember.tensor(0.1)
    o = eoptim.Adam([p], lr=lr)
    s = eoptim.lr_scheduler.ExponentialLR(o, gamma=0.5)
    o.step()
    s.step()
    assert o.param_groups[0]["lr"] is lr and math.isclose(float(lr), 0.05, rel_tol=1e-6)


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.01, 0.3], anneal_epochs=4, anneal_strategy="linear"),
                                dict(swa_lr=0.02, anneal_epochs=0)], ids=str)
def test_swalr_matches_torch(kw):
    import torch.optim.swa_utils as tswa
    import ember.optim.swa_utils as eswa
    to, eo = _opts()
    ts, es = tswa.SWALR(to, **kw), eswa.SWALR(eo, **kw)
    for _ in range(30):
        assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
        to.step()
        eo.step()
        ts.step()
        es.step()
    with pytest.raises(ValueError):
        eswa.SWALR(eo, swa_lr=0.1, anneal_strategy="exp")


@pytest.mark.parametrize("avg", ["swa", "ema", "ema_multi", "swa_multi"])
def test_averaged_model_matches_torch(avg):
    import numpy as np
    import torch.optim.swa_utils as tswa
    import ember.optim.swa_utils as eswa
    rng = np.random.default_rng(0)
    tm, em = torch.nn.Linear(3, 2), ember.nn.Linear(3, 2)
    kw = {"swa": ({}, {}), "ema": (dict(avg_fn=tswa.get_ema_avg_fn(0.9)), dict(avg_fn=eswa.get_ema_avg_fn(0.9))),
          "ema_multi": (dict(multi_avg_fn=tswa.get_ema_multi_avg_fn(0.8)),
                        dict(multi_avg_fn=eswa.get_ema_multi_avg_fn(0.8))),
          "swa_multi": (dict(multi_avg_fn=tswa.get_swa_multi_avg_fn()),
                        dict(multi_avg_fn=eswa.get_swa_multi_avg_fn()))}[avg]
    ta, ea = tswa.AveragedModel(tm, **kw[0]), eswa.AveragedModel(em, **kw[1])
    for _ in range(5):
        w, b = rng.standard_normal((2, 3)).astype("float32"), rng.standard_normal(2).astype("float32")
        with torch.no_grad():
            tm.weight.copy_(torch.from_numpy(w))
            tm.bias.copy_(torch.from_numpy(b))
        with ember.no_grad():
            em.weight.copy_(ember.tensor(w))
            em.bias.copy_(ember.tensor(b))
        ta.update_parameters(tm)
        ea.update_parameters(em)
    assert int(ea.n_averaged) == int(ta.n_averaged) == 5
    for tp, ep in zip(ta.module.parameters(), ea.module.parameters()):
        np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-7)
    x = rng.standard_normal((4, 3)).astype("float32")
    np.testing.assert_allclose(ea(ember.tensor(x)).detach().numpy(), ta(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
