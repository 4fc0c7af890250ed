"""kl_divergence(p, q) and its registry of closed forms (torch.distributions.kl).

``@register_kl(TypeP, TypeQ)`` registers ``fn(p, q)``; kl_divergence dispatches on the most
specific registered pair of base classes of (type(p), type(q)).
"""
import math
import warnings

import ember
import ember.nn.functional as F
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.beta import Beta
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical
from ember.distributions.cauchy import Cauchy
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.dirichlet import Dirichlet
from ember.distributions.distribution import Distribution
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.exponential import Exponential
from ember.distributions.gamma import Gamma
from ember.distributions.geometric import Geometric
from ember.distributions.gumbel import Gumbel
from ember.distributions.half_normal import HalfNormal
from ember.distributions.independent import Independent
from ember.distributions.laplace import Laplace
from ember.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal, _batch_lowrank_logdet, _batch_lowrank_mahalanobis)
from ember.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis, _solve_triangular
from ember.distributions.normal import Normal
from ember.distributions.one_hot_categorical import OneHotCategorical
from ember.distributions.pareto import Pareto
from ember.distributions.poisson import Poisson
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.uniform import Uniform
from ember.distributions.utils import _sum_rightmost, euler_constant as _euler_gamma

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}  # (type_p, type_q) -> fn(p, q)
_KL_MEMOIZE = {}  # (type(p), type(q)) -> the dispatched fn


def register_kl(type_p, type_q):
    """Decorator registering fn(p, q) as the KL divergence of a pair of Distribution subclasses."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    # The most specific match, judged first by p's class then by q's, and the other way round.
    mp, mq = type_p.__mro__, type_q.__mro__
    left = min(matches, key=lambda m: (mp.index(m[0]), mq.index(m[1])))
    right = min(matches, key=lambda m: (mq.index(m[1]), mp.index(m[0])))
    left_fun, right_fun = _KL_REGISTRY[left], _KL_REGISTRY[right]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl("
                      f"{left[0].__name__}, {right[1].__name__})", RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the distributions' batch shape.
    NotImplementedError when no closed form is registered for the pair."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


def _inf_like(t):
    return ember.full_like(t, float("inf"))


def _batch_trace_XXT(m):
    """trace(M M^T) = squared Frobenius norm, over the last two dims."""
    return m.pow(2).sum((-2, -1))


# ---- same-family pairs ----

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # p log(p / q) + (1 - p) log((1 - p) / (1 - q)), log p = -softplus(-logit), log(1 - p) = -softplus(logit).
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = ember.where(q.probs == 0, _inf_like(t1), t1)
    t1 = ember.where(p.probs == 0, ember.zeros_like(t1), t1)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = ember.where(q.probs == 1, _inf_like(t2), t2)
    t2 = ember.where(p.probs == 1, ember.zeros_like(t2), t2)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    log_beta_ratio = (ember.lgamma(a2) + ember.lgamma(b2) + ember.lgamma(s1)
                      - ember.lgamma(a1) - ember.lgamma(b1) - ember.lgamma(s2))
    return (log_beta_ratio + (a1 - a2) * ember.digamma(a1) + (b1 - b2) * ember.digamma(b1)
            + (s2 - s1) * ember.digamma(s1))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # Only equal counts are finite; a larger q count is not implemented (as in torch).
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return ember.where(p.total_count > q.total_count, _inf_like(kl), kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = ember.where((q.probs == 0).expand_as(t), _inf_like(t), t)
    t = ember.where((p.probs == 0).expand_as(t), ember.zeros_like(t), t)
    return t.sum(-1)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return ember.log(((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)) / (4 * p.scale * q.scale))


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ember.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ember.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    cp, cq = p.concentration, q.concentration
    sp, sq = cp.sum(-1), cq.sum(-1)
    t1 = ember.lgamma(sp) - ember.lgamma(sq)
    t2 = (ember.lgamma(cp) - ember.lgamma(cq)).sum(-1)
    t3 = (cp - cq) * (ember.digamma(cp) - ember.digamma(sp).unsqueeze(-1))
    return t1 - t2 + t3.sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # Bregman divergence of the log normalizer F: F(eta_q) - F(eta_p) - <eta_q - eta_p, grad F(eta_p)>.
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_nparams = [t.detach().requires_grad_() for t in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = ember.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * ember.log(p.rate / q.rate)
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # E_p[exp(-(x - mu_q) / b_q)] = exp((mu_q - mu_p) / b_q) Gamma(1 + b_p / b_q).
    r = p.scale / q.scale
    t1 = -r.log() + (p.loc - q.loc) / q.scale
    t2 = r * _euler_gamma
    t3 = ember.exp((q.loc - p.loc) / q.scale + ember.lgamma(1 + r))
    return t1 + t2 + t3 - (1 + _euler_gamma)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - ember.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    r = p.scale / q.scale
    d = (p.loc - q.loc).abs()
    return -r.log() + d / q.scale + r * ember.exp(-d / p.scale) - 1


# Gaussian pairs: KL = 0.5 (log det Sq - log det Sp + tr(Sq^-1 Sp) + |mu_q - mu_p|^2_Sq - n). Sp is
# written as S S^T (S = p's scale_tril, or [W, sqrt(D)] for low rank), so tr(Sq^-1 Sp) = |Sq^-1/2 S|_F^2.

def _gaussian_logdet(d):
    if isinstance(d, MultivariateNormal):
        return 2 * d._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril)


def _gaussian_mahalanobis(d, x):
    if isinstance(d, MultivariateNormal):
        return _batch_mahalanobis(d._unbroadcasted_scale_tril, x)
    return _batch_lowrank_mahalanobis(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, x,
                                      d._capacitance_tril)


def _gaussian_factors(d):
    """Matrices S_i with covariance sum_i S_i S_i^T."""
    if isinstance(d, MultivariateNormal):
        return [d._unbroadcasted_scale_tril]
    return [d._unbroadcasted_cov_factor, ember.diag_embed(d._unbroadcasted_cov_diag.sqrt())]


def _trace_inv_q_times(q, S):
    """trace(S^T Sq^-1 S) for q's covariance Sq."""
    if isinstance(q, MultivariateNormal):
        L = q._unbroadcasted_scale_tril
        batch = ember.broadcast_shapes(L.shape[:-2], S.shape[:-2])
        return _batch_trace_XXT(_solve_triangular(L.expand(batch + L.shape[-2:]), S.expand(batch + S.shape[-2:])))
    # Woodbury: Sq^-1 = D^-1 - A^T A with A = C^-1 W^T D^-1.
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    C = q._capacitance_tril
    A = _solve_triangular(C, W.mT / D.unsqueeze(-2), upper=False)
    return _batch_trace_XXT(S * D.rsqrt().unsqueeze(-1)) - _batch_trace_XXT(ember.matmul(A, S))


def _kl_gaussian_gaussian(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes cannot be computed")
    n = p.event_shape[0]
    trace = sum(_trace_inv_q_times(q, S) for S in _gaussian_factors(p))
    return 0.5 * (_gaussian_logdet(q) - _gaussian_logdet(p) + trace + _gaussian_mahalanobis(q, q.loc - p.loc) - n)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    return _kl_gaussian_gaussian(p, q, "Multivariate Normals")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    return _kl_gaussian_gaussian(p, q, "Low Rank Multivariate Normals")


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    return _kl_gaussian_gaussian(p, q, "Multivariate Normals")


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    return _kl_gaussian_gaussian(p, q, "Multivariate Normals")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    r_scale = p.scale / q.scale
    r_alpha = q.alpha / p.alpha
    result = q.alpha * r_scale.log() - r_alpha.log() + r_alpha - 1
    return ember.where(p.scale < q.scale, _inf_like(result), result)  # p's support reaches below q's


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return ember.where((q.low > p.low) | (q.high < p.high), _inf_like(result), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# ---- cross-family pairs: -H(p) - E_p[log q(x)] from p's moments, or infinite where p's support
# reaches outside q's ----

def _infinite(p, q):
    return ember.full(p.batch_shape, float("inf"), dtype=_dtype_of(p))


def _dtype_of(d):
    for name in ("loc", "scale", "rate", "concentration", "probs", "low", "alpha"):
        v = getattr(d, name, None)
        if isinstance(v, ember.Tensor):
            return v.dtype
    return ember.get_default_dtype()


for _p, _qs in ((Beta, (Pareto,)), (Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Pareto, (Beta, ContinuousBernoulli, Uniform)), (Poisson, (Bernoulli, Binomial)),
                (ContinuousBernoulli, (Pareto,))):
    for _q in _qs:
        register_kl(_p, _q)(_infinite)


def _gamma_log_density_mean(q, e_log_x, e_x):
    """E[log q(x)] for q Gamma, from E[log x] and E[x] under p."""
    a, b = q.concentration, q.rate
    return a * b.log() - ember.lgamma(a) + (a - 1) * e_log_x - b * e_x


def _normal_log_density_mean(q, e_x, e_x2):
    """E[log q(x)] for q Normal, from E[x] and E[x^2] under p."""
    var = q.scale.pow(2)
    return -0.5 * ember.log(2 * math.pi * var) - (e_x2 - 2 * q.loc * e_x + q.loc.pow(2)) / (2 * var)


def _gumbel_log_density_mean(q, e_x, e_exp_neg):
    """E[log q(x)] for q Gumbel, from E[x] and E[exp(-(x - loc) / scale)] under p."""
    return -q.scale.log() - (e_x - q.loc) / q.scale - e_exp_neg


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()


def _beta_e_log_x(p):
    return ember.digamma(p.concentration1) - ember.digamma(p.concentration1 + p.concentration0)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() - _gamma_log_density_mean(q, _beta_e_log_x(p), p.mean)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return ember.where((q.low > 0) | (q.high < 1), _inf_like(result), result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - ember.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return ember.where((q.low > 0) | (q.high < 1), _inf_like(result), result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    return -p.entropy() - _gamma_log_density_mean(q, -_euler_gamma - p.rate.log(), p.rate.reciprocal())


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E_p[exp(-(x - m) / s)] = exp(m / s) * rate / (rate + 1 / s).
    e_exp = ember.exp(q.loc / q.scale) * p.rate / (p.rate + q.scale.reciprocal())
    return -p.entropy() - _gumbel_log_density_mean(q, p.rate.reciprocal(), e_exp)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, p.rate.reciprocal(), 2 * p.rate.pow(-2))


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    # E_p[exp(-(x - m) / s)] = exp(m / s) (b / (b + 1 / s))^a.
    a, b = p.concentration, p.rate
    e_exp = ember.exp(q.loc / q.scale + a * (b.log() - (b + q.scale.reciprocal()).log()))
    return -p.entropy() - _gumbel_log_density_mean(q, p.mean, e_exp)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    a, b = p.concentration, p.rate
    return -p.entropy() - _normal_log_density_mean(q, a / b, a * (a + 1) / b.pow(2))


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, p.loc, 2 * p.scale.pow(2) + p.loc.pow(2))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    e_exp = ember.exp(-(p.loc - q.loc) / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2)))
    return -p.entropy() - _gumbel_log_density_mean(q, p.loc, e_exp)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(mu, s^2): s sqrt(2 / pi) exp(-d^2 / (2 s^2)) + d erf(d / (s sqrt 2)), d = mu - m.
    d = p.loc - q.loc
    s = p.scale
    e_abs = s * math.sqrt(2 / math.pi) * ember.exp(-d.pow(2) / (2 * s.pow(2))) + d * ember.erf(d / (s * math.sqrt(2)))
    return -p.entropy() + ember.log(2 * q.scale) + e_abs / q.scale


def _pareto_moments(p, order):
    """alpha with the entries where the order-th moment is infinite (alpha <= order) replaced by a
    harmless value, and that mask: the formulas stay finite, so the gradients of the finite
    entries carry no 0 * inf."""
    finite = p.alpha > order
    return ember.where(finite, p.alpha, ember.full_like(p.alpha, order + 1.0)), finite


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    a, finite = _pareto_moments(p, 1)
    e_x = a * p.scale / (a - 1)
    result = -p.entropy() - q.rate.log() + q.rate * e_x
    return ember.where(finite, result, _inf_like(result))


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    a, finite = _pareto_moments(p, 1)
    e_log_x = p.scale.log() + p.alpha.reciprocal()
    result = -p.entropy() - _gamma_log_density_mean(q, e_log_x, a * p.scale / (a - 1))
    return ember.where(finite, result, _inf_like(result))


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    a, finite = _pareto_moments(p, 2)
    s = p.scale
    result = -p.entropy() - _normal_log_density_mean(q, a * s / (a - 1), a * s.pow(2) / (a - 2))
    return ember.where(finite, result, _inf_like(result))


def _uniform_outside(p, lower, upper=None):
    bad = p.low < lower
    if upper is not None:
        bad = bad | (p.high > upper)
    return bad


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    # E[log x] and E[log(1 - x)] over [low, high] in closed form.
    lo, hi = p.low, p.high
    w = hi - lo
    e_log_x = (ember.xlogy(hi, hi) - ember.xlogy(lo, lo)) / w - 1
    e_log_1mx = ((1 - lo) * ember.log1p(-lo) - (1 - hi) * ember.log1p(-hi)) / w - 1
    a, b = q.concentration1, q.concentration0
    log_beta = ember.lgamma(a) + ember.lgamma(b) - ember.lgamma(a + b)
    result = -p.entropy() + log_beta - (a - 1) * e_log_x - (b - 1) * e_log_1mx
    return ember.where(_uniform_outside(p, 0, 1), _inf_like(result), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()
    return ember.where(_uniform_outside(p, 0, 1), _inf_like(result), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return ember.where(p.low < 0, _inf_like(result), result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    lo, hi = p.low, p.high
    e_log_x = (ember.xlogy(hi, hi) - ember.xlogy(lo, lo)) / (hi - lo) - 1
    result = -p.entropy() - _gamma_log_density_mean(q, e_log_x, p.mean)
    return ember.where(lo < 0, _inf_like(result), result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    # E[exp(-(x - m) / s)] = s (exp(-(lo - m) / s) - exp(-(hi - m) / s)) / (hi - lo).
    s = q.scale
    e_exp = s * (ember.exp(-(p.low - q.loc) / s) - ember.exp(-(p.high - q.loc) / s)) / (p.high - p.low)
    return -p.entropy() - _gumbel_log_density_mean(q, p.mean, e_exp)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    lo, hi = p.low, p.high
    e_log_x = (ember.xlogy(hi, hi) - ember.xlogy(lo, lo)) / (hi - lo) - 1
    # log q(x) = log alpha + alpha log scale - (alpha + 1) log x on x >= scale.
    result = -p.entropy() - (q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * e_log_x)
    return ember.where(lo < q.scale, _inf_like(result), result)
