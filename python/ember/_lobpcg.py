"""torch.lobpcg: the k extreme eigenpairs of a symmetric (generalized) eigenproblem A x = lambda B x by the
Locally Optimal Block Preconditioned Conjugate Gradient method (Knyazev, SIAM J. Sci. Comput. 23(2), 2001).

Note [lobpcg]
-------------
Each step does a Rayleigh-Ritz projection on the span of S = [X, W, P]: the current block X (n columns),
the preconditioned residuals W = iK (A X - B X diag(E)) and the previous search directions P. S is
made B-orthonormal by SVQB (Stathopoulos & Wu 2002): scale its columns, take the eigendecomposition of
the Gram matrix S^T B S and drop the directions whose eigenvalue is under eps times the largest, so a
basis that became (nearly) dependent costs no accuracy. The n wanted Ritz pairs give the new X; the new
P is the part of the new X outside the old X's span. A pair has converged when its residual norm is
under tol * (||A x|| + |lambda| ||B x||); the iteration stops when the k requested pairs have converged
or after niter steps.
"""
import math

import ember as _E


class _Worker:
    """What `tracker` receives after each step: ivars (counters), fvars (floats), bvars (flags), tvars
    (the current tensors E, X, R)."""

    def __init__(self, ivars, fvars, bvars, tvars):
        self.ivars, self.fvars, self.bvars, self.tvars = ivars, fvars, bvars, tvars


def _matmul(M, X):
    return X if M is None else M @ X


def _b_orthonormal(S, B, eps):
    """A B-orthonormal basis of span(S) (SVQB), dropping directions the columns barely span."""
    for _ in range(2):  # a second pass restores orthonormality lost to rounding in the first
        BS = _matmul(B, S)
        G = S.mT @ BS
        d = G.diagonal().clamp_min(0).sqrt()
        keep = d > 0
        if not bool(keep.all()):
            S, d = S[:, keep], d[keep]
            BS = _matmul(B, S)
            G = S.mT @ BS
        inv_d = 1.0 / d
        G = G * inv_d.unsqueeze(0) * inv_d.unsqueeze(1)
        lam, V = _E.linalg.eigh((G + G.mT) / 2)
        good = lam > eps * lam.abs().max()
        S = (S * inv_d.unsqueeze(0)) @ (V[:, good] / lam[good].sqrt().unsqueeze(0))
    return S


def _rayleigh_ritz(S, A, n, largest):
    """The n extreme Ritz pairs of A on the B-orthonormal basis S, the wanted end first."""
    H = S.mT @ (A @ S)
    theta, C = _E.linalg.eigh((H + H.mT) / 2)
    idx = _E.arange(theta.shape[0] - 1, theta.shape[0] - 1 - n, -1) if largest else _E.arange(n)
    return theta[idx], S @ C[:, idx]


def _solve_one(A, B, X, iK, k, niter, tol, largest, tracker):
    m, n = X.shape
    eps = _E.finfo(A.dtype).eps
    X = _b_orthonormal(X, B, eps)
    if X.shape[1] < n:
        raise ValueError("lobpcg: the initial approximation X has linearly dependent columns")
    E, X = _rayleigh_ritz(X, A, n, largest)
    P = None
    step = 0
    converged = 0
    while True:
        AX, BX = A @ X, _matmul(B, X)
        R = AX - BX * E.unsqueeze(0)
        rnorm = _E.linalg.vector_norm(R, dim=0)
        bound = tol * (_E.linalg.vector_norm(AX, dim=0) + E.abs() * _E.linalg.vector_norm(BX, dim=0))
        ok = (rnorm <= bound).tolist()
        converged = next((i for i, c in enumerate(ok) if not c), len(ok))  # leading pairs that converged
        if tracker is not None:
            tracker(_Worker({"istep": step, "converged_count": converged, "converged_end": converged,
                             "iterations_left": -1 if niter < 0 else niter - step},
                            {"tol": tol}, {"largest": largest}, {"E": E, "X": X, "R": R}))
        if converged >= k or (0 <= niter <= step):
            break
        W = _matmul(iK, R)
        S = _E.cat([X, W] if P is None else [X, W, P], 1)
        S = _b_orthonormal(S, B, eps)
        if S.shape[1] < n:  # the basis collapsed: X is as good as this basis can make it
            break
        E_new, X_new = _rayleigh_ritz(S, A, n, largest)
        P = X_new - X @ (X.mT @ _matmul(B, X_new))  # the new directions, outside span(X)
        X, E = X_new, E_new
        step += 1
    return E[:k], X[:, :k]


def _check(A, B, X, iK, k, n):
    if A.dim() < 2:
        # torch indexes A.shape[-2] first: a 1-D A gives IndexError
        raise IndexError("tuple index out of range")
    if A.shape[-1] != A.shape[-2]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if A.dtype == _E.float16:
        raise KeyError(A.dtype)  # torch has no default tolerance for float16
    if not A.is_floating_point():
        raise RuntimeError(f"lobpcg: expected a floating point A (float32 or float64), got {A.dtype}")
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LPBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than "
                         f"3 x the number of requested eigenpairs (={n})")
    if X is not None and (X.dim() < 2 or X.shape[-2] != m):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")


class _LobpcgFn(_E.autograd.Function):
    """Gradients of the eigenpairs of a symmetric A (B = I): d lambda_i = v_i^T dA v_i and the first-order
    change of v_i, from the pairs inside the block and a solve on the rest of the spectrum."""

    @staticmethod
    def forward(ctx, A, E, V, generalized):
        ctx.generalized = generalized
        ctx.save_for_backward(A, E, V)
        return E.clone(), V.clone()

    @staticmethod
    def backward(ctx, gE, gV):
        if ctx.generalized:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        A, E, V = ctx.saved_tensors
        gA = (V * gE.unsqueeze(-2)) @ V.mT
        if gV is not None:
            k = E.shape[-1]
            diff = E.unsqueeze(-2) - E.unsqueeze(-1)  # [j, i] = lambda_i - lambda_j
            off = ~_E.eye(k, dtype=_E.bool)
            F = _E.where(off, 1.0 / _E.where(off, diff, _E.ones_like(diff)), _E.zeros_like(diff))
            gA = gA + V @ ((V.mT @ gV) * F) @ V.mT  # rotations inside the block
            m = A.shape[-1]
            eye = _E.eye(m, dtype=A.dtype)
            proj = eye - V @ V.mT
            shift = A.abs().sum() + 1.0  # moves the block's own eigenvalues away from each lambda_i
            cols = []
            for i in range(k):
                M = E[..., i, None, None] * eye - A + shift * (V @ V.mT)
                cols.append(proj @ _E.linalg.solve(M, proj @ gV[..., i:i + 1]))
            Y = _E.cat(cols, -1)
            gA = gA + Y @ V.mT
        return (gA + gA.mT) / 2, None, None, None  # A is symmetric: only the symmetric part is a direction


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The k largest (or smallest) eigenpairs of the symmetric positive definite generalized problem
    A x = lambda B x (Note [lobpcg]). A, B, iK: (*, m, m); X: an initial approximation (*, m, n).
    Returns (eigenvalues (*, k), eigenvectors (*, m, k)). `method` ("basic" or "ortho") and the ortho_*
    parameters of torch's implementation select variants of the same iteration; this one orthonormalizes
    every basis (SVQB), which covers both."""
    if not isinstance(A, _E.Tensor):
        raise AttributeError(f"'{type(A).__name__}' object has no attribute 'requires_grad'")
    if X is not None:
        n = X.shape[-1] if X.dim() >= 1 else n
        k = n if k is None else min(k, n)
    else:
        k = 1 if k is None else k
        n = k if n is None else n
        if not isinstance(n, int):
            raise TypeError(f"randn(): argument 'size' failed to unpack the object at pos 2 with error "
                            f"\"type must be tuple of ints,but got {type(n).__name__}\"")
        k = min(k, n)  # as torch: a block smaller than k yields n pairs
    _check(A, B, X, iK, k, n)
    largest = True if largest is None else bool(largest)
    niter = -1 if niter is None or niter == 0 else int(niter)  # torch: 0 and -1 both run until convergence
    tol = math.sqrt(_E.finfo(A.dtype).eps) if tol is None else float(tol)
    batch = tuple(A.shape[:-2])
    m = A.shape[-1]
    if X is None:
        X = _E.randn(batch + (m, n), dtype=A.dtype)
    elif tuple(X.shape[:-2]) != batch:
        raise RuntimeError(f"shape '{list(batch + (m, n))}' is invalid for input of size {X.numel()}")
    with _E.no_grad():
        Ad = A.detach()
        if not batch:
            E, V = _solve_one(Ad, B, X.to(A.dtype), iK, k, niter, tol, largest, tracker)
        else:
            flat = [t.reshape((-1, m, t.shape[-1])) if t is not None else None for t in (Ad, B, X, iK)]
            outs = [_solve_one(flat[0][b], None if B is None else flat[1][b], flat[2][b].to(A.dtype),
                               None if iK is None else flat[3][b], k, niter, tol, largest, tracker)
                    for b in range(flat[0].shape[0])]
            E = _E.stack([o[0] for o in outs]).reshape(batch + (k,))
            V = _E.stack([o[1] for o in outs]).reshape(batch + (m, k))
    if A.requires_grad and _E.is_grad_enabled():
        return _LobpcgFn.apply(A, E, V, B is not None)
    return E, V
