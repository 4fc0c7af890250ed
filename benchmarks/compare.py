"""Run shared benchmark scripts for torch and ember side by side and print ember/torch ratios.

    python benchmarks/compare.py overhead import_time gemm --rounds 3 [--quick]

Each round runs every script once per library, alternating torch, ember, torch, ... so both see
the same machine conditions; the table gives the median over rounds and the ratio ember/torch
(for times lower is better for ember; for rates such as GB/s higher is better).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_BENCH = os.path.join(os.path.dirname(REPO), "shared", "bench")
TIME_UNITS = {"us", "ms", "s", "MiB"}


def run(bench_dir, script, lib, extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, os.path.join(bench_dir, script + ".py"), "--lib", lib] + extra
    out = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r.get("value"), (int, float)):
            rows[r["bench"]] = (r["value"], r.get("unit", ""))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scripts", nargs="+")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--bench-dir", default=DEFAULT_BENCH)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    extra = ["--quick"] if a.quick else []
    results = {"torch": {}, "ember": {}}
    for _ in range(a.rounds):
        for script in a.scripts:
            for lib in ("torch", "ember"):
                for k, (v, unit) in run(a.bench_dir, script, lib, extra).items():
                    results[lib].setdefault(k, ([], unit))[0].append(v)
    print(f"| bench | unit | torch | ember | ember/torch |")
    print(f"|---|---|---|---|---|")
    for k in sorted(set(results["torch"]) | set(results["ember"])):
        t = results["torch"].get(k)
        e = results["ember"].get(k)
        unit = (t or e)[1]
        tm = statistics.median(t[0]) if t else None
        em = statistics.median(e[0]) if e else None
        ratio = f"{em / tm:.2f}x" if tm and em else "n/a"
        fmt = lambda v: "missing" if v is None else f"{v:.4g}"  # noqa: E731
        print(f"| {k} | {unit} | {fmt(tm)} | {fmt(em)} | {ratio} |")


if __name__ == "__main__":
    main()
