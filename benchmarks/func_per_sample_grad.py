"""Per-sample gradients of a small MLP with vmap(grad(loss)): ember.func vs torch.func, one process.

The model is 784 -> 128 -> ReLU -> 10 with cross entropy, batch 64 (float32), called through
functional_call as in torch's per-sample-gradients tutorial. Both libraries run the same inputs
and take turns round by round; the median and best of the rounds' per-call times are reported,
with the gradients checked against each other first. Also reports the plain batched
forward+backward (one summed gradient) of each library for scale.

Usage:
    PYTHONPATH=python python3 benchmarks/func_per_sample_grad.py [--batch 64] [--rounds 7] [--threads 1]
"""
import argparse
import statistics
import time

import numpy as np


def setup(lib, batch, seed=0):
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(784, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10))
    shapes = {"0.weight": (128, 784), "0.bias": (128,), "2.weight": (10, 128), "2.bias": (10,)}
    params = {k: lib.tensor(rng.standard_normal(s).astype(np.float32) * 0.05) for k, s in shapes.items()}
    x = lib.tensor(rng.standard_normal((batch, 784)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, batch))

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))

    def batched_step():
        ps = {k: v.detach().requires_grad_() for k, v in params.items()}
        out = lib.func.functional_call(model, ps, (x,))
        lib.nn.functional.cross_entropy(out, y).backward()

    return (lambda: per_sample(params, x, y)), batched_step


def timeit(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    import ember
    import torch
    ember.set_num_threads(a.threads)
    torch.set_num_threads(a.threads)
    libs = {"ember": ember, "torch": torch}
    fns = {name: setup(lib, a.batch) for name, lib in libs.items()}
    ge, gt = fns["ember"][0](), fns["torch"][0]()
    for k in gt:
        err = np.abs(ge[k].numpy() - gt[k].detach().numpy()).max()
        assert ge[k].shape == tuple(gt[k].shape) and err < 1e-4, (k, err)
    times = {(n, w): [] for n in libs for w in (0, 1)}
    for r in range(a.rounds):
        order = list(libs) if r % 2 == 0 else list(reversed(list(libs)))
        for n in order:
            for w in (0, 1):
                times[(n, w)].append(timeit(fns[n][w], a.iters))
    print(f"per-sample gradients, MLP 784-128-10, batch {a.batch}, float32, {a.threads} thread(s), "
          f"{a.rounds} rounds x {a.iters} calls")
    print(f"{'':32}{'ember ms':>12}{'torch ms':>12}{'ember/torch':>14}")
    for w, label in ((0, "vmap(grad) median"), (1, "batched fwd+bwd median")):
        e, t = statistics.median(times[("ember", w)]), statistics.median(times[("torch", w)])
        print(f"{label:32}{e * 1e3:12.3f}{t * 1e3:12.3f}{e / t:14.2f}")
    e, t = min(times[("ember", 0)]), min(times[("torch", 0)])
    print(f"{'vmap(grad) best':32}{e * 1e3:12.3f}{t * 1e3:12.3f}{e / t:14.2f}")


if __name__ == "__main__":
    main()
