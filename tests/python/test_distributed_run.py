"""The launcher, python -m ember.distributed.run: environment of the workers, failure reports
(exception, exit code, signal), stopping the other workers, --max-restarts, two nodes."""
import json
import os
import subprocess
import sys
import time

import pytest

from dist_harness import child_env, free_port

SCRIPT = r'''
import json, os, signal, sys, time
import ember, ember.distributed as dist
mode = sys.argv[1]
out_dir = sys.argv[2]
dist.init_process_group("gloo")
rank = dist.get_rank()
t = ember.tensor([float(rank)])
dist.all_reduce(t)
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
        "TORCHELASTIC_RESTART_COUNT", "OMP_NUM_THREADS"]
info = {k: os.environ.get(k) for k in keys}
info.update(sum=t.item(), argv=sys.argv[1:], launched=dist.is_torchelastic_launched())
with open(os.path.join(out_dir, f"rank{rank}_attempt{os.environ['TORCHELASTIC_RESTART_COUNT']}.json"), "w") as f:
    json.dump(info, f)
if mode == "raise" and rank == 1:
    raise ValueError("rank one breaks on purpose")
if mode == "exit" and rank == 1:
    sys.exit(7)
if mode == "kill" and rank == 0:
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "flaky" and rank == 1 and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
    raise RuntimeError("fails on the first attempt only")
if mode in ("raise", "exit", "kill") and rank != 1 - (mode == "kill"):
    time.sleep(60)  # the launcher must stop these
dist.barrier()
dist.destroy_process_group()
'''


def launch(tmp_path, args, mode, timeout=60):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    cmd = [sys.executable, "-m", "ember.distributed.run", *args, str(script), mode, str(tmp_path)]
    env = child_env()
    env.pop("OMP_NUM_THREADS", None)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=str(tmp_path))
    return p, time.monotonic() - t0


def infos(tmp_path, attempt=0):
    out = {}
    for name in os.listdir(tmp_path):
        if name.endswith(f"_attempt{attempt}.json"):
            with open(tmp_path / name) as f:
                d = json.load(f)
            out[int(d["RANK"])] = d
    return out


def test_workers_get_their_environment(tmp_path):
    p, _ = launch(tmp_path, ["--standalone", "--nproc-per-node", "3"], "ok")
    assert p.returncode == 0, p.stderr
    got = infos(tmp_path)
    assert sorted(got) == [0, 1, 2]
    ports = {d["MASTER_PORT"] for d in got.values()}
    assert len(ports) == 1 and ports != {"29500"}  # --standalone picks a free port
    for r, d in got.items():
        assert d["LOCAL_RANK"] == str(r) and d["WORLD_SIZE"] == "3" and d["LOCAL_WORLD_SIZE"] == "3"
        assert d["GROUP_RANK"] == "0" and d["MASTER_ADDR"] == "127.0.0.1"
        assert d["OMP_NUM_THREADS"] == "1" and d["TORCHELASTIC_RESTART_COUNT"] == "0"
        assert d["sum"] == 3.0 and d["argv"] == ["ok", str(tmp_path)] and d["launched"]


@pytest.mark.parametrize("mode", ["raise", "exit", "kill"])
def test_failure_stops_the_others_and_is_reported(tmp_path, mode):
    p, elapsed = launch(tmp_path, ["--nproc-per-node", "3", "--master-port", str(free_port())], mode)
    assert p.returncode == 1
    assert elapsed < 20  # the sleeping workers were stopped, not waited for
    err = p.stderr
    assert "train.py FAILED" in err and "Root Cause (first observed failure)" in err
    if mode == "raise":
        assert "rank      : 1 (local_rank: 1)" in err and "exitcode  : 1" in err
        assert 'File "' in err and "ValueError: rank one breaks on purpose" in err
    elif mode == "exit":
        assert "rank      : 1 (local_rank: 1)" in err and "exitcode  : 7" in err
    else:
        assert "rank      : 0 (local_rank: 0)" in err and "Signal 9 (SIGKILL)" in err


def test_max_restarts(tmp_path):
    p, _ = launch(tmp_path, ["--standalone", "--nproc-per-node", "2", "--max-restarts", "2"], "flaky")
    assert p.returncode == 0, p.stderr
    assert "restarting all workers (1/2)" in p.stderr
    assert sorted(infos(tmp_path, 0)) == [0, 1] and sorted(infos(tmp_path, 1)) == [0, 1]
    assert not infos(tmp_path, 2)
    # Without restarts the same failure is final.
    p, _ = launch(tmp_path, ["--standalone", "--nproc-per-node", "2"], "flaky")
    assert p.returncode == 1 and "fails on the first attempt only" in p.stderr


def test_two_nodes(tmp_path):
    # Two launchers, as on two machines: node 1's workers take ranks 2 and 3.
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    port = free_port()
    env = child_env()
    procs = [subprocess.Popen([sys.executable, "-m", "ember.distributed.run", "--nnodes", "2", "--node-rank", str(n),
                               "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", str(port),
                               str(script), "ok", str(tmp_path)], env=env, stderr=subprocess.PIPE, text=True)
             for n in (1, 0)]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    got = infos(tmp_path)
    assert sorted(got) == [0, 1, 2, 3]
    for r, d in got.items():
        assert d["GROUP_RANK"] == str(r // 2) and d["LOCAL_RANK"] == str(r % 2) and d["WORLD_SIZE"] == "4"
        assert d["sum"] == 6.0


def test_bad_arguments(tmp_path):
    p, _ = launch(tmp_path, ["--nnodes", "1:3"], "ok")
    assert p.returncode != 0 and "elastic node ranges" in p.stderr
    p, _ = launch(tmp_path, ["--standalone", "--nnodes", "2"], "ok")
    assert p.returncode != 0 and "--standalone" in p.stderr
