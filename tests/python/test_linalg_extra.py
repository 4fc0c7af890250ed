"""linalg.matrix_exp, linalg.householder_product (orgqr) and geqrf against torch 2.13.

The op table (op_db_linalg.py) covers values per dtype, gradients and gradgradcheck on a few samples;
this file checks accuracy around the Padé degree thresholds, identities, aliases, errors and the
geqrf -> householder_product round trip.
"""
import math

import numpy as np
import pytest

import ember
from conftest import assert_same, same_error, torch

EXPM_THETAS = {"float64": [1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068,
                           5.371920351148152],
               "float32": [4.258730034897931e-1, 1.880152698533769, 3.925724846433284]}


def E(t, grad=False):
    e = ember.from_dlpack(t.detach().contiguous()).clone()
    return e.requires_grad_() if grad else e


def T(e):
    return torch.from_dlpack(e.detach().contiguous()).clone()


def rel_err(e, ref):
    """max |e - ref| / max |ref| (ref in float64/complex128)."""
    d = (T(e).to(ref.dtype) - ref).abs().max()
    return float(d / ref.abs().max())


def with_norm(shape, dtype, norm, seed):
    """A random matrix (batch) whose 1-norm is exactly `norm`."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(shape, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        a = torch.complex(a, torch.randn(shape, generator=g, dtype=torch.float64))
    a = a / a.abs().sum(-2).amax(-1)[..., None, None] * norm
    return a.to(dtype)


# ---- matrix_exp ----

def exact_expm(a):
    """exp(a) to 40 digits (mpmath, which torch's sympy dependency brings), as complex128/float64."""
    mp = pytest.importorskip("mpmath")
    with mp.workdps(40):
        r = mp.expm(mp.matrix(a.tolist()))
        rows = [[complex(r[i, j]) for j in range(r.cols)] for i in range(r.rows)]
    out = torch.tensor(rows, dtype=torch.complex128)
    return out if a.is_complex() else out.real.contiguous()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_matrix_exp_accuracy_around_each_threshold(dtype):
    # Just below and above every degree's threshold and far beyond (several squarings): the error
    # against the exact exponential stays at the unit roundoff times the norm's growth, and within
    # a small factor of torch's own error.
    tdt = getattr(torch, dtype)
    thetas = EXPM_THETAS["float64" if dtype in ("float64", "complex128") else "float32"]
    norms = [f * t for t in thetas for f in (0.99, 1.01)] + [20.0, 60.0]
    eps = 2.0 ** -52 if dtype in ("float64", "complex128") else 2.0 ** -23
    for i, norm in enumerate(norms):
        a = with_norm((5, 5), tdt, norm, i)
        ref = exact_expm(a.to(torch.complex128 if tdt.is_complex else torch.float64))
        err = rel_err(ember.linalg.matrix_exp(E(a)), ref)
        torch_err = float((torch.linalg.matrix_exp(a).to(ref.dtype) - ref).abs().max() / ref.abs().max())
        assert err <= max(20 * eps * max(norm, 1.0), 2 * torch_err), (norm, err, torch_err)


def test_matrix_exp_identities():
    # exp of a diagonal, of a nilpotent matrix, exp(A) exp(-A) = I, exp(2A) = exp(A)^2.
    d = torch.tensor([-3.0, 0.5, 7.0], dtype=torch.float64)
    assert_same(ember.linalg.matrix_exp(E(torch.diag(d))), torch.diag(d.exp()), rtol=1e-13)
    n = torch.triu(torch.randn(4, 4, dtype=torch.float64), 1)
    expected = torch.eye(4, dtype=torch.float64) + n + n @ n / 2 + n @ n @ n / 6
    assert_same(ember.linalg.matrix_exp(E(n)), expected, rtol=1e-13)
    a = with_norm((2, 6, 6), torch.float64, 12.0, 7)
    ea = E(a)
    p = ember.linalg.matrix_exp(ea) @ ember.linalg.matrix_exp(-ea)
    assert_same(p, torch.eye(6, dtype=torch.float64).expand(2, 6, 6), rtol=1e-9, atol=1e-9)
    e1 = ember.linalg.matrix_exp(ea)
    assert_same(ember.linalg.matrix_exp(2 * ea), T(e1 @ e1), rtol=1e-9)


def test_matrix_exp_batch_with_different_scalings_and_gradients():
    # One batch mixing a tiny matrix, one inside the last threshold and two needing 3 and 6
    # squarings: values and gradients equal torch's.
    a = torch.cat([with_norm((1, 4, 4), torch.float64, n, i) for i, n in enumerate([1e-3, 4.0, 40.0, 300.0])])
    a = a.reshape(2, 2, 4, 4).requires_grad_()
    ea = E(a, True)
    y, ey = torch.linalg.matrix_exp(a), ember.linalg.matrix_exp(ea)
    assert rel_err(ey, y.detach()) < 1e-12
    g = torch.randn(y.shape, dtype=torch.float64)
    (ga,) = torch.autograd.grad(y, a, g)
    (ega,) = ember.autograd.grad(ey, ea, E(g))
    for i in range(2):
        for j in range(2):
            assert rel_err(ega[i, j], ga[i, j]) < 1e-11


def test_matrix_exp_gradcheck_and_gradgradcheck():
    for dt, norm in [(torch.float64, 0.2), (torch.float64, 9.0), (torch.complex128, 3.0)]:
        a = E(with_norm((3, 3), dt, norm, 3), True)
        assert ember.autograd.gradcheck(ember.linalg.matrix_exp, (a,))
    a = E(with_norm((2, 2), torch.float64, 8.0, 4), True)
    assert ember.autograd.gradgradcheck(ember.linalg.matrix_exp, (a,))


def test_matrix_exp_aliases_dtypes_and_special_shapes():
    a = torch.randn(3, 3, dtype=torch.float64)
    ref = torch.linalg.matrix_exp(a)
    assert_same(ember.matrix_exp(E(a)), ref, rtol=1e-12)
    assert_same(E(a).matrix_exp(), ref, rtol=1e-12)
    for shape in [(0, 3, 3), (2, 0, 0), (1, 1), (2, 1, 1)]:
        x = torch.randn(shape)
        assert_same(ember.linalg.matrix_exp(E(x)), torch.linalg.matrix_exp(x))
    for dt in ["float16", "bfloat16"]:
        # Computed in float32 and rounded (torch's own bfloat16 result is far off: not the reference).
        x = (torch.randn(3, 3) / 3).to(getattr(torch, dt))
        assert_same(ember.linalg.matrix_exp(E(x)), torch.linalg.matrix_exp(x.float()).to(x.dtype), rtol=1e-2,
                    atol=1e-2)
    inf = torch.tensor([[math.inf, 0.0], [0.0, 1.0]])
    assert not ember.linalg.matrix_exp(E(inf)).isfinite().any().item()


@pytest.mark.parametrize("make", [lambda lib: lib.randn(2, 3), lambda lib: lib.randn(3), lambda lib: lib.tensor(1.0),
                                  lambda lib: lib.ones(2, 2, dtype=lib.int64), lambda lib: lib.randn(4, 3, 2)])
def test_matrix_exp_errors_match_torch(make):
    same_error(lambda: ember.linalg.matrix_exp(make(ember)), lambda: torch.linalg.matrix_exp(make(torch)))
    same_error(lambda: ember.matrix_exp(make(ember)), lambda: torch.matrix_exp(make(torch)))


# ---- geqrf and householder_product ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 4, 3)])
def test_geqrf_matches_torch_and_round_trips(dtype, shape):
    tdt = getattr(torch, dtype)
    a = torch.randn(shape, dtype=tdt)
    r, tau = ember.geqrf(E(a))
    tr, ttau = torch.geqrf(a)
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    assert_same(r, tr, rtol=tol, atol=tol)
    assert_same(tau, ttau, rtol=tol, atol=tol)
    # Q from the reflectors (of the leading square/tall part) times R gives A back.
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    q = ember.linalg.householder_product(r[..., :k], tau)
    assert_same(q, torch.linalg.householder_product(tr[..., :k], ttau), rtol=tol, atol=tol)
    assert_same(q @ r[..., :k, :].triu(), a, rtol=10 * tol, atol=10 * tol)


def test_geqrf_method_out_errors_and_no_gradient():
    a = torch.randn(4, 3, dtype=torch.float64)
    res = E(a).geqrf()
    assert type(res).__name__ == "geqrf" and res._fields == ("a", "tau")
    assert_same(res.a, torch.geqrf(a).a, rtol=1e-12)
    oa, ot = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.float64)
    ember.geqrf(E(a), out=(oa, ot))
    assert_same(ot, torch.geqrf(a).tau, rtol=1e-12)
    same_error(lambda: ember.geqrf(ember.randn(3)), lambda: torch.geqrf(torch.randn(3)))
    same_error(lambda: ember.geqrf(ember.ones(3, 3, dtype=ember.int64)),
               lambda: torch.geqrf(torch.ones(3, 3, dtype=torch.int64)))
    x = E(a, True)
    r, tau = ember.geqrf(x)
    with pytest.raises(NotImplementedError):
        (r.sum() + tau.sum()).backward()


def test_householder_product_from_torch_geqrf_and_gradients():
    # Reflectors from torch.geqrf (the parametrization's use) and arbitrary tau: values and
    # gradients of A and tau equal torch's, for real and complex.
    for dt in [torch.float64, torch.complex128]:
        a0, tau0 = torch.geqrf(torch.randn(2, 6, 4, dtype=dt))
        for a, tau in [(a0, tau0), (torch.randn(6, 4, dtype=dt), torch.randn(3, dtype=dt))]:
            a, tau = a.clone().requires_grad_(), tau.clone().requires_grad_()
            ea, et = E(a, True), E(tau, True)
            q, eq = torch.linalg.householder_product(a, tau), ember.linalg.householder_product(ea, et)
            assert_same(eq, q.detach(), rtol=1e-12)
            g = torch.randn(q.shape, dtype=dt)
            ga, gt = torch.autograd.grad(q, (a, tau), g)
            ega, egt = ember.autograd.grad(eq, (ea, et), E(g))
            assert_same(ega, ga, rtol=1e-11, atol=1e-11)
            assert_same(egt, gt, rtol=1e-11, atol=1e-11)


def test_householder_product_gradcheck_gradgradcheck_aliases_and_out():
    a = E(torch.randn(4, 3, dtype=torch.float64), True)
    tau = E(torch.rand(2, dtype=torch.float64) + 0.5, True)
    assert ember.autograd.gradcheck(ember.linalg.householder_product, (a, tau))
    assert ember.autograd.gradgradcheck(ember.linalg.householder_product, (a, tau))
    ca = E(torch.randn(3, 2, dtype=torch.complex128), True)
    ct = E(torch.randn(2, dtype=torch.complex128), True)
    assert ember.autograd.gradcheck(ember.linalg.householder_product, (ca, ct))
    ta, tt = T(a), T(tau)
    ref = torch.orgqr(ta, tt)
    assert_same(ember.orgqr(a, tau), ref, rtol=1e-12)
    assert_same(a.orgqr(tau), ref, rtol=1e-12)
    out = ember.empty(0, dtype=ember.float64)
    r = ember.linalg.householder_product(a.detach(), tau.detach(), out=out)
    assert r is out
    assert_same(out, ref, rtol=1e-12)
    # No reflectors: the first n columns of the identity.
    assert_same(ember.linalg.householder_product(E(ta), ember.empty(0, dtype=ember.float64)),
                torch.linalg.householder_product(ta, torch.empty(0, dtype=torch.float64)))


@pytest.mark.parametrize("args", [
    lambda lib: (lib.randn(3, 4), lib.randn(2)),                       # wide input
    lambda lib: (lib.randn(4, 3), lib.randn(4)),                       # more tau than columns
    lambda lib: (lib.randn(4), lib.randn(1)),                          # not a matrix
    lambda lib: (lib.randn(2, 4, 3), lib.randn(2)),                    # tau's rank
    lambda lib: (lib.randn(2, 4, 3), lib.randn(3, 2)),                 # batch mismatch
    lambda lib: (lib.randn(4, 3), lib.randn(2, dtype=lib.float64)),    # dtype mismatch
    lambda lib: (lib.ones(4, 3, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
])
def test_householder_product_errors_match_torch(args):
    same_error(lambda: ember.linalg.householder_product(*args(ember)),
               lambda: torch.linalg.householder_product(*args(torch)))


def test_householder_product_is_orthonormal_for_geqrf_reflectors():
    a = torch.randn(3, 7, 5, dtype=torch.float64)
    r, tau = ember.geqrf(E(a))
    q = ember.linalg.householder_product(r, tau)
    eye = np.eye(5)
    for i in range(3):
        qi = T(q[i]).numpy()
        np.testing.assert_allclose(qi.T @ qi, eye, atol=1e-13)


def test_householder_product_lapack_path_equals_composite():
    # Without a gradient to record the values come from LAPACK orgqr; with one, from the composite.
    for dt in [torch.float32, torch.float64, torch.complex64, torch.complex128]:
        for shape, k in [((6, 4), 4), ((2, 5, 3), 2), ((4, 4), 0), ((3, 0, 0), 0)]:
            a = torch.randn(shape, dtype=dt)
            tau = torch.randn(shape[:-2] + (k,), dtype=dt)
            fast = ember.linalg.householder_product(E(a), E(tau))
            assert fast.grad_fn is None
            slow = ember.linalg.householder_product(E(a, True), E(tau))
            assert slow.grad_fn is not None or a.numel() == 0
            tol = 1e-5 if dt in (torch.float32, torch.complex64) else 1e-12
            assert_same(fast, torch.linalg.householder_product(a, tau), rtol=tol, atol=tol)
            assert_same(slow, T(fast), rtol=tol, atol=tol)
    with ember.no_grad():
        assert ember.linalg.householder_product(E(a, True), E(tau)).grad_fn is None


def test_forward_ad_matches_torch():
    import ember.autograd.forward_ad as efwd
    import torch.autograd.forward_ad as tfwd
    a, da = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 3, dtype=torch.float64)
    tau, dtau = torch.rand(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    m, dm = with_norm((4, 4), torch.float64, 7.0, 9), torch.randn(4, 4, dtype=torch.float64)
    with tfwd.dual_level():
        tq = tfwd.unpack_dual(torch.linalg.householder_product(tfwd.make_dual(a, da), tfwd.make_dual(tau, dtau)))
        te = tfwd.unpack_dual(torch.linalg.matrix_exp(tfwd.make_dual(m, dm)))
    with efwd.dual_level():
        eq = efwd.unpack_dual(ember.linalg.householder_product(efwd.make_dual(E(a), E(da)),
                                                               efwd.make_dual(E(tau), E(dtau))))
        ee = efwd.unpack_dual(ember.linalg.matrix_exp(efwd.make_dual(E(m), E(dm))))
    assert_same(eq.primal, tq.primal, rtol=1e-12)
    assert_same(eq.tangent, tq.tangent, rtol=1e-11, atol=1e-11)
    assert rel_err(ee.tangent, te.tangent) < 1e-12
