"""Optimizers and checkpoints with nn.Modules: torch's weights loaded through files, the paper's GAN step."""
import io

import numpy as np
import torch

import ember
import ember.optim as eoptim


class _MLP:
    """The same two-layer MLP in either library (mod is torch or ember)."""

    def __init__(self, mod, sizes):
        self.mod = mod
        self.net = mod.nn.Sequential(mod.nn.Linear(sizes[0], sizes[1]), mod.nn.Linear(sizes[1], sizes[2]))

    def __call__(self, x):
        h = self.mod.tanh(self.net[0](x))
        return self.net[1](h)


def _bce_with_logits(mod, logits, target):
    p = mod.sigmoid(logits)
    return -(target * mod.log(p) + (1 - target) * mod.log(1 - p)).mean()


def _copy_via_files(tmodel, emodel):
    buf = io.BytesIO()
    torch.save(tmodel.net.state_dict(), buf)
    buf.seek(0)
    emodel.net.load_state_dict(ember.load(buf))


def test_gan_step_listing2_matches_torch():
    """Paper Listing 2: two optimizers, detach, two backward calls into the discriminator."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    models = {}
    for name, sizes in [("D", (4, 8, 1)), ("G", (3, 8, 4))]:
        tm = _MLP(torch, sizes)
        em = _MLP(ember, sizes)
        _copy_via_files(tm, em)
        models[name] = (tm, em)
    (tD, eD), (tG, eG) = models["D"], models["G"]
    topt = (torch.optim.Adam(tD.net.parameters(), lr=1e-2), torch.optim.Adam(tG.net.parameters(), lr=1e-2))
    eopt = (eoptim.Adam(eD.net.parameters(), lr=1e-2), eoptim.Adam(eG.net.parameters(), lr=1e-2))

    def step(mod, D, G, optD, optG, real, noise):
        real_label = mod.ones(real.shape[0], 1)
        fake_label = mod.zeros(real.shape[0], 1)
        optD.zero_grad()
        errD_real = _bce_with_logits(mod, D(real), real_label)
        errD_real.backward()
        fake = G(noise)
        errD_fake = _bce_with_logits(mod, D(fake.detach()), fake_label)
        errD_fake.backward()
        optD.step()
        optG.zero_grad()
        errG = _bce_with_logits(mod, D(fake), real_label)
        errG.backward()
        optG.step()
        return [float(errD_real.detach()), float(errD_fake.detach()), float(errG.detach())]

    for _ in range(10):
        real = rng.standard_normal((6, 4)).astype(np.float32)
        noise = rng.standard_normal((6, 3)).astype(np.float32)
        tl = step(torch, tD, tG, *topt, torch.from_numpy(real), torch.from_numpy(noise))
        el = step(ember, eD, eG, *eopt, ember.tensor(real), ember.tensor(noise))
        np.testing.assert_allclose(el, tl, rtol=1e-4, atol=1e-5)
    for tp, ep in zip(tG.net.parameters(), eG.net.parameters()):
        np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_model_and_optimizer_checkpoint_round_trip(tmp_path):
    """A training checkpoint (model + optimizer + scheduler) saved by ember resumes in torch, and back."""
    rng = np.random.default_rng(1)
    tm, em = _MLP(torch, (5, 7, 2)), _MLP(ember, (5, 7, 2))
    _copy_via_files(tm, em)
    eo = eoptim.SGD(em.net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    es = eoptim.lr_scheduler.StepLR(eo, step_size=2, gamma=0.5)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    for _ in range(3):
        eo.zero_grad()
        (em(ember.tensor(x)) ** 2).mean().backward()
        eo.step()
        es.step()
    ember.save({"model": em.net.state_dict(), "opt": eo.state_dict(), "sched": es.state_dict()}, tmp_path / "c.pt")
    ck = torch.load(tmp_path / "c.pt")
    tm.net.load_state_dict(ck["model"])
    to = torch.optim.SGD(tm.net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    to.load_state_dict(ck["opt"])
    ts = torch.optim.lr_scheduler.StepLR(to, step_size=2, gamma=0.5)
    ts.load_state_dict(ck["sched"])
    assert ts.get_last_lr() == es.get_last_lr()
    for _ in range(3):
        for mod, m, o, s in ((torch, tm, to, ts), (ember, em, eo, es)):
            o.zero_grad()
            (m(mod.tensor(x)) ** 2).mean().backward()
            o.step()
            s.step()
    for tp, ep in zip(tm.net.parameters(), em.net.parameters()):
        np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)
    # torch's checkpoint back into ember
    torch.save({"model": tm.net.state_dict(), "opt": to.state_dict()}, tmp_path / "t.pt")
    ck = ember.load(tmp_path / "t.pt")
    em.net.load_state_dict(ck["model"])
    eo.load_state_dict(ck["opt"])
    assert isinstance(ck["model"]["0.weight"], ember.Tensor)
    bufs = [eo.state[p]["momentum_buffer"] for p in em.net.parameters()]
    tbufs = [to.state[p]["momentum_buffer"] for p in tm.net.parameters()]
    for b, tb in zip(bufs, tbufs):
        np.testing.assert_array_equal(b.numpy(), tb.numpy())


def test_parameters_pickle_as_torch_parameters(tmp_path):
    lin = ember.nn.Linear(3, 2)
    ember.save(list(lin.parameters()), tmp_path / "p.pt")
    ps = torch.load(tmp_path / "p.pt")
    assert all(isinstance(p, torch.nn.Parameter) and p.requires_grad for p in ps)
    torch.save(list(torch.nn.Linear(3, 2).parameters()), tmp_path / "tp.pt")
    eps = ember.load(tmp_path / "tp.pt")
    assert all(isinstance(p, ember.nn.Parameter) and p.requires_grad for p in eps)
