/* Peak float32 FMA throughput with 512-bit vectors, 1 and N threads, as JSON lines.
 *
 * ../shared/bench/limits.sh measures the AVX2 (256-bit) peak; on an AVX-512 CPU the GEMM
 * figures of issue 14 are fractions of the 512-bit peak, which is not simply twice the AVX2
 * one: cores may run 512-bit FMAs at a lower clock (the AVX-512 frequency licence), and some
 * parts have one 512-bit FMA port only. This measures it directly: 24 independent
 * vfmadd231ps zmm chains per thread (2 ports x 4-cycle latency needs 8; more hides scheduling).
 *
 *   gcc -O2 -mavx512f -fopenmp benchmarks/fma_peak.c -o /tmp/fma_peak && /tmp/fma_peak
 *
 * Runs only on a CPU with AVX-512F (it checks, and says so otherwise). */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile float sink;

#define CHAINS 24
/* Spelled out: an array of accumulators with an inner loop stays in memory at -O2. */
#define EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) \
                X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)
static float fma_kernel(long iters) {
  const __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(1e-7f);
#define DECLARE(j) __m512 c##j = _mm512_set1_ps((float)j);
  EACH(DECLARE)
  for (long i = 0; i < iters; i++) {
#define STEP(j) c##j = _mm512_fmadd_ps(c##j, x, y);
    EACH(STEP)
    /* keep the compiler from collapsing the chains */
    __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7),
                     "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
    __asm__ volatile("" : "+v"(c12), "+v"(c13), "+v"(c14), "+v"(c15), "+v"(c16), "+v"(c17), "+v"(c18),
                     "+v"(c19), "+v"(c20), "+v"(c21), "+v"(c22), "+v"(c23));
  }
  __m512 s = _mm512_setzero_ps();
#define ADD(j) s = _mm512_add_ps(s, c##j);
  EACH(ADD)
  return _mm512_reduce_add_ps(s);
}

static int cmp_d(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void peak(int threads) {
  const long iters = 40L * 1000 * 1000; /* per thread: 40M x 24 FMA x 32 flop */
  double t[5];
  for (int r = 0; r < 5; r++) {
    float acc = 0;
    double t0 = now();
#pragma omp parallel num_threads(threads) reduction(+ : acc)
    acc += fma_kernel(iters);
    t[r] = now() - t0;
    sink = acc;
  }
  qsort(t, 5, sizeof(double), cmp_d);
  const double flops = (double)threads * iters * CHAINS * 32;
  printf("{\"bench\": \"limits.peak_fma_fp32_avx512_%dthr\", \"lib\": \"machine\", \"value\": %.4g, \"unit\": "
         "\"GFLOP/s\", \"threads\": %d, \"median_GFLOPs\": %.4g, \"implied_GHz_at_64flop_per_cycle\": %.3g}\n",
         threads, flops / t[0] / 1e9, threads, flops / t[2] / 1e9, flops / t[0] / 1e9 / 64.0 / threads);
}

int main(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    fprintf(stderr, "fma_peak: this CPU has no AVX-512F; ../shared/bench/limits.sh measures the AVX2 peak\n");
    return 1;
  }
  int threads = omp_get_max_threads();
  peak(1);
  if (threads > 1) peak(threads);
  return 0;
}
