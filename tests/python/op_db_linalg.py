"""Linear-algebra rows for the op table (op_db.py loads this file's OPS).

LAPACK ops get well-conditioned inputs (a random matrix plus n*I; A A^T + n I where a positive-
definite one is needed, (A + A^T)/2 where a symmetric one is), and decompositions are checked
through quantities that do not depend on the sign/gauge of singular/eigen vectors.
"""
import math

import torch

from op_db import COMPLEX, OpInfo, Sample, make_tensor

F = ["float32", "float64"]
FI = ["float32", "float64", "int64"]  # int64: torch raises, so must ember
TOL = {"float32": 1e-4}
# Products and contractions: complex values and complex128 gradients (torch's conjugate convention).
FC = dict(dtypes=F + COMPLEX, grad_dtypes=("float64", "complex128"))
FIC = dict(dtypes=FI + COMPLEX, grad_dtypes=("float64", "complex128"))


def mk(shape, dt, seed, lo=None, hi=None):
    return make_tensor(shape, dt, seed, lo, hi)


def square(shape, dt, seed):
    """A random square matrix (or batch) made diagonally dominant: well-conditioned."""
    n = shape[-1]
    return mk(shape, dt, seed, -1, 1) + (n * torch.eye(n)).to(getattr(torch, dt))


def square_samples(dt):
    return [Sample("2d", square((3, 3), dt, 1)),
            Sample("batched", square((2, 3, 4, 4), dt, 2)),
            Sample("transposed", square((4, 4), dt, 3).t()),
            Sample("1x1", square((1, 1), dt, 4))]


def singular_samples(dt):
    """Exactly singular matrices (LU meets an exact zero pivot): rank n-1, and a batch with an invertible one."""
    a = mk((3, 3), dt, 5)
    a[2] = a[0]
    batch = torch.stack([square((3, 3), dt, 6), a])
    return [Sample("rank1_2x2", torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=getattr(torch, dt))),
            Sample("rank2_3x3", a), Sample("batch_mixed", batch)]


def rect_samples(dt):
    return [Sample("tall", mk((5, 3), dt, 1)), Sample("wide", mk((3, 5), dt, 2)),
            Sample("square", square((4, 4), dt, 3)), Sample("batched", mk((2, 4, 3), dt, 4)),
            Sample("transposed", mk((3, 4), dt, 5).t())]


def pd(lib, a):
    n = a.shape[-1]
    return a @ a.mH + n * lib.eye(n, dtype=a.dtype)


def symm(a):
    return (a + a.mH) / 2  # Hermitian for complex


def L(name, call, samples, **kw):
    kw.setdefault("tol_per_dtype", TOL)
    return OpInfo("linalg." + name, call=call, samples=samples, method=False, **kw)


def _svd_recon(lib, a):
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return (U * (S * S * S).unsqueeze(-2)) @ Vh  # = A A^T A: gauge-invariant, uses U, S and V


def _svd_polar(lib, a):
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return U @ Vh


def _eigh_recon(lib, a, **kw):
    w, V = lib.linalg.eigh(symm(a), **kw)
    return (V * (w * w * w).unsqueeze(-2)) @ V.mH


def _eigh_vecsq(lib, a, **kw):
    w, V = lib.linalg.eigh(symm(a), **kw)
    return V * V.conj() + w.unsqueeze(-2)  # |v|^2: invariant under v -> e^{i phi} v


def _qr_proj(lib, a, mode="reduced"):
    Q, R = lib.linalg.qr(a, mode=mode)
    return Q @ Q.mH + (R.mH @ R).sum()  # both invariant under Q->QD, R->DR (D = diag(+-1))




def expm_samples(dt):
    """Norms below the smallest Padé threshold, in the middle, and above the last one (scaling and
    squaring; the batch mixes matrices that need different numbers of squarings). int64 stays int64
    (torch rejects it)."""
    def scaled(a, s):
        return a * s if a.is_floating_point() or a.is_complex() else a
    big = scaled(mk((3, 3, 3), dt, 4, -1, 1), torch.tensor([0.01, 1.0, 4.0], dtype=torch.float64).view(3, 1, 1))
    return [Sample("tiny", scaled(mk((3, 3), dt, 1, -1, 1), 1e-3)),
            Sample("unit", scaled(mk((4, 4), dt, 2, -1, 1), 0.5)),
            Sample("transposed", mk((3, 3), dt, 3, -1, 1).t()), Sample("batched_scaled", big),
            Sample("1x1", mk((1, 1), dt, 5)), Sample("empty", mk((0, 2, 2), dt, 6))]


def householder_samples(dt):
    """(A, tau) pairs: arbitrary values (the product is defined for any tau), k <= n <= m."""
    return [Sample("tall", mk((5, 3), dt, 1, -1, 1), mk((3,), dt, 2, -1, 1)),
            Sample("fewer_tau", mk((5, 3), dt, 3, -1, 1), mk((2,), dt, 4, -1, 1)),
            Sample("square_batched", mk((2, 4, 4), dt, 5, -1, 1), mk((2, 4), dt, 6, -1, 1)),
            Sample("transposed", mk((3, 4), dt, 7, -1, 1).t(), mk((2,), dt, 8, -1, 1)),
            Sample("no_tau", mk((4, 2), dt, 9), mk((0,), dt, 10))]


def _geqrf_flat(lib, a):
    r = lib.geqrf(a)
    return lib.cat([r.a.reshape(-1), r.tau.reshape(-1)])


def _lstsq_driver_row(driver, field):
    def samples(dt):
        out = [Sample("tall", mk((5, 3), dt, 1), mk((5, 2), dt, 2)),
               Sample("batched", mk((2, 5, 3), dt, 5), mk((1, 5, 2), dt, 6)),
               Sample("vector", mk((5, 3), dt, 7), mk((5,), dt, 8))]
        if field != "residuals":  # wide: empty residuals (torch's carry a grad_fn, ember's do not)
            out.append(Sample("wide", mk((3, 5), dt, 9), mk((3, 2), dt, 10)))
        return out
    return L(f"lstsq_{driver}_{field}", lambda lib, a, b: getattr(lib.linalg.lstsq(a, b, driver=driver), field),
             samples, **FIC, grad=field != "singular_values")
OPS = [
    OpInfo("mv", samples=lambda dt: [Sample("2d", mk((3, 4), dt, 1), mk((4,), dt, 2)),
                                     Sample("transposed", mk((4, 3), dt, 3).t(), mk((4,), dt, 4))],
           **FIC, rtol=1e-5),
    OpInfo("dot", samples=lambda dt: [Sample("1d", mk((5,), dt, 1), mk((5,), dt, 2)),
                                      Sample("strided", mk((10,), dt, 3)[::2], mk((5,), dt, 4))],
           **FIC, rtol=1e-5),
    OpInfo("vdot", samples=lambda dt: [Sample("1d", mk((5,), dt, 1), mk((5,), dt, 2))], **FIC, rtol=1e-5),
    OpInfo("addmm", samples=lambda dt: [
        Sample("2d", mk((3, 5), dt, 1), mk((3, 4), dt, 2), mk((4, 5), dt, 3)),
        Sample("broadcast_beta_alpha", mk((5,), dt, 4), mk((3, 4), dt, 5), mk((4, 5), dt, 6), beta=0.5, alpha=2),
        Sample("transposed", mk((3, 5), dt, 7), mk((4, 3), dt, 8).t(), mk((4, 5), dt, 9))],
        **FC, rtol=1e-5),
    OpInfo("addmm_beta0", call=lambda lib, i, a, b: lib.addmm(i, a, b, beta=0),
           samples=lambda dt: [Sample("nan_input", torch.full((3, 5), math.nan, dtype=getattr(torch, dt)),
                                      mk((3, 4), dt, 2), mk((4, 5), dt, 3))], **FC, rtol=1e-5, grad=False),
    OpInfo("addmv", samples=lambda dt: [
        Sample("1d", mk((3,), dt, 1), mk((3, 4), dt, 2), mk((4,), dt, 3)),
        Sample("beta_alpha", mk((1,), dt, 4), mk((3, 4), dt, 5), mk((4,), dt, 6), beta=2, alpha=-1)],
        **FC, rtol=1e-5),
    OpInfo("baddbmm", samples=lambda dt: [
        Sample("3d", mk((2, 3, 5), dt, 1), mk((2, 3, 4), dt, 2), mk((2, 4, 5), dt, 3)),
        Sample("broadcast", mk((3, 5), dt, 4), mk((2, 3, 4), dt, 5), mk((2, 4, 5), dt, 6), beta=0.5, alpha=3)],
        **FC, rtol=1e-5),
    OpInfo("addbmm", samples=lambda dt: [
        Sample("3d", mk((3, 5), dt, 1), mk((2, 3, 4), dt, 2), mk((2, 4, 5), dt, 3)),
        Sample("beta_alpha", mk((5,), dt, 4), mk((2, 3, 4), dt, 5), mk((2, 4, 5), dt, 6), beta=2, alpha=0.5)],
        **FC, rtol=1e-5),
    OpInfo("einsum", samples=lambda dt: [
        Sample("mm", "ij,jk->ik", mk((3, 4), dt, 1), mk((4, 5), dt, 2)),
        Sample("bmm", "bij,bjk->bik", mk((2, 3, 4), dt, 3), mk((2, 4, 5), dt, 4)),
        Sample("trace", "ii", mk((4, 4), dt, 5)),
        Sample("diag", "ii->i", mk((4, 4), dt, 6)),
        Sample("transpose", "ij->ji", mk((3, 4), dt, 7)),
        Sample("sum", "ij->", mk((3, 4), dt, 8)),
        Sample("outer", "i,j->ij", mk((3,), dt, 9), mk((4,), dt, 10)),
        Sample("dot", "i,i->", mk((5,), dt, 11), mk((5,), dt, 12)),
        Sample("implicit", "ij,jk", mk((3, 4), dt, 13), mk((4, 5), dt, 14)),
        Sample("ellipsis", "...ij,...jk->...ik", mk((2, 3, 4), dt, 15), mk((4, 2), dt, 16)),
        Sample("ellipsis_broadcast", "b...,...->b...", mk((2, 3, 1), dt, 17), mk((4,), dt, 18)),
        Sample("three", "ij,jk,kl->il", mk((2, 3), dt, 19), mk((3, 4), dt, 20), mk((4, 2), dt, 21)),
        Sample("batch_trace", "bii->b", mk((3, 4, 4), dt, 22)),
        Sample("bilinear", "bn,anm,bm->ba", mk((2, 3), dt, 23), mk((4, 3, 5), dt, 24), mk((2, 5), dt, 25)),
        Sample("repeated_mixed", "iij,jk->ik", mk((3, 3, 4), dt, 26), mk((4, 2), dt, 27)),
        Sample("transposed", "ij,jk->ik", mk((4, 3), dt, 28).t(), mk((4, 5), dt, 29)),
    ], **FIC, rtol=1e-5, method=False),
    # Sublist form: integer labels per operand, an optional output sublist, Ellipsis for "...".
    OpInfo("einsum_sublist", call=lambda lib, *a: lib.einsum(*a), samples=lambda dt: [
        Sample("mm", mk((3, 4), dt, 1), [0, 1], mk((4, 5), dt, 2), [1, 2], [0, 2]),
        Sample("implicit", mk((3, 4), dt, 3), [30, 1], mk((4, 5), dt, 4), [1, 0]),
        Sample("ellipsis", mk((2, 3, 4), dt, 5), [Ellipsis, 0, 1], mk((4, 2), dt, 6), [1, 2], [Ellipsis, 0, 2]),
        Sample("ellipsis_implicit", mk((2, 3), dt, 7), [0, Ellipsis], mk((2,), dt, 8), [0]),
        Sample("trace", mk((4, 4), dt, 9), [51, 51]),
        Sample("outer", mk((3,), dt, 10), [5], mk((2,), dt, 11), [7], [7, 5]),
    ], **FIC, rtol=1e-5, method=False),
    OpInfo("tensordot", samples=lambda dt: [
        Sample("int", mk((2, 3, 4), dt, 1), mk((3, 4, 5), dt, 2), dims=2),
        Sample("zero", mk((2, 3), dt, 3), mk((4,), dt, 4), dims=0),
        Sample("lists", mk((3, 4, 5), dt, 5), mk((4, 3, 2), dt, 6), dims=([0, 1], [1, 0])),
        Sample("default", mk((2, 3, 4), dt, 7), mk((3, 4), dt, 8))], **FIC, rtol=1e-5, method=False),
    OpInfo("linalg.matmul", call=lambda lib, a, b: lib.linalg.matmul(a, b), method=False,
           samples=lambda dt: [Sample("bmm", mk((2, 3, 4), dt, 1), mk((4, 2), dt, 2))], **FC, rtol=1e-5),
    L("inv", lambda lib, a: lib.linalg.inv(a), square_samples, **FIC),
    L("det", lambda lib, a: lib.linalg.det(a), square_samples, **FIC),
    # Note [det gradient on singular input] (lapack.cpp): torch's plain backward() returns zeros for
    # exactly singular input; its create_graph=True path gives the cofactor matrix, so compare with that.
    L("det_singular", lambda lib, a: lib.det(a), singular_samples, dtypes=F, grad_ref_create_graph=True),
    L("slogdet_logabs", lambda lib, a: lib.linalg.slogdet(a).logabsdet,
      lambda dt: square_samples(dt) + [Sample("negative", -square((3, 3), dt, 9))], **FIC),
    L("slogdet_sign", lambda lib, a: lib.linalg.slogdet(a).sign,
      lambda dt: square_samples(dt) + [Sample("negative", -square((3, 3), dt, 9))], dtypes=F + COMPLEX, grad=False),
    # The complex sign's gradient (its phase) is checked in test_complex.py (forward AD lacks complex).
    L("solve", lambda lib, a, b, **k: lib.linalg.solve(a, b, **k), lambda dt: [
        Sample("matrix", square((3, 3), dt, 1), mk((3, 2), dt, 2)),
        Sample("vector", square((3, 3), dt, 3), mk((3,), dt, 4)),
        Sample("batched_broadcast", square((2, 3, 3), dt, 5), mk((3, 4), dt, 6)),
        Sample("batch_vectors", square((2, 3, 3), dt, 7), mk((2, 3), dt, 8)),
        Sample("right", square((3, 3), dt, 9), mk((2, 3), dt, 10), left=False)], **FIC),
    L("cholesky", lambda lib, a, **k: lib.linalg.cholesky(pd(lib, a), **k), lambda dt: [
        Sample("2d", mk((3, 3), dt, 1)), Sample("batched", mk((2, 4, 4), dt, 2)),
        Sample("upper", mk((3, 3), dt, 3), upper=True)], **FC),
    L("qr", _qr_proj, lambda dt: [Sample("tall", mk((5, 3), dt, 1)), Sample("square", square((4, 4), dt, 2)),
                                  Sample("wide", mk((3, 5), dt, 3)), Sample("batched", mk((2, 4, 3), dt, 4))],
      **FC),
    L("svd", _svd_recon, rect_samples, **FC),
    L("svd_polar", _svd_polar, rect_samples, **FC),
    L("svdvals", lambda lib, a: lib.linalg.svdvals(a), rect_samples, **FIC),
    L("eigh", _eigh_recon, lambda dt: [Sample("2d", mk((4, 4), dt, 1)), Sample("batched", mk((2, 3, 3), dt, 2)),
                                       Sample("upper", mk((3, 3), dt, 3), UPLO="U")], **FC),
    L("eigh_vectors", _eigh_vecsq, lambda dt: [Sample("2d", mk((4, 4), dt, 1)),
                                               Sample("batched", mk((2, 3, 3), dt, 2))], **FC),
    L("eigvalsh", lambda lib, a, **k: lib.linalg.eigvalsh(symm(a), **k),
      lambda dt: [Sample("2d", mk((4, 4), dt, 1)), Sample("upper", mk((3, 3), dt, 3), UPLO="U")], **FC),
    L("eigvalsh_uplo_raw", lambda lib, a, **k: lib.linalg.eigvalsh(a, **k),
      lambda dt: [Sample("lower", mk((4, 4), dt, 1)), Sample("upper", mk((4, 4), dt, 1), UPLO="U")],
      dtypes=FI + COMPLEX, grad=False),
    L("lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, lambda dt: [
        Sample("tall", mk((5, 3), dt, 1), mk((5, 2), dt, 2)),
        Sample("square", square((3, 3), dt, 3), mk((3, 2), dt, 4)),
        Sample("batched", mk((2, 5, 3), dt, 5), mk((1, 5, 2), dt, 6)),
        Sample("vector", mk((5, 3), dt, 7), mk((5,), dt, 8))], **FIC),
    # Other drivers: residuals for tall full-rank systems (not gelsy), singular values from gelsd/gelss.
    *[_lstsq_driver_row(d, field) for d in ["gels", "gelsd", "gelss"]
      for field in ["solution", "residuals", "singular_values"]],
    L("lstsq_wide_residuals", lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gelsd").residuals, lambda dt: [
        Sample("wide", mk((3, 5), dt, 9), mk((3, 2), dt, 10))], dtypes=FI + COMPLEX, grad=False),
    L("pinv", lambda lib, a, **k: lib.linalg.pinv(a, **k), rect_samples, **FC),
    L("pinv_hermitian", lambda lib, a: lib.linalg.pinv(symm(a), hermitian=True),
      lambda dt: [Sample("2d", square((3, 3), dt, 7)), Sample("batched", square((2, 4, 4), dt, 8))], **FC),
    L("matrix_rank", lambda lib, a, **k: lib.linalg.matrix_rank(a, **k), lambda dt: rect_samples(dt) + [
        Sample("deficient", mk((4, 2), dt, 8) @ mk((2, 4), dt, 9)),
        Sample("atol", mk((4, 4), dt, 10), atol=1.0),
        Sample("hermitian", symm(mk((4, 2), dt, 11) @ mk((2, 4), dt, 12)), hermitian=True)],
        dtypes=F + COMPLEX, grad=False),
    L("matrix_power", lambda lib, a, n: lib.linalg.matrix_power(a, n), lambda dt: [
        Sample("p0", square((3, 3), dt, 1), 0), Sample("p1", square((3, 3), dt, 2), 1),
        Sample("p3", square((2, 3, 3), dt, 3), 3), Sample("p5", square((3, 3), dt, 5), 5),
        Sample("neg2", square((3, 3), dt, 4), -2)], **FC, rtol=1e-4),
    L("cross", lambda lib, a, b, **k: lib.linalg.cross(a, b, **k), lambda dt: [
        Sample("2d", mk((4, 3), dt, 1), mk((4, 3), dt, 2)),
        Sample("broadcast", mk((2, 1, 3), dt, 3), mk((1, 4, 3), dt, 4)),
        Sample("dim0", mk((3, 4), dt, 5), mk((3, 4), dt, 6), dim=0)], dtypes=FI + COMPLEX,
      grad_dtypes=("float64", "complex128")),
    L("norm", lambda lib, a, *r, **k: lib.linalg.norm(a, *r, **k), lambda dt: [
        Sample("default", mk((3, 4), dt, 1)), Sample("vector", mk((5,), dt, 2)),
        Sample("v1", mk((5,), dt, 3), 1), Sample("v3", mk((5,), dt, 4), 3),
        Sample("vinf", mk((5,), dt, 5), math.inf), Sample("vneginf", mk((5,), dt, 6), -math.inf),
        Sample("vhalf", mk((5,), dt, 7, 0.5, 2), 0.5),
        Sample("dim", mk((3, 4), dt, 8), 2, 1), Sample("dim_keep", mk((3, 4), dt, 9), None, 0, True),
        Sample("fro", mk((3, 4), dt, 10), "fro"), Sample("nuc", mk((3, 4), dt, 11), "nuc"),
        Sample("m1", mk((3, 4), dt, 12), 1), Sample("mneg1", mk((3, 4), dt, 13), -1),
        Sample("minf", mk((3, 4), dt, 14), math.inf), Sample("mneginf", mk((3, 4), dt, 15), -math.inf),
        Sample("m2", mk((3, 4), dt, 16), 2), Sample("mneg2", mk((3, 4), dt, 17), -2),
        Sample("batched_dims", mk((2, 3, 4), dt, 18), "fro", (0, 2)),
        Sample("batched_nuc_keep", mk((2, 3, 4), dt, 19), "nuc", (1, 2), True),
        Sample("m1_dims_keep", mk((2, 3, 4), dt, 20), 1, (2, 1), True)], **FC),
    L("matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), expm_samples, **FIC, rtol=1e-10, grad_rtol=1e-9,
      tol_per_dtype={"float32": 1e-4, "complex64": 1e-4}),
    L("householder_product", lambda lib, a, tau: lib.linalg.householder_product(a, tau), householder_samples, **FIC,
      rtol=1e-10, tol_per_dtype={"float32": 1e-5, "complex64": 1e-5}),
    # torch.geqrf has no derivative (both raise on backward); a and tau as one flat tensor.
    OpInfo("geqrf", call=_geqrf_flat,
           samples=lambda dt: rect_samples(dt) + [Sample("batched_empty", mk((2, 0, 3), dt, 9))],
           dtypes=FI + COMPLEX, grad=False, method=False, rtol=1e-10,
           tol_per_dtype={"float32": 1e-4, "complex64": 1e-4}),
    L("norm_ord0", lambda lib, a: lib.linalg.norm(a, 0), lambda dt: [Sample("v", mk((5,), dt, 1))], dtypes=F,
      grad=False),
]
