"""ember.fft, stft/istft and the window functions against torch 2.13: values and dtypes over lengths
(1, 2, primes, powers of two, odd and even), dims, n/s padding and trimming, norm modes and input
dtypes; non-contiguous inputs; torch's exception types; gradients (gradcheck in float64 on the
three primitives and on composites, and against torch's); forward-mode tangents."""
import warnings

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from conftest import torch

import torch.autograd.forward_ad as tfwAD

NORMS = [None, "backward", "ortho", "forward"]


def _name(dt):
    return str(dt).split(".")[-1]


def pair(shape, dtype="float64", seed=0):
    """The same random tensor in ember and torch (ints in [-5, 5))."""
    g = torch.Generator().manual_seed(seed)
    if dtype in ("int64", "int32"):
        t = torch.randint(-5, 5, shape, generator=g, dtype=getattr(torch, dtype))
    else:
        t = torch.randn(shape, generator=g, dtype=getattr(torch, dtype))
    return ember.from_numpy(t.numpy().copy()), t


def npy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().resolve_conj().numpy()
    return x.detach().numpy()


def close(e, t, what=""):
    """Same dtype, shape and values (tolerance scaled by the result's size and precision)."""
    assert _name(e.dtype) == _name(t.dtype), f"{what}: dtype {e.dtype} vs {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} vs {tuple(t.shape)}"
    a, b = npy(e), npy(t)
    if b.size == 0:
        return
    assert (np.isnan(a) == np.isnan(b)).all(), f"{what}: NaN positions differ"
    a, b = np.nan_to_num(a), np.nan_to_num(b)
    name = _name(t.dtype)
    scale = max(1.0, float(np.abs(b).max()))
    tol = (1e-3 if name == "float16" else 2e-5 if name in ("float32", "complex64") else 1e-11) * scale
    assert np.abs(a - b).max() <= tol, f"{what}: max error {np.abs(a - b).max()} > {tol}"


def run_both(fn, what):
    """fn(lib) in torch and ember: the same exception type when torch raises, else close results."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = fn(torch)
    except Exception as te:  # noqa: BLE001 (any exception torch raises must be raised by ember too)
        with pytest.raises(Exception) as ee:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(ember)
        assert type(ee.value) is type(te), f"{what}: ember raised {type(ee.value).__name__}: {ee.value}; " \
            f"torch raised {type(te).__name__}: {te}"
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = fn(ember)
    if isinstance(t, tuple):
        for a, b in zip(e, t):
            close(a, b, what)
    else:
        close(e, t, what)
    return e


# ---- one-dimensional transforms ----

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]


@pytest.mark.parametrize("fname", ONE_D)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
def test_one_dim_against_torch(fname, dtype):
    for length in (1, 2, 7, 16, 17, 12):
        e, t = pair((3, length), dtype, seed=length)
        for n in (None, 1, length // 2 + 1, length + 3, 2 * length):
            for dim in (-1, 0):
                for norm in NORMS if n is None else ("ortho" if n % 2 else "forward",):
                    def fn(lib):
                        x = e if lib is ember else t
                        return getattr(lib.fft, fname)(x, n=n, dim=dim, norm=norm)
                    run_both(fn, f"{fname}(dtype={dtype}, length={length}, n={n}, dim={dim}, norm={norm})")


@pytest.mark.parametrize("fname", ONE_D)
def test_one_dim_bool_and_int32_input(fname):
    for dtype in ("bool", "int32"):
        t = torch.tensor([True, False, True, True, False]) if dtype == "bool" else torch.arange(5, dtype=torch.int32)
        e = ember.from_numpy(t.numpy().copy())
        run_both(lambda lib: getattr(lib.fft, fname)(e if lib is ember else t), f"{fname}({dtype})")


def test_default_dtype_for_int_input():
    e, t = pair((6,), "int64")
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        close(ember.fft.fft(e), torch.fft.fft(t))
        close(ember.fft.rfft(e), torch.fft.rfft(t))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


# ---- N-dimensional transforms ----

ND = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
S_DIMS = [(None, None), ((5, 8), None), (None, (0, 2)), ((3, -1), (2, 0)), ((6,), None), (None, 1), (4, None),
          ((2, 3, 4), None), (None, (-1,)), ((7, 1), (1, -1)), ((), None), (None, ())]


@pytest.mark.parametrize("fname", ND + TWO_D)
@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32", "complex64"])
def test_n_dim_against_torch(fname, dtype):
    for shape in ((4, 5, 6), (3, 7), (2, 1, 9)):
        e, t = pair(shape, dtype, seed=len(shape))
        for s, dim in S_DIMS:
            if fname in TWO_D and dim is None and s is not None and not isinstance(s, int) and len(s) != 2:
                continue  # fft2's default dim=(-2, -1) with an s of another length: the same error in both
            for norm in (None, "ortho", "forward") if dtype == "float64" else (None,):
                kw = {"norm": norm}
                if s is not None:
                    kw["s"] = s
                if dim is not None:
                    kw["dim"] = dim

                def fn(lib):
                    return getattr(lib.fft, fname)(e if lib is ember else t, **kw)
                run_both(fn, f"{fname}(dtype={dtype}, shape={shape}, {kw})")


@pytest.mark.parametrize("fname", ND)
def test_n_dim_int_and_zero_dim_input(fname):
    e, t = pair((3, 4), "int64")
    run_both(lambda lib: getattr(lib.fft, fname)(e if lib is ember else t), f"{fname}(int64)")
    e, t = pair((), "float64")
    run_both(lambda lib: getattr(lib.fft, fname)(e if lib is ember else t), f"{fname}(0-d)")


# ---- layouts ----

def test_non_contiguous_inputs():
    base_t = torch.randn(6, 10, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    base_e = ember.from_numpy(base_t.numpy().copy())
    zt = torch.randn(6, 10, 8, dtype=torch.complex128, generator=torch.Generator().manual_seed(4))
    ze = ember.from_numpy(zt.numpy().copy())
    views = [
        lambda x: x.transpose(0, 2), lambda x: x[::2, 1::3], lambda x: x[:, :, 1:7], lambda x: x.permute(1, 2, 0),
        lambda x: x[1, :, ::2], lambda x: x[:, 0:1].expand(6, 5, 8), lambda x: x[2:3, 4],
    ]
    for i, v in enumerate(views):
        for fname in ("fft", "ifft", "rfft", "ihfft"):
            for dim in (-1, 0):
                run_both(lambda lib: getattr(lib.fft, fname)(v(base_e if lib is ember else base_t), dim=dim),
                         f"{fname} view {i} dim {dim}")
        for fname in ("fft", "irfft", "hfft"):
            run_both(lambda lib: getattr(lib.fft, fname)(v(ze if lib is ember else zt), dim=0),
                     f"{fname} complex view {i}")
        for fname in ("fftn", "rfftn", "irfftn", "ihfftn"):
            x_e, x_t = (ze, zt) if fname == "irfftn" else (base_e, base_t)
            run_both(lambda lib: getattr(lib.fft, fname)(v(x_e if lib is ember else x_t)), f"{fname} view {i}")


def test_large_batches_split_across_threads():
    # Above the kernel's threshold the batch is split across threads, over the outermost batch dim
    # (one contiguous output block per thread) or another one (scaled after the transforms).
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        for shape, dim in (((64, 1000), -1), ((64, 1000), 0), ((8, 300, 9), 1), ((3, 40, 500), (0, 2))):
            for dtype in ("float32", "float64"):
                e, t = pair(shape, dtype, seed=5)
                dims = dim if isinstance(dim, tuple) else (dim,)
                for norm in (None, "forward"):
                    run_both(lambda lib: lib.fft.rfftn(e if lib is ember else t, dim=dims, norm=norm),
                             f"rfftn {shape} {dim} {dtype} {norm}")
                    run_both(lambda lib: lib.fft.ifftn(e if lib is ember else t, dim=dims, norm=norm),
                             f"ifftn {shape} {dim} {dtype} {norm}")
                z_e = ember.fft.rfftn(e, dim=dims)
                z_t = torch.fft.rfftn(t, dim=dims)
                run_both(lambda lib: lib.fft.irfftn(z_e if lib is ember else z_t, dim=dims, norm="ortho"),
                         f"irfftn {shape} {dim} {dtype}")
    finally:
        ember.set_num_threads(old)


def test_large_and_prime_lengths():
    for n in (1009, 4096, 10007):
        e, t = pair((n,), "float32", seed=n)
        close(ember.fft.rfft(e), torch.fft.rfft(t), f"rfft {n}")
        close(ember.fft.irfft(ember.fft.rfft(e), n=n), t, f"irfft(rfft) {n}")


def test_odd_lengths_with_a_large_prime_factor():
    # Real transforms of these lengths run as complex ones (Note [Real transforms of awkward lengths]).
    for n in (4099, 12297, 2049):
        for dtype in ("float32", "float64"):
            e, t = pair((2, n), dtype, seed=n)
            close(ember.fft.rfft(e), torch.fft.rfft(t), f"rfft {n}")
            close(ember.fft.ihfft(e, norm="ortho"), torch.fft.ihfft(t, norm="ortho"), f"ihfft {n}")
            close(ember.fft.rfftn(e), torch.fft.rfftn(t), f"rfftn {n}")
            close(ember.fft.rfft(e.t(), dim=0), torch.fft.rfft(t.t(), dim=0), f"rfft dim 0 {n}")
            ze, zt = pair((2, n // 2 + 1), "complex64" if dtype == "float32" else "complex128", seed=n + 1)
            close(ember.fft.irfft(ze, n=n), torch.fft.irfft(zt, n=n), f"irfft {n}")
            close(ember.fft.hfft(ze, n=n, norm="forward"), torch.fft.hfft(zt, n=n, norm="forward"), f"hfft {n}")
            close(ember.fft.irfftn(ze, s=(3, n)), torch.fft.irfftn(zt, s=(3, n)), f"irfftn {n}")
            close(ember.fft.irfft(ze.t(), n=n, dim=0), torch.fft.irfft(zt.t(), n=n, dim=0), f"irfft dim 0 {n}")
    e, t = pair((4099,), "float64", seed=1)
    e.requires_grad_()
    t.requires_grad_()
    (ember.fft.irfft(ember.fft.rfft(e) * 2, n=4099) * e).sum().backward()
    (torch.fft.irfft(torch.fft.rfft(t) * 2, n=4099) * t).sum().backward()
    close(e.grad, t.grad)


def test_empty_batch_gives_empty_result():
    # torch 2.13's MKL back end raises "Inconsistent configuration parameters" on an empty batch; the
    # transform of no signals is no result (as NumPy and torch's pocketfft builds give).
    assert tuple(ember.fft.fft(ember.zeros(0, 4)).shape) == np.fft.fft(np.zeros((0, 4))).shape
    assert tuple(ember.fft.rfft(ember.zeros(3, 0), dim=0).shape) == np.fft.rfft(np.zeros((3, 0)), axis=0).shape
    assert tuple(ember.fft.irfft(ember.zeros(2, 0, 5, dtype=ember.complex64)).shape) == (2, 0, 8)
    assert ember.fft.fft(ember.zeros(0, 4)).dtype == ember.complex64


def test_out_argument():
    e, t = pair((4, 6), "float64")
    out_e = ember.empty(0, dtype=ember.complex128)
    r = ember.fft.fft(e, out=out_e)
    assert r is out_e
    close(out_e, torch.fft.fft(t))
    out_e = ember.empty(3, dtype=ember.float64)
    ember.fft.irfft(ember.fft.rfft(e), n=6, out=out_e)
    close(out_e, t)
    with pytest.raises(RuntimeError):
        ember.fft.fft(e, out=ember.empty(0))


# ---- errors ----

def _t(lib, shape=(4, 5), dtype="float32"):
    return lib.ones(shape, dtype=getattr(lib, dtype))


ERRORS = [
    lambda lib: lib.fft.fft(lib.tensor(1.)),
    lambda lib: lib.fft.fft(_t(lib), n=0),
    lambda lib: lib.fft.fft(_t(lib), n=-1),
    lambda lib: lib.fft.fft(_t(lib), dim=2),
    lambda lib: lib.fft.fft(_t(lib), dim=-3),
    lambda lib: lib.fft.fft(_t(lib), norm="bad"),
    lambda lib: lib.fft.fft(_t(lib), norm=1),
    lambda lib: lib.fft.fft(_t(lib, dtype="float16")),
    lambda lib: lib.fft.rfft(_t(lib, dtype="bfloat16")),
    lambda lib: lib.fft.rfft(_t(lib, dtype="complex64")),
    lambda lib: lib.fft.ihfft(_t(lib, dtype="complex64")),
    lambda lib: lib.fft.irfft(_t(lib, (3, 1), "complex64")),
    lambda lib: lib.fft.hfft(_t(lib, (3, 1), "complex64")),
    lambda lib: lib.fft.irfft(_t(lib), n=0),
    lambda lib: lib.fft.rfftn(lib.tensor(1.)),
    lambda lib: lib.fft.irfftn(lib.tensor(1. + 0j)),
    lambda lib: lib.fft.hfftn(lib.tensor(1. + 0j)),
    lambda lib: lib.fft.ihfftn(lib.tensor(1.)),
    lambda lib: lib.fft.rfftn(_t(lib), dim=()),
    lambda lib: lib.fft.irfft2(_t(lib), dim=()),
    lambda lib: lib.fft.fftn(_t(lib), s=(2, 3, 4)),
    lambda lib: lib.fft.fftn(_t(lib), s=(2, 3), dim=(0,)),
    lambda lib: lib.fft.fft2(_t(lib), s=(3,), dim=(0, 1)),
    lambda lib: lib.fft.fftn(_t(lib), dim=(0, 0)),
    lambda lib: lib.fft.fftn(_t(lib), dim=(0, -2)),
    lambda lib: lib.fft.fftn(_t(lib), s=(0, 3)),
    lambda lib: lib.fft.irfftn(_t(lib, dtype="complex64"), s=(4, 0)),
    lambda lib: lib.fft.fftn(_t(lib), s=(3,), dim=5),
    lambda lib: lib.fft.fft2(_t(lib, (3,))),
    lambda lib: lib.fft.fftn(_t(lib, (0, 3))),
    lambda lib: lib.fft.fft(_t(lib, (3, 0))),
    lambda lib: lib.fft.rfft(_t(lib, (0,))),
    lambda lib: lib.fft.fftn(_t(lib), s=[2.5, 3]),
    lambda lib: lib.fft.fft(_t(lib), n=2.0),
    lambda lib: lib.fft.fft(_t(lib), dim=1.0),
    lambda lib: lib.fft.fft(_t(lib), dim=None),
    lambda lib: lib.fft.fft([1., 2.]),
    lambda lib: lib.fft.fftfreq(-1),
    lambda lib: lib.fft.fftfreq(4, dtype=lib.int64),
    lambda lib: lib.fft.rfftfreq(4, dtype=lib.int32),
    lambda lib: lib.fft.fftshift(lib.tensor(1.)),
    lambda lib: lib.fft.fftshift(_t(lib), dim=3),
    lambda lib: lib.fft.ifftshift(_t(lib), dim=(0, -3)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_as_torch(i):
    fn = ERRORS[i]
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as ee:
        fn(ember)
    assert type(ee.value) is type(te.value), f"ember: {type(ee.value).__name__}: {ee.value}; " \
        f"torch: {type(te.value).__name__}: {te.value}"


def test_error_messages():
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        ember.fft.fft(ember.ones(4), n=0)
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "bad"'):
        ember.fft.fft(ember.ones(4), norm="bad")
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor, but got ComplexFloat"):
        ember.fft.rfft(ember.ones(4, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        ember.fft.fft(ember.ones(4, dtype=ember.float16))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        ember.fft.fftn(ember.ones(4, 4), dim=(1, -1))
    with pytest.raises(RuntimeError, match="rfftn must transform at least one axis"):
        ember.fft.rfftn(ember.tensor(1.))
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.fft.fft(ember.ones(4), dim=1)


# ---- frequencies and shifts ----

def test_fftfreq_and_rfftfreq():
    for n in (0, 1, 2, 5, 8, 17):
        for d in (1.0, 0.1, 2.5, 3):
            for dtype in (None, "float64"):
                kw = {} if dtype is None else {"dtype": getattr(ember, dtype)}
                tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
                close(ember.fft.fftfreq(n, d, **kw), torch.fft.fftfreq(n, d, **tkw), f"fftfreq {n} {d}")
                close(ember.fft.rfftfreq(n, d, **kw), torch.fft.rfftfreq(n, d, **tkw), f"rfftfreq {n} {d}")
    r = ember.fft.fftfreq(4, requires_grad=True)
    assert r.requires_grad and r.is_leaf


def test_fftshift_and_ifftshift():
    for shape in ((5,), (4,), (3, 4), (2, 5, 7)):
        t = torch.arange(int(np.prod(shape)), dtype=torch.float64).reshape(shape)
        e = ember.from_numpy(t.numpy().copy())
        dims = [None, 0, -1, tuple(range(len(shape)))]
        if len(shape) > 1:
            dims.append((0, -1))
        for dim in dims:
            close(ember.fft.fftshift(e, dim), torch.fft.fftshift(t, dim), f"fftshift {shape} {dim}")
            close(ember.fft.ifftshift(e, dim=dim), torch.fft.ifftshift(t, dim=dim), f"ifftshift {shape} {dim}")
            close(ember.fft.ifftshift(ember.fft.fftshift(e, dim), dim), t)


# ---- gradients ----

def _gc(fn, *inputs):
    assert ember.autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("norm", [0, 1, 2])
def test_gradcheck_primitives(norm):
    C = ember._C
    z = ember.randn(3, 5, dtype=ember.complex128, requires_grad=True)
    x = ember.randn(4, 6, dtype=ember.float64, requires_grad=True)
    x7 = ember.randn(7, 3, dtype=ember.float64, requires_grad=True)
    for forward in (True, False):
        _gc(lambda a: C._fft_c2c(a, [1], norm, forward), z)
        _gc(lambda a: C._fft_c2c(a, [1, 0], norm, forward), z)
    for onesided in (True, False):
        _gc(lambda a: C._fft_r2c(a, [1], norm, onesided), x)
        _gc(lambda a: C._fft_r2c(a, [1, 0], norm, onesided), x)
        _gc(lambda a: C._fft_r2c(a, [0], norm, onesided), x7)
    for n in (8, 9):
        _gc(lambda a: C._fft_c2r(a, [1], norm, n), z)
        _gc(lambda a: C._fft_c2r(a, [0, 1], norm, n), z)
    _gc(lambda a: C._fft_c2r(a, [1, 0], norm, 4), ember.randn(3, 5, dtype=ember.complex128, requires_grad=True))
    _gc(lambda a: C._fft_c2r(a, [1], norm, 1), ember.randn(2, 1, dtype=ember.complex128, requires_grad=True))
    _gc(lambda a: C._fft_c2r(a, [1], norm, 2), ember.randn(2, 2, dtype=ember.complex128, requires_grad=True))


def test_gradgradcheck_primitives():
    C = ember._C
    z = ember.randn(3, 4, dtype=ember.complex128, requires_grad=True)
    x = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a: C._fft_c2c(a, [0, 1], 1, True), (z,))
    assert ember.autograd.gradgradcheck(lambda a: C._fft_r2c(a, [1], 0, True), (x,))
    assert ember.autograd.gradgradcheck(lambda a: C._fft_c2r(a, [1], 2, 7), (z,))


def test_gradcheck_composites():
    F = ember.fft
    x = ember.randn(4, 6, dtype=ember.float64, requires_grad=True)
    z = ember.randn(4, 6, dtype=ember.complex128, requires_grad=True)
    _gc(lambda a: F.fft(a, n=9), x)
    _gc(lambda a: F.ifft(a, n=3, dim=0, norm="ortho"), z)
    _gc(lambda a: F.rfft(a, n=8), x)
    _gc(lambda a: F.irfft(a, n=7, norm="forward"), z)
    _gc(lambda a: F.hfft(a, n=5), z)
    _gc(lambda a: F.ihfft(a, dim=0), x)
    _gc(lambda a: F.fft2(a, s=(3, 7)), z)
    _gc(lambda a: F.rfftn(a, norm="ortho"), x)
    _gc(lambda a: F.irfftn(a, s=(5, 6)), z)
    _gc(lambda a: F.hfftn(a, s=(3, 4)), z)
    _gc(lambda a: F.ihfft2(a), x)
    _gc(lambda a: F.fftshift(F.fft(a)), x)


GRAD_CASES = [
    ("fft", "float64", dict(n=9)), ("fft", "complex128", dict(dim=0, norm="ortho")),
    ("ifft", "complex128", dict(n=4)), ("ifft", "float64", {}), ("rfft", "float64", dict(n=5, norm="forward")),
    ("irfft", "complex128", dict(n=9)), ("irfft", "complex128", {}), ("hfft", "complex128", dict(n=6)),
    ("ihfft", "float64", dict(n=7)), ("fftn", "complex128", dict(s=(3, 9))), ("ifft2", "float64", {}),
    ("rfft2", "float64", dict(s=(5, 4))), ("irfftn", "complex128", dict(s=(4, 7), norm="ortho")),
    ("hfft2", "complex128", dict(s=(3, 5))), ("ihfftn", "float64", dict(dim=(0, 1))),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[f"{c[0]}-{c[1]}" for c in GRAD_CASES])
def test_gradients_match_torch(case):
    fname, dtype, kw = case
    e, t = pair((4, 6), dtype, seed=11)
    e.requires_grad_()
    t.requires_grad_()
    re, rt = getattr(ember.fft, fname)(e, **kw), getattr(torch.fft, fname)(t, **kw)
    we, wt = pair(tuple(rt.shape), "complex128" if rt.is_complex() else "float64", seed=12)
    if rt.is_complex():
        (re * we).real.sum().backward()
        (rt * wt).real.sum().backward()
    else:
        (re * we).sum().backward()
        (rt * wt).sum().backward()
    close(e.grad, t.grad, fname)


@pytest.mark.parametrize("fname", ["fft", "rfft", "irfft", "ihfft", "fft2", "hfftn"])
def test_forward_ad_matches_torch(fname):
    dtype = "complex128" if fname in ("irfft", "hfftn") else "float64"
    e, t = pair((3, 6), dtype, seed=1)
    te, tt = pair((3, 6), dtype, seed=2)
    with fwAD.dual_level():
        out_e = fwAD.unpack_dual(getattr(ember.fft, fname)(fwAD.make_dual(e, te))).tangent
    with tfwAD.dual_level():
        out_t = tfwAD.unpack_dual(getattr(torch.fft, fname)(tfwAD.make_dual(t, tt))).tangent
    close(out_e, out_t, fname)


# ---- stft / istft ----

def _signal(shape, dtype="float64", seed=0):
    return pair(shape, dtype, seed)


STFT_CASES = [
    dict(n_fft=16, hop_length=4, window="hann"),
    dict(n_fft=16, window="hann", center=False),
    dict(n_fft=15, hop_length=5, window="hamming", pad_mode="constant"),
    dict(n_fft=16, hop_length=3, window="hann", pad_mode="replicate", normalized=True),
    dict(n_fft=16, window="hann", pad_mode="circular", onesided=False),
    dict(n_fft=16, hop_length=4, win_length=10, window="hann10"),
    dict(n_fft=16, hop_length=4, win_length=10),
    dict(n_fft=16, hop_length=4),
    dict(n_fft=17, hop_length=4, window="hann17", center=False, normalized=True),
    dict(n_fft=16, hop_length=3, win_length=10, window="hann10", center=False, align_to_window=True),
    dict(n_fft=16, hop_length=4, window="hann", return_complex=False),
    dict(n_fft=64, hop_length=16, window="hann64"),
]


def _window(lib, spec, dtype):
    if spec is None:
        return None
    n = int(spec[4:] or 16) if spec.startswith("hann") else 15
    dt = getattr(lib, dtype)
    return lib.hann_window(n, dtype=dt) if spec.startswith("hann") else lib.hamming_window(n, dtype=dt)


@pytest.mark.parametrize("case", range(len(STFT_CASES)))
@pytest.mark.parametrize("shape", [(100,), (2, 100)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_stft_against_torch(case, shape, dtype):
    kw = dict(STFT_CASES[case])
    spec = kw.pop("window", None)
    kw.setdefault("return_complex", True)
    if dtype == "complex128" and kw.get("onesided") is None and kw["return_complex"]:
        kw["onesided"] = False
    real = "float64" if dtype != "float32" else "float32"
    e, t = _signal(shape, dtype)

    def fn(lib):
        return lib.stft(e if lib is ember else t, window=_window(lib, spec, real), **kw)
    run_both(fn, f"stft {kw} {spec} {shape} {dtype}")


def test_stft_method_gradients_and_warnings():
    e, t = _signal((2, 80))
    e.requires_grad_()
    t.requires_grad_()
    we, wt = ember.hann_window(20, dtype=ember.float64), torch.hann_window(20, dtype=torch.float64)
    se = e.stft(20, 5, window=we, return_complex=True)
    st = t.stft(20, 5, window=wt, return_complex=True)
    close(se, st)
    (se.abs() ** 2).sum().backward()
    (st.abs() ** 2).sum().backward()
    close(e.grad, t.grad)
    x = ember.randn(30, dtype=ember.float64, requires_grad=True)
    w = ember.hann_window(8, dtype=ember.float64)
    _gc(lambda a: ember.stft(a, 8, 2, window=w, return_complex=True), x)
    with pytest.warns(UserWarning, match="window was not provided"):
        ember.stft(ember.ones(20), 8, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        r = ember.stft(ember.ones(20), 8, window=ember.hann_window(8), return_complex=False)
    assert tuple(r.shape) == (5, 11, 2) and r.dtype == ember.float32


STFT_ERRORS = [
    lambda lib: lib.stft(lib.ones(100), 16, window=lib.hann_window(16)),
    lambda lib: lib.stft(lib.ones(100, dtype=lib.complex64), 16, window=lib.hann_window(16), onesided=True),
    lambda lib: lib.stft(lib.ones(2, 3, 100), 16, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.tensor(1.), 16, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 0, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 200, window=lib.hann_window(200), return_complex=True, center=False),
    lambda lib: lib.stft(lib.ones(100), 16, 0, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 16, win_length=20, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 16, win_length=0, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 16, window=lib.hann_window(10), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 16, window=lib.ones(4, 4), return_complex=True),
    lambda lib: lib.stft(lib.arange(100), 16, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 16, window=lib.hann_window(16), return_complex=True, pad_mode="foo"),
    lambda lib: lib.stft(lib.ones(10), 32, window=lib.hann_window(32), return_complex=True),
    lambda lib: lib.stft(lib.ones(0), 16, window=lib.hann_window(16), return_complex=True),
    lambda lib: lib.stft(lib.ones(100), 16, window=lib.hann_window(16), return_complex=True, align_to_window=True),
    lambda lib: lib.stft(lib.ones(100, dtype=lib.float16), 16, window=lib.hann_window(16, dtype=lib.float16),
                         return_complex=True),
]


@pytest.mark.parametrize("i", range(len(STFT_ERRORS)))
def test_stft_errors_as_torch(i):
    fn = STFT_ERRORS[i]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            fn(torch)
        with pytest.raises(Exception) as ee:
            fn(ember)
    assert type(ee.value) is type(te.value), f"ember: {type(ee.value).__name__}: {ee.value}; " \
        f"torch: {type(te.value).__name__}: {te.value}"


ISTFT_CASES = [
    (dict(n_fft=16, hop_length=4, window="hann"), {}),
    (dict(n_fft=16, hop_length=4, window="hann"), dict(length=100)),
    (dict(n_fft=16, hop_length=4, window="hann"), dict(length=120)),
    (dict(n_fft=16, hop_length=4, window="hann"), dict(length=50)),
    (dict(n_fft=16, hop_length=4, window="hann", normalized=True), dict(normalized=True)),
    (dict(n_fft=16, hop_length=4, window="hann", onesided=False), {}),
    (dict(n_fft=16, hop_length=4, window="hann", onesided=False), dict(return_complex=True)),
    (dict(n_fft=16, hop_length=4, win_length=10, window="hann10"), dict(win_length=10)),
    (dict(n_fft=16, hop_length=8, center=False), dict(center=False, window=None, length=90)),
    (dict(n_fft=15, hop_length=5, window="hann15"), {}),
]


@pytest.mark.parametrize("case", range(len(ISTFT_CASES)))
@pytest.mark.parametrize("shape", [(100,), (2, 100)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_istft_against_torch(case, shape, dtype):
    skw, ikw = ISTFT_CASES[case]
    skw = dict(skw)
    spec = skw.pop("window", None)
    ikw = dict(ikw)
    ispec = ikw.pop("window", spec)
    e, t = _signal(shape, dtype, seed=case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        S_t = torch.stft(t, window=_window(torch, spec, dtype), return_complex=True, **skw)
    S_e = ember.from_numpy(S_t.numpy().copy())
    ikw.setdefault("hop_length", skw.get("hop_length"))

    def fn(lib):
        return lib.istft(S_e if lib is ember else S_t, skw["n_fft"], window=_window(lib, ispec, dtype), **ikw)
    r = run_both(fn, f"istft {skw} {ikw} {shape} {dtype}")
    if r is not None and "length" not in ikw and not ikw.get("return_complex") and ikw.get("center", True):
        close(r, t[..., :r.shape[-1]])  # the round trip restores the signal up to the last frame


def test_istft_round_trip_gradient_and_warnings():
    x = ember.randn(2, 64, dtype=ember.float64)
    w = ember.hann_window(16, dtype=ember.float64)
    S = ember.stft(x, 16, 4, window=w, return_complex=True)
    close(ember.istft(S, 16, 4, window=w, length=64), torch.from_numpy(x.numpy()))
    s = S.detach().clone().requires_grad_()
    _gc(lambda a: ember.istft(a, 16, 4, window=w), s[:, :, :5].detach().clone().requires_grad_())
    st = torch.from_numpy(S.numpy().copy()).requires_grad_()
    wt = torch.hann_window(16, dtype=torch.float64)
    g = ember.randn(2, 64, dtype=ember.float64)
    (ember.istft(s, 16, 4, window=w, length=64) * g).sum().backward()
    (torch.istft(st, 16, 4, window=wt, length=64) * torch.from_numpy(g.numpy())).sum().backward()
    close(s.grad, st.grad)
    with pytest.warns(UserWarning, match="window was not provided"):
        ember.istft(S, 16, 4)
    with pytest.warns(UserWarning, match="shorter than the length parameter"):
        ember.istft(S, 16, 4, window=w, length=80)
    assert S.istft(16, 4, window=w).shape == ember.istft(S, 16, 4, window=w).shape


ISTFT_ERRORS = [
    lambda lib, S, w: lib.istft(lib.view_as_real(S), 16, 4, window=w),
    lambda lib, S, w: lib.istft(S, 16, 4, window=w, return_complex=True),
    lambda lib, S, w: lib.istft(S, 16, 4, window=w, onesided=False),
    lambda lib, S, w: lib.istft(S[None, None], 16, 4, window=w),
    lambda lib, S, w: lib.istft(S[0], 16, 4, window=w),
    lambda lib, S, w: lib.istft(S, 16, 20, window=w),
    lambda lib, S, w: lib.istft(S, 16, 4, win_length=20, window=w),
    lambda lib, S, w: lib.istft(S, 16, 4, window=lib.hann_window(10)),
    lambda lib, S, w: lib.istft(S, 16, 4, window=lib.zeros(16)),
    lambda lib, S, w: lib.istft(S, 16, 4, window=w, center=False),
    lambda lib, S, w: lib.istft(S[:, :0], 16, 4, window=w),
    lambda lib, S, w: lib.istft(S, 32, 4, window=lib.hann_window(32)),
]


@pytest.mark.parametrize("i", range(len(ISTFT_ERRORS)))
def test_istft_errors_as_torch(i):
    x = torch.randn(100)
    S_t = torch.stft(x, 16, 4, window=torch.hann_window(16), return_complex=True)
    S_e = ember.from_numpy(S_t.numpy().copy())
    fn = ISTFT_ERRORS[i]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            fn(torch, S_t, torch.hann_window(16))
        with pytest.raises(Exception) as ee:
            fn(ember, S_e, ember.hann_window(16))
    assert type(ee.value) is type(te.value), f"ember: {type(ee.value).__name__}: {ee.value}; " \
        f"torch: {type(te.value).__name__}: {te.value}"


# ---- windows ----

@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_windows_against_torch(name):
    for n in (0, 1, 2, 5, 16, 17, 400):
        for periodic in (True, False):
            for dtype in ("float32", "float64"):
                e = getattr(ember, name)(n, periodic, dtype=getattr(ember, dtype))
                t = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
                close(e, t, f"{name}({n}, {periodic}, {dtype})")
    close(getattr(ember, name)(7), getattr(torch, name)(7))
    w = getattr(ember, name)(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    for bad in (lambda lib: getattr(lib, name)(-1), lambda lib: getattr(lib, name)(4, dtype=lib.int64),
                lambda lib: getattr(lib, name)(4, dtype=lib.complex64), lambda lib: getattr(lib, name)(4.0)):
        with pytest.raises(Exception) as te:
            bad(torch)
        with pytest.raises(Exception) as ee:
            bad(ember)
        assert type(ee.value) is type(te.value), f"{name}: {ee.value!r} vs {te.value!r}"


def test_window_parameters_against_torch():
    for args in ((9, True, 0.5), (9, False, 0.6, 0.3), (10, True, 0.54, 0.46)):
        close(ember.hamming_window(*args, dtype=ember.float64), torch.hamming_window(*args, dtype=torch.float64))
    for beta in (0.0, 3.0, 8.6, 12.0, 40.0):
        for n in (5, 64):
            for periodic in (True, False):
                close(ember.kaiser_window(n, periodic, beta, dtype=ember.float64),
                      torch.kaiser_window(n, periodic, beta, dtype=torch.float64), f"kaiser {n} {beta}")
    close(ember.hann_window(6, dtype=ember.float16), torch.hann_window(6, dtype=torch.float16))


SIGNAL_WINDOWS = [
    ("cosine", {}), ("exponential", {}), ("exponential", dict(tau=2.5)), ("gaussian", {}), ("gaussian", dict(std=3.0)),
    ("general_cosine", dict(a=[0.5, 0.3, 0.2])), ("general_hamming", {}), ("general_hamming", dict(alpha=0.6)),
    ("hamming", {}), ("hann", {}), ("blackman", {}), ("bartlett", {}), ("kaiser", {}), ("kaiser", dict(beta=4.0)),
    ("nuttall", {}),
]


@pytest.mark.parametrize("case", SIGNAL_WINDOWS, ids=[f"{c[0]}-{i}" for i, c in enumerate(SIGNAL_WINDOWS)])
def test_signal_windows_against_torch(case):
    name, kw = case
    fe, ft = getattr(ember.signal.windows, name), getattr(torch.signal.windows, name)
    for M in (0, 1, 2, 7, 16, 51):
        for sym in (True, False):
            for dtype in ("float32", "float64"):
                close(fe(M, sym=sym, dtype=getattr(ember, dtype), **kw),
                      ft(M, sym=sym, dtype=getattr(torch, dtype), **kw), f"{name}({M}, sym={sym}, {dtype}, {kw})")
    close(fe(9, **kw), ft(9, **kw))
    for bad in (lambda lib: getattr(lib.signal.windows, name)(-1, **kw),
                lambda lib: getattr(lib.signal.windows, name)(4, dtype=lib.int64, **kw),
                lambda lib: getattr(lib.signal.windows, name)(4, dtype=lib.float16, **kw),
                lambda lib: getattr(lib.signal.windows, name)(4, dtype=lib.complex64, **kw)):
        with pytest.raises(Exception) as te:
            bad(torch)
        with pytest.raises(Exception) as ee:
            bad(ember)
        assert type(ee.value) is type(te.value), f"{name}: {ee.value!r} vs {te.value!r}"
        assert str(ee.value) == str(te.value).replace("torch.", "ember.")


def test_signal_window_argument_errors():
    W, TW = ember.signal.windows, torch.signal.windows
    cases = [
        lambda w: w.exponential(5, tau=0), lambda w: w.exponential(5, center=1.0),
        lambda w: w.gaussian(5, std=0), lambda w: w.gaussian(5, std=-1.0), lambda w: w.kaiser(5, beta=-1),
        lambda w: w.general_cosine(5, a=3), lambda w: w.general_cosine(5, a=[]),
    ]
    for fn in cases:
        with pytest.raises(Exception) as te:
            fn(TW)
        with pytest.raises(Exception) as ee:
            fn(W)
        assert type(ee.value) is type(te.value) and str(ee.value) == str(te.value)
    close(W.exponential(6, center=1.5, sym=False), TW.exponential(6, center=1.5, sym=False))
    close(W.exponential(7, center=0.0, tau=3.0, sym=False, dtype=ember.float64),
          TW.exponential(7, center=0.0, tau=3.0, sym=False, dtype=torch.float64))
    w = W.hann(5, requires_grad=True)
    assert w.requires_grad


# ---- the plan cache ----

def test_device_argument():
    assert ember.hann_window(4, device="cpu").tolist() == ember.hann_window(4).tolist()
    for bad in (lambda: ember.hann_window(4, device="cuda"), lambda: ember.signal.windows.hann(4, device="cuda"),
                lambda: ember.fft.fftfreq(4, device="cuda")):
        with pytest.raises(NotImplementedError):  # ember has no CUDA back end yet
            bad()


def test_plan_cache_reuses_plans():
    x = ember.randn(3, 50)
    ember.fft.rfft(x)
    n = ember._C._fft_plan_cache_size()
    for _ in range(3):
        ember.fft.rfft(x)
        ember.fft.rfft(ember.randn(3, 50))
    assert ember._C._fft_plan_cache_size() == n
    ember._C._fft_plan_cache_clear()
    assert ember._C._fft_plan_cache_size() == 0
    close(ember.fft.rfft(x), torch.fft.rfft(torch.from_numpy(x.numpy())))
