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
