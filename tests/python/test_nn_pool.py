"""Pooling ops and modules, F.fold/F.unfold against torch 2.13: values, indices, gradients,
gradcheck/gradgradcheck, unbatched and non-contiguous inputs, errors by class, reprs."""
import numpy as np
import pytest

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {"float32": 1e-5, "float64": 1e-12}


def both(shape, dtype, seed=0, noncontig=False, distinct=True):
    rng = np.random.default_rng(seed)
    if distinct:  # distinct values: the argmax is unique, so indices and gradients are well defined
        a = rng.permutation(int(np.prod(shape))).reshape(shape).astype(dtype) / 7.0 - 3.0
    else:
        a = rng.standard_normal(shape).astype(dtype)
    if noncontig:
        a2 = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        return ember.tensor(a2).transpose(-1, -2), torch.tensor(a2).transpose(-1, -2)
    return ember.tensor(a), torch.tensor(a)


def run(name, shape, args, kwargs, dtype="float64", noncontig=False, seed=0, distinct=True):
    xe, xt = both(shape, dtype, seed, noncontig, distinct)
    xe.requires_grad_(True)
    xt.requires_grad_(True)
    ye = getattr(EF, name)(xe, *args, **kwargs)
    yt = getattr(TF, name)(xt, *args, **kwargs)
    if isinstance(yt, tuple):
        (ye, ie), (yt, it) = ye, yt
        assert str(ie.dtype) == "ember.int64"
        np.testing.assert_array_equal(ie.numpy(), it.numpy())
    assert tuple(ye.shape) == tuple(yt.shape)
    tol = TOL[dtype]
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


MAX_CASES = [
    ("max_pool1d", (2, 3, 11), (3,), {}),
    ("max_pool1d", (2, 3, 11), (3,), dict(stride=2, padding=1, dilation=2, ceil_mode=True, return_indices=True)),
    ("max_pool1d", (3, 10), (2,), dict(return_indices=True)),  # unbatched
    ("max_pool2d", (2, 3, 9, 8), (3,), dict(stride=2, padding=1, ceil_mode=True, return_indices=True)),
    ("max_pool2d", (2, 3, 9, 8), ((3, 2),), dict(stride=(2, 1), padding=(1, 1), dilation=(2, 1), return_indices=True)),
    ("max_pool2d", (2, 2, 7, 7), (2,), dict(stride=3, ceil_mode=True)),
    ("max_pool2d", (3, 6, 6), (2,), {}),  # unbatched
    ("max_pool2d", (2, 2, 6, 6), (3,), dict(stride=[], padding=1)),  # stride [] -> kernel
    ("max_pool3d", (2, 2, 5, 6, 5), (2,), dict(ceil_mode=True, return_indices=True)),
    ("max_pool3d", (1, 2, 6, 6, 6), ((3, 2, 3),), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1))),
    ("adaptive_max_pool1d", (2, 3, 9), (4,), dict(return_indices=True)),
    ("adaptive_max_pool2d", (2, 3, 9, 8), ((4, 3),), dict(return_indices=True)),
    ("adaptive_max_pool2d", (2, 3, 9, 8), ((4, None),), {}),
    ("adaptive_max_pool2d", (3, 5, 7), (3,), {}),
    ("adaptive_max_pool2d", (2, 3, 4, 4), (6,), {}),  # output larger than input
    ("adaptive_max_pool3d", (2, 2, 5, 6, 7), ((2, 3, 4),), dict(return_indices=True)),
]

AVG_CASES = [
    ("avg_pool1d", (2, 3, 11), (3,), dict(stride=2, padding=1)),
    ("avg_pool1d", (2, 3, 11), (4,), dict(stride=3, padding=2, ceil_mode=True, count_include_pad=False)),
    ("avg_pool1d", (3, 10), (3,), {}),
    ("avg_pool2d", (2, 3, 9, 8), (3,), dict(stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", (2, 3, 9, 8), (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", (2, 3, 9, 8), ((3, 2),), dict(stride=(2, 1), padding=(1, 0), divisor_override=5)),
    ("avg_pool2d", (3, 7, 7), (2,), {}),
    ("avg_pool3d", (2, 2, 5, 6, 5), (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool3d", (2, 2, 4, 4, 4), (2,), dict(divisor_override=3)),
    ("adaptive_avg_pool1d", (2, 3, 9), (4,), {}),
    ("adaptive_avg_pool2d", (2, 3, 9, 8), ((4, None),), {}),
    ("adaptive_avg_pool2d", (2, 3, 9, 8), (1,), {}),
    ("adaptive_avg_pool2d", (3, 5, 7), ((2, 3),), {}),
    ("adaptive_avg_pool2d", (2, 3, 3, 3), (5,), {}),
    ("adaptive_avg_pool3d", (2, 2, 5, 6, 7), ((2, 3, 4),), {}),
    ("lp_pool1d", (2, 3, 10), (2, 3), dict(stride=2)),
    ("lp_pool2d", (2, 3, 9, 8), (2, 3), dict(stride=2, ceil_mode=True)),
    ("lp_pool2d", (2, 3, 8, 8), (3.0, (2, 3)), {}),
    ("lp_pool3d", (1, 2, 4, 6, 4), (2, 2), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", MAX_CASES + AVG_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_pool_values_and_grads(case, dtype):
    name, shape, args, kw = case
    run(name, shape, args, kw, dtype, distinct=not name.startswith("lp_pool"))


@pytest.mark.parametrize("name,shape,args,kw", [
    ("max_pool2d", (2, 3, 8, 7), (3,), dict(stride=2, padding=1, return_indices=True)),
    ("avg_pool2d", (2, 3, 8, 7), (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("adaptive_avg_pool2d", (2, 3, 8, 7), ((3, 2),), {}),
    ("adaptive_max_pool2d", (2, 3, 8, 7), ((3, 2),), dict(return_indices=True)),
])
def test_non_contiguous(name, shape, args, kw):
    run(name, shape, args, kw, noncontig=True)


SEPARABLE_AVG = [
    ("avg_pool2d", (2, 4, 32, 32), (3,), dict(stride=1, padding=1)),
    ("avg_pool2d", (2, 4, 32, 31), (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("avg_pool2d", (2, 3, 20, 21), ((5, 3),), dict(stride=(1, 2), padding=(2, 1), ceil_mode=True)),
    ("avg_pool2d", (1, 2, 40, 40), (18,), dict(stride=4, padding=9, count_include_pad=False)),  # run_sum taps
    ("avg_pool2d", (2, 2, 9, 30), ((3, 4),), dict(stride=3, ceil_mode=True, divisor_override=7)),
    ("avg_pool1d", (3, 5, 50), (4,), dict(stride=1, padding=2)),
    ("avg_pool3d", (1, 3, 9, 10, 11), (3,), dict(stride=1, padding=1)),
    ("avg_pool3d", (2, 2, 8, 9, 10), ((2, 3, 3),), dict(stride=(2, 1, 2), padding=(1, 1, 0), ceil_mode=True)),
    ("adaptive_avg_pool2d", (2, 3, 32, 30), (7,), {}),
    ("adaptive_avg_pool3d", (1, 2, 9, 10, 11), ((4, 3, 5),), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", SEPARABLE_AVG, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_avg_pool_separable_matches_torch(case, dtype):
    # Note [Separable average pool]: box sums along w, h, d (interior windows one tap at a time),
    # and the adjoint passes in reverse; bitwise the same for 1 and 2 threads
    name, shape, args, kw = case
    run(name, shape, args, kw, dtype, distinct=False)
    x = ember.randn(*shape, dtype=getattr(ember, dtype), requires_grad=True)
    prev = ember.get_num_threads()
    outs = []
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            y = getattr(EF, name)(x, *args, **kw)
            (g,) = ember.autograd.grad(y, x, ember.ones_like(y) * 0.5)
            outs.append((y.detach().numpy(), g.numpy()))
    finally:
        ember.set_num_threads(prev)
    assert np.array_equal(outs[0][0], outs[1][0]) and np.array_equal(outs[0][1], outs[1][1])


def test_max_pool_nan_propagates():
    a = np.arange(32, dtype="float64").reshape(1, 2, 4, 4)
    a[0, 0, 1, 1] = np.nan
    a[0, 1, 0, 1] = a[0, 1, 1, 0] = np.nan  # two NaNs in one window: the index follows torch's
    ye, ie = EF.max_pool2d(ember.tensor(a), 2, return_indices=True)
    yt, it = TF.max_pool2d(torch.tensor(a), 2, return_indices=True)
    np.testing.assert_array_equal(ye.numpy(), yt.numpy())
    np.testing.assert_array_equal(ie.numpy(), it.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("width", [8, 11, 22])
def test_max_pool_2x2_fast_path_ties_nan_inf(dtype, width):
    # The 2x2/stride-2 kernel (four outputs per step for float32, then a scalar tail): values and
    # indices as torch for ties, NaNs (the last NaN of a window wins), -inf and odd widths.
    rng = np.random.default_rng(width)
    a = rng.integers(-3, 3, size=(3, 5, 6, width)).astype(dtype)
    a[rng.random(a.shape) < 0.1] = np.nan
    a[rng.random(a.shape) < 0.05] = -np.inf
    a[rng.random(a.shape) < 0.05] = np.inf
    ye, ie = EF.max_pool2d(ember.tensor(a), 2, return_indices=True)
    yt, it = TF.max_pool2d(torch.tensor(a), 2, return_indices=True)
    np.testing.assert_array_equal(ye.numpy(), yt.numpy())
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    xe, xt = ember.tensor(a).requires_grad_(), torch.tensor(a).requires_grad_()
    EF.max_pool2d(xe, 2).sum().backward()
    TF.max_pool2d(xt, 2).sum().backward()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


GRADCHECK = [
    ("max_pool2d", (1, 2, 5, 5), (3,), dict(stride=2, padding=1)),
    ("max_pool1d", (2, 2, 7), (2,), dict(dilation=2, ceil_mode=True)),
    ("max_pool3d", (1, 1, 4, 4, 3), (2,), {}),
    ("avg_pool2d", (1, 2, 5, 5), (3,), dict(stride=2, padding=1, count_include_pad=False, ceil_mode=True)),
    ("avg_pool1d", (2, 2, 7), (3,), dict(padding=1)),
    ("avg_pool3d", (1, 1, 4, 4, 3), (2,), dict(divisor_override=3)),
    ("adaptive_avg_pool2d", (1, 2, 5, 7), ((3, 4),), {}),
    ("adaptive_max_pool2d", (1, 2, 5, 7), ((3, 4),), {}),
    ("lp_pool2d", (1, 2, 4, 4), (2, 2), {}),
]


@pytest.mark.parametrize("case", GRADCHECK, ids=lambda c: c[0] + str(c[3]))
def test_gradcheck(case):
    name, shape, args, kw = case
    xe, _ = both(shape, "float64")
    if name.startswith("lp_pool"):
        xe = xe.abs() + 0.5  # away from |x| = 0 where the p-th root has no derivative
    xe.requires_grad_(True)
    f = lambda x: getattr(EF, name)(x, *args, **kw)  # noqa: E731
    assert gradcheck(f, (xe,))
    assert gradgradcheck(f, (xe,))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    shape = (2, 3) + (6, 8, 4)[:nd]
    xe, xt = both(shape, "float64")
    pe, ie = getattr(EF, f"max_pool{nd}d")(xe, 2, return_indices=True)
    pt, it = getattr(TF, f"max_pool{nd}d")(xt, 2, return_indices=True)
    pe.requires_grad_(True)
    pt.requires_grad_(True)
    ue = getattr(EF, f"max_unpool{nd}d")(pe, ie, 2, output_size=shape[2:])
    ut = getattr(TF, f"max_unpool{nd}d")(pt, it, 2, output_size=shape[2:])
    np.testing.assert_array_equal(ue.detach().numpy(), ut.detach().numpy())
    ue2 = getattr(EF, f"max_unpool{nd}d")(pe, ie, 2)
    ut2 = getattr(TF, f"max_unpool{nd}d")(pt, it, 2)
    assert tuple(ue2.shape) == tuple(ut2.shape)
    g = np.random.default_rng(0).standard_normal(shape)
    ue.backward(ember.tensor(g))
    ut.backward(torch.tensor(g))
    np.testing.assert_array_equal(pe.grad.numpy(), pt.grad.numpy())


def test_max_unpool_errors():
    x = ember.randn(2, 3, 4, 4)
    with pytest.raises(RuntimeError):
        EF.max_unpool2d(x, ember.full((2, 3, 4, 4), 100, dtype=ember.int64), 2)
    with pytest.raises(ValueError):
        EF.max_unpool2d(x, ember.zeros(2, 3, 4, 4, dtype=ember.int64), 2, output_size=(20, 20))
    with pytest.raises(ValueError):
        EF.max_unpool2d(x, ember.zeros(2, 3, 4, 4, dtype=ember.int64), 2, output_size=(8,))


FOLD_CASES = [
    ("unfold", (2, 3, 9, 8), ((2, 3),), dict(dilation=(1, 2), padding=1, stride=(2, 1))),
    ("unfold", (3, 5, 5), (2,), {}),
    ("unfold", (1, 2, 6, 6), (3,), dict(stride=3)),
    ("fold", (2, 12, 20), ((5, 6), 2), {}),
    ("fold", (12, 16), ((6, 6), 2), dict(stride=2, padding=1)),
    ("fold", (1, 18, 25), ((7, 7), 3), dict(dilation=2, stride=(1, 1), padding=(1, 1))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", FOLD_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}")
def test_fold_unfold(case, dtype):
    name, shape, args, kw = case
    run(name, shape, args, kw, dtype, distinct=False)


def test_fold_unfold_gradgradcheck():
    x = ember.randn(1, 2, 4, 5, dtype=ember.float64, requires_grad=True)
    f = lambda t: EF.unfold(t, 2, padding=1, stride=(1, 2))  # noqa: E731
    assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))
    c = ember.randn(1, 8, 9, dtype=ember.float64, requires_grad=True)
    g = lambda t: EF.fold(t, (4, 5), 2, padding=(0, 1), stride=(1, 2))  # noqa: E731
    assert gradcheck(g, (c,)) and gradgradcheck(g, (c,))


ERRORS = [
    ("max_pool2d", (2, 3), (2,), {}),
    ("max_pool2d", (2, 3, 8, 8), (3,), dict(padding=2)),
    ("avg_pool2d", (2, 3, 8, 8), (3,), dict(padding=2)),
    ("max_pool2d", (2, 3, 2, 2), (3,), {}),
    ("avg_pool2d", (2, 3, 2, 2), (3,), {}),
    ("max_pool2d", (2, 3, 8, 8), (0,), {}),
    ("max_pool2d", (2, 3, 8, 8), (2,), dict(stride=0)),
    ("max_pool2d", (2, 3, 8, 8), (2,), dict(dilation=0)),
    ("max_pool2d", (2, 3, 8, 8), ((2, 2, 2),), {}),
    ("avg_pool2d", (2, 3, 8, 8), (2,), dict(divisor_override=0)),
    ("max_pool2d", (2, 0, 4, 4), (2,), {}),
    ("adaptive_avg_pool2d", (2, 3), (2,), {}),
    ("adaptive_avg_pool2d", (2, 3, 8, 8), ((2,),), {}),
    ("adaptive_avg_pool2d", (2, 3, 8, 8), (-1,), {}),
    ("adaptive_max_pool2d", (2, 3, 0, 4), (3,), {}),
    ("unfold", (2, 3, 5, 5), (6,), {}),
    ("unfold", (2, 3, 5, 5, 5), (2,), {}),
    ("fold", (2, 12, 15), ((5, 5), 2), {}),
    ("fold", (2, 13, 16), ((5, 5), 2), {}),
]


def _err(f):
    try:
        f()
    except Exception as ex:  # noqa: BLE001
        return type(ex)
    return None


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_errors_match_torch(case):
    name, shape, args, kw = case
    tt = _err(lambda: getattr(TF, name)(torch.zeros(*shape), *args, **kw))
    et = _err(lambda: getattr(EF, name)(ember.zeros(*shape), *args, **kw))
    assert tt is not None
    assert et is tt, (et, tt)


def test_half_dtypes():
    a = np.random.default_rng(0).standard_normal((2, 3, 6, 6))
    for dt in ("float16", "bfloat16"):
        ye = EF.avg_pool2d(ember.tensor(a, dtype=getattr(ember, dt)), 2)
        yt = TF.avg_pool2d(torch.tensor(a, dtype=getattr(torch, dt)), 2)
        assert str(ye.dtype) == "ember." + dt
        np.testing.assert_allclose(ye.float().numpy(), yt.float().numpy(), rtol=2e-2, atol=2e-2)


# ---- modules ----

MODULES = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 10)),
    ("MaxPool2d", (3, 2, 1), dict(ceil_mode=True, dilation=1), (2, 3, 9, 9)),
    ("MaxPool2d", (2,), dict(return_indices=True), (2, 3, 8, 8)),
    ("MaxPool3d", (2,), {}, (1, 2, 4, 4, 4)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 10)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, divisor_override=4), (2, 3, 9, 9)),
    ("AvgPool3d", (2,), dict(ceil_mode=True), (1, 2, 5, 5, 5)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((5, None),), {}, (2, 3, 9, 9)),
    ("AdaptiveAvgPool3d", (2,), {}, (1, 2, 5, 5, 5)),
    ("AdaptiveMaxPool1d", (3,), dict(return_indices=True), (2, 3, 10)),
    ("AdaptiveMaxPool2d", ((4, 3),), {}, (2, 3, 9, 9)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 5, 5, 5)),
    ("LPPool1d", (2, 3), dict(stride=2), (2, 3, 10)),
    ("LPPool2d", (1.5, 2), {}, (2, 3, 8, 8)),
    ("Unfold", (3,), dict(padding=1), (2, 3, 5, 5)),
    ("Fold", ((4, 5), 2), {}, (2, 12, 12)),
]


@pytest.mark.parametrize("case", MODULES, ids=lambda c: f"{c[0]}{c[1]}{c[2]}")
def test_modules_match_torch(case):
    cls, args, kw, shape = case
    me, mt = getattr(ember.nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    assert repr(me) == repr(mt)
    assert list(me.state_dict().keys()) == list(mt.state_dict().keys()) == []
    xe, xt = both(shape, "float64", distinct=not cls.startswith("LP"))
    if cls.startswith("LP"):
        xe, xt = xe.abs() + 0.1, xt.abs() + 0.1
    ye, yt = me(xe), mt(xt)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(ye[1].numpy(), yt[1].numpy())
        ye, yt = ye[0], yt[0]
    np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_module(nd):
    shape = (1, 2) + (6, 6, 6)[:nd]
    xe, xt = both(shape, "float64")
    pe = getattr(ember.nn, f"MaxPool{nd}d")(2, return_indices=True)
    pt = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
    ue, ut = getattr(ember.nn, f"MaxUnpool{nd}d")(2), getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    assert repr(ue) == repr(ut)
    ye, yt = ue(*pe(xe)), ut(*pt(xt))
    np.testing.assert_array_equal(ye.numpy(), yt.numpy())


def test_top_level_pool_functions():
    a = np.random.default_rng(3).standard_normal((1, 2, 6, 6))
    for name, args in [("max_pool2d", (2,)), ("max_pool3d", (2,)), ("avg_pool1d", (3,)), ("max_pool1d", (2,)),
                       ("adaptive_avg_pool1d", (4,))]:
        x = a if name != "max_pool3d" else a.reshape(1, 1, 2, 6, 6)
        if name in ("avg_pool1d", "max_pool1d", "adaptive_avg_pool1d"):
            x = a.reshape(2, 6, 6)
        np.testing.assert_allclose(getattr(ember, name)(ember.tensor(x), *args).numpy(),
                                   getattr(torch, name)(torch.tensor(x), *args).numpy(), rtol=1e-12)
    ve, ie = ember.adaptive_max_pool1d(ember.tensor(a.reshape(2, 6, 6)), 3)
    vt, it = torch.adaptive_max_pool1d(torch.tensor(a.reshape(2, 6, 6)), 3)
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())


# ---- fractional max pooling: the same _random_samples in both libraries give the same windows ----

FRACTIONAL_CASES = [
    (2, (2, 3, 9, 11), (2, 3), dict(output_size=(4, 5))),
    (2, (3, 10, 10), 3, dict(output_size=(6, 7))),                    # unbatched
    (2, (2, 2, 12, 9), 2, dict(output_ratio=(0.5, 0.7))),
    (2, (1, 2, 8, 8), 2, dict(output_ratio=(0.6, 0.6))),
    (2, (2, 1, 7, 7), 3, dict(output_size=1)),                        # one window: the last position
    (2, (1, 2, 6, 6), 2, dict(output_size=5)),                        # every start used: overlapping windows
    (3, (2, 2, 7, 8, 9), (2, 3, 2), dict(output_size=(3, 4, 5))),
    (3, (2, 6, 6, 6), 2, dict(output_ratio=0.5)),                     # unbatched
    (3, (1, 1, 5, 6, 7), (1, 2, 3), dict(output_size=(4, 2, 3))),     # 3-d: out + k - 1 < size
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", FRACTIONAL_CASES, ids=lambda c: f"{c[0]}d-{c[1]}-{c[3]}")
def test_fractional_max_pool_matches_torch(case, dtype):
    nd, shape, k, kw = case
    n = shape[0] if len(shape) == nd + 2 else 1
    g = torch.Generator().manual_seed(len(shape) + nd)
    samples = torch.rand(n, shape[-nd - 1], nd, generator=g, dtype=getattr(torch, dtype))
    se = ember.tensor(samples.numpy())
    name = f"fractional_max_pool{nd}d"
    # Values, indices and input gradients (random values: overlapping windows may share a maximum).
    xe, xt = both(shape, dtype, distinct=False)
    xe.requires_grad_(True)
    xt.requires_grad_(True)
    ve, ie = getattr(EF, name)(xe, k, return_indices=True, _random_samples=se, **kw)
    vt, it = getattr(TF, name)(xt, k, return_indices=True, _random_samples=samples, **kw)
    assert str(ie.dtype) == "ember.int64"
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    np.testing.assert_array_equal(ve.detach().numpy(), vt.detach().numpy())
    g = np.random.default_rng(1).standard_normal(tuple(vt.shape)).astype(dtype)
    ve.backward(ember.tensor(g))
    vt.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=TOL[dtype], atol=TOL[dtype])
    # The same through *_with_indices, and the values alone.
    xe, xt = both(shape, dtype)
    ve, ie = getattr(EF, name + "_with_indices")(xe, k, _random_samples=se, **kw)
    vt, it = getattr(TF, name + "_with_indices")(xt, k, _random_samples=samples, **kw)
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    np.testing.assert_array_equal(getattr(EF, name)(xe, k, _random_samples=se, **kw).numpy(), vt.numpy())


def test_fractional_max_pool_ties_nan_inf_and_gradcheck():
    # Ties: the first maximum in the window; NaN: the window's last NaN; all -inf: the window's first.
    x = torch.zeros(1, 2, 7, 7, dtype=torch.float64)
    x[0, 1] = -torch.inf
    x[0, 0, 1, 1] = x[0, 0, 2, 3] = torch.nan
    s = torch.rand(1, 2, 2, dtype=torch.float64)
    ve, ie = EF.fractional_max_pool2d(ember.tensor(x.numpy()), 3, output_size=4, return_indices=True,
                                      _random_samples=ember.tensor(s.numpy()))
    vt, it = TF.fractional_max_pool2d(x, 3, output_size=4, return_indices=True, _random_samples=s)
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    # Overlapping windows with distinct values: gradcheck/gradgradcheck (the samples fixed).
    xe, _ = both((1, 2, 6, 5), "float64")
    se = ember.rand(1, 2, 2, dtype=ember.float64)
    f = lambda t: EF.fractional_max_pool2d(t, 2, output_size=(5, 3), _random_samples=se)  # noqa: E731
    assert gradcheck(f, (xe.requires_grad_(),))
    assert gradgradcheck(f, (xe,))
    xe3, _ = both((1, 1, 5, 5, 5), "float64")
    se3 = ember.rand(1, 1, 3, dtype=ember.float64)
    assert gradcheck(lambda t: EF.fractional_max_pool3d(t, 2, output_size=3, _random_samples=se3),
                     (xe3.requires_grad_(),))


def test_fractional_max_pool_random_samples_and_half():
    # Without _random_samples each call draws its own windows: the output is still a max of a
    # k x k window of the input, one per output position in increasing order.
    x = ember.randn(2, 3, 10, 10)
    v, i = EF.fractional_max_pool2d(x, 2, output_ratio=0.5, return_indices=True)
    assert tuple(v.shape) == (2, 3, 5, 5)
    flat = x.reshape(2, 3, 100)
    np.testing.assert_array_equal(flat.gather(2, i.reshape(2, 3, 25)).reshape(2, 3, 5, 5).numpy(), v.numpy())
    # Window starts increase by 1 or 2 (ratio 0.5, kernel 2): an argmax row/column is at most one
    # behind the previous output's.
    assert (np.diff((i // 10).numpy(), axis=2) >= -1).all()
    assert (np.diff((i % 10).numpy(), axis=3) >= -1).all()
    for dt in ["float16", "bfloat16"]:
        xt = torch.randn(1, 2, 9, 9).to(getattr(torch, dt))
        st = torch.rand(1, 2, 2).to(getattr(torch, dt))
        xe, se = ember.tensor(xt.float().numpy()).to(getattr(ember, dt)), ember.tensor(st.float().numpy()).to(
            getattr(ember, dt))
        ve, ie = EF.fractional_max_pool2d(xe, 3, output_size=5, return_indices=True, _random_samples=se)
        vt, it = TF.fractional_max_pool2d(xt, 3, output_size=5, return_indices=True, _random_samples=st)
        np.testing.assert_array_equal(ie.numpy(), it.numpy())
        np.testing.assert_array_equal(ve.float().numpy(), vt.float().numpy())


@pytest.mark.parametrize("call", [
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 3),                                  # no size
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 3, output_size=7),                   # too big
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), (2, 9), output_size=(4, 1)),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 3, output_size=4,
                                           _random_samples=lib.rand(1, 2, 2, dtype=lib.float64)),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 3, output_size=4, _random_samples=lib.rand(1, 2, 3)),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(2, 2, 8, 8), 3, output_size=4, _random_samples=lib.rand(1, 2, 2)),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 3, output_size=4, _random_samples=lib.rand(1, 3, 2)),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 3, output_size=4, _random_samples=lib.rand(2, 2)),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 3, output_size=4,
                                           _random_samples=lib.rand(1, 2, 2).requires_grad_()),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(8, 8), 2, output_size=4),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(2, 3, 4, 5, 8, 8), 2, output_size=4),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 0, 8), 2, output_size=4),
    lambda F, lib: F.fractional_max_pool2d(lib.randn(1, 2, 8, 8), 2, output_size=(4, 4, 4)),
    lambda F, lib: F.fractional_max_pool3d(lib.randn(1, 2, 6, 6, 6), (2, 7, 2), output_size=(3, 1, 3)),
    lambda F, lib: F.fractional_max_pool3d(lib.randn(1, 2, 6, 6, 6), 2, output_size=3,
                                           _random_samples=lib.rand(1, 2, 2)),
    lambda F, lib: F.fractional_max_pool3d(lib.randn(6, 6), 2, output_size=3),
    lambda F, lib: F.fractional_max_pool3d(lib.randn(1, 1, 5, 5, 5), 1, output_size=5),
])
def test_fractional_max_pool_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TF, torch)
    with pytest.raises(type(te.value)):
        call(EF, ember)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_modules(nd):
    cls = f"FractionalMaxPool{nd}d"
    shape = (2, 3) + (8,) * nd
    samples = torch.rand(2, 3, nd)
    tm = getattr(torch.nn, cls)(2, output_size=4, return_indices=True, _random_samples=samples)
    em = getattr(ember.nn, cls)(2, output_size=4, return_indices=True, _random_samples=ember.tensor(samples.numpy()))
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict()) == ["_random_samples"]
    assert em.kernel_size == tm.kernel_size and em.output_size == tm.output_size and em.output_ratio is None
    xe, xt = both(shape, "float32")
    (ve, ie), (vt, it) = em(xe), tm(xt)
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    em2, tm2 = getattr(ember.nn, cls)(3, output_ratio=0.5), getattr(torch.nn, cls)(3, output_ratio=0.5)
    assert em2.output_ratio == tm2.output_ratio and list(em2.state_dict()) == list(tm2.state_dict()) == []
    assert tuple(em2(xe).shape) == tuple(tm2(xt).shape)
    for lib in (ember, torch):
        C = getattr(lib.nn, cls)
        for kw in [dict(), dict(output_size=2, output_ratio=0.5), dict(output_ratio=1.5), dict(output_ratio=0.0)]:
            with pytest.raises(ValueError):
                C(2, **kw)
    with pytest.raises(ValueError):  # torch checks the kernel size in FractionalMaxPool3d only
        getattr(ember.nn, cls)(0, output_size=2) if nd == 3 else EF.fractional_max_pool2d(xe, 0, output_size=2)
    with pytest.raises(ValueError):
        torch.nn.FractionalMaxPool3d(0, output_size=2)


def test_fractional_max_pool_empty_outputs_and_batches():
    for nd, shape, out in [(2, (1, 2, 8, 8), (0, 2)), (2, (0, 2, 8, 8), 3), (3, (0, 2, 6, 6, 6), 3)]:
        name = f"fractional_max_pool{nd}d"
        xe, xt = both(shape, "float32")
        ve, ie = getattr(EF, name)(xe, 2, output_size=out, return_indices=True)
        vt, it = getattr(TF, name)(xt, 2, output_size=out, return_indices=True)
        assert tuple(ve.shape) == tuple(vt.shape) and tuple(ie.shape) == tuple(it.shape)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_max_pool_backward_adds_in_float(dt):
    # Overlapping windows (kernel 3, stride 1) send several gradients to one input; the 16-bit
    # kernel adds them in float and rounds once, so the result is the float32 gradient rounded.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    g = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
    lo = getattr(ember, dt)
    xe = ember.tensor(x).to(lo).requires_grad_()
    ge = ember.tensor(g).to(lo)
    (gx,) = ember.autograd.grad(EF.max_pool2d(xe, 3, stride=1), xe, ge)
    x32 = xe.detach().float().requires_grad_()
    (want,) = ember.autograd.grad(EF.max_pool2d(x32, 3, stride=1), x32, ge.float())
    assert gx.dtype == lo
    np.testing.assert_array_equal(gx.float().numpy(), want.to(lo).float().numpy())
    xt = torch.tensor(xe.detach().float().numpy()).to(getattr(torch, dt)).requires_grad_()
    (gt,) = torch.autograd.grad(TF.max_pool2d(xt, 3, stride=1), xt, torch.tensor(g).to(getattr(torch, dt)))
    np.testing.assert_allclose(gx.float().numpy(), gt.float().numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 3, 28, 28), (1, 1, 9, 7), (3, 2, 16, 33), (1, 1, 2, 2)])
def test_2x2_max_pool_values_and_indices_match_torch(dt, shape):
    # The vector 2x2 path (bfloat16 read as it is): ties, NaNs and row tails as torch picks them.
    x = np.round(np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 4) / 4
    if shape[-1] > 2:
        x.flat[::7] = np.nan
    vt, it = TF.max_pool2d(torch.tensor(x).to(getattr(torch, dt)), 2, return_indices=True)
    ve, ie = EF.max_pool2d(ember.tensor(x).to(getattr(ember, dt)), 2, return_indices=True)
    assert ve.dtype == getattr(ember, dt)
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    np.testing.assert_array_equal(ve.float().numpy(), vt.float().numpy())


@pytest.mark.parametrize("name,shape", [("adaptive_avg_pool1d", (3, 5, 49)), ("adaptive_avg_pool2d", (4, 6, 7, 7)),
                                        ("adaptive_avg_pool2d", (6, 8, 8)), ("adaptive_avg_pool3d", (2, 3, 4, 5, 6)),
                                        ("adaptive_avg_pool2d", (2, 3, 33, 1))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_global_average_pool(name, shape, dtype):
    # output size 1 in every spatial dim runs as a mean (forward) and gy / window (backward)
    rng = np.random.default_rng(len(shape))
    a = rng.standard_normal(shape).astype("float64")
    xt = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
    xe = ember.tensor(a).to(getattr(ember, dtype)).requires_grad_()
    nd = int(name[-2])
    yt, ye = getattr(TF, name)(xt, 1), getattr(EF, name)(xe, 1)
    assert tuple(ye.shape) == tuple(yt.shape) and ye.dtype == getattr(ember, dtype)
    tol = {"float32": 1e-6, "float64": 1e-14, "bfloat16": 1e-2}[dtype]
    np.testing.assert_allclose(ye.detach().float().numpy(), yt.detach().float().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(yt.shape)
    yt.backward(torch.tensor(g).to(yt.dtype))
    ye.backward(ember.tensor(g).to(ye.dtype))
    np.testing.assert_array_equal(xe.grad.float().numpy(), xt.grad.float().numpy())  # gy / window exactly
    if nd > 1:  # torch's 1-d pool wraps the 2-d one in (un)squeezes
        assert ye.grad_fn.name() == yt.grad_fn.name() == "MeanBackward1"
    if dtype == "float64" and nd == 2:
        xg = ember.tensor(a[..., :3, :4].copy()).requires_grad_()
        assert gradgradcheck(lambda t: EF.adaptive_avg_pool2d(t, 1), (xg,))
    # channels_last input
    if len(shape) == 4 and dtype == "float32":
        xc = xe.detach().to(memory_format=ember.channels_last)
        np.testing.assert_allclose(EF.adaptive_avg_pool2d(xc, 1).numpy(),
                                   TF.adaptive_avg_pool2d(xt.detach().to(memory_format=torch.channels_last), 1).numpy(),
                                   rtol=tol, atol=tol)
