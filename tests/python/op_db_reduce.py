"""Op table rows for reductions, scans and sorting (see op_db.py for what the generic tests check).

Ops returning (values, indices) get one row per field: `<op>.values` (with gradients) and
`<op>.indices`. Index rows use float samples of distinct values, or ints where ties are resolved
the same documented way (first occurrence for max/min/argmax, last for cummax/cummin).
"""
import itertools
import math

import torch

from op_db import ALL, COMPLEX, FLOATS, NUMERIC, OpInfo, Sample, binary_samples, make_tensor, reduction_samples

F32_64 = ["float32", "float64"]
CGRAD = ("float64", "complex128")  # gradients checked in complex128 too (torch's conjugate convention)


def _mk(dt, low=None, high=None):
    return lambda shape, seed: make_tensor(shape, dt, seed, low, high)  # noqa: E731


def dim_samples(dt, low=None, high=None, keepdim=True, extra=()):
    """One reduced dim: each dim of a 2-d input with and without keepdim, 0-d, 3-d, transposed,
    strided, and an empty input whose reduced dim is not empty."""
    mk = _mk(dt, low, high)
    out = []
    for dim, kd in itertools.product([0, 1, -1], [False, True] if keepdim else [None]):
        kw = {} if kd is None else {"keepdim": kd}
        out.append(Sample(f"dim{dim}_keep{kd}", mk((3, 4), 1), dim, *extra, **kw))
    out += [
        Sample("0d", mk((), 2), 0, *extra),
        Sample("3d_dim1", mk((2, 3, 4), 3), 1, *extra),
        Sample("transposed", mk((5, 4), 4).t(), 1, *extra),
        Sample("strided", mk((6, 8), 5)[::2, 1::3], 0, *extra),
        Sample("empty_other", mk((0, 3), 6), 1, *extra),
    ]
    return out


def scan_samples(dt, low=None, high=None):
    mk = _mk(dt, low, high)
    return [
        Sample("dim0", mk((3, 4), 1), 0),
        Sample("dim1", mk((3, 4), 2), 1),
        Sample("dim_neg", mk((2, 3, 4), 3), -2),
        Sample("0d", mk((), 4), 0),
        Sample("transposed", mk((5, 4), 5).t(), 1),
        Sample("empty", mk((0, 3), 6), 0),
        Sample("long_row", mk((2, 70), 7), 1),
    ]


def with_nans(dt, samples):
    """For float dtypes, some elements of each tensor argument set to NaN."""
    if dt not in FLOATS:
        return samples
    out = []
    for s in samples:
        args = []
        for a in s.args:
            if isinstance(a, torch.Tensor) and a.numel() > 2:
                m = torch.zeros(a.numel(), dtype=torch.bool)
                m[::3] = True
                a = a.masked_fill(m.reshape(a.shape), math.nan)
            args.append(a)
        out.append(Sample(s.name, *args, **s.kwargs))
    return out


def _lib_dtype(lib, kwargs):
    """Sample kwargs name dtypes as strings (samples are shared by both libraries)."""
    if isinstance(kwargs.get("dtype"), str):
        kwargs = dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
    return kwargs


def call_fn(path):
    """Call lib.<path>(*args, **kwargs) with string dtypes resolved."""
    def call(lib, *a, **k):
        f = lib
        for part in path.split("."):
            f = getattr(f, part)
        return f(*a, **_lib_dtype(lib, k))
    return call


def field(name, i, **kw):
    """A row for field i of a (values, indices) op."""
    return OpInfo(f"{name}.{'values' if i == 0 else 'indices'}",
                  call=lambda lib, *a, **k: getattr(lib, name)(*a, **k)[i], grad=(i == 0) and kw.pop("grad", True),
                  **kw)


def _full_or_dim(dt):
    return [Sample("full", make_tensor((3, 4), dt, 1))] + dim_samples(dt)


def _sort_samples(dt, **kw):
    """With stable= given, dim and descending must be keywords too (torch's overloads)."""
    mk = _mk(dt)
    return [
        Sample("last", mk((3, 5), 1), **kw),
        Sample("dim0", mk((4, 3), 2), dim=0, **kw),
        Sample("desc", mk((3, 5), 3), dim=-1, descending=True, **kw),
        Sample("0d", mk((), 4), **kw),
        Sample("empty", mk((0, 3), 5), **kw),
        Sample("transposed", mk((5, 4), 6).t(), dim=1, **kw),
        Sample("long", mk((2, 200), 7), **kw),
    ]


def _topk_samples(dt):
    mk = _mk(dt)
    return [
        Sample("k2", mk((3, 5), 1), 2),
        Sample("k0", mk((3, 5), 2), 0),
        Sample("smallest", mk((3, 5), 3), 3, largest=False),
        Sample("dim0", mk((4, 3), 4), 2, 0),
        Sample("all", mk((6,), 5), 6),
        Sample("0d", mk((), 6), 1),
        Sample("0d_k0", mk((), 7), 0),  # torch gives the element itself; the scan kernel once read past k = 0 items
    ]


def _kth_samples(dt):
    mk = _mk(dt)
    return [
        Sample("k1", mk((3, 5), 1), 1),
        Sample("k3", mk((3, 5), 2), 3),
        Sample("keep", mk((3, 5), 3), 5, 1, True),
        Sample("dim0", mk((4, 3), 4), 2, 0),
        Sample("0d", mk((), 5), 1),
    ]


def quantile_call(name):
    """q is given as a list (not a tensor, so the gradient tests leave it alone) or a number;
    ("0d", v) makes a 0-d q tensor."""
    def call(lib, x, q, *a, **k):
        if isinstance(q, list):
            q = lib.tensor(q, dtype=x.dtype)
        elif isinstance(q, tuple):
            q = lib.tensor(q[1], dtype=x.dtype)
        return getattr(lib, name)(x, q, *a, **k)
    return call


def _quantile_samples(dt):
    mk = _mk(dt)
    q = [0.0, 0.25, 0.6, 1.0]
    out = [
        Sample("scalar_q", mk((3, 5), 1), 0.3),
        Sample("tensor_q", mk((3, 5), 2), q),
        Sample("dim", mk((3, 5), 3), q, 1),
        Sample("dim_keep", mk((3, 5), 4), q, 0, True),
        Sample("scalar_dim_keep", mk((3, 5), 5), 0.7, 1, True),
        Sample("all_keep", mk((3, 5), 6), q, keepdim=True),
        Sample("0d_q", mk((4,), 7), ("0d", 0.6)),
        Sample("0d_input", mk((), 8), q),
    ]
    for m in ("lower", "higher", "midpoint", "nearest"):
        out.append(Sample(m, mk((3, 6), 9), q, 1, interpolation=m))
    return out


def _norm_samples(dt):
    mk = _mk(dt)
    out = [Sample("default", mk((3, 4), 1))]
    for p in [1, 2, 3, 0.5, 1.5, math.inf, -math.inf, -2]:  # p=0 has no gradient: norm.p0
        out.append(Sample(f"p{p}", mk((3, 4), 2), p))
        out.append(Sample(f"p{p}_dim", mk((3, 4), 3), p, 1))
    out += [
        Sample("fro_dim", mk((3, 4), 4), "fro", 1, True),
        Sample("fro_2dims", mk((2, 3, 4), 5), "fro", (1, 2)),
        Sample("p2_dims_keep", mk((2, 3, 4), 6), 2, (0, 2), True),
        Sample("transposed", mk((4, 3), 7).t(), 2, 0),
        Sample("0d", mk((), 8), 2),
    ]
    return out


def _vector_norm_samples(dt):
    mk = _mk(dt)
    out = []
    for ord in [2, 1, 3, 0.5, math.inf, -math.inf, -1]:
        out.append(Sample(f"ord{ord}", mk((3, 4), 1), ord))
        out.append(Sample(f"ord{ord}_dim", mk((3, 4), 2), ord, 1, True))
    out += [
        Sample("dims", mk((2, 3, 4), 3), 2, (0, 2)),
        Sample("dtype", mk((3, 4), 4), 2, dtype="complex128" if dt in COMPLEX else "float64"),
        Sample("empty_2", mk((0, 3), 5), 2),
    ]
    return out


def _matrix_norm_samples(dt):
    mk = _mk(dt)
    out = []
    for ord in ["fro", 1, -1, math.inf, -math.inf]:
        out.append(Sample(f"ord{ord}", mk((3, 4), 1), ord))
        out.append(Sample(f"ord{ord}_batched_keep", mk((2, 3, 4), 2), ord, keepdim=True))
        out.append(Sample(f"ord{ord}_dims", mk((3, 2, 4), 3), ord, (0, 2)))
    return out


def _var_samples(dt):
    mk = _mk(dt)
    return [
        Sample("all", mk((3, 4), 1)),
        Sample("dim1", mk((3, 4), 2), 1),
        Sample("dims_keep", mk((2, 3, 4), 3), (0, 2), keepdim=True),
        Sample("unbiased_false", mk((3, 4), 4), 1, False),
        Sample("unbiased_pos_keep", mk((3, 4), 5), 0, True, True),
        Sample("correction0", mk((3, 4), 6), 1, correction=0),
        Sample("correction2", mk((3, 5), 7), 1, correction=2),
        Sample("transposed", mk((4, 3), 8).t(), 0),
        Sample("long_rows", mk((2, 300), 9), 1),
        Sample("long_cols", mk((300, 3), 10), 0),
    ]


def _softmax_samples(dt):
    mk = _mk(dt, -6, 6)
    return [
        Sample("last", mk((3, 5), 1), -1),
        Sample("dim0", mk((3, 5), 2), 0),
        Sample("3d_mid", mk((2, 3, 4), 3), 1),
        Sample("long_row", mk((2, 77), 4), 1),
        Sample("0d", mk((), 5), 0),
        Sample("empty", mk((0, 3), 6), 1),
        Sample("transposed", mk((5, 4), 7).t(), 1),
        Sample("dtype", mk((3, 5), 8), 1, dtype="float64"),
    ]


def _amax_samples(dt):
    mk = _mk(dt)
    return reduction_samples(dt) + [
        Sample("dims_list", mk((2, 3, 4), 9), [0, -1]),
        Sample("empty_other", mk((0, 3), 10), 1),
    ]


def _lse_samples(dt):
    mk = _mk(dt)
    return [
        Sample("dim1", mk((3, 4), 1), 1),
        Sample("dims_keep", mk((2, 3, 4), 2), (0, 2), True),
        Sample("dim0", mk((3, 4), 3), 0),
        Sample("0d", mk((), 4), 0),
        Sample("long", mk((2, 100), 5), 1),
        Sample("transposed", mk((4, 3), 6).t(), 0),
    ]


def _cum_dtype_samples(dt):
    return scan_samples(dt) + [Sample("dtype", make_tensor((3, 4), dt, 9), 1,
                                      dtype="complex128" if dt in COMPLEX else "float64")]


def _all_any_samples(dt):
    mk = _mk(dt, 0, 2)  # plenty of zeros
    return reduction_samples(dt, 0, 2) + [
        Sample("empty", mk((0, 3), 11)),
        Sample("empty_dim0", mk((0, 3), 12), 0),
    ]


def _sum_out_samples(dt):
    mk = _mk(dt)
    return [
        Sample("dtype_f64", mk((3, 4), 1), 1, dtype="float64"),
        Sample("dtype_keep", mk((3, 4), 2), (0, 1), True, dtype="float64"),
    ]


def _prod_samples(dt):
    mk = _mk(dt, 0.5, 2) if dt in FLOATS + COMPLEX else _mk(dt, -3, 4)
    out = [Sample("all", mk((3, 4), 1)), Sample("0d", mk((), 2))]
    for dim, kd in itertools.product([0, 1, -1], [False, True]):
        out.append(Sample(f"dim{dim}_keep{kd}", mk((3, 4), 3), dim, kd))
    out += [Sample("transposed", mk((4, 3), 4).t(), 0), Sample("empty", mk((0, 3), 5), 0),
            Sample("dtype", mk((3, 4), 6), 1, dtype="float64")]
    return out


def _tensor_pairs(dt):
    """binary_samples without the Python-number one (torch.maximum takes tensors only)."""
    return [s for s in binary_samples(dt) if s.name != "python_scalar"]


# Rows with COMPLEX where torch rejects complex (max/min, sort, median, ...): the exception types
# must match.
OPS = [
    # ---- sums and products ----
    OpInfo("sum.dtype", call=call_fn("sum"), samples=_sum_out_samples, dtypes=NUMERIC),
    # torch's float16 nansum accumulates in float16; ember accumulates in double.
    OpInfo("nansum", samples=lambda dt: with_nans(dt, reduction_samples(dt)), dtypes=ALL + COMPLEX,
           tol_per_dtype={"float16": 5e-3, "bfloat16": 2e-2}),
    OpInfo("nanmean", samples=lambda dt: with_nans(dt, reduction_samples(dt)), dtypes=NUMERIC + COMPLEX,
           tol_per_dtype={"bfloat16": 2e-2}),
    OpInfo("prod", call=call_fn("prod"), samples=_prod_samples, dtypes=ALL + COMPLEX, grad_dtypes=CGRAD,
           tol_per_dtype={"bfloat16": 2e-2, "float16": 2e-3}),
    # ---- max / min ----
    OpInfo("max.full", call=lambda lib, x: lib.max(x), samples=lambda dt: reduction_samples(dt)[:2], dtypes=ALL + COMPLEX),
    OpInfo("min.full", call=lambda lib, x: lib.min(x), samples=lambda dt: reduction_samples(dt)[:2], dtypes=ALL + COMPLEX),
    field("max", 0, samples=dim_samples, dtypes=ALL),
    field("max", 1, samples=dim_samples, dtypes=ALL),
    field("min", 0, samples=dim_samples, dtypes=ALL),
    field("min", 1, samples=dim_samples, dtypes=ALL),
    OpInfo("max.nan_indices", call=lambda lib, *a, **k: lib.max(*a, **k)[1],
           samples=lambda dt: with_nans(dt, dim_samples(dt)), dtypes=FLOATS, grad=False),
    OpInfo("max.other", call=lambda lib, a, b: lib.max(a, b), samples=_tensor_pairs, dtypes=ALL + COMPLEX),
    OpInfo("min.other", call=lambda lib, a, b: lib.min(a, b), samples=_tensor_pairs, dtypes=ALL + COMPLEX),
    OpInfo("maximum", samples=_tensor_pairs, dtypes=ALL + COMPLEX),
    OpInfo("minimum", samples=_tensor_pairs, dtypes=ALL + COMPLEX),
    OpInfo("amax", samples=_amax_samples, dtypes=ALL + COMPLEX),
    OpInfo("amin", samples=_amax_samples, dtypes=ALL + COMPLEX),
    OpInfo("amax.nan", call=lambda lib, *a, **k: lib.amax(*a, **k), samples=lambda dt: with_nans(dt, _amax_samples(dt)),
           dtypes=FLOATS, grad=False),
    OpInfo("aminmax.min", call=lambda lib, x, **k: lib.aminmax(x, **k).min,
           samples=lambda dt: [Sample("all", make_tensor((3, 4), dt, 1)),
                               Sample("dim", make_tensor((3, 4), dt, 2), dim=1),
                               Sample("dim_keep", make_tensor((3, 4), dt, 3), dim=0, keepdim=True)], dtypes=ALL + COMPLEX),
    OpInfo("aminmax.max", call=lambda lib, x, **k: lib.aminmax(x, **k).max,
           samples=lambda dt: [Sample("all", make_tensor((3, 4), dt, 1)),
                               Sample("dim", make_tensor((3, 4), dt, 2), dim=1)], dtypes=ALL + COMPLEX),
    OpInfo("argmax", samples=_full_or_dim, dtypes=ALL + COMPLEX, grad=False),
    OpInfo("argmin", samples=_full_or_dim, dtypes=ALL + COMPLEX, grad=False),
    # ---- logical and counting ----
    OpInfo("all", samples=_all_any_samples, dtypes=ALL + COMPLEX, grad=False),
    OpInfo("any", samples=_all_any_samples, dtypes=ALL + COMPLEX, grad=False),
    OpInfo("count_nonzero", samples=lambda dt: [s for s in _all_any_samples(dt) if not s.kwargs], dtypes=ALL + COMPLEX,
           grad=False),
    # ---- moments ----
    OpInfo("var", samples=_var_samples, dtypes=NUMERIC + COMPLEX, grad_dtypes=CGRAD, tol_per_dtype={"bfloat16": 3e-2, "float16": 3e-3}),
    OpInfo("std", samples=_var_samples, dtypes=NUMERIC + COMPLEX, grad_dtypes=CGRAD, tol_per_dtype={"bfloat16": 3e-2, "float16": 3e-3}),
    OpInfo("var_mean.var", call=lambda lib, *a, **k: lib.var_mean(*a, **k)[0], samples=_var_samples,
           dtypes=FLOATS + COMPLEX, grad_dtypes=CGRAD,
           tol_per_dtype={"bfloat16": 3e-2, "float16": 3e-3}),
    OpInfo("std_mean.mean", call=lambda lib, *a, **k: lib.std_mean(*a, **k)[1], samples=_var_samples,
           dtypes=FLOATS + COMPLEX, grad_dtypes=CGRAD,
           tol_per_dtype={"bfloat16": 3e-2, "float16": 3e-3}),
    OpInfo("std_mean.std", call=lambda lib, *a, **k: lib.std_mean(*a, **k)[0], samples=_var_samples,
           dtypes=F32_64 + COMPLEX, grad_dtypes=CGRAD),
    # ---- norms ----
    OpInfo("norm", samples=_norm_samples, dtypes=FLOATS + ["int64"] + COMPLEX, grad_dtypes=CGRAD,
           tol_per_dtype={"bfloat16": 3e-2, "float16": 3e-3}),
    OpInfo("linalg.vector_norm", call=call_fn("linalg.vector_norm"),
           samples=_vector_norm_samples, dtypes=F32_64 + ["int64"] + COMPLEX, grad_dtypes=CGRAD),
    OpInfo("norm.p0", call=lambda lib, *a: lib.norm(*a),
           samples=lambda dt: [Sample("all", make_tensor((3, 4), dt, 1), 0),
                               Sample("dim", make_tensor((3, 4), dt, 2), 0, 1)],
           dtypes=F32_64 + COMPLEX, grad=False),
    OpInfo("linalg.matrix_norm", call=lambda lib, *a, **k: lib.linalg.matrix_norm(*a, **k),
           samples=_matrix_norm_samples, dtypes=F32_64 + COMPLEX, grad_dtypes=CGRAD),
    OpInfo("logsumexp", samples=_lse_samples, dtypes=NUMERIC + COMPLEX, grad_dtypes=CGRAD, tol_per_dtype={"bfloat16": 2e-2}),
    # ---- softmax ----
    OpInfo("softmax", call=call_fn("softmax"), samples=_softmax_samples, dtypes=FLOATS + ["int64"]),
    OpInfo("log_softmax", call=call_fn("log_softmax"), samples=_softmax_samples, dtypes=FLOATS + ["int64"],
           tol_per_dtype={"bfloat16": 2e-2}),
    # ---- scans ----
    OpInfo("cumsum", call=call_fn("cumsum"), samples=_cum_dtype_samples, dtypes=ALL + COMPLEX, grad_dtypes=CGRAD,
           tol_per_dtype={"bfloat16": 2e-2, "float16": 2e-3}),
    OpInfo("cumprod", call=call_fn("cumprod"),
           samples=lambda dt: [s for s in _cum_dtype_samples(dt) if s.name != "long_row"], dtypes=ALL + COMPLEX,
           grad_dtypes=CGRAD,
           tol_per_dtype={"bfloat16": 2e-2, "float16": 2e-3}),
    field("cummax", 0, samples=scan_samples, dtypes=ALL),
    field("cummax", 1, samples=scan_samples, dtypes=ALL),
    field("cummin", 0, samples=scan_samples, dtypes=ALL),
    field("cummin", 1, samples=scan_samples, dtypes=ALL),
    OpInfo("cummax.nan", call=lambda lib, *a: lib.cummax(*a)[1], samples=lambda dt: with_nans(dt, scan_samples(dt)),
           dtypes=FLOATS, grad=False),
    OpInfo("logcumsumexp", samples=scan_samples, dtypes=FLOATS + ["int64"] + COMPLEX, grad_dtypes=CGRAD,
           tol_per_dtype={"bfloat16": 2e-2}),
    # ---- sorting and selection ----
    field("sort", 0, samples=_sort_samples, dtypes=ALL + COMPLEX),
    field("sort", 1, samples=lambda dt: _sort_samples(dt, stable=True), dtypes=ALL + COMPLEX),
    OpInfo("sort.nan", call=lambda lib, *a, **k: lib.sort(*a, **k)[0],
           samples=lambda dt: with_nans(dt, _sort_samples(dt)),
           dtypes=FLOATS, grad=False),
    OpInfo("argsort", samples=lambda dt: _sort_samples(dt, stable=True), dtypes=ALL + COMPLEX, grad=False),
    OpInfo("argsort.unstable_spelling", call=lambda lib, *a, **k: lib.argsort(*a, **k),
           samples=lambda dt: [Sample("dim_desc", make_tensor((3, 5), dt, 1), 1, True)], dtypes=FLOATS, grad=False),
    OpInfo("msort", samples=lambda dt: [Sample("2d", make_tensor((4, 3), dt, 1))], dtypes=NUMERIC + COMPLEX),
    field("topk", 0, samples=_topk_samples, dtypes=NUMERIC + COMPLEX),
    field("topk", 1, samples=_topk_samples, dtypes=FLOATS),
    field("kthvalue", 0, samples=_kth_samples, dtypes=NUMERIC),
    field("kthvalue", 1, samples=_kth_samples, dtypes=FLOATS),
    OpInfo("median.full", call=lambda lib, x: lib.median(x), samples=lambda dt: reduction_samples(dt)[:2],
           dtypes=NUMERIC + COMPLEX),
    OpInfo("nanmedian.full", call=lambda lib, x: lib.nanmedian(x),
           samples=lambda dt: with_nans(dt, reduction_samples(dt)[:2]), dtypes=NUMERIC + COMPLEX),
    field("median", 0, samples=dim_samples, dtypes=NUMERIC),
    field("median", 1, samples=dim_samples, dtypes=FLOATS),
    field("nanmedian", 0, samples=lambda dt: with_nans(dt, dim_samples(dt)), dtypes=NUMERIC),
    field("nanmedian", 1, samples=lambda dt: with_nans(dt, dim_samples(dt)), dtypes=FLOATS),
    field("mode", 0, samples=dim_samples, dtypes=NUMERIC),
    field("mode", 1, samples=lambda dt: dim_samples(dt), dtypes=FLOATS),
    OpInfo("quantile", call=quantile_call("quantile"), samples=_quantile_samples, dtypes=F32_64 + ["int64"] + COMPLEX),
    OpInfo("nanquantile", call=quantile_call("nanquantile"), samples=lambda dt: with_nans(dt, _quantile_samples(dt)),
           dtypes=F32_64),
    OpInfo("histc", samples=lambda dt: [Sample("default", make_tensor((30,), dt, 1)),
                                        Sample("range", make_tensor((5, 6), dt, 2), 7, -2, 2),
                                        Sample("edges", torch.tensor([0.0, 1, 2, 3, 3, 4]).to(getattr(torch, dt)),
                                               4, 0, 4)],
           dtypes=F32_64 + ["int64"] + COMPLEX, grad=False),
]
