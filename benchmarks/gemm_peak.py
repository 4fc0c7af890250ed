"""float32 GEMM as a fraction of the machine's FMA peak, both measured in the same moments.

On a shared host the clock and the neighbours' load move both figures by 20% from minute to
minute, so a peak taken once and GEMM figures taken later give a fraction that means little.
Here each round measures the peak (fma_peak.c: 512-bit FMA chains on an AVX-512 CPU, 256-bit
ones otherwise), then ember's and torch's mm at each size alternating call by call, and reports
the fractions of that round's peak, and the same for gemm.py's batched product (bmm of 64 128^3
matrices) as a throughput ratio ember / torch. Run as a user's machine runs:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python3 benchmarks/gemm_peak.py --rounds 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build_peak_tool(avx512):
    exe = os.path.join(tempfile.mkdtemp(prefix="ember_fma_peak_"), "fma_peak")
    if avx512:
        subprocess.run(["gcc", "-O2", "-mavx512f", "-fopenmp", os.path.join(HERE, "fma_peak.c"), "-o", exe], check=True)
    else:
        shared = os.path.join(HERE, "..", "..", "shared", "bench", "limits.c")
        subprocess.run(["gcc", "-O3", "-mavx2", "-mfma", "-fopenmp", shared, "-o", exe], check=True)
    return exe


def peak_gflops(exe, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([exe], env=env, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        rec = json.loads(line)
        if "peak_fma" in rec["bench"] and rec["threads"] == threads:
            return rec["value"]
    raise RuntimeError("no peak figure for %d threads in: %s" % (threads, out))


def best_gflops(fn, n, reps, batch=1):
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return 2.0 * batch * n ** 3 / best / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--sizes", default="1024,2048")
    args = ap.parse_args()
    import numpy as np
    import torch

    import ember
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    with open("/proc/cpuinfo") as f:
        avx512 = " avx512f" in f.read()
    exe = build_peak_tool(avx512)
    sizes = [int(s) for s in args.sizes.split(",")]
    data = {}
    for n in sizes:
        a, b = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
        data[n] = (torch.from_numpy(a), torch.from_numpy(b), ember.from_numpy(a), ember.from_numpy(b))
    fractions = {(lib, n): [] for lib in ("ember", "torch") for n in sizes}
    a3, b3 = np.random.rand(64, 128, 128).astype(np.float32), np.random.rand(64, 128, 128).astype(np.float32)
    bmm_args = {"ember": (ember.from_numpy(a3), ember.from_numpy(b3)), "torch": (torch.from_numpy(a3), torch.from_numpy(b3))}
    bmm_ratios = []
    for r in range(args.rounds):
        peak = peak_gflops(exe, args.threads)
        line = {"round": r, "peak_GFLOPs": round(peak, 1), "vector_bits": 512 if avx512 else 256}
        for n in sizes:
            ta, tb, ea, eb = data[n]
            reps = 10 if n <= 1024 else 4
            got = {}
            for _ in range(2):  # alternate the libraries
                got["ember"] = max(got.get("ember", 0), best_gflops(lambda: ember.mm(ea, eb), n, reps))
                got["torch"] = max(got.get("torch", 0), best_gflops(lambda: torch.mm(ta, tb), n, reps))
            for lib, g in got.items():
                fractions[(lib, n)].append(g / peak)
                line["%s_mm_%d_GFLOPs" % (lib, n)] = round(g, 1)
                line["%s_mm_%d_of_peak" % (lib, n)] = round(g / peak, 3)
        got = {}
        for _ in range(3):
            for lib, mod in (("ember", ember), ("torch", torch)):
                g = best_gflops(lambda: mod.bmm(*bmm_args[lib]), 128, 30, batch=64)
                got[lib] = max(got.get(lib, 0), g)
        for lib, g in got.items():
            line["%s_bmm_64x128_GFLOPs" % lib] = round(g, 1)
        bmm_ratios.append(got["ember"] / got["torch"])
        line["bmm_64x128_ember_over_torch"] = round(bmm_ratios[-1], 3)
        print(json.dumps(line), flush=True)
    summary = {"%s_mm_%d_of_peak_median" % k: round(statistics.median(v), 3) for k, v in fractions.items()}
    summary["bmm_64x128_ember_over_torch_median"] = round(statistics.median(bmm_ratios), 3)
    print(json.dumps(summary))


if __name__ == "__main__":
    sys.exit(main())
