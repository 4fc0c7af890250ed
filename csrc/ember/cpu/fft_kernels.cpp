#include "ember/cpu/fft_kernels.h"

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <map>
#include <memory>
#include <mutex>

#include "ember/core/error.h"
#include "ember/core/parallel.h"

namespace ember::cpu {
namespace {

// Note [FFTW plans]
// FFTW computes a transform through a plan made once per geometry. Plans are made with
// FFTW_ESTIMATE (a heuristic; FFTW_MEASURE would time candidates for seconds on large sizes and
// overwrite the arrays) and kept in a process-wide cache keyed by kind, precision, lengths,
// strides and the alignment of the two arrays (a 2^20 plan takes ~7 ms to make, more than the
// transform). Plans run on the caller's arrays through FFTW's new-array execute functions, which
// require the same strides, in-placeness and alignment (fftw_alignment_of) as the planning
// arrays: all three are part of the key. Executing a plan is thread-safe; making and destroying
// plans is not, so both happen under one mutex (the cache holds shared_ptrs: a plan dropped from
// a full cache lives until its last running execution ends).
std::mutex planner_mutex;

struct Plan {
  void* p = nullptr;  // fftw_plan or fftwf_plan
  bool dbl = false;
  ~Plan() {
    std::lock_guard<std::mutex> lock(planner_mutex);
    if (dbl)
      fftw_destroy_plan(static_cast<fftw_plan>(p));
    else
      fftwf_destroy_plan(static_cast<fftwf_plan>(p));
  }
};
using PlanPtr = std::shared_ptr<Plan>;

std::mutex cache_mutex;
std::map<std::vector<int64_t>, PlanPtr> plan_cache;
constexpr size_t kMaxCachedPlans = 1024;

std::vector<fftw_iodim64> iodims(const std::vector<FftDim>& v) {
  std::vector<fftw_iodim64> r;
  for (const FftDim& d : v) r.push_back({d.n, d.is, d.os});
  return r;
}

template <typename T>
int alignment_of(void* p) {
  if constexpr (std::is_same_v<T, double>)
    return fftw_alignment_of(static_cast<double*>(p));
  else
    return fftwf_alignment_of(static_cast<float*>(p));
}

// Makes the plan (under planner_mutex); throws when FFTW declines the geometry.
template <typename T>
PlanPtr make_plan(FftKind kind, const std::vector<FftDim>& dims, const std::vector<FftDim>& batch, void* in,
                  void* out) {
  auto d = iodims(dims), b = iodims(batch);
  int rank = static_cast<int>(d.size()), hrank = static_cast<int>(b.size());
  unsigned flags = FFTW_ESTIMATE | (kind == FftKind::C2R ? FFTW_DESTROY_INPUT : FFTW_PRESERVE_INPUT);
  int sign = kind == FftKind::C2CForward ? FFTW_FORWARD : FFTW_BACKWARD;
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(planner_mutex);
    if constexpr (std::is_same_v<T, double>) {
      auto* ci = static_cast<fftw_complex*>(in);
      auto* co = static_cast<fftw_complex*>(out);
      if (kind == FftKind::R2C)
        p = fftw_plan_guru64_dft_r2c(rank, d.data(), hrank, b.data(), static_cast<double*>(in), co, flags);
      else if (kind == FftKind::C2R)
        p = fftw_plan_guru64_dft_c2r(rank, d.data(), hrank, b.data(), ci, static_cast<double*>(out), flags);
      else
        p = fftw_plan_guru64_dft(rank, d.data(), hrank, b.data(), ci, co, sign, flags);
    } else {
      auto* ci = static_cast<fftwf_complex*>(in);
      auto* co = static_cast<fftwf_complex*>(out);
      if (kind == FftKind::R2C)
        p = fftwf_plan_guru64_dft_r2c(rank, d.data(), hrank, b.data(), static_cast<float*>(in), co, flags);
      else if (kind == FftKind::C2R)
        p = fftwf_plan_guru64_dft_c2r(rank, d.data(), hrank, b.data(), ci, static_cast<float*>(out), flags);
      else
        p = fftwf_plan_guru64_dft(rank, d.data(), hrank, b.data(), ci, co, sign, flags);
    }
  }
  EMBER_CHECK(p, "fft: FFTW could not plan this transform (rank ", rank, ", batch rank ", hrank, ")");
  auto plan = std::make_shared<Plan>();
  plan->p = p;
  plan->dbl = std::is_same_v<T, double>;
  return plan;
}

template <typename T>
PlanPtr get_plan(FftKind kind, const std::vector<FftDim>& dims, const std::vector<FftDim>& batch, void* in, void* out) {
  std::vector<int64_t> key{static_cast<int64_t>(kind), std::is_same_v<T, double>, alignment_of<T>(in),
                           alignment_of<T>(out), static_cast<int64_t>(dims.size())};
  for (const FftDim& d : dims) key.insert(key.end(), {d.n, d.is, d.os});
  for (const FftDim& d : batch) key.insert(key.end(), {d.n, d.is, d.os});
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = plan_cache.find(key);
    if (it != plan_cache.end()) return it->second;
  }
  PlanPtr plan = make_plan<T>(kind, dims, batch, in, out);
  std::map<std::vector<int64_t>, PlanPtr> dropped;  // destroyed after cache_mutex is released
  std::lock_guard<std::mutex> lock(cache_mutex);
  if (plan_cache.size() >= kMaxCachedPlans) dropped.swap(plan_cache);
  plan_cache.emplace(std::move(key), plan);
  return plan;
}

template <typename T>
void execute(const Plan& plan, FftKind kind, void* in, void* out) {
  if constexpr (std::is_same_v<T, double>) {
    auto p = static_cast<fftw_plan>(plan.p);
    if (kind == FftKind::R2C)
      fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<fftw_complex*>(out));
    else if (kind == FftKind::C2R)
      fftw_execute_dft_c2r(p, static_cast<fftw_complex*>(in), static_cast<double*>(out));
    else
      fftw_execute_dft(p, static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out));
  } else {
    auto p = static_cast<fftwf_plan>(plan.p);
    if (kind == FftKind::R2C)
      fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<fftwf_complex*>(out));
    else if (kind == FftKind::C2R)
      fftwf_execute_dft_c2r(p, static_cast<fftwf_complex*>(in), static_cast<float*>(out));
    else
      fftwf_execute_dft(p, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out));
  }
}

template <typename T>
void scale_range(T* p, int64_t n, T s) {
  for (int64_t i = 0; i < n; ++i) p[i] *= s;
}

template <typename T>
void scale_all(T* p, int64_t n, T s) {
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) { scale_range(p + b, e - b, s); });
}

template <typename T>
void run(FftKind kind, void* in, void* out, int64_t out_numel, const std::vector<FftDim>& dims,
         const std::vector<FftDim>& batch, double scale) {
  // Output elements are reals for C2R, complex (two reals) otherwise.
  const int64_t out_reals = kind == FftKind::C2R ? out_numel : 2 * out_numel;
  const int64_t in_elem = kind == FftKind::R2C ? sizeof(T) : 2 * sizeof(T);
  const int64_t out_elem = kind == FftKind::C2R ? sizeof(T) : 2 * sizeof(T);
  const bool scaled = scale != 1.0;
  const T s = static_cast<T>(scale);
  // Batches split across threads along the batch dim that is outermost in `out` (pocketfft, which
  // torch uses, also threads over the batch); one transform runs on one thread.
  int split = -1;
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch[i].n > 1 && (split < 0 || batch[i].os > batch[split].os)) split = static_cast<int>(i);
  int nt = get_num_threads();
  if (split < 0 || nt <= 1 || out_numel < 16384 || in_parallel_region()) {
    PlanPtr plan = get_plan<T>(kind, dims, batch, in, out);
    execute<T>(*plan, kind, in, out);
    if (scaled) scale_all(static_cast<T*>(out), out_reals, s);
    return;
  }
  const FftDim sd = batch[split];
  const int64_t chunks = std::min<int64_t>(nt, sd.n), per = (sd.n + chunks - 1) / chunks;
  // A chunk's outputs are one contiguous block when the split dim is outside every other dim.
  bool block = true;
  for (const FftDim& d : dims) block = block && d.os < sd.os;
  for (const FftDim& d : batch) block = block && (&d == &batch[split] || d.n == 1 || d.os < sd.os);
  // Plans first (they may throw), then the parallel run.
  struct Chunk {
    PlanPtr plan;
    char *in, *out;
    int64_t len;
  };
  std::vector<Chunk> work;
  for (int64_t start = 0; start < sd.n; start += per) {
    int64_t len = std::min(per, sd.n - start);
    std::vector<FftDim> b = batch;
    b[split].n = len;
    char* ci = static_cast<char*>(in) + start * sd.is * in_elem;
    char* co = static_cast<char*>(out) + start * sd.os * out_elem;
    work.push_back({get_plan<T>(kind, dims, b, ci, co), ci, co, len});
  }
  const int64_t block_reals = (kind == FftKind::C2R ? 1 : 2) * sd.os;  // per index of the split dim
  parallel_for(0, static_cast<int64_t>(work.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      execute<T>(*work[c].plan, kind, work[c].in, work[c].out);
      if (scaled && block) scale_range(reinterpret_cast<T*>(work[c].out), work[c].len * block_reals, s);
    }
  });
  if (scaled && !block) scale_all(static_cast<T*>(out), out_reals, s);
}

}  // namespace

void fft_execute(FftKind kind, ScalarType real_dtype, void* in, void* out, int64_t out_numel,
                 const std::vector<FftDim>& dims, const std::vector<FftDim>& batch, double scale) {
  if (out_numel == 0) return;
  if (real_dtype == ScalarType::Float64)
    run<double>(kind, in, out, out_numel, dims, batch, scale);
  else if (real_dtype == ScalarType::Float32)
    run<float>(kind, in, out, out_numel, dims, batch, scale);
  else
    EMBER_NOT_IMPLEMENTED("fft: unsupported dtype ", dtype_name(real_dtype));
}

int64_t fft_plan_cache_size() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  return static_cast<int64_t>(plan_cache.size());
}

void fft_plan_cache_clear() {
  std::map<std::vector<int64_t>, PlanPtr> old;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    old.swap(plan_cache);
  }  // plans are destroyed here, outside cache_mutex (their destructor takes planner_mutex)
}

}  // namespace ember::cpu
