"""Interop timings, ember against PyTorch: tensor() from Python data, from_numpy, numpy(), DLPack.

Run from the repository root after building:  PYTHONPATH=python python benchmarks/bench_interop.py
Each figure is the best of 5 repeats of timeit's autorange, in microseconds per call.
"""

import timeit

import numpy as np
import torch

import ember


def best_us(fn, repeats=5):
    number, _ = timeit.Timer(fn).autorange()
    return min(timeit.Timer(fn).repeat(repeats, number)) / number * 1e6


def main():
    floats = [[float(i * 100 + j) for j in range(100)] for i in range(1000)]
    ints = [[i * 100 + j for j in range(100)] for i in range(1000)]
    small = [[1., 2.], [3., 4.]]
    big = np.ones(10_000_000, dtype=np.float32)
    tt, et = torch.ones(10), ember.ones(10)
    cases = [
        ("tensor(1000x100 float list)", lambda: torch.tensor(floats), lambda: ember.tensor(floats)),
        ("tensor(1000x100 int list)", lambda: torch.tensor(ints), lambda: ember.tensor(ints)),
        ("tensor(1000x100, dtype=float64)", lambda: torch.tensor(floats, dtype=torch.float64),
         lambda: ember.tensor(floats, dtype=ember.float64)),
        ("tensor([[1.,2.],[3.,4.]])", lambda: torch.tensor(small), lambda: ember.tensor(small)),
        ("tensor(1.5)", lambda: torch.tensor(1.5), lambda: ember.tensor(1.5)),
        ("from_numpy(10M float32)", lambda: torch.from_numpy(big), lambda: ember.from_numpy(big)),
        ("t.numpy()", lambda: tt.numpy(), lambda: et.numpy()),
        ("np.asarray(t)", lambda: np.asarray(tt), lambda: np.asarray(et)),
        ("from_dlpack(ndarray)", lambda: torch.from_dlpack(big), lambda: ember.from_dlpack(big)),
    ]
    print(f"{'case':34s} {'torch us':>10s} {'ember us':>10s} {'torch/ember':>12s}")
    for name, ft, fe in cases:
        t, e = best_us(ft), best_us(fe)
        print(f"{name:34s} {t:10.2f} {e:10.2f} {t / e:11.1f}x")


if __name__ == "__main__":
    main()
