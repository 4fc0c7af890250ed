"""all_reduce bandwidth, ember vs torch.distributed, both on Gloo, 2 processes on this machine.

Both process groups live in the same two processes; for every size the two libraries take turns
(the order alternating from round to round) and the median and the best of the rounds are
reported. float32 SUM. On a shared, loaded machine small messages are dominated by scheduling
delays (a woken thread may wait a timer tick for a core): read the large sizes and the best-round
columns first.

Usage:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python3 benchmarks/allreduce.py [--rounds 5]
    ... benchmarks/allreduce.py --fashion-mnist     # examples/fashion_mnist.py samples/s, 1 vs 2 processes
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import time

SIZES = [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fmt_size(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def worker(rank, eport, tport, rounds):
    from datetime import timedelta

    import torch
    import torch.distributed as tdist

    import ember
    import ember.distributed as edist

    edist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{eport}", rank=rank, world_size=2,
                             timeout=timedelta(seconds=120))
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{tport}", rank=rank, world_size=2,
                             timeout=timedelta(seconds=120))
    libs = {"ember": (edist, ember.ones), "torch": (tdist, torch.ones)}
    results = {}
    for size in SIZES:
        n = size // 4
        # About 0.05 s per measurement, at least 3 calls.
        iters = max(3, min(500, int(0.05 / max(size / 0.5e9, 100e-6))))
        times = {name: [] for name in libs}
        bufs = {name: ones(n) for name, (_, ones) in libs.items()}
        for name, (d, _) in libs.items():  # warm-up
            d.all_reduce(bufs[name])
        order = list(libs.items())
        for k in range(rounds):
            for name, (d, _) in (order if k % 2 == 0 else order[::-1]):
                d.barrier()
                t0 = time.perf_counter()
                for _ in range(iters):
                    d.all_reduce(bufs[name])
                times[name].append((time.perf_counter() - t0) / iters)
        results[size] = {name: (statistics.median(ts), min(ts)) for name, ts in times.items()}
    tdist.destroy_process_group()
    edist.destroy_process_group()
    if rank == 0:
        print(f"all_reduce float32 SUM, 2 processes, Gloo TCP over loopback, {rounds} interleaved rounds")
        print("| size | ember ms (median / best) | torch ms (median / best) | ember GB/s | torch GB/s "
              "| torch time / ember time (median / best) |")
        print("|---|---|---|---|---|---|")
        for size, r in results.items():
            (e, eb), (t, tb) = r["ember"], r["torch"]
            # Bandwidth of the median round; with 2 ranks nccl-tests' bus bandwidth is size / time.
            print(f"| {fmt_size(size)} | {e * 1e3:.3f} / {eb * 1e3:.3f} | {t * 1e3:.3f} / {tb * 1e3:.3f} "
                  f"| {size / e / 1e9:.2f} | {size / t / 1e9:.2f} | {t / e:.2f} / {tb / eb:.2f} |")


def fashion_mnist(rounds, limit):
    example = os.path.join(ROOT, "examples", "fashion_mnist.py")
    common = ["--epochs", "1", "--limit-train", str(limit), "--limit-test", "1000", "--no-progress", "--no-plot",
              "--workers", "1"]
    rows = {"1 process (2 threads)": [], "1 process (1 thread)": [], "2 processes (DDP, 1 thread each)": []}
    for k in range(rounds):
        for label in rows:
            args = common + ["--out", f"/tmp/ember_bench_fm_{k}"]
            if label.startswith("2"):
                args += ["--distributed", "--nproc", "2"]
            elif "1 thread" in label:
                args += ["--threads", "1"]
            out = subprocess.run([sys.executable, example, *args], capture_output=True, text=True, check=True).stdout
            rows[label].append(float(re.search(r"\((\d+) samples/s\)", out).group(1)))
    print(f"examples/fashion_mnist.py, 1 epoch of {limit} images, batch 128 (global), median of {rounds} rounds")
    print("| run | samples/s | rounds |")
    print("|---|---|---|")
    for label, v in rows.items():
        print(f"| {label} | {statistics.median(v):,.0f} | {', '.join(f'{x:,.0f}' for x in v)} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--fashion-mnist", action="store_true")
    p.add_argument("--limit-train", type=int, default=12800)
    p.add_argument("--worker", nargs=3, type=int, metavar=("RANK", "EMBER_PORT", "TORCH_PORT"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        worker(*a.worker, a.rounds)
        return
    if a.fashion_mnist:
        fashion_mnist(a.rounds, a.limit_train)
        return
    eport, tport = free_port(), free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, __file__, "--rounds", str(a.rounds), "--worker", str(r), str(eport),
                               str(tport)], env=env) for r in (0, 1)]
    codes = [q.wait() for q in procs]
    sys.exit(max(codes))


if __name__ == "__main__":
    main()
