"""FFT benchmarks for benchmarks/compare.py (--lib torch|ember, JSON lines as ../shared/bench):
rfft of 2^20 float32 samples, rfft of a prime length (1,000,003), and the STFT of 10 s of
16 kHz audio (n_fft 400, hop 160, Hann window; the usual speech front end), each forward only.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/compare.py fft --bench-dir benchmarks --rounds 5

Each line: the best of `reps` calls (ms) after a warm-up call (which also makes ember's FFTW plan;
the plan cache keeps it for the later calls, as torch's MKL/pocketfft descriptors are cached).
"""
import argparse
import json
import os

from timing import best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", default="ember")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0: the library's default)")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.threads:
        os.environ["OMP_NUM_THREADS"] = str(a.threads)
    lib = __import__(a.lib)
    if a.threads:
        lib.set_num_threads(a.threads)
    reps = 3 if a.quick else a.reps
    g = lib.Generator().manual_seed(0)
    pow2 = lib.randn(1 << 20, generator=g)
    prime = lib.randn(1_000_003, generator=g)
    audio = lib.randn(16000 * 10, generator=g)
    window = lib.hann_window(400)
    cases = {
        "rfft_2^20_float32": lambda: lib.fft.rfft(pow2),
        "rfft_1000003_float32": lambda: lib.fft.rfft(prime),
        "stft_10s_16kHz_nfft400_hop160": lambda: lib.stft(audio, 400, 160, window=window, return_complex=True),
    }
    for name, fn in cases.items():
        print(json.dumps({"bench": f"fft.{name}", "lib": a.lib, "value": best(fn, reps), "unit": "ms",
                          "threads": lib.get_num_threads()}))


if __name__ == "__main__":
    main()
