"""ember.lobpcg against torch.linalg.eigh / torch.lobpcg: eigenvalues, residuals, B, iK, batches, grads, errors."""
import pytest

import ember
from conftest import torch


def E(t):
    return None if t is None else ember.from_dlpack(t.detach().contiguous()).clone()


def T(e):
    return torch.from_dlpack(e.detach().contiguous())


def _spd(m, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, m, dtype=dtype, generator=g)
    return a @ a.T / m + torch.eye(m, dtype=dtype)


def _ref(A, B, k, largest):
    if B is not None:  # L^-1 A L^-T has the generalized eigenvalues
        L = torch.linalg.cholesky(B)
        A = torch.linalg.solve_triangular(L, torch.linalg.solve_triangular(L, A, upper=False).mT, upper=False)
    w = torch.linalg.eigvalsh(A)
    return w.flip(-1)[..., :k] if largest else w[..., :k]


@pytest.mark.parametrize("m,k,largest,gen", [(60, 2, True, False), (60, 3, False, False), (90, 4, True, True),
                                             (90, 4, False, True), (30, 1, None, False)])
def test_lobpcg_eigenpairs_match_eigh(m, k, largest, gen):
    A = _spd(m, 1)
    B = _spd(m, 2) if gen else None
    ember.manual_seed(0)
    e, v = ember.lobpcg(E(A), k=k, B=E(B), largest=largest)
    assert tuple(e.shape) == (k,) and tuple(v.shape) == (m, k)
    ref = _ref(A, B, k, largest is not False)
    torch.testing.assert_close(T(e), ref, rtol=1e-10, atol=1e-10)
    et, _ = torch.lobpcg(A, k=k, B=B, largest=largest)
    torch.testing.assert_close(T(e), et, rtol=1e-9, atol=1e-9)
    V = T(v)
    Bv = V if B is None else B @ V
    assert (A @ V - Bv * T(e)).norm(dim=0).max() < 1e-6 * T(e).abs().max()
    torch.testing.assert_close(V.mT @ Bv, torch.eye(k, dtype=A.dtype), rtol=0, atol=1e-10)  # B-orthonormal


def test_lobpcg_float32_initial_x_preconditioner_and_niter():
    A = _spd(50, 3)
    e, v = ember.lobpcg(E(A.float()), k=2)
    assert e.dtype == ember.float32 and v.dtype == ember.float32
    torch.testing.assert_close(T(e), _ref(A, None, 2, True).float(), rtol=1e-5, atol=1e-5)
    X = torch.randn(50, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    iK = torch.diag(1 / A.diagonal())  # Jacobi preconditioner
    e, v = ember.lobpcg(E(A), X=E(X), iK=E(iK), largest=False)
    assert tuple(e.shape) == (3,)  # k defaults to X's columns
    torch.testing.assert_close(T(e), _ref(A, None, 3, False), rtol=1e-10, atol=1e-10)
    steps = []
    ember.lobpcg(E(A), k=2, X=E(X[:, :2]), niter=3, tracker=lambda w: steps.append(w.ivars["istep"]))
    assert steps == [0, 1, 2, 3]  # the initial state, then one call per step, at most niter steps


def test_lobpcg_batched():
    A = torch.stack([_spd(40, 5), _spd(40, 6), 2 * _spd(40, 7)])
    e, v = ember.lobpcg(E(A), k=2)
    assert tuple(e.shape) == (3, 2) and tuple(v.shape) == (3, 40, 2)
    torch.testing.assert_close(T(e), _ref(A, None, 2, True), rtol=1e-10, atol=1e-10)


def test_lobpcg_gradients_match_torch():
    A = _spd(30, 8)
    X = torch.randn(30, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    w = torch.randn(30, 2, dtype=torch.float64)
    grads = []
    for lib, conv in ((torch, lambda t: t.clone()), (ember, E)):
        a = conv(A).requires_grad_()
        e, v = lib.lobpcg(a, X=conv(X), tol=1e-12)
        s = lib.sign(v[0:1])  # eigenvectors are defined up to sign: fix it before using them
        (e.sum() * 3 + (v * s * conv(w)).sum()).backward()
        grads.append(a.grad if lib is torch else T(a.grad))
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def _errs():
    A = _spd(10, 1)
    return [
        lambda lib, c: lib.lobpcg(c(A), k=4),  # m < 3 n
        lambda lib, c: lib.lobpcg(c(A), k=2, n=4),
        lambda lib, c: lib.lobpcg(c(A), X=c(torch.randn(10, 4, dtype=torch.float64))),
        lambda lib, c: lib.lobpcg(c(A[:, :9]), k=2),  # not square
        lambda lib, c: lib.lobpcg(c(A), k=2, B=c(torch.eye(9, dtype=torch.float64))),
        lambda lib, c: lib.lobpcg(c(A), k=2, X=c(torch.randn(9, 2, dtype=torch.float64))),
        lambda lib, c: lib.lobpcg(c(A.long()), k=2),
        lambda lib, c: lib.lobpcg(c(A.half()), k=2),
        lambda lib, c: lib.lobpcg(c(A[0]), k=1),
        lambda lib, c: lib.lobpcg(c(A), k=2.5),
        lambda lib, c: lib.lobpcg([[1.0]], k=1),
        lambda lib, c: lib.lobpcg(c(A).requires_grad_(), k=2, B=c(torch.eye(10, dtype=torch.float64)))[0].sum()
        .backward(),  # no gradient for the generalized problem (raised by backward)
    ]


@pytest.mark.parametrize("i", range(len(_errs())))
def test_lobpcg_errors_match_torch(i):
    f = _errs()[i]
    with pytest.raises(Exception) as te:
        f(torch, lambda t: t.clone())
    with pytest.raises(Exception) as ee:
        f(ember, E)
    assert type(ee.value) is type(te.value), (ee.value, te.value)
