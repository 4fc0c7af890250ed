"""Timing helper shared by the benchmark scripts in this folder."""
import time


def best(fn, reps):
    """Milliseconds of the fastest of `reps` calls of fn, after one warm-up call."""
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts) * 1e3


def best_pair(f, g, reps):
    """Best times (ms) of f and g over `reps` alternating calls, after a warm-up of each: load on a
    shared machine hits both alike."""
    f(), g()
    tf, tg = [], []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        tf.append(time.perf_counter() - t)
        t = time.perf_counter()
        g()
        tg.append(time.perf_counter() - t)
    return min(tf) * 1e3, min(tg) * 1e3
