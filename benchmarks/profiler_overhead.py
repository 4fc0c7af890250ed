"""Profiler overhead, ember against torch in the same run: time per iteration with no profiler, with
profile() (CPU activity only), and with profile(record_shapes, profile_memory, with_stack), for a
tiny op (`a + b` on 1-element tensors, per call) and one training step of the Fashion-MNIST CNN
(examples/fashion_mnist.py's Net, batch 32). Each library runs in its own worker process (so one
profiler's leftovers cannot slow the other); the driver alternates requests between them, round
by round, and reports medians.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python3 benchmarks/profiler_overhead.py [--rounds 5] [--threads 1]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings


def build_net(lib, width=32):
    nn = lib.nn

    def conv(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    return nn.Sequential(*conv(1, width), nn.MaxPool2d(2), *conv(width, 2 * width), nn.MaxPool2d(2),
                         *conv(2 * width, 2 * width), nn.Flatten(), nn.Dropout(0.25),
                         nn.Linear(2 * width * 7 * 7, 128), nn.ReLU(inplace=True), nn.Dropout(0.25), nn.Linear(128, 10))


def workloads(lib):
    a, b = lib.ones(1), lib.ones(1)
    lib.manual_seed(0)
    net = build_net(lib)
    opt = lib.optim.AdamW(net.parameters(), lr=1e-3)
    x, y = lib.randn(32, 1, 28, 28), lib.randint(0, 10, (32,))

    def step():
        loss = lib.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return {"add_1elem": (lambda: a + b, 2000), "cnn_train_step_b32": (step, 3)}


MODES = {
    "off": None,
    "profile()": dict(),
    "shapes+memory+stack": dict(record_shapes=True, profile_memory=True, with_stack=True),
}


def run(lib, fn, n, mode):
    """Seconds per iteration of n iterations, inside one profiler session when mode is set."""
    fn()
    if MODES[mode] is None:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t) / n
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **MODES[mode]):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
    return dt / n


def worker(libname, threads):
    """Answers 'WORKLOAD MODE' lines with seconds per iteration."""
    warnings.filterwarnings("ignore")
    lib = __import__(libname)
    __import__(libname + ".profiler")
    lib.set_num_threads(threads)
    w = workloads(lib)
    for line in sys.stdin:
        wname, mode = line.rstrip("\n").split(" ", 1)
        fn, n = w[wname]
        print(json.dumps(run(lib, fn, n, mode)), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.threads)
    libs = ("ember", "torch")
    procs = {name: subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", name, "--threads",
                                     str(args.threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True) for name in libs}

    def ask(name, wname, mode):
        procs[name].stdin.write(f"{wname} {mode}\n")
        procs[name].stdin.flush()
        return json.loads(procs[name].stdout.readline())

    times = {}
    for r in range(args.rounds):
        order = libs if r % 2 == 0 else tuple(reversed(libs))
        for wname in ("add_1elem", "cnn_train_step_b32"):
            for mode in MODES:
                for name in order:
                    times.setdefault((wname, mode, name), []).append(ask(name, wname, mode))
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    print(f"median of {args.rounds} interleaved rounds, {args.threads} thread(s); ratio = time / time without profiler")
    print(f"{'workload':20s} {'mode':22s} {'ember':>19s} {'torch':>19s}")
    for wname in ("add_1elem", "cnn_train_step_b32"):
        base = {name: statistics.median(times[(wname, "off", name)]) for name in libs}
        for mode in MODES:
            cells = []
            for name in libs:
                t = statistics.median(times[(wname, mode, name)])
                unit, scale = ("us", 1e6) if t < 1e-3 else ("ms", 1e3)
                cells.append(f"{t * scale:9.2f} {unit} {t / base[name]:6.2f}")
            print(f"{wname:20s} {mode:22s} {cells[0]:>19s} {cells[1]:>19s}")


if __name__ == "__main__":
    main()
