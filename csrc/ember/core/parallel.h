// Intra-op parallelism on OpenMP: one pool for kernels and OpenBLAS (no competing thread pools).
#pragma once
#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ember {

constexpr int64_t kGrainSize = 32768;  // below this many elements a loop runs on one thread

int get_num_threads();
void set_num_threads(int n);

inline bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel();
#else
  return false;
#endif
}

// Calls f(begin, end) on disjoint chunks covering [begin, end), in parallel when worthwhile.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
#ifdef _OPENMP
  int64_t max_chunks = grain > 0 ? (n + grain - 1) / grain : n;
  int nt = static_cast<int>(std::min<int64_t>(get_num_threads(), max_chunks));
  if (nt > 1 && !in_parallel_region()) {
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), T = omp_get_num_threads();
      int64_t chunk = (n + T - 1) / T;
      int64_t b = begin + t * chunk, e = std::min(end, b + chunk);
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  f(begin, end);
}

}  // namespace ember
