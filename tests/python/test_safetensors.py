"""ember.utils.safetensors against the safetensors package (safetensors.torch): files move both ways,
loads alias the mapped file (zero-copy, copy-on-write), hostile headers raise SafetensorError."""
import json
import random
import struct

import numpy as np
import pytest
import torch

import ember
import ember.nn as enn
from ember.utils import safetensors as es

st = pytest.importorskip("safetensors.torch")
safetensors = pytest.importorskip("safetensors")

DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64"]


def _values(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype("float32" if dtype == "bfloat16" else dtype)


def pairs(rng):
    """The same tensors in torch and ember: every dtype, a scalar, an empty one, a non-ASCII name."""
    t, e = {}, {}
    shapes = {"float32": (3, 4), "int8": (5,), "bfloat16": (2, 3, 2)}
    for dt in DTYPES:
        a = _values(dt, shapes.get(dt, (4, 3)), rng)
        t[f"w.{dt}"], e[f"w.{dt}"] = torch.from_numpy(a.copy()), ember.tensor(a.copy())
        if dt == "bfloat16":
            t[f"w.{dt}"], e[f"w.{dt}"] = t[f"w.{dt}"].to(torch.bfloat16), e[f"w.{dt}"].to(ember.bfloat16)
    t["scalar"], e["scalar"] = torch.tensor(2.5), ember.tensor(2.5)
    t["empty"], e["empty"] = torch.zeros(0, 3), ember.zeros(0, 3)
    t["größe"], e["größe"] = torch.arange(3), ember.arange(3)
    return t, e


def same(e, t):
    assert isinstance(e, ember.Tensor) and isinstance(t, torch.Tensor)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    if t.dtype == torch.bfloat16:
        e, t = e.to(ember.float32), t.float()
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_torch_files_load_in_ember(tmp_path):
    t, _ = pairs(np.random.default_rng(0))
    path = tmp_path / "t.safetensors"
    st.save_file(t, path, metadata={"format": "pt", "note": "ünïcode"})
    e = es.load_file(path)
    assert set(e) == set(t)
    for k in t:
        same(e[k], t[k])
    with es.safe_open(path, framework="pt") as f:
        assert f.metadata() == {"format": "pt", "note": "ünïcode"}
        with safetensors.safe_open(path, framework="pt") as g:
            assert f.keys() == g.keys()
            assert f.offset_keys() == g.offset_keys()
            for k in t:
                s, r = f.get_slice(k), g.get_slice(k)
                assert s.get_shape() == r.get_shape() and s.get_dtype() == r.get_dtype()
            same(f.get_slice("w.float32")[1:, ::2], g.get_slice("w.float32")[1:, ::2])
            same(f.get_slice("w.bfloat16")[0], g.get_slice("w.bfloat16")[0])
        np.testing.assert_array_equal(es.safe_open(path, framework="numpy").get_tensor("w.int16"),
                                      t["w.int16"].numpy())
    raw = path.read_bytes()
    loaded = es.load(raw)
    for k in t:
        same(loaded[k], t[k])


def test_ember_files_load_in_torch_byte_for_byte(tmp_path):
    t, e = pairs(np.random.default_rng(1))
    meta = {"format": "pt"}
    # the same header layout (metadata, then larger elements first, names sorted) and padding
    assert es.save(e, metadata=meta) == st.save(t, metadata=meta)
    path = tmp_path / "e.safetensors"
    es.save_file(e, path, metadata=meta)
    back = st.load_file(path)
    for k in t:
        assert torch.equal(back[k], t[k]) if t[k].dtype != torch.bfloat16 else torch.equal(back[k].float(),
                                                                                           t[k].float())
    back = st.load(es.save(e))
    for k in t:
        same(e[k], back[k])
    with safetensors.safe_open(path, framework="pt") as g:
        assert g.metadata() == meta


def test_loads_alias_the_mapped_file(tmp_path):
    path = tmp_path / "big.safetensors"
    n = 16 << 20                                          # 64 MB of float32
    st.save_file({"w": torch.arange(n, dtype=torch.float32), "b": torch.ones(4)}, path)
    before_bytes = path.read_bytes()[:1 << 12] + path.read_bytes()[-(1 << 12):]

    def rss_kb():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    r0 = rss_kb()
    loaded = es.load_file(path)
    assert rss_kb() - r0 < 8 << 10                         # nothing read: pages come in when touched
    w = loaded["w"]
    assert float(w[123456]) == 123456.0
    with es.safe_open(path) as f:
        a, b = f.get_tensor("w"), f.get_tensor("w")
        assert a.data_ptr() == b.data_ptr()               # both views of one mapping, no copies
        a[0] = -7.0                                       # copy-on-write: the mapping sees it, the file not
        assert float(b[0]) == -7.0
    assert float(w[0]) == 0.0                             # another load maps the file afresh
    assert path.read_bytes()[:1 << 12] + path.read_bytes()[-(1 << 12):] == before_bytes
    del loaded, w, a, b                                   # the mapping goes with the last tensor


def test_save_errors_match_safetensors(tmp_path):
    x = ember.ones(3, 3)
    with pytest.raises(ValueError, match="non contiguous"):
        es.save_file({"x": x.t()}, tmp_path / "a")
    with pytest.raises(RuntimeError, match="share memory"):
        es.save_file({"x": x, "y": x.view(9)}, tmp_path / "a")
    # slices of one storage that do not overlap are not shared
    base = ember.arange(10.0)
    es.save_file({"lo": base[:5], "hi": base[5:]}, tmp_path / "ok")
    assert st.load_file(tmp_path / "ok")["hi"].tolist() == [5.0, 6.0, 7.0, 8.0, 9.0]
    with pytest.raises(TypeError):
        es.save_file({"x": x}, tmp_path / "a", metadata={"a": 1})
    with pytest.raises(ValueError, match="complex128"):
        es.save({"x": ember.ones(2, dtype=ember.complex128)})
    # dtypes ember lacks are named, not misread
    st.save_file({"u": torch.ones(3, dtype=torch.uint16)}, tmp_path / "u16")
    with pytest.raises(NotImplementedError, match="U16"):
        es.load_file(tmp_path / "u16")
    with pytest.raises(es.SafetensorError, match="does not contain"):
        es.safe_open(tmp_path / "ok").get_tensor("missing")
    with pytest.raises(RuntimeError, match="cuda"):
        es.load_file(tmp_path / "ok", device="cuda:0")


def _file(header, data=b"", pad=True):
    text = json.dumps(header).encode() if not isinstance(header, bytes) else header
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("blob, match", [
    (b"", "shorter than 8"),
    (struct.pack("<Q", 10 ** 12) + b"{}", "too large"),
    (struct.pack("<Q", 50) + b"{}", "runs past the end"),
    (_file(b"not json"), "invalid JSON"),
    (_file(b"[1, 2]"), "not a JSON object"),
    (_file(b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": {"dtype": "F32", "shape": [1], '
           b'"data_offsets": [0, 4]}}', b"\0" * 4), "duplicate"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4), "needs 8 bytes"),
    (_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4), "bad shape"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, b"\0" * 4), "bad shape"),
    (_file({"a": {"dtype": "F32", "shape": [10 ** 12], "data_offsets": [0, 4 * 10 ** 12]}}), "cover"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
            "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8), "holes or overlaps"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8), "holes or overlaps"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 12), "cover 4 bytes"),
    (_file({"a": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), "unknown dtype"),
    (_file({"a": [1, 2]}), "bad entry"),
    (_file({"__metadata__": {"k": 1}}), "__metadata__"),
])
def test_hostile_headers_raise(tmp_path, blob, match):
    with pytest.raises(es.SafetensorError, match=match):
        es.load(blob)
    path = tmp_path / "h.safetensors"
    path.write_bytes(blob)
    with pytest.raises(es.SafetensorError, match=match):
        es.load_file(path)


def test_mutated_files_raise_cleanly(tmp_path):
    t, _ = pairs(np.random.default_rng(2))
    good = st.save(t, metadata={"k": "v"})
    rng = random.Random(3)
    for i in range(400):
        b = bytearray(good)
        if i % 3 == 0:
            b = b[: rng.randrange(len(b))]
        else:
            n = struct.unpack("<Q", good[:8])[0]
            for _ in range(rng.randint(1, 4)):      # mostly inside the header, where flips matter
                b[rng.randrange(8 + n if i % 3 == 1 else len(b))] = rng.randrange(256)
        try:
            es.load(bytes(b))
        except (es.SafetensorError, NotImplementedError):
            pass


def test_save_model_and_load_model_with_tied_weights(tmp_path):
    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = torch.nn.Linear(4, 3)
            self.dec = torch.nn.Linear(3, 4)
            self.head = torch.nn.Linear(4, 3)
            self.head.weight = self.enc.weight            # tied

    class ENet(enn.Module):
        def __init__(self):
            super().__init__()
            self.enc = enn.Linear(4, 3)
            self.dec = enn.Linear(3, 4)
            self.head = enn.Linear(4, 3)
            self.head.weight = self.enc.weight

    torch.manual_seed(0)
    tm = TNet()
    st.save_model(tm, str(tmp_path / "t.safetensors"))
    em = ENet()
    missing, unexpected = es.load_model(em, tmp_path / "t.safetensors")
    assert not missing and not unexpected
    x = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(em.head(ember.tensor(x)).detach().numpy(),
                               tm.head(torch.from_numpy(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    assert em.head.weight is em.enc.weight                # still tied after the load
    es.save_model(em, tmp_path / "e.safetensors")
    with safetensors.safe_open(tmp_path / "e.safetensors", framework="pt") as g:
        assert g.keys() == sorted(st.load_file(tmp_path / "t.safetensors")) and len(g.keys()) == 5
        assert g.metadata() == {"head.weight": "enc.weight"}
    tm2 = TNet()
    assert st.load_model(tm2, tmp_path / "e.safetensors") == (set(), [])
    assert torch.equal(tm2.head.weight, tm.enc.weight)
    st.save_file({"enc.weight": torch.ones(3, 4)}, tmp_path / "partial.safetensors")
    with pytest.raises(RuntimeError, match="Missing key"):
        es.load_model(ENet(), tmp_path / "partial.safetensors")
