// Intra-op parallelism on OpenMP: one pool for kernels and OpenBLAS (no competing thread pools).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ember {

constexpr int64_t kGrainSize = 32768;  // below this many elements a loop runs on one thread

// Note [Thread count across threads]: OpenMP keeps the thread count per thread, so a count set
// on one thread (set_num_threads from Python's main thread) would not reach threads started
// later (a user's threading.Thread, a loader's pin-memory thread). set_num_threads also records
// the count globally; each thread adopts it the next time it asks (get_num_threads, or
// adopt_num_threads() before calling a library that reads OpenMP's count itself, as OpenBLAS
// does). A thread adopts a new count once, so a temporary one-thread section stays in force.
int get_num_threads();
void set_num_threads(int n);
void adopt_num_threads();

// Note [Default thread count]: OpenMP sizes its pool from the CPUs this process may run on
// (taskset, docker --cpuset-cpus) but not from a CPU quota (docker --cpus=2, Kubernetes CPU
// limits: cgroup v2 cpu.max, v1 cpu.cfs_quota_us), where N threads on a share of 2 CPUs wait
// at every barrier for threads the scheduler has throttled. Unless OMP_NUM_THREADS is set, the
// default count is capped at the quota, rounded up. cgroup_cpu_limit reads one cgroup
// directory (0: no limit); process_cpu_limit walks this process's cgroups (the smallest limit).
int cgroup_cpu_limit(const char* dir);
int process_cpu_limit();

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

// Note [Long-row reductions]: rows longer than kLongRow (a full sum, a norm, a variance) are cut
// into pieces of kRowChunk elements, fixed by the row's length and never by the thread count,
// reduced in parallel over (row, piece) and merged in piece order: the bits are the same for any
// number of threads (Note [Determinism on CPU]). piece(o, lo, hi) reduces elements [lo, hi) of row
// o; done(o, total) receives each row's merged total.
constexpr int64_t kLongRow = 4 * kGrainSize, kRowChunk = 1 << 16;
template <typename A, typename Piece, typename Merge, typename Done>
void reduce_long_rows(int64_t outer, int64_t R, A init, const Piece& piece, const Merge& merge, const Done& done) {
  const int64_t chunks = (R + kRowChunk - 1) / kRowChunk;
  std::vector<A> part(static_cast<size_t>(outer * chunks), init);
  parallel_for(0, outer * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t lo = (w % chunks) * kRowChunk;
      part[w] = piece(w / chunks, lo, std::min(R, lo + kRowChunk));
    }
  });
  for (int64_t o = 0; o < outer; ++o) {
    A total = init;
    for (int64_t c = 0; c < chunks; ++c) total = merge(total, part[o * chunks + c]);
    done(o, total);
  }
}

}  // namespace ember
