"""Reductions, scans and sorting beyond the op table: named-tuple results, out=, ties, NaN,
empty inputs, dtype rules, errors (exception types as torch), gradients at awkward points
(zeros, ties, zero norms), double backward, and sizes that take the parallel/vector paths."""
import math
import pickle

import numpy as np
import pytest

import ember
from conftest import assert_same, same_error, torch


def pair(data, dtype="float32"):
    t = torch.tensor(data, dtype=getattr(torch, dtype))
    return ember.tensor(t.tolist(), dtype=getattr(ember, dtype)), t


def randn_pair(*shape, dtype="float64", seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g, dtype=getattr(torch, dtype))
    return ember.from_dlpack(t.clone()).clone(), t


def assert_pair(e, t, **kw):
    """(values, indices)-style results: each field the same."""
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert_same(a, b, **kw)


def grads(lib, fn, x, weights=None):
    x = x.detach().clone().requires_grad_()
    y = fn(x)
    y = y[0] if isinstance(y, tuple) else y
    w = weights if weights is not None else lib.ones_like(y)
    (y * w).sum().backward()
    return x.grad


# ---- named tuples ----

NAMED = {
    "max": lambda lib, x: lib.max(x, 1),
    "min": lambda lib, x: lib.min(x, 1),
    "sort": lambda lib, x: lib.sort(x, 1),
    "topk": lambda lib, x: lib.topk(x, 2),
    "kthvalue": lambda lib, x: lib.kthvalue(x, 2),
    "median": lambda lib, x: lib.median(x, 1),
    "nanmedian": lambda lib, x: lib.nanmedian(x, 1),
    "mode": lambda lib, x: lib.mode(x, 1),
    "cummax": lambda lib, x: lib.cummax(x, 1),
    "cummin": lambda lib, x: lib.cummin(x, 1),
    "aminmax": lambda lib, x: lib.aminmax(x, dim=1),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_tuple_results(name):
    e, t = randn_pair(3, 5)
    er, tr = NAMED[name](ember, e), NAMED[name](torch, t)
    assert isinstance(er, tuple) and len(er) == 2
    assert type(er).__name__ == type(tr).__name__ == name
    fields = ("min", "max") if name == "aminmax" else ("values", "indices")
    for i, f in enumerate(fields):
        assert_same(getattr(er, f), getattr(tr, f))
        assert getattr(er, f) is er[i]
    a, b = er  # unpacks like a tuple
    assert repr(er).startswith(f"ember.return_types.{name}(\n{fields[0]}=tensor(")
    cls = getattr(ember.return_types, name)
    assert cls((a, b))[1] is b
    back = pickle.loads(pickle.dumps(cls((1, 2))))  # (Tensor pickling is not this test's business)
    assert type(back) is cls and tuple(back) == (1, 2)


def test_tensor_methods_exist():
    e, _ = randn_pair(3, 4)
    for name in ["sum", "nansum", "mean", "nanmean", "prod", "max", "min", "maximum", "minimum", "amax", "amin",
                 "aminmax", "argmax", "argmin", "all", "any", "count_nonzero", "var", "std", "norm", "logsumexp",
                 "softmax", "log_softmax", "cumsum", "cumprod", "cumsum_", "cumprod_", "cummax", "cummin",
                 "logcumsumexp", "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
                 "quantile", "nanquantile", "unique", "unique_consecutive", "bincount", "histc"]:
        assert callable(getattr(e, name)), name
    assert callable(ember.linalg.vector_norm) and callable(ember.linalg.matrix_norm)


# ---- out= ----

def test_out_variants():
    e, t = randn_pair(3, 4, dtype="float32")
    eo, to = ember.empty(0), torch.empty(0)
    assert ember.sum(e, 1, out=eo) is eo
    torch.sum(t, 1, out=to)
    assert_same(eo, to)
    # an int input summed into a float out computes in the out's dtype
    ei, ti = pair([[1, 2], [3, 4]], "int32")
    eo, to = ember.empty(2), torch.empty(2)
    ember.sum(ei, 0, out=eo), torch.sum(ti, 0, out=to)
    assert_same(eo, to)
    ev, evi = ember.empty(0), ember.empty(0, dtype=ember.int64)
    tv, tvi = torch.empty(0), torch.empty(0, dtype=torch.int64)
    r = ember.max(e, 1, out=(ev, evi))
    torch.max(t, 1, out=(tv, tvi))
    assert r.values is ev and r.indices is evi
    assert_same(ev, tv), assert_same(evi, tvi)
    ev, evi, tv, tvi = ev.resize_(0), evi.resize_(0), tv.resize_(0), tvi.resize_(0)
    ember.sort(e, 0, out=(ev, evi)), torch.sort(t, 0, out=(tv, tvi))
    assert_same(ev, tv), assert_same(evi, tvi)
    for name, args in [("cumsum", (1,)), ("amax", (0,)), ("logsumexp", (1,)), ("prod", (1,)), ("var", (1,)),
                       ("quantile", (0.5,)), ("argmax", (1,)), ("all", (1,)), ("maximum", None)]:
        dt = {"argmax": "int64", "all": "bool"}.get(name, "float32")
        eo, to = ember.empty(0, dtype=getattr(ember, dt)), torch.empty(0, dtype=getattr(torch, dt))
        if name == "maximum":
            getattr(ember, name)(e, e * 0, out=eo), getattr(torch, name)(t, t * 0, out=to)
        else:
            getattr(ember, name)(e, *args, out=eo), getattr(torch, name)(t, *args, out=to)
        assert_same(eo, to)
    # a non-empty out of the wrong shape is resized with torch's deprecation warning
    with pytest.warns(UserWarning, match="was resized"):
        ember.amax(e, 1, out=ember.empty(7))


def test_out_refuses_autograd_and_bad_casts():
    e, t = randn_pair(3, 4)
    e.requires_grad_(), t.requires_grad_()
    same_error(lambda: ember.sum(e, 0, out=ember.empty(4, dtype=ember.float64)),
               lambda: torch.sum(t, 0, out=torch.empty(4, dtype=torch.float64)))
    same_error(lambda: ember.amax(e.detach(), 0, out=ember.empty(4, dtype=ember.int64)),
               lambda: torch.amax(t.detach(), 0, out=torch.empty(4, dtype=torch.int64)))


# ---- ties ----

def test_ties_max_min_argmax_take_first_index():
    e, t = pair([[1, 3, 3, 2], [5, 5, 5, 5]], "int64")
    assert_pair(ember.max(e, 1), torch.max(t, 1))
    assert_pair(ember.min(e, 1), torch.min(t, 1))
    assert_same(e.argmax(1), t.argmax(1))
    assert_same(e.argmin(), t.argmin())
    assert_same(e.argmax(), t.argmax())
    ef, tf = pair([[1.0, 3, 3, 2], [0, 0, 0, 0]])
    assert_pair(ef.max(1), tf.max(1))
    assert_pair(ef.t().max(0), tf.t().max(0))  # columns (inner > 1)


def test_ties_cummax_cummin_take_last_index():
    e, t = pair([1, 3, 3, 2, 3, 0, 0], "int64")
    assert_pair(e.cummax(0), t.cummax(0))
    assert_pair(e.cummin(0), t.cummin(0))
    eb, tb = pair([True, False, True, True], "bool")
    assert_pair(eb.cummax(0), tb.cummax(0))
    assert_pair(eb.cummin(0), tb.cummin(0))


def test_mode_ties_smallest_value_last_index():
    e, t = pair([[1, 2, 2, 3, 3, 0], [3, 2, 2, 3, 1, 1], [7, 7, 7, 7, 7, 7], [4, 1, 4, 1, 0, 9]], "int64")
    assert_pair(e.mode(1), t.mode(1))
    assert_pair(e.t().mode(0), t.t().mode(0))


def test_sort_is_stable_for_ties():
    e, t = pair([[2, 1, 2, 1, 2, 0], [0, 0, 0, 0, 0, 0]], "int64")
    assert_pair(e.sort(dim=1, stable=True), t.sort(dim=1, stable=True))
    assert_pair(e.sort(dim=1, descending=True, stable=True), t.sort(dim=1, descending=True, stable=True))
    assert_same(e.argsort(dim=1, stable=True), t.argsort(dim=1, stable=True))
    eb, tb = pair([True, False, True, False], "bool")
    assert_pair(eb.sort(stable=True), tb.sort(stable=True))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.amax(x, 1), lambda lib, x: lib.amin(x, 0), lambda lib, x: x.max(), lambda lib, x: x.min(),
    lambda lib, x: x.median(), lambda lib, x: lib.amax(x, (0, 1)), lambda lib, x: x.norm(math.inf, 1),
    lambda lib, x: x.norm(-math.inf), lambda lib, x: lib.aminmax(x).max,
], ids=["amax", "amin", "max", "min", "median", "amax_all", "norm_inf", "norm_neginf", "aminmax"])
def test_gradient_split_evenly_among_ties(fn):
    e, t = pair([[1.0, 3, 3, -3], [2, 2, 2, 2], [-3, 0, 3, 1]], "float64")
    assert_same(grads(ember, lambda x: fn(ember, x), e), grads(torch, lambda x: fn(torch, x), t))


def test_gradient_of_max_with_dim_goes_to_first_index():
    e, t = pair([[1.0, 3, 3, 2], [2, 2, 2, 2]], "float64")
    for fn in (lambda lib, x: x.max(1), lambda lib, x: x.min(1), lambda lib, x: x.max(0, keepdim=True)):
        assert_same(grads(ember, lambda x: fn(ember, x), e), grads(torch, lambda x: fn(torch, x), t))


def test_maximum_ties_split_the_gradient():
    ea, ta = pair([1.0, 2, 3, 4], "float64")
    eb, tb = pair([1.0, 3, 1, 4], "float64")
    for lib, a, b in ((ember, ea, eb), (torch, ta, tb)):
        a.requires_grad_(), b.requires_grad_()
        (lib.maximum(a, b) * lib.tensor([1.0, 2, 3, 4], dtype=lib.float64)).sum().backward()
        (lib.minimum(a, b) * 10).sum().backward()
    assert_same(ea.grad, ta.grad), assert_same(eb.grad, tb.grad)


# ---- NaN ----

NAN = math.nan


def test_nan_propagation_in_max_min_and_arg():
    e, t = pair([[1.0, NAN, 3, NAN], [1, 2, 3, 4], [NAN, 1, 2, 3]])
    for fn in (lambda x: x.max(1), lambda x: x.min(1), lambda x: x.t().max(0)):
        assert_pair(fn(e), fn(t))
    for fn in (lambda x: x.argmax(1), lambda x: x.argmin(), lambda x: x.amax(1), lambda x: x.amin(0),
               lambda x: x.max()):
        assert_same(fn(e), fn(t))
    e2, t2 = pair([[NAN, 1.0, 2, NAN]] * 3)
    assert_same(ember.maximum(e, e2), torch.maximum(t, t2))
    assert_same(ember.minimum(e, e2), torch.minimum(t, t2))
    big = [float(i) for i in range(300)]
    big[137] = NAN
    e, t = pair([big, list(reversed(big))])
    assert_pair(e.max(1), t.max(1))  # the blocked vector path
    assert_pair(e.min(1), t.min(1))
    assert_same(e.amax(1), t.amax(1))


def test_nan_in_sort_topk_median_quantile():
    e, t = pair([[1.0, NAN, -math.inf, math.inf, 0, NAN], [3, 2, 1, 0, -1, -2]])
    for kw in ({}, {"descending": True}):
        assert_pair(e.sort(stable=True, **kw), t.sort(stable=True, **kw))
    assert_same(e.topk(3).values, t.topk(3).values)
    assert_same(e.topk(3, largest=False).values, t.topk(3, largest=False).values)
    assert_pair(e.median(1), t.median(1))
    assert_pair(e.nanmedian(1), t.nanmedian(1))
    assert_same(e.median(), t.median())
    assert_same(e.nanmedian(), t.nanmedian())
    assert_same(e.quantile(0.3, 1), t.quantile(0.3, 1))
    assert_same(e.nanquantile(0.3, 1), t.nanquantile(0.3, 1))
    ea, ta = pair([[NAN, NAN], [1, NAN]])
    assert_pair(ea.nanmedian(1), ta.nanmedian(1))
    assert_same(ea.nanquantile(0.5, 1), ta.nanquantile(0.5, 1))


def test_nan_aware_sums_and_scans():
    e, t = pair([[1.0, NAN, 3], [NAN, NAN, NAN]])
    assert_same(e.nansum(1), t.nansum(1))
    assert_same(e.nanmean(1), t.nanmean(1))  # all-NaN row: nan
    assert_same(e.nansum(), t.nansum())
    assert_pair(e.cummax(1), t.cummax(1))
    assert_pair(e.cummin(1), t.cummin(1))
    assert_same(e.cumsum(1), t.cumsum(1))
    eg, tg = grads(ember, lambda x: x.nansum(), e.double()), grads(torch, lambda x: x.nansum(), t.double())
    assert_same(eg, tg)


def test_infinities_in_logsumexp_softmax_logcumsumexp():
    inf = math.inf
    e, t = pair([[-inf, -inf, -inf], [inf, 1, 2], [-inf, 0, 1], [NAN, 0, 1], [inf, inf, 0]])
    assert_same(e.logsumexp(1), t.logsumexp(1))
    assert_same(e.softmax(1), t.softmax(1))
    assert_same(e.log_softmax(1), t.log_softmax(1))
    assert_same(e.logcumsumexp(1), t.logcumsumexp(1))
    assert_same(e.t().softmax(0), t.t().softmax(0))
    # masked attention-style rows: -inf entries get probability 0
    e, t = pair([[0.5, -inf, 1.0, -inf] * 5])
    assert_same(e.softmax(-1), t.softmax(-1))


# ---- empty inputs ----

def test_empty_reductions_with_identity():
    e, t = ember.ones(0, 3), torch.ones(0, 3)
    for fn in (lambda x: x.sum(), lambda x: x.prod(), lambda x: x.nansum(0), lambda x: x.all(), lambda x: x.any(),
               lambda x: x.prod(0), lambda x: x.all(1), lambda x: x.count_nonzero(0), lambda x: x.mean(0),
               lambda x: x.norm(), lambda x: x.logsumexp(0), lambda x: x.cumsum(0), lambda x: x.sort(0).values,
               lambda x: x.amax(1), lambda x: x.max(1).values, lambda x: x.argmax(1), lambda x: x.unique(),
               lambda x: x.softmax(0), lambda x: x.median()):
        assert_same(fn(e), fn(t))


def test_empty_reductions_without_identity_raise_like_torch():
    e, t = ember.ones(0, 3), torch.ones(0, 3)
    for fn in (lambda x: x.max(), lambda x: x.min(), lambda x: x.amax(), lambda x: x.amax(0), lambda x: x.max(0),
               lambda x: x.argmax(), lambda x: x.argmin(0), lambda x: x.mode(0), lambda x: x.median(0),
               lambda x: x.kthvalue(1, 0), lambda x: x.aminmax(), lambda x: x.quantile(0.5),
               lambda x: x.norm(math.inf), lambda x: x.cummax(0).values.sum() + x.max()):
        same_error(lambda: fn(e), lambda: fn(t))


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # torch warns; ember does not
def test_var_std_degenerate():
    e, t = pair([[1.0], [2.0]])
    for fn in (lambda x: x.var(1), lambda x: x.std(1), lambda x: x.var(0, correction=3), lambda x: x.var(correction=0)):
        assert_same(fn(e), fn(t))
    assert_same(ember.var_mean(e, 1)[0], torch.var_mean(t, 1)[0])
    assert_same(ember.ones(0).var(), torch.ones(0).var())


# ---- dtype rules ----

@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32"])
def test_result_dtypes(dtype):
    e, t = pair([[1, 0, 1], [1, 1, 0]], dtype)
    for fn in (lambda x: x.sum(), lambda x: x.prod(1), lambda x: x.cumsum(0), lambda x: x.cumprod(1),
               lambda x: x.nansum(), lambda x: x.all(1), lambda x: x.any(), lambda x: x.count_nonzero(),
               lambda x: x.amax(0), lambda x: x.max(), lambda x: x.cummax(1).values, lambda x: x.sort().values,
               lambda x: x.unique(), lambda x: x.argmax(0) if dtype != "bool" else x.int().argmax(0)):
        assert_same(fn(e), fn(t))
    if dtype != "bool":
        assert_same(e.logsumexp(1), t.logsumexp(1))
        assert_same(e.sum(1, dtype=ember.float64), t.sum(1, dtype=torch.float64))
        assert_same(e.cumsum(1, dtype=ember.int16), t.cumsum(1, dtype=torch.int16))


def test_softmax_dtype_argument_casts_first():
    e, t = pair([[1, 2, 3]], "int64")
    assert_same(e.softmax(1, dtype=ember.float64), t.softmax(1, dtype=torch.float64))
    eh, th = pair([[1.0, 2, 3]], "float16")
    assert_same(ember.log_softmax(eh, 1, dtype=ember.float32), torch.log_softmax(th, 1, dtype=torch.float32))
    assert_same(eh.softmax(0), th.softmax(0))


def test_bincount_dtypes_and_minlength():
    e, t = pair([0, 2, 2, 5, 1], "int64")
    assert_same(e.bincount(), t.bincount())
    assert_same(ember.bincount(e, minlength=9), torch.bincount(t, minlength=9))
    for wdt in ["float32", "float64", "float16", "int64"]:
        ew, tw = pair([0.5, 1, 2, 3, 4], wdt) if wdt != "int64" else pair([1, 2, 3, 4, 5], wdt)
        assert_same(ember.bincount(e, ew), torch.bincount(t, tw))
    eu, tu = pair([3, 1], "uint8")
    assert_same(eu.bincount(), tu.bincount())
    assert_same(ember.bincount(ember.tensor([], dtype=ember.int64)),
                torch.bincount(torch.tensor([], dtype=torch.int64)))


@pytest.mark.parametrize("n,top", [(200_000, 10), (200_000, 1000), (300_001, 5), (100_000, 40_000)])
def test_bincount_large_inputs_in_chunks(n, top):
    # Note [bincount]: chunks count into their own histograms; weighted sums add the chunks in a
    # fixed order, so they do not depend on the thread count
    rng = np.random.default_rng(n + top)
    x = rng.integers(0, top, n)
    w = rng.standard_normal(n)
    e, t = ember.from_numpy(x), torch.from_numpy(x)
    assert_same(ember.bincount(e), torch.bincount(t))
    assert_same(ember.bincount(e, minlength=top + 7), torch.bincount(t, minlength=top + 7))
    got = ember.bincount(e, ember.from_numpy(w))
    np.testing.assert_allclose(got.numpy(), torch.bincount(t, torch.from_numpy(w)).numpy(), rtol=1e-12, atol=1e-9)
    got32 = ember.bincount(e, ember.from_numpy(w.astype(np.float32)))
    assert got32.dtype == ember.float32
    prev = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = ember.bincount(e, ember.from_numpy(w))
    finally:
        ember.set_num_threads(prev)
    assert np.array_equal(one.numpy(), got.numpy())
    x[n // 2] = -1
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.bincount(ember.from_numpy(x))
    for huge in (2**63 - 1, 2**62):  # no overflow on the way to the allocation's error
        with pytest.raises(RuntimeError):
            ember.bincount(ember.tensor([1, huge]))


def test_histc():
    e, t = pair([1.0, 2, 1, 0, 3, 3, 2.5, -1, 4])
    for args in [(), (4,), (4, 0, 3), (3, 1, 1), (5, -2, 5)]:
        assert_same(ember.histc(e, *args), torch.histc(t, *args))
    e1, t1 = pair([1.0, 1.0])
    assert_same(e1.histc(4), t1.histc(4))
    e64, t64 = randn_pair(1000, dtype="float64")
    assert_same(e64.histc(17), t64.histc(17))


def test_unique_variants():
    e, t = pair([[3, 1, 2], [3, 1, 1]], "int64")
    for kw in [{}, {"return_inverse": True}, {"return_counts": True}, {"return_inverse": True, "return_counts": True},
               {"sorted": False}]:
        er, tr = ember.unique(e, **kw), torch.unique(t, **kw)
        if isinstance(tr, tuple):
            assert isinstance(er, tuple) and len(er) == len(tr)
            for a, b in zip(er, tr):
                assert_same(a, b)
        else:
            assert_same(er, tr)
    for d in (0, 1, -1):
        er, tr = ember.unique(e, return_inverse=True, return_counts=True, dim=d), \
            torch.unique(t, return_inverse=True, return_counts=True, dim=d)
        for a, b in zip(er, tr):
            assert_same(a, b)
    ef, tf = pair([1.0, NAN, NAN, 2, 1])
    assert_same(ef.unique(), tf.unique())
    ec, tc = pair([1, 1, 2, 2, 3, 1, 1, 2], "int64")
    for a, b in zip(ember.unique_consecutive(ec, return_inverse=True, return_counts=True),
                    torch.unique_consecutive(tc, return_inverse=True, return_counts=True)):
        assert_same(a, b)
    assert_same(ec.unique_consecutive(), tc.unique_consecutive())
    e2, t2 = pair([[1, 2], [1, 2], [3, 4], [1, 2]], "int64")
    for a, b in zip(ember.unique_consecutive(e2, return_counts=True, dim=0),
                    torch.unique_consecutive(t2, return_counts=True, dim=0)):
        assert_same(a, b)
    eb, tb = pair([True, False, True], "bool")
    assert_same(eb.unique(), tb.unique())
    assert_same(ember.unique(ember.tensor(2)), torch.unique(torch.tensor(2)))


def test_quantile_shapes_and_modes():
    e, t = randn_pair(4, 6, dtype="float32")
    eq, tq = pair([0.1, 0.5, 0.9])
    for kw in [{}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"keepdim": True}]:
        for interp in ["linear", "lower", "higher", "midpoint", "nearest"]:
            assert_same(e.quantile(eq, interpolation=interp, **kw), t.quantile(tq, interpolation=interp, **kw))
            assert_same(e.quantile(0.25, interpolation=interp, **kw), t.quantile(0.25, interpolation=interp, **kw))
    # round-half-to-even for 'nearest' (rank 1.5 -> 2, 2.5 -> 2)
    e4, t4 = pair([1.0, 2, 3, 4, 5, 6])
    q = [0.3, 0.5, 0.7]
    assert_same(e4.quantile(ember.tensor(q), interpolation="nearest"),
                t4.quantile(torch.tensor(q), interpolation="nearest"))


# ---- errors ----

ERRORS = {
    "dim_out_of_range": lambda lib, x: x.sum(2),
    "amax_dim": lambda lib, x: x.amax(-3),
    "max_dim": lambda lib, x: x.max(5),
    "argmax_dim": lambda lib, x: x.argmax(2),
    "var_dim": lambda lib, x: x.var(3),
    "cumsum_dim": lambda lib, x: x.cumsum(2),
    "softmax_dim": lambda lib, x: x.softmax(2),
    "sort_dim": lambda lib, x: x.sort(2),
    "topk_dim": lambda lib, x: x.topk(1, 2),
    "median_dim": lambda lib, x: x.median(2),
    "mode_dim": lambda lib, x: x.mode(-3),
    "quantile_dim": lambda lib, x: x.quantile(0.5, 2),
    "count_nonzero_dim": lambda lib, x: x.count_nonzero(2),
    "repeated_dims": lambda lib, x: x.amax((0, 0)),
    "repeated_dims_var": lambda lib, x: x.var((1, -1)),
    "topk_k": lambda lib, x: x.topk(5),
    "topk_neg_k": lambda lib, x: x.topk(-1),
    "kthvalue_k0": lambda lib, x: x.kthvalue(0),
    "kthvalue_k": lambda lib, x: x.kthvalue(5),
    "prod_tuple_dim": lambda lib, x: x.prod((0, 1)),
    "max_float_dim": lambda lib, x: lib.max(x, 1.5),
    "max_bool_dim": lambda lib, x: lib.max(x, True),
    "var_int": lambda lib, x: x.long().var(),
    "std_int": lambda lib, x: x.int().std(0),
    "mean_int": lambda lib, x: x.long().mean(),
    "nanmean_int": lambda lib, x: x.long().nanmean(),
    "softmax_int": lambda lib, x: x.long().softmax(0),
    "log_softmax_bool": lambda lib, x: (x > 0).log_softmax(1),
    "logcumsumexp_int": lambda lib, x: x.long().logcumsumexp(0),
    "norm_int": lambda lib, x: x.long().norm(),
    "norm_bad_p": lambda lib, x: x.norm("abc"),
    "norm_fro_3dims": lambda lib, x: x.reshape(1, 3, 4).norm("fro", (0, 1, 2)),
    "vector_norm_int": lambda lib, x: lib.linalg.vector_norm(x.long()),
    "matrix_norm_1d": lambda lib, x: lib.linalg.matrix_norm(x[0]),
    "matrix_norm_ord": lambda lib, x: lib.linalg.matrix_norm(x, 3),
    "matrix_norm_ord_str": lambda lib, x: lib.linalg.matrix_norm(x, "abc"),
    "matrix_norm_dims": lambda lib, x: lib.linalg.matrix_norm(x, dim=(0, 0)),
    "quantile_q_range": lambda lib, x: x.quantile(1.5),
    "quantile_q_tensor_range": lambda lib, x: x.quantile(lib.tensor([0.5, -0.1])),
    "quantile_q_2d": lambda lib, x: x.quantile(lib.tensor([[0.5]])),
    "quantile_q_dtype": lambda lib, x: x.quantile(lib.tensor([0.5], dtype=lib.float64)),
    "quantile_int": lambda lib, x: x.long().quantile(0.5),
    "quantile_interp": lambda lib, x: x.quantile(0.5, interpolation="bad"),
    "bincount_negative": lambda lib, x: lib.bincount(lib.tensor([-1, 2])),
    "bincount_2d": lambda lib, x: lib.bincount(lib.tensor([[1, 2]])),
    "bincount_float": lambda lib, x: lib.bincount(x[0]),
    "bincount_bool": lambda lib, x: lib.bincount(x[0] > 0),
    "bincount_minlength": lambda lib, x: lib.bincount(lib.tensor([1]), minlength=-1),
    "bincount_weights": lambda lib, x: lib.bincount(lib.tensor([1, 2]), lib.tensor([1.0])),
    "histc_int": lambda lib, x: lib.histc(x.long()),
    "histc_bins": lambda lib, x: lib.histc(x, bins=0),
    "histc_range": lambda lib, x: lib.histc(x, 3, 2, 1),
    "logsumexp_no_dim": lambda lib, x: lib.logsumexp(x),
    "var_both_corrections": lambda lib, x: x.var(0, True, correction=1),
    "sort_stable_positional": lambda lib, x: lib.sort(x, 0, stable=True),
    "sort_stable_positional_method": lambda lib, x: x.sort(0, True, stable=True),
    "argsort_stable_positional": lambda lib, x: lib.argsort(x, 0, stable=True),
    "sort_bad_keyword": lambda lib, x: x.sort(dims=0),
    "unique_dim": lambda lib, x: lib.unique(x, dim=3),
    "maximum_number": lambda lib, x: lib.maximum(x, 1.0),
    "maximum_shapes": lambda lib, x: lib.maximum(x, x[:, :2]),
    "cumsum_inplace_int": lambda lib, x: x.long().cumsum_(0, dtype=lib.float32),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    e, t = randn_pair(3, 4, dtype="float32")
    same_error(lambda: ERRORS[name](ember, e), lambda: ERRORS[name](torch, t))


def test_singular_value_norms_match_torch():
    e, t = randn_pair(3, 4)
    for fn in (lambda lib, x: lib.linalg.matrix_norm(x, "nuc"), lambda lib, x: lib.linalg.matrix_norm(x, 2),
               lambda lib, x: lib.linalg.matrix_norm(x, -2, keepdim=True), lambda lib, x: x.norm("nuc")):
        assert_same(fn(ember, e), fn(torch, t))


def test_singular_value_matrix_norms():
    e, t = randn_pair(3, 4)
    for ord in ("nuc", 2, -2):
        assert_same(ember.linalg.matrix_norm(e, ord), torch.linalg.matrix_norm(t, ord), rtol=1e-5)
        assert_same(ember.linalg.matrix_norm(e, ord, keepdim=True), torch.linalg.matrix_norm(t, ord, keepdim=True),
                    rtol=1e-5)


def test_dim_errors_are_index_errors():
    e = ember.ones(2, 3)
    for fn in (lambda: e.max(2), lambda: e.softmax(-3), lambda: e.cumsum(7), lambda: e.sort(2), lambda: e.amax(4)):
        with pytest.raises(IndexError, match="Dimension out of range"):
            fn()


# ---- gradients at awkward points ----

@pytest.mark.parametrize("data", [[2.0, 0, 3, 4], [0.0, 2, 0, 3], [0.0, 0, 0, 1], [1.0, 2, 3, 4]],
                         ids=["one_zero", "two_zeros", "three_zeros", "no_zero"])
def test_prod_and_cumprod_gradients_with_zeros(data):
    e, t = pair([data, list(reversed(data)), [1.5, -2, 0.5, 3]], "float64")
    for fn in (lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.prod(0, keepdim=True),
               lambda x: x.cumprod(1), lambda x: x.cumprod(0)):
        w_t = torch.linspace(-1, 2, fn(t).numel(), dtype=torch.float64).reshape(fn(t).shape)
        w_e = ember.from_dlpack(w_t.clone())
        assert_same(grads(ember, fn, e, w_e), grads(torch, fn, t, w_t))
        assert ember.autograd.gradcheck(fn, (e.detach().requires_grad_(),))


def test_norm_gradients_at_zero():
    e, t = pair([[0.0, 0, 0], [0, 1, 2], [3, -4, 0]], "float64")
    for p in [2, 1, 3, 0.5, 1.5, math.inf]:
        fn = (lambda x: x.norm(p, 1))
        assert_same(grads(ember, fn, e), grads(torch, fn, t))
    for fn in (lambda x: x.norm(), lambda x: ember.linalg.vector_norm(x, 2, 1) if isinstance(x, ember.Tensor)
               else torch.linalg.vector_norm(x, 2, 1)):
        assert_same(grads(ember, fn, e), grads(torch, fn, t))
    x = ember.ones(3, requires_grad=True)
    x.norm(0).backward()
    assert x.grad is None or x.grad.tolist() == [0.0] * 3  # torch: None (ord 0 has no gradient)


def test_std_logsumexp_softmax_gradients_at_edges():
    e, t = pair([[1.0, 1, 1], [0, 1, 2]], "float64")
    assert_same(grads(ember, lambda x: x.std(1), e), grads(torch, lambda x: x.std(1), t))  # nan for constant rows
    ei, ti = pair([[-math.inf, 0, 1], [-math.inf, -math.inf, 0]], "float64")
    for fn in (lambda x: x.logsumexp(1), lambda x: x.softmax(1), lambda x: x.log_softmax(1)):
        assert_same(grads(ember, fn, ei), grads(torch, fn, ti))


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_gradients(interp):
    e, t = randn_pair(3, 7)
    for fn in (lambda x: x.quantile(0.37, 1, interpolation=interp),
               lambda x: x.quantile(0.5, interpolation=interp),
               lambda x: x.nanquantile(0.8, 0, True, interpolation=interp)):
        assert_same(grads(ember, fn, e), grads(torch, fn, t))


# ---- double backward ----

DOUBLE = {
    "sum": lambda x: (x * x).sum(1),
    "mean": lambda x: (x * x).mean(0),
    "softmax": lambda x: x.softmax(1),
    "log_softmax": lambda x: x.log_softmax(0),
    "logsumexp": lambda x: x.logsumexp(1),
    "var": lambda x: x.var(1),
    "std": lambda x: x.std(0),
    "prod": lambda x: x.prod(1),
    "cumsum": lambda x: (x * x).cumsum(1),
    "cumprod": lambda x: x.cumprod(1),
    "norm2": lambda x: x.norm(2, 1),
    "norm3": lambda x: x.norm(3),
    "amax": lambda x: (x * x).amax(1),
    "max_dim": lambda x: (x * x).max(1).values,
    "sort": lambda x: (x * x).sort(1).values,
    "quantile": lambda x: (x * x).quantile(0.4, 1),
    "logcumsumexp": lambda x: x.logcumsumexp(1),
    "maximum": lambda x: ember.maximum(x * x, x),
    "nansum": lambda x: (x * x).nansum(0),
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_double_backward(name):
    e, _ = randn_pair(3, 4, seed=3)
    x = (e * e + 0.5 if name in ("cumprod", "prod") else e).detach().requires_grad_()
    assert ember.autograd.gradgradcheck(DOUBLE[name], (x,))


# ---- sizes that take the parallel and vector paths ----

@pytest.mark.parametrize("shape,dim", [((1 << 18,), 0), ((3, 70001), 1), ((70001, 3), 0), ((257, 333), 1),
                                       ((64, 3, 1025), 2), ((5, 2049, 7), 1)])
def test_large_inputs_match_torch(shape, dim):
    e, t = randn_pair(*shape, dtype="float32", seed=7)
    checks = [
        lambda x: x.sum(dim), lambda x: x.amax(dim), lambda x: x.amin(dim), lambda x: x.max(dim).values,
        lambda x: x.max(dim).indices, lambda x: x.min(dim).indices, lambda x: x.argmax(dim),
        lambda x: x.softmax(dim), lambda x: x.log_softmax(dim), lambda x: x.logsumexp(dim), lambda x: x.var(dim),
        lambda x: x.std(dim, correction=0), lambda x: x.norm(2, dim), lambda x: x.norm(1, dim),
        lambda x: x.prod(dim), lambda x: (x > 0).all(dim), lambda x: (x > -5).any(dim),
        lambda x: x.count_nonzero(dim), lambda x: x.max(), lambda x: x.sum(), lambda x: x.var(),
    ]
    for fn in checks:
        assert_same(fn(e), fn(t), rtol=1e-4, atol=1e-4)
    if e.numel() <= 300000:
        assert_same(e.cumsum(dim), t.cumsum(dim), rtol=1e-4, atol=1e-3)
        assert_same(e.sort(dim).values, t.sort(dim).values)


@pytest.mark.parametrize("shape,dim", [((2048, 768), 0), ((777, 200), 0), ((3, 600, 130), 1), ((5000, 64), 0),
                                        ((2, 100, 1100), 1)])
def test_float32_column_sums_accurate_and_thread_independent(shape, dim):
    """Sums down columns (a bias gradient) add 64 rows per float lane, then in double: within a
    few float ulps of the float64 sum, and bit-identical for any thread count."""
    import numpy as np
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3], size=shape)).astype(np.float32)
    x = ember.from_numpy(a)
    ref = a.astype(np.float64).sum(axis=dim)
    scale = np.abs(a).astype(np.float64).sum(axis=dim)
    threads = ember.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            ember.set_num_threads(n)
            results.append(x.sum(dim).numpy())
    finally:
        ember.set_num_threads(threads)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    assert np.all(np.abs(results[0] - ref) <= 8 * np.finfo(np.float32).eps * scale + 1e-30)


# Flat unique groups integers of a narrow range in buckets and sorts everything else as (value, index)
# pairs; sort takes integer and float slices of 64 or more through a radix sort (ops/sort.cpp).
UNIQUE_CASES = [("int64", 0, 1000, 100000), ("int64", -2**62, 2**62, 50000), ("int32", -70000, 70000, 30000),
                ("int16", -300, 300, 5000), ("int8", -128, 127, 4000), ("uint8", 0, 255, 4000),
                ("int64", -5, 5, 1), ("int64", -2**63, 2**63 - 1, 3000), ("float32", -3, 3, 20000),
                ("float64", -3, 3, 20000), ("float16", -3, 3, 6000), ("float32", -1e30, 1e30, 5000)]


@pytest.mark.parametrize("dtype,lo,hi,n", UNIQUE_CASES, ids=[f"{c[0]}_{c[1]}_{c[3]}" for c in UNIQUE_CASES])
def test_unique_and_sort_large(dtype, lo, hi, n):
    import numpy as np
    g = torch.Generator().manual_seed(n)
    if dtype.startswith("float"):
        t = (torch.randn(n, generator=g, dtype=getattr(torch, dtype)) * hi).round(decimals=1)
        t[::97] = float("nan")
        t[::89] = -0.0
    elif lo == -2**63:  # the whole int64 range, both extremes included
        t = torch.randint(-2**62, 2**62, (n,), generator=g) * 2 + torch.randint(0, 2, (n,), generator=g)
        t[:2] = torch.tensor([-2**63, 2**63 - 1])
    else:
        t = torch.randint(lo, hi + 1, (n,), generator=g, dtype=getattr(torch, dtype))
    e = ember.from_numpy(t.numpy().copy())
    for kw in [{}, {"return_inverse": True, "return_counts": True}]:
        er, tr = ember.unique(e, **kw), torch.unique(t, **kw)
        if kw and dtype.startswith("float"):
            # every NaN is its own group; torch orders those groups as its sort leaves them, ember by index
            keep = ~torch.isnan(t)
            assert_same(er[1][ember.from_numpy(keep.numpy())], tr[1][keep])
            er, tr = (er[0], er[2]), (tr[0], tr[2])
        for a, b in zip(er if isinstance(er, tuple) else (er,), tr if isinstance(tr, tuple) else (tr,)):
            assert_same(a, b)
    for descending in (False, True):
        ev, ei = ember.sort(e, descending=descending, stable=True)
        tv, ti = torch.sort(t, descending=descending, stable=True)
        assert_same(ev, tv)
        assert np.array_equal(ei.numpy(), ti.numpy()), "ties must keep index order"
    # 2-d: each row is its own slice
    if n >= 4096:
        e2, t2 = e[: n // 2048 * 2048].reshape(-1, 2048), t[: n // 2048 * 2048].reshape(-1, 2048)
        ev, ei = ember.sort(e2, dim=1)
        tv, ti = torch.sort(t2, dim=1, stable=True)
        assert_same(ev, tv)
        assert np.array_equal(ei.numpy(), ti.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("n", [1, 31, 256, 257, 1000, 300_001])
def test_16_bit_extremes_in_float_blocks(dtype, n):
    """amax/amin/max(dim)/min(dim) over float16/bfloat16 rows go through float blocks of 256
    (reduce_kernels.h): torch's values, a NaN anywhere wins, infinities kept."""
    import numpy as np
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((3, n)) * 100).astype(np.float32)
    x[1, rng.integers(0, n)] = np.inf
    x[2, rng.integers(0, n)] = np.nan
    e = ember.from_numpy(x).to(getattr(ember, dtype))
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    for name in ("amax", "amin"):
        assert_same(getattr(e, name)(dim=1), getattr(t, name)(dim=1))
        assert_same(getattr(e[:2], name)(), getattr(t[:2], name)())
        assert_same(getattr(e, name)(), getattr(t, name)())
    assert_same(e.max(dim=1).values, t.max(dim=1).values)
    assert_same(e.min(dim=1).values, t.min(dim=1).values)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32"])
@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((300, 5), 0), ((2, 257, 3), 1)])
def test_topk_small_k_scan(dtype, shape, dim):
    # topk's one-pass scan for k <= 32 (ops/sort.cpp, top_k_scan): torch's values, and indices as
    # ember's stable sort orders ties (first index first); NaN ranks largest; duplicates everywhere
    import numpy as np
    rng = np.random.default_rng(5)
    a = np.round(rng.standard_normal(shape) * 4)
    if dtype.startswith("float") or dtype == "bfloat16":
        flat = a.reshape(-1)
        flat[rng.choice(flat.size, 9, replace=False)] = np.nan
        flat[rng.choice(flat.size, 4, replace=False)] = np.inf
        flat[rng.choice(flat.size, 4, replace=False)] = -np.inf
    t = torch.tensor(a).to(getattr(torch, dtype))
    e = ember.tensor(a.tolist()).to(getattr(ember, dtype))
    for k in (1, 5, 32):
        for largest in (True, False):
            ev, ei = e.topk(k, dim, largest=largest)
            tv, _ = t.topk(k, dim, largest=largest)
            assert_same(ev, tv)
            si = e.sort(dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
            assert ember.equal(ei, si)
            assert_same(e.gather(dim, ei), ev)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((1025, 1024), 1), ((7, 100003), 1), ((3, 40000, 2), 1), ((1 << 17,), 0),
                                       ((5, 1, 300), 2), ((0, 9), 1)])
def test_float_scan_kernel_matches_torch(shape, dim, dtype):
    """cumsum/cumprod of float32/float64 (the scan at the vector ISA levels, rows two at a time):
    torch's values (both keep the running value in double), the same bits on 1 and 2 threads, and
    the same as the generic loop reached through dtype=."""
    import numpy as np

    rng = np.random.default_rng(len(shape) + shape[0])
    v = rng.standard_normal(shape).astype(dtype)
    vp = (1 + rng.standard_normal(shape) / 64).astype(dtype)  # products that stay finite
    e, t = ember.from_numpy(v), torch.from_numpy(v)
    ep, tp = ember.from_numpy(vp), torch.from_numpy(vp)
    before = ember.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            ember.set_num_threads(threads)
            s, p = ember.cumsum(e, dim), ember.cumprod(ep, dim)
            np.testing.assert_array_equal(s.numpy(), torch.cumsum(t, dim).numpy())
            np.testing.assert_array_equal(p.numpy(), torch.cumprod(tp, dim).numpy())
            results.append((s.numpy().tobytes(), p.numpy().tobytes()))
        assert results[0] == results[1]
        # a float16 input summed in float32 by dtype= takes the generic loop: the same values as float32
        if dtype == "float32":
            h = e.to(ember.float16)
            np.testing.assert_array_equal(ember.cumsum(h, dim, dtype=ember.float32).numpy(),
                                          ember.cumsum(h.to(ember.float32), dim).numpy())
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(300, 200), (2048, 130), (5, 64), (70, 3)])
def test_16bit_column_sums_as_torch(dtype, shape):
    # 16-bit columns through float pieces of 64 (sum_kernels.cpp add_column_sums): the 64-row and
    # 64-column blocks, the tail columns, and the row chunks of a bias gradient's shape
    import numpy as np
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32) * 4
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    e = ember.from_numpy(x).to(getattr(ember, dtype))
    ref = t.double().sum(0)
    tol = (2e-2 if dtype == "bfloat16" else 2e-3) * (ref.abs() + np.sqrt(shape[0]) * 4)
    for got in (e.sum(0), e.t().contiguous().t().sum(0)):
        assert str(got.dtype).endswith(dtype)
        assert ((torch.tensor(got.double().numpy()) - ref).abs() <= tol).all()
    assert ((torch.tensor(e.mean(0).double().numpy()) - ref / shape[0]).abs() <= tol / shape[0]).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_16bit_scans_round_the_double_running_value(dtype, op):
    # contiguous 16-bit rows scan in float pieces of 256 (two rows side by side), other layouts
    # element by element: both give each position's double running value rounded once to float,
    # then to the 16-bit type
    import numpy as np
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((5, 700)) * (0.1 if op == "cumprod" else 3) + (1 if op == "cumprod" else 0))
    t16 = torch.from_numpy(x.astype(np.float32)).to(getattr(torch, dtype))
    vals = t16.double().numpy()
    run = np.cumsum(vals, 1) if op == "cumsum" else np.cumprod(vals, 1)
    want = torch.from_numpy(run.astype(np.float32)).to(getattr(torch, dtype)).view(torch.int16).numpy()
    e = ember.from_numpy(t16.float().numpy()).to(getattr(ember, dtype))
    for got in (getattr(e, op)(1), getattr(e.t().contiguous().t(), op)(1)):
        assert (got.contiguous().view(ember.int16).numpy() == want).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_16bit_value_index_rows_as_torch(dtype, op):
    # rows of 64 or more 16-bit values are converted to float and searched in blocks: the first
    # of equal values and the first NaN win, as torch
    rng = np.random.default_rng(8)
    x = np.round(rng.standard_normal((9, 300)) * 4).astype(np.float32)  # many ties
    x[1, 200] = np.nan
    x[2, 10], x[2, 250] = np.nan, np.nan
    x[3, :] = 7.0
    x[4, 299] = 1e4
    x[5, 63:65] = -1e4
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    e = ember.from_numpy(x).to(getattr(ember, dtype))
    for cols in (300, 64, 65, 130):
        rt, re_ = getattr(t[:, :cols], op)(1), getattr(e[:, :cols], op)(1)
        if op in ("max", "min"):
            assert re_.indices.tolist() == rt.indices.tolist()
            assert np.array_equal(np.array(re_.values.float().tolist()), rt.values.float().numpy(), equal_nan=True)
        else:
            assert re_.tolist() == rt.tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_scans_over_empty_dims(dtype):
    # an empty scanned dim crashed the 16-bit row scan (a grain of kGrainSize / 0; found by libFuzzer)
    t = getattr(ember, dtype)
    for shape, dim in (((3, 0), 1), ((0, 5), 1), ((0, 5), 0), ((2, 0, 3), 1), ((2, 3, 0), 2)):
        x = ember.zeros(*shape, dtype=t)
        for op in ("cumsum", "cumprod"):
            assert tuple(getattr(x, op)(dim).shape) == shape


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_float_radix_sort_special_values_and_ties(dtype):
    # long slices take the radix sort of ops/sort.cpp: every special value, ties between -0 and +0
    # and among NaNs, subnormals, along the last dim and along dim 0 (strided slices)
    import numpy as np
    rng = np.random.default_rng(5)
    tiny = float(np.finfo(np.float32).tiny)
    pool = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, tiny / 4, -tiny / 4, 1.0, -1.0, 2.5, 3e38, -3e38]
    vals = np.where(rng.random(6000) < 0.5, rng.choice(pool, 6000), rng.standard_normal(6000)).reshape(3000, 2)
    t = torch.tensor(vals, dtype=getattr(torch, dtype))
    e = ember.from_numpy((t.float() if dtype == "bfloat16" else t).numpy()).to(getattr(ember, dtype))
    for e, t, dim in ((e, t, 0), (e, t, 1), (e.reshape(-1, 100), t.reshape(-1, 100), 1)):
        for descending in (False, True):
            ev, ei = ember.sort(e, dim=dim, descending=descending, stable=True)
            tv, ti = torch.sort(t, dim=dim, descending=descending, stable=True)
            assert_same(ev, tv)
            assert np.array_equal(ei.numpy(), ti.numpy())
            assert np.array_equal(ember.argsort(e, dim=dim, descending=descending, stable=True).numpy(), ti.numpy())
    # signs of zeros survive: values are gathered from the input
    z = ember.tensor([0.0, -0.0] * 2048, dtype=getattr(ember, dtype)).sort(stable=True).values
    assert (ember.signbit(z).numpy() == np.array([False, True] * 2048)).all()


@pytest.mark.parametrize("n", [1, 7, 8, 9, 31, 32, 33, 40, 49, 63, 64, 65, 95, 2047, 2048, 2049, 2080, 4100])
def test_float_row_sums_every_length(n):
    # sum_contiguous's blocks, the last block joined by the final vectors, and the scalar tail
    x = np.random.default_rng(n).standard_normal((5, n)).astype(np.float32) * 100
    got = ember.from_numpy(x).sum(-1).numpy()
    ref = x.astype(np.float64).sum(-1)
    bound = np.abs(x).astype(np.float64).sum(-1) * 2.0 ** -22 + 1e-30
    assert (np.abs(got.astype(np.float64) - ref) <= bound).all()
    np.testing.assert_allclose(ember.from_numpy(x).mean(-1).numpy(), x.astype(np.float64).mean(-1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("shape,dim", [((40, 300), 1), ((300, 5), 0), ((3, 100, 4), 1)])
@pytest.mark.parametrize("k", [33, 64, -1])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_larger_k_select(dtype, shape, dim, k, largest):
    # k > 32: the k-th best key by nth_element, winners in index order, sorted by (key, index)
    rng = np.random.default_rng(len(shape) * 7 + k)
    x = rng.standard_normal(shape) * 5
    if dtype.startswith("float") or dtype == "bfloat16":
        x.flat[::17] = np.nan
        x.flat[::13] = 0.0
        x.flat[::11] = -0.0
        x.flat[::19] = np.inf
        x.flat[::23] = -np.inf
    k = shape[dim] if k == -1 else k
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    e = ember.from_numpy(x).to(getattr(ember, dtype))
    tv, _ = t.topk(k, dim, largest)
    ev, ei = e.topk(k, dim, largest)
    tvf, evf = tv.double().numpy(), ev.double().numpy()
    np.testing.assert_array_equal(evf, tvf)  # NaNs in the same places, values equal
    src = e.double().numpy()
    np.testing.assert_array_equal(np.take_along_axis(src, ei.numpy(), dim), evf)
    # equal values (NaNs alike) come in index order, each index once
    ev_m, ei_m = np.moveaxis(evf, dim, -1), np.moveaxis(ei.numpy(), dim, -1)
    tie = (ev_m[..., 1:] == ev_m[..., :-1]) | (np.isnan(ev_m[..., 1:]) & np.isnan(ev_m[..., :-1]))
    assert (np.diff(ei_m, axis=-1)[tie] > 0).all()
    assert all(len(set(row)) == k for row in ei_m.reshape(-1, k).tolist())


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int32", "int64", "uint8"])
@pytest.mark.parametrize("n", [2047, 2048, 5000, 70000])
@pytest.mark.parametrize("kind", ["normal", "narrow", "equal", "special"])
def test_radix_select_long_slices(dtype, n, kind):
    # Note [Radix select]: kthvalue, median, nanmedian and topk of slices of 2048 or more select on
    # radix keys digit by digit; "narrow" values share their leading digits (several levels), "equal"
    # ones all of them. The element taken is the k-th in (value, index) order: numpy's stable argsort.
    rng = np.random.default_rng(n)
    if kind == "normal":
        x = rng.standard_normal(n) * 50
    elif kind == "narrow":
        x = 1.0 + rng.integers(0, 1 << 20, n) / float(1 << 20)
    elif kind == "equal":
        x = np.full(n, 3.0)
    else:
        x = rng.integers(-4, 4, n).astype(np.float64)
        if dtype.startswith("float") or dtype == "bfloat16":
            x[::7] = -0.0
            x[::29] = np.inf
            x[::31] = -np.inf
            x[5::37] = np.nan
    e = ember.from_numpy(x).to(getattr(ember, dtype))
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    src = e.double().numpy()
    order = np.argsort(src, kind="stable")  # NaN last, -0 and 0 equal, ties by index
    for k in (1, n // 3, (n + 1) // 2, n):
        v, i = e.kthvalue(k)
        assert i.item() == order[k - 1]
        np.testing.assert_array_equal(v.double().numpy(), t.kthvalue(k).values.double().numpy())
    nan_at = np.flatnonzero(np.isnan(src))
    v, i = e.median(0)
    assert i.item() == (nan_at[0] if nan_at.size else order[(n - 1) // 2])
    np.testing.assert_array_equal(v.double().numpy(), t.median(0).values.double().numpy())
    m = n - nan_at.size
    v, i = e.nanmedian(0)
    assert i.item() == order[(m - 1) // 2]
    np.testing.assert_array_equal(v.double().numpy(), t.nanmedian(0).values.double().numpy())
    for k in (40, 1000):
        for largest in (True, False):
            v, i = e.topk(k, largest=largest)
            np.testing.assert_array_equal(v.double().numpy(), t.topk(k, largest=largest).values.double().numpy())
            np.testing.assert_array_equal(src[i.numpy()], v.double().numpy())
            assert len(set(i.tolist())) == k


def test_radix_select_rows_and_strided_dims():
    # several slices per call (one scratch per thread), along inner dims too
    x = np.random.default_rng(5).standard_normal((6, 3000, 5)).astype(np.float32)
    e, t = ember.from_numpy(x), torch.from_numpy(x)
    np.testing.assert_array_equal(e.median(1).indices.numpy(), t.median(1).indices.numpy())
    np.testing.assert_array_equal(e.kthvalue(2500, 1).indices.numpy(), t.kthvalue(2500, 1).indices.numpy())
    np.testing.assert_array_equal(e.topk(300, 1).indices.numpy(), t.topk(300, 1).indices.numpy())
    y = np.random.default_rng(6).standard_normal((4, 4096)).astype(np.float32)
    np.testing.assert_array_equal(ember.from_numpy(y).T.median(0).indices.numpy(), torch.from_numpy(y).T.median(0).indices.numpy())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "int32", "int16", "uint8", "float64", "int64", "bool"])
@pytest.mark.parametrize("n", [1, 2, 16, 33, 63])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_short_rows_stable_as_torch(dtype, n, descending):
    # rows under 64 with 32-bit keys: (key, index) words in integer order; NaN, -0 / 0 and ties
    rng = np.random.default_rng(n)
    a = rng.integers(-3, 3, (50, n)).astype(np.float64)
    if dtype.startswith("float") or dtype == "bfloat16":
        a[rng.random(a.shape) < 0.1] = np.nan
        a[rng.random(a.shape) < 0.1] = -0.0
    e, t = ember.from_numpy(a).to(getattr(ember, dtype)), torch.from_numpy(a).to(getattr(torch, dtype))
    ev, ei = e.sort(dim=1, descending=descending, stable=True)
    tv, ti = t.sort(dim=1, descending=descending, stable=True)
    x, y = ev.double().numpy(), tv.double().numpy()
    np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    assert (np.signbit(x) == np.signbit(y))[~np.isnan(x)].all()  # -0 where torch has it
    np.testing.assert_array_equal(e.t().sort(dim=0, descending=descending, stable=True).indices.numpy(), ti.numpy().T)
