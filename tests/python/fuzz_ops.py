"""Argument fuzzer over the op table: bad input must raise, never crash, and agree with torch.

Each case takes a sample from op_db, replaces one or two arguments (or keyword values) with
something hostile (a tensor of another dtype or rank, an empty or 0-d tensor, a negative or
huge int, NaN, None, a string, a nested list) and calls the op in torch and in ember.

Checked:
- the process survives (run it in a subprocess; the last case started is printed first, so a
  crash names its input);
- torch raises -> ember raises too (the same type is not required here: argument errors may be
  TypeError in one and RuntimeError in the other when the value is not even the right kind;
  torch's TypeErrors for argument kinds are not required either, see lenient());
- both succeed -> same shape and dtype.
Ember raising where torch succeeds is reported but allowed: those are gaps, not crashes.

Overlap cases (about one in six, Note [Memory overlap]): the in-place form of the op (`x.add_`,
`x.index_add_`, ...) runs on a tensor that is expanded (internal overlap) or whose other tensor
arguments are shifted views of its own storage (partial overlap), or with `out=` aliasing the
input. There torch's and ember's outcomes must agree exactly: the same exception class, or the
same values written into the shared storage.

Usage: python fuzz_ops.py [--cases N] [--seed S] [--ops a,b] [--verbose]
"""
import argparse
import math
import os
import random
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import ember  # noqa: E402
from op_db import OPS  # noqa: E402
from test_ops import to_ember  # noqa: E402

# Exception types a bad argument may produce; anything else (SystemError, MemoryError, ...) is a bug.
ALLOWED = (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError, OverflowError, ZeroDivisionError)


def hostile_values(rng):
    """A fresh pool each call: tensors are rebuilt so in-place ops cannot leak between cases."""
    f = torch.float32
    return [
        torch.tensor(1.5),
        torch.tensor(3),
        torch.empty(0),
        torch.empty(0, 3),
        torch.randn(2, 3),
        torch.randn(3, 2).t(),
        torch.randn(1, 1, 1, 1, 1),
        torch.randn(4, dtype=torch.float64),
        torch.randint(-5, 5, (2, 3)),
        torch.randint(0, 2, (2, 3)).bool(),
        torch.randint(0, 3, (3,)),
        torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=f),
        torch.randn(3, 1).expand(3, 4),
        torch.tensor([-7, 100]),
        -1, 0, 1, 2, -7, 7, 2**31, 2**62, -2**63, 10**30,
        1.5, -0.5, float("nan"), float("inf"),
        True, None, "abc", "", [], [0, 1], [-1], (0, -1), [[1], [2, 3]], (2, 3), [2, -3],
        torch.float64, torch.int32, torch.bool,
    ]


def to_lib(x, lib):
    if lib is ember:
        if isinstance(x, torch.Tensor):
            return to_ember(x)
        if isinstance(x, torch.dtype):
            return getattr(ember, str(x).split(".")[-1])
    if isinstance(x, (list, tuple)):
        return type(x)(to_lib(v, lib) for v in x)
    return x


def describe(v):
    if isinstance(v, torch.Tensor):
        return f"T({tuple(v.shape)},{str(v.dtype)[6:]},{'c' if v.is_contiguous() else 'nc'})"
    if isinstance(v, (list, tuple)):
        return type(v)(describe(x) for x in v).__repr__()
    return repr(v)


def mutate(sample, rng):
    args, kwargs = list(sample.args), dict(sample.kwargs)
    slots = [("a", i) for i in range(len(args))] + [("k", k) for k in kwargs]
    if not slots:
        return args, kwargs
    for _ in range(rng.choice((1, 1, 2))):
        kind, key = rng.choice(slots)
        cur = args[key] if kind == "a" else kwargs[key]
        if isinstance(cur, int) and not isinstance(cur, bool) and rng.random() < 0.5:
            new = rng.choice([cur + 1, cur - 1, -cur - 1, cur * 1000, -2**40])
        elif isinstance(cur, torch.Tensor) and cur.numel() > 0 and rng.random() < 0.3:
            new = rng.choice([cur.reshape(-1)[:0], cur.unsqueeze(0), cur.reshape(-1)[:1].reshape(()), cur.double(), cur.long()])
        else:
            new = rng.choice(hostile_values(rng))
        if kind == "a":
            args[key] = new
        else:
            kwargs[key] = new
    return args, kwargs


def lenient(torch_err):
    """Torch errors ember may skip: its argument parser's kind checks (True as a dim, a Tensor
    where only a Number overload exists) and torch bugs on valid input."""
    msg = str(torch_err)
    return isinstance(torch_err, TypeError) or "view size is not compatible" in msg or "INTERNAL ASSERT" in msg


def torch_hangs(name, args, kwargs):
    """Inputs torch 2.13 itself never returns from (ember handles them)."""
    huge = any(isinstance(v, int) and abs(v) > 2**40 for v in list(args) + list(kwargs.values()))
    return name.startswith("linalg.matrix_power") and huge


def call(op, lib, args, kwargs):
    a = [to_lib(x, lib) for x in args]
    k = {n: to_lib(v, lib) for n, v in kwargs.items()}
    return op.call(lib, *a, **k)


def outputs(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


def _aliased(lib, x, others, mode):
    """(self, others) for an overlap case, built in `lib` from torch values."""
    flat = to_lib(x.detach().reshape(-1), lib)
    shape = tuple(x.shape)
    n = x.numel()
    if mode == "expand":
        return flat[:1].expand(shape), [to_lib(o, lib) for o in others], flat
    base = lib.cat([flat, flat[:1]])
    self_ = base[1:].view(shape)
    repl = [base[:-1].view(shape) if isinstance(o, torch.Tensor) and tuple(o.shape) == shape and o.dtype == x.dtype
            else to_lib(o, lib) for o in others]
    if n == 0:
        repl = [to_lib(o, lib) for o in others]
    return self_, repl, base


def overlap_case(op, sample, rng):
    """Runs one overlap case in both libraries; returns a problem string or None."""
    args = list(sample.args)
    if not args or not isinstance(args[0], torch.Tensor) or args[0].numel() < 2:
        return None
    x = args[0]
    mode = rng.choice(["expand", "shift", "out"])
    method = op.name + "_"
    if mode != "out" and not (method.isidentifier() and hasattr(torch.Tensor, method)):
        return None
    if mode == "out":  # only outs that need no resize (ember's resize_ of a view reallocates; torch's grows the storage)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = op.call(torch, *args, **sample.kwargs)
        except Exception:  # noqa: BLE001
            return None
        if not isinstance(r, torch.Tensor) or tuple(r.shape) != tuple(x.shape):
            return None
    results = []
    for lib in (torch, ember):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if mode == "out":
                    self_, rest, base = _aliased(lib, x, args[1:], "shift")
                    out = base[:-1].view(tuple(x.shape))
                    kwargs = {k: to_lib(v, lib) for k, v in sample.kwargs.items()}
                    op.call(lib, self_, *rest, out=out, **kwargs)
                else:
                    self_, rest, base = _aliased(lib, x, args[1:], mode)
                    kwargs = {k: to_lib(v, lib) for k, v in sample.kwargs.items()}
                    getattr(self_, method)(*rest, **kwargs)
            results.append(("ok", base.tolist()))
        except Exception as e:  # noqa: BLE001 - the class is compared
            results.append((type(e).__name__, str(e).split("\n")[0][:120]))
    (tk, tv), (ek, ev) = results
    if ek not in {c.__name__ for c in ALLOWED} | {"ok"}:
        return f"overlap[{mode}] {op.name} {describe(x)}: ember raised {ek}: {ev}"
    overlap_err = "unsupported operation" in str(tv)
    if tk != "ok" and ek == "ok" and overlap_err:
        return f"overlap[{mode}] {op.name} {describe(x)}: torch raised {tv}; ember wrote"
    # Both raising is agreement (ember may check dtypes before overlap, torch the other way);
    # ember raising alone is a gap (no out= overload, or stricter); torch's other argument
    # errors are the main fuzzer's business. Values are compared for in-place writes only:
    # an out= aliasing a reduction's input gives loop-order-dependent results in torch.
    if tk == "ok" and ek == "ok" and mode != "out":
        tol = 2e-2 if x.dtype in (torch.float16, torch.bfloat16) else 1e-3

        def close(a, b):
            if isinstance(a, list):
                return isinstance(b, list) and len(a) == len(b) and all(close(p, q) for p, q in zip(a, b))
            if isinstance(a, complex) or isinstance(b, complex):
                return abs(complex(a) - complex(b)) <= tol * (1 + abs(complex(a)))
            if isinstance(a, float) and math.isnan(a):
                return isinstance(b, float) and math.isnan(b)
            return a == b or abs(a - b) <= tol * (1 + abs(a))
        if not close(tv, ev):
            return f"overlap[{mode}] {op.name} {describe(x)}: values differ\n  torch {str(tv)[:200]}\n  ember {str(ev)[:200]}"
    return None


# Ops written in Python for API breadth (issue 18) whose error parity with torch is not complete yet:
# they are still fuzzed for crashes, and their mismatches are printed as KNOWN, not counted as
# problems. Remove an entry once its op raises as torch does.
KNOWN_PARITY_GAPS = {}


def _python_out_overlap(problem):
    # The ops composed in Python (ember/_api_math.py) compute their result before writing it into
    # out=, so an out= overlapping the input still gets the right values; torch refuses it. Known.
    import ember._api_math as m

    head = problem.split("\n")[0]
    if not head.startswith("overlap[out] "):
        return False
    name = head.split()[1].rsplit(".", 1)[-1]
    return callable(getattr(m, name, None))


def run(n_cases, seed, names, verbose):
    rng = random.Random(seed)
    torch.manual_seed(seed)
    ops = [op for op in OPS if not names or op.name in names]
    problems, gaps = [], 0
    warnings.simplefilter("ignore")
    for i in range(n_cases):
        op = rng.choice(ops)
        dtype = rng.choice(list(op.dtypes))
        samples = op.samples(dtype)
        if not samples:
            continue
        sample = rng.choice(samples)
        if rng.random() < 1 / 6:
            print(f"case {i}: overlap {op.name} {[describe(a) for a in sample.args]}", file=sys.stderr, flush=True)
            pr = overlap_case(op, sample, rng)
            if pr:
                problems.append(pr)
            continue
        args, kwargs = mutate(sample, rng)
        if torch_hangs(op.name, args, kwargs):
            continue
        desc = f"case {i}: {op.name} args={[describe(a) for a in args]} kwargs={ {k: describe(v) for k, v in kwargs.items()} }"
        # Written before the call, so a crash leaves its input as the last line.
        print(desc, file=sys.stderr, flush=True)
        try:
            t_res, t_err = call(op, torch, args, kwargs), None
        except Exception as e:  # noqa: BLE001 - any torch error is a reference answer
            t_res, t_err = None, e
        except BaseException:
            continue
        try:
            e_res, e_err = call(op, ember, args, kwargs), None
        except ALLOWED as e:
            e_res, e_err = None, e
        except Exception as e:  # noqa: BLE001
            if t_err is not None and type(e) is type(t_err):  # e.g. the sample's lambda calling a method on an int
                continue
            problems.append(f"{desc}\n  ember raised {type(e).__name__}: {e}")
            continue
        if t_err is not None and e_err is None and not lenient(t_err):
            problems.append(f"{desc}\n  torch raised {type(t_err).__name__}: {str(t_err)[:200]}; ember succeeded")
        elif t_err is None and e_err is not None:
            gaps += 1
            if verbose:
                print(f"GAP {desc}\n  ember raised {type(e_err).__name__}: {str(e_err)[:200]}")
        elif t_err is None:
            for t, e in zip(outputs(t_res), outputs(e_res)):
                if isinstance(t, torch.Tensor):
                    ok = isinstance(e, ember.Tensor) and tuple(t.shape) == tuple(e.shape) and \
                        str(t.dtype)[6:] == str(e.dtype)[6:]
                    if not ok:
                        problems.append(f"{desc}\n  torch gave {describe(t)}, ember {e!r:.200}")
                        break
    known = [pr for pr in problems if any(f" {name} " in pr.split("\n")[0] + " " for name in KNOWN_PARITY_GAPS)
             or _python_out_overlap(pr)]
    return [pr for pr in problems if pr not in known], gaps, known


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cases", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ops", default="")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args()
    problems, gaps, known = run(a.cases, a.seed, set(filter(None, a.ops.split(","))), a.verbose)
    for pr in known:
        print("KNOWN", pr)
    for pr in problems:
        print("PROBLEM", pr)
    print(f"fuzz: {a.cases} cases, {len(problems)} problems, {gaps} ember-only errors (gaps)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
