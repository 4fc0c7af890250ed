"""ember.utils.benchmark: Timer, Measurement statistics (against torch's on the same times), Compare."""
import time

import numpy as np
import pytest
import torch.utils.benchmark as tb

import ember
from ember.utils.benchmark import Compare, Measurement, TaskSpec, Timer


def _spec(**kw):
    base = dict(stmt="x + 1", setup="pass", global_setup="", label=None, sub_label=None, description=None,
                env=None, num_threads=1)
    base.update(kw)
    return base


@pytest.mark.parametrize("raw", [[3e-6, 1e-6, 2e-6, 2.5e-6, 9e-6, 1.5e-6], [1.0], [0.4, 0.41, 0.39, 0.4],
                                 list(np.random.default_rng(0).lognormal(-10, 0.3, 51))])
def test_measurement_statistics_match_torch(raw):
    ours = Measurement(10, raw, TaskSpec(**_spec()))
    ref = tb.Measurement(10, raw, tb.utils.common.TaskSpec(**_spec()))
    assert ours.times == pytest.approx(ref.times)
    assert ours.mean == pytest.approx(ref.mean)
    assert ours.median == pytest.approx(ref.median)
    assert ours.iqr == pytest.approx(ref.iqr)
    assert ours.significant_figures == ref.significant_figures
    assert ours.has_warnings == ref.has_warnings
    assert ours.meets_confidence(0.1) == ref.meets_confidence(0.1)
    times = np.array(raw) / 10
    assert ours.median == pytest.approx(np.median(times))
    assert ours.iqr == pytest.approx(np.percentile(times, 75) - np.percentile(times, 25))


def test_timeit_measures_a_known_duration():
    t = Timer("time.sleep(0.002)", setup="import time")
    m = t.timeit(number=5)
    assert m.number_per_run == 5 and len(m.times) == 1 and len(m.raw_times) == 1
    assert 0.002 <= m.median < 0.05  # sleeping never takes less; a loaded machine can take longer


def test_setup_runs_once_per_measurement_and_globals_are_seen():
    calls = []
    t = Timer("f()", setup="calls.append('setup')", globals={"f": lambda: calls.append("stmt"), "calls": calls})
    t.timeit(number=7)
    # warm-up (max(7 // 100, 2) runs) and measurement each run setup once
    assert calls.count("setup") == 2 and calls.count("stmt") == 2 + 7
    # torch (bound to ember) and ember are in the namespace, as torch's Timer offers torch
    m = Timer("torch.add(x, 1)", globals={"x": ember.ones(3)}).timeit(number=10)
    assert m.median > 0


def test_blocked_and_adaptive_autorange():
    t = Timer("x * 2", globals={"x": ember.ones(64)}, label="mul", sub_label="64", description="ember")
    start = time.perf_counter()
    m = t.blocked_autorange(min_run_time=0.05)
    assert time.perf_counter() - start >= 0.05
    assert sum(m.raw_times) >= 0.05 * 0.5 and m.number_per_run >= 1
    assert m.times == pytest.approx([r / m.number_per_run for r in m.raw_times])
    assert m.title == "mul: 64" and m.description == "ember" and m.label == "mul"
    seen = []
    a = t.adaptive_autorange(threshold=0.5, min_run_time=0.01, max_run_time=1.0,
                             callback=lambda n, s: seen.append((n, s)))
    assert len(a.raw_times) >= 3 and len(seen) == len(a.raw_times)
    r = repr(a)
    assert r.splitlines()[1:3] == ["mul: 64", "ember"] and "Median:" in r and "IQR:" in r
    assert f"{len(a.times)} measurements, {a.number_per_run} runs per measurement, 1 thread" in r


def test_num_threads_applies_while_timing():
    seen = []
    before = ember.get_num_threads()
    Timer("seen.append(ember.get_num_threads())", globals={"seen": seen}, num_threads=1).timeit(number=3)
    assert set(seen) == {1}
    assert ember.get_num_threads() == before
    with pytest.raises(ValueError):
        Timer("pass", num_threads=0)
    with pytest.raises(NotImplementedError):
        Timer("pass", language="cpp")


def test_compare_table():
    results = []
    for size in (10, 1000):
        for desc, stmt in (("add", "x + x"), ("mul", "x * x")):
            results.append(Timer(stmt, globals={"x": ember.ones(size)}, label="pointwise", sub_label=str(size),
                                 description=desc).blocked_autorange(min_run_time=0.01))
    c = Compare(results)
    text = str(c)
    lines = text.splitlines()
    assert lines[0].startswith("[") and "pointwise" in lines[0]
    assert "add" in lines[1] and "mul" in lines[1] and lines[1].index("add") < lines[1].index("mul")
    assert lines[2].startswith("1 threads: ")
    rows = {line.split("|")[0].strip(): line for line in lines[3:5]}
    assert set(rows) == {"10", "1000"}
    unit = text.split("Times are in ")[1].split("(")[1].split(")")[0]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
    for m in results:
        cells = rows[m.sub_label].split("|")[1:]
        cell = cells[0 if m.description == "add" else 1]
        assert float(cell) == pytest.approx(m.median / scale, abs=0.06)
    c.trim_significant_figures()
    c.colorize()
    assert "\033[" in str(c)
    with pytest.raises(ValueError):
        Compare([1.0])
