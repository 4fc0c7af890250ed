"""The Bessel kernels (csrc/ember/ops/bessel.cpp, Note [Bessel functions]): accuracy against mpmath,
edge values, dtypes and layouts, and the I family's gradients against torch."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
mp = pytest.importorskip("mpmath")

# name in ember.special / torch.special, mpmath reference, argument range is the whole line (else x > 0)
FUNCS = {
    "i0": (lambda v: mp.besseli(0, v), True),
    "i0e": (lambda v: mp.exp(-abs(v)) * mp.besseli(0, v), True),
    "i1": (lambda v: mp.besseli(1, v), True),
    "i1e": (lambda v: mp.exp(-abs(v)) * mp.besseli(1, v), True),
    "modified_bessel_i0": (lambda v: mp.besseli(0, v), True),
    "modified_bessel_i1": (lambda v: mp.besseli(1, v), True),
    "modified_bessel_k0": (lambda v: mp.besselk(0, v), False),
    "modified_bessel_k1": (lambda v: mp.besselk(1, v), False),
    "scaled_modified_bessel_k0": (lambda v: mp.exp(v) * mp.besselk(0, v), False),
    "scaled_modified_bessel_k1": (lambda v: mp.exp(v) * mp.besselk(1, v), False),
    "bessel_j0": (lambda v: mp.besselj(0, v), True),
    "bessel_j1": (lambda v: mp.besselj(1, v), True),
    "bessel_y0": (lambda v: mp.bessely(0, v), False),
    "bessel_y1": (lambda v: mp.bessely(1, v), False),
}
I_FAMILY = ["i0", "i0e", "i1", "i1e"]


def _points(whole_line):
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.uniform(0, 10, 300), rng.uniform(10, 80, 100), np.exp(rng.uniform(-30, 6.5, 150)),
        # the ends of the series' intervals (2, 5, 8) and the zeros of J0, J1 next to them
        np.nextafter(np.array([2.0, 5.0, 8.0]), 0), [2.0, 5.0, 8.0], np.nextafter(np.array([2.0, 5.0, 8.0]), 10),
        [2.404825557695773, 3.8317059702075125, 5.520078110286311, 1e-300, 1e5, 1e12]])
    return np.concatenate([x, -x[::7]]) if whole_line else x


@pytest.mark.parametrize("name", list(FUNCS))
def test_float64_against_mpmath(name):
    """Relative error in ulp for the I and K families (a few; the series are accurate to ~1e-16); for J and
    Y, error over max(|f|, its envelope sqrt(2 / (pi x))): near their zeros no fixed-precision form keeps a
    relative bound (torch's J/Y are ~1e-6 off there and elsewhere: ember's are far closer)."""
    ref, whole = FUNCS[name]
    mp.mp.dps = 30
    x = _points(whole)
    got = getattr(ember.special, name)(ember.from_numpy(x)).numpy()
    want = np.array([float(ref(mp.mpf(float(v)))) for v in x])
    ok = np.isfinite(want) & (want != 0) & (np.abs(want) > 1e-300)
    if name.startswith("bessel"):
        scale = np.maximum(np.abs(want), np.sqrt(2 / (np.pi * np.abs(x))) * np.minimum(1, np.abs(x)))
        err = np.abs(got[ok] - want[ok]) / scale[ok] / np.finfo(np.float64).eps
        assert err.max() <= 6, (name, x[ok][np.argmax(err)], err.max())
    else:
        err = np.abs(got[ok] - want[ok]) / np.spacing(np.abs(want[ok]))
        assert err.max() <= 16, (name, x[ok][np.argmax(err)], err.max())


EDGES = [-math.inf, -1e300, -30.0, -1.0, -0.0, 0.0, 1e-320, 1e-310, 1e-5, 1.0, 2.0, 5.0, 8.0, 700.0, 710.0,
         1e300, math.inf, math.nan]


@pytest.mark.parametrize("name", list(FUNCS))
def test_edge_values_as_torch(name):
    """Infinities, NaN, zeros of either sign, negative x (NaN for K and Y), overflow and underflow: torch's
    values and signs; normal finite values agree to 1e-13 (J/Y to torch's accuracy, 1e-5)."""
    t = getattr(torch.special, name)(torch.tensor(EDGES, dtype=torch.float64)).numpy()
    e = getattr(ember.special, name)(ember.tensor(EDGES, dtype=ember.float64)).numpy()
    special = ~np.isfinite(t) | (t == 0)
    np.testing.assert_array_equal(e[special], t[special])
    assert (np.signbit(e[special]) == np.signbit(t[special])).all()
    finite = ~special & (np.abs(np.array(EDGES)) < 1e6) & (np.abs(t) > 1e-300)  # torch's j1(1e-320) is 3.6e-321
    rtol = 1e-5 if name.startswith("bessel") else 1e-13
    np.testing.assert_allclose(e[finite], t[finite], rtol=rtol, atol=0)
    assert ember.special.i0(ember.tensor(0.0, dtype=ember.float64)).item() == 1.0
    assert ember.special.bessel_j0(ember.tensor(0.0, dtype=ember.float64)).item() == 1.0


@pytest.mark.parametrize("name", list(FUNCS))
def test_float32_is_float64_rounded(name):
    """float32 results are within an ulp of the float64 ones rounded (their series stop at the terms a
    float can show); float16/bfloat16 (the I family) are the float64 ones rounded; integers compute in the
    default dtype."""
    rng = np.random.default_rng(3)
    x32 = (rng.standard_normal(4099) * 12).astype(np.float32)
    if not FUNCS[name][1]:
        x32 = np.abs(x32) + np.float32(1e-3)
        x32[::10] *= -1  # NaN
    f = getattr(ember.special, name)
    got = f(ember.from_numpy(x32)).numpy()
    want = f(ember.from_numpy(x32.astype(np.float64))).numpy().astype(np.float32)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    assert (np.abs(got[finite] - want[finite]) <= np.spacing(np.abs(want[finite]))).all()
    assert (got[finite] == want[finite]).mean() > 0.99
    halves = [ember.float16, ember.bfloat16]
    for dt in halves:
        xh = ember.from_numpy(x32[:300] / 4).to(dt)
        if name in I_FAMILY:
            np.testing.assert_array_equal(f(xh).float().numpy(), f(xh.double()).to(dt).float().numpy())
        else:
            with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented for'):
                f(xh)
    xi = ember.arange(1, 6)
    assert f(xi).dtype == ember.float32
    np.testing.assert_array_equal(f(xi).numpy(), f(xi.float()).numpy())


@pytest.mark.parametrize("name", ["i0", "i1e", "bessel_y1", "modified_bessel_k0"])
def test_layouts(name):
    """0-d, empty, transposed, strided and broadcast-expanded inputs give the contiguous result; out= and
    one and two threads agree bit for bit."""
    f = getattr(ember.special, name)
    base = ember.rand(37, 41, dtype=ember.float64) * 20 + 0.01
    want = f(base.contiguous())
    np.testing.assert_array_equal(f(base.t()).numpy(), want.numpy().T)
    np.testing.assert_array_equal(f(base[::3, 1::2]).numpy(), want.numpy()[::3, 1::2])
    np.testing.assert_array_equal(f(base[:1].expand(5, 41)).numpy(), np.repeat(want.numpy()[:1], 5, 0))
    assert f(ember.tensor(2.5)).shape == () and f(ember.empty(0, 3)).shape == (0, 3)
    out = ember.empty(37, 41, dtype=ember.float64)
    f(base, out=out)
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    threads = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = f(base).numpy()
    finally:
        ember.set_num_threads(threads)
    np.testing.assert_array_equal(one, want.numpy())


@pytest.mark.parametrize("name", I_FAMILY)
def test_i_family_gradients(name):
    x = ember.tensor([-7.5, -1.0, -1e-3, 0.0, 0.4, 3.0, 8.0, 9.5, 40.0], dtype=ember.float64, requires_grad=True)
    f = getattr(ember.special, name)
    assert ember.autograd.gradcheck(f, (x,))
    # exp(-|x|) has a kink at 0, so the second derivatives of i0e and i1e jump there
    xs = ember.tensor([-7.5, -1.0, -1e-3, 0.4, 3.0, 8.0, 9.5, 40.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(f, (xs if name.endswith("e") else x,))
    tx = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    getattr(torch.special, name)(tx).sum().backward()
    f(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-13, atol=0)
    assert f(x).grad_fn.name() == getattr(torch.special, name)(tx).grad_fn.name()


def test_others_have_no_graph_and_reject_complex():
    x = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)
    for name in FUNCS:
        y = getattr(ember.special, name)(x)
        assert y.requires_grad == (name in I_FAMILY), name
        with pytest.raises(NotImplementedError):
            getattr(ember.special, name)(ember.ones(2, dtype=ember.complex64))
    with pytest.raises(TypeError):
        ember.special.bessel_j0([1.0, 2.0])
    with pytest.raises(ValueError, match="unknown function"):
        ember._C._bessel("j2", x)


def test_kaiser_window_matches_torch():
    for beta in (0.0, 5.0, 12.0, 40.0):
        for n in (1, 2, 16, 101):
            got = ember.kaiser_window(n, periodic=False, beta=beta, dtype=ember.float64).numpy()
            want = torch.kaiser_window(n, periodic=False, beta=beta, dtype=torch.float64).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
