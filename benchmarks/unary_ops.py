"""Elementwise unary kernels, ember vs torch on the same data: time per call and ember/torch ratio.

    PYTHONPATH=python python benchmarks/unary_ops.py [--n 16777216] [--reps 7] [--dtype float32]

Both libraries use their default thread counts; each row is the best of `reps` calls after a
warm-up, for a fresh output and with out= (F.* activations have no out=).
"""
import argparse

import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

from timing import best

OPS = {
    "exp": (torch.exp, ember.exp, True),
    "sigmoid": (torch.sigmoid, ember.sigmoid, True),
    "tanh": (torch.tanh, ember.tanh, True),
    "gelu": (TF.gelu, EF.gelu, False),
    "silu": (TF.silu, EF.silu, False),
    "log": (torch.log, ember.log, True),
    "sqrt": (torch.sqrt, ember.sqrt, True),
    "abs": (torch.abs, ember.abs, True),
    "relu": (torch.relu, ember.relu, False),
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=16 << 20)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--dtype", default="float32")
    p.add_argument("ops", nargs="*", default=list(OPS))
    a = p.parse_args()
    tx = torch.rand(a.n, dtype=getattr(torch, a.dtype)) * 6 - 3
    ex = ember.from_numpy(tx.numpy()) if hasattr(ember, "from_numpy") else None
    if ex is None:  # no NumPy interop yet: same values via arithmetic on an ember arange
        ex = (ember.arange(a.n, dtype=ember.float64) * 0.618033988749895 % 1.0 * 6 - 3).to(getattr(ember, a.dtype))
        tx = (torch.arange(a.n, dtype=torch.float64) * 0.618033988749895 % 1.0 * 6 - 3).to(getattr(torch, a.dtype))
    to, eo = torch.empty_like(tx), ember.empty(a.n, dtype=getattr(ember, a.dtype))
    print(f"{a.n} x {a.dtype}, threads torch={torch.get_num_threads()} ember={ember.get_num_threads()}")
    print(f"{'op':10s} {'torch ms':>9s} {'ember ms':>9s} {'ratio':>6s} | {'out= torch':>10s} {'ember':>7s} {'ratio':>6s}")
    for name in a.ops:
        tf, ef, has_out = OPS[name]
        t1, e1 = best(lambda: tf(tx), a.reps), best(lambda: ef(ex), a.reps)
        line = f"{name:10s} {t1:9.2f} {e1:9.2f} {e1 / t1:6.2f}"
        if has_out:
            t2, e2 = best(lambda: tf(tx, out=to), a.reps), best(lambda: ef(ex, out=eo), a.reps)
            line += f" | {t2:10.2f} {e2:7.2f} {e2 / t2:6.2f}"
        print(line)


if __name__ == "__main__":
    main()
