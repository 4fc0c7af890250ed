"""ember.cpu memory statistics and memory history against allocations the tests make themselves.

Block sizes follow the CPU allocator's documented rounding (docs/design.md, Tensors and memory):
requests under 256 KiB round up to 64 bytes; larger ones to a quarter of their power of two.
"""
import inspect
import pickle

import pytest

import ember
from ember.cpu import memory as cm

MIB = 1 << 20


@pytest.fixture(autouse=True)
def quiet_allocator():
    cm._record_memory_history(None)
    ember.cpu.empty_cache()
    yield
    cm._record_memory_history(None)


def test_counters_follow_known_allocations():
    ember.cpu.reset_peak_memory_stats()
    ember.cpu.reset_accumulated_memory_stats()
    s0 = ember.cpu.memory_stats()
    base = ember.cpu.memory_allocated()
    assert s0["allocated_bytes.all.current"] == base and s0["allocated_bytes.all.allocated"] == 0

    a = ember.empty(1000, 1000)  # 4,000,000 bytes -> a 4 MiB block
    b = ember.empty(10)          # 40 bytes -> 64
    assert ember.cpu.memory_allocated() - base == 4 * MIB + 64
    s1 = ember.cpu.memory_stats()
    assert s1["allocation.all.current"] - s0["allocation.all.current"] == 2
    assert s1["allocation.all.allocated"] == 2 and s1["allocation.all.freed"] == 0
    assert s1["allocated_bytes.all.allocated"] == 4 * MIB + 64
    assert ember.cpu.max_memory_allocated() == base + 4 * MIB + 64
    assert ember.cpu.memory_reserved() >= ember.cpu.memory_allocated()

    del a
    s2 = ember.cpu.memory_stats()
    assert ember.cpu.memory_allocated() - base == 64
    assert s2["allocated_bytes.all.freed"] == 4 * MIB and s2["allocation.all.freed"] == 1
    assert ember.cpu.max_memory_allocated() == base + 4 * MIB + 64  # the peak stays
    # the freed large block is cached: still reserved until empty_cache
    assert s2["cached_bytes.all.current"] >= 4 * MIB
    assert ember.cpu.memory_reserved() - ember.cpu.memory_allocated() >= 4 * MIB
    c = ember.empty(1000, 1000)  # served from the cache
    assert ember.cpu.memory_stats()["num_cache_hits"] >= 1
    del c
    ember.cpu.empty_cache()
    assert ember.cpu.memory_reserved() == ember.cpu.memory_allocated()

    ember.cpu.reset_peak_memory_stats()
    assert ember.cpu.max_memory_allocated() == ember.cpu.memory_allocated()
    assert ember.cpu.max_memory_reserved() == ember.cpu.memory_reserved()
    del b
    ember.cpu.reset_accumulated_memory_stats()
    assert ember.cpu.memory_stats()["allocation.all.allocated"] == 0
    assert "Allocated memory" in ember.cpu.memory_summary()


def test_failed_allocation_is_counted_and_changes_nothing():
    before = ember.cpu.memory_stats()
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory"):
        ember.empty(1 << 50, dtype=ember.uint8)
    after = ember.cpu.memory_stats()
    assert after["num_ooms"] == before["num_ooms"] + 1
    assert after["allocation.all.current"] == before["allocation.all.current"]
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]


def test_device_argument():
    assert ember.cpu.memory_allocated("cpu") == ember.cpu.memory_allocated(ember.device("cpu"))
    with pytest.raises(ValueError):
        ember.cpu.memory_allocated("cuda")
    with pytest.raises(ValueError):
        cm._record_memory_history("sometimes")


def _make_big():
    return ember.zeros(3 * MIB // 4, dtype=ember.float32), inspect.currentframe().f_lineno


def _blocks():
    return {seg["address"]: seg["blocks"][0] for seg in cm._snapshot()["segments"]}


def test_snapshot_names_the_line_that_allocated():
    cm._record_memory_history("all", max_entries=100)
    t, line = _make_big()
    block = _blocks()[t.data_ptr()]
    assert block["size"] == 3 * MIB and block["requested_size"] == 3 * MIB and block["state"] == "active_allocated"
    assert block["op"] == "aten::zeros"
    top = block["frames"][0]
    assert top == {"filename": __file__, "line": line, "name": "_make_big"}
    assert block["frames"][1]["name"] == "test_snapshot_names_the_line_that_allocated"
    ptr = t.data_ptr()
    del t
    assert ptr not in _blocks()
    actions = [(a["action"], a["addr"]) for a in cm._snapshot()["device_traces"][0]]
    assert ("alloc", ptr) in actions and ("free_completed", ptr) in actions
    assert actions.index(("alloc", ptr)) < actions.index(("free_completed", ptr))
    cm._record_memory_history(None)
    assert cm._snapshot() == {"segments": [], "device_traces": [[]]}


def test_snapshot_of_backward_allocations_names_the_node_and_the_backward_line(tmp_path):
    x = ember.randn(64, 64, requires_grad=True)
    w = ember.randn(64, 64, requires_grad=True)
    loss = ember.mm(x, w).sum()
    cm._record_memory_history("state")
    loss.backward(); line = inspect.currentframe().f_lineno  # noqa: E702
    block = _blocks()[x.grad.data_ptr()]
    assert block["op"] in ("MmBackward0", "AccumulateGrad")  # made inside a backward node
    assert block["frames"][0]["filename"] == __file__ and block["frames"][0]["line"] == line
    assert cm._snapshot()["device_traces"] == [[]]  # "state" keeps no trace
    path = tmp_path / "snap.pickle"
    cm._dump_snapshot(str(path))
    assert pickle.load(open(path, "rb"))["segments"]


def test_out_of_memory_names_the_largest_live_allocations():
    cm._record_memory_history("state")
    keep, line = _make_big()
    small = ember.ones(4)  # noqa: F841
    with pytest.raises(RuntimeError) as err:
        ember.empty(1 << 50, dtype=ember.uint8)
    msg = str(err.value)
    assert "Largest live allocations by source line" in msg
    first = msg.split("Largest live allocations by source line (memory history): ")[1].split(";")[0]
    assert first.startswith("3.00 MiB at ") and f"{__file__}:{line} in _make_big" in first
    del keep
    cm._record_memory_history(None)
    with pytest.raises(RuntimeError) as err:
        ember.empty(1 << 50, dtype=ember.uint8)
    assert "Largest live" not in str(err.value)


def test_history_adds_nothing_to_results():
    cm._record_memory_history("all")
    a = ember.arange(6.0).reshape(2, 3)
    assert (a * 2).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_cache_limit_trims_and_bounds_the_cache():
    """Note [CPU cache limit]: freed blocks past the limit go back to the system."""
    import ember
    old = ember.cpu.memory.get_cache_limit()
    try:
        ember.cpu.empty_cache()
        blocks = [ember.empty(1 << 20) for _ in range(4)]  # 4 MiB each
        del blocks
        cached = ember.cpu.memory_reserved() - ember.cpu.memory_allocated()
        assert cached >= 4 * (4 << 20)
        ember.cpu.memory.set_cache_limit(8 << 20)  # trims now
        assert ember.cpu.memory_reserved() - ember.cpu.memory_allocated() <= 8 << 20
        ember.cpu.memory.set_cache_limit(0)  # nothing is kept from now on
        t = ember.empty(1 << 20)
        del t
        assert ember.cpu.memory_reserved() == ember.cpu.memory_allocated()
        with pytest.raises(RuntimeError):
            ember.cpu.memory.set_cache_limit(-1)
    finally:
        ember.cpu.memory.set_cache_limit(old)
