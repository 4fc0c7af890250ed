"""ember.distributed stores (HashStore, FileStore, TCPStore, PrefixStore) against torch.distributed's."""
import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest

import ember.distributed as edist

torch = pytest.importorskip("torch")
tdist = torch.distributed

PYROOT = os.path.join(os.path.dirname(__file__), "..", "..", "python")


def _ops(s, bad_add=True):
    """One sequence of store operations; the results (or error classes) in order."""
    out = []

    def run(f):
        try:
            out.append(f())
        except Exception as e:  # noqa: BLE001 - the error class is part of the result
            out.append(("error", type(e).__name__))

    run(lambda: s.set("a", "hello"))
    run(lambda: s.set("b", b"\x00\xff\x10"))
    run(lambda: s.get("a"))
    run(lambda: s.get("b"))
    run(lambda: s.add("n", 5))
    run(lambda: s.add("n", -7))
    run(lambda: s.get("n"))
    run(lambda: s.add("a", 1) if bad_add else ("error", "ValueError"))  # not an integer: ValueError
    run(lambda: s.compare_set("x", "", "v"))
    run(lambda: s.compare_set("y", "e", "v"))
    run(lambda: s.check(["y"]))
    run(lambda: s.compare_set("x", "v", "w"))
    run(lambda: s.compare_set("x", "zz", "q"))
    run(lambda: s.get("x"))
    run(lambda: s.check(["a", "x"]))
    run(lambda: s.delete_key("x"))
    run(lambda: s.delete_key("x"))
    run(lambda: s.check(["a", "x"]))
    run(lambda: (s.append("ap", "x"), s.append("ap", b"yz"), s.get("ap")))
    run(lambda: s.multi_get(["a", "n"]))
    run(lambda: s.multi_set(["m1", "m2"], ["1", b"2"]))
    run(lambda: s.get("m2"))
    run(lambda: s.set("bad", 3))
    return out


def _same_ops(e_store, t_store, skip=(), torch_bad_add=True):
    e, t = _ops(e_store), _ops(t_store, torch_bad_add)
    assert len(e) == len(t)
    for i, (a, b) in enumerate(zip(e, t)):
        if i in skip:
            continue
        if isinstance(b, tuple) and b and b[0] == "error":
            assert isinstance(a, tuple) and a[0] == "error", f"op {i}: ember gave {a!r}, torch raised {b[1]}"
            assert a[1] == b[1] or (a[1], b[1]) == ("TypeError", "TypeError"), f"op {i}: {a[1]} vs {b[1]}"
        else:
            assert a == b, f"op {i}: {a!r} vs {b!r}"


def test_hash_store_matches_torch():
    _same_ops(edist.HashStore(), tdist.HashStore())


def test_file_store_matches_torch(tmp_path):
    e, t = edist.FileStore(str(tmp_path / "e"), 1), tdist.FileStore(str(tmp_path / "t"), 1)
    # Op 16 deletes a key that is already gone: torch's FileStore says True (unlike its other
    # stores); ember's FileStore says False, as every store does.
    _same_ops(e, t, skip={16})
    assert e.delete_key("never-set") is False


def test_tcp_store_matches_torch():
    e = edist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=10))
    t = tdist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=10))
    # torch's TCPStore server drops the client after an add on a non-integer value (its client is
    # then unusable), so that one op is checked on ember alone.
    _same_ops(e, t, torch_bad_add=False)
    assert e.num_keys() == t.num_keys()  # both count one internal key besides the user's
    assert e.port > 0 and e.host == "127.0.0.1"


def test_prefix_store_matches_torch():
    eb, tb = edist.HashStore(), tdist.HashStore()
    _same_ops(edist.PrefixStore("p", eb), tdist.PrefixStore("p", tb))
    assert eb.get("p/a") == tb.get("p/a") == b"hello"


@pytest.mark.parametrize("kind", ["hash", "file", "tcp"])
def test_timeouts_raise_dist_store_error(kind, tmp_path):
    if kind == "hash":
        s = edist.HashStore()
    elif kind == "file":
        s = edist.FileStore(str(tmp_path / "f"), 1)
    else:
        s = edist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=10))
    assert s.timeout == (timedelta(seconds=300) if kind != "tcp" else timedelta(seconds=10))
    s.set_timeout(timedelta(milliseconds=200))
    assert s.timeout == timedelta(milliseconds=200)
    t0 = time.monotonic()
    with pytest.raises(edist.DistStoreError, match="timeout"):
        s.get("missing")
    with pytest.raises(edist.DistStoreError):
        s.wait(["missing"], timedelta(milliseconds=100))
    dt = time.monotonic() - t0
    assert 0.25 < dt < 5
    assert issubclass(edist.DistStoreError, edist.DistError) and issubclass(edist.DistError, RuntimeError)
    s.set("k", "v")  # still usable after a timeout
    assert s.get("k") == b"v"


def test_tcp_store_connect_errors():
    probe = edist.TCPStore("127.0.0.1", 0, 1, True)
    port = probe.port
    with pytest.raises(edist.DistNetworkError, match="address already in use"):
        edist.TCPStore("127.0.0.1", port, 1, True, timeout=timedelta(seconds=1))
    del probe
    t0 = time.monotonic()
    with pytest.raises(edist.DistNetworkError, match="could not connect"):
        edist.TCPStore("127.0.0.1", port, 1, False, timeout=timedelta(milliseconds=300))
    with pytest.raises(edist.DistStoreError, match="1/2 clients joined"):
        edist.TCPStore("127.0.0.1", 0, 2, True, timeout=timedelta(milliseconds=300))
    assert time.monotonic() - t0 < 5


_CLIENT = """
import sys
from datetime import timedelta
import ember.distributed as dist
s = dist.TCPStore("127.0.0.1", int(sys.argv[1]), 2, False, timeout=timedelta(seconds=20))
s.set("from_client", "hi")
print(s.get("from_master").decode(), s.add("counter", 10), flush=True)
s.wait(["done"])
"""


def test_tcp_store_across_processes():
    # The master waits (wait_for_workers) for the client process, then both see each other's keys.
    import socket  # noqa: PLC0415

    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=PYROOT)
    p = subprocess.Popen([sys.executable, "-c", _CLIENT, str(port)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        m = edist.TCPStore("127.0.0.1", port, 2, True, timeout=timedelta(seconds=20))
        m.set("from_master", "hello")
        assert m.get("from_client") == b"hi"
        m.wait(["counter"])
        assert m.add("counter", 1) == 11
        m.set("done", "1")
        out, _ = p.communicate(timeout=20)
        assert out.split() == ["hello", "10"]
        assert p.returncode == 0
    finally:
        if p.poll() is None:
            p.kill()


def test_file_store_removed_after_world_size_closes(tmp_path):
    path = str(tmp_path / "store")
    a = edist.FileStore(path, 2)
    b = edist.FileStore(path, 2)
    a.set("k", "1")
    assert b.get("k") == b"1"
    del a
    assert os.path.exists(path)
    del b
    assert not os.path.exists(path)
