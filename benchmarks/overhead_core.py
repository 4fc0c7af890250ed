"""Per-op overhead of the tensor core (us per call on tiny tensors): the rows of the shared
overhead.py that need no nn/optim, same workloads and the same timing helper.

    python benchmarks/overhead_core.py --lib ember      (PYTHONPATH=python)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench"))
import common  # noqa: E402


def main():
    torch, args = common.setup(common.parser(__doc__))
    R = dict(repeats=7, min_repeat_s=0.1, quick=args.quick)

    def us(name, fn):
        def run():
            m = common.measure(fn, **R)
            return common.emit_timing("overhead." + name, m, m["median_s"] * 1e6, "us")
        return common.try_bench("overhead." + name, "us", run)

    a = torch.ones(1)
    b = torch.ones(1)
    c = torch.empty(1)
    us("add_1elem", lambda: a + b)
    us("add_out_1elem", lambda: torch.add(a, b, out=c))
    us("add_scalar_1elem", lambda: a + 1.5)
    us("relu_1elem", lambda: torch.relu(a))
    us("empty_1", lambda: torch.empty(1))
    us("zeros_1", lambda: torch.zeros(1))
    x = torch.arange(1000, dtype=torch.float32)
    us("index_0", lambda: x[0])
    us("item", lambda: a.item())
    us("view_reshape", lambda: x.reshape(10, 100))
    us("sum_1000", lambda: x.sum())
    w = torch.ones(16, 16)
    xi = torch.ones(1, 16)
    us("matmul_1x16x16", lambda: xi @ w)


if __name__ == "__main__":
    main()
