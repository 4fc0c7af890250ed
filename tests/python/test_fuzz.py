"""Runs the argument fuzzer (fuzz_ops.py) in a subprocess: hostile arguments to every op in the
op table must raise (never crash the process), and raise wherever torch raises."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_fuzz_ops_no_crash_and_torch_errors(seed):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, os.path.join(HERE, "fuzz_ops.py"), "--cases", "1500", "--seed", str(seed)],
                       capture_output=True, text=True, env=env, timeout=600)
    last_case = (p.stderr.strip().splitlines() or [""])[-1]
    assert p.returncode >= 0, f"fuzzer crashed (signal {-p.returncode}) on: {last_case}"
    assert p.returncode == 0, p.stdout[-4000:]
