"""ember.load over mutated checkpoints: archives written by torch.save and ember.save, truncated at
many points or with a piece cut out, with bytes flipped, with sizes/offsets/counts in the zip structures rewritten, and
with data.pkl itself mutated (CRCs fixed so the unpickler sees the damage). Every load must
return or raise RuntimeError / pickle.UnpicklingError: no crash (the loads run in a child
process), no other exception, and bounded memory (the child runs under an address-space limit,
so an allocation sized by a hostile field fails the test instead of succeeding quietly)."""
import collections
import io
import json
import os
import pickle
import resource
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import serialization as ser

# the child imports the same ember as this process (the sanitized one under scripts/sanitize.sh)
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))

# The child: loads every mutation of each archive through a file object, a path and a mapped
# path, and reports anything that is not a clean error.
CHILD = r"""
import io, json, os, pickle, random, resource, struct, sys, zipfile, zlib
import ember
from ember import serialization as ser

def vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize"):
                return int(line.split()[1]) * 1024

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

paths, workdir, seed = sys.argv[1].split(os.pathsep), sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
ember.load(paths[0]); (ember.ones(1000) + 1).sum()      # warm up before the limit
# Note: an address-space cap, 1 GiB above what the warmed-up process maps: files here are a few
# KiB, so only an allocation sized by a hostile field can reach it.
limit = vm_bytes() + (1 << 30)
hard = resource.getrlimit(resource.RLIMIT_AS)[1]
if hard != resource.RLIM_INFINITY:
    limit = min(limit, hard)
resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
rss0 = rss_mb()

def fields(data):
    # (offset, width) of every size/offset/count field in the zip structures
    out = []
    for i in range(len(data) - 4):
        sig = data[i:i + 4]
        if sig == b"PK\x03\x04":
            out += [(i + 14, 4), (i + 18, 4), (i + 22, 4), (i + 26, 2), (i + 28, 2)]
        elif sig == b"PK\x01\x02":
            out += [(i + 20, 4), (i + 24, 4), (i + 28, 2), (i + 30, 2), (i + 32, 2), (i + 42, 4)]
        elif sig == b"PK\x06\x06":
            out += [(i + 24, 8), (i + 32, 8), (i + 40, 8), (i + 48, 8)]
        elif sig == b"PK\x06\x07":
            out += [(i + 8, 8)]
        elif sig == b"PK\x05\x06":
            out += [(i + 8, 2), (i + 10, 2), (i + 12, 4), (i + 16, 4), (i + 20, 2)]
        elif sig == b"PK\x07\x08":
            out += [(i + 8, 4), (i + 12, 4)]
    return out

def repack(data, pkl):
    # the archive with data.pkl replaced and every CRC right (Python's zipfile, an independent writer)
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for n in src.namelist():
            z.writestr(n, pkl if n.endswith("/data.pkl") else src.read(n))
    return out.getvalue()

def mutations(data):
    n = len(data)
    for cut in sorted(set(range(0, n, max(1, n // 120))) | {n - 1, n - 22, n - 42, n - 98}):
        yield "truncate", data[:cut]
    for _ in range(80):     # a piece cut out of the middle: the end records survive, offsets lie
        a = rng.randrange(n - 1)
        yield "cut", data[:a] + data[a + rng.randint(1, min(300, n - a)):]
    for _ in range(250):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(n)] = rng.randrange(256)
        yield "flip", bytes(b)
    extremes = {2: [0, 1, 0x7FFF, 0xFFFF], 4: [0, 1, 0x7FFFFFFF, 0xFFFFFFFF, n, n + 1],
                8: [0, n + 1, 1 << 40, (1 << 63) - 1, (1 << 64) - 1]}
    for off, width in fields(data):
        for v in rng.sample(extremes[width], 3):
            b = bytearray(data)
            b[off:off + width] = (v % (1 << (8 * width))).to_bytes(width, "little")
            yield f"field@{off}", bytes(b)
    central = [i for i in range(n - 4) if data[i:i + 4] == b"PK\x01\x02"]
    for _ in range(60):     # another compression method (or encryption) with a size claim to match
        b = bytearray(data)
        c = rng.choice(central)
        b[c + 8:c + 12] = struct.pack("<HH", rng.choice([0x808, 0x809]), rng.choice([0, 1, 8, 12, 14, 99]))
        b[c + 20:c + 28] = struct.pack("<II", rng.choice([4, n, 0xFFFFFFFF]), rng.choice([4, n, 0xFFFFFF00]))
        yield "method", bytes(b)
    pkl = zipfile.ZipFile(io.BytesIO(data)).read(next(x for x in zipfile.ZipFile(io.BytesIO(data)).namelist()
                                                     if x.endswith("/data.pkl")))
    for _ in range(120):
        p = bytearray(pkl)
        r = rng.random()
        if r < 0.3:
            p = p[: rng.randrange(len(p))]
        elif r < 0.8:
            for _ in range(rng.randint(1, 4)):
                p[rng.randrange(len(p))] = rng.randrange(256)
        else:   # a number in the pickle (sizes, strides, offsets, numel) made extreme
            ints = [i for i in range(len(p) - 1) if p[i] in (0x4B, 0x4A)]   # BININT1 / BININT
            if ints:
                i = rng.choice(ints)
                p[i] = 0x4A
                p[i + 1:i + 2 if pkl[i] == 0x4B else i + 5] = struct.pack("<i", rng.choice([-1, 2**31 - 1, 2**30]))
        yield "pickle", repack(data, bytes(p))

bad = []
count = 0
for path in paths:
    data = open(path, "rb").read()
    for kind, blob in mutations(data):
        count += 1
        how = count % 3
        try:
            if how == 0:
                ember.load(io.BytesIO(blob))
            else:
                tmp = os.path.join(workdir, "m.pt")
                with open(tmp, "wb") as f:
                    f.write(blob)
                ember.load(tmp, mmap=(how == 2))
        except (RuntimeError, pickle.UnpicklingError) as e:
            msg = str(e)
            if "allocate" in msg or "Cannot allocate" in msg:
                bad.append((os.path.basename(path), kind, type(e).__name__, msg[:200]))
        except BaseException as e:   # MemoryError included: a size the file never justified
            bad.append((os.path.basename(path), kind, type(e).__name__, str(e)[:200]))
print(json.dumps({"count": count, "bad": bad[:20], "nbad": len(bad), "rss_growth_mb": rss_mb() - rss0}))
"""


def _objects(rng):
    t = collections.OrderedDict()
    t["w"] = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))
    t["wT"] = t["w"].t()
    t["slice"] = t["w"].view(-1)[3:11:2]
    t["i64"] = torch.arange(7)
    t["f16"] = torch.ones(3, dtype=torch.float16)
    t["bool"] = torch.tensor([True, False])
    t["nested"] = [1, 2.5, "s", (None, b"xy"), {"k": {3}}]
    t["size"] = torch.Size([2, 3])
    return t


def test_mutated_archives_raise_cleanly(tmp_path):
    obj = _objects(np.random.default_rng(0))
    torch_path = tmp_path / "torch.pt"
    torch.save(obj, torch_path)
    eobj = ember.load(torch_path)
    ember_path = tmp_path / "ember.pt"
    ember.save(eobj, ember_path)
    # the originals load, so the mutations start from valid files
    for p in (torch_path, ember_path):
        assert torch.equal(torch.from_numpy(ember.load(p)["w"].numpy()), obj["w"])
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    r = subprocess.run([sys.executable, "-c", CHILD, os.pathsep.join(map(str, (torch_path, ember_path))),
                        str(work), "1"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, f"child died (rc {r.returncode}): {r.stderr[-3000:]}"
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["count"] > 1500
    assert report["nbad"] == 0, report["bad"]
    assert report["rss_growth_mb"] < 200


def test_mutated_legacy_files_raise_cleanly(tmp_path):
    """The legacy (pre-1.6) format in the same child: truncations and flips."""
    obj = _objects(np.random.default_rng(1))
    path = tmp_path / "legacy.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=False)
    rng = np.random.default_rng(2)
    data = path.read_bytes()
    bad = []
    for i in range(300):
        b = bytearray(data)
        if i % 2:
            b = b[: int(rng.integers(len(b)))]
        else:
            for _ in range(int(rng.integers(1, 6))):
                b[int(rng.integers(len(b)))] = int(rng.integers(256))
        try:
            ember.load(io.BytesIO(bytes(b)))
        except (RuntimeError, pickle.UnpicklingError):
            pass
        except Exception as e:      # noqa: BLE001 - any other class is the failure being tested
            bad.append((i, type(e).__name__, str(e)[:120]))
    assert not bad, bad[:10]


@pytest.mark.parametrize("case", ["memo", "bytearray", "bytes", "list_range", "set_range", "size_range",
                                  "rebuild_range", "numel", "extent"])
def test_hostile_pickles_are_refused_without_allocating(case):
    """Small data.pkl payloads that would allocate gigabytes if taken at their word."""
    G, P, R, T, E = pickle.GLOBAL, pickle.PROTO, pickle.REDUCE, pickle.TUPLE1, pickle.EMPTY_TUPLE
    proto = P + b"\x02"

    def glob(mod, name):
        return G + f"{mod}\n{name}\n".encode()

    def num(v):
        return pickle.LONG1 + bytes([len(v.to_bytes(9, "little", signed=True).rstrip(b"\x00")) or 1]) + \
            (v.to_bytes(9, "little", signed=True).rstrip(b"\x00") or b"\x00")

    big = 10 ** 10
    rng_call = glob("__builtin__", "range") + pickle.BININT1 + b"\x00" + num(big) + pickle.TUPLE2 + R
    payloads = {
        # an 8-byte memo index: the C unpickler would zero-fill a 16 GiB memo array
        "memo": proto + pickle.NONE + pickle.LONG_BINPUT + struct.pack("<I", 2 ** 31 - 1) + pickle.STOP,
        "bytearray": proto + glob("__builtin__", "bytearray") + num(big) + T + R + pickle.STOP,
        "bytes": proto + glob("__builtin__", "bytes") + num(big) + T + R + pickle.STOP,
        "list_range": proto + glob("__builtin__", "list") + rng_call + T + R + pickle.STOP,
        "set_range": proto + glob("__builtin__", "set") + rng_call + T + R + pickle.STOP,
        "size_range": proto + glob("torch", "Size") + rng_call + T + R + pickle.STOP,
    }
    if case in payloads:
        data = payloads[case]
    else:
        class Lie:   # _rebuild_tensor_v2 on the real 3-float storage below, with lying metadata
            def __reduce__(self):
                ref = ser._StorageRef("0", ember.float32, 10 ** 11 if case == "numel" else 3)
                size = range(big) if case == "rebuild_range" else (big,)
                return (ser._REBUILD_TENSOR, (ref, 0, size, (1,), False, collections.OrderedDict()))
        buf = io.BytesIO()
        ser._Pickler(buf, 2).dump(Lie())
        data = buf.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", data)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/data/0", np.arange(3, dtype=np.float32).tobytes())
        z.writestr("archive/version", "3\n")
    out.seek(0)
    if case == "memo":      # a valid pickle: it loads, through a dict memo (Note [Unpickling untrusted files])
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with pytest.raises(RuntimeError, match="not a checkpoint"):    # the same bytes as a whole file
            ember.load(io.BytesIO(data))
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000    # KiB
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert ember.load(out) is None
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000    # KiB
        return
    with pytest.raises((pickle.UnpicklingError, RuntimeError)) as info:
        ember.load(out)
    assert "allocate" not in str(info.value)
