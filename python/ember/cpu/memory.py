"""CPU allocator statistics and memory history (the shape of torch.cuda.memory's API).

Sizes are the allocator's block sizes (requests rounded to 64 bytes, or to a quarter of a power of
two from 256 KiB on). "reserved" is allocated plus cached (freed blocks kept for reuse).
"""
import pickle
import sys
from collections import OrderedDict

from ember import _C

__all__ = ["memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "reset_max_memory_allocated",
           "empty_cache", "memory_summary", "memory_snapshot"]

_M = _C._memory


def _check_device(device):
    if device is None or device == "cpu" or getattr(device, "type", None) == "cpu":
        return
    raise ValueError(f"ember.cpu memory functions describe the CPU allocator; got device {device!r}")


def memory_stats(device=None):
    """The allocator's counters as an OrderedDict with torch.cuda.memory_stats' key names
    ("allocated_bytes.all.current", "allocation.all.peak", "num_ooms", ...)."""
    _check_device(device)
    c = _M._counters()
    stats = OrderedDict()
    for kind in ("allocated_bytes", "active_bytes"):
        stats[f"{kind}.all.current"] = c["allocated_bytes"]
        stats[f"{kind}.all.peak"] = c["allocated_bytes_peak"]
        stats[f"{kind}.all.allocated"] = c["allocated_bytes_total"]
        stats[f"{kind}.all.freed"] = c["freed_bytes_total"]
    stats["reserved_bytes.all.current"] = c["reserved_bytes"]
    stats["reserved_bytes.all.peak"] = c["reserved_bytes_peak"]
    for kind in ("allocation", "active"):
        stats[f"{kind}.all.current"] = c["allocations"]
        stats[f"{kind}.all.peak"] = c["allocations_peak"]
        stats[f"{kind}.all.allocated"] = c["allocations_total"]
        stats[f"{kind}.all.freed"] = c["frees_total"]
    stats["cached_bytes.all.current"] = c["cached_bytes"]
    stats["num_cache_hits"] = c["cache_hits"]
    stats["num_ooms"] = c["num_ooms"]
    return OrderedDict(sorted(stats.items()))


def memory_allocated(device=None):
    """Bytes held by live tensors."""
    _check_device(device)
    return _M._counters()["allocated_bytes"]


def max_memory_allocated(device=None):
    """Peak of memory_allocated() since start or the last reset_peak_memory_stats()."""
    _check_device(device)
    return _M._counters()["allocated_bytes_peak"]


def memory_reserved(device=None):
    """Bytes held by the allocator: live blocks plus cached free ones."""
    _check_device(device)
    return _M._counters()["reserved_bytes"]


def max_memory_reserved(device=None):
    _check_device(device)
    return _M._counters()["reserved_bytes_peak"]


def reset_peak_memory_stats(device=None):
    """Sets every peak counter to its current value."""
    _check_device(device)
    _M._reset_peak()


def reset_max_memory_allocated(device=None):
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None):
    """Zeroes the accumulated counters (".allocated", ".freed", cache hits, OOMs)."""
    _check_device(device)
    _M._reset_accumulated()


def set_cache_limit(nbytes):
    """Keeps at most nbytes of freed blocks for reuse (default 4 GiB, or EMBER_CPU_CACHE_LIMIT_MB
    at start-up); blocks past it go back to the system, and the cache is trimmed now if it is
    larger (Note [CPU cache limit] in csrc/ember/core/allocator.cpp). 0 disables the cache."""
    _C._cpu_set_cache_limit(int(nbytes))


def get_cache_limit():
    """The current limit of set_cache_limit, in bytes."""
    return _C._cpu_cache_limit()


def empty_cache():
    """Returns every cached free block to the system."""
    _M._empty_cache()


def _fmt(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def memory_summary(device=None, abbreviated=False):
    """A readable summary of memory_stats()."""
    c = _M._counters()
    rows = [("Allocated memory", c["allocated_bytes"], c["allocated_bytes_peak"], c["allocated_bytes_total"],
             c["freed_bytes_total"], _fmt),
            ("Reserved memory", c["reserved_bytes"], c["reserved_bytes_peak"], None, None, _fmt),
            ("Allocations", c["allocations"], c["allocations_peak"], c["allocations_total"], c["frees_total"], str)]
    row = "| {:<22}|{:>12} |{:>12} |{:>12} |{:>12} |"
    width = len(row.format("", "", "", "", "")) - 2
    lines = ["|" + "=" * width + "|", "|" + "ember.cpu memory summary".center(width) + "|", "|" + "-" * width + "|",
             row.format("Metric", "Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed")]
    for name, cur, peak, tot, freed, f in rows:
        lines.append(row.format(name, f(cur), f(peak), "" if tot is None else f(tot), "" if freed is None else f(freed)))
    lines.append("|" + "-" * width + "|")
    note = (f"Cached free blocks: {_fmt(c['cached_bytes'])}; cache hits: {c['cache_hits']}; "
            f"out-of-memory errors: {c['num_ooms']}")
    lines.append("| " + note.ljust(width - 1) + "|")
    lines.append("|" + "=" * width + "|")
    return "\n".join(lines) + "\n"


# ---- memory history ----

def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None):
    """Starts (or, with enabled=None, stops and forgets) recording each live allocation with the
    Python stack that made it. "state": live blocks only; "all": also a trace of the last
    max_entries alloc/free actions. While on, every op call captures its stack (slow: for debugging),
    and an out-of-memory error names the largest live allocations by source line."""
    if enabled is True:
        enabled = "all"
    if enabled is False:
        enabled = None
    if enabled not in (None, "state", "all"):
        raise ValueError(f"enabled must be None, 'state' or 'all'; got {enabled!r}")
    if enabled is None:
        _M._record_history(False)
    else:
        _M._record_history(True, enabled == "all", int(min(max_entries, sys.maxsize)))


def _frames(frames):
    return [{"filename": f, "line": line, "name": name} for f, line, name, _ in frames]


def _snapshot(device=None):
    """Live blocks (each a segment of its own: the CPU allocator does not split blocks) and the trace
    of recent actions, in the layout of torch.cuda.memory._snapshot(); frames innermost first."""
    blocks, trace = _M._snapshot()
    segments = []
    for addr, size, requested, tid, ts, op, frames in blocks:
        fr = _frames(frames)
        segments.append({"device": "cpu", "address": addr, "total_size": size, "allocated_size": size,
                         "active_size": size, "requested_size": requested, "stream": 0,
                         "segment_type": "large" if size >= 1 << 20 else "small", "thread": tid, "frames": fr,
                         "blocks": [{"address": addr, "size": size, "requested_size": requested,
                                     "state": "active_allocated", "op": op, "frames": fr}]})
    actions = [{"action": "alloc" if a == "a" else "free_completed", "addr": addr, "size": size, "stream": 0,
                "time_us": ts // 1000, "op": op, "frames": _frames(frames)}
               for a, addr, size, ts, op, frames in trace]
    return {"segments": segments, "device_traces": [actions]}


def _dump_snapshot(filename="dump_snapshot.pickle"):
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


def memory_snapshot():
    """The live blocks of _snapshot() (empty unless the memory history is on)."""
    return _snapshot()["segments"]
