"""Runs a scenario of dist_cases.py in N processes (one per rank) and collects their results.

Each rank is `python dist_harness.py CASE RANK WORLD PORT OUT [JSON-KWARGS]`: a fresh
interpreter (as the launcher starts them), which pickles the scenario's return value (or its
exception text) to OUT.
"""
import json
import os
import pickle
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.normpath(os.path.join(HERE, "..", "..", "python"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = PYROOT + os.pathsep + HERE + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")  # N ranks share 2 cores
    env.update(extra or {})
    return env


class RankFailed(AssertionError):
    pass


def run_ranks(case, world, tmp_path, timeout=60, expect_fail=(), env=None, **kwargs):
    """Runs dist_cases.CASE(rank, world, port, **kwargs) on every rank; their results, by rank.

    A rank listed in expect_fail may fail; its entry is then ("failed", returncode, stderr)."""
    port = free_port()
    outs = [str(tmp_path / f"{case}_{r}.pkl") for r in range(world)]
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "dist_harness.py"), case, str(r), str(world),
                               str(port), outs[r], json.dumps(kwargs)],
                              env=child_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(world)]
    deadline = time.monotonic() + timeout
    results = []
    try:
        for r, p in enumerate(procs):
            try:
                _, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise RankFailed(f"{case}: rank {r} still running after {timeout} s") from None
            if p.returncode != 0 or (r in expect_fail and not os.path.exists(outs[r])):
                if r in expect_fail:
                    results.append(("failed", p.returncode, err))
                    continue
                raise RankFailed(f"{case}: rank {r} exited with {p.returncode}:\n{err[-4000:]}")
            with open(outs[r], "rb") as f:
                results.append(pickle.load(f))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return results


def _main():
    case, rank, world, port, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    kwargs = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
    import dist_cases  # noqa: PLC0415

    try:
        result = getattr(dist_cases, case)(rank, world, port, **kwargs)
    except BaseException:  # noqa: BLE001 - reported to the parent
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)  # not sys.exit: the group's atexit shutdown could wait on a dead peer
    with open(out, "wb") as f:
        pickle.dump(result, f)
    sys.stdout.flush()


if __name__ == "__main__":
    _main()
