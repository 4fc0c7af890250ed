"""Complex elementwise throughput for benchmarks/compare.py: add, mul, div, abs, exp on complex64.

    python benchmarks/compare.py complex_ops --bench-dir benchmarks --rounds 3

Prints one JSON line per op: the best of `reps` calls (ms) after a warm-up, fresh outputs.
"""
import argparse
import json

from timing import best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", default="ember")
    p.add_argument("--n", type=int, default=4 << 20)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    n = (1 << 18) if a.quick else a.n
    lib = __import__(a.lib)
    g = lib.Generator().manual_seed(0)
    x = lib.randn(n, dtype=lib.complex64, generator=g)
    y = lib.randn(n, dtype=lib.complex64, generator=g)
    ops = {"add": lambda: x + y, "mul": lambda: x * y, "div": lambda: x / y, "abs": lambda: x.abs(),
           "exp": lambda: x.exp()}
    for name, fn in ops.items():
        print(json.dumps({"bench": f"complex64_{name}_{n}", "value": best(fn, a.reps), "unit": "ms"}))


if __name__ == "__main__":
    main()
