"""Tests for ember's tensor printing (``ember/_tensor_str.py``).

The formatter is duck-typed, so it is checked directly against PyTorch:
``tensor_repr(t)`` must equal ``repr(t)`` for torch tensors.  The module is
loaded from its file so that these tests do not need the compiled ember
extension.
"""

import importlib.util
import math
import pathlib
import random

import pytest

torch = pytest.importorskip("torch")

_PATH = (pathlib.Path(__file__).resolve().parents[2]
         / "python" / "ember" / "_tensor_str.py")
_spec = importlib.util.spec_from_file_location("_ember_tensor_str", _PATH)
ts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ts)

T = torch.tensor
NAN, INF = math.nan, math.inf


@pytest.fixture(autouse=True)
def _default_options():
    """Run every test from, and restore, the default print options."""
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    default_dtype = torch.get_default_dtype()
    yield
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    torch.set_default_dtype(default_dtype)


def check(t, **kwargs):
    assert ts.tensor_repr(t, **kwargs) == repr(t)


def _grad_leaf():
    return T([1.0, 2.0], requires_grad=True)


CASES = {
    # 0-d
    "scalar_int_valued": lambda: T(3.0),
    "scalar_frac": lambda: T(3.5),
    "scalar_small": lambda: T(1e-5),
    "scalar_nan": lambda: T(NAN),
    "scalar_neg_inf": lambda: T(-INF),
    "scalar_zero": lambda: T(0.0),
    "scalar_long": lambda: T(3),
    "scalar_bool": lambda: T(True),
    "scalar_half": lambda: T(0.1, dtype=torch.float16),
    "scalar_grad_fn": lambda: T(2.0, requires_grad=True) + 1,
    # empty
    "empty_1d": lambda: T([]),
    "empty_0x3": lambda: torch.zeros(0, 3),
    "empty_3x0x2": lambda: torch.zeros(3, 0, 2),
    "empty_int32_2d": lambda: torch.zeros(0, 3, dtype=torch.int32),
    "empty_long": lambda: T([], dtype=torch.long),
    "empty_long_2d": lambda: torch.zeros(0, 1, dtype=torch.long),
    "empty_bool": lambda: T([], dtype=torch.bool),
    "empty_double": lambda: T([], dtype=torch.float64),
    "empty_half": lambda: torch.zeros(0, dtype=torch.float16),
    "empty_requires_grad": lambda: torch.zeros(0, 3, requires_grad=True),
    "empty_double_grad": lambda: torch.zeros(
        0, 3, dtype=torch.float64, requires_grad=True),
    # floats: integral, fixed and scientific styles
    "int_valued": lambda: T([1.0, 2.0, 3.0]),
    "int_valued_neg": lambda: T([1.0, -2.0, 30.0]),
    "fixed": lambda: T([1.5, 2.0, 3.0]),
    "fixed_neg": lambda: T([-1.25, 10.5, 0.0]),
    "sci_small": lambda: T([1e-5, 1.0]),
    "sci_big": lambda: T([1e9, 1.0]),
    "sci_big_alone": lambda: T([1e9]),
    "int_1e8": lambda: T([1e8]),
    "int_1_5e8": lambda: T([1.5e8]),
    "ratio_1000": lambda: T([1.0, 1000.0]),
    "ratio_1000_fixed": lambda: T([1.5, 1500.0]),
    "ratio_over_1000": lambda: T([1.5, 1501.0]),
    "min_1e-4_f32": lambda: T([0.0001]),
    "min_1e-4_f64": lambda: T([0.0001], dtype=torch.float64),
    "min_just_above": lambda: T([0.00011]),
    "zero_and_small": lambda: T([0.0, 1e-5]),
    "neg_small": lambda: T([-1e-5, 1.0]),
    "huge_f64": lambda: T([1e300, -1e-300], dtype=torch.float64),
    "negative_zero": lambda: T([-0.0]),
    "negative_zero_mix": lambda: T([-0.0, 5.0]),
    "negative_zero_fixed": lambda: T([-0.0, 1.5]),
    "zeros": lambda: T([0.0, 0.0]),
    "rounding": lambda: T([9.99996, 0.5]),
    # non-finite
    "nan_inf_int": lambda: T([1.0, NAN, INF, -INF]),
    "nan_fixed": lambda: T([1.5, NAN]),
    "nan_sci": lambda: T([1.5e-5, NAN]),
    "only_nonfinite": lambda: T([NAN, INF, -INF]),
    "neg_inf_fixed": lambda: T([-INF, 1.5]),
    "nan_big_int": lambda: T([NAN, 10000.0]),
    "nonfinite_2d": lambda: T([[NAN, -INF], [INF, NAN]]),
    # other dtypes
    "bool": lambda: T([True, False]),
    "bool_all_true": lambda: T([True, True]),
    "long": lambda: T([1, -20, 300]),
    "int32": lambda: T([1, 2], dtype=torch.int32),
    "int16": lambda: T([-7, 2], dtype=torch.int16),
    "int8": lambda: T([-128, 127], dtype=torch.int8),
    "uint8": lambda: T([0, 255], dtype=torch.uint8),
    "half": lambda: T([1.0, 2.0], dtype=torch.float16),
    "half_frac": lambda: T([0.1, 65504.0], dtype=torch.float16),
    "bfloat16": lambda: T([1.1, 2.0], dtype=torch.bfloat16),
    "float64": lambda: T([1.1, 2.0], dtype=torch.float64),
    "float64_sci": lambda: T([1.1e-7, 2.0], dtype=torch.float64),
    # nesting
    "2d_long": lambda: T([[1, 2], [3, 4]]),
    "2d_float": lambda: T([[1.0, 2.0], [3.0, 4.0]]),
    "3d": lambda: torch.arange(24.0).reshape(2, 3, 4),
    "4d_long": lambda: torch.arange(24).reshape(2, 3, 1, 4),
    "5d": lambda: torch.arange(32.0).reshape(2, 2, 2, 2, 2) / 3,
    "singleton_dims": lambda: torch.ones(1, 1, 1),
    # line wrapping at linewidth 80
    "wrap_1d": lambda: torch.arange(30.0),
    "wrap_1d_frac": lambda: torch.arange(30.0) + 0.5,
    "wrap_long": lambda: torch.arange(100),
    "wrap_bool": lambda: T([True, False] * 40),
    "wrap_2d": lambda: torch.arange(30.0).reshape(1, 30),
    "wrap_3d": lambda: torch.arange(30.0).reshape(1, 1, 30),
    "wrap_2d_int32": lambda: torch.arange(30, dtype=torch.int32).reshape(
        2, 15) * 1000,
    "wrap_exact_fit": lambda: torch.arange(12.0).reshape(2, 6) / 7 * 1e5,
    # suffix wrapping
    "suffix_wraps": lambda: torch.arange(12, dtype=torch.float64) + 100,
    "suffix_fits": lambda: torch.arange(13, dtype=torch.float64) + 100,
    "suffix_wraps_int16": lambda: torch.arange(18, dtype=torch.int16) + 10,
    "suffix_grad_fn_2d": lambda: (torch.arange(
        30.0, requires_grad=True) * 2).reshape(2, 15),
    # summarization
    "summ_1d_float": lambda: torch.arange(2000.0),
    "summ_1d_long": lambda: torch.arange(2000),
    "summ_1d_bool": lambda: torch.ones(2000, dtype=torch.bool),
    "summ_1d_frac": lambda: torch.arange(2000.0) / 7,
    "summ_2d_wide": lambda: torch.arange(2000.0).reshape(2, 1000) / 7,
    "summ_2d_tall": lambda: torch.arange(2000.0).reshape(1000, 2) / 7,
    "summ_2d_both": lambda: torch.arange(4000.0).reshape(40, 100),
    "summ_3d": lambda: torch.arange(1001).reshape(7, 11, 13),
    "summ_3d_cube": lambda: torch.arange(8000).reshape(20, 20, 20),
    "summ_4d": lambda: torch.arange(4000.0).reshape(4, 10, 10, 10) - 2000,
    "summ_hidden_outlier": lambda: torch.ones(3000).index_fill_(
        0, T([1500]), 1e10),
    "summ_double": lambda: torch.linspace(-1, 1, 1500, dtype=torch.float64),
    # autograd
    "requires_grad_leaf": _grad_leaf,
    "grad_fn_mul": lambda: _grad_leaf() * 2,
    "grad_fn_add": lambda: _grad_leaf() + 1,
    "grad_fn_view": lambda: _grad_leaf().view(2, 1),
    "grad_fn_select": lambda: _grad_leaf()[0],
    "double_grad": lambda: T([1.0], dtype=torch.float64, requires_grad=True),
    "detached": lambda: _grad_leaf().detach(),
    "parameter": lambda: torch.nn.Parameter(torch.ones(2)).data,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    check(CASES[name]())


def test_no_grad_result_has_no_suffix():
    x = _grad_leaf()
    with torch.no_grad():
        y = x * 2
    check(y)


OPTION_CASES = [
    dict(precision=0),
    dict(precision=1),
    dict(precision=2),
    dict(precision=8),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(linewidth=30),
    dict(linewidth=5),
    dict(linewidth=120),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(threshold=10, edgeitems=2, linewidth=40),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=6),
]

OPTION_TENSORS = [
    lambda: T([1.0, 2.0]),
    lambda: T([1e-5, 1.0]),
    lambda: T([1.23456789, 2.5]),
    lambda: T(0.55),
    lambda: T([1e10, 1.5]),
    lambda: T([0.0, NAN]),
    lambda: T([0.5, -0.4]),
    lambda: T([-0.4, 1.5]),
    lambda: T([0.0] * 8),
    lambda: T([-INF] * 8),
    lambda: torch.arange(10.0) / 3,
    lambda: torch.arange(40.0).reshape(2, 20) / 3,
    lambda: torch.arange(12).reshape(3, 4),
    lambda: torch.arange(6.0),
    lambda: torch.arange(1200.0).reshape(3, 4, 100) / 9,
    lambda: T([1, 2], dtype=torch.int16),
    lambda: T([1.0, 2.0], dtype=torch.float64, requires_grad=True),
    lambda: torch.zeros(0, 3, dtype=torch.float64, requires_grad=True),
]


@pytest.mark.parametrize("options", OPTION_CASES, ids=str)
def test_options_match_torch(options):
    torch.set_printoptions(**options)
    ts.set_printoptions(**options)
    for make in OPTION_TENSORS:
        check(make())


SUFFIX_TENSORS = [
    lambda: T([1, 2], dtype=torch.int16),
    lambda: T([1.0, 2.0], dtype=torch.float64, requires_grad=True),
    lambda: T([1.0, 2.0], dtype=torch.float64, requires_grad=True) * 2,
    lambda: torch.zeros(0, 3, dtype=torch.float64, requires_grad=True),
    lambda: torch.arange(5.0, dtype=torch.float64, requires_grad=True),
    lambda: T([[942000.0, -1700000.0]], dtype=torch.bfloat16),
    lambda: torch.arange(40.0, dtype=torch.float64,
                         requires_grad=True).reshape(2, 20) * 3,
]


@pytest.mark.parametrize("edgeitems", [3, 0])
@pytest.mark.parametrize("linewidth", range(10, 90, 3))
def test_suffix_wrapping(linewidth, edgeitems):
    # edgeitems=0 makes every tensor print an extra ``size=`` suffix.
    torch.set_printoptions(linewidth=linewidth, edgeitems=edgeitems)
    ts.set_printoptions(linewidth=linewidth, edgeitems=edgeitems)
    for make in SUFFIX_TENSORS:
        check(make())


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    for t in (T([1.0, 2.0]), T([1.0, 2.0], dtype=torch.float32), T([]),
              torch.zeros(0, dtype=torch.float32), T([1, 2])):
        check(t, default_dtype=torch.get_default_dtype)


def test_random_tensors_match_torch():
    rng = random.Random(1234)
    torch.manual_seed(1234)
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16,
              torch.int32, torch.int64, torch.uint8, torch.bool]
    for _ in range(400):
        shape = [rng.choice([0, 1, 2, 3, 5, 12]) for _ in range(
            rng.randint(0, 4))]
        if rng.random() < 0.1:
            shape = [rng.choice([1001, 3000])] + shape[:2]
        dtype = rng.choice(dtypes)
        if dtype.is_floating_point:
            x = torch.randn(shape, dtype=torch.float64)
            x *= 10 ** rng.uniform(-10, 10)
            mode = rng.randint(0, 3)
            if mode == 1:
                x = x.round()
            elif mode == 2 and x.numel():
                m = torch.rand(x.shape)
                x[m < 0.2] = 0.0
                x[(m > 0.2) & (m < 0.3)] = NAN
                x[(m > 0.3) & (m < 0.35)] = -INF
            x = x.to(dtype)
        elif dtype == torch.bool:
            x = torch.rand(shape) < 0.5
        else:
            x = torch.randint(0, 200, shape).to(dtype)
        options = rng.choice(OPTION_CASES + [{}] * 5)
        torch.set_printoptions(**options)
        ts.set_printoptions(**options)
        check(x)
        torch.set_printoptions(profile="default")
        ts.set_printoptions(profile="default")


# --------------------------------------------------------------------------
# Duck typing: devices, foreign dtypes, lazy value access
# --------------------------------------------------------------------------

class _Device:
    def __init__(self, spec):
        self.type = spec.split(":")[0]
        self._spec = spec

    def __str__(self):
        return self._spec


class _Dtype:
    def __init__(self, text):
        self._text = text

    def __str__(self):
        return self._text


class _Proxy:
    """Wraps a torch tensor; records the size of every ``tolist()``."""

    def __init__(self, t, log, device=None, dtype=None):
        self._t, self._log = t, log
        self.device = device or t.device
        self.dtype = dtype or t.dtype

    def __getattr__(self, name):
        return getattr(self._t, name)

    def _wrap(self, t):
        return _Proxy(t, self._log, self.device, self.dtype)

    def detach(self):
        return self._wrap(self._t.detach())

    def cpu(self):
        return self._wrap(self._t)

    def __getitem__(self, index):
        return self._wrap(self._t[index])

    def tolist(self):
        self._log.append(self._t.numel())
        return self._t.tolist()


def test_device_suffix():
    cuda = _Device("cuda:0")
    log = []
    assert (ts.tensor_repr(_Proxy(T([1.0, 2.0]), log, cuda))
            == "tensor([1., 2.], device='cuda:0')")
    assert (ts.tensor_repr(_Proxy(T([1, 2], dtype=torch.int32), log, cuda))
            == "tensor([1, 2], device='cuda:0', dtype=torch.int32)")
    assert (ts.tensor_repr(_Proxy(torch.zeros(0, 3), log, cuda))
            == "tensor([], device='cuda:0', size=(0, 3))")
    leaf = _Proxy(T([1.0], requires_grad=True), log, cuda)
    assert (ts.tensor_repr(leaf)
            == "tensor([1.], device='cuda:0', requires_grad=True)")


def test_dtype_printed_with_str():
    log = []
    x = _Proxy(T([1.5], dtype=torch.float64), log,
               dtype=_Dtype("ember.float64"))
    assert ts.tensor_repr(x) == "tensor([1.5000], dtype=ember.float64)"
    y = _Proxy(T([1.5]), log, dtype=_Dtype("ember.float32"))
    assert ts.tensor_repr(y) == "tensor([1.5000])"


def test_summarization_only_converts_displayed_values():
    log = []
    big = torch.zeros(10 ** 6)
    big[-1] = 2.5
    text = ts.tensor_repr(_Proxy(big, log))
    assert text == repr(big)
    assert max(log) <= 3

    log.clear()
    cube = torch.arange(10 ** 6).reshape(100, 100, 100)
    assert ts.tensor_repr(_Proxy(cube, log)) == repr(cube)
    assert max(log) <= 3 and len(log) == 6 * 6 * 2


def test_prefix_name():
    x = T([[1.0, 2.0], [3.0, 4.0]])
    assert (ts.tensor_repr(x, prefix_name="param")
            == "param([[1., 2.],\n       [3., 4.]])")


def test_complex_matches_torch():  # the formatter is duck-typed: it prints torch tensors like torch
    t = torch.tensor([1 + 2j, -3.25 - 0.5j])
    assert ts.tensor_repr(t, default_dtype=torch.get_default_dtype) == repr(t)


# --------------------------------------------------------------------------
# Option state
# --------------------------------------------------------------------------

def test_get_printoptions_defaults():
    assert ts.get_printoptions() == dict(
        precision=4, threshold=1000, edgeitems=3, linewidth=80,
        sci_mode=None)


def test_profiles():
    ts.set_printoptions(profile="short")
    assert ts.get_printoptions() == dict(
        precision=2, threshold=1000, edgeitems=2, linewidth=80,
        sci_mode=None)
    ts.set_printoptions(profile="full", precision=3)
    assert ts.get_printoptions() == dict(
        precision=3, threshold=math.inf, edgeitems=3, linewidth=80,
        sci_mode=None)
    with pytest.raises(ValueError):
        ts.set_printoptions(profile="nope")


def test_partial_update_keeps_others_but_resets_sci_mode():
    ts.set_printoptions(precision=6, sci_mode=True)
    ts.set_printoptions(linewidth=100)
    opts = ts.get_printoptions()
    assert opts["precision"] == 6 and opts["linewidth"] == 100
    assert opts["sci_mode"] is None


def test_printoptions_context_manager():
    with ts.printoptions(precision=2):
        assert ts.tensor_repr(T([1.5])) == "tensor([1.50])"
    assert ts.tensor_repr(T([1.5])) == "tensor([1.5000])"
    assert ts.get_printoptions()["precision"] == 4
