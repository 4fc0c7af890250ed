"""Reliability probe: evaluates expressions with `lib` bound to torch and to ember and compares
the outcome (exception class, or dtype/shape/values). Ember runs in a worker process that is
restarted after a crash, so a crash is reported against the case that caused it.

    PYTHONPATH=python python3 tests/python/probe_reliability.py [--filter SUBSTR] [--verbose]

The cases live in reliability_cases.py; test_reliability_core.py runs every one of them.
"""
import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_TIMEOUT = 20  # seconds one case may run


def describe(v):
    """A JSON-able summary of a result that can be compared across libraries."""
    if isinstance(v, (tuple, list)) and not hasattr(v, "dtype"):
        return ["seq", [describe(x) for x in v]]
    if hasattr(v, "dtype") and hasattr(v, "shape") and hasattr(v, "tolist"):
        dt = str(v.dtype).split(".")[-1]
        vals = v.detach().tolist() if hasattr(v, "detach") else v.tolist()
        return ["tensor", dt, list(v.shape), _clean(vals)]
    if isinstance(v, bool):
        return ["bool", v]
    if isinstance(v, int):
        return ["int", str(v)]
    if isinstance(v, float):
        return ["float", _clean(v)]
    if isinstance(v, complex):
        return ["complex", _clean(v.real), _clean(v.imag)]
    if v is None:
        return ["none"]
    return ["other", type(v).__name__]


def _clean(x):
    if isinstance(x, list):
        return [_clean(y) for y in x]
    if isinstance(x, complex):
        return [_clean(x.real), _clean(x.imag)]
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def same(a, b, rtol=1e-3):
    """a (ember) agrees with b (torch): same kind, same exception class, values within rtol (floats)."""
    if b[0] == "crash" and a[0] != "crash":  # torch itself crashes (e.g. INT_MIN / -1 with trunc): any answer beats that
        return True
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return a[1] == b[1]
    return _close(a, b, rtol)


def _close(a, b, rtol):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)) or isinstance(b, float) and isinstance(a, (int, float)):
        return abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-6
    return a == b


def evaluate(lib_name, exprs):
    """Runs in the worker: prints one JSON line per case (flushed), so a crash names its case."""
    if lib_name == "torch":
        import torch as lib
    else:
        import ember as lib
    import warnings

    import faulthandler

    warnings.simplefilter("ignore")
    F = lib.nn.functional
    for i, src in enumerate(exprs):
        # A case that hangs (even inside C++ holding the GIL) ends the worker: reported as a hang.
        faulthandler.dump_traceback_later(CASE_TIMEOUT, exit=True, file=sys.stderr)
        ns = {"lib": lib, "F": F, "math": math, "nan": float("nan"), "inf": float("inf")}
        try:
            code = compile(src, "<case>", "exec")
            body = src.strip().splitlines()
            if len(body) == 1:
                res = eval(compile(src, "<case>", "eval"), ns)
            else:  # the last line is the result
                exec(compile("\n".join(body[:-1]), "<case>", "exec"), ns)
                res = eval(compile(body[-1], "<case>", "eval"), ns)
            out = describe(res)
        except BaseException as e:  # noqa: BLE001 - the class is the result
            if isinstance(e, KeyboardInterrupt):
                raise
            out = ["error", type(e).__name__, str(e).splitlines()[0][:200] if str(e) else ""]
        faulthandler.cancel_dump_traceback_later()
        print(json.dumps([i, out]), flush=True)


def run_lib(lib_name, exprs):
    """Evaluates all cases with one library; a crash or hang is recorded and the worker restarted."""
    results = {}
    start = 0
    while start < len(exprs):
        chunk = exprs[start:]
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib_name]
        p = subprocess.run(cmd, input=json.dumps(chunk), capture_output=True, text=True)
        out, rc = p.stdout, p.returncode
        if "Timeout (" in p.stderr:
            rc = "hang"
        done = -1
        for line in out.splitlines():
            try:
                i, r = json.loads(line)
            except ValueError:
                continue
            results[start + i] = r
            done = i
        if done == len(chunk) - 1:
            break
        bad = start + done + 1
        results[bad] = ["crash", str(rc)]
        start = bad + 1
    return [results[i] for i in range(len(exprs))]


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        evaluate(sys.argv[2], json.loads(sys.stdin.read()))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default="")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    from reliability_cases import CASES

    exprs = [c for c in CASES if args.filter in c]
    tr = run_lib("torch", exprs)
    er = run_lib("ember", exprs)
    bad = 0
    for src, t, e in zip(exprs, tr, er):
        ok = same(e, t)
        bad += not ok
        if not ok or args.verbose:
            print(("ok  " if ok else "BAD ") + src.replace("\n", "; "))
            if not ok:
                print("     torch:", json.dumps(t)[:300])
                print("     ember:", json.dumps(e)[:300])
    print(f"{len(exprs) - bad}/{len(exprs)} cases match torch")


if __name__ == "__main__":
    main()
