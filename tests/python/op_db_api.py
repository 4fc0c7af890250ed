"""Op table rows for the names added for API breadth (issue 18): the special functions, i0/mvlgamma/nextafter,
nn entry points at top level and the solvers written in python/ember/_api_math.py. The generic tests in
test_ops.py check values over dtypes and layouts, gradients (against torch and gradcheck), second
derivatives, and the `errors` listed here against torch's exception types."""
from op_db import FLOATS, INTS, OpInfo, Sample, binary_samples, make_tensor, unary_samples

NUM = INTS + FLOATS
F64 = {"float64": 1e-10}  # series/asymptotic compositions: a few ulps more than torch's kernels


def _special(name, low=None, high=None, dtypes=NUM, **kw):
    kw.setdefault("tol_per_dtype", F64)
    return OpInfo(f"special.{name}", call=lambda lib, *a, **k: getattr(lib.special, name)(*a, **k),
                  samples=lambda dt: unary_samples(dt, low, high), dtypes=dtypes, method=False, **kw)


def _pd(dt, n, seed):
    a = make_tensor((n, n), dt, seed, -1, 1)
    return a @ a.mT + n * __import__("torch").eye(n, dtype=a.dtype)


def _tri_samples(dt):
    L = __import__("torch").linalg.cholesky(_pd(dt, 3, 1))
    return [Sample("2d", make_tensor((3, 2), dt, 2), L), Sample("batched", make_tensor((2, 3, 3), dt, 3),
                                                                 __import__("torch").linalg.cholesky(
                                                                     _pd(dt, 3, 4)).expand(2, 3, 3))]


def _square(dt, n, seed):
    """A matrix with well-separated pivots: LU's pivot choice is stable under gradcheck's perturbations."""
    import torch
    perm = torch.tensor([[0.0, 3.0, 0.0, 0.0], [4.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.5], [0.0, 0.0, 5.0, 0.0]])
    return make_tensor((n, n), dt, seed, -0.5, 0.5) + perm[:n, :n].to(getattr(torch, dt))


OPS = [
    OpInfo("i0", samples=lambda dt: unary_samples(dt, -6, 6), dtypes=NUM, tol_per_dtype=F64,
           errors=(lambda lib: lib.i0(lib.ones(2, dtype=lib.complex64)),)),
    _special("i0e", -40, 40), _special("i1", -6, 6), _special("i1e", -40, 40),
    _special("ndtr", -5, 5), _special("ndtri", 0.02, 0.98, dtypes=FLOATS), _special("log_ndtr", -20, 5),
    _special("erfcx", -2, 30, dtypes=FLOATS, errors=(lambda lib: lib.special.erfcx(lib.tensor([1j])),)),
    _special("entr", 0.1, 3),
    _special("spherical_bessel_j0", -8, 8, grad=False),
    # no derivative in torch either; torch's own J/Y are accurate to ~5e-7 only (test_api_names.py checks scipy)
    _special("modified_bessel_k0", 0.1, 30, grad=False), _special("modified_bessel_k1", 0.1, 30, grad=False),
    _special("scaled_modified_bessel_k0", 0.1, 30, grad=False),
    _special("scaled_modified_bessel_k1", 0.1, 30, grad=False),
    _special("bessel_j0", -30, 30, grad=False, tol_per_dtype={"float64": 2e-6}),
    _special("bessel_j1", -30, 30, grad=False, tol_per_dtype={"float64": 2e-6}),
    _special("bessel_y0", 0.1, 30, grad=False, tol_per_dtype={"float64": 2e-6}),
    _special("bessel_y1", 0.1, 30, grad=False, tol_per_dtype={"float64": 2e-6}),
    OpInfo("special.xlog1py", call=lambda lib, x, y: lib.special.xlog1py(x, y),
           samples=lambda dt: binary_samples(dt, -2, 2, 0, 3), dtypes=FLOATS, method=False),
    OpInfo("mvlgamma", call=lambda lib, x: lib.mvlgamma(x, 3), samples=lambda dt: unary_samples(dt, 1.5, 6),
           dtypes=FLOATS, tol_per_dtype=F64, errors=(lambda lib: lib.mvlgamma(lib.ones(2) * 3, 0),)),
    OpInfo("special.multigammaln", call=lambda lib, x: lib.special.multigammaln(x, 2),
           samples=lambda dt: unary_samples(dt, 1, 6), dtypes=FLOATS, tol_per_dtype=F64, method=False),
    OpInfo("special.zeta", call=lambda lib, x, q: lib.special.zeta(x, q),
           samples=lambda dt: binary_samples(dt, 1.5, 6, 0.5, 4), dtypes=["float32", "float64"], grad=False,
           tol_per_dtype=F64, method=False),
    OpInfo("nextafter", samples=lambda dt: [s for s in binary_samples(dt) if s.name != "python_scalar"],
           dtypes=["float32", "float64", "int64"], grad=False),
] + [
    OpInfo(f"special.{p}", call=lambda lib, x, p=p: getattr(lib.special, p)(x, 4),
           samples=lambda dt: unary_samples(dt, -1, 1), dtypes=["float32", "float64"], grad=False, method=False)
    for p in ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "hermite_polynomial_h", "hermite_polynomial_he",
              "laguerre_polynomial_l", "legendre_polynomial_p"]
] + [
    OpInfo("hardshrink", call=lambda lib, x: lib.hardshrink(x, 0.7), samples=lambda dt: unary_samples(dt),
           dtypes=FLOATS),
    OpInfo("rsub", call=lambda lib, x, y: lib.rsub(x, y, alpha=2),
           samples=lambda dt: [s for s in binary_samples(dt) if s.name != "python_scalar"],
           dtypes=["int64"] + FLOATS, method=False),
    OpInfo("cosine_similarity", call=lambda lib, x, y: lib.cosine_similarity(x, y, 1),
           samples=lambda dt: [Sample("same", make_tensor((3, 4), dt, 1), make_tensor((3, 4), dt, 2)),
                               Sample("broadcast", make_tensor((3, 4), dt, 3), make_tensor((1, 4), dt, 4))],
           dtypes=["float32", "float64"], method=False,
           errors=(lambda lib: lib.cosine_similarity(lib.ones(2, 3), lib.ones(2, 4)),)),
    OpInfo("pairwise_distance", call=lambda lib, x, y: lib.pairwise_distance(x, y),
           samples=lambda dt: [Sample("same", make_tensor((3, 4), dt, 1), make_tensor((3, 4), dt, 2))],
           dtypes=["float32", "float64"], method=False),
    OpInfo("index_reduce", call=lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 2, 0, 3, 2]), s, "prod"),
           samples=lambda dt: [Sample("rows", make_tensor((4, 3), dt, 1, 0.5, 2), make_tensor((5, 3), dt, 2, 0.5, 2))],
           dtypes=["float32", "float64"], method=True,
           errors=(lambda lib: lib.index_reduce(lib.ones(3), 0, lib.tensor([0]), lib.ones(1), "sum"),)),
    # torch's factor gradients are dense although only the lower triangle is read: tril() in the call makes
    # both sides differentiate the same function.
    OpInfo("cholesky_solve", call=lambda lib, b, L: lib.cholesky_solve(b, L.tril()), samples=_tri_samples,
           dtypes=["float32", "float64"], tol_per_dtype={"float32": 1e-4},
           errors=(lambda lib: lib.cholesky_solve(lib.ones(3), lib.eye(3)),)),
    OpInfo("linalg.solve_triangular", call=lambda lib, b, L: lib.linalg.solve_triangular(L, b, upper=False),
           samples=_tri_samples, dtypes=["float32", "float64"], tol_per_dtype={"float32": 1e-4}, method=False),
    # torch's forward-AD formula for cholesky_inverse disagrees with its own reverse-mode JVP
    # (torch.autograd.functional.jvp); ember agrees with the reverse mode, which the tests check.
    OpInfo("cholesky_inverse", call=lambda lib, L: lib.cholesky_inverse(L.tril()),
           samples=lambda dt: [Sample("2d", __import__("torch").linalg.cholesky(_pd(dt, 3, 5)))],
           dtypes=["float32", "float64"], tol_per_dtype={"float32": 1e-4}, grad_ref_create_graph=True),
    OpInfo("linalg.lu_factor", call=lambda lib, A: lib.linalg.lu_factor(A).LU,
           samples=lambda dt: [Sample("2d", _square(dt, 4, 1)), Sample("3x3", _square(dt, 3, 2)),
                               Sample("batched", __import__("torch").stack([_square(dt, 3, 3), _square(dt, 3, 4)]))],
           dtypes=["float32", "float64"], tol_per_dtype={"float32": 1e-4}, method=False,
           errors=(lambda lib: lib.linalg.lu_factor(lib.ones(3)),)),
    OpInfo("linalg.lu_solve", call=lambda lib, A, B: lib.linalg.lu_solve(*lib.linalg.lu_factor(A), B),
           samples=lambda dt: [Sample("2d", _square(dt, 4, 1), make_tensor((4, 2), dt, 2))],
           dtypes=["float32", "float64"], tol_per_dtype={"float32": 1e-4}, method=False),
    OpInfo("linalg.vecdot", call=lambda lib, x, y: lib.linalg.vecdot(x, y),
           samples=lambda dt: [Sample("same", make_tensor((3, 4), dt, 1), make_tensor((3, 4), dt, 2)),
                               Sample("broadcast", make_tensor((3, 1, 4), dt, 3), make_tensor((2, 4), dt, 4))],
           dtypes=["float32", "float64"], method=False),
    OpInfo("linalg.multi_dot", call=lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
           samples=lambda dt: [Sample("chain", make_tensor((2, 3), dt, 1), make_tensor((3, 4), dt, 2),
                                      make_tensor((4, 2), dt, 3))],
           dtypes=["float32", "float64"], tol_per_dtype={"float32": 1e-5}, method=False),
    # eigenvalues of a general matrix (complex, viewed as (re, im) pairs so the row is real-valued)
    OpInfo("linalg.eigvals", call=lambda lib, A: lib.view_as_real(lib.linalg.eigvals(A)),
           samples=lambda dt: [Sample("2d", _square(dt, 3, 1)), Sample("4x4", _square(dt, 4, 2)),
                               Sample("batched", __import__("torch").stack([_square(dt, 3, 3), _square(dt, 3, 4)]))],
           dtypes=["float32", "float64"], tol_per_dtype={"float32": 1e-4}, method=False,
           errors=(lambda lib: lib.linalg.eigvals(lib.ones(2, 3)),)),
]
