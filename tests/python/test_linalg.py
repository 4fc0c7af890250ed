"""ember.linalg beyond the op table: named tuples, decomposition identities, errors, top-level aliases."""
import math

import pytest

import ember
from conftest import assert_same, same_error, torch


def pair(shape, seed=0, dtype="float64", shift=0.0):
    """The same random values as (ember, torch); shift adds shift * n * I to square matrices."""
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1
    if shift:
        t = t + shift * shape[-1] * torch.eye(shape[-1], dtype=torch.float64)
    t = t.to(getattr(torch, dtype))
    return ember.tensor(t.tolist(), dtype=getattr(ember, dtype)), t


def close(e, t, tol=1e-10):
    assert_same(e, t, rtol=tol, atol=tol)


def eye(n, batch=()):
    return ember.eye(n, dtype=ember.float64).expand(*batch, n, n)


def test_linalg_error_is_runtime_error():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(3, 3))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.solve(ember.zeros(2, 2), ember.ones(2))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.cholesky(-ember.eye(3))


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.inv(L.ones(2, 3)),
    lambda L: L.linalg.inv(L.ones(3)),
    lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.int64)),
    lambda L: L.linalg.det(L.ones(2, 3)),
    lambda L: L.linalg.cholesky(L.ones(2, 3)),
    lambda L: L.linalg.solve(L.eye(3), L.ones(4)),
    lambda L: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.float64)),
    lambda L: L.linalg.qr(L.ones(3, 2), mode="bad"),
    lambda L: L.linalg.eigh(L.ones(3, 3), UPLO="X"),
    lambda L: L.linalg.eigh(L.ones(2, 3)),
    lambda L: L.linalg.cross(L.ones(2, 3), L.ones(3)),
    lambda L: L.linalg.cross(L.ones(2, 4), L.ones(2, 4)),
    lambda L: L.linalg.lstsq(L.ones(2, 5, 3), L.ones(5, 2)),
    lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    lambda L: L.linalg.norm(L.ones(2, 3, 4), 2),
    lambda L: L.linalg.svd(L.ones(3)),
    lambda L: L.mv(L.ones(3, 4), L.ones(3)),
    lambda L: L.dot(L.ones(3), L.ones(4)),
    lambda L: L.dot(L.ones(3), L.ones(3, dtype=L.float64)),
    lambda L: L.addmm(L.ones(4, 4), L.ones(2, 3), L.ones(3, 4)),
    lambda L: L.baddbmm(L.ones(2, 2, 4), L.ones(2, 2, 3), L.ones(3, 3, 4)),
    lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(4, 5)),
    lambda L: L.einsum("ij,jk->ik", L.ones(2, 3)),
    lambda L: L.einsum("ij->ii", L.ones(2, 2)),
    lambda L: L.einsum("ii->i", L.ones(2, 3)),
    lambda L: L.einsum("ijk->i", L.ones(2, 3)),
    lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 5), dims=([1], [0])),
])
def test_errors_match_torch(fn):
    same_error(lambda: fn(ember), lambda: fn(torch))


def test_named_tuples():
    a, _ = pair((4, 3), 1)
    q = ember.linalg.qr(a)
    assert q._fields == ("Q", "R") and q.Q is q[0]
    s = ember.linalg.svd(a)
    assert s._fields == ("U", "S", "Vh")
    sq, _ = pair((3, 3), 2, shift=1)
    assert ember.linalg.slogdet(sq)._fields == ("sign", "logabsdet")
    assert ember.linalg.eigh(sq)._fields == ("eigenvalues", "eigenvectors")
    r = ember.linalg.lstsq(a, a)
    assert r._fields == ("solution", "residuals", "rank", "singular_values")
    assert r.rank.dtype == ember.int64 and tuple(r.residuals.shape) == (0,)
    assert ember.svd(a)._fields == ("U", "S", "V")


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 5, 3), (2, 3, 3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_identities(shape, mode):
    a, t = pair(shape, 3)
    Q, R = ember.linalg.qr(a, mode=mode)
    tQ, tR = torch.linalg.qr(t, mode=mode)
    assert tuple(Q.shape) == tuple(tQ.shape) and tuple(R.shape) == tuple(tR.shape)
    close(Q @ R, t)
    k = Q.shape[-1]
    close(Q.mT @ Q, torch.eye(k, dtype=torch.float64).expand(*shape[:-2], k, k))
    close(R * (1 - ember.tensor(torch.ones(R.shape[-2:]).triu().tolist(), dtype=ember.float64)),
          torch.zeros(tR.shape, dtype=torch.float64))
    close((R.mT @ R), tR.mT @ tR)  # sign-invariant


def test_qr_mode_r():
    a, t = pair((5, 3), 4)
    Q, R = ember.linalg.qr(a, mode="r")
    assert tuple(Q.shape) == (0,)
    close(R.mT @ R, t.mT @ t)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 2, 3, 5)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_identities(shape, full):
    a, t = pair(shape, 5)
    U, S, Vh = ember.linalg.svd(a, full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(t, full_matrices=full)
    assert [tuple(x.shape) for x in (U, S, Vh)] == [tuple(x.shape) for x in (tU, tS, tVh)]
    close(S, tS)
    k = S.shape[-1]
    close((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], t)
    close(U.mT @ U, torch.eye(U.shape[-1], dtype=torch.float64).expand(*shape[:-2], U.shape[-1], U.shape[-1]))
    close(ember.linalg.svdvals(a), tS)


def test_torch_svd_returns_v():
    a, t = pair((5, 3), 6)
    U, S, V = ember.svd(a)
    tU, tS, tV = torch.svd(t)
    assert tuple(U.shape) == tuple(tU.shape) and tuple(V.shape) == tuple(tV.shape)
    close((U * S.unsqueeze(-2)) @ V.mT, t)
    U, S, V = ember.svd(a, some=False)
    assert tuple(U.shape) == (5, 5) and tuple(V.shape) == (3, 3)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_identities(uplo):
    a, t = pair((2, 4, 4), 7)
    w, V = ember.linalg.eigh(a, UPLO=uplo)
    tw, tV = torch.linalg.eigh(t, UPLO=uplo)
    close(w, tw)
    sym_t = t.tril() + t.tril(-1).mT if uplo == "L" else t.triu() + t.triu(1).mT
    close((V * w.unsqueeze(-2)) @ V.mT, sym_t)
    close(ember.linalg.eigvalsh(a, UPLO=uplo), tw)


def test_cholesky_identity_and_upper():
    a, t = pair((2, 4, 4), 8)
    pd_t = t @ t.mT + 4 * torch.eye(4, dtype=torch.float64)
    pd_e = a @ a.mT + 4 * eye(4)
    L = ember.linalg.cholesky(pd_e)
    close(L, torch.linalg.cholesky(pd_t))
    close(L @ L.mT, pd_t)
    close(ember.linalg.cholesky(pd_e, upper=True), torch.linalg.cholesky(pd_t, upper=True))
    close(ember.cholesky(pd_e), torch.cholesky(pd_t))


def test_det_slogdet_inverse_top_level():
    a, t = pair((3, 4, 4), 9, shift=1)
    close(ember.det(a), torch.det(t))
    close(ember.inverse(a), torch.inverse(t))
    close(a.inverse() @ a, torch.eye(4, dtype=torch.float64).expand(3, 4, 4))
    s, l = ember.slogdet(a)
    ts, tl = torch.slogdet(t)
    close(s, ts)
    close(l, tl)
    # singular: det 0, sign 0, logabsdet -inf (no error)
    z = ember.zeros(3, 3, dtype=ember.float64)
    assert ember.linalg.det(z).item() == 0
    assert ember.linalg.slogdet(z).logabsdet.item() == -math.inf


def test_solve_batched_broadcast_and_left():
    a, t = pair((2, 1, 3, 3), 10, shift=1)
    b, tb = pair((4, 3, 2), 11)
    close(ember.linalg.solve(a, b), torch.linalg.solve(t, tb))
    c, tc = pair((2, 3), 12)
    close(ember.linalg.solve(a[:, 0], c), torch.linalg.solve(t[:, 0], tc))
    d, td = pair((5, 3), 13)
    close(ember.linalg.solve(a[0, 0], d, left=False), torch.linalg.solve(t[0, 0], td, left=False))


def test_lstsq_tall_and_rank_deficient():
    a, t = pair((6, 3), 14)
    b, tb = pair((6, 2), 15)
    close(ember.linalg.lstsq(a, b).solution, torch.linalg.lstsq(t, tb).solution)
    d, td = pair((6, 2), 16)
    low = d @ ember.tensor([[1., 0, 1], [0, 1, 0]], dtype=ember.float64)  # rank 2
    tlow = td @ torch.tensor([[1., 0, 1], [0, 1, 0]], dtype=torch.float64)
    r = ember.linalg.lstsq(low, b)
    assert r.rank.item() == 2  # (torch's own gelsy rank estimate on this input varies between runs)
    close(r.solution, torch.linalg.pinv(tlow) @ tb, 1e-8)  # gelsy gives the minimum-norm solution


def test_pinv_matrix_rank_power():
    a, t = pair((2, 5, 3), 17)
    close(ember.linalg.pinv(a), torch.linalg.pinv(t))
    p = ember.linalg.pinv(a)
    close(a @ p @ a, t)
    low, tlow = pair((4, 2), 18)
    m = low @ low.mT
    tm = tlow @ tlow.mT
    assert ember.linalg.matrix_rank(m).item() == torch.linalg.matrix_rank(tm).item() == 2
    sq, tsq = pair((3, 3), 19, shift=1)
    close(ember.linalg.matrix_power(sq, -3), torch.linalg.matrix_power(tsq, -3))
    close(sq.matrix_power(4), tsq.matrix_power(4))


def test_cross_and_norm_shapes():
    a, t = pair((2, 1, 3), 20)
    b, tb = pair((1, 4, 3), 21)
    close(ember.linalg.cross(a, b), torch.linalg.cross(t, tb))
    x, tx = pair((2, 3, 4), 22)
    for kw in [dict(), dict(dim=1), dict(dim=(0, 2)), dict(ord="fro", dim=(1, 2), keepdim=True),
               dict(ord=math.inf, dim=-1), dict(ord=-2, dim=(1, 2))]:
        close(ember.linalg.norm(x, **kw), torch.linalg.norm(tx, **kw))


def _grads(fn_e, fn_t, *pairs):
    es = [e.detach().requires_grad_() for e, _ in pairs]
    ts = [t.detach().clone().requires_grad_() for _, t in pairs]
    fn_e(*es).sum().backward()
    fn_t(*ts).sum().backward()
    for e, t in zip(es, ts):
        close(e.grad, t.grad, 1e-8)


def test_gradients_vs_torch_on_raw_inputs():
    a, t = pair((3, 3), 23, shift=1)
    w = lambda L, x: x * L.linspace(-1, 1, x.numel(), dtype=L.float64).reshape(x.shape)  # noqa: E731
    _grads(lambda x: w(ember, ember.linalg.inv(x)), lambda x: w(torch, torch.linalg.inv(x)), (a, t))
    _grads(lambda x: ember.linalg.det(x), lambda x: torch.linalg.det(x), (a, t))
    _grads(lambda x: ember.linalg.slogdet(x).logabsdet, lambda x: torch.linalg.slogdet(x).logabsdet, (a, t))
    _grads(lambda x: ember.linalg.svdvals(x), lambda x: torch.linalg.svdvals(x), pair((4, 3), 24))
    _grads(lambda x: w(ember, ember.linalg.pinv(x)), lambda x: w(torch, torch.linalg.pinv(x)), pair((3, 5), 25))


def test_double_backward_inv():
    a, t = pair((3, 3), 26, shift=1)
    x = a.detach().requires_grad_()
    tx = t.detach().clone().requires_grad_()
    (g,) = ember.autograd.grad(ember.linalg.inv(x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(torch.linalg.inv(tx).sum(), tx, create_graph=True)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    close(x.grad, tx.grad, 1e-8)


def test_gradgradcheck_cholesky_and_svdvals():
    a, _ = pair((3, 3), 27)
    x = a.detach().requires_grad_()
    gg = getattr(ember.autograd, "gradgradcheck", None)
    if gg is None:
        pytest.skip("ember.autograd.gradgradcheck not available")
    assert gg(lambda y: ember.linalg.cholesky(y @ y.mT + 3 * eye(3)), (x,))
    assert gg(lambda y: ember.linalg.svdvals(y), (x,))


@pytest.mark.parametrize("eq", ["ij,jk->ik", "bij,bjk->bik"])
def test_einsum_uses_one_gemm(eq):
    """Common patterns run as a single bmm: the result's autograd node is the bmm's (via views)."""
    shapes = {"ij,jk->ik": ((3, 4), (4, 5)), "bij,bjk->bik": ((2, 3, 4), (2, 4, 5))}[eq]
    a, ta = pair(shapes[0], 28)
    b, tb = pair(shapes[1], 29)
    a.requires_grad_()
    r = ember.einsum(eq, a, b)
    close(r, torch.einsum(eq, ta, tb))
    names = []
    fn = r.grad_fn
    while fn is not None and len(names) < 4:
        names.append(fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    assert "BmmBackward0" in names and "SumBackward1" not in names and "MulBackward0" not in names


def test_det_gradient_on_singular_input_is_the_cofactor_matrix():
    # torch's create_graph=True path (SVD) gives the cofactor matrix; its plain backward()
    # returns zeros for exactly singular input (Note [det gradient on singular input]).
    m = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]
    a = ember.tensor(m, dtype=ember.float64, requires_grad=True)
    ember.linalg.det(a).backward()
    t = torch.tensor(m, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.linalg.det(t), t, create_graph=True)
    assert_same(a.grad, g.detach(), rtol=1e-12, atol=1e-12)
    assert ember.autograd.gradcheck(ember.linalg.det, (a.detach().requires_grad_(),))
    # Rank n-2: the gradient is zero.
    z = ember.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]], dtype=ember.float64, requires_grad=True)
    ember.det(z).backward()
    assert z.grad.abs().max().item() < 1e-12


def test_slogdet_gradient_on_singular_input_is_not_finite_as_torch():
    m = [[1.0, 2.0], [2.0, 4.0]]
    a = ember.tensor(m, dtype=ember.float64, requires_grad=True)
    ember.linalg.slogdet(a).logabsdet.backward()
    t = torch.tensor(m, dtype=torch.float64, requires_grad=True)
    torch.linalg.slogdet(t).logabsdet.backward()
    assert not torch.isfinite(t.grad).all()
    assert not ember.isfinite(a.grad).all().item()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("sa,sb", [((3, 0), (3, 2)), ((2, 3, 0), (2, 3, 2)), ((0, 3), (0, 2)), ((3, 0), (3,))])
def test_lstsq_empty_matches_torch(dtype, driver, sa, sb):
    """Empty systems: torch's gels reports zero residuals for an empty A, the others |B|^2."""
    def run(L):
        dt = getattr(L, dtype)
        return L.linalg.lstsq(L.zeros(sa, dtype=dt), L.ones(sb, dtype=dt) * (1 + (1j if "complex" in dtype else 0)),
                              driver=driver)
    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t)


@pytest.mark.parametrize("n", [3, 40])
def test_batched_lu_splits_among_threads(n):
    # lu_factor factors a batch's matrices on separate threads, each on one: the same factors as one
    # matrix at a time, for any thread count; singular members still report per matrix
    import numpy as np
    rng = np.random.default_rng(n)
    a = rng.standard_normal((37, n, n))
    a[5] = 0.0  # singular
    e = ember.from_numpy(a)
    prev = ember.get_num_threads()
    outs = []
    try:
        for t in (1, 2):
            ember.set_num_threads(t)
            sign, logabs = ember.linalg.slogdet(e)
            outs.append((ember.linalg.det(e).numpy(), sign.numpy(), logabs.numpy()))
    finally:
        ember.set_num_threads(prev)
    for x, y in zip(*outs):
        assert np.array_equal(x, y)
    one = np.array([float(ember.linalg.det(e[i])) for i in range(37)])
    assert np.array_equal(outs[0][0], one)
    np.testing.assert_allclose(outs[0][0], np.linalg.det(a), rtol=1e-9, atol=1e-12)
    b = ember.from_numpy(rng.standard_normal((37, n, 2)))
    ok = ember.from_numpy(np.delete(a, 5, axis=0))
    x = ember.linalg.solve(ok, ember.from_numpy(np.delete(b.numpy(), 5, axis=0)))
    np.testing.assert_allclose((ok @ x).numpy(), np.delete(b.numpy(), 5, axis=0), atol=1e-8)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.solve(e, b)
