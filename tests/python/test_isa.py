"""Kernel levels (Note [Multi-ISA kernels] in csrc/ember/cpu/isa.h): every level the CPU supports
gives the same results, exactly for integers, bools, masks and random bits, and within float
rounding for floats (FMA contraction and vector tails change last bits only)."""
import json
import math
import os
import subprocess
import sys

import pytest

import ember

LEVELS = ["DEFAULT", "AVX2", "AVX512"]
HERE = os.path.dirname(os.path.abspath(__file__))


def supported_levels():
    best = ember._C._get_cpu_capability_supported()
    return LEVELS[: LEVELS.index(best) + 1]


def run_probe(level, extra_env=None):
    env = dict(os.environ, EMBER_CPU_CAPABILITY=level.lower(), **(extra_env or {}))
    r = subprocess.run([sys.executable, os.path.join(HERE, "isa_probe.py")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), r.stderr


# Relative tolerance per float dtype: a few units in the last place.
RTOL = {"float32": 4e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1.6e-2, "complex64": 4e-6,
        "complex128": 1e-14}


def compare(a, b, rtol, path):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, rtol, f"{path}[{i}]")
        return
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), f"{path}: {a} vs {b}"
        else:
            assert a == b or abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-300, f"{path}: {a} vs {b}"
        return
    assert a == b, f"{path}: {a} vs {b}"  # ints and bools: exact


@pytest.fixture(scope="module")
def results():
    return {level: run_probe(level)[0] for level in supported_levels()}


def test_forced_level_is_reported(results):
    for level, r in results.items():
        assert r["capability"] == level


def test_default_level_is_the_best_supported():
    assert ember.backends.cpu.get_cpu_capability() in LEVELS
    if "EMBER_CPU_CAPABILITY" not in os.environ:
        assert ember.backends.cpu.get_cpu_capability() == ember._C._get_cpu_capability_supported()


def test_levels_agree(results):
    levels = list(results)
    if len(levels) < 2:
        pytest.skip("this CPU supports only the baseline kernels")
    ref = results[levels[0]]
    for level in levels[1:]:
        got = results[level]
        assert got.keys() == ref.keys()
        for name in ref:
            if name == "capability":
                continue
            dt, want = ref[name]
            dt2, have = got[name]
            assert dt == dt2, name
            short = dt.split(".")[-1]
            exact = name in ("rand", "randint", "bernoulli") or short not in RTOL
            compare(have, want, 0.0 if exact else RTOL[short], f"{level}:{name}")


def test_level_above_the_cpu_is_clamped_with_a_warning():
    best = ember._C._get_cpu_capability_supported()
    if best == "AVX512":
        pytest.skip("no level above this CPU's")
    out, err = run_probe("AVX512")
    assert out["capability"] == best
    assert "not supported by this CPU" in err


def test_unknown_level_is_ignored_with_a_warning():
    out, err = run_probe("sse9")
    assert out["capability"] == ember._C._get_cpu_capability_supported()
    assert "ignoring EMBER_CPU_CAPABILITY" in err


def test_16_lane_float_math_gives_the_element_loops_floats():
    # Note [16-lane float math] (csrc/ember/cpu/unary_math.h): at the AVX-512 level contiguous
    # float32 runs of these ops go through explicit 16-lane code, strided ones element by element
    # through the float code every level compiles; both must give the same float for every input.
    # (At other levels both layouts run the same code, and this holds trivially.)
    import numpy as np
    F = ember.nn.functional
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.integers(0, 2**32, size=1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        np.linspace(-12, 12, 40001, dtype=np.float32),
                        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 0.625, -0.625, 1.0, -1.0,
                                  10.0, -10.0, 88.7, 89.0, -87.5, -103.9, -104.0, 28.28427, -28.28427],
                                 np.float32)])
    g = rng.standard_normal(x.size).astype(np.float32)
    dense = ember.from_numpy(x)
    strided = ember.from_numpy(np.stack([x, x], 1))[:, 0]
    g_dense, g_strided = ember.from_numpy(g), ember.from_numpy(np.stack([g, g], 1))[:, 0]
    assert dense.is_contiguous() and not strided.is_contiguous()

    def gelu_grad(t, gt):
        t = t.detach().requires_grad_()
        F.gelu(t).backward(gt)
        return t.grad

    def same_bits(a, b):
        a, b = a.contiguous().numpy(), b.contiguous().numpy()
        return int(((a.view(np.uint32) != b.view(np.uint32)) & ~(np.isnan(a) & np.isnan(b))).sum())

    for name, f in [("exp", ember.exp), ("sigmoid", ember.sigmoid), ("silu", F.silu), ("gelu", F.gelu),
                    ("tanh", ember.tanh), ("erf", ember.erf)]:
        assert same_bits(f(dense), f(strided)) == 0, name
    assert same_bits(gelu_grad(dense, g_dense), gelu_grad(strided, g_strided)) == 0, "gelu backward"

    def silu_grad(t, gt):
        t = t.detach().requires_grad_()
        F.silu(t).backward(gt)
        return t.grad

    assert same_bits(silu_grad(dense, g_dense), silu_grad(strided, g_strided)) == 0, "silu backward"
    # a broadcast incoming gradient (a sum's), beside contiguous inputs and through the element loop
    g_one = ember.tensor(0.75).expand(dense.shape)
    assert same_bits(silu_grad(dense, g_one), silu_grad(strided, g_one)) == 0, "silu backward, broadcast gradient"
    assert same_bits(gelu_grad(dense, g_one), gelu_grad(strided, g_one)) == 0, "gelu backward, broadcast gradient"


def test_16_lane_bfloat16_math_gives_the_element_loops_bits():
    # The same paths over bfloat16 (loaded as floats, rounded back as BFloat16(float) rounds):
    # every one of the 65536 inputs, contiguous against strided.
    import numpy as np
    F = ember.nn.functional
    x = (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)
    g = np.random.default_rng(0).standard_normal(65536).astype(np.float32)
    dense, strided = ember.from_numpy(x).bfloat16(), ember.from_numpy(np.stack([x, x], 1)).bfloat16()[:, 0]
    g_dense, g_strided = ember.from_numpy(g).bfloat16(), ember.from_numpy(np.stack([g, g], 1)).bfloat16()[:, 0]
    assert not strided.is_contiguous()

    def bits(t):
        return t.contiguous().view(ember.int16).numpy()

    def gelu_grad(t, gt):
        t = t.detach().requires_grad_()
        F.gelu(t).backward(gt)
        return t.grad

    for name, f in [("exp", ember.exp), ("sigmoid", ember.sigmoid), ("silu", F.silu), ("gelu", F.gelu),
                    ("tanh", ember.tanh), ("erf", ember.erf)]:
        assert (bits(f(dense)) == bits(f(strided))).all(), name
    assert (bits(gelu_grad(dense, g_dense)) == bits(gelu_grad(strided, g_strided))).all(), "gelu backward"

    def silu_grad(t, gt):
        t = t.detach().requires_grad_()
        F.silu(t).backward(gt)
        return t.grad

    assert (bits(silu_grad(dense, g_dense)) == bits(silu_grad(strided, g_strided))).all(), "silu backward"


def test_16_lane_float16_conversions_give_the_element_loops_bits():
    # Contiguous float16 runs convert 16 at a time at the AVX-512 level (vcvtph2ps / vcvtps2ph with
    # NaNs made sign | 0x7e00, as Half::from_float): every one of the 65536 inputs, NaNs and
    # subnormals included, contiguous against strided (the element loop), through ops that keep,
    # round and make NaNs.
    import numpy as np
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    x = ember.from_numpy(bits.view(np.int16).copy()).view(ember.float16)
    strided = ember.from_numpy(np.stack([bits, bits], 1).view(np.int16).copy()).view(ember.float16)[:, 0]
    assert not strided.is_contiguous()

    def as_bits(t):
        return t.contiguous().view(ember.int16).numpy()

    def same(a, b):  # bit for bit, a NaN's sign aside (as the float32 test: the 16-lane forms may flip it)
        a, b = as_bits(a), as_bits(b)
        nan_a, nan_b = ((a & 0x7c00) == 0x7c00) & ((a & 0x3ff) != 0), ((b & 0x7c00) == 0x7c00) & ((b & 0x3ff) != 0)
        return bool(((a == b) | (nan_a & nan_b)).all())

    F = ember.nn.functional

    def gelu_grad(t):
        t = t.detach().requires_grad_()
        F.gelu(t).backward(ember.ones_like(t))
        return t.grad

    for name, f in [("float", lambda t: t.float().half()), ("exp", ember.exp), ("sigmoid", ember.sigmoid),
                    ("relu", ember.relu), ("x*3", lambda t: t * 3), ("x-x", lambda t: t - t.flip(0)),
                    ("sqrt", ember.sqrt), ("silu", F.silu), ("gelu", F.gelu), ("tanh", ember.tanh),
                    ("erf", ember.erf), ("gelu backward", gelu_grad), ("3-x", lambda t: 3 - t),
                    ("x/(x+1)", lambda t: t / (t + 1)), ("clamp", lambda t: t.clamp(-2, 3))]:
        assert same(f(x), f(strided)), name
        # runs whose length is no multiple of 8 or 16 (the register chunks' tails)
        assert same(f(x[3:65530]), f(strided[3:65530])), name
    # the float -> half rounding on its own: ties, overflow to inf, subnormals, NaN payloads
    f32 = np.concatenate([(np.arange(1 << 20, dtype=np.uint32) * 4093).view(np.float32),
                          np.array([65520.0, 65519.99, 2.0**-25, 2.0**-24 * 1.5, np.nan, -np.nan], np.float32)])
    f32 = np.concatenate([f32, np.array([0x7f800001, 0xffc00123], np.uint32).view(np.float32)])
    dense = ember.from_numpy(f32).half()
    loop = ember.from_numpy(np.stack([f32, f32], 1))[:, 0].half()
    assert (as_bits(dense) == as_bits(loop)).all()
