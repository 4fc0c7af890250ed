"""The process exits cleanly after using most of the binding module (exit_check.py's docstring)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_exit_status_is_clean_after_broad_use():
    r = subprocess.run([sys.executable, os.path.join(HERE, "exit_check.py")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stdout.rstrip().endswith("exit check ok"), r.stdout[-2000:]
    assert "Fatal Python error" not in r.stderr, r.stderr[-2000:]


def test_exit_status_kept_with_live_tensors_and_sys_exit():
    code = ("import sys, ember\n"
            "a = ember.ones(3, requires_grad=True)\n"
            "b = (a * 2).exp()  # a graph alive at exit\n"
            "ember.manual_seed(1)\n"
            "sys.exit(7)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 7, r.stderr[-2000:]
