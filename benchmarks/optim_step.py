"""optimizer.step() time, ember against PyTorch, side by side in one process.

Run from the repository root after building:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python3 benchmarks/optim_step.py
Parameter sets: ResNet-20's (CIFAR-10; 272k parameters in 65 tensors) and one 10M-element tensor.
torch is timed with its CPU default (foreach=None: a per-parameter loop), foreach=True and fused=True;
ember's step is one fused C++ call per group. Figures: best of N steps, in milliseconds.
"""
import sys

import numpy as np
import torch

import ember
import ember.optim

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from timing import best  # noqa: E402


def resnet20_shapes():
    shapes = [(16, 3, 3, 3), (16,), (16,)]
    cin = 16
    for cout in (16, 32, 64):
        for block in range(3):
            shapes += [(cout, cin if block == 0 else cout, 3, 3), (cout,), (cout,),
                       (cout, cout, 3, 3), (cout,), (cout,)]
            cin = cout
    return shapes + [(10, 64), (10,)]


def make(shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    tp = [torch.tensor(a, requires_grad=True) for a in arrays]
    ep = [ember.tensor(a).requires_grad_() for a in arrays]
    for p, g in zip(tp, grads):
        p.grad = torch.tensor(g) * 1e-3
    for p, g in zip(ep, grads):
        p.grad = ember.tensor(g) * 1e-3
    return tp, ep


def main():
    torch.set_num_threads(ember.get_num_threads())
    sets = [("resnet20", resnet20_shapes(), 200), ("one 10M tensor", [(10_000_000,)], 20)]
    opts = [("SGD(momentum=0.9, wd=5e-4)", "SGD", dict(lr=0.1, momentum=0.9, weight_decay=5e-4)),
            ("Adam", "Adam", dict(lr=1e-3)),
            ("AdamW(amsgrad)", "AdamW", dict(lr=1e-3, amsgrad=True))]
    print(f"threads: {ember.get_num_threads()}")
    print(f"{'params':16s} {'optimizer':28s} {'torch default':>13s} {'torch foreach':>13s} {'torch fused':>11s} "
          f"{'ember':>8s} {'ember/default':>13s} {'ember/best torch':>16s}")
    for set_name, shapes, reps in sets:
        n = sum(int(np.prod(s)) for s in shapes)
        for label, cls, kw in opts:
            times = {}
            for variant, extra in (("default", {}), ("foreach", dict(foreach=True)), ("fused", dict(fused=True))):
                tp, _ = make(shapes)
                o = getattr(torch.optim, cls)(tp, **kw, **extra)
                times[variant] = best(o.step, reps)
            _, ep = make(shapes)
            o = getattr(ember.optim, cls)(ep, **kw)
            e = best(o.step, reps)
            tbest = min(times.values())
            print(f"{set_name + f' ({n / 1e6:.2f}M)':16s} {label:28s} {times['default']:11.3f}ms "
                  f"{times['foreach']:11.3f}ms {times['fused']:9.3f}ms {e:6.3f}ms {e / times['default']:12.2f}x "
                  f"{e / tbest:15.2f}x")


if __name__ == "__main__":
    main()
