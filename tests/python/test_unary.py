"""Unary math, activations and pointwise ops: what the op table does not cover (special values,
accuracy of the vectorized float kernels, promotion, in-place and out= rules, autograd errors,
error types), always against torch 2.13 (or scipy for torch's own less accurate gradients)."""
import math

import pytest

import ember
import ember.nn.functional as EF
from conftest import assert_same, both, same_error, torch
from torch_deviations import reference

TF = torch.nn.functional

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-30, -1e-30, 1e-3, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5,
           3.0, -3.0, 10.0, -10.0, 20.5, 88.0, 89.0, -87.5, -104.0, 1e30, -1e30]

FLOAT_OPS = ["abs", "sign", "sgn", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
             "square", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
             "atanh", "sigmoid", "logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "floor", "ceil", "round",
             "trunc", "frac", "reciprocal", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "nan_to_num",
             "logical_not", "signbit", "relu", "selu", "celu", "neg"]
ACTS = ["relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "softsign", "hardtanh", "hardsigmoid",
        "hardswish", "logsigmoid"]


def ember_from(t):
    """ember tensor with torch tensor t's values and dtype."""
    e, _ = both(t.tolist(), str(t.dtype).split(".")[-1])
    return e


def same_signs(e, t):
    """Also compare the sign bit, so -0.0 and 0.0 are told apart (a NaN's sign means nothing)."""
    if t.dtype.is_floating_point:
        keep = [not math.isnan(v) for v in t.tolist()]
        got, want = ember.signbit(e).tolist(), torch.signbit(t).tolist()
        assert [g for g, k in zip(got, keep) if k] == [w for w, k in zip(want, keep) if k]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", FLOAT_OPS)
def test_special_values_match_torch(name, dtype):
    e, t = both(SPECIAL, dtype)
    r_t, r_e = getattr(torch, name)(t), getattr(ember, name)(e)
    assert_same(r_e, r_t)
    same_signs(r_e, r_t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ACTS)
def test_activation_special_values_match_torch(name, dtype):
    e, t = both(SPECIAL, dtype)
    want = reference(name, dtype, SPECIAL, getattr(TF, name)(t).tolist())  # tests/python/torch_deviations.py
    assert_same(getattr(EF, name)(e), torch.tensor(want, dtype=t.dtype))


@pytest.mark.parametrize("name,low,high", [
    ("exp", -110.0, 95.0), ("sigmoid", -120.0, 120.0), ("tanh", -12.0, 12.0), ("erf", -6.0, 6.0),
    ("gelu", -14.0, 12.0), ("silu", -85.0, 100.0),
])
def test_vectorized_float_kernels_are_accurate(name, low, high):
    """The branch-free float kernels (Note [Vectorizable float math]) against float64 results."""
    n = 40001
    e = ember.linspace(low, high, n, dtype=ember.float32)
    x = torch.tensor(e.tolist(), dtype=torch.float32)
    f_e = getattr(EF, name) if name in ("gelu", "silu") else getattr(ember, name)
    f_t = getattr(TF, name) if name in ("gelu", "silu") else getattr(torch, name)
    got = torch.tensor(f_e(e).tolist(), dtype=torch.float64)
    xd = x.double()
    # gelu's reference through erfc: 1 + erf(x) loses all digits in the far negative tail
    ref = xd * 0.5 * torch.special.erfc(-xd / math.sqrt(2)) if name == "gelu" else f_t(xd)
    big = ref.abs() > torch.finfo(torch.float32).max
    assert (got[big].abs() == math.inf).all()  # overflows to inf
    got, ref = got[~big], ref[~big]
    # Relative error where results are well inside the normal range; looser near and below it
    # (intermediate subnormals lose bits, as they would in any float implementation).
    err = (got - ref).abs()
    normal = ref.abs() > 1e-30
    rel = (err / ref.abs().clamp_min(1e-30))[normal]
    assert rel.max().item() < 1e-6, f"max relative error {rel.max().item():.3g}"  # 8 float ulp
    # (sigmoid(x < -88.7) is 0: e^-x overflows, as in any float formula 1 / (1 + e^-x))
    assert (err[~normal] <= 1e-5 * ref.abs()[~normal] + 3 * torch.finfo(torch.float32).tiny).all()


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "sigmoid", "erf", "reciprocal", "log1p", "atan"])
def test_integer_inputs_promote_to_default_float(name, dtype):
    e, t = both([0, 1, 1, 0] if dtype == "bool" else [0, 1, 2, 7], dtype)
    assert_same(getattr(ember, name)(e), getattr(torch, name)(t))
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert_same(getattr(ember, name)(e), getattr(torch, name)(t))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "sigmoid", "abs", "floor", "round", "sqrt", "relu",
                                  "neg", "reciprocal", "erf", "frac", "nan_to_num"])
def test_inplace_matches_out_of_place_and_bumps_version(name):
    e, t = both([[0.25, 1.5, 2.0], [0.5, 3.0, 0.75]], "float32")
    expected = getattr(torch, name)(t)
    v = e._version
    r = getattr(e, name + "_")()
    assert r.data_ptr() == e.data_ptr()
    assert e._version > v
    assert_same(e, expected)
    e2, _ = both([[0.25, 1.5, 2.0], [0.5, 3.0, 0.75]], "float32")
    assert getattr(ember, name + "_")(e2).data_ptr() == e2.data_ptr()
    assert_same(e2, expected)


def test_inplace_on_a_view_writes_the_base():
    e, t = both([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], "float64")
    e[:, 1].exp_()
    t[:, 1].exp_()
    assert_same(e, t)
    e.t().sigmoid_()
    t.t().sigmoid_()
    assert_same(e, t)


def test_inplace_under_autograd():
    # On a leaf that requires grad: an error in both.
    e, t = both([0.5, 1.5], "float64")
    e.requires_grad_()
    t.requires_grad_()
    same_error(lambda: e.exp_(), lambda: t.exp_())
    same_error(lambda: e.clamp_(0, 1), lambda: t.clamp_(0, 1))
    same_error(lambda: e.atan2_(e), lambda: t.atan2_(t))
    # On a non-leaf: history is rebased, gradients flow through the in-place op.
    for lib, x in ((ember, e), (torch, t)):
        y = x * 2
        y.sin_()
        y.addcmul_(x, x, value=0.5)
        y.exp_()
        y.sum().backward()
    assert_same(e.grad, t.grad)
    assert e.grad is not None


def test_saved_tensor_modified_in_place_raises():
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.0], requires_grad=True) if hasattr(lib, "tensor") else None
        if x is None:
            x = lib.ones(2, requires_grad=True)
        y = x * 1
        z = y.exp()  # saves its result z, not y
        y.add_(1)  # fine: exp does not need its input
        z.sum().backward()
        w = x * 1
        s = w.sin()  # saves w
        w.mul_(2)
        with pytest.raises(RuntimeError):
            s.sum().backward()


def test_inplace_integer_with_float_result_raises():
    e, t = both([1, 2], "int64")
    same_error(lambda: e.exp_(), lambda: t.exp_())
    same_error(lambda: e.sqrt_(), lambda: t.sqrt_())
    same_error(lambda: e.atan2_(e), lambda: t.atan2_(t))
    # logical_not_ keeps the tensor's dtype
    e.logical_not_()
    t.logical_not_()
    assert_same(e, t)


def test_out_dtype_rules():
    e, t = both([0.5, 2.0, -1.0], "float32")
    eo, to = ember.empty(3, dtype=ember.float64), torch.empty(3, dtype=torch.float64)
    assert ember.exp(e, out=eo).data_ptr() == eo.data_ptr()
    torch.exp(t, out=to)
    assert_same(eo, to)
    # int out for a float result: error in both
    ei, ti = ember.empty(3, dtype=ember.int64), torch.empty(3, dtype=torch.int64)
    same_error(lambda: ember.exp(e, out=ei), lambda: torch.exp(t, out=ti))
    same_error(lambda: ember.atan2(e, e, out=ei), lambda: torch.atan2(t, t, out=ti))
    # bool result into a float out is allowed; wrong-shaped out is resized
    eo2, to2 = ember.empty(5, dtype=ember.float32), torch.empty(0, dtype=torch.float32)
    ember.logical_not(e, out=eo2)
    torch.logical_not(t, out=to2)
    assert_same(eo2, to2)
    v = eo._version
    ember.sigmoid(e, out=eo)
    assert eo._version > v
    eb, tb = ember.empty(3, dtype=ember.float32), torch.empty(3, dtype=torch.float32)
    ember.maximum(e, ember.zeros(3), out=eb)
    torch.maximum(t, torch.zeros(3), out=tb)
    assert_same(eb, tb)
    ember.where(e > 0, e, ember.zeros(3), out=eb)
    torch.where(t > 0, t, torch.zeros(3), out=tb)
    assert_same(eb, tb)


def test_out_with_requires_grad_raises():
    e, t = both([0.5, 2.0], "float64")
    e.requires_grad_()
    t.requires_grad_()
    same_error(lambda: ember.exp(e, out=ember.empty(2, dtype=ember.float64)),
               lambda: torch.exp(t, out=torch.empty(2, dtype=torch.float64)))


@pytest.mark.parametrize("case", [
    lambda L, f, i: L.bitwise_and(f, f),
    lambda L, f, i: L.bitwise_not(f),
    lambda L, f, i: f << 1,
    lambda L, f, i: L.abs(i.bool()),
    lambda L, f, i: -(i.bool()),
    lambda L, f, i: L.frac(i),
    lambda L, f, i: L.where(f, f, f),
    lambda L, f, i: L.where(f > 0, f, L.ones(4)),
    lambda L, f, i: L.atan2(f, 2.0),
    lambda L, f, i: L.maximum(f, 1),
    lambda L, f, i: L.clamp(f),
    lambda L, f, i: L.fmod(i, L.zeros(3, dtype=L.int64)),
    lambda L, f, i: L.addcdiv(i, i, i),
    lambda L, f, i: L.lerp(f, f.double(), 0.5),
    lambda L, f, i: L.nn.functional.gelu(f, approximate="fast"),
    lambda L, f, i: L.nn.functional.hardtanh(f, 2.0, 1.0),
    lambda L, f, i: L.nn.functional.silu(i),
    lambda L, f, i: L.allclose(f, L.ones(4)),
    lambda L, f, i: L.round(i, decimals=1),
], ids=lambda c: "")
def test_error_types_match_torch(case):
    ef, tf = both([0.5, -1.0, 2.0], "float32")
    ei, ti = both([1, 2, 3], "int64")
    same_error(lambda: case(ember, ef, ei), lambda: case(torch, tf, ti))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_bitwise_operators(dtype):
    vals = [[1, 0], [1, 1]] if dtype == "bool" else [[3, -7], [100, 5]] if dtype != "uint8" else [[3, 7], [200, 5]]
    e, t = both(vals, dtype)
    e2, t2 = both([[1, 1], [0, 1]] if dtype == "bool" else [[6, 2], [3, 1]], dtype)
    for f in (lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: ~a,
              lambda a, b: a & 1, lambda a, b: 5 | a, lambda a, b: a ^ True):
        assert_same(f(e, e2), f(t, t2))
    if dtype != "bool":
        for f in (lambda a, b: a << b, lambda a, b: a >> b, lambda a, b: a << 2, lambda a, b: a >> 1,
                  lambda a, b: 1 << a.clamp(0, 6), lambda a, b: a.bitwise_left_shift(b)):
            assert_same(f(e, e2), f(t, t2))
    for op in ("__iand__", "__ior__", "__ixor__") + (("__ilshift__", "__irshift__") if dtype != "bool" else ()):
        a, b = e.clone(), t.clone()
        r = getattr(a, op)(e2)
        getattr(b, op)(t2)
        assert r.data_ptr() == a.data_ptr()
        assert_same(a, b)


def test_abs_and_positive_operators():
    e, t = both([-1.5, 2.0], "float32")
    assert_same(abs(e), abs(t))
    assert_same(+e, +t)
    assert ember.positive(e).data_ptr() == e.data_ptr()


def test_where_gradients_and_scalars():
    ec, tc = both([True, False, True], "bool")
    ea, ta = both([1.0, 2.0, 3.0], "float64")
    eb, tb = both([[4.0], [5.0]], "float64")
    ea.requires_grad_(), ta.requires_grad_(), eb.requires_grad_(), tb.requires_grad_()
    for lib, c, a, b in ((ember, ec, ea, eb), (torch, tc, ta, tb)):
        (lib.where(c, a, b) * lib.arange(6, dtype=lib.float64).reshape(2, 3)).sum().backward()
    assert_same(ea.grad, ta.grad)
    assert_same(eb.grad, tb.grad)
    assert ember.autograd.gradcheck(lambda a, b: ember.where(ec, a, b), (ea.detach().requires_grad_(),
                                                                        eb.detach().requires_grad_()))
    assert_same(ember.where(ec, 1, 2.5), torch.where(tc, 1, 2.5))
    assert_same(ember.where(ec, 1, 2), torch.where(tc, 1, 2))
    assert_same(ea.detach().where(ec, 0), ta.detach().where(tc, 0))


def test_digamma_gradient_against_scipy():
    special = pytest.importorskip("scipy.special")
    xs = [0.1, 0.7, 1.5, 3.2, 9.5, 25.0, -0.5, -2.3]
    e, _ = both(xs, "float64")
    e.requires_grad_()
    ember.digamma(e).sum().backward()
    for g, x in zip(e.grad.tolist(), xs):
        assert abs(g - special.polygamma(1, x)) <= 1e-12 * abs(g)
    lg = [special.digamma(x) for x in xs]
    assert all(abs(a - b) <= 1e-12 * abs(b) for a, b in zip(ember.digamma(e.detach()).tolist(), lg))
    assert ember.autograd.gradcheck(ember.digamma, (e.detach().requires_grad_(),))


@pytest.mark.parametrize("name,fn,deriv", [
    ("hardsigmoid", EF.hardsigmoid, lambda x: 1 / 6 if -3 < x < 3 else 0.0),
    ("celu_0.7", lambda x: EF.celu(x, 0.7), lambda x: 1.0 if x > 0 else math.exp(x / 0.7)),
    ("sgn", ember.sgn, lambda x: 0.0),
])
def test_gradients_where_torch_rounds_constants(name, fn, deriv):
    """torch computes these gradients with float constants; check against the exact derivative."""
    xs = [-4.0, -2.5, -0.3, 0.2, 1.7, 3.5]
    e, _ = both(xs, "float64")
    e.requires_grad_()
    fn(e).sum().backward()
    for g, x in zip(e.grad.tolist(), xs):
        assert abs(g - deriv(x)) <= 1e-14
    assert ember.autograd.gradcheck(fn, (e.detach().requires_grad_(),))


@pytest.mark.parametrize("fn", [ember.tanh, ember.sigmoid, ember.exp, ember.erf, ember.atan, ember.log1p,
                                EF.gelu, EF.silu, EF.mish, EF.softplus, EF.elu, EF.logsigmoid,
                                lambda x: EF.gelu(x, approximate="tanh"), lambda x: ember.atan2(x, x * x + 1),
                                lambda x: ember.lerp(x, x * x, x)])
def test_double_backward(fn):
    e, _ = both([0.3, -0.7, 1.2], "float64")
    assert ember.autograd.gradgradcheck(fn, (e.requires_grad_(),))


def test_isclose_allclose_equal():
    ea, ta = both([1.0, 2.0, math.nan, math.inf], "float32")
    eb, tb = both([1.0 + 1e-6, 2.1, math.nan, math.inf], "float32")
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1}, {"atol": 0.2, "rtol": 0}):
        assert_same(ember.isclose(ea, eb, **kw), torch.isclose(ta, tb, **kw))
        assert ember.allclose(ea, eb, **kw) == torch.allclose(ta, tb, **kw)
    assert ember.equal(ea[:2], ea[:2].clone()) and not ember.equal(ea, eb)
    e1, t1 = both([1, 2], "int64")
    e2, t2 = both([1.0, 2.0], "float32")
    assert ember.equal(e1, e2) == torch.equal(t1, t2)
    assert ember.equal(e1, ember.ones(3)) == torch.equal(t1, torch.ones(3))
    assert_same(ember.isclose(e1, e1 + 1, atol=1), torch.isclose(t1, t1 + 1, atol=1))


def test_clamp_promotion_and_bounds():
    e, t = both([1, 5, -3], "int64")
    for kw in ({"min": 0.5}, {"min": 0, "max": 2}, {"max": -1}, {"min": 3, "max": 1}):
        assert_same(ember.clamp(e, **kw), torch.clamp(t, **kw))
    ef, tf = both([0.5, math.nan, -2.0, 7.0], "float32")
    assert_same(ember.clip(ef, -1, 1), torch.clip(tf, -1, 1))
    lo_e, lo_t = both([0.0, 0.0, -1.0, 8.0], "float32")
    assert_same(ember.clamp(ef, lo_e, ember.tensor(3.0)), torch.clamp(tf, lo_t, torch.tensor(3.0)))
    with pytest.raises(TypeError):  # no clamp(Tensor, Tensor, Number) overload, as torch
        ember.clamp(ef, lo_e, 3.0)
    assert_same(ef.clamp_min(lo_e), tf.clamp_min(lo_t))
    a, b = ef.clone(), tf.clone()
    a.clamp_(max=0.0), b.clamp_(max=0.0)
    assert_same(a, b)


def test_functional_inplace_and_module():
    assert ember.nn.functional is EF
    for name, kw in [("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
                     ("selu", {}), ("celu", {}), ("silu", {}), ("mish", {}), ("hardtanh", {}),
                     ("hardsigmoid", {}), ("hardswish", {}), ("threshold", {"threshold": 0.1, "value": -1.0})]:
        e, t = both([-2.0, -0.5, 0.0, 0.7, 3.5, 7.0], "float32")
        r = getattr(EF, name)(e, inplace=True, **kw)
        getattr(TF, name)(t, inplace=True, **kw)
        assert r.data_ptr() == e.data_ptr(), name
        assert_same(e, t)


def test_round_decimals_and_nan_to_num_defaults():
    e, t = both([1.23456, -15.55, 25.0, 0.5, 1.5, 2.5, -0.5], "float64")
    for d in (0, 1, 3, -1):
        assert_same(ember.round(e, decimals=d), torch.round(t, decimals=d))
    e, t = both([math.nan, math.inf, -math.inf, 1.0], "float16")
    assert_same(ember.nan_to_num(e), torch.nan_to_num(t))
    assert_same(e.nan_to_num(posinf=1.0), t.nan_to_num(posinf=1.0))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polygamma_special_values(n, dtype):
    # Poles at negative integers are left out: torch's trigamma returns a huge finite number there
    # (sin(pi x) is not exactly 0); test_polygamma_poles checks ours is inf, as scipy's.
    xs = [0.0, -0.0, -2.5, 1e-3, 0.5, 1.0, 3.7, 25.0, 1e4, math.inf, -math.inf, math.nan]
    e, t = both(xs, dtype)
    # torch's trigamma (n = 1) is good to ~1e-9 only (test_polygamma_against_scipy checks ours tighter).
    rtol = 1e-5 if dtype == "float32" else 1e-8 if n == 1 else 1e-10
    assert_same(ember.polygamma(n, e), torch.polygamma(n, t), rtol=rtol, atol=0)
    assert_same(ember.special.polygamma(n, e), torch.special.polygamma(n, t), rtol=rtol, atol=0)


def test_polygamma_poles():
    special = pytest.importorskip("scipy.special")
    e, _ = both([-1.0, -2.0, -3.0], "float64")
    for n in range(1, 5):
        assert ember.polygamma(n, e).tolist() == [float(special.polygamma(n, x)) for x in (-1.0, -2.0, -3.0)]


def test_polygamma_against_scipy():
    special = pytest.importorskip("scipy.special")
    xs = [0.1, 0.7, 1.5, 3.2, 9.5, 25.0, -0.5, -2.3]
    e, _ = both(xs, "float64")
    for n in range(6):
        got = ember.polygamma(n, e).tolist()
        for g, x in zip(got, xs):
            ref = float(special.polygamma(n, x))
            assert abs(g - ref) <= 1e-11 * abs(ref), (n, x, g, ref)


def test_polygamma_method_inplace_out_and_errors():
    e, t = both([0.5, 1.5, 2.5], "float64")
    assert_same(e.polygamma(2), t.polygamma(2))
    e2, t2 = e.clone(), t.clone()
    assert e2.polygamma_(3) is e2
    t2.polygamma_(3)
    assert_same(e2, t2)
    out_e, out_t = ember.empty(3, dtype=ember.float64), torch.empty(3, dtype=torch.float64)
    assert ember.polygamma(1, e, out=out_e) is out_e
    torch.polygamma(1, t, out=out_t)
    assert_same(out_e, out_t, rtol=1e-8)  # torch's trigamma: ~1e-9
    ei, ti = both([1, 2, 3], "int64")
    assert_same(ember.polygamma(2, ei), torch.polygamma(2, ti))
    same_error(lambda: ember.polygamma(-1, e), lambda: torch.polygamma(-1, t))
    same_error(lambda: ember.polygamma(1.5, e), lambda: torch.polygamma(1.5, t))


def test_digamma_and_polygamma_differentiate_three_times():
    x = ember.tensor([0.3, 1.7, 4.2], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(ember.digamma, (x,))
    assert ember.autograd.gradgradcheck(lambda v: ember.polygamma(2, v), (x,))
    assert ember.autograd.gradgradcheck(ember.lgamma, (x,))
    (g,) = ember.autograd.grad(ember.lgamma(x).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x, create_graph=True)
    (k,) = ember.autograd.grad(h.sum(), x)
    xt = torch.tensor([0.3, 1.7, 4.2], dtype=torch.float64)
    assert_same(k, torch.polygamma(2, xt))
    assert ember.digamma(x).grad_fn.name() == "DigammaBackward0"
    assert ember.polygamma(2, x).grad_fn.name() == "PolygammaBackward0"


def test_bool_bytes_other_than_0_and_1_read_as_true():
    # A bool tensor's memory may hold any byte (a uint8 tensor viewed as bool, an uninitialized
    # empty()); as in torch every nonzero byte is True, in elementwise ops, casts and sums alike.
    b = ember.tensor([0, 1, 190, 2, 255], dtype=ember.uint8).view(ember.bool)
    t = ember.ones(5, dtype=ember.bool)
    want = [False, True, True, True, True]
    assert (b & t).tolist() == want and (b | ~t).tolist() == want and (b == t).tolist() == want
    assert (b ^ t).tolist() == [not w for w in want] and ember.logical_not(b).tolist() == [not w for w in want]
    assert b.to(ember.float32).tolist() == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert b.int().tolist() == [0, 1, 1, 1, 1] and b.long().cumsum(0).tolist() == [0, 1, 2, 3, 4]
    assert b.sum().item() == 4 and b.sum(0).item() == 4 and b.float().mean().item() == pytest.approx(0.8)
    assert b.any().item() and not b.all().item() and b.prod().item() == 0
    assert ember.where(b, 1.0, 0.0).tolist() == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert ember.where(b, ember.ones(5), ember.zeros(5)).tolist() == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert ember.zeros(5).masked_fill(b, 2.0).tolist() == [0.0, 2.0, 2.0, 2.0, 2.0]
    strided = ember.tensor([190, 0, 0, 0, 2, 0], dtype=ember.uint8).view(ember.bool)[::2]
    assert strided.to(ember.float32).tolist() == [1.0, 0.0, 1.0] and strided.sum().item() == 2


# ---- 16-bit float conversions (cpu/convert_kernels.cpp, Note [Half in float blocks]) ----
# Contiguous runs go through F16C at the AVX2/AVX-512 levels, strided ones through core/half.h:
# both must give the same bits, and torch's bits for every non-NaN value.

def _bits(t):
    return {2: ember.int16, 4: ember.int32, 8: ember.int64}[t.element_size()], t


def _as_bits(t):
    dt, t = _bits(t)
    return t.contiguous().view(dt).numpy()


def _strided(t):
    # the same values laid out with stride 2: the element loop of copy_
    return ember.stack([t, t], dim=1)[:, 0]


def _half_patterns():
    return ember.arange(-32768, 32768, dtype=ember.int32).to(ember.int16).view(ember.float16)


def _float_patterns(seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=1 << 20, dtype=np.uint64).astype(np.uint32)
    # every half rounding boundary: the midpoints between neighbouring halves (ties), and one float either side
    h = np.arange(0, 0x7c00, dtype=np.uint32)
    lo = np.array(h, dtype=np.uint16).view(np.float16).astype(np.float32)
    hi = np.array(h + 1, dtype=np.uint16).view(np.float16).astype(np.float32)
    mid = ((lo.astype(np.float64) + hi.astype(np.float64)) / 2).astype(np.float32)
    mids = mid.view(np.uint32)
    special = np.array([0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x477fefff, 0x477ff000, 0x477ff001,
                        0x38800000, 0x387fffff, 0x33000000, 0x33000001, 0x32ffffff, 0x00000001, 0x80000000],
                       dtype=np.uint32)
    allbits = np.concatenate([bits, mids, mids + 1, mids - 1, mids | 0x80000000, special])
    return ember.from_numpy(allbits.view(np.int32).copy()).view(ember.float32)


def _check_conversion(x, dst):
    import numpy as np
    y = x.to(dst)
    ys = _strided(x).to(dst)
    yb, ysb = _as_bits(y), _as_bits(ys)
    nan = ember.isnan(y).numpy()
    assert np.array_equal(nan, ember.isnan(ys).numpy())
    assert np.array_equal(yb[~nan], ysb[~nan]), "vector and element conversions differ"
    assert np.array_equal(yb[nan], ysb[nan]), "vector and element conversions give different NaNs"
    if torch is not None:
        tdt = getattr(torch, str(dst).split(".")[-1])
        tx = torch.from_numpy(_as_bits(x)).view(getattr(torch, str(x.dtype).split(".")[-1]))
        ty = tx.to(tdt)
        tnan = torch.isnan(ty).numpy()
        assert np.array_equal(nan, tnan)
        tb = ty.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[ty.element_size()]).numpy()
        assert np.array_equal(yb[~nan], tb[~nan]), "differs from torch"


@pytest.mark.parametrize("dst", ["float32", "float64", "bfloat16"])
def test_half_conversions_every_value(dst):
    _check_conversion(_half_patterns(), getattr(ember, dst))


@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
def test_float_to_16_bit_conversions(dst):
    _check_conversion(_float_patterns(), getattr(ember, dst))


@pytest.mark.parametrize("src", ["float64", "bfloat16"])
def test_other_16_bit_conversions(src):
    x = _float_patterns(1)
    x = x[~ember.isnan(x)].to(getattr(ember, src))  # (a float64 NaN's payload is not a float's)
    _check_conversion(x, ember.float16)
    _check_conversion(_half_patterns().to(ember.bfloat16), ember.float16)


def test_half_nan_to_float_is_quiet():
    # a signalling half NaN becomes a quiet float NaN on every path (F16C's rule, and torch's)
    x = ember.tensor([0x7c01, 0xfc01 - 65536, 0x7e00, 0x7d55] * 5, dtype=ember.int16).view(ember.float16)
    for y in (x.to(ember.float32), _strided(x).to(ember.float32)):
        assert ((_as_bits(y) & 0x7fc00000) == 0x7fc00000).all()


@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum", "lt"])
def test_half_elementwise_blocks_match_element_loop(op):
    # contiguous Half runs compute in float blocks; strided ones element by element: same bits
    import numpy as np
    x = _half_patterns()
    x = x[~ember.isnan(x)]
    y = x.flip(0)
    f = getattr(ember, op)
    for a, b in ((x, y), (x, y[:1].expand_as(x)), (x[:1].expand_as(y), y), (x[:777], y[:777])):
        r, rs = f(a, b), f(_strided(a), _strided(b))
        assert np.array_equal(_as_bits(r) if r.is_floating_point() else r.numpy(),
                              _as_bits(rs) if rs.is_floating_point() else rs.numpy())
    r = ember.relu(x)
    assert np.array_equal(_as_bits(r), _as_bits(ember.relu(_strided(x))))


def test_half_sum_in_float_blocks():
    x = ember.linspace(-1, 0.5, 100003).to(ember.float16)
    ref = x.double().sum()
    assert abs(float(x.sum().float()) - float(ref)) <= abs(float(ref)) * 2**-10
    assert abs(float(x.sum(dtype=ember.float32)) - float(ref)) <= abs(float(ref)) * 1e-6
    if torch is not None:
        tx = torch.linspace(-1, 0.5, 100003).to(torch.float16)
        assert float(x.sum(dtype=ember.float32)) == pytest.approx(float(tx.sum(dtype=torch.float32)), rel=1e-6)


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("dst", ["int8", "int16", "int32", "int64", "uint8"])
def test_float_to_int_conversions(src, dst):
    # contiguous runs take the truncating conversion instructions (cpu/convert_kernels.cpp), strided
    # ones the element loop: both must give torch's values, out-of-range ones included
    import numpy as np
    special = [0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1.5, -1.5, 127.9, 128.0, -128.0, -129.0, 255.7, 256.0, 300.0, -1.0,
               32767.5, 32768.0, -32769.0, 65535.0, 2.0**31 - 128, 2.0**31, -2.0**31, -2.0**31 - 256, 2.0**32, 3e9,
               -3e9, 2.0**40 + 2**20, 2.0**63, -2.0**63, 2.0**64, 1e30, -1e30, math.inf, -math.inf, math.nan]
    rng = np.random.default_rng(0)
    small = rng.standard_normal(1003) * 1000  # runs of 8 below 2^31: the widened 32-bit path at AVX2
    small[rng.integers(0, 1003, 9)] = [2.0**31, -2.0**31, 3e9, math.nan, -math.inf, 2.0**40, -2.0**31 - 256, 1e30, 5.0]
    vals = np.concatenate([np.array(special * 3), rng.standard_normal(1000) * 10.0 ** rng.integers(0, 20, 1000), small])
    if src == "float64" and dst == "uint8":
        vals = vals[np.abs(vals) < 2.0**31]  # torch's low byte of a huge double's int64 is not defined by us
    t = torch.from_numpy(vals.astype(src))
    e = ember.from_numpy(vals.astype(src))
    got, got_strided = e.to(getattr(ember, dst)).numpy(), _strided(e).to(getattr(ember, dst)).numpy()
    want = t.to(getattr(torch, dst)).numpy() if torch is not None else got_strided
    assert np.array_equal(got, got_strided)
    assert np.array_equal(got, want)


# ---- Note [Float math loops]: log/log2/log10, sin/cos/tan, asin/acos/atan, atan2 in float ----

def _float32_inputs(seed, n=1 << 20):
    """Random float32 bit patterns (every exponent, subnormals, huge values; NaNs dropped), a dense
    grid where the functions are used most, and the special values."""
    import numpy as np
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    bits = bits[~np.isnan(bits)]
    grid = np.linspace(-12.0, 12.0, 200001, dtype=np.float32)
    special = np.array(SPECIAL + [1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38,
                                  1048575.9, 1048576.0, -1048576.0, 2.0 ** 24, 1e10],
                       dtype=np.float32)
    return np.concatenate([bits, grid, grid / 12, special])


def _ulp_error(got, ref):
    """|got - ref| in units of the float32 spacing at ref (both numpy; ref in float64)."""
    import numpy as np
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    spacing = np.abs(np.spacing(ref32)).astype(np.float64)
    spacing = np.maximum(spacing, 2.0 ** -149)
    return np.abs(got.astype(np.float64) - ref) / spacing


@pytest.fixture(params=["own", "mkl"])
def math_backend(request):
    """Float math on ember's kernels (Notes [Double math], [Float log], ...) or, where installed, MKL's
    vector math (Note [MKL VML])."""
    if request.param == "mkl" and not ember.backends.mkl.is_available():
        pytest.skip("MKL is not installed")
    old = ember.backends.mkl.enabled
    ember.backends.mkl.enabled = request.param == "mkl"
    yield request.param
    ember.backends.mkl.enabled = old


@pytest.mark.parametrize("name,max_ulp", [
    ("log", 1.0), ("log2", 1.0), ("log10", 1.0), ("log1p", 2.0), ("expm1", 3.0), ("sin", 1.0),
    ("cos", 1.0), ("tan", 1.5), ("asin", 1.0), ("acos", 1.0), ("atan", 1.0), ("erfinv", 1.0),
    ("sinh", 1.6), ("cosh", 1.6), ("exp2", 1.1), ("erfc", 5.5), ("asinh", 1.8), ("acosh", 1.8), ("atanh", 1.8),
    ("lgamma", 2.0),
])
def test_float_math_kernels_against_float64(name, max_ulp, math_backend):
    """The vectorized float32 kernels over every exponent against torch's float64 results: within
    max_ulp (log/trigonometry measured 0.8 and 0.56 ulp over 44M inputs; tan 1.4 only where
    |x| >= 2^20, which goes to libm; erfinv 0.97 over every float in [0, 1); sinh/cosh 1.55 through
    math::exp; Note [Float exp2, erfc and inverse hyperbolics]: exp2 1.01, erfc 5.35 (mean 0.13),
    asinh/acosh 1.73, atanh 1.67 over 20M random floats; lgamma: 1.80 for x > 0 next to the root 2,
    0.50 for x < 0 through the reflection), with the same NaNs, infinities and
    signed zeros."""
    import numpy as np
    x = _float32_inputs(1)
    got = getattr(ember, name)(ember.from_numpy(x)).numpy()
    ref = getattr(torch, name)(torch.from_numpy(x.astype(np.float64))).numpy()
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(ref32))
    finite = np.isfinite(ref32) & np.isfinite(got)
    assert np.array_equal(got[~finite & ~np.isnan(got)], ref32[~finite & ~np.isnan(ref32)])
    err = _ulp_error(got[finite], ref[finite])
    assert err.max() <= max_ulp, f"{name}: {err.max():.3f} ulp at x = {x[finite][err.argmax()]!r}"
    zero = ref32 == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(ref32[zero]))


@pytest.mark.parametrize("name,max_ulp", [("asin", 1.0), ("acos", 1.0), ("erfinv", 2.0)])
def test_float64_asin_acos_erfinv_against_mpmath(name, max_ulp):
    """Notes [Double asin and acos] and [Double erfinv]: vectorized kernels within max_ulp of the correctly
    rounded result (asin/acos 0.86 measured against the exact value) over (-1, 1), next to +-1, tiny
    inputs and the branch points (1/2 and 0.975; erfinv's w = 6.25 and 16); NaN past +-1, the signed
    zeros and ends as torch."""
    import numpy as np
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(5)
    tail = 10 ** rng.uniform(-16, -1, 1000)
    x = np.concatenate([rng.uniform(-1, 1, 4000), 1 - tail, tail - 1, 10 ** rng.uniform(-300, 0, 500),
                        -(10 ** rng.uniform(-300, 0, 500)), [0.5, -0.5, 0.975, -0.975, np.nextafter(0.5, 0),
                                                             np.nextafter(0.975, 0), np.nextafter(-0.5, 0),
                                                             math.sqrt(-math.expm1(-6.25)), math.sqrt(-math.expm1(-16))]])
    for strided in (False, True):
        xs = x[::2] if strided else x
        t = ember.from_numpy(np.repeat(xs, 2))[::2] if strided else ember.from_numpy(xs)
        got = getattr(ember, name)(t).numpy()
        with mpmath.workdps(30):
            ref = np.array([float(getattr(mpmath, name)(mpmath.mpf(float(v)))) for v in xs])
        err = np.abs(got - ref) / np.spacing(np.abs(ref))
        assert err.max() <= max_ulp, f"{name}: {err.max()} ulp at {xs[err.argmax()]!r}"
    special = [1.0, -1.0, 0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan, np.nextafter(1, 2)]
    e = getattr(ember, name)(ember.tensor(special, dtype=ember.float64)).tolist()
    r = getattr(torch, name)(torch.tensor(special, dtype=torch.float64)).tolist()
    assert all((u == v and math.copysign(1, u) == math.copysign(1, v)) or (u != u and v != v) for u, v in zip(e, r))


def _check_lgamma_ulp(x, max_ulp):
    """ember's float32 lgamma of x within max_ulp of torch's float64 result, infinities where its float
    rounding is infinite."""
    import numpy as np
    got = ember.lgamma(ember.from_numpy(x)).numpy()
    ref = torch.lgamma(torch.from_numpy(x.astype(np.float64))).numpy()
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    assert np.array_equal(np.isinf(got), np.isinf(ref32))
    fin = np.isfinite(ref32)
    err = _ulp_error(got[fin], ref[fin])
    assert err.max() <= max_ulp, f"{err.max():.3f} ulp at x = {x[fin][err.argmax()]!r}"


def test_float_lgamma_positive_inputs():
    """Note [Float lgamma]: x > 0 in double through Stirling's series: within 2 ulp of float64 (1.80
    measured, next to the root 2), exact zeros at 1 and 2, the overflow threshold where float64's
    result passes float's range (torch's float lgamma overflows earlier), tiny x."""
    import numpy as np
    rng = np.random.default_rng(5)
    x = _float32_inputs(5, 1 << 20)
    x = np.abs(x[np.isfinite(x) & (x != 0)])
    near = np.arange(-2000, 2001, dtype=np.float32)
    x = np.concatenate([x, (rng.random(1 << 18) * 20).astype(np.float32), np.float32(1) + near * np.float32(2 ** -23),
                        np.float32(2) + near * np.float32(2 ** -22),
                        np.array([1e-45, 1e-38, 0.5, 8.0, 7.9999995, 4.0e36, 4.0825e36, 4.1e36, 3.4e38], np.float32)])
    _check_lgamma_ulp(x, 2.0)
    assert ember.lgamma(ember.tensor([1.0, 2.0])).tolist() == [0.0, 0.0]
    # the libm pass: poles, negative x, infinities and NaN among vectorized lanes
    s = ember.tensor([3.5, 0.0, -0.0, -1.0, -2.5, math.inf, -math.inf, math.nan, 1e-45, 9.0])
    assert_same(ember.lgamma(s), torch.lgamma(torch.tensor(s.tolist())))


def test_float_lgamma_negative_inputs():
    """Note [Float lgamma]: x <= 0 and the non-finite x take the reflection in a second vectorized pass
    sharing lgamma(|x|) in double: within 1.5 ulp of float64 over random negative floats of every
    exponent (0.50 measured) and next to the roots (1.08 at the float nearest a root, where the result
    is ~1e-7; torch's float kernel: thousands of ulp there); +inf at zeros, negative integers,
    x <= -2^23 and both infinities, NaN kept; blocks mixing signs, strided and 16-bit inputs, in place."""
    import numpy as np
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    roots = np.array([-2.4570247, -2.7476826, -3.1435283, -3.9552686, -4.0390556, -4.9991794], np.float32)
    near = roots[:, None] + np.arange(-300, 301, dtype=np.float32)[None, :] * np.float32(2 ** -21)
    x = np.concatenate([bits[np.isfinite(bits) & (bits < 0)], -(rng.random(1 << 18) * 40).astype(np.float32),
                        near.ravel(), np.float32(-1) + np.arange(1, 200, dtype=np.float32) * np.float32(2 ** -23),
                        np.float32(-8388607.5) + np.arange(0, 8, dtype=np.float32) * np.float32(0.5)])
    _check_lgamma_ulp(x, 1.5)
    special = [0.0, -0.0, -1.0, -2.0, -7.0, -8388608.0, -8388609.0, -3e38, math.inf, -math.inf, math.nan,
               -0.5, -1e-45, 2.5, -2.5, 1.0, 2.0]
    mixed = ember.tensor(special * 20)  # blocks of both signs, poles among vectorized lanes
    want = torch.lgamma(torch.tensor(mixed.tolist(), dtype=torch.float64)).to(torch.float32)
    assert_same(ember.lgamma(mixed), want)
    t = ember.from_numpy(x[:4096].copy())
    assert_same(ember.lgamma(t[::3]), ember.lgamma(t[::3].contiguous()))  # strided path, same values
    for dt, tdt in ((ember.float16, torch.float16), (ember.bfloat16, torch.bfloat16)):
        h = ember.tensor(special[:-4] + [-0.3, -1.7, -5.5], dtype=dt)
        assert_same(ember.lgamma(h), torch.lgamma(torch.tensor(h.float().tolist()).to(tdt)))
    y = t.clone()
    y.lgamma_()
    assert_same(y, ember.lgamma(t))


def test_float_digamma_against_float64():
    """digamma's float kernel (x > 0, double inside; math::digamma for the rest): within 1 ulp of
    float64 (0.50 measured), across the root 1.4616 and the poles; torch's values and NaN/inf at
    zero, negative integers and the infinities."""
    import numpy as np
    rng = np.random.default_rng(6)
    x = _float32_inputs(6, 1 << 20)
    x = np.concatenate([x[np.isfinite(x)], (rng.random(1 << 18) * 30 - 10).astype(np.float32),
                        np.float32(1.4616321) + np.arange(-2000, 2001, dtype=np.float32) * np.float32(2 ** -23)])
    got = ember.digamma(ember.from_numpy(x)).numpy()
    ref = torch.digamma(torch.from_numpy(x.astype(np.float64))).numpy()
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(ref32))
    fin = np.isfinite(ref32) & (x > 0)
    assert np.array_equal(got[~np.isfinite(ref32) & ~np.isnan(ref32)], ref32[~np.isfinite(ref32) & ~np.isnan(ref32)])
    err = _ulp_error(got[fin], ref[fin])
    assert err.max() <= 1.0, f"{err.max():.3f} ulp at x = {x[fin][err.argmax()]!r}"
    s = ember.tensor([0.0, -0.0, -1.0, -2.5, math.inf, -math.inf, math.nan, 1e-45, 1.0, 12.0])
    assert_same(ember.digamma(s), torch.digamma(torch.tensor(s.tolist())))


def test_atan2_float32_against_float64_and_limits(math_backend):
    """float32 atan2 (MKL's vmsAtan2 where MKL is in use, Note [MKL VML]; Note [Float inverse trigonometry]
    otherwise): within 1 ulp, strided operands as contiguous ones, C's limits as torch."""
    import numpy as np
    rng = np.random.default_rng(2)
    y = _float32_inputs(3, 1 << 19)
    x = rng.permutation(y)
    with np.errstate(over="ignore"):
        x[: len(x) // 4] = y[: len(x) // 4] * np.float32(1.001)  # near the diagonal (the pi/4 branch)
    got = ember.atan2(ember.from_numpy(y), ember.from_numpy(x)).numpy()
    ref = torch.atan2(torch.from_numpy(y.astype(np.float64)), torch.from_numpy(x.astype(np.float64))).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert _ulp_error(got[ok], ref[ok]).max() <= 1.0
    assert np.array_equal(np.signbit(got[ok]), np.signbit(ref[ok].astype(np.float32)))
    m = len(y) // 2 * 2
    strided = ember.atan2(ember.from_numpy(y[:m])[::2], ember.from_numpy(x[:m])[1::2]).numpy()
    assert np.array_equal(strided, ember.atan2(ember.from_numpy(y[:m:2].copy()), ember.from_numpy(x[1:m:2].copy())).numpy(),
                          equal_nan=True)
    # every pair of special values: C's limits (signed zeros, pi, pi/4, 3pi/4), as torch
    s = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 1e-45, -3e38]
    ys, xs = [a for a in s for _ in s], [b for _ in s for b in s]
    e = ember.atan2(ember.tensor(ys), ember.tensor(xs))
    t = torch.atan2(torch.tensor(ys), torch.tensor(xs))
    assert_same(e, t)
    keep = [not math.isnan(v) for v in t.tolist()]
    signs = [(a, b) for a, b, k in zip(ember.signbit(e).tolist(), torch.signbit(t).tolist(), keep) if k]
    assert all(a == b for a, b in signs)


@pytest.mark.parametrize("name", ["log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "erfinv",
                                  "sinh", "cosh", "erfc", "asinh", "acosh", "atanh", "lgamma", "digamma"])
def test_float_math_loops_contiguous_strided_inplace_and_16_bit(name):
    """Contiguous blocks (with the libm pass for |x| >= 2^20), strided elements and in-place runs
    give the same bits; float16/bfloat16 are the float32 result rounded once."""
    import numpy as np
    x = _float32_inputs(4, 1 << 16)
    x = x[: len(x) - len(x) % 64].reshape(-1, 64)
    e = ember.from_numpy(x)
    f = getattr(ember, name)
    whole = f(e).numpy()
    strided = f(e.t()).t().numpy()  # columns: every run strided
    assert np.array_equal(whole.view(np.uint32), strided.view(np.uint32)) or np.array_equal(
        np.nan_to_num(whole), np.nan_to_num(strided))
    assert np.array_equal(np.isnan(whole), np.isnan(strided))
    inplace = e.clone()
    getattr(inplace, name + "_")()
    got = inplace.numpy()
    assert np.array_equal(np.nan_to_num(got), np.nan_to_num(whole)) and np.array_equal(np.isnan(got), np.isnan(whole))
    for dt in (ember.float16, ember.bfloat16):
        h = e.to(dt)
        want = f(h.float()).to(dt)
        got = f(h)
        same = (got == want) | (ember.isnan(got) & ember.isnan(want))
        assert bool(same.all())


def test_float64_exp_within_an_ulp():
    """Note [Double exp]: float64 exp over every exponent, a dense grid across the finite range and
    the special values against an extended-precision reference: within 1 ulp (0.98 measured),
    overflow, underflow, subnormal results (within one subnormal step), NaN and the infinities as
    libm; strided and in-place runs give the same bits; sigmoid and softmax use it too."""
    import numpy as np
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 1 << 64, 1 << 18, dtype=np.uint64).view(np.float64)
    bits = bits[~np.isnan(bits)]
    special = [0.0, -0.0, math.inf, -math.inf, math.nan, 709.78, 709.79, -745.1, -745.2, -708.4, -708.3, 1e-300,
               -1e-300, 1.0, -1.0]
    x = np.concatenate([bits, np.linspace(-750, 720, 200001), rng.uniform(-1, 1, 50000), special])
    got = ember.exp(ember.from_numpy(x)).numpy()
    with np.errstate(all="ignore"):
        ref = np.exp(x.astype(np.longdouble))
    ref64 = ref.astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(ref64))
    normal = np.isfinite(ref64) & (np.abs(ref64) >= np.finfo(np.float64).tiny)
    err = np.abs(got[normal].astype(np.longdouble) - ref[normal]) / np.spacing(ref64[normal]).astype(np.longdouble)
    assert err.max() <= 1.0, f"{float(err.max())} ulp at x = {x[normal][err.argmax()]!r}"
    tiny = np.isfinite(ref64) & ~normal  # subnormal results and zeros
    assert np.all(np.abs(got[tiny] - ref64[tiny]) <= 5e-324)
    assert np.array_equal(got[np.isinf(ref64)], ref64[np.isinf(ref64)])
    m = x[: 1 << 16].reshape(-1, 64)
    e = ember.from_numpy(m)
    whole = ember.exp(e)
    assert ember.equal(ember.exp(e.t()).t(), whole) or np.array_equal(np.isnan(whole.numpy()), np.isnan(m))
    inplace = e.clone()
    inplace.exp_()
    assert np.array_equal(inplace.numpy(), whole.numpy(), equal_nan=True)
    v = torch.randn(64, 300, dtype=torch.float64) * 20
    ve = ember.from_numpy(v.numpy())
    np.testing.assert_allclose(ember.sigmoid(ve).numpy(), torch.sigmoid(v).numpy(), rtol=1e-15, atol=0)
    np.testing.assert_allclose(ember.softmax(ve, 1).numpy(), torch.softmax(v, 1).numpy(), rtol=2e-15, atol=1e-300)


def _float64_inputs(name):
    """Random doubles of every exponent (positive for the logarithms), dense grids, the reduction's hard
    cases (doubles nearest multiples of pi/2, |x| just under and over 2^20) and the special values."""
    import numpy as np
    rng = np.random.default_rng(17)
    bits = rng.integers(0, 1 << 64, 1 << 17, dtype=np.uint64).view(np.float64)
    bits = bits[np.isfinite(bits)]
    grid = np.linspace(-25.0, 25.0, 100001)
    special = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 5e-324, -5e-324, 2.2250738585072014e-308,
               1.7976931348623157e308, -1.7976931348623157e308, 1e-300, 0.55, -0.55, 2.0, -2.0, 0.7071067811865476,
               1.4142135623730951, 1048575.9, 1048576.0, -1048576.0, 1e22, 19.1, -19.1, 709.7, -745.0]
    if name in ("log", "log2", "log10"):
        return np.concatenate([np.abs(bits), np.abs(grid), 1 + rng.uniform(-0.3, 0.5, 20000), special])
    if name == "log1p":
        return np.concatenate([bits, rng.uniform(-1, 3, 40000), 10.0 ** rng.uniform(-300, 0, 5000),
                               -(10.0 ** rng.uniform(-300, -0.01, 5000)), special, [-1.0, -1.5]])
    if name in ("sin", "cos", "tan"):
        k = np.arange(1, 600001, 7, dtype=np.float64)
        return np.concatenate([bits, grid, rng.uniform(-1.2e6, 1.2e6, 40000), k * (np.pi / 2),
                               np.nextafter(k * (np.pi / 2), 0), special])
    return np.concatenate([bits, grid, rng.uniform(-3, 3, 40000), 10.0 ** rng.uniform(-300, 0, 5000), special])


@pytest.mark.parametrize("name,max_ulp", [("log", 1.0), ("log2", 1.0), ("log10", 1.0), ("log1p", 1.0),
                                          ("expm1", 2.5), ("tanh", 1.6), ("sin", 1.0), ("cos", 1.0), ("tan", 2.5),
                                          ("exp", 1.0), ("sqrt", 0.5)])
def test_float64_math_kernels_against_long_double(name, max_ulp, math_backend):
    """Note [Double math]: the vectorized float64 kernels against the x87 long double results (64-bit
    significands) over every exponent and the hard cases: within max_ulp (measured: log/log2/log10/
    log1p 0.75-0.85, sin/cos 0.83, tanh 1.50, tan 2.19, expm1 1.58 with FMA and 2.22 without; torch's:
    about 1); MKL's (Note [MKL VML]) within 1 ulp; with torch's NaNs, infinities and signed zeros;
    strided and in-place runs give the same bits as contiguous ones."""
    import numpy as np
    if math_backend == "mkl":
        max_ulp = min(max_ulp, 1.0)
    x = _float64_inputs(name)
    got = getattr(ember, name)(ember.from_numpy(x)).numpy()
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(np.longdouble))
    ref64 = ref.astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(ref64))
    inf = np.isinf(ref64)
    assert np.array_equal(got[inf], ref64[inf])
    normal = np.isfinite(ref64) & (np.abs(ref64) >= np.finfo(np.float64).tiny)
    err = np.abs(got[normal].astype(np.longdouble) - ref[normal]) / np.spacing(np.abs(ref64[normal])).astype(np.longdouble)
    assert err.max() <= max_ulp, f"{name}: {float(err.max()):.3f} ulp at x = {x[normal][err.argmax()]!r}"
    tiny = np.isfinite(ref64) & ~normal  # subnormal results and zeros
    assert np.all(np.abs(got[tiny] - ref64[tiny]) <= 5e-324)
    zero = (ref64 == 0) & (got == 0)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(ref64[zero]))
    t = torch.from_numpy(x)
    want = getattr(torch, name)(t).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    both0 = (want == 0) & (got == 0)  # (torch's log1p flushes subnormal x to 0; ember's gives x)
    assert np.array_equal(np.signbit(got[both0]), np.signbit(want[both0]))
    m = x[: 1 << 14].reshape(-1, 64)
    e = ember.from_numpy(m)
    whole = getattr(ember, name)(e).numpy()
    assert np.array_equal(getattr(ember, name)(e.t()).t().numpy(), whole, equal_nan=True)
    inplace = e.clone()
    getattr(inplace, name + "_")()
    assert np.array_equal(inplace.numpy(), whole, equal_nan=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("n", [1, 7, 300, 4099])
def test_float64_softmax_family_against_torch(dim, n):
    """float64 softmax/log_softmax forward and backward (rows and columns: e^x of Note [Double exp],
    sums in 8 partial sums) within a few ulp of torch's, with -inf entries and the same bits on 1
    and 2 threads."""
    import numpy as np

    g = torch.Generator().manual_seed(n)
    v = torch.randn(33, n, dtype=torch.float64, generator=g) * 30
    v[0, 0] = -float("inf")
    gy = torch.randn(33, n, dtype=torch.float64, generator=g)
    before = ember.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            ember.set_num_threads(threads)
            row = []
            for name in ("softmax", "log_softmax"):
                te = v.clone().requires_grad_()
                ee = ember.from_numpy(v.numpy()).requires_grad_()
                ty, ey = getattr(torch, name)(te, dim), getattr(ember, name)(ee, dim)
                ty.backward(gy)
                ey.backward(ember.from_numpy(gy.numpy()))
                # (log_softmax near 0 is a difference of O(1) terms: an absolute ulp of 1)
                np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-14, atol=1e-15)
                np.testing.assert_allclose(ee.grad.numpy(), te.grad.numpy(), rtol=1e-12, atol=1e-13)
                row.append(ey.detach().numpy().tobytes() + ee.grad.numpy().tobytes())
            outs.append(row)
        assert outs[0] == outs[1]
    finally:
        ember.set_num_threads(before)


def test_float_hypot_is_glibcs():
    # float hypot inline (cpu/pointwise_kernels.cpp): the double squares' sum, one sqrt, rounded to
    # float, as glibc's hypotf (NumPy's hypot here); infinities beat NaNs; 16-bit floats through it
    import numpy as np
    rng = np.random.default_rng(3)
    n = 50_000
    with np.errstate(over="ignore"):
        a = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 39, n)).astype(np.float32)
        b = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 39, n)).astype(np.float32)
    sp = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38, 1e-45, np.nan, np.inf, 2.0, -np.inf], np.float32)
    sq = np.array([np.nan, 1.0, np.inf, -0.0, 0.0, 3e38, 1e-45, 5.0, -np.inf, np.nan, np.nan], np.float32)
    a, b = np.concatenate([a, sp]), np.concatenate([b, sq])
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.hypot(a, b)
    got = ember.hypot(ember.from_numpy(a), ember.from_numpy(b)).numpy()
    assert np.array_equal(got, want, equal_nan=True)
    strided = ember.hypot(ember.from_numpy(a)[::2], ember.from_numpy(b)[::2]).numpy()
    assert np.array_equal(strided, want[::2], equal_nan=True)
    h = ember.hypot(ember.from_numpy(a[:1000]).half(), ember.from_numpy(b[:1000]).half())
    assert h.dtype == ember.float16
    if torch is not None:
        th = torch.hypot(torch.from_numpy(a[:1000]).half(), torch.from_numpy(b[:1000]).half())
        np.testing.assert_allclose(h.float().numpy(), th.float().numpy(), rtol=1e-3, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_on_both_backends_against_long_double_and_torch(dtype, math_backend):
    """pow over float32/float64 (MKL's vm?Pow/vm?Powx where MKL is in use, Note [MKL VML]; libm's pow or
    the float kernel otherwise): tensor exponents, a broadcast exponent, a broadcast base (2 ** x), strided
    operands: within 1 ulp of the long double result (float32: of the float64 one), C99's special values as
    torch's."""
    import numpy as np
    rng = np.random.default_rng(8)
    a = np.concatenate([rng.uniform(0, 10, 3000), 10 ** rng.uniform(-30, 30, 1000), -rng.integers(1, 20, 500)])
    b = np.concatenate([rng.uniform(-8, 8, 3000), rng.uniform(-1, 1, 1000), rng.integers(-6, 7, 500)]).astype(np.float64)
    a, b = a.astype(dtype), b.astype(dtype)
    tol = 1.0 if dtype == "float64" else 0.51

    def check(got, x, y):
        with np.errstate(all="ignore"):
            ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
            ref_t = ref.astype(dtype)
        fin = np.isfinite(ref_t) & (np.abs(ref_t) >= np.finfo(dtype).tiny)
        err = np.abs(got[fin].astype(np.longdouble) - ref[fin]) / np.spacing(np.abs(ref_t[fin])).astype(np.longdouble)
        assert err.max() <= tol + 0.5 * (dtype == "float32"), f"{float(err.max())} ulp"
        assert np.array_equal(np.isnan(got), np.isnan(ref_t))

    ea, eb = ember.from_numpy(a), ember.from_numpy(b)
    check((ea ** eb).numpy(), a, b)
    check((ea ** 2.7).numpy(), a, np.full_like(a, 2.7))
    check((2.0 ** eb).numpy(), np.full_like(b, 2.0), b)
    check((ea[::3] ** eb[1::3]).numpy(), a[::3], b[1::3])
    inf, nan = math.inf, math.nan
    sa = [-8.0, 0.0, -0.0, -2.0, nan, 1.0, -1.0, inf, -inf, -inf, 0.0, -0.0, 2.0, 0.5, -0.5, nan]
    sb = [1 / 3, -1.0, -1.0, 3.0, 0.0, nan, inf, -1.0, 3.0, -2.0, 0.0, 3.0, -inf, inf, -inf, 1.0]
    t = torch.tensor(sa, dtype=getattr(torch, dtype)) ** torch.tensor(sb, dtype=getattr(torch, dtype))
    e = ember.tensor(sa, dtype=getattr(ember, dtype)) ** ember.tensor(sb, dtype=getattr(ember, dtype))
    assert all((u == v and math.copysign(1, u) == math.copysign(1, v)) or (u != u and v != v)
               for u, v in zip(e.tolist(), t.tolist())), (e.tolist(), t.tolist())


def test_float64_atan2_on_both_backends(math_backend):
    """float64 atan2 (MKL's vmdAtan2 where MKL is in use, Note [MKL VML]; libm's otherwise): within 1 ulp of
    the long double result over every quadrant, scales and strided operands; zeros, infinities and NaN as
    torch's."""
    import numpy as np
    rng = np.random.default_rng(9)
    y = rng.standard_normal(20000) * 10.0 ** rng.uniform(-20, 20, 20000)
    x = rng.standard_normal(20000) * 10.0 ** rng.uniform(-20, 20, 20000)
    for a, b in ((y, x), (y[::2], x[1::2])):
        got = ember.atan2(ember.from_numpy(np.ascontiguousarray(a)), ember.from_numpy(np.ascontiguousarray(b))).numpy()
        ref = np.arctan2(a.astype(np.longdouble), b.astype(np.longdouble))
        fin = np.abs(ref.astype(np.float64)) >= np.finfo(np.float64).tiny
        err = np.abs(got[fin] - ref[fin]) / np.spacing(np.abs(ref[fin].astype(np.float64))).astype(np.longdouble)
        assert err.max() <= 1.0, float(err.max())
    got_strided = ember.atan2(ember.from_numpy(y)[::2], ember.from_numpy(x)[1::2]).numpy()
    assert np.array_equal(got_strided, ember.atan2(ember.from_numpy(y[::2].copy()), ember.from_numpy(x[1::2].copy())).numpy())
    inf, nan = math.inf, math.nan
    sy = [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, inf, -inf, inf, -inf, nan, 1.0, 0.0, -0.0]
    sx = [0.0, 0.0, -0.0, -0.0, inf, -inf, 1.0, 1.0, -inf, inf, 1.0, nan, -1.0, -1.0]
    e = ember.atan2(ember.tensor(sy, dtype=ember.float64), ember.tensor(sx, dtype=ember.float64)).tolist()
    t = torch.atan2(torch.tensor(sy, dtype=torch.float64), torch.tensor(sx, dtype=torch.float64)).tolist()
    assert all((u == v and math.copysign(1, u) == math.copysign(1, v)) or (u != u and v != v) for u, v in zip(e, t)), (e, t)
