"""ember.save / ember.load against torch.save / torch.load: files move both ways."""
import collections
import io
import os
import pickle
import random
import zipfile

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


def _np(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("int") or dtype == "uint8":
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype("float32" if dtype == "bfloat16" else dtype)


def pair(dtype, shape, rng):
    """The same values as a torch and an ember tensor."""
    a = _np(dtype, shape, rng)
    t = torch.from_numpy(np.array(a))
    e = ember.tensor(np.array(a))
    if dtype == "bfloat16":
        t, e = t.to(torch.bfloat16), e.to(ember.bfloat16)
    return t, e


def as_np(x):
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype == torch.bfloat16:
            x = x.float()
        return x.numpy()
    x = x.detach()
    if x.dtype == ember.bfloat16:
        x = x.to(ember.float32)
    return x.numpy()


def same(e, t):
    assert isinstance(e, ember.Tensor) and isinstance(t, torch.Tensor)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(as_np(e), as_np(t))


def build(rng):
    """Parallel torch / ember objects: every dtype, 0-d, empty, non-contiguous, views sharing a storage."""
    tobj, eobj = collections.OrderedDict(), collections.OrderedDict()
    for dt in DTYPES:
        t, e = pair(dt, (3, 4), rng)
        tobj[dt], eobj[dt] = t, e
        tobj[dt + "_T"], eobj[dt + "_T"] = t.t(), e.t()            # non-contiguous view of the same storage
    t, e = pair("float32", (), rng)
    tobj["scalar"], eobj["scalar"] = t, e
    t, e = pair("float64", (0, 3), rng)
    tobj["empty"], eobj["empty"] = t, e
    t, e = pair("float32", (10,), rng)
    tobj["base"], eobj["base"] = t, e
    tobj["slice"], eobj["slice"] = t[2:7:2], e[2:7:2]
    t, e = pair("float32", (2, 2), rng)
    tobj["grad"], eobj["grad"] = t.requires_grad_(), e.requires_grad_()
    tobj["nested"] = [1, 2.5, "s", None, (True, b"bytes"), {"k": {3, 4}}, torch.Size([2, 3])]
    eobj["nested"] = [1, 2.5, "s", None, (True, b"bytes"), {"k": {3, 4}}, ember.Size([2, 3])]
    tobj["dtype"], eobj["dtype"] = torch.float16, ember.float16
    return tobj, eobj


def check(eobj, tobj):
    assert list(eobj.keys()) == list(tobj.keys())
    for k in tobj:
        if isinstance(tobj[k], torch.Tensor):
            same(eobj[k], tobj[k])
    assert eobj["nested"][:6] == tobj["nested"][:6]
    assert tuple(eobj["nested"][6]) == tuple(tobj["nested"][6])
    assert str(eobj["dtype"]).split(".")[-1] == str(tobj["dtype"]).split(".")[-1]


def test_torch_file_loads_in_ember(tmp_path):
    tobj, _ = build(np.random.default_rng(0))
    path = tmp_path / "from_torch.pt"
    torch.save(tobj, path)
    eobj = ember.load(path)
    check(eobj, tobj)
    assert isinstance(eobj, collections.OrderedDict)
    assert isinstance(eobj["nested"][6], ember.Size)
    # views keep sharing their storage after the load
    eobj["base"][2] = 100.0
    assert float(eobj["slice"][0]) == 100.0
    eobj["float32"][0, 1] = -5.0
    assert float(eobj["float32_T"][1, 0]) == -5.0


def test_ember_file_loads_in_torch(tmp_path):
    tobj, eobj = build(np.random.default_rng(1))
    path = tmp_path / "from_ember.pt"
    ember.save(eobj, path)
    back = torch.load(path)                      # torch's own weights_only=True loader accepts it
    check(eobj, back)
    check(ember.load(path), back)               # and ember reads its own file
    back["base"][2] = 100.0
    assert float(back["slice"][0]) == 100.0
    assert torch.load(path, mmap=True)["float64"].equal(back["float64"])


def test_file_objects_and_prefix():
    t, e = pair("float32", (5,), np.random.default_rng(2))
    buf = io.BytesIO()
    ember.save({"x": e}, buf)
    import zipfile
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    tbuf = io.BytesIO()
    torch.save({"x": t}, tbuf)
    assert names == zipfile.ZipFile(io.BytesIO(tbuf.getvalue())).namelist()
    buf.seek(0)
    same(ember.load(buf)["x"], t)
    buf.seek(0)
    assert torch.equal(torch.load(buf)["x"], t)
    tbuf.seek(0)
    same(ember.load(tbuf)["x"], t)


def test_storage_saved_once(tmp_path):
    e = ember.arange(1000.0)
    path = tmp_path / "views.pt"
    ember.save([e, e[10:20], e.view(10, 100)], path)
    import zipfile
    assert sum("/data/" in n for n in zipfile.ZipFile(path).namelist()) == 1
    a, b, c = torch.load(path)
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() == c.untyped_storage().data_ptr()


class Custom:
    def __init__(self, v=3):
        self.v = v


def test_weights_only(tmp_path):
    path = tmp_path / "custom.pt"
    torch.save({"c": Custom(), "x": torch.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="Custom"):
        ember.load(path)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)
    obj = ember.load(path, weights_only=False)
    assert isinstance(obj["c"], Custom) and obj["c"].v == 3
    ember.serialization.add_safe_globals([Custom])
    try:
        assert ember.load(path)["c"].v == 3
    finally:
        ember.serialization.clear_safe_globals()
    with ember.serialization.safe_globals([Custom]):
        assert ember.load(path)["c"].v == 3
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path)
    # a hostile pickle never runs under weights_only
    evil = tmp_path / "evil.pt"
    torch.save({"f": os.system}, evil)
    with pytest.raises(pickle.UnpicklingError, match="system"):
        ember.load(evil)


def test_map_location(tmp_path):
    t, _ = pair("float32", (3,), np.random.default_rng(3))
    path = tmp_path / "m.pt"
    torch.save(t, path)
    for ml in ["cpu", ember.device("cpu"), {"cpu": "cpu"}, None]:
        same(ember.load(path, map_location=ml), t)
    seen = []

    def fn(storage, location):
        seen.append(location)
        return storage
    same(ember.load(path, map_location=fn), t)
    assert seen == ["cpu"]
    same(ember.load(path, map_location=lambda s, loc: None), t)
    with pytest.raises(RuntimeError, match="CUDA"):
        ember.load(path, map_location="cuda:0")
    with pytest.raises(RuntimeError, match="CUDA"):
        ember.load(path, map_location={"cpu": "cuda"})


def test_mmap(tmp_path):
    t, _ = pair("float64", (1000,), np.random.default_rng(4))
    path = tmp_path / "mm.pt"
    torch.save({"w": t}, path)
    before = path.read_bytes()
    e = ember.load(path, mmap=True)["w"]
    same(e, t)
    e.mul_(2)                                   # copy-on-write: the file is untouched
    assert path.read_bytes() == before
    with pytest.raises(ValueError):
        ember.load(io.BytesIO(before), mmap=True)


def test_legacy_format_loads(tmp_path):
    tobj, _ = build(np.random.default_rng(6))
    path = tmp_path / "legacy.pt"
    torch.save(tobj, path, _use_new_zipfile_serialization=False)
    eobj = ember.load(path)
    check(eobj, tobj)
    eobj["base"][2] = 100.0                     # views still share their storage
    assert float(eobj["slice"][0]) == 100.0
    buf = io.BytesIO()
    torch.save({"w": torch.arange(5.0)}, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    np.testing.assert_array_equal(ember.load(buf)["w"].numpy(), np.arange(5.0, dtype=np.float32))
    with pytest.raises(RuntimeError, match="mmap"):
        ember.load(path, mmap=True)
    with pytest.raises(NotImplementedError):
        ember.save(ember.ones(2), tmp_path / "x.pt", _use_new_zipfile_serialization=False)


def test_atomic_save_keeps_old_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"x": ember.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises(Exception):
        ember.save({"x": ember.zeros(3), "bad": lambda: 1}, path)   # lambdas cannot be pickled
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]      # no temp file left behind


def test_corrupted_files_raise_cleanly(tmp_path):
    rng = random.Random(0)
    tobj, _ = build(np.random.default_rng(5))
    buf = io.BytesIO()
    torch.save(tobj, buf)
    good = buf.getvalue()
    errors = (RuntimeError, pickle.UnpicklingError, ValueError, NotImplementedError, KeyError, TypeError,
              EOFError, IndexError)
    for i in range(150):
        data = bytearray(good)
        kind = i % 3
        if kind == 0:
            data = data[: rng.randrange(len(data))]               # truncated
        else:
            for _ in range(rng.randint(1, 8)):                     # flipped bytes
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            ember.load(io.BytesIO(bytes(data)))
        except errors:
            pass
    with pytest.raises(RuntimeError):
        ember.load(io.BytesIO(b"not a checkpoint"))
    buf = io.BytesIO()
    torch.save(tobj, buf, _use_new_zipfile_serialization=False)
    good = buf.getvalue()
    for i in range(100):                                           # the legacy format too
        data = bytearray(good)
        if i % 2:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            ember.load(io.BytesIO(bytes(data)))
        except errors:
            pass


def test_optimizer_state_via_files(tmp_path):
    import ember.optim
    tp = [torch.randn(3, 2, requires_grad=True)]
    to = torch.optim.Adam(tp, lr=0.01, amsgrad=True)
    tp[0].grad = torch.randn(3, 2)
    to.step()
    torch.save(to.state_dict(), tmp_path / "opt.pt")
    ep = [ember.tensor(tp[0].detach().numpy()).requires_grad_()]
    eo = ember.optim.Adam(ep, lr=0.01, amsgrad=True)
    eo.load_state_dict(ember.load(tmp_path / "opt.pt"))
    for k in ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        np.testing.assert_array_equal(eo.state[ep[0]][k].numpy(), to.state[tp[0]][k].numpy())
    ember.save(eo.state_dict(), tmp_path / "opt_e.pt")
    to2 = torch.optim.Adam(tp, lr=0.01, amsgrad=True)
    to2.load_state_dict(torch.load(tmp_path / "opt_e.pt"))
    assert to2.state_dict()["param_groups"] == to.state_dict()["param_groups"]
    for k in ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        assert torch.equal(to2.state[tp[0]][k], to.state[tp[0]][k])


# ---------------------------------------------------------------- the C++ archive (ember._C._serialization)
S = ember._C._serialization


def test_archive_reader_on_torch_files(tmp_path):
    tobj, _ = build(np.random.default_rng(7))
    path = tmp_path / "t.pt"
    torch.save(tobj, path)
    ref = zipfile.ZipFile(path)
    for src in (str(path), open(path, "rb"), S.MappedFile(str(path))):
        r = S.ZipReader(src)
        assert r.names() == ref.namelist()
        assert r.archive_size == path.stat().st_size
        for info in ref.infolist():
            assert r.size(info.filename) == info.file_size
            assert r.read(info.filename) == ref.read(info.filename)
            if "/data/" in info.filename:
                assert r.data_offset(info.filename) % 64 == 0      # torch aligns storages too
        if hasattr(src, "close"):
            src.close()


def test_archive_writer_layout_matches_torch(tmp_path):
    t, e = pair("float32", (6,), np.random.default_rng(8))
    (tmp_path / "t").mkdir()
    torch.save({"x": t}, tmp_path / "t" / "e.pt")        # same stem: same record names
    ember.save({"x": e}, tmp_path / "e.pt")
    zt, ze = zipfile.ZipFile(tmp_path / "t" / "e.pt"), zipfile.ZipFile(tmp_path / "e.pt")
    assert ze.namelist() == zt.namelist()
    assert ze.testzip() is None                                     # CRCs agree with Python's zipfile
    for it, ie in zip(zt.infolist(), ze.infolist()):
        assert (ie.compress_type, ie.flag_bits & 0x8) == (it.compress_type, it.flag_bits & 0x8)
    r = S.ZipReader(str(tmp_path / "e.pt"))
    assert all(r.data_offset(n) % 64 == 0 for n in r.names())
    tail = (tmp_path / "e.pt").read_bytes()[-98:]
    assert tail[:4] == b"PK\x06\x06" and tail[56:60] == b"PK\x06\x07"   # ZIP64 end records, as torch


def test_zip64_archives_load_both_ways(tmp_path):
    _, eobj = build(np.random.default_rng(9))
    buf = io.BytesIO()
    p = ember.serialization._Pickler(buf, 2)
    p.dump(eobj)
    path = tmp_path / "z64.pt"
    # every entry with ZIP64 extra fields, as torch writes for records or offsets past 4 GiB
    ember.serialization._write_archive(S.ZipWriter(str(path), force_zip64=True), "z64", buf.getbuffer(),
                                       p.storages)
    check(eobj, torch.load(path))
    check(ember.load(path), torch.load(path, mmap=True))
    check(ember.load(path, mmap=True), torch.load(path))


def test_deflated_and_crcless_archives_load(tmp_path):
    tobj, _ = build(np.random.default_rng(10))
    buf = io.BytesIO()
    torch.save(tobj, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:   # a checkpoint repacked by a zip tool
        for n in src.namelist():
            z.writestr(n, src.read(n))
    out.seek(0)
    check(ember.load(out), tobj)
    path = tmp_path / "deflated.pt"
    path.write_bytes(out.getvalue())
    check(ember.load(path, mmap=True), tobj)                     # compressed records are read, not mapped
    # torch's compute_crc32=False writes CRC 0: nothing to check against
    from torch.utils.serialization import config
    config.save.compute_crc32 = False
    try:
        torch.save(tobj, tmp_path / "nocrc.pt")
    finally:
        config.save.compute_crc32 = True
    assert all(i.CRC == 0 for i in zipfile.ZipFile(tmp_path / "nocrc.pt").infolist())
    check(ember.load(tmp_path / "nocrc.pt"), tobj)


def test_corrupted_storage_fails_its_crc(tmp_path):
    t, _ = pair("float64", (100,), np.random.default_rng(11))
    path = tmp_path / "c.pt"
    torch.save({"w": t}, path)
    data = bytearray(path.read_bytes())
    off = S.ZipReader(str(path)).data_offset("c/data/0")
    data[off + 17] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="CRC-32 mismatch in record c/data/0"):
        ember.load(path)
    torch.load(path)           # torch does not check: it returns the damaged values
    assert ember.load(path, mmap=True)["w"].shape == (100,)     # a mapped load reads nothing up front


def test_save_errors_leave_no_partial_file(tmp_path):
    class Broken(io.RawIOBase):
        def __init__(self):
            self.n = 0

        def writable(self):
            return True

        def write(self, b):
            self.n += 1
            if self.n > 3:
                raise OSError("disk full")
            return len(b)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"x": ember.ones(1000)}, Broken())
    with pytest.raises(RuntimeError):
        ember.save({"x": ember.ones(3)}, tmp_path / "missing_dir" / "x.pt")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.environ.get("EMBER_BIG_TESTS") != "1", reason="writes 2 x 4.3 GB; EMBER_BIG_TESTS=1")
def test_records_past_4gib_load_both_ways(tmp_path):
    n = (1 << 32) + 4096                                        # one storage past the 32-bit limit
    e = ember.empty(n, dtype=ember.uint8)
    e[-5:] = ember.arange(5, dtype=ember.uint8)
    ember.save({"big": e, "after": ember.arange(3.0)}, tmp_path / "e.pt")
    del e
    back = torch.load(tmp_path / "e.pt", mmap=True)
    assert back["big"].numel() == n and back["big"][-5:].tolist() == [0, 1, 2, 3, 4]
    assert back["after"].tolist() == [0.0, 1.0, 2.0]
    t = back["big"]
    torch.save({"after": torch.arange(3.0), "big": t}, tmp_path / "t.pt")
    del back, t
    mine = ember.load(tmp_path / "t.pt", mmap=True)
    assert mine["big"].numel() == n and mine["big"][-5:].tolist() == [0, 1, 2, 3, 4]
    assert mine["after"].tolist() == [0.0, 1.0, 2.0]


def test_map_location_errors_are_the_callers(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"w": torch.ones(2)}, path)

    def bad(storage, location):
        raise TypeError("my own bug")
    with pytest.raises(TypeError, match="my own bug"):      # not blamed on the file
        ember.load(path, map_location=bad)


def test_atomic_save_writes_through_symlinks_and_keeps_permissions(tmp_path):
    real = tmp_path / "ckpt_10.pt"
    ember.save({"x": ember.ones(2)}, real)
    os.chmod(real, 0o640)
    link = tmp_path / "latest.pt"
    link.symlink_to(real.name)
    ember.save({"x": ember.zeros(2)}, link)          # as open(link, "wb") would: the target is replaced
    assert link.is_symlink()
    assert torch.load(real)["x"].tolist() == [0.0, 0.0]
    assert (real.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt_10.pt", "latest.pt"]
