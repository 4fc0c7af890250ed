"""ember.save / ember.load against torch.save / torch.load on a 100 MB state dict.

Run from the repository root after building:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python3 benchmarks/save_load.py
Each measurement runs in a fresh subprocess (so peak RSS is that operation's own): time is the
best of 3, peak memory is the child's max RSS minus its RSS before the operation.
"""
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
lib, op, path = sys.argv[1], sys.argv[2], sys.argv[3]
import numpy as np
mod = __import__(lib)
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
    sd = {f"layer{i}.weight": mod.from_numpy(rng.standard_normal(156_250).astype(np.float32)) for i in range(160)}
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
    with tempfile.TemporaryDirectory() as d:
        print(f"{'operation':24s} {'torch ms':>9s} {'ember ms':>9s} {'ember/torch':>11s} "
              f"{'torch peak MB':>13s} {'ember peak MB':>13s}")
        for op in ("save", "load", "load(mmap=True)"):
            key = op.split("(")[0] if op != "load(mmap=True)" else "mmap"
            res = {}
            for lib in ("torch", "ember"):
                path = os.path.join(d, f"{lib}.pt")
                res[lib] = run(lib, key, path)
            t, e = res["torch"], res["ember"]
            print(f"{op:24s} {t['ms']:9.1f} {e['ms']:9.1f} {e['ms'] / t['ms']:10.2f}x "
                  f"{t['peak_extra_mb']:13.1f} {e['peak_extra_mb']:13.1f}")


if __name__ == "__main__":
    main()
