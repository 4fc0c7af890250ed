"""nn.Module.__call__ overhead on a 16x16 Linear, ember vs torch, measured side by side in one process.

Reports lin(x), F.linear(x, w, b) and their difference (the module-call overhead: hook checks, forward
dispatch, parameter lookups). Rounds alternate between the libraries and the minimum per quantity is
kept, which resists load from other processes.
Run: PYTHONPATH=python python3 benchmarks/module_call_overhead.py [--rounds 30]
"""
import argparse
import timeit


def setup(lib):
    lib.set_num_threads(1)
    lin = lib.nn.Linear(16, 16)
    x = lib.randn(1, 16)
    w, b = lin.weight, lin.bias
    F = lib.nn.functional
    seq = lib.nn.Sequential(lin)
    return {"lin(x)": lambda: lin(x), "F.linear": lambda: F.linear(x, w, b), "Sequential(lin)(x)": lambda: seq(x)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--number", type=int, default=3000)
    args = ap.parse_args()
    import ember
    import torch
    cases = {"ember": setup(ember), "torch": setup(torch)}
    best = {(lib, k): float("inf") for lib in cases for k in cases[lib]}
    for _ in range(args.rounds):
        for lib, fns in cases.items():
            for k, fn in fns.items():
                t = timeit.timeit(fn, number=args.number) / args.number * 1e6
                best[lib, k] = min(best[lib, k], t)
    for lib in cases:
        over = best[lib, "lin(x)"] - best[lib, "F.linear"]
        print(f"{lib:6s} " + "  ".join(f"{k} {best[lib, k]:.2f} us" for k in cases[lib]) + f"  __call__ overhead {over:.2f} us")
    e_over = best["ember", "lin(x)"] - best["ember", "F.linear"]
    t_over = best["torch", "lin(x)"] - best["torch", "F.linear"]
    print(f"ember/torch: linear16_fwd {best['ember', 'lin(x)'] / best['torch', 'lin(x)']:.2f}, "
          f"Module.__call__ overhead {e_over / t_over:.2f}, "
          f"Sequential nesting {(best['ember', 'Sequential(lin)(x)'] - best['ember', 'lin(x)']) / (best['torch', 'Sequential(lin)(x)'] - best['torch', 'lin(x)']):.2f}")


if __name__ == "__main__":
    main()
