"""Losses and normalization forward+backward, ember vs torch side by side on the same data.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python benchmarks/nn_norm.py [--reps 7]

Each row: the best of `reps` forward+backward steps after a warm-up (ms), and ember/torch. The
two libraries alternate step by step, so load on a shared machine hits both alike. Both use
`--threads` threads (default: their default counts).
"""
import argparse

import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from timing import best_pair



def e_(t, rg=True):
    x = ember.from_numpy(t.detach().numpy().copy())
    return x.requires_grad_() if rg and t.is_floating_point() else x


def cases():
    g = torch.Generator().manual_seed(0)
    logits, tgt = torch.randn(512, 1000, generator=g), torch.randint(0, 1000, (512,), generator=g)
    seg, seg_t = torch.randn(8, 21, 64, 64, generator=g), torch.randint(0, 21, (8, 64, 64), generator=g)
    bn_x = torch.randn(32, 64, 56, 56, generator=g)
    bn_w, bn_b = torch.rand(64, generator=g) + 0.5, torch.randn(64, generator=g)
    ln_x = torch.randn(16, 128, 256, generator=g)
    ln_w, ln_b = torch.rand(256, generator=g) + 0.5, torch.randn(256, generator=g)
    return [
        ("cross_entropy 512x1000", lambda F, x, t: F.cross_entropy(x, t), (logits, tgt)),
        ("cross_entropy ls=0.1 512x1000", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.1), (logits, tgt)),
        ("cross_entropy 8x21x64x64", lambda F, x, t: F.cross_entropy(x, t), (seg, seg_t)),
        ("batch_norm train 32x64x56x56", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True).sum(),
         (bn_x, bn_w, bn_b)),
        ("layer_norm 16x128x256", lambda F, x, w, b: F.layer_norm(x, (256,), w, b).sum(), (ln_x, ln_w, ln_b)),
    ]


def step(F, fn, args):
    for a in args:
        if a.requires_grad:
            a.grad = None
    fn(F, *args).backward()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
        ember.set_num_threads(a.threads)
    print(f"threads torch={torch.get_num_threads()} ember={ember.get_num_threads()}")
    print(f"{'forward+backward':32s} {'torch ms':>9s} {'ember ms':>9s} {'ember/torch':>11s}")
    for name, fn, targs in cases():
        ta = [t.clone().requires_grad_(t.is_floating_point()) for t in targs]
        ea = [e_(t) for t in targs]
        tt, et = best_pair(lambda: step(TF, fn, ta), lambda: step(EF, fn, ea), a.reps)
        print(f"{name:32s} {tt:9.2f} {et:9.2f} {et / tt:11.2f}")


if __name__ == "__main__":
    main()
