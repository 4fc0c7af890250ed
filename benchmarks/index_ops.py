"""Index kernels on large inputs (ms per call, best of reps), for compare.py:

    python benchmarks/compare.py index_ops --bench-dir benchmarks --rounds 3

Each line is JSON {"bench", "value", "unit"}; --lib picks torch or ember, which run on their
default thread counts.
"""
import argparse
import json

from timing import best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", default="ember")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--n", type=int, default=4096)
    a = p.parse_args()
    lib = __import__(a.lib)
    n = 1024 if a.quick else a.n
    reps = 3 if a.quick else 5
    g = lib.Generator().manual_seed(0)
    x = lib.rand(n, n, generator=g)
    idx2 = lib.randint(0, n, (n, n), generator=g)
    idx1 = lib.randint(0, n, (n,), generator=g)
    mask = x > 0.5
    src = lib.rand(n, n, generator=g)
    xg = x.clone().requires_grad_()
    ones = lib.ones(n, n)

    def fwd_bwd(f):  # forward + backward with a fresh gradient each call
        def run():
            xg.grad = None
            f().backward(ones)
        return run

    cases = {
        "gather_dim1": lambda: lib.gather(x, 1, idx2),
        "gather_dim0": lambda: lib.gather(x, 0, idx2),
        "index_select_dim0": lambda: lib.index_select(x, 0, idx1),
        "index_select_dim1": lambda: lib.index_select(x, 1, idx1),
        "scatter_add_dim1": lambda: x.scatter_add(1, idx2, src),
        "scatter_add_dim0": lambda: x.scatter_add(0, idx2, src),
        "index_add_dim0": lambda: x.index_add(0, idx1, src),
        "getitem_idx": lambda: x[idx1],
        "getitem_mask": lambda: x[mask],
        "setitem_mask": lambda: x.masked_fill(mask, 0.0),
        "index_put_acc": lambda: x.index_put((idx1,), src, accumulate=True),
        "gather_dim1_fwd_bwd": fwd_bwd(lambda: lib.gather(xg, 1, idx2)),
        "index_select_dim0_fwd_bwd": fwd_bwd(lambda: lib.index_select(xg, 0, idx1)),
        "index_select_dim1_fwd_bwd": fwd_bwd(lambda: lib.index_select(xg, 1, idx1)),
        "take_along_dim1_fwd_bwd": fwd_bwd(lambda: lib.take_along_dim(xg, idx2, 1)),
    }
    for name, fn in cases.items():
        print(json.dumps({"bench": f"index.{name}", "value": best(fn, reps), "unit": "ms"}), flush=True)


if __name__ == "__main__":
    main()
