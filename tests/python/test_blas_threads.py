"""OpenBLAS kernel choice at import (Note [OpenBLAS kernels on newer CPUs]), the thread count seen
by threads started later (Note [Thread count across threads]) and the CPU-quota cap of the default
thread count (Note [Default thread count])."""
import ctypes
import os
import subprocess
import sys
import threading

import pytest

import ember
from ember import _C

PYTHON_DIR = os.path.dirname(os.path.dirname(ember.__file__))


def run_python(code, env_update=None, drop=()):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = PYTHON_DIR
    env.update(env_update or {})
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


CORENAME = """
import ctypes, os, ember
lib = next(ctypes.CDLL(p) for p in open('/proc/self/maps').read().split() if 'libopenblas' in p)
lib.openblas_get_corename.restype = ctypes.c_char_p
print(lib.openblas_get_corename().decode().lower(), os.environ.get('OPENBLAS_CORETYPE'))
"""


def test_probe_agrees_with_kernel_dispatch():
    from ember._cpu_probe import openblas_coretype

    core = openblas_coretype()
    level = ember.backends.cpu.get_cpu_capability()
    # Ember's own kernels use AVX-512 where OpenBLAS may use its SkylakeX kernels, AVX2 where Haswell's.
    assert {"AVX512": "SKYLAKEX", "AVX2": "HASWELL"}.get(level) == core or (level == "DEFAULT" and core is None)


def test_openblas_kernels_chosen_from_cpu_and_environment_restored():
    from ember._cpu_probe import openblas_coretype

    core = openblas_coretype()
    name, env_after = run_python(CORENAME, drop=("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")).split()
    assert env_after == "None"  # ember's choice is not left in the environment
    if core is not None:
        assert name == core.lower()  # never the generic Prescott kernels on a CPU with AVX2/AVX-512
    else:
        assert name != "skylakex"


def test_openblas_coretype_set_by_user_is_kept():
    name, env_after = run_python(CORENAME, env_update={"OPENBLAS_CORETYPE": "Prescott"}).split()
    assert (name, env_after) == ("prescott", "Prescott")


def test_num_threads_reaches_threads_started_later():
    before = ember.get_num_threads()
    seen = []
    try:
        ember.set_num_threads(1)
        t = threading.Thread(target=lambda: seen.append(ember.get_num_threads()))
        t.start()
        t.join()
        assert seen == [1]
        # A matmul on another thread runs (OpenBLAS adopts the count there too) and is right.
        a = ember.randn(64, 64)
        out = []
        t = threading.Thread(target=lambda: out.append(a @ a))
        t.start()
        t.join()
        assert ember.allclose(out[0], a @ a)
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize(
    "files, expected",
    [
        ({"cpu.max": "max 100000"}, 0),
        ({"cpu.max": "150000 100000"}, 2),
        ({"cpu.max": "200000 100000"}, 2),
        ({"cpu.max": "50000 100000"}, 1),
        ({"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000"}, 0),
        ({"cpu.cfs_quota_us": "300000", "cpu.cfs_period_us": "100000"}, 3),
        ({"cpu.cfs_quota_us": "250000", "cpu.cfs_period_us": "100000"}, 3),
        ({"cpu.max": "garbage 100000"}, 0),
        ({}, 0),
    ],
)
def test_cgroup_cpu_limit(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text + "\n")
    assert _C._cgroup_cpu_limit(str(tmp_path)) == expected


def test_default_threads_respect_omp_num_threads():
    # OMP_NUM_THREADS wins over any quota; the process limit is a non-negative count.
    assert _C._process_cpu_limit() >= 0
    assert run_python("import ember; print(ember.get_num_threads())", {"OMP_NUM_THREADS": "1"}) == "1"
