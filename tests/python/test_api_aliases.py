"""In-place forms (x.acos_(), torch.acos_(x)) and aliases (arccos, absolute, ...) of ember ops against torch:
each is called the first way torch accepts among a few simple signatures, and ember must give the same
values and dtype, return the tensor it was given for an in-place form, and leave it holding the result."""
import pytest

import ember
from conftest import assert_same, torch

# name -> where it lives ("Tensor" for methods, "torch" for functions)
NAMES = [
    ("Tensor", n) for n in """
    absolute absolute_ acos_ acosh_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan
    arctan2_ arctan_ arctanh arctanh_ asin_ asinh_ atan_ atanh_ bitwise_and_ bitwise_left_shift_ bitwise_not_
    bitwise_or_ bitwise_right_shift_ bitwise_xor_ ceil_ clamp_max_ clamp_min_ copysign_ cos_ cosh_ digamma_ eq_
    erf_ erfc_ erfinv_ exp2_ expm1_ fix_ floor_ frac_ ge_ greater_ greater_equal_ gt_ heaviside_ hypot_ le_ less_
    less_equal_ lgamma_ log10_ log1p_ log2_ log_ logical_and_ logical_or_ logical_xor_ logit_ lt_ nan_to_num_ ne_
    negative_ not_equal_ pow_ reciprocal_ round_ rsqrt_ sgn_ sign_ sinh_ square_ subtract_ tan_ tanh_
    true_divide_ trunc_ resolve_neg type_as ger char ndimension nelement
    """.split()
] + [
    ("torch", n) for n in """
    absolute acos_ acosh_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan_ arctanh
    arctanh_ asin_ asinh_ atan_ atanh_ ceil_ clamp_max_ clamp_min_ cos_ cosh_ erf_ erfc_ exp2_ expm1_ fix_ floor_
    frac_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ negative_ reciprocal_ round_ rsqrt_ sinh_ square_ tan_
    tanh_ trunc_ ger resolve_neg row_stack concat atleast_1d atleast_2d atleast_3d is_tensor is_neg result_type
    can_cast
    """.split()
]


def _inputs(lib):
    """Candidate argument lists, tried in order: unary float, binary float, float with a number, ints."""
    x = lambda: lib.tensor([[0.2, 0.5, 0.7], [0.3, 0.9, 0.4]], dtype=lib.float64)  # noqa: E731
    y = lambda: lib.tensor([[0.6, 0.25, 0.8], [0.5, 0.1, 0.35]], dtype=lib.float64)  # noqa: E731
    i = lambda: lib.tensor([[5, 12, 7], [3, 9, 4]])  # noqa: E731
    j = lambda: lib.tensor([[1, 2, 3], [2, 1, 1]])  # noqa: E731
    return [lambda: (x(),), lambda: (x(), y()), lambda: (x(), 0.5), lambda: (i(),), lambda: (i(), j()),
            lambda: (x()[0], y()[0]), lambda: ([x(), y()],), lambda: (x(), lib.float32),
            lambda: (lib.float64, lib.float32)]


def _call(lib, where, name, args):
    if where == "Tensor":
        return getattr(args[0], name)(*args[1:])
    return getattr(lib, name)(*args)


def _same(e, t):
    if isinstance(t, torch.Tensor):
        assert_same(e, t)
    elif isinstance(t, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b)
    elif isinstance(t, torch.dtype):
        assert str(e).split(".")[-1] == str(t).split(".")[-1]
    else:
        assert e == t, f"{e!r} vs {t!r}"


@pytest.mark.parametrize("where,name", NAMES, ids=[f"{w}.{n}" for w, n in NAMES])
def test_matches_torch(where, name):
    for t_make, e_make in zip(_inputs(torch), _inputs(ember)):
        t_args = t_make()
        try:
            t_out = _call(torch, where, name, t_args)
        except Exception:
            continue
        e_args = e_make()
        e_out = _call(ember, where, name, e_args)
        _same(e_out, t_out)
        if name.endswith("_") and isinstance(t_args[0], torch.Tensor) and t_out is t_args[0]:
            assert e_out is e_args[0], f"{name} must return the tensor it modified"
            _same(e_args[0], t_args[0])
        return
    pytest.fail(f"torch accepted none of the candidate signatures for {where}.{name}")


V = "lib.linspace(-2, 2, 2 * 3 * 8, dtype=lib.float64).reshape(2, 3, 8)"
IMG = "lib.linspace(-2, 2, 2 * 3 * 6 * 6, dtype=lib.float64).reshape(2, 3, 6, 6)"
VOL = "lib.linspace(-2, 2, 1 * 2 * 4 * 4 * 4, dtype=lib.float64).reshape(1, 2, 4, 4, 4)"
M = "lib.linspace(-1, 1, 12, dtype=lib.float64).reshape(3, 4)"
CASES = [
    f"lib.nn.functional.adaptive_max_pool1d_with_indices({V}, 3)",
    f"lib.nn.functional.adaptive_max_pool2d_with_indices({IMG}, (2, 3))",
    f"lib.nn.functional.adaptive_max_pool3d_with_indices({VOL}, 2)",
    f"lib.nn.functional.max_pool1d_with_indices({V}, 2)", f"lib.nn.functional.max_pool2d_with_indices({IMG}, 2)",
    f"lib.nn.functional.max_pool3d_with_indices({VOL}, 2)", f"lib.max_pool1d_with_indices({V}, 2)",
    f"lib.nn.functional.max_unpool1d(*lib.nn.functional.max_pool1d({V}, 2, return_indices=True), 2)",
    f"lib.nn.functional.max_unpool3d(*lib.nn.functional.max_pool3d({VOL}, 2, return_indices=True), 2)",
    f"lib.nn.functional.elu_({M}.clone())", f"lib.nn.functional.hardtanh_({M}.clone() * 3)",
    f"lib.nn.functional.leaky_relu_({M}.clone(), 0.2)",
    f"lib.nn.functional.upsample({IMG}, scale_factor=2)", f"lib.nn.functional.upsample_nearest({IMG}, size=(3, 4))",
    f"lib.nn.functional.upsample_bilinear({IMG}, scale_factor=2)",
    f"lib.nn.functional.fractional_max_pool2d_with_indices({IMG}, 2, output_size=(3, 3), "
    f"_random_samples=lib.full((2, 3, 2), 0.5, dtype=lib.float64))",
    f"lib.nn.functional.fractional_max_pool3d_with_indices({VOL}, 2, output_size=(2, 2, 2), "
    f"_random_samples=lib.full((1, 2, 3), 0.5, dtype=lib.float64))",
    f"lib.special.expit({M})", f"lib.special.gammaln({M} + 2)", f"lib.special.psi({M} + 2)",
    f"lib.dropout_({M}.clone(), 0.5, False)", f"lib.alpha_dropout_({M}.clone(), 0.5, False)",
    f"lib.feature_dropout_({IMG}.clone(), 0.5, False)", f"lib.feature_alpha_dropout_({IMG}.clone(), 0.5, False)",
    f"{M}.clone().addbmm_(lib.ones(2, 3, 2, dtype=lib.float64), lib.ones(2, 2, 4, dtype=lib.float64))",
    f"{M}.clone().addcdiv_({M}, {M} + 2, value=0.5)", f"{M}.clone().addr_(lib.arange(3.).double(), "
    f"lib.arange(4.).double())",
    f"{M}.reshape(1, 3, 4).clone().baddbmm_(lib.ones(1, 3, 2, dtype=lib.float64), lib.ones(1, 2, 4, "
    f"dtype=lib.float64))", f"{M}.clone().renorm_(2, 0, 0.5)", f"{M}.clone().swapaxes_(0, 1)",
    f"{M}.clone().swapdims_(1, 0)", f"{M}.resize_as({M}.reshape(4, 3))", f"{M}.resize(2, 6)", f"{M}.is_cpu", f"{M}.is_meta", f"{M}.is_mkldnn",
    f"{M}.is_neg()", f"{M}.is_nested", f"{M}.is_quantized", f"{M}.is_sparse_csr", f"{M}.output_nr",
    f"{M}.module_load(lib.ones(3, 4))", f"lib.is_neg({M})",
]


@pytest.mark.parametrize("expr", CASES)
def test_more_names_match_torch(expr):
    _same(eval(expr, {"lib": ember}), eval(expr, {"lib": torch}))


def test_autocast_state_functions_round_trip():
    for lib in (ember, torch):
        assert lib.is_autocast_cache_enabled()
        lib.set_autocast_cache_enabled(False)
        assert not lib.is_autocast_cache_enabled()
        lib.set_autocast_cache_enabled(True)
        lib.clear_autocast_cache()
        assert lib.autocast_increment_nesting() == 1 and lib.autocast_decrement_nesting() == 0
        old = lib.get_autocast_cpu_dtype()
        lib.set_autocast_cpu_dtype(lib.float16)
        assert str(lib.get_autocast_cpu_dtype()).split(".")[-1] == "float16"
        lib.set_autocast_dtype("cpu", old)
        lib.set_autocast_cpu_enabled(True)
        assert lib.is_autocast_enabled("cpu")
        lib.set_autocast_enabled("cpu", False)
        assert not lib.is_autocast_cpu_enabled()


def test_resize_out_of_place_keeps_the_element_count():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.ones(3, 4).resize_as(lib.ones(2, 4))


def test_storage_type_is_typed_storage():
    assert ember.ones(2).storage_type() is ember.TypedStorage
    assert isinstance(ember.ones(2).storage(), ember.ones(2).storage_type())
