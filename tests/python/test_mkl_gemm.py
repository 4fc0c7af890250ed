"""Note [MKL GEMM]: float32/float64 products on MKL (when installed) against torch and against
ember's oneDNN/OpenBLAS paths; the switch, the environment variable, and bad input."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
from conftest import same_error, torch

needs_mkl = pytest.mark.skipif(not ember.backends.mkl.is_available(),
                               reason="MKL is not installed (pip install mkl), or this CPU has no strict-CNR branch "
                               "(non-Intel, or no AVX2)")


@pytest.fixture
def mkl_switch():
    old = ember.backends.mkl.enabled
    yield
    ember.backends.mkl.enabled = old


def _pair(shape, dtype, seed):
    t = torch.randn(shape, dtype=getattr(torch, dtype), generator=torch.Generator().manual_seed(seed))
    return ember.tensor(t.numpy()), t


def _both_paths(fn):
    """fn() with MKL on and with MKL off, as NumPy arrays."""
    ember.backends.mkl.enabled = True
    on = fn().numpy()
    ember.backends.mkl.enabled = False
    off = fn().numpy()
    ember.backends.mkl.enabled = True
    return on, off


def _same_bits_for_1_2_3_threads(fn):
    threads = ember.get_num_threads()
    try:
        outs = []
        for t in (1, 2, 3):
            ember.set_num_threads(t)
            outs.append(fn().numpy())
    finally:
        ember.set_num_threads(threads)
    return all(np.array_equal(outs[0], o) for o in outs[1:])


# (m, k, n): narrow and wide outputs (addmm's two routes), a long k, one row, a large square, and
# products for JIT kernels, whole or in 2 or 4 row pieces (Note [MKL JIT GEMM])
SHAPES = [(512, 256, 256), (256, 128, 1024), (64, 20000, 32), (1, 4096, 1024), (1024, 1024, 1024), (100, 100, 100),
          (1, 1000, 1024), (96, 40, 300), (128, 128, 128), (128, 256, 128), (256, 256, 64), (98, 128, 160)]


@needs_mkl
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
def test_mm_and_addmm_on_mkl_match_torch_and_the_other_paths(mkl_switch, dtype, m, k, n, layout):
    a, at = _pair((k, m) if layout[0] == "t" else (m, k), dtype, 1)
    b, bt = _pair((n, k) if layout[1] == "t" else (k, n), dtype, 2)
    c, ct = _pair((n,), dtype, 3)
    if layout[0] == "t":
        a, at = a.t(), at.t()
    if layout[1] == "t":
        b, bt = b.t(), bt.t()
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == "float32" else dict(rtol=1e-10, atol=1e-9)
    for e_fn, t_fn in [(lambda: a @ b, lambda: at @ bt),
                       (lambda: ember.addmm(c, a, b), lambda: torch.addmm(ct, at, bt)),
                       (lambda: ember.nn.functional.linear(a, b.t(), c),
                        lambda: torch.nn.functional.linear(at, bt.t(), ct))]:
        on, off = _both_paths(e_fn)
        ref = t_fn().numpy()
        assert on.dtype == ref.dtype and on.shape == ref.shape
        np.testing.assert_allclose(on, ref, **tol)
        np.testing.assert_allclose(off, ref, **tol)


@needs_mkl
def test_mkl_product_matches_float64_closely(mkl_switch):
    # the float32 product on MKL is as close to the exact one as the other paths are
    rng = np.random.default_rng(0)
    a = rng.standard_normal((700, 900)).astype(np.float32)
    b = rng.standard_normal((900, 600)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    on, off = _both_paths(lambda: ember.tensor(a) @ ember.tensor(b))
    err_on, err_off = np.abs(on - exact).max(), np.abs(off - exact).max()
    assert err_on < 1e-3 and err_on < 4 * err_off


@needs_mkl
def test_addmm_bias_shapes_and_gradients_on_mkl(mkl_switch):
    # a 2-d bias (full and one row) and a column bias that is not a row: all broadcast as torch
    a, at = _pair((300, 200), "float64", 4)
    b, bt = _pair((200, 900), "float64", 5)
    for shape in [(900,), (300, 900), (1, 900), (300, 1), ()]:
        c, ct = _pair(shape, "float64", 6)
        np.testing.assert_allclose(ember.addmm(c, a, b).numpy(), torch.addmm(ct, at, bt).numpy(), rtol=1e-12)
    # gradients through linear on the MKL route (wide output)
    x, xt = _pair((64, 96), "float64", 7)
    w, wt = _pair((600, 96), "float64", 8)
    bias, biast = _pair((600,), "float64", 9)
    for e, t in [(x, xt), (w, wt), (bias, biast)]:
        e.requires_grad_(True)
        t.requires_grad_(True)
    g = np.random.default_rng(1).standard_normal((64, 600))
    ember.nn.functional.linear(x, w, bias).backward(ember.tensor(g))
    torch.nn.functional.linear(xt, wt, biast).backward(torch.tensor(g))
    for e, t in [(x, xt), (w, wt), (bias, biast)]:
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


@needs_mkl
def test_switch_and_version(mkl_switch):
    assert "Math Kernel Library" in ember.backends.mkl.version()
    ember.backends.mkl.enabled = False
    assert not ember.backends.mkl.is_available() and ember.backends.mkl.enabled is False
    ember.backends.mkl.enabled = True
    assert ember.backends.mkl.is_available() and ember.backends.mkl.enabled is True


def test_environment_variable_keeps_mkl_unloaded():
    code = ("import ember, numpy as np\n"
            "a = ember.randn(512, 512); b = ember.randn(512, 512)\n"
            "r = (a @ b).numpy(); ref = a.numpy().astype('float64') @ b.numpy().astype('float64')\n"
            "assert np.abs(r - ref).max() < 1e-3\n"
            "print(ember.backends.mkl.is_available(), ember.backends.mkl.version())\n"
            "print(any('libmkl' in line for line in open('/proc/self/maps')))\n")
    env = dict(os.environ, EMBER_MKL="0")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "None", "False"]


def test_mkl_is_not_loaded_at_import():
    # loaded by the first product that wants it, never by `import ember` (import time)
    code = "import ember; print(any('libmkl' in line for line in open('/proc/self/maps')))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False"]


@pytest.mark.parametrize("on", [True, False])
def test_bad_input_raises_torch_errors_on_either_path(mkl_switch, on):
    ember.backends.mkl.enabled = on
    a, at = _pair((256, 128), "float32", 1)
    b, bt = _pair((128, 1024), "float32", 2)
    for shape in [(1000,), (255, 1024), (2, 256, 1024)]:
        c, ct = _pair(shape, "float32", 3)
        same_error(lambda: ember.addmm(c, a, b), lambda: torch.addmm(ct, at, bt))
    c64, ct64 = _pair((1024,), "float64", 3)
    same_error(lambda: ember.addmm(c64, a, b), lambda: torch.addmm(ct64, at, bt))
    b2, bt2 = _pair((127, 1024), "float32", 4)
    same_error(lambda: a @ b2, lambda: at @ bt2)
    same_error(lambda: ember.mm(a, b.double()), lambda: torch.mm(at, bt.double()))


@needs_mkl
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B", [1, 2, 5, 64])
def test_batched_products_on_mkl(mkl_switch, dtype, B):
    # the batch split over threads (one single-threaded product each) or, with fewer matrices than
    # threads, each product threaded: the same bits for any thread count, torch's values
    a, at = _pair((B, 128, 96), dtype, 1)
    b, bt = _pair((B, 128, 80), dtype, 2)
    y, yt = _pair((B, 80, 96), dtype, 3)  # as (B, 96, 80) with transposed matrices
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == "float32" else dict(rtol=1e-10, atol=1e-9)
    for e_fn, t_fn in [(lambda: ember.bmm(a, y.transpose(1, 2)), lambda: torch.bmm(at, yt.transpose(1, 2))),
                       (lambda: a.transpose(1, 2) @ b, lambda: at.transpose(1, 2) @ bt)]:
        on, off = _both_paths(e_fn)
        ref = t_fn().numpy()
        np.testing.assert_allclose(on, ref, **tol)
        np.testing.assert_allclose(off, ref, **tol)
        assert _same_bits_for_1_2_3_threads(e_fn)


@needs_mkl
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B,m,k,n", [(64, 128, 128, 128), (64, 128, 64, 128), (32, 64, 64, 64), (16, 96, 40, 72),
                                     (8, 1, 128, 2048), (9, 120, 128, 1)])
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt", "sliced"])
def test_batched_products_on_mkl_jit_kernels(mkl_switch, dtype, B, m, k, n, layout):
    # Note [MKL JIT GEMM]: small products of a batch on kernels made for their shape (whole, or in
    # row pieces), every layout BLAS reads; torch's values, the same bits for any thread count
    def operand(rows, cols, trans, seed):
        if layout == "sliced":  # every other matrix of a batch, each a corner of a bigger one
            big, bigt = _pair((2 * B, rows + 3, cols + 5), dtype, seed)
            return big[::2, :rows, 1:cols + 1], bigt[::2, :rows, 1:cols + 1]
        e, t = _pair((B, cols, rows) if trans else (B, rows, cols), dtype, seed)
        return (e.transpose(1, 2), t.transpose(1, 2)) if trans else (e, t)

    a, at = operand(m, k, layout[0] == "t", 1)
    b, bt = operand(k, n, layout[1] == "t", 2)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    on, off = _both_paths(lambda: ember.bmm(a, b))
    ref = torch.bmm(at, bt).numpy()
    np.testing.assert_allclose(on, ref, **tol)
    np.testing.assert_allclose(off, ref, **tol)
    assert _same_bits_for_1_2_3_threads(lambda: ember.bmm(a, b))
