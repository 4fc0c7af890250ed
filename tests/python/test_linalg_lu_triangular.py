"""linalg.solve_triangular (BLAS trsm), cholesky_solve / triangular_solve on it, and LU on LAPACK getrf /
getrs (linalg.lu_factor(_ex), lu_unpack, linalg.lu, lu_solve, torch.lu) against torch 2.13.

Values over dtypes, batched and broadcast shapes, non-contiguous and empty inputs, singular triangles
(inf/nan, no error, as trsm); gradients against torch and gradcheck/gradgradcheck in float64; error
classes; the ops under ember.vmap.
"""
import pytest

import ember
from conftest import torch

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]


def E(t, grad=False):
    e = ember.from_dlpack(t.detach().contiguous()).clone()
    return e.requires_grad_() if grad else e


def T(e):
    return torch.from_dlpack(e.detach().contiguous()).clone()


def rnd(shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(shape, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        a = torch.complex(a, torch.randn(shape, generator=g, dtype=torch.float64))
    return a.to(dtype)


def tri(shape, dtype=torch.float64, seed=0):
    """A well-conditioned matrix (batch) whose triangles are both usable: a strong diagonal."""
    n = shape[-1]
    return rnd(shape, dtype, seed) + 3 * torch.eye(n, dtype=dtype)


def close(e, t, tol=None):
    t = t.detach()
    if tol is None:
        tol = 1e-4 if t.dtype in (torch.float32, torch.complex64) else 1e-10
    got = T(e)
    assert got.shape == t.shape, (got.shape, t.shape)
    assert got.dtype == t.dtype, (got.dtype, t.dtype)
    torch.testing.assert_close(got, t, rtol=tol, atol=tol, equal_nan=True)


def same_error(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    return ee.value


# ------------------------------------------------------------------------------------------ solve_triangular
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_values(dtype, upper, left, unit):
    A = tri((2, 4, 4), dtype, 1)
    B = rnd((2, 4, 3) if left else (2, 3, 4), dtype, 2)
    close(ember.linalg.solve_triangular(E(A), E(B), upper=upper, left=left, unitriangular=unit),
          torch.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit))


def test_solve_triangular_other_triangle_and_diagonal_unread():
    A = tri((4, 4), seed=3)
    nan_up = torch.zeros(4, 4, dtype=torch.float64)
    nan_up[torch.ones(4, 4, dtype=torch.bool).triu(1)] = float("nan")
    A_lo = A.tril() + nan_up  # the strict upper triangle is nan
    B = rnd((4, 2), seed=4)
    close(ember.linalg.solve_triangular(E(A_lo), E(B), upper=False),
          torch.linalg.solve_triangular(A.tril(), B, upper=False))
    A_unit = A.tril(-1) + torch.diag(torch.full((4,), float("nan"), dtype=torch.float64))
    close(ember.linalg.solve_triangular(E(A_unit), E(B), upper=False, unitriangular=True),
          torch.linalg.solve_triangular(A.tril(-1) + torch.eye(4, dtype=torch.float64), B, upper=False))


@pytest.mark.parametrize("a_shape,b_shape", [((2, 1, 3, 3), (4, 3, 2)), ((3, 3), (5, 3, 2)), ((5, 3, 3), (3, 2)),
                                             ((1, 3, 3), (2, 1, 3, 1))])
def test_solve_triangular_broadcast(a_shape, b_shape):
    A, B = tri(a_shape, seed=5), rnd(b_shape, seed=6)
    for upper in (False, True):
        close(ember.linalg.solve_triangular(E(A), E(B), upper=upper), torch.linalg.solve_triangular(A, B, upper=upper))
    Br = B.mT
    close(ember.linalg.solve_triangular(E(A), E(Br.contiguous()), upper=True, left=False),
          torch.linalg.solve_triangular(A, Br, upper=True, left=False))


def test_solve_triangular_non_contiguous():
    big = tri((2, 6, 6), seed=7)
    B = rnd((2, 3, 4), seed=8)
    cases = [lambda x: x.mT[..., :3, :3], lambda x: x[..., 1:4, 2:5], lambda x: x[..., ::2, ::2],
             lambda x: x[..., :3, :3].mT]
    for f in cases:
        At, Ae = f(big), f(E(big))
        for upper in (False, True):
            close(ember.linalg.solve_triangular(Ae, E(B).mT.contiguous().mT, upper=upper),
                  torch.linalg.solve_triangular(At, B, upper=upper))
            close(ember.linalg.solve_triangular(Ae, E(B)[..., :2].mT, upper=upper, left=False),
                  torch.linalg.solve_triangular(At, B[..., :2].mT, upper=upper, left=False))
    # an expanded (stride-0) right-hand side and a broadcast A
    Bx = rnd((3, 1), seed=9).expand(3, 4)
    close(ember.linalg.solve_triangular(E(big[0, :3, :3]).expand(2, 3, 3), E(rnd((3, 1), seed=9)).expand(3, 4),
                                        upper=False),
          torch.linalg.solve_triangular(big[0, :3, :3].expand(2, 3, 3), Bx, upper=False))


@pytest.mark.parametrize("a_shape,b_shape", [((0, 0), (0, 3)), ((3, 3), (3, 0)), ((0, 3, 3), (0, 3, 2)),
                                             ((2, 0, 0), (2, 0, 4))])
def test_solve_triangular_empty(a_shape, b_shape):
    A, B = tri(a_shape, seed=1) if a_shape[-1] else torch.zeros(a_shape, dtype=torch.float64), \
        torch.zeros(b_shape, dtype=torch.float64)
    close(ember.linalg.solve_triangular(E(A), E(B), upper=True), torch.linalg.solve_triangular(A, B, upper=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128], ids=str)
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_singular_gives_inf_nan(dtype, left):
    A = tri((3, 3), dtype, 10).tril()
    A[1, 1] = 0
    B = rnd((3, 2) if left else (2, 3), dtype, 11)
    got = T(ember.linalg.solve_triangular(E(A), E(B), upper=False, left=left))
    ref = torch.linalg.solve_triangular(A, B, upper=False, left=left)
    assert torch.equal(torch.isfinite(got), torch.isfinite(ref))
    torch.testing.assert_close(got, ref, equal_nan=True)
    A0 = torch.zeros(2, 2, dtype=dtype)
    B0 = torch.ones(2, 2, dtype=dtype)
    torch.testing.assert_close(T(ember.linalg.solve_triangular(E(A0), E(B0), upper=True)),
                               torch.linalg.solve_triangular(A0, B0, upper=True), equal_nan=True)


def test_solve_triangular_mixed_dtypes_take_a_dtype():
    for da, db in [(torch.float32, torch.float64), (torch.float64, torch.float32), (torch.complex64, torch.float64)]:
        A, B = tri((3, 3), da, 1), rnd((3, 2), db, 2)
        close(ember.linalg.solve_triangular(E(A), E(B), upper=True), torch.linalg.solve_triangular(A, B, upper=True))


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.solve_triangular(lib.ones(3), lib.ones(3, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(3), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(3, 2), lib.ones(3, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(2, 2), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(2, 2), upper=True, left=False),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3, dtype=lib.int32), lib.ones(3, 2, dtype=lib.int32), upper=True),
    lambda lib: lib.linalg.solve_triangular(lib.ones(2, 3, 3), lib.ones(3, 3, 2), upper=True),
    lambda lib: lib.cholesky_solve(lib.ones(3), lib.eye(3)),
    lambda lib: lib.cholesky_solve(lib.ones(3, 2), lib.ones(3, 2)),
])
def test_solve_triangular_errors(call):
    same_error(lambda: call(ember), lambda: call(torch))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_grad_vs_torch(upper, left, unit):
    A = tri((2, 1, 3, 3), seed=12)
    B = rnd((4, 3, 2) if left else (4, 2, 3), seed=13)
    At, Bt = A.clone().requires_grad_(), B.clone().requires_grad_()
    Ae, Be = E(A, True), E(B, True)
    W = rnd((2, 4, 3, 2) if left else (2, 4, 2, 3), seed=14)
    (torch.linalg.solve_triangular(At, Bt, upper=upper, left=left, unitriangular=unit) * W).sum().backward()
    (ember.linalg.solve_triangular(Ae, Be, upper=upper, left=left, unitriangular=unit) * E(W)).sum().backward()
    close(Ae.grad, At.grad)
    close(Be.grad, Bt.grad)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128], ids=str)
@pytest.mark.parametrize("upper,left,unit", [(False, True, False), (True, False, False), (True, True, True),
                                             (False, False, True)])
def test_solve_triangular_gradcheck(dtype, upper, left, unit):
    A = E(tri((2, 3, 3), dtype, 15), True)
    B = E(rnd((3, 2) if left else (2, 3), dtype, 16), True)
    f = lambda a, b: ember.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)  # noqa: E731
    assert ember.autograd.gradcheck(f, (A, B))
    assert ember.autograd.gradgradcheck(f, (A, B))


# ------------------------------------------------------------------------------ cholesky_solve, triangular_solve
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_values(dtype, upper):
    M = rnd((2, 4, 4), dtype, 20)
    A = M @ M.mH + 4 * torch.eye(4, dtype=dtype)
    F = torch.linalg.cholesky(A, upper=upper)
    B = rnd((3, 1, 4, 2), dtype, 21)  # broadcasts against F's batch
    close(ember.cholesky_solve(E(B), E(F), upper), torch.cholesky_solve(B, F, upper))
    close(E(B).cholesky_solve(E(F), upper=upper), B.cholesky_solve(F, upper=upper))


def test_cholesky_solve_gradcheck():
    M = rnd((3, 3), seed=22)
    L = E(torch.linalg.cholesky(M @ M.mT + 3 * torch.eye(3, dtype=torch.float64)), True)
    B = E(rnd((3, 2), seed=23), True)
    for upper in (False, True):
        f = lambda b, l: ember.cholesky_solve(b, l.tril() if not upper else l.mT.triu(), upper)  # noqa: E731
        assert ember.autograd.gradcheck(f, (B, L))
        assert ember.autograd.gradgradcheck(f, (B, L))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_triangular_solve(upper, transpose, unit):
    A, b = tri((2, 3, 3), seed=24), rnd((3, 2), seed=25)
    got = ember.triangular_solve(E(b), E(A), upper, transpose, unit)
    ref = torch.triangular_solve(b, A, upper, transpose, unit)
    close(got.solution, ref.solution)
    close(got.cloned_coefficient, ref.cloned_coefficient)


# ------------------------------------------------------------------------------------------------------- LU
LU_SHAPES = [(4, 4), (3, 5), (5, 3), (2, 3, 3), (2, 1, 4, 2), (1, 1)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", LU_SHAPES, ids=str)
def test_lu_factor_values(dtype, shape):
    A = rnd(shape, dtype, 30)
    got, ref = ember.linalg.lu_factor_ex(E(A)), torch.linalg.lu_factor_ex(A)
    close(got.LU, ref.LU)
    assert torch.equal(T(got.pivots), ref.pivots)
    assert torch.equal(T(got.info), ref.info)
    g2, r2 = ember.linalg.lu_factor(E(A)), torch.linalg.lu_factor(A)
    close(g2.LU, r2.LU)
    for g, r in zip(ember.linalg.lu(E(A)), torch.linalg.lu(A)):
        close(g, r)
    for g, r in zip(ember.lu_unpack(*ember.linalg.lu_factor(E(A))), torch.lu_unpack(*torch.linalg.lu_factor(A))):
        close(g, r)


def test_lu_factor_non_contiguous_and_empty():
    A = rnd((2, 6, 6), seed=31)
    for f in (lambda x: x.mT, lambda x: x[:, ::2, 1:4], lambda x: x[..., :2, :]):
        got, ref = ember.linalg.lu_factor(f(E(A))), torch.linalg.lu_factor(f(A))
        close(got.LU, ref.LU)
        assert torch.equal(T(got.pivots), ref.pivots)
    for shape in [(0, 0), (2, 0, 3), (3, 0), (0, 3, 3)]:
        Z = torch.zeros(shape, dtype=torch.float64)
        for g, r in zip(ember.linalg.lu_factor_ex(E(Z)), torch.linalg.lu_factor_ex(Z)):
            close(g, r) if g.dtype == ember.float64 else assert_exact(g, r)
        for g, r in zip(ember.linalg.lu(E(Z)), torch.linalg.lu(Z)):
            close(g, r)


def assert_exact(e, t):
    assert torch.equal(T(e), t), (T(e), t)


def test_lu_factor_singular():
    A = torch.tensor([[[1., 2], [2, 4]], [[1., 0], [0, 1]], [[0., 0], [0, 0]]], dtype=torch.float64)
    got, ref = ember.linalg.lu_factor_ex(E(A)), torch.linalg.lu_factor_ex(A)
    close(got.LU, ref.LU)
    assert_exact(got.pivots, ref.pivots)
    assert_exact(got.info, ref.info)
    e = same_error(lambda: ember.linalg.lu_factor(E(A)), lambda: torch.linalg.lu_factor(A))
    assert "U[2,2] is zero" in str(e)
    same_error(lambda: ember.linalg.lu_factor_ex(E(A), check_errors=True),
               lambda: torch.linalg.lu_factor_ex(A, check_errors=True))
    W = torch.tensor([[1., 2, 3], [2, 4, 6]])
    same_error(lambda: ember.linalg.lu_factor(E(W)), lambda: torch.linalg.lu_factor(W))
    for g, r in zip(ember.lu(E(A)), torch.lu(A)):  # torch.lu reports no zero pivot, with or without infos
        close(g, r) if g.dtype == ember.float64 else assert_exact(g, r)
    for g, r in zip(ember.lu(E(A), get_infos=True), torch.lu(A, get_infos=True)):
        close(g, r) if g.dtype == ember.float64 else assert_exact(g, r)
    for g, r in zip(ember.linalg.lu(E(A)), torch.linalg.lu(A)):  # no check in linalg.lu
        close(g, r)


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.lu_factor(lib.ones(3)),
    lambda lib: lib.linalg.lu_factor(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.lu_factor(lib.eye(3), pivot=False),
    lambda lib: lib.linalg.lu(lib.eye(3), pivot=False),
    lambda lib: lib.lu(lib.eye(3), pivot=False),
    lambda lib: lib.lu_unpack(lib.eye(2), lib.tensor([1, 2])),
    lambda lib: lib.lu_unpack(lib.eye(2), lib.tensor([1, 3], dtype=lib.int32)),
    lambda lib: lib.lu_unpack(lib.eye(2), lib.tensor([0, 2], dtype=lib.int32)),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(2, 2)),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(2, 2), left=False),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(3)),
    lambda lib: lib.linalg.lu_solve(lib.ones(3, 4), lib.ones(3, dtype=lib.int32), lib.ones(3, 2)),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(3, 2, dtype=lib.float64)),
    lambda lib: lib.linalg.lu_solve(lib.linalg.lu_factor(lib.eye(3))[0], lib.ones(3, dtype=lib.int64),
                                    lib.ones(3, 2)),
    lambda lib: lib.linalg.lu_solve(lib.linalg.lu_factor(lib.eye(3))[0], lib.ones(2, dtype=lib.int32),
                                    lib.ones(3, 2)),
    lambda lib: lib.linalg.lu_solve(lib.eye(3).expand(2, 3, 3), lib.ones(3, dtype=lib.int32), lib.ones(3, 2)),
])
def test_lu_errors(call):
    same_error(lambda: call(ember), lambda: call(torch))


def test_lu_unpack_flags():
    A = rnd((2, 3, 4), seed=32)
    LU, piv = torch.linalg.lu_factor(A)
    for data in (False, True):
        for pv in (False, True):
            for g, r in zip(ember.lu_unpack(E(LU), E(piv), data, pv), torch.lu_unpack(LU, piv, data, pv)):
                close(g, r)
    # Unbatched pivots broadcast against a batch of LU. torch 2.13 fills only the first P of the batch
    # then (the others come out as identities), so the reference is torch per matrix.
    got = ember.lu_unpack(E(LU), E(piv[0]))
    for i in range(2):
        for g, r in zip(got, torch.lu_unpack(LU[i], piv[0])):
            close(g[i], r)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_values(dtype, left, adjoint):
    A = rnd((2, 1, 4, 4), dtype, 33)
    B = rnd((3, 4, 2) if left else (3, 2, 4), dtype, 34)
    LU, piv = torch.linalg.lu_factor(A)
    close(ember.linalg.lu_solve(E(LU), E(piv), E(B), left=left, adjoint=adjoint),
          torch.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint))
    if left and not adjoint:
        close(ember.lu_solve(E(B), E(LU), E(piv)), torch.lu_solve(B, LU, piv))
        close(E(B).lu_solve(E(LU), E(piv)), B.lu_solve(LU, piv))


def test_lu_solve_empty_and_non_contiguous():
    A = rnd((4, 4), seed=35)
    LU, piv = torch.linalg.lu_factor(A)
    B = rnd((2, 6), seed=36).mT[:4]
    close(ember.linalg.lu_solve(E(LU).mT.contiguous().mT, E(piv), E(rnd((2, 6), seed=36)).mT[:4]),
          torch.linalg.lu_solve(LU, piv, B))
    Z = torch.zeros(4, 0, dtype=torch.float64)
    close(ember.linalg.lu_solve(E(LU), E(piv), E(Z)), torch.linalg.lu_solve(LU, piv, Z))
    L0, p0 = torch.linalg.lu_factor(torch.zeros(0, 0, dtype=torch.float64))
    B0 = torch.zeros(0, 3, dtype=torch.float64)
    close(ember.linalg.lu_solve(E(L0), E(p0), E(B0)), torch.linalg.lu_solve(L0, p0, B0))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (3, 5), (5, 3), (2, 2, 4)], ids=str)
def test_lu_factor_grad_vs_torch_and_gradcheck(shape):
    A = rnd(shape, seed=40)
    W = rnd(shape, seed=41)
    At, Ae = A.clone().requires_grad_(), E(A, True)
    (torch.linalg.lu_factor(At).LU * W).sum().backward()
    (ember.linalg.lu_factor(Ae).LU * E(W)).sum().backward()
    close(Ae.grad, At.grad, 1e-9)
    assert ember.autograd.gradcheck(lambda a: ember.linalg.lu_factor(a).LU, (E(A, True),))
    assert ember.autograd.gradgradcheck(lambda a: ember.linalg.lu_factor(a).LU, (E(A, True),))


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3)], ids=str)
def test_linalg_lu_grad(shape):
    A = rnd(shape, seed=42)
    k = min(shape)
    WL, WU = rnd((shape[0], k), seed=43), rnd((k, shape[1]), seed=44)
    At, Ae = A.clone().requires_grad_(), E(A, True)
    _, L, U = torch.linalg.lu(At)
    ((L * WL).sum() + (U * WU).sum()).backward()
    _, L, U = ember.linalg.lu(Ae)
    ((L * E(WL)).sum() + (U * E(WU)).sum()).backward()
    close(Ae.grad, At.grad, 1e-9)
    assert ember.autograd.gradcheck(lambda a: ember.linalg.lu(a)[1:], (E(A, True),))
    assert ember.autograd.gradgradcheck(lambda a: ember.linalg.lu(a)[1:], (E(A, True),))


def test_lu_grad_complex_gradcheck():
    A = E(rnd((3, 3), torch.complex128, 45), True)
    assert ember.autograd.gradcheck(lambda a: ember.linalg.lu_factor(a).LU, (A,))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_grad(left, adjoint):
    A = rnd((2, 3, 3), seed=46) + 2 * torch.eye(3, dtype=torch.float64)
    B = rnd((2, 3, 2) if left else (2, 2, 3), seed=47)
    LU, piv = torch.linalg.lu_factor(A)
    LUt, Bt = LU.clone().requires_grad_(), B.clone().requires_grad_()
    LUe, Be = E(LU, True), E(B, True)
    W = rnd(B.shape, seed=48)
    (torch.linalg.lu_solve(LUt, piv, Bt, left=left, adjoint=adjoint) * W).sum().backward()
    (ember.linalg.lu_solve(LUe, E(piv), Be, left=left, adjoint=adjoint) * E(W)).sum().backward()
    close(LUe.grad, LUt.grad, 1e-9)
    close(Be.grad, Bt.grad, 1e-9)
    f = lambda lu, b: ember.linalg.lu_solve(lu, E(piv), b, left=left, adjoint=adjoint)  # noqa: E731
    assert ember.autograd.gradcheck(f, (E(LU, True), E(B, True)))
    assert ember.autograd.gradgradcheck(f, (E(LU, True), E(B, True)))


def test_factor_solve_round_trip_grad():
    """Gradient through lu_factor then lu_solve is the gradient of linalg.solve."""
    A = rnd((3, 3), seed=49) + 2 * torch.eye(3, dtype=torch.float64)
    B = rnd((3, 2), seed=50)
    f = lambda a, b: ember.linalg.lu_solve(*ember.linalg.lu_factor(a), b)  # noqa: E731
    assert ember.autograd.gradcheck(f, (E(A, True), E(B, True)))
    Ae = E(A, True)
    f(Ae, E(B)).sum().backward()
    At = A.clone().requires_grad_()
    torch.linalg.solve(At, B).sum().backward()
    close(Ae.grad, At.grad, 1e-9)


# ------------------------------------------------------------------------------------------------ vmap
def test_vmap():
    A = rnd((4, 3, 3), seed=51)
    B = rnd((4, 3, 2), seed=52)
    close(ember.vmap(lambda a: ember.linalg.lu_factor(a).LU)(E(A)), torch.linalg.lu_factor(A).LU)
    close(ember.vmap(lambda a, b: ember.linalg.solve_triangular(a, b, upper=True))(E(A), E(B)),
          torch.linalg.solve_triangular(A, B, upper=True))
    LU, piv = torch.linalg.lu_factor(A)
    close(ember.vmap(lambda lu, p, b: ember.linalg.lu_solve(lu, p, b))(E(LU), E(piv), E(B)),
          torch.linalg.lu_solve(LU, piv, B))
    for g, r in zip(ember.vmap(ember.linalg.lu)(E(A)), torch.linalg.lu(A)):
        close(g, r)
