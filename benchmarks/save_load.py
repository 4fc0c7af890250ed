"""ember.save / ember.load against torch.save / torch.load on a 100 MB state dict.

Run from the repository root after building:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python3 benchmarks/save_load.py \
        [--rounds 3] [--baseline REV]
--baseline REV adds a third column: python/ember/serialization.py as it was at git revision REV,
run against the current build (e.g. the revision before the archive moved to C++, when Python's
zipfile wrote and read it).

Every measurement runs in a fresh subprocess (so peak RSS is that operation's own), and the
rounds interleave the libraries. Time: best over rounds of each child's best of 3; peak memory:
the child's max RSS minus its RSS before the operation (median over rounds). save writes a path
(ember: temporary file, fsync, rename; torch: in place, no fsync); load reads every tensor;
load(mmap=True) maps the file and touches one element per tensor.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import importlib.util, json, resource, sys, time
lib, op, path = sys.argv[1], sys.argv[2], sys.argv[3]
import numpy as np
if lib == "torch":
    import torch as mod
    from_numpy = mod.from_numpy
else:
    import ember
    from_numpy = ember.from_numpy
    if lib == "ember":
        mod = ember
    else:   # a serialization.py from another revision, run against this build
        spec = importlib.util.spec_from_file_location("ember_baseline_serialization", lib)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
sd = None
if op == "save":
    rng = np.random.default_rng(0)
    # ResNet-ish: 160 tensors, 25M float32 = 100 MB
    sd = {f"layer{i}.weight": from_numpy(rng.standard_normal(156_250).astype(np.float32)) for i in range(160)}
before = rss_mb()
times = []
for _ in range(3):
    t = time.perf_counter()
    if op == "save":
        mod.save(sd, path)
    elif op == "load":
        out = mod.load(path)
    else:
        out = mod.load(path, mmap=True)
        s = 0.0
        for v in out.values():
            s += float(v[0])
    times.append(time.perf_counter() - t)
    out = None
print(json.dumps({"ms": min(times) * 1e3, "peak_extra_mb": peak_mb() - before}))
"""


def run(lib, op, path):
    r = subprocess.run([sys.executable, "-c", CHILD, lib, op, path], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", help="git revision whose python/ember/serialization.py is the third column")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        libs = {"torch": "torch", "ember": "ember"}
        if args.baseline:
            src = subprocess.run(["git", "show", f"{args.baseline}:python/ember/serialization.py"],
                                 capture_output=True, text=True, check=True).stdout
            base = os.path.join(d, "baseline_serialization.py")
            with open(base, "w") as f:
                f.write(src)
            libs[f"ember@{args.baseline}"] = base
        ops = {"save": "save", "load": "load", "load(mmap=True)": "mmap"}
        res = {(lib, op): [] for lib in libs for op in ops}
        for _ in range(args.rounds):
            for op, key in ops.items():          # save first: the loads read what it wrote
                for i, (lib, spec) in enumerate(libs.items()):
                    res[(lib, op)].append(run(spec, key, os.path.join(d, f"lib{i}.pt")))
        names = list(libs)
        head = f"{'operation':17s}" + "".join(f"{n + ' ms':>16s}" for n in names) + f"{'ember/torch':>12s}"
        if args.baseline:
            head += f"{'ember/base':>11s}"
        head += "".join(f"{n + ' peak MB':>21s}" for n in names)
        print(head)
        for op in ops:
            ms = {n: min(r["ms"] for r in res[(n, op)]) for n in names}
            peak = {n: statistics.median(r["peak_extra_mb"] for r in res[(n, op)]) for n in names}
            line = f"{op:17s}" + "".join(f"{ms[n]:16.1f}" for n in names) + f"{ms['ember'] / ms['torch']:11.2f}x"
            if args.baseline:
                line += f"{ms['ember'] / ms[names[2]]:10.2f}x"
            line += "".join(f"{peak[n]:21.1f}" for n in names)
            print(line)


if __name__ == "__main__":
    main()
