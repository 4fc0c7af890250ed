"""Autograd overhead: one training step of a 3-layer MLP written with tensor ops only
(x @ W + b, relu, mean squared loss, backward, manual SGD under no_grad); 64 hidden, batch 8.

    python benchmarks/compare.py mlp_step --bench-dir benchmarks
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench"))
import common  # noqa: E402


def main():
    torch, args = common.setup(common.parser(__doc__))
    sizes = [(64, 64), (64, 64), (64, 10)]
    params = []
    for fan_in, fan_out in sizes:
        w = (torch.randn(fan_in, fan_out) * (1.0 / fan_in ** 0.5)).requires_grad_()
        b = torch.zeros(fan_out, requires_grad=True)
        params += [w, b]
    x = torch.randn(8, 64)
    y = torch.randn(8, 10)

    def forward():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i < len(params) - 2:
                h = h.relu()
        d = h - y
        return (d * d).mean()

    def step():
        loss = forward()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None

    m = common.measure(step, repeats=7, min_repeat_s=0.2, quick=args.quick)
    common.emit_timing("autograd.mlp3_h64_b8_tensor_ops_step", m, m["median_s"] * 1e6, "us")
    m = common.measure(forward, repeats=7, min_repeat_s=0.2, quick=args.quick)
    common.emit_timing("autograd.mlp3_h64_b8_forward_loss", m, m["median_s"] * 1e6, "us")


if __name__ == "__main__":
    main()
