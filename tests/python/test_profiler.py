"""ember.profiler / ember.autograd.profiler: what is recorded (ops, backward nodes, ranges), the table,
the Chrome trace, schedules, memory and FLOPs; torch's profiler is the reference for names and counts."""
import json
import os
import threading

import pytest
import torch

import ember
import ember.nn as nn
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _counts(prof, names):
    avg = {e.key: e for e in prof.key_averages()}
    return {n: (avg[n].count if n in avg else 0) for n in names}


def _program(lib, x, w):
    for _ in range(3):
        y = lib.mm(x, w)
    for _ in range(2):
        y = y + 1
    return lib.relu(y)


def test_op_names_and_call_counts_match_torch():
    names = ["aten::mm", "aten::add", "aten::relu"]
    with profile(activities=[ProfilerActivity.CPU]) as ep:
        _program(ember, ember.randn(4, 5), ember.randn(5, 6))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tp:
        _program(torch, torch.randn(4, 5), torch.randn(5, 6))
    assert _counts(ep, names) == _counts(tp, names) == {"aten::mm": 3, "aten::add": 2, "aten::relu": 1}


def test_table_layout_and_times():
    x, w = ember.randn(32, 32), ember.randn(32, 32)
    with profile() as prof:
        with record_function("outer"):
            _program(ember, x, w)
    avgs = prof.key_averages()
    for e in avgs:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-6
        assert e.cpu_time == pytest.approx(e.cpu_time_total / e.count)
    outer = next(e for e in avgs if e.key == "outer")
    assert outer.cpu_time_total >= sum(e.cpu_time_total for e in avgs if e.key.startswith("aten::")) - 1e-6
    table = avgs.table(sort_by="self_cpu_time_total", row_limit=2)
    lines = table.splitlines()
    header = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    assert lines[1].split("  ") and all(h in lines[1] for h in header)
    assert "CPU Mem" not in lines[1] and "Input Shapes" not in lines[1]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert len(lines) == 3 + 2 + 2  # rule, header, rule, 2 rows, rule, total
    assert lines[-1].startswith("Self CPU time total: ")
    rows = lines[3:5]
    self_times = sorted((e.self_cpu_time_total for e in avgs), reverse=True)[:2]
    assert [r.split()[0] for r in rows] == [e.key for e in sorted(avgs, key=lambda e: -e.self_cpu_time_total)[:2]]
    assert self_times[0] >= self_times[1]
    with pytest.raises(ValueError, match="sort_by"):
        avgs.table(sort_by="bogus")


def test_record_function_ranges_nest_and_decorate():
    @record_function("decorated")
    def f(x):
        return x * 2

    x = ember.ones(3)
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                f(x)
            x.sin()
    ev = {e.name: e for e in prof.events()}
    outer, inner, dec, mul, sin = (ev[n] for n in ("outer", "inner", "decorated", "aten::mul", "aten::sin"))
    assert inner.cpu_parent is outer and dec.cpu_parent is inner and mul.cpu_parent is dec
    assert sin.cpu_parent is outer
    for child, parent in ((inner, outer), (dec, inner), (mul, dec), (sin, outer)):
        assert parent.time_range.start <= child.time_range.start <= child.time_range.end <= parent.time_range.end
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner.cpu_time_total - sin.cpu_time_total)
    # outside a profiler a range costs nothing and records nothing
    with record_function("nothing"):
        pass


def test_backward_nodes_are_linked_to_their_forward_ops():
    x = ember.randn(4, 5, requires_grad=True)
    w = ember.randn(5, 3, requires_grad=True)
    with profile() as prof:
        loss = ember.relu(ember.mm(x, w) + 1).sum()
        with record_function("bw"):
            loss.backward()
    ev = prof.events()
    bw = next(e for e in ev if e.name == "bw")
    nodes = [e for e in ev if "Backward" in e.name or e.name == "AccumulateGrad"]
    assert nodes and all(e.cpu_parent is bw for e in nodes)  # the engine's ranges nest in the caller's
    assert {e.id for e in bw.cpu_children} == {e.id for e in nodes}
    assert sum(e.cpu_time_total for e in nodes) <= bw.cpu_time_total
    names = {e.name for e in ev}
    tx, tw = torch.randn(4, 5, requires_grad=True), torch.randn(5, 3, requires_grad=True)
    with torch.profiler.profile() as tp:
        torch.relu(torch.mm(tx, tw) + 1).sum().backward()
    torch_names = {e.name for e in tp.events()}
    for n in ("MmBackward0", "AddBackward0", "ReluBackward0"):
        assert n in names and n in torch_names
    assert sum(e.name == "AccumulateGrad" for e in ev) == 2
    mm = next(e for e in ev if e.name == "aten::mm")
    mm_back = next(e for e in ev if e.name == "MmBackward0")
    assert mm.sequence_nr >= 0 and mm_back.sequence_nr == mm.sequence_nr
    assert mm_back.fwd_thread == mm.thread
    assert mm_back.time_range.start > mm.time_range.end


def test_optimizer_steps_and_dataloader_fetches_are_labelled():
    model = nn.Linear(4, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    data = ember.utils.data.TensorDataset(ember.randn(8, 4))
    loader = ember.utils.data.DataLoader(data, batch_size=4)
    with profile() as prof:
        for (xb,) in loader:
            opt.zero_grad()
            model(xb).sum().backward()
            opt.step()
    counts = _counts(prof, ["Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad",
                            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "aten::linear"])
    # two batches, and the __next__ that raised StopIteration
    assert counts == {"Optimizer.step#SGD.step": 2, "Optimizer.zero_grad#SGD.zero_grad": 2,
                      "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__": 3, "aten::linear": 2}


def test_chrome_trace_schema(tmp_path):
    x = ember.randn(16, 16, requires_grad=True)
    with profile(record_shapes=True, profile_memory=True) as prof:
        with record_function("step"):
            ember.mm(x, x).sum().backward()
    path = prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.load(open(path))
    assert isinstance(trace["traceEvents"], list) and trace["displayTimeUnit"] == "ms"
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(prof.events())
    for e in complete:
        assert {"name", "cat", "pid", "tid", "ts", "dur", "args"} <= set(e)
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and e["pid"] == os.getpid()
    by_name = {e["name"]: e for e in complete}
    step, mm = by_name["step"], by_name["aten::mm"]
    assert step["cat"] == "user_annotation" and mm["cat"] == "cpu_op"
    assert step["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= step["ts"] + step["dur"] + 1e-3
    assert mm["args"]["Input Dims"] == [[16, 16], [16, 16]] and mm["args"]["Input type"] == ["float", "float"]
    # forward -> backward arrows pair up by id
    starts = {e["id"] for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"] for e in trace["traceEvents"] if e["ph"] == "f"}
    assert starts == ends and mm["args"]["Sequence number"] in starts
    mem = [e for e in trace["traceEvents"] if e["ph"] == "i" and e["name"] == "[memory]"]
    assert any(e["args"]["Bytes"] == 16 * 16 * 4 for e in mem) and any(e["args"]["Bytes"] < 0 for e in mem)
    assert {e["ph"] for e in trace["traceEvents"]} <= {"X", "M", "s", "f", "i"}


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=2),
                                dict(wait=0, warmup=2, active=1, repeat=1, skip_first=3),
                                dict(wait=2, warmup=1, active=3, repeat=0, skip_first=1, skip_first_wait=1)])
def test_schedule_matches_torch(kw):
    mine, ref = schedule(**kw), torch.profiler.schedule(**kw)
    assert [mine(i).name for i in range(25)] == [ref(i).name for i in range(25)]
    assert mine(0) in ProfilerAction
    # on_trace_ready fires when torch's does, and the traces hold the steps a cycle recorded
    for steps in (3, 7, 12):
        ours, theirs, recorded = [], [], []

        def handler(p):
            ours.append(p.step_num)
            recorded.append(sorted(e.key for e in p.key_averages() if e.key.startswith("ProfilerStep#")))

        with profile(schedule=schedule(**kw), on_trace_ready=handler) as p:
            for _ in range(steps):
                ember.ones(1).add_(1)
                p.step()
        with torch.profiler.profile(schedule=torch.profiler.schedule(**kw),
                                    on_trace_ready=lambda tp: theirs.append(tp.step_num)) as tp:
            for _ in range(steps):
                torch.ones(1).add_(1)
                tp.step()
        assert ours == theirs
        for step_num, names in zip(ours, recorded):
            # the recording steps that end at (on exit) or just before (at a step()) step_num
            rec = [s for s in range(step_num + 1) if mine(s).name.startswith("RECORD")]
            last = rec[-1]
            cycle = [s for s in rec if last - s < kw["active"]]
            assert names == sorted(f"ProfilerStep#{s}" for s in cycle)


def test_memory_columns_count_allocations():
    with profile(profile_memory=True) as prof:
        with record_function("make"):
            a = ember.empty(1 << 20)  # 4 MiB
        with record_function("drop"):
            del a
        b = ember.ones(16) * 2  # noqa: F841
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::empty"].self_cpu_memory_usage == 4 << 20
    assert avg["make"].cpu_memory_usage == 4 << 20 and avg["make"].self_cpu_memory_usage == 0
    assert avg["drop"].self_cpu_memory_usage == -(4 << 20)
    assert avg["aten::mul"].self_cpu_memory_usage > 0
    table = prof.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "4.00 MB" in table and "-4.00 MB" in table


def test_shapes_and_flops_match_torch():
    def run(lib):
        x = lib.ones(8, 16)
        w = lib.ones(4, 16)
        img = lib.ones(2, 3, 10, 10)
        k = lib.ones(5, 3, 3, 3)
        lib.mm(x, w.t())
        lib.nn.functional.linear(x, w)
        lib.nn.functional.conv2d(img, k, padding=1)

    with profile(record_shapes=True, with_flops=True) as ep:
        run(ember)
    with torch.profiler.profile(record_shapes=True, with_flops=True) as tp:
        run(torch)
    e_flops = sum(e.flops for e in ep.events())
    t_flops = sum(e.flops for e in tp.events())
    assert e_flops == t_flops == 2 * 8 * 16 * 4 * 2 + 2 * (2 * 5 * 10 * 10) * (3 * 3 * 3)
    shapes = {e.key: e.input_shapes for e in ep.key_averages(group_by_input_shape=True)}
    tshapes = {e.key: e.input_shapes for e in tp.key_averages(group_by_input_shape=True)}
    assert shapes["aten::mm"] == tshapes["aten::mm"] == [[8, 16], [16, 4]]
    assert shapes["aten::linear"][:2] == [[8, 16], [4, 16]]
    table = ep.key_averages(group_by_input_shape=True).table(sort_by="flops")
    assert "Input Shapes" in table and "Total KFLOPs" in table and "[[8, 16], [16, 4]]" in table


def test_with_stack_names_this_file():
    x = ember.ones(3)
    with profile(with_stack=True) as prof:
        x.cos()
        line = test_with_stack_names_this_file.__code__.co_firstlineno + 3
    cos = next(e for e in prof.events() if e.name == "aten::cos")
    assert cos.stack[0] == f"{__file__}({line}): test_with_stack_names_this_file"
    table = prof.key_averages(group_by_stack_n=2).table(max_src_column_width=500)
    assert "Source Location" in table and f"({line}): test_with_stack_names_this_file" in table


def test_threads_get_their_own_ids():
    def work():
        ember.ones(2).exp()

    with profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        ember.ones(2).exp()
    threads = {e.thread for e in prof.events() if e.name == "aten::exp"}
    assert len(threads) == 2


def test_legacy_profiler_and_trace_handler(tmp_path):
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        with ember.autograd.profiler.record_function("block"):
            ember.ones(2).neg()
    assert {"block", "aten::neg", "aten::ones"} <= {e.name for e in prof.function_events}
    assert "aten::neg" in prof.table() and prof.self_cpu_time_total > 0
    with ember.autograd.profiler.profile(enabled=False) as off:
        ember.ones(1)
    with pytest.raises(RuntimeError, match="didn't finish"):
        off.key_averages()
    out = tmp_path / "tb"
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=ember.profiler.tensorboard_trace_handler(str(out), worker_name="w")) as p:
        for _ in range(3):
            ember.ones(1).add(1)
            p.step()
    files = os.listdir(out)
    assert len(files) == 1 and files[0].startswith("w.") and files[0].endswith(".pt.trace.json")
    assert any(e.get("name") == "aten::add" for e in json.load(open(out / files[0]))["traceEvents"])


def test_misuse_raises():
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile():
                pass
    with profile() as p:
        ember.ones(1)
    with pytest.raises(RuntimeError, match="record_shapes"):
        p.key_averages(group_by_input_shape=True)
    with pytest.raises(ValueError):
        schedule(wait=0, warmup=0, active=0)


def test_nothing_recorded_outside_a_session():
    ember.ones(3).sin()  # before
    with profile() as prof:
        pass
    assert len(prof.events()) == 0
    assert not ember._C._profiler._is_profiling()
