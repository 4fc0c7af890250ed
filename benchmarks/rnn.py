"""Recurrent layers (nn.LSTM / GRU / RNN) forward and forward+backward, ember vs torch side by side.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python benchmarks/rnn.py [--reps 7]

Each row: the best of `reps` calls after a warm-up (ms), torch and ember alternating call by call
so load on a shared machine hits both alike, and ember/torch. Both libraries get the same weights
and inputs. Forward runs under no_grad (inference); forward+backward sums the output. Both use
`--threads` threads (default: their default counts).
"""
import argparse

import torch

import ember
from timing import best_pair


# (layer, batch, steps, input size, hidden size, layers, bidirectional)
CASES = [
    ("LSTM", 16, 32, 64, 128, 1, False),
    ("LSTM", 1, 100, 32, 32, 1, False),
    ("LSTM", 32, 20, 64, 128, 1, True),
    ("LSTM", 8, 64, 256, 512, 1, False),
    ("LSTM", 64, 50, 128, 256, 2, False),
    ("GRU", 16, 32, 64, 128, 1, False),
    ("RNN", 16, 32, 64, 128, 1, False),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
        ember.set_num_threads(a.threads)
    print(f"threads torch={torch.get_num_threads()} ember={ember.get_num_threads()}")
    print(f"{'case':34s} {'pass':>9s} {'torch ms':>9s} {'ember ms':>9s} {'ember/torch':>11s}")
    for kind, B, T, I, H, L, bi in CASES:
        torch.manual_seed(0)
        tm = getattr(torch.nn, kind)(I, H, L, bidirectional=bi, batch_first=True)
        em = getattr(ember.nn, kind)(I, H, L, bidirectional=bi, batch_first=True)
        em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
        tx = torch.randn(B, T, I)
        ex = ember.from_numpy(tx.numpy().copy())

        def infer(lib, m, x):
            with lib.no_grad():
                m(x)

        def train(m, x):
            m.zero_grad()
            m(x)[0].sum().backward()

        name = f"{kind} B{B} T{T} {I}->{H} L{L}{' bi' if bi else ''}"
        tt, et = best_pair(lambda: infer(torch, tm, tx), lambda: infer(ember, em, ex), a.reps)
        print(f"{name:34s} {'fwd':>9s} {tt:9.2f} {et:9.2f} {et / tt:11.2f}")
        tt, et = best_pair(lambda: train(tm, tx), lambda: train(em, ex), a.reps)
        print(f"{name:34s} {'fwd+bwd':>9s} {tt:9.2f} {et:9.2f} {et / tt:11.2f}")


if __name__ == "__main__":
    main()
