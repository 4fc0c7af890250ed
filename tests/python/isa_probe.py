"""Runs a fixed set of kernels and prints their results as JSON, for test_isa.py, which runs it
once per kernel level (EMBER_CPU_CAPABILITY) and compares the outputs."""
import json
import math
import sys

import ember

out = {"capability": ember.backends.cpu.get_cpu_capability()}


def put(name, t):
    if isinstance(t, (list, tuple)):  # several results: each as its own entry
        for i, v in enumerate(t):
            put(f"{name}.{i}", v)
        return
    out[name] = [str(t.dtype), (ember.view_as_real(t) if t.is_complex() else t).tolist()]


n = 1037  # not a multiple of any vector width: tails run too
# inputs from Python's libm, not the kernels under test (a last-bit difference in float64 sin between
# levels moved fmod's results by more than the tolerance)
base = ember.tensor([math.sin(i * 0.731 - 300.0) * 40 for i in range(n)], dtype=ember.float64)
specials = ember.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-40, -1e-40, 88.5, -104.5, 1e30], dtype=ember.float64)
for fdt in ("float32", "float64", "float16", "bfloat16"):
    dt = getattr(ember, fdt)
    x = ember.cat([base, specials]).to(dt)
    y = ember.tensor([math.cos(i * 0.37 + 0.5) for i in range(x.numel())], dtype=ember.float64).to(dt) * 3
    xt = x[: 32 * 32].reshape(32, 32).t()  # non-contiguous
    for op in ("add", "sub", "mul", "div", "maximum", "minimum", "fmod", "atan2", "pow"):
        put(f"{op}_{fdt}", getattr(ember, op)(x, y))
    put(f"add_alpha_{fdt}", ember.add(x, y, alpha=0.5))
    put(f"div_floor_{fdt}", ember.div(x, y, rounding_mode="floor"))
    put(f"remainder_{fdt}", ember.remainder(x, y))
    put(f"add_scalar_{fdt}", x + 1.5)
    put(f"add_bcast_{fdt}", xt + y[:32])
    for op in ("lt", "eq", "ge"):
        put(f"{op}_{fdt}", getattr(ember, op)(x, y))
    for op in ("exp", "log", "tanh", "sigmoid", "erf", "sqrt", "abs", "neg", "sin", "expm1", "log1p", "relu", "floor",
               "isnan", "isfinite"):
        put(f"{op}_{fdt}", getattr(ember, op)(x))
        put(f"{op}_nc_{fdt}", getattr(ember, op)(xt))
    for op in ("gelu", "silu", "softplus", "elu"):
        put(f"{op}_{fdt}", getattr(ember.nn.functional, op)(x))
    put(f"sum_{fdt}", x[:n].sum())
    put(f"sum_dim0_{fdt}", xt.sum(dim=0))
    put(f"sum_dim1_{fdt}", xt.sum(dim=1))
    put(f"mean_{fdt}", x[:n].mean())
    put(f"amax_{fdt}", xt.amax(dim=1))
    # cpu/reductions.cpp: extremes with NaN, values and indices, products, norms, logsumexp
    put(f"amin_all_{fdt}", x.amin())
    put(f"amax_clean_{fdt}", x[:n].amax())
    put(f"max_dim_{fdt}", list(x[: 61 * 17].reshape(61, 17).max(dim=1)))
    put(f"argmin_{fdt}", x[:n].argmin())
    put(f"argmax_nc_{fdt}", xt.argmax(dim=0))
    put(f"prod_{fdt}", (x[:n] / 40 + 1).reshape(61, 17).prod(dim=1))
    put(f"nansum_{fdt}", x.nansum())
    for ord_ in (1, 2, 3.5, math.inf):
        put(f"norm{ord_}_{fdt}", ember.linalg.vector_norm(x[:n], ord_))
    put(f"logsumexp_{fdt}", x[:n].reshape(61, 17).logsumexp(dim=1))
    put(f"logsumexp_first_{fdt}", x[:n].reshape(61, 17).logsumexp(dim=0))
    put(f"all_any_{fdt}", [x.all(), (x > 30).any(dim=0), ember.count_nonzero(x > 0)])
    m = x[:n].reshape(61, 17)
    put(f"softmax_last_{fdt}", ember.softmax(m, dim=1))
    put(f"softmax_first_{fdt}", ember.softmax(m, dim=0))
    put(f"log_softmax_{fdt}", ember.log_softmax(m, dim=1))
    put(f"mask_{fdt}", x[x > 0.5])
    put(f"clamp_{fdt}", x.clamp(-3.0, 5.0))
    put(f"where_{fdt}", ember.where(x > y, x, y))

for idt in ("bool", "uint8", "int8", "int16", "int32", "int64"):
    dt = getattr(ember, idt)
    if idt == "bool":
        a = ember.arange(n) % 3 == 0
        b = ember.arange(n) % 5 < 2
        ops = ("add", "mul", "eq", "logical_xor", "bitwise_and", "bitwise_or", "maximum")
    else:
        lo = 0 if idt == "uint8" else -50
        a = (ember.arange(n) * 37 % 101 + lo).to(dt)
        b = (ember.arange(n) * 11 % 13 + 1).to(dt)
        ops = ("add", "sub", "mul", "floor_divide", "remainder", "maximum", "minimum", "bitwise_and", "bitwise_xor",
               "bitwise_left_shift", "bitwise_right_shift", "lt", "eq", "fmod")
    for op in ops:
        put(f"{op}_{idt}", getattr(ember, op)(a, b))
    if idt != "bool":
        put(f"abs_{idt}", (a if idt == "uint8" else -a).abs())
    put(f"sum_{idt}", a.sum())
    put(f"sum_dim_{idt}", a[: 32 * 32].reshape(32, 32).sum(dim=0))
    put(f"mask_{idt}", a[b.bool()] if idt != "bool" else a[b])
    put(f"amax_{idt}", a.amax() if idt != "bool" else a.any())

for cdt in ("complex64", "complex128"):
    z = ember.complex(base[:64], base[64:128]).to(getattr(ember, cdt))
    w = ember.complex(base[128:192], base[:64]).to(getattr(ember, cdt)) / 7
    for op in ("add", "mul", "div"):
        put(f"{op}_{cdt}", getattr(ember, op)(z, w))
    for op in ("exp", "abs", "sqrt", "tanh", "conj_physical", "angle"):
        put(f"{op}_{cdt}", getattr(ember, op)(z / 10))

# 16-bit float conversions (cpu/convert_kernels.cpp: F16C at the AVX2/AVX-512 levels), as bits
halves = ember.arange(-32768, 32768, dtype=ember.int32).to(ember.int16).view(ember.float16)
floats = (ember.arange(200003, dtype=ember.int64) * 21475 - 2**31).to(ember.int32).view(ember.float32)
for name, src, dst in (("h2f", halves, ember.float32), ("h2d", halves, ember.float64), ("h2b", halves, ember.bfloat16),
                       ("f2h", floats, ember.float16), ("f2b", floats, ember.bfloat16),
                       ("d2h", floats.double(), ember.float16), ("b2h", halves.to(ember.bfloat16), ember.float16)):
    y = src.to(dst)
    put(f"convert_{name}", y.view({2: ember.int16, 4: ember.int32, 8: ember.int64}[y.element_size()]))

ember.manual_seed(1234)
put("rand", ember.rand(1000))
put("randn", ember.randn(1001))
put("randn64", ember.randn(999, dtype=ember.float64))
put("randint", ember.randint(0, 1000, (1000,)))
put("bernoulli", ember.bernoulli(ember.full((1000,), 0.3)))

json.dump(out, sys.stdout)
