"""Issue 10 regressions (classes 1, 2, 3, 6, 7, 10): size/stride/offset overflow, integer division
traps, unchecked index arguments, reduced-precision accumulation, NaN semantics, exception classes.

Every case in reliability_cases.py is evaluated with torch and with ember, each library in its own
worker process (probe_reliability.run_lib), so a case that crashes ember fails its group instead
of killing pytest. Ember must give torch's exception class, or torch's dtype/shape/values.
"""
import math
import os
import subprocess
import sys

import pytest

import ember
from conftest import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_reliability  # noqa: E402
import reliability_cases as rc  # noqa: E402

GROUPS = {
    "overflow": rc.OVERFLOW,
    "impossible_size": rc.IMPOSSIBLE,
    "int_division": rc.DIVISION,
    "index_args": rc.INDEX,
    "accumulation": rc.ACCUM,
    "nan": rc.NAN,
    "exception_class": rc.EXC,
    "second_sweep": rc.EXTRA,
}


@pytest.fixture(scope="module")
def outcomes():
    """(torch, ember) outcome of every case, from one worker per library (restarted after a crash)."""
    exprs = [c for c in rc.CASES if c not in rc.KNOWN_DIFFS and c not in rc.TORCH_CRASHES]
    return dict(zip(exprs, zip(probe_reliability.run_lib("torch", exprs), probe_reliability.run_lib("ember", exprs))))


def test_where_torch_crashes_ember_wraps():
    """INT_MIN / -1 with rounding_mode='trunc' kills torch 2.13; ember returns the wrapped quotient."""
    res = probe_reliability.run_lib("ember", rc.TORCH_CRASHES)
    for src, r in zip(rc.TORCH_CRASHES, res):
        assert r[0] == "tensor", (src, r)
        assert r[3] in ([-2**63, -7, 7], [-2**31, -7, 7], [-2**63]), (src, r)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_cases_match_torch(group, outcomes):
    exprs = [c for c in GROUPS[group] if c in outcomes]
    bad = [f"{src!r}\n   torch: {outcomes[src][0]}\n   ember: {outcomes[src][1]}" for src in exprs
           if not probe_reliability.same(outcomes[src][1], outcomes[src][0])]
    assert not bad, f"{len(bad)}/{len(exprs)} differ from torch:\n" + "\n".join(bad[:30])


def test_known_diffs_are_cases():
    """KNOWN_DIFFS only names cases that exist (so a fixed one can be dropped from it)."""
    assert all(k in rc.CASES for k in rc.KNOWN_DIFFS + rc.TORCH_CRASHES)


# ---- a few direct checks, with the values torch gives ----

def _run(code):
    """Runs code in a fresh interpreter (a crash fails the test, not pytest)."""
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("expr", [
    "ember.zeros(2**62)", "ember.empty(2**32, 2**32)", "ember.ones(3).as_strided((2,), (2**62,))",
    "ember.ones(2).repeat(2**32, 2**32)", "ember.ones(3).resize_(2**62)", "ember.zeros(3).new_zeros(2**62)",
    "ember.eye(2**32)", "ember.arange(0, 2**62)", "ember.linspace(0, 1, 2**62)",
    "ember.nn.functional.pad(ember.ones(2, 3), (2**62, 0))", "ember.ones(1).expand(2**62, 2**62)",
])
def test_overflowing_sizes_raise_runtime_error(expr):
    rc_, out, err = _run(f"import ember\ntry:\n    {expr}\nexcept RuntimeError as e:\n    print('RuntimeError', e)\n")
    assert rc_ == 0, err
    assert out.startswith("RuntimeError")


def test_impossible_allocation_is_runtime_error():
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        ember.empty(2**50, dtype=ember.uint8)
    with pytest.raises(RuntimeError):
        torch.empty(2**50, dtype=torch.uint8)


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8"])
def test_int_min_divided_by_minus_one(dt):
    lo = -(2 ** (int(dt[3:]) - 1))
    a_e, a_t = ember.tensor([lo, 7, -7], dtype=getattr(ember, dt)), torch.tensor([lo, 7, -7], dtype=getattr(torch, dt))
    for op in ["floor_divide", "remainder", "fmod"]:
        assert getattr(ember, op)(a_e, -1).tolist() == getattr(torch, op)(a_t, -1).tolist()
    # torch 2.13 itself dies of SIGFPE on div(rounding_mode='trunc') here; ember wraps like floor.
    assert ember.div(a_e, -1, rounding_mode="trunc").tolist() == [lo, -7, 7]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a_e // 0


def test_searchsorted_sorter_out_of_range():
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        ember.searchsorted(ember.tensor([1., 2., 3.]), ember.tensor([2.5]), sorter=ember.tensor([0, 1, 2**40]))


def test_half_mean_accumulates_in_float():
    assert ember.full((100,), 60000., dtype=ember.float16).mean().item() == 60000.0


def test_nan_to_int_raises():
    with pytest.raises(ValueError):
        int(ember.tensor(float("nan")))
    with pytest.raises(OverflowError):
        int(ember.tensor(float("inf")))
    assert int(ember.tensor(1e30)) == int(torch.tensor(1e30))


def test_clamp_nan_bound_propagates():
    assert all(math.isnan(v) for v in ember.clamp(ember.tensor([1., 2.]), min=float("nan")).tolist())
