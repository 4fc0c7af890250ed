"""Profiler results: FunctionEvent, FunctionEventAvg, EventList (tables, chrome traces), as torch's.

Times are in microseconds, memory in bytes. Events come from the C++ recorder
(csrc/ember/profiler/profiler.h) as tuples; `_events_from_raw` builds the tree (children,
self time, memory including children, FLOPs) once.
"""
import ast
import gzip
import json
import math
import os
import time
from collections import OrderedDict

from ember import _C

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "DeviceType"]

_KIND_OP, _KIND_BACKWARD, _KIND_USER = 0, 1, 2


class DeviceType:
    CPU = "CPU"


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def _flops(name, shapes, out_shapes):
    """Multiply-adds x 2 of the matrix products and convolutions (0 for other ops or unknown shapes)."""
    try:
        if name == "aten::mm" and len(shapes) >= 2:
            (m, k), (_, n) = shapes[0], shapes[1]
            return 2 * m * k * n
        if name == "aten::addmm" and len(shapes) >= 3:
            (m, k), (_, n) = shapes[1], shapes[2]
            return 2 * m * k * n
        if name == "aten::bmm" and len(shapes) >= 2:
            (b, m, k), (_, _, n) = shapes[0], shapes[1]
            return 2 * b * m * k * n
        if name in ("aten::baddbmm", "aten::addbmm") and len(shapes) >= 3:
            (b, m, k), (_, _, n) = shapes[1], shapes[2]
            return 2 * b * m * k * n
        if name == "aten::matmul" and len(shapes) >= 2 and out_shapes:
            return 2 * _prod(out_shapes[0]) * shapes[0][-1]
        if name == "aten::linear" and len(shapes) >= 2:
            x, w = shapes[0], shapes[1]
            return 2 * _prod(x[:-1]) * x[-1] * (w[0] if len(w) == 2 else 1)
        if name in ("aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution") and out_shapes:
            return 2 * _prod(out_shapes[0]) * _prod(shapes[1][1:])
        if name.startswith("aten::conv_transpose") and len(shapes) >= 2:
            return 2 * _prod(shapes[0]) * _prod(shapes[1][1:])
    except (TypeError, ValueError, IndexError):
        return 0
    return 0


def _parse(s):
    return ast.literal_eval(s) if s else []


# Frames of the profiler's own Python code are left out of stacks.
_OWN_FILES = ("profiler.py", "profiler_util.py")


def _stack_strings(frames):
    """'file(line): function' per frame, innermost first; ember's own files as 'ember/...'."""
    out = []
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds ember/
    for file, line, name, internal in frames:
        if internal and os.path.basename(file) in _OWN_FILES:
            continue
        if internal and file.startswith(root + os.sep):
            file = file[len(root) + 1:]
        out.append(f"{file}({line}): {name}")
    return out


class FunctionEvent:
    """One recorded range: an op, a backward node, or a record_function range."""

    def __init__(self, id, name, thread, start_us, end_us, kind=_KIND_OP, sequence_nr=-1, input_shapes=None,
                 input_types=None, output_shapes=None, stack=None, self_cpu_memory_usage=0):
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = _Interval(start_us, end_us)
        self.kind = kind
        self.sequence_nr = sequence_nr
        self.fwd_thread = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types if input_types is not None else []
        self.output_shapes = output_shapes if output_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.self_cpu_memory_usage = self_cpu_memory_usage
        self.cpu_memory_usage = self_cpu_memory_usage  # children added by _events_from_raw
        self.cpu_children = []
        self.cpu_parent = None
        self.flops = 0
        self.count = 1
        self.device_type = DeviceType.CPU
        self.is_async = False
        self.is_remote = False
        self.node_id = -1
        self.cuda_time_total = self.self_cuda_time_total = 0
        self.device_time_total = self.self_device_time_total = 0
        self.cuda_memory_usage = self.self_cuda_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0

    @property
    def key(self):
        return self.name

    @property
    def is_user_annotation(self):
        return self.kind == _KIND_USER

    @property
    def is_legacy(self):
        return False

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={_format_time(self.cpu_time_total)} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} sequence_nr={self.sequence_nr}>")


class _Interval:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEventAvg:
    """Totals over the events sharing a key (name, and input shapes / stack when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.flops = 0
        self.device_type = DeviceType.CPU
        self.is_user_annotation = False
        self.cpu_parent = None
        self.cpu_children = None
        self.cuda_time_total = self.self_cuda_time_total = 0
        self.device_time_total = self.self_device_time_total = 0
        self.cuda_memory_usage = self.self_cuda_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or, from key_averages, FunctionEventAvg) with torch's reports."""

    def __init__(self, *args, profile_memory=False, with_flops=False, raw=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._raw = raw  # for export_chrome_trace: memory events and the session's times

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """Averages events by name (and input shapes, and the top group_by_stack_n stack frames)."""
        stats = OrderedDict()
        for e in self:
            key = (e.key,)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            if key not in stats:
                stats[key] = FunctionEventAvg()
            stats[key].add(e)
        out = EventList(stats.values(), profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in out:
            avg.stack = avg.stack[:group_by_stack_n] if group_by_stack_n > 0 and avg.stack else []
            if not group_by_input_shape:
                avg.input_shapes = ""
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The text table torch prints: one row per event (or average), sorted by `sort_by` (descending)."""
        return _build_table(self, sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only, profile_memory=self._profile_memory,
                            with_flops=self._with_flops, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Writes a Chrome trace (JSON, gzipped when path ends in .gz; opens in Perfetto)."""
        trace = _chrome_trace(self, self._raw, path)
        with (gzip.open(path, "wt") if str(path).endswith(".gz") else open(path, "w")) as f:
            json.dump(trace, f)
        return path

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Writes 'frame;frame;...;op value' lines (flame graph input) for events recorded with_stack."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + ";" + e.name.replace(" ", "_") + " "
                            + str(int(getattr(e, metric))) + "\n")

    def __str__(self):
        return self.table()


def _events_from_raw(raw, record_shapes=True, with_flops=False, profile_memory=False):
    """Builds FunctionEvents from the C++ recorder's tuples (ember._C._profiler._stop())."""
    events, by_id = [], {}
    for (name, kind, eid, parent, start, end, tid, seq, self_bytes, shapes, types, out_shapes,
         frames) in raw["events"]:
        in_shapes = _parse(shapes)
        e = FunctionEvent(eid, name, tid, start / 1e3, end / 1e3, kind=kind, sequence_nr=seq,
                          input_shapes=in_shapes if record_shapes else [],
                          input_types=_parse(types) if record_shapes else [],
                          output_shapes=_parse(out_shapes) if record_shapes else [],
                          stack=_stack_strings(frames), self_cpu_memory_usage=self_bytes)
        e._parent_id = parent
        if with_flops and kind == _KIND_OP:
            e.flops = _flops(name, in_shapes, _parse(out_shapes))
        events.append(e)
        by_id[eid] = e
    for e in events:
        p = by_id.get(e._parent_id)
        if p is not None:
            e.cpu_parent = p
            p.cpu_children.append(e)
    # Memory including children: children start after their parent, so walk latest start first.
    depth = {}
    for e in events:
        d, p = 0, e.cpu_parent
        while p is not None:
            d, p = d + 1, p.cpu_parent
        depth[e.id] = d
    events.sort(key=lambda e: (e.time_range.start, depth[e.id]))
    for e in reversed(events):
        if e.cpu_parent is not None:
            e.cpu_parent.cpu_memory_usage += e.cpu_memory_usage
    # Backward nodes: the thread of the forward op that recorded them (same sequence number).
    fwd = {e.sequence_nr: e.thread for e in events if e.kind == _KIND_OP and e.sequence_nr >= 0}
    for e in events:
        if e.kind == _KIND_BACKWARD:
            e.fwd_thread = fwd.get(e.sequence_nr)
    return EventList(events, profile_memory=profile_memory, with_flops=with_flops, raw=raw)


def _flops_unit(events):
    top = max((e.flops for e in events), default=0)
    if top <= 0:
        return 1, "FLOPs"
    units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    i = int(max(0, min(math.log10(top) // 3, len(units) - 1)))
    return 10 ** (3 * i), units[i]


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
              "count", "flops", "cuda_time", "cuda_time_total", "self_cuda_time_total", "device_time",
              "device_time_total", "self_device_time_total", "cuda_memory_usage", "self_cuda_memory_usage",
              "device_memory_usage", "self_device_memory_usage")


def _build_table(events, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
                 max_shapes_column_width=80, header=None, top_level_events_only=False, profile_memory=False,
                 with_flops=False, time_unit=None):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(_SORT_KEYS)}; got {sort_by!r}")
        events = sorted(events, key=lambda e: getattr(e, sort_by, 0) or 0, reverse=True)
    if top_level_events_only:
        events = [e for e in events if e.cpu_parent is None]
    rows = list(events)[:row_limit] if row_limit is not None and row_limit >= 0 else list(events)

    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)
    has_flops = with_flops and any(e.flops > 0 for e in events)
    flops_scale, flops_unit = _flops_unit(events)

    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width)
    src_width = None
    if has_stack:
        src_width = min(max(len(s) for e in events for s in (e.stack or [""])) + 4, max_src_column_width)
    num_width = 12

    columns = [("Name", name_width), ("Self CPU %", num_width), ("Self CPU", num_width),
               ("CPU total %", num_width), ("CPU total", num_width), ("CPU time avg", num_width)]
    if profile_memory:
        columns += [("CPU Mem", num_width), ("Self CPU Mem", num_width)]
    columns.append(("# of Calls", num_width))
    if has_shapes:
        columns.append(("Input Shapes", shapes_width))
    if has_stack:
        columns.append(("Source Location", src_width))
    if has_flops:
        columns.append((f"Total {flops_unit}", num_width))

    def line(cells):  # right-aligned, except the source location
        return "".join(f"{c:<{w}}  " if title == "Source Location" else f"{c:>{w}}  "
                       for (title, w), c in zip(columns, cells))

    sep = "".join("-" * w + "  " for _, w in columns)
    total_self = sum(e.self_cpu_time_total for e in events) or 1e-12

    def fit(s, w):
        s = str(s)
        return s if len(s) <= w - 4 or w < 8 else s[:w - 7] + "..."

    out = []
    if header is not None:
        out += ["=" * len(sep), header]
    out += [sep, line([t for t, _ in columns]), sep]
    for e in rows:
        cells = [fit(e.key, name_width), f"{100 * e.self_cpu_time_total / total_self:.2f}%",
                 _format_time(e.self_cpu_time_total), f"{100 * e.cpu_time_total / total_self:.2f}%",
                 _format_time(e.cpu_time_total), _format_time(e.cpu_time)]
        if profile_memory:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        cells.append(str(e.count))
        if has_shapes:
            cells.append(fit(e.input_shapes, shapes_width))
        stack = list(e.stack or [])
        if has_stack:
            cells.append(fit(stack[0] if stack else "", src_width))
        if has_flops:
            cells.append(f"{e.flops / flops_scale:8.3f}" if e.flops > 0 else "--")
        out.append(line(cells))
        if has_stack:  # further frames on their own lines, then a blank one, as torch prints them
            for frame in stack[1:] + [""]:
                extra = [""] * len(columns)
                extra[[t for t, _ in columns].index("Source Location")] = fit(frame, src_width)
                out.append(line(extra))
    out.append(sep)
    out.append(f"Self CPU time total: {_format_time(sum(e.self_cpu_time_total for e in events))}")
    return "\n".join(out) + "\n"


def _chrome_trace(events, raw, path):
    pid = os.getpid()
    base_ns = time.time_ns() - _C._profiler._now_ns()  # steady clock -> wall clock
    trace = []
    threads = sorted({e.thread for e in events if hasattr(e, "thread")})
    trace.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}})
    trace.append({"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}})
    for t in threads:
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": t,
                      "args": {"name": f"thread {t} (python)"}})
    fwd_start = {}
    for i, e in enumerate(events):
        args = {"External id": e.id, "Ev Idx": i}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.kind == _KIND_BACKWARD and e.fwd_thread is not None:
            args["Fwd thread id"] = e.fwd_thread
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_types
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        if e.flops:
            args["flops"] = e.flops
        trace.append({"ph": "X", "cat": "user_annotation" if e.kind == _KIND_USER else "cpu_op", "name": e.name,
                      "pid": pid, "tid": e.thread, "ts": round(e.time_range.start, 3),
                      "dur": round(e.cpu_time_total, 3), "args": args})
        if e.kind == _KIND_OP and e.sequence_nr >= 0:
            fwd_start.setdefault(e.sequence_nr, e)
    # Arrows from each forward op to the backward node it recorded.
    for e in events:
        f = fwd_start.get(e.sequence_nr) if e.kind == _KIND_BACKWARD else None
        if f is not None:
            trace.append({"ph": "s", "id": e.sequence_nr, "pid": pid, "tid": f.thread,
                          "ts": round(f.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd"})
            trace.append({"ph": "f", "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                          "ts": round(e.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
    for ts, tid, nbytes, addr, total_alloc, total_reserved in (raw or {}).get("memory", []):
        trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid, "tid": tid,
                      "ts": round(ts / 1e3, 3),
                      "args": {"Device Type": 0, "Device Id": -1, "Addr": addr, "Bytes": nbytes,
                               "Total Allocated": total_alloc, "Total Reserved": total_reserved}})
    return {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms", "baseTimeNanoseconds": base_ns,
            "traceEvents": trace, "traceName": str(path)}
