"""Reductions, softmax, scans and sorting: ember vs torch on the same machine and thread count.

    PYTHONPATH=python python benchmarks/bench_reduce.py [--threads 2] [--rounds 3] [--quick]

Each library runs in its own process (two OpenMP runtimes in one process would spin against
each other), alternating torch, ember, torch, ... per round; the table gives the median over
rounds of each run's median time and the ratio ember/torch (lower is better for ember).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(fn, repeats=7, min_s=0.2):
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_s:
            break
        n *= 2
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def cases(lib, quick):
    big = lib.randn(1 << 22 if quick else 1 << 24)
    m = lib.randn(1024 if quick else 4096, 4096)
    small = lib.randn(256, 1000)
    return [
        ("sum 16M", lambda: big.sum()),
        ("sum 4096x4096 dim=-1", lambda: m.sum(-1)),
        ("sum 4096x4096 dim=0", lambda: m.sum(0)),
        ("amax 4096x4096 dim=-1", lambda: m.amax(-1)),
        ("max 4096x4096 dim=-1 (values, indices)", lambda: m.max(-1)),
        ("argmax 4096x4096 dim=-1", lambda: m.argmax(-1)),
        ("max 16M", lambda: big.max()),
        ("softmax 4096x4096 dim=-1", lambda: lib.softmax(m, dim=-1)),
        ("log_softmax 4096x4096 dim=-1", lambda: lib.log_softmax(m, dim=-1)),
        ("softmax 4096x4096 dim=0", lambda: lib.softmax(m, dim=0)),
        ("logsumexp 4096x4096 dim=-1", lambda: lib.logsumexp(m, dim=-1)),
        ("var 4096x4096 dim=-1", lambda: m.var(-1)),
        ("norm 16M", lambda: big.norm()),
        ("prod 4096x4096 dim=-1", lambda: m.prod(-1)),
        ("cumsum 4096x4096 dim=-1", lambda: m.cumsum(-1)),
        ("sort 256x1000", lambda: small.sort(-1)),
        ("topk 256x1000 k=10", lambda: small.topk(10)),
        ("median 256x1000 dim=-1", lambda: small.median(-1)),
    ]


def child(lib_name, threads, quick, only):
    import importlib
    lib = importlib.import_module(lib_name)
    lib.set_num_threads(threads)
    lib.manual_seed(0)
    for label, fn in cases(lib, quick):
        if only and only not in label:
            continue
        print(json.dumps({"bench": label, "s": measure(fn)}), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--child", default="")
    a = p.parse_args()
    if a.child:
        child(a.child, a.threads, a.quick, a.only)
        return
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    env["PYTHONPATH"] = os.path.join(os.path.dirname(HERE), "python") + os.pathsep + env.get("PYTHONPATH", "")
    runs = {"torch": {}, "ember": {}}
    for _ in range(a.rounds):
        for lib in ("torch", "ember"):
            cmd = [sys.executable, __file__, "--child", lib, "--threads", str(a.threads), "--only", a.only]
            if a.quick:
                cmd.append("--quick")
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                r = json.loads(line)
                runs[lib].setdefault(r["bench"], []).append(r["s"])
    print(f"threads={a.threads}, rounds={a.rounds}\n")
    print("| op | torch ms | ember ms | ember/torch |")
    print("|---|---|---|---|")
    for label, ts in runs["torch"].items():
        t, e = statistics.median(ts), statistics.median(runs["ember"][label])
        print(f"| {label} | {t * 1e3:.3f} | {e * 1e3:.3f} | {e / t:.2f}x |")


if __name__ == "__main__":
    main()
