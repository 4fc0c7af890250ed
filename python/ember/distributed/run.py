"""Launcher: ``python -m ember.distributed.run [options] script.py [args]`` (torchrun's options).

Starts --nproc-per-node workers on this node, each with RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and MASTER_PORT set, so that
``init_process_group("gloo")`` (env://) connects them; with --nnodes M, run it once per node with
--node-rank 0..M-1 and the same --master-addr/--master-port (the global rank-0 worker hosts the
TCPStore). When a worker fails, the others are stopped and the failure is reported (rank, exit
code or signal, the worker's traceback); --max-restarts N starts the workers again up to N times
before giving up. The exit status is 0 when every worker succeeded, else 1.

Workers run their script under ember.distributed._launch_worker, which records an uncaught
exception's traceback in the worker's error file (TORCHELASTIC_ERROR_FILE), as torchrun's
@record does.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime

__all__ = ["main", "parse_args", "run"]


def _env_default(name, default):
    return os.environ.get(name, default)


def get_args_parser():
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run", allow_abbrev=False,
                                description="ember's distributed launcher (torchrun's options)")
    p.add_argument("--nnodes", "--nnodes", type=str, default="1", help="number of nodes (N or N:N)")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=str, default="1",
                   help="workers per node: a number, or 'cpu'/'auto' for this machine's CPU count")
    p.add_argument("--node-rank", "--node_rank", type=int, default=int(_env_default("NODE_RANK", 0)),
                   help="this node's rank in [0, nnodes)")
    p.add_argument("--master-addr", "--master_addr", type=str, default=_env_default("MASTER_ADDR", "127.0.0.1"),
                   help="address of the node whose rank-0 worker hosts the store")
    p.add_argument("--master-port", "--master_port", type=int, default=int(_env_default("MASTER_PORT", 29500)),
                   help="port of the store")
    p.add_argument("--standalone", action="store_true",
                   help="one node: localhost and a free port (overrides --master-addr/--master-port)")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0,
                   help="how many times to restart the workers after a failure")
    p.add_argument("--monitor-interval", "--monitor_interval", type=float, default=0.1,
                   help="seconds between checks of the workers")
    p.add_argument("--rdzv-backend", "--rdzv_backend", type=str, default="static")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", type=str, default="")
    p.add_argument("--rdzv-id", "--rdzv_id", type=str, default="none")
    p.add_argument("--run-id", "--run_id", type=str, default=None)
    p.add_argument("--role", type=str, default="default")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script as an executable, not with the Python interpreter")
    p.add_argument("--log-dir", "--log_dir", type=str, default=None,
                   help="where the workers' error files go (default: a temporary directory)")
    p.add_argument("training_script", type=str, help="the script (or module, with -m) each worker runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _nnodes(s):
    parts = s.split(":")
    if len(parts) == 2 and parts[0] != parts[1]:
        raise ValueError(f"--nnodes {s}: elastic node ranges are not supported by ember's launcher; give one number")
    n = int(parts[0])
    if n < 1:
        raise ValueError(f"--nnodes must be positive, got {s}")
    return n


def _nproc(s):
    if s in ("cpu", "auto"):
        return os.cpu_count() or 1
    n = int(s)
    if n < 1:
        raise ValueError(f"--nproc-per-node must be positive, got {s}")
    return n


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Worker:
    def __init__(self, local_rank, rank, proc, error_file):
        self.local_rank = local_rank
        self.rank = rank
        self.proc = proc
        self.error_file = error_file
        self.exitcode = None
        self.end_time = None


class _Config:
    def __init__(self, args):
        if args.rdzv_backend not in ("static", "c10d"):
            raise ValueError(f"--rdzv-backend {args.rdzv_backend}: ember's launcher has the static rendezvous "
                             "(rank-0 worker hosts the store) and accepts 'c10d' as a synonym")
        if args.rdzv_endpoint and not args.standalone:  # host:port of the store, as --master-addr/--master-port
            host, _, port = args.rdzv_endpoint.rpartition(":")
            args.master_addr, args.master_port = host or args.master_addr, int(port)
        self.nnodes = _nnodes(args.nnodes)
        self.nproc = _nproc(args.nproc_per_node)
        if args.standalone:
            if self.nnodes != 1:
                raise ValueError("--standalone runs one node; --nnodes must be 1")
            args.master_addr, args.master_port = "127.0.0.1", _free_port()
        if not 0 <= args.node_rank < self.nnodes:
            raise ValueError(f"--node-rank {args.node_rank} is not in [0, {self.nnodes})")
        if args.max_restarts < 0:
            raise ValueError("--max-restarts must be >= 0")
        self.args = args
        self.world_size = self.nnodes * self.nproc
        self.run_id = args.run_id or (args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex[:12])


def _start_workers(cfg, restart_count, log_dir):
    a = cfg.args
    workers = []
    for local_rank in range(cfg.nproc):
        rank = a.node_rank * cfg.nproc + local_rank
        err_dir = os.path.join(log_dir, f"attempt_{restart_count}", str(local_rank))
        os.makedirs(err_dir, exist_ok=True)
        error_file = os.path.join(err_dir, "error.json")
        env = dict(os.environ)
        env.update({
            "RANK": str(rank), "LOCAL_RANK": str(local_rank), "WORLD_SIZE": str(cfg.world_size),
            "LOCAL_WORLD_SIZE": str(cfg.nproc), "GROUP_RANK": str(a.node_rank), "GROUP_WORLD_SIZE": str(cfg.nnodes),
            "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(cfg.world_size), "ROLE_NAME": a.role,
            "MASTER_ADDR": a.master_addr, "MASTER_PORT": str(a.master_port),
            "TORCHELASTIC_RUN_ID": cfg.run_id, "TORCHELASTIC_RESTART_COUNT": str(restart_count),
            "TORCHELASTIC_MAX_RESTARTS": str(a.max_restarts), "TORCHELASTIC_ERROR_FILE": error_file,
        })
        if "OMP_NUM_THREADS" not in os.environ and cfg.nproc > 1:
            env["OMP_NUM_THREADS"] = "1"  # as torchrun: N workers would otherwise each use every core
        if a.no_python:
            cmd = [a.training_script] + a.training_script_args
        else:
            cmd = [sys.executable, "-u", "-m", "ember.distributed._launch_worker"]
            cmd += (["-m"] if a.module else []) + [a.training_script] + a.training_script_args
        # Its own process group, so stopping a worker also stops its children (DataLoader workers).
        proc = subprocess.Popen(cmd, env=env, start_new_session=True)
        workers.append(_Worker(local_rank, rank, proc, error_file))
    return workers


def _stop(workers, grace=5.0):
    """SIGTERM to every live worker's process group, SIGKILL after grace seconds."""
    live = [w for w in workers if w.proc.poll() is None]
    for w in live:
        try:
            os.killpg(w.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for w in live:
        try:
            w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(w.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            w.proc.wait()


def _monitor(workers, interval):
    """Waits until all workers succeed (None) or one fails (that worker)."""
    while True:
        running = False
        for w in workers:
            if w.exitcode is not None:
                continue
            code = w.proc.poll()
            if code is None:
                running = True
            else:
                w.exitcode = code
                w.end_time = time.time()
                if code != 0:
                    return w
        if not running:
            return None
        time.sleep(interval)


def _failure_time(w):
    try:
        with open(w.error_file) as f:
            return float(json.load(f)["timestamp"])
    except (OSError, ValueError, KeyError, TypeError):
        return w.end_time or time.time()


def _describe(w):
    if w.exitcode is not None and w.exitcode < 0:
        try:
            name = signal.Signals(-w.exitcode).name
        except ValueError:
            name = str(-w.exitcode)
        return f"Signal {-w.exitcode} ({name}) received by PID {w.proc.pid}", None
    tb = None
    if os.path.exists(w.error_file):
        try:
            with open(w.error_file) as f:
                data = json.load(f)
            tb = data.get("traceback") or data.get("message")
        except (OSError, ValueError):
            tb = None
    return None, tb


def _report(script, failed, others):
    line = "=" * 60
    out = [line, f"{script} FAILED", "-" * 60, "Failures:"]
    if not others:
        out.append("  <NO_OTHER_FAILURES>")
    for w in others:
        sig, _ = _describe(w)
        out.append(f"[{w.rank}]: rank {w.rank} (local_rank {w.local_rank}) exitcode {w.exitcode}"
                   + (f" ({sig})" if sig else ""))
    out += ["-" * 60, "Root Cause (first observed failure):", "[0]:"]
    sig, tb = _describe(failed)
    when = datetime.fromtimestamp(failed.end_time or time.time()).strftime("%Y-%m-%d_%H:%M:%S")
    out += [f"  time      : {when}", f"  host      : {socket.gethostname()}",
            f"  rank      : {failed.rank} (local_rank: {failed.local_rank})",
            f"  exitcode  : {failed.exitcode} (pid: {failed.proc.pid})"]
    if sig:
        out.append(f"  error_file: <N/A>\n  traceback : {sig}")
    elif tb:
        out.append(f"  error_file: {failed.error_file}")
        out.append("  traceback : " + tb.rstrip().replace("\n", "\n  "))
    else:
        out.append("  error_file: <N/A>\n  traceback : To see the traceback, look at the worker's stderr above")
    out.append(line)
    return "\n".join(out)


def run(args):
    """Runs the workers (restarting them up to --max-restarts times); 0 on success, else 1."""
    cfg = _Config(args)
    log_dir = args.log_dir or tempfile.mkdtemp(prefix=f"ember_run_{cfg.run_id}_")
    made_log_dir = args.log_dir is None
    ok = False
    stopping = []

    def on_signal(signum, frame):
        stopping.append(signum)
        raise KeyboardInterrupt

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    workers = []
    try:
        for attempt in range(args.max_restarts + 1):
            workers = _start_workers(cfg, attempt, log_dir)
            failed = _monitor(workers, args.monitor_interval)
            if failed is None:
                ok = True
                return 0
            # Workers that failed on their own by now (not stopped by us); the root cause is the one
            # that failed first, by the time its error was recorded.
            for w in workers:
                if w.exitcode is None and w.proc.poll() is not None:
                    w.exitcode, w.end_time = w.proc.returncode, time.time()
            failures = [w for w in workers if w.exitcode not in (0, None)]
            _stop(workers)
            for w in workers:
                if w.exitcode is None:
                    w.exitcode = w.proc.returncode
            failed = min(failures, key=_failure_time)
            others = [w for w in failures if w is not failed]
            report = _report(args.training_script, failed, others)
            if attempt < args.max_restarts:
                print(f"[ember.distributed.run] worker rank {failed.rank} failed (exitcode {failed.exitcode}); "
                      f"restarting all workers ({attempt + 1}/{args.max_restarts})", file=sys.stderr, flush=True)
                continue
            print(report, file=sys.stderr, flush=True)
            return 1
        return 1
    except KeyboardInterrupt:
        _stop(workers)
        return 128 + (stopping[0] if stopping else signal.SIGINT)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if made_log_dir and ok:  # kept after a failure: the report names the error files
            shutil.rmtree(log_dir, ignore_errors=True)


def main(args=None):
    parser = get_args_parser()
    parsed = parser.parse_args(args)
    try:
        code = run(parsed)
    except ValueError as e:  # a bad combination of options
        parser.error(str(e))
    sys.exit(code)


if __name__ == "__main__":
    main()
