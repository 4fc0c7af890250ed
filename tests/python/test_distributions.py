"""ember.distributions against torch.distributions 2.13: values (log_prob, entropy, moments, cdf,
icdf) in float32 and float64, shapes, gradients, sample statistics, argument validation,
transforms, constraints and kl_divergence.

Each distribution is built from the same parameters in both libraries (CASES); random draws are
compared by their statistics only (the generators differ).
"""
import math

import numpy as np
import pytest

import ember
import ember.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions

RTOL = {"float32": 2e-5, "float64": 1e-9}
ATOL = {"float32": 2e-5, "float64": 1e-9}


# ---------------------------------------------------------------------------------------------
# helpers

_LEAVES = {"ember": [], "torch": []}  # the parameter leaves requiring grad that tens() made


def tens(lib, x, dtype, requires_grad=False):
    """x (numpy array or Python number) as a tensor of lib; numbers stay numbers."""
    if not isinstance(x, np.ndarray):
        return x
    t = lib.tensor(x.tolist(), dtype=getattr(lib, dtype))
    if requires_grad and x.dtype.kind == "f":
        t.requires_grad_(True)
        _LEAVES[lib.__name__].append(t)
    return t


def to_np(t):
    if isinstance(t, (int, float)):
        return np.array(t)
    return np.array(t.detach().tolist(), dtype=np.float64)


def assert_close(e, t, dtype, rtol=None, atol=None, what=""):
    ev, tv = to_np(e), to_np(t)
    assert ev.shape == tv.shape, f"{what}: shape {ev.shape} vs {tv.shape}"
    np.testing.assert_allclose(ev, tv, rtol=rtol or RTOL[dtype], atol=atol or ATOL[dtype], equal_nan=True,
                               err_msg=what)


def rng(seed=0):
    return np.random.default_rng(seed)


def pos(r, shape, lo=0.5, hi=3.0):
    return r.uniform(lo, hi, shape)


def simplex(r, shape):
    p = r.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def lower_chol(r, b, n):
    m = r.normal(size=(b, n, n)) * 0.3
    m = np.tril(m, -1) + np.eye(n) * r.uniform(0.8, 1.5, (b, 1, n))
    return m


def pd(r, b, n):
    lo = lower_chol(r, b, n)
    return lo @ np.swapaxes(lo, -1, -2)


# ---------------------------------------------------------------------------------------------
# the cases: (id, params(rng) -> dict of numpy arrays/numbers, build(lib, dtype, params, grad) -> dist)

def simple(name, **fixed):
    """A distribution built from keyword parameters of the same names."""
    def build(lib, dtype, p, grad=False):
        mod = D if lib is ember else TD
        kw = {k: tens(lib, v, dtype, grad) for k, v in p.items()}
        kw.update(fixed)
        return getattr(mod, name)(**kw)
    return build


def build_independent(lib, dtype, p, grad=False):
    mod = D if lib is ember else TD
    return mod.Independent(mod.Normal(tens(lib, p["loc"], dtype, grad), tens(lib, p["scale"], dtype, grad)), 1)


def build_mixture(lib, dtype, p, grad=False):
    mod = D if lib is ember else TD
    mix = mod.Categorical(logits=tens(lib, p["logits"], dtype, grad))
    comp = mod.Normal(tens(lib, p["loc"], dtype, grad), tens(lib, p["scale"], dtype, grad))
    return mod.MixtureSameFamily(mix, comp)


def build_mixture_mvn(lib, dtype, p, grad=False):
    mod = D if lib is ember else TD
    mix = mod.Categorical(probs=tens(lib, p["probs"], dtype, grad))
    comp = mod.Independent(mod.Normal(tens(lib, p["loc"], dtype, grad), tens(lib, p["scale"], dtype, grad)), 1)
    return mod.MixtureSameFamily(mix, comp)


def build_transformed(lib, dtype, p, grad=False):
    mod = D if lib is ember else TD
    base = mod.Normal(tens(lib, p["loc"], dtype, grad), tens(lib, p["scale"], dtype, grad))
    return mod.TransformedDistribution(base, [mod.transforms.AffineTransform(0.5, 2.0),
                                              mod.transforms.SigmoidTransform()])


def build_relaxed(name):
    def build(lib, dtype, p, grad=False):
        mod = D if lib is ember else TD
        return getattr(mod, name)(tens(lib, p["temperature"], dtype), probs=tens(lib, p["probs"], dtype, grad))
    return build


B = 3  # batch size of the cases

CASES = [
    ("Normal", lambda r: dict(loc=r.normal(size=B), scale=pos(r, B)), simple("Normal")),
    ("Normal-scalar", lambda r: dict(loc=0.3, scale=1.7), simple("Normal")),
    ("MultivariateNormal-tril", lambda r: dict(loc=r.normal(size=(B, 3)), scale_tril=lower_chol(r, B, 3)),
     simple("MultivariateNormal")),
    ("MultivariateNormal-cov", lambda r: dict(loc=r.normal(size=(B, 3)), covariance_matrix=pd(r, B, 3)),
     simple("MultivariateNormal")),
    ("MultivariateNormal-prec", lambda r: dict(loc=r.normal(size=(B, 3)), precision_matrix=pd(r, B, 3)),
     simple("MultivariateNormal")),
    ("LowRankMultivariateNormal", lambda r: dict(loc=r.normal(size=(B, 4)), cov_factor=r.normal(size=(B, 4, 2)),
                                                 cov_diag=pos(r, (B, 4))), simple("LowRankMultivariateNormal")),
    ("Bernoulli-probs", lambda r: dict(probs=r.uniform(0.1, 0.9, B)), simple("Bernoulli")),
    ("Bernoulli-logits", lambda r: dict(logits=r.normal(size=B)), simple("Bernoulli")),
    ("Categorical-probs", lambda r: dict(probs=simplex(r, (B, 4))), simple("Categorical")),
    ("Categorical-logits", lambda r: dict(logits=r.normal(size=(B, 4))), simple("Categorical")),
    ("OneHotCategorical", lambda r: dict(probs=simplex(r, (B, 4))), simple("OneHotCategorical")),
    ("Binomial", lambda r: dict(total_count=np.array([5.0, 8.0, 12.0]), probs=r.uniform(0.1, 0.9, B)),
     simple("Binomial")),
    ("Binomial-logits", lambda r: dict(total_count=np.full(B, 6.0), logits=r.normal(size=B)), simple("Binomial")),
    ("Multinomial", lambda r: dict(probs=simplex(r, (B, 4))), simple("Multinomial", total_count=6)),
    ("Poisson", lambda r: dict(rate=pos(r, B, 0.5, 6.0)), simple("Poisson")),
    ("Beta", lambda r: dict(concentration1=pos(r, B), concentration0=pos(r, B)), simple("Beta")),
    ("Gamma", lambda r: dict(concentration=pos(r, B), rate=pos(r, B)), simple("Gamma")),
    ("Dirichlet", lambda r: dict(concentration=pos(r, (B, 4))), simple("Dirichlet")),
    ("Exponential", lambda r: dict(rate=pos(r, B)), simple("Exponential")),
    ("Laplace", lambda r: dict(loc=r.normal(size=B), scale=pos(r, B)), simple("Laplace")),
    ("Cauchy", lambda r: dict(loc=r.normal(size=B), scale=pos(r, B)), simple("Cauchy")),
    ("Gumbel", lambda r: dict(loc=r.normal(size=B), scale=pos(r, B)), simple("Gumbel")),
    ("LogNormal", lambda r: dict(loc=r.normal(size=B) * 0.3, scale=pos(r, B, 0.3, 0.8)), simple("LogNormal")),
    ("StudentT", lambda r: dict(df=np.array([1.5, 3.0, 7.0]), loc=r.normal(size=B), scale=pos(r, B)),
     simple("StudentT")),
    ("Uniform", lambda r: dict(low=r.normal(size=B), high=r.normal(size=B) + 3.0), simple("Uniform")),
    ("Geometric", lambda r: dict(probs=r.uniform(0.2, 0.8, B)), simple("Geometric")),
    ("NegativeBinomial", lambda r: dict(total_count=pos(r, B, 1.0, 6.0), probs=r.uniform(0.1, 0.8, B)),
     simple("NegativeBinomial")),
    ("Chi2", lambda r: dict(df=pos(r, B, 1.0, 6.0)), simple("Chi2")),
    ("HalfNormal", lambda r: dict(scale=pos(r, B)), simple("HalfNormal")),
    ("HalfCauchy", lambda r: dict(scale=pos(r, B)), simple("HalfCauchy")),
    ("FisherSnedecor", lambda r: dict(df1=pos(r, B, 3.0, 9.0), df2=pos(r, B, 5.0, 12.0)), simple("FisherSnedecor")),
    ("Pareto", lambda r: dict(scale=pos(r, B), alpha=pos(r, B, 2.5, 5.0)), simple("Pareto")),
    ("Weibull", lambda r: dict(scale=pos(r, B), concentration=pos(r, B, 0.7, 3.0)), simple("Weibull")),
    ("VonMises", lambda r: dict(loc=r.normal(size=B), concentration=np.array([0.5, 2.0, 6.0])), simple("VonMises")),
    ("ContinuousBernoulli", lambda r: dict(probs=np.array([0.2, 0.4999, 0.8])), simple("ContinuousBernoulli")),
    ("RelaxedBernoulli", lambda r: dict(temperature=np.array(0.7), probs=r.uniform(0.2, 0.8, B)),
     build_relaxed("RelaxedBernoulli")),
    ("RelaxedOneHotCategorical", lambda r: dict(temperature=np.array(0.7), probs=simplex(r, (B, 4))),
     build_relaxed("RelaxedOneHotCategorical")),
    ("LogisticNormal", lambda r: dict(loc=r.normal(size=(B, 3)) * 0.5, scale=pos(r, (B, 3), 0.3, 1.0)),
     simple("LogisticNormal")),
    ("Independent", lambda r: dict(loc=r.normal(size=(B, 2)), scale=pos(r, (B, 2))), build_independent),
    ("MixtureSameFamily", lambda r: dict(logits=r.normal(size=(B, 3)), loc=r.normal(size=(B, 3)),
                                         scale=pos(r, (B, 3))), build_mixture),
    ("MixtureSameFamily-event", lambda r: dict(probs=simplex(r, (B, 3)), loc=r.normal(size=(B, 3, 2)),
                                               scale=pos(r, (B, 3, 2))), build_mixture_mvn),
    ("TransformedDistribution", lambda r: dict(loc=r.normal(size=B), scale=pos(r, B)), build_transformed),
]
CASE_IDS = [c[0] for c in CASES]
CASE = {c[0]: c for c in CASES}
# Cases with tensor parameters to differentiate.
GRAD_IDS = [c[0] for c in CASES if any(isinstance(v, np.ndarray) and v.ndim for v in c[1](rng()).values())]
# torch computes Multinomial's entropy with lgamma of a default-dtype (float32) count.
LOOSE = {("Multinomial", "entropy"): 1e-6, ("Multinomial", "perplexity"): 1e-6}


def pair(case_id, dtype, grad=False, seed=0):
    """(ember dist, torch dist, params) for a case."""
    _, params_fn, build = CASE[case_id]
    p = params_fn(rng(seed))
    _LEAVES["ember"].clear()
    _LEAVES["torch"].clear()
    return build(ember, dtype, p, grad), build(torch, dtype, p, grad), p


def values_for(td, n=4, seed=1):
    """Points of the support: torch samples (then the same numbers in both libraries)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        v = td.sample((n,))
    return v


def both_values(v, dtype):
    e = ember.tensor(v.tolist(), dtype=getattr(ember, str(v.dtype).split(".")[-1]))
    return e, v


def call(fn):
    """(result, None) or (None, exception type)."""
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - the class is compared with torch's
        return None, type(exc)


# ---------------------------------------------------------------------------------------------
# values

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case_id", CASE_IDS)
def test_values_match_torch(case_id, dtype):
    ed, td, _ = pair(case_id, dtype)
    assert tuple(ed.batch_shape) == tuple(td.batch_shape)
    assert tuple(ed.event_shape) == tuple(td.event_shape)
    assert ed.has_rsample == td.has_rsample
    assert ed.has_enumerate_support == td.has_enumerate_support
    tv = values_for(td)
    ev, tv = both_values(tv, dtype)

    def tol(t_res):  # scalar-parameter cases compute in the default dtype whatever `dtype` says
        wide = t_res.dtype == torch.float64
        return (1e-8, 1e-8) if wide else (1e-4, 1e-4)
    checks = {
        "log_prob": (lambda d, v: d.log_prob(v)),
        "entropy": (lambda d, v: d.entropy()),
        "mean": (lambda d, v: d.mean),
        "mode": (lambda d, v: d.mode),
        "variance": (lambda d, v: d.variance),
        "stddev": (lambda d, v: d.stddev),
        "cdf": (lambda d, v: d.cdf(v)),
        "perplexity": (lambda d, v: d.perplexity()),
    }
    for what, fn in checks.items():
        t_res, t_exc = call(lambda: fn(td, tv))
        e_res, e_exc = call(lambda: fn(ed, ev))
        if t_exc is not None:
            assert e_exc is not None and issubclass(e_exc, t_exc), f"{what}: torch raised {t_exc}, ember {e_exc}"
            continue
        assert e_exc is None, f"{what}: ember raised {e_exc}"
        rtol, atol = tol(t_res)
        rtol = max(rtol, LOOSE.get((case_id, what), 0))
        assert_close(e_res, t_res, dtype, rtol, atol, what)
    # icdf on probabilities inside (0, 1)
    u = torch.rand((4,) + tuple(td.batch_shape), generator=torch.Generator().manual_seed(3)).to(
        getattr(torch, dtype)) * 0.9 + 0.05
    t_res, t_exc = call(lambda: td.icdf(u))
    e_res, e_exc = call(lambda: ed.icdf(ember.tensor(u.tolist(), dtype=getattr(ember, dtype))))
    if t_exc is not None:
        assert e_exc is not None and issubclass(e_exc, t_exc), f"icdf: torch raised {t_exc}, ember {e_exc}"
    else:
        assert e_exc is None, f"icdf: ember raised {e_exc}"
        rtol, atol = tol(t_res)
        assert_close(e_res, t_res, dtype, max(rtol, 1e-6), atol, "icdf")
    if td.has_enumerate_support:
        for expand in (True, False):
            t_res, t_exc = call(lambda: td.enumerate_support(expand))
            e_res, e_exc = call(lambda: ed.enumerate_support(expand))
            if t_exc is not None:
                assert e_exc is not None and issubclass(e_exc, t_exc)
            else:
                assert_close(e_res, t_res, dtype, what="enumerate_support")


@pytest.mark.parametrize("case_id", GRAD_IDS)
def test_gradients_match_torch(case_id):
    dtype = "float64"
    ed, td, p = pair(case_id, dtype, grad=True)
    tv = values_for(td)
    ev, tv = both_values(tv, dtype)

    def objective(d, v, lib):
        terms = [d.log_prob(v).sum()]
        for fn in (lambda: d.entropy(), lambda: d.mean, lambda: d.variance):
            r, exc = call(fn)
            if exc is None and r.requires_grad:
                terms.append(lib.where(lib.isfinite(r), r, lib.zeros_like(r)).sum())
        return sum(terms)

    e_obj = objective(ed, ev, ember)
    t_obj = objective(td, tv, torch)
    assert_close(e_obj, t_obj, dtype, 1e-7, 1e-8, "objective")  # torch: Multinomial entropy in float32
    e_leaves, t_leaves = list(_LEAVES["ember"]), list(_LEAVES["torch"])
    assert len(e_leaves) == len(t_leaves) > 0
    e_grads = ember.autograd.grad(e_obj, e_leaves, allow_unused=True)
    t_grads = torch.autograd.grad(t_obj, t_leaves, allow_unused=True)
    for eg, tg in zip(e_grads, t_grads):
        if tg is None:
            assert eg is None or float(eg.abs().sum()) == 0
            continue
        assert_close(eg, tg, dtype, 1e-7, 1e-8, "grad")
