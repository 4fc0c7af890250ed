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

--archive times the zip layer alone, in one process (interleaved, best of --rounds x 3): the
storage records of the same file read by the C++ reader (read_into, with and without the CRC-32
check) and by Python's zipfile the way the zipfile-based ember.load did,
and the records written by the C++ writer and by zipfile (to a plain file, no fsync).
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


def archive_only(rounds):
    import struct
    import time
    import zipfile

    import numpy as np

    import ember
    S = ember._C._serialization
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sd.pt")
        rng = np.random.default_rng(0)
        ember.save({f"layer{i}.weight": ember.from_numpy(rng.standard_normal(156_250).astype(np.float32))
                    for i in range(160)}, path)
        names = [n for n in S.ZipReader(path).names() if "/data/" in n]
        bufs = [(n, ember.empty(S.ZipReader(path).size(n), dtype=ember.uint8)) for n in names]

        def cpp_read(crc):
            r = S.ZipReader(path)
            for n, b in bufs:
                r.read_into(n, b, crc)

        def zipfile_read():
            with open(path, "rb") as f, zipfile.ZipFile(f) as zf:
                for n, b in bufs:
                    info = zf.getinfo(n)
                    f.seek(info.header_offset)
                    h = f.read(30)
                    f.seek(info.header_offset + 30 + sum(struct.unpack("<HH", h[26:30])))
                    f.readinto(memoryview(b.numpy()))

        out = os.path.join(d, "w.pt")

        def cpp_write():
            with open(out, "wb") as f:
                w = S.ZipWriter(f)
                for n, b in bufs:
                    w.write_record(n, b)
                w.finish()

        def zipfile_write():
            with open(out, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
                for n, b in bufs:
                    info = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
                    with zf.open(info, "w") as o:
                        o.write(memoryview(b.numpy()))

        cases = {"read: C++ ZipReader, CRC checked": lambda: cpp_read(True),
                 "read: C++ ZipReader, no CRC": lambda: cpp_read(False),
                 "read: zipfile (old ember.load)": zipfile_read,
                 "write: C++ ZipWriter": cpp_write,
                 "write: zipfile": zipfile_write}
        times = {k: [] for k in cases}
        for _ in range(rounds * 3):
            for k, fn in cases.items():
                t = time.perf_counter()
                fn()
                times[k].append((time.perf_counter() - t) * 1e3)
        print(f"zip layer alone, 100 MB in 160 records ({ember.get_num_threads()} threads), best of {rounds * 3}:")
        for k, v in times.items():
            print(f"  {k:36s} {min(v):7.1f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", help="git revision whose python/ember/serialization.py is the third column")
    ap.add_argument("--archive", action="store_true", help="time the zip layer alone (C++ against zipfile)")
    args = ap.parse_args()
    if args.archive:
        return archive_only(args.rounds)
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
        w = {n: max(10, len(n) + 8) for n in names}
        head = f"{'operation':17s}" + "".join(f"{n + ' ms':>{w[n]}s}" for n in names) + f"{'ember/torch':>12s}"
        if args.baseline:
            head += f"{'ember/base':>11s}"
        head += "".join(f"{n + ' peak MB':>{w[n] + 5}s}" for n in names)
        print(head)
        for op in ops:
            ms = {n: min(r["ms"] for r in res[(n, op)]) for n in names}
            peak = {n: statistics.median(r["peak_extra_mb"] for r in res[(n, op)]) for n in names}
            line = f"{op:17s}" + "".join(f"{ms[n]:{w[n]}.1f}" for n in names) + f"{ms['ember'] / ms['torch']:11.2f}x"
            if args.baseline:
                line += f"{ms['ember'] / ms[names[2]]:10.2f}x"
            line += "".join(f"{peak[n]:{w[n] + 5}.1f}" for n in names)
            print(line)


if __name__ == "__main__":
    main()
