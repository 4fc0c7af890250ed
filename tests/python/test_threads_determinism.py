"""use_deterministic_algorithms / deterministic debug mode / interop threads against torch 2.13,
and Note [Determinism on CPU]: a training step is bit-identical with 1 and 2 threads."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_determinism():
    yield
    ember.use_deterministic_algorithms(False)
    torch.use_deterministic_algorithms(False)


def test_deterministic_flags_match_torch(restore_determinism):
    for lib in (torch, ember):
        assert lib.are_deterministic_algorithms_enabled() is False
    steps = [lambda m: m.use_deterministic_algorithms(True, warn_only=True),
             lambda m: m.set_deterministic_debug_mode("error"),
             lambda m: m.set_deterministic_debug_mode(1),
             lambda m: m.use_deterministic_algorithms(False),
             lambda m: m.set_deterministic_debug_mode("warn")]
    for step in steps:
        got = []
        for lib in (torch, ember):
            step(lib)
            got.append((lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
                        lib.get_deterministic_debug_mode()))
        assert got[0] == got[1]


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.use_deterministic_algorithms(1), TypeError),
    (lambda m: m.use_deterministic_algorithms(True, warn_only=None), TypeError),
    (lambda m: m.set_deterministic_debug_mode("loud"), RuntimeError),
    (lambda m: m.set_deterministic_debug_mode(3), RuntimeError),
    (lambda m: m.set_deterministic_debug_mode(1.0), TypeError),
])
def test_deterministic_errors_match_torch(call, exc, restore_determinism):
    for lib in (torch, ember):
        with pytest.raises(exc):
            call(lib)


def test_interop_threads_once_like_torch():
    # set_num_interop_threads may be called once per process: run it in a fresh interpreter
    code = textwrap.dedent("""
        import sys, ember
        default = ember.get_num_interop_threads()
        assert default >= 1
        ember.set_num_interop_threads(3)
        assert ember.get_num_interop_threads() == 3
        try:
            ember.set_num_interop_threads(2)
        except RuntimeError as e:
            assert "cannot set number of interop threads" in str(e)
        else:
            sys.exit("second call did not raise")
        for bad, exc in ((0, RuntimeError), ("2", TypeError)):
            try:
                ember.set_num_interop_threads(bad)
            except exc:
                pass
            else:
                sys.exit(f"{bad!r} did not raise {exc.__name__}")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def _train_steps(threads):
    ember.set_num_threads(threads)
    ember.manual_seed(0)
    nn = ember.nn
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((24, 3, 16, 16)).astype("float32"))
    y = ember.tensor(rng.integers(0, 10, 24))
    for _ in range(3):
        opt.zero_grad()
        ember.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def test_training_bit_identical_for_one_and_two_threads():
    n = ember.get_num_threads()
    try:
        one, two = _train_steps(1), _train_steps(2)
    finally:
        ember.set_num_threads(n)
    for a, b in zip(one, two):
        assert (a == b).all()


@pytest.mark.parametrize("m,k,n", [(512, 256, 768), (16, 50000, 16), (64, 30000, 64), (1, 8192, 512)])
def test_float32_matmul_bit_identical_for_any_thread_count(m, k, n):
    # Note [float32 matmul on oneDNN]: row-major left operands, right ones either way
    rng = np.random.default_rng(0)
    a = ember.tensor(rng.standard_normal((m, k)).astype("float32"))
    b = ember.tensor(rng.standard_normal((k, n)).astype("float32"))
    threads = ember.get_num_threads()
    try:
        for rhs in (b, b.t().contiguous().t()):
            results = []
            for t in (1, 2, 3, 4):
                ember.set_num_threads(t)
                results.append((a @ rhs).numpy())
            assert all(np.array_equal(results[0], r) for r in results[1:])
    finally:
        ember.set_num_threads(threads)


# Note [Long-row reductions]: long rows are reduced in pieces fixed by their length (these sums
# differed in the last bits between 1, 2, 3 and 4 threads when the pieces followed the count)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("shape", [(2318211,), (3, 400001), (40, 140000)])
def test_long_row_reductions_bit_identical_for_any_thread_count(dtype, shape):
    rng = np.random.default_rng(1)
    x = ember.tensor((rng.standard_normal(shape) * 100).astype(dtype))
    ops = [lambda t: t.sum(), lambda t: t.sum(-1), lambda t: t.nansum(-1), lambda t: t.amax(-1)]
    if dtype != "int64":
        ops += [lambda t: t.mean(-1), lambda t: (1 + t * 1e-6).prod(-1), lambda t: t.norm(dim=-1)]
    if dtype in ("float32", "float64"):
        ops += [lambda t: t.var(-1), lambda t: t.std(), lambda t: t.logsumexp(-1)]
    threads = ember.get_num_threads()
    try:
        for op in ops:
            results = []
            for t in (1, 2, 3, 4):
                ember.set_num_threads(t)
                results.append(op(x).double().numpy())
            assert all(np.array_equal(results[0], r) for r in results[1:])
    finally:
        ember.set_num_threads(threads)


# Note [Deterministic GEMM threading]: products on OpenBLAS (transposed left operands, float64,
# and every float32 one on CPUs without AVX-512) are cut into bands fixed by the shape.
_GEMM_CASES = textwrap.dedent("""
    import numpy as np, ember
    rng = np.random.default_rng(0)
    def t(*s, dt="float32"):
        return ember.tensor(rng.standard_normal(s).astype(dt))
    cases = [lambda a=t(2048, 768), b=t(2048, 256): a.t() @ b,          # a Linear's weight gradient
             lambda a=t(512, 256), b=t(256, 768): a @ b,
             lambda a=t(300, 700, dt="float64"), b=t(700, 900, dt="float64"): a @ b,
             lambda a=t(16, 50000), b=t(50000, 16): a @ b,
             lambda a=t(4, 96, 64), b=t(4, 64, 1200): ember.bmm(a, b),
             # MKL's batch GEMM: batches of small products, one operand column-major, float64
             lambda a=t(64, 128, 128), b=t(64, 128, 128): ember.bmm(a, b),
             lambda a=t(48, 64, 96), b=t(48, 128, 96): ember.bmm(a, b.transpose(1, 2)),
             lambda a=t(16, 96, 80, dt="float64"), b=t(16, 80, 120, dt="float64"): ember.bmm(a, b),
             # Note [MKL JIT GEMM]: attention's products on kernels made for their shape
             lambda a=t(64, 128, 64), b=t(64, 64, 128): ember.bmm(a, b),
             lambda a=t(64, 128, 128), b=t(64, 64, 128): ember.bmm(a, b.transpose(1, 2)),
             lambda a=t(32, 64, 64, dt="float64"), b=t(32, 64, 64, dt="float64"): ember.bmm(a, b),
             # fused attention: causal blocks, one entry (the products then on every thread), several
             lambda q=t(1, 200, 32), k=t(1, 200, 32): ember.nn.functional.scaled_dot_product_attention(
                 q, k, k, is_causal=True),
             lambda q=t(6, 130, 64), k=t(6, 140, 64): ember.nn.functional.scaled_dot_product_attention(q, k, k),
             # single products in JIT row pieces spread over the threads
             lambda a=t(100, 100), b=t(100, 100): a @ b,
             lambda a=t(256, 128), b=t(256, 128): a.t() @ b,
             lambda a=t(256, 256), b=t(64, 256): a @ b.t(),
             lambda a=t(128, 128, dt="float64"), b=t(128, 128, dt="float64"): a @ b,
             # transposed left operands, float32: one-thread oneDNN pieces with AVX-512
             lambda a=t(2048, 1024), b=t(2048, 256): a.t() @ b,
             lambda a=t(30000, 64), b=t(30000, 48): a.t() @ b,                # long k
             lambda a=t(64, 128, 128), b=t(64, 128, 64): a.transpose(1, 2) @ b,  # attention's backward
             lambda a=t(7, 128, 96), b=t(7, 128, 80): a.transpose(1, 2) @ b,
             # Note [MKL GEMM]: addmm narrow (oneDNN's fused bias) and wide (MKL), float64, long k
             lambda c=t(256), a=t(1024, 512), b=t(512, 256): ember.addmm(c, a, b),
             lambda c=t(1024), a=t(1024, 256), b=t(256, 1024): ember.addmm(c, a, b),
             lambda c=t(300, 900, dt="float64"), a=t(300, 700, dt="float64"), b=t(700, 900, dt="float64"):
                 ember.addmm(c, a, b),
             lambda a=t(40000, 96, dt="float64"), b=t(40000, 64, dt="float64"): a.t() @ b]
    bad = []
    for i, f in enumerate(cases):
        outs = []
        for n in (1, 2, 3, 4, 8):
            ember.set_num_threads(n)
            outs.append(f().numpy())
        if not all(np.array_equal(outs[0], o) for o in outs[1:]):
            bad.append(i)
    print("differ:", bad)
""")


@pytest.mark.parametrize("mkl", ["mkl", "no-mkl"])
@pytest.mark.parametrize("kernels", ["native", "avx2"])
def test_gemm_bit_identical_for_any_thread_count(kernels, mkl):
    import os
    env = dict(os.environ)
    if mkl == "no-mkl":  # oneDNN and OpenBLAS run every product
        env["EMBER_MKL"] = "0"
    elif not ember.backends.mkl.is_available():
        pytest.skip("MKL is not installed (pip install mkl) or has no strict-CNR branch on this CPU")
    if kernels == "avx2":  # an AVX2-only CPU: oneDNN's AVX2 kernels, OpenBLAS's Haswell ones
        if ember.backends.cpu.get_cpu_capability() == "DEFAULT":
            pytest.skip("the CPU has no AVX2")
        env.update(EMBER_CPU_CAPABILITY="avx2", OPENBLAS_CORETYPE="HASWELL")
    r = subprocess.run([sys.executable, "-c", _GEMM_CASES], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "differ: []" in r.stdout, r.stdout
