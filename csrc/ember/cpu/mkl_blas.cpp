// Note [MKL GEMM]
// Large float32/float64 products run on Intel oneMKL's cblas_?gemm when MKL is installed (PyPI's
// `mkl` wheel, which scripts/setup.sh installs on x86-64; torch links the same library in). MKL's
// kernels ran 5-10% ahead of oneDNN 2.6's brgemm matmul and Debian's OpenBLAS on the shapes of a
// transformer's layers and on large squares here (AVX-512), where oneDNN kept Issue 14's GEMM
// figure below torch's. It is not a build dependency: libmkl_rt.so.2 is dlopen'ed (RTLD_LOCAL,
// so its BLAS symbols never displace OpenBLAS's or a torch loaded in the same process) on the
// first product that wants it, and every product runs as before when it is absent.
//
// Determinism (Note [Deterministic GEMM threading]): MKL's threaded GEMM splits k by thread count
// unless put in strict CNR ("conditional numerical reproducibility") mode, in which ?gemm gives
// bitwise the same results for any number of threads (measured for 1-8 threads on k up to 10^6).
// Strict mode exists for its AVX2 and AVX-512 code branches only, so MKL runs at those two
// levels of Note [Multi-ISA kernels] (its branch follows EMBER_CPU_CAPABILITY: the same bits on
// a machine whatever the thread count; another branch may round differently, as oneDNN's
// kernels do). Strict mode measured no slower than MKL's default mode here.
//
// Note [MKL JIT GEMM]
// Strict mode costs small products (bmm of 64 128^3 matrices) about 10% of MKL's default speed:
// cblas_sgemm and the batch call then run them at 245-265 GFLOP/s on 2 threads here against
// 280-300 in default mode (torch's). MKL's JIT GEMM (mkl_cblas_jit_create_?gemm) generates a
// kernel for one shape and runs it near the default mode's speed whatever the CNR mode,
// bit-identical to strict cblas_sgemm on the shapes measured at the AVX-512 level (at the AVX2
// level its kernels still use the CPU's AVX-512 and round differently from MKL's AVX2 branch: not
// used there). It declines large shapes (MKL_NO_JIT at 128^3) but takes their row pieces (64x128
// by 128x128): a product runs as m / rows calls of one kernel, each row piece its own product.
// Kernels are made once per shape and kept (at most kJitCacheSize). A batch runs one matrix per
// thread; a single product (ops/linalg.cpp) its pieces one per thread, their number chosen by the
// shape: the thread count cannot change the bits.
//
// Note [MKL VML]
// torch computes float32/float64 log, sin, atan, ... (and float64 exp, tanh, sqrt) with MKL's vector
// math (VML: vm?Ln, vm?Sin, ... in high-accuracy mode, within 1 ulp), table-driven kernels that ran
// 1.3-2.4x faster here than ember's polynomial ones (float32) and 5-14x faster than libm's scalar calls
// (float64). Where MKL is in use ember calls the same functions (unary_kernels.cpp's vml_function_of
// table): every float64 one MKL has (bar asin, acos and erfinv, whose own kernels are faster); for float32
// and the 16-bit floats (through float blocks) log, log2, log10, sin, cos, tan, asin, acos, atan and
// erfinv; pow (float64, and float32 with a tensor exponent or base: 2-5x faster than libm's pow) and
// atan2 (float32 and float64; ember's float32 kernel took 1.25x torch's time, vmsAtan2 0.45x) through
// mkl_vml_binary_loop. Kept on ember's kernels: float32 exp, tanh, erf, sinh, lgamma, ... (faster than
// MKL's), float32 x ** scalar (Note [Float pow]: correctly rounded) and sqrt (MKL's, torch's, is a
// reciprocal square root with Newton steps, 0.70 ulp off; ember's stays IEEE's). Without MKL (the DEFAULT
// kernel level, non-Intel CPUs, EMBER_MKL=0, ember.backends.mkl.enabled = False) ember's kernels run
// everything (Note [Double math] for float64). The calls keep the thread's MXCSR (no FTZ/DAZ change:
// set_flush_denormal holds) and report no errors (inf and NaN as IEEE's).
//
// Threads: MKL's GNU threading layer runs on libgomp, the pool the kernels and OpenBLAS share
// (Note [Thread count across threads]: the caller adopts the count first); inside a parallel
// region MKL runs on the calling thread alone. EMBER_MKL=0 never loads it.
#include "ember/cpu/mkl_blas.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ember/cpu/isa.h"
#include "ember/cpu/iter.h"

namespace ember::cpu {
namespace {

// The CBLAS ABI (cblas.h's enums are ints; MKL's LP64 interface takes 32-bit integers).
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
constexpr int kThreadingGnu = 3;                                        // MKL_THREADING_GNU
constexpr int kCbwrAvx2 = 10, kCbwrAvx512 = 12, kCbwrStrict = 0x10000;  // mkl_types.h
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                       int);
// cblas_?gemm_batch_strided: ..., A, lda, stridea, B, ldb, strideb, beta, C, ldc, stridec, batch_size
using SgemmBatch = void (*)(int, int, int, int, int, int, float, const float*, int, int, const float*, int, int, float,
                            float*, int, int, int);
using DgemmBatch = void (*)(int, int, int, int, int, int, double, const double*, int, int, const double*, int, int,
                            double, double*, int, int, int);

// mkl_cblas_jit_create_?gemm(&jitter, layout, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc)
using SJitCreate = int (*)(void**, int, int, int, int, int, int, float, int, int, float, int);
using DJitCreate = int (*)(void**, int, int, int, int, int, int, double, int, int, double, int);
using JitGet = void* (*)(const void*);  // mkl_jit_get_?gemm_ptr: the kernel(jitter, a, b, c)
// cblas_?gemm_pack_get_size(identifier, m, n, k); cblas_?gemm_pack(layout, identifier, trans, m, n, k, alpha,
// src, ld, dest); cblas_?gemm_compute(layout, transa, transb, m, n, k, a, lda, b, ldb, beta, c, ldc)
using PackGetSize = size_t (*)(int, int, int, int);
using SPack = void (*)(int, int, int, int, int, int, float, const float*, int, float*);
using DPack = void (*)(int, int, int, int, int, int, double, const double*, int, double*);
using SCompute = void (*)(int, int, int, int, int, int, const float*, int, const float*, int, float, float*, int);
using DCompute = void (*)(int, int, int, int, int, int, const double*, int, const double*, int, double, double*, int);
constexpr int kBMatrix = 162, kPacked = 151;  // CblasBMatrix, CblasPacked
constexpr int kJitSuccess = 0;                // MKL_JIT_SUCCESS (MKL_NO_JIT: a plain ?gemm call instead)

struct Mkl {
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  SgemmBatch sgemm_batch = nullptr;  // optional (MKL 2020 and later have them)
  DgemmBatch dgemm_batch = nullptr;
  SJitCreate sjit_create = nullptr;  // optional (MKL 2019 update 3 and later)
  DJitCreate djit_create = nullptr;
  JitGet sjit_get = nullptr, djit_get = nullptr;
  int (*jit_destroy)(void*) = nullptr;
  PackGetSize spack_size = nullptr, dpack_size = nullptr;  // optional (MKL 2017 and later)
  SPack spack = nullptr;
  DPack dpack = nullptr;
  SCompute scompute = nullptr;
  DCompute dcompute = nullptr;
  // vm?<Function>(n, a, y, mode), VmlFunction's order; entries may be null (older MKL)
  using Vmd = void (*)(int, const double*, double*, long long);
  using Vms = void (*)(int, const float*, float*, long long);
  Vmd vmd[kVmlFunctionCount] = {};
  Vms vms[kVmlFunctionCount] = {};
  using VmdBinary = void (*)(int, const double*, const double*, double*, long long);
  using VmsBinary = void (*)(int, const float*, const float*, float*, long long);
  VmdBinary vmd_binary[2] = {};  // VmlBinary's order
  VmsBinary vms_binary[2] = {};
  void (*vmd_powx)(int, const double*, double, double*, long long) = nullptr;
  void (*vms_powx)(int, const float*, float, float*, long long) = nullptr;
  std::string version;
};
constexpr const char* kVmlNames[kVmlFunctionCount] = {"Exp",  "Ln",   "Log2", "Log10", "Log1p", "Expm1", "Sin",
                                                      "Cos",  "Tan",  "Tanh", "Erf",   "Erfc",  "Atan",  "Sinh",
                                                      "Cosh", "Exp2", "Asin", "Acos",  "ErfInv"};
// VML_HA | VML_ERRMODE_IGNORE | VML_FTZDAZ_CURRENT (mkl_vml_defines.h)
constexpr long long kVmlMode = 0x2 | 0x100;

std::mutex g_path_mu;
std::string& hint_path() {
  static auto& path = *new std::string;
  return path;
}
std::atomic<bool> g_enabled{true};

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

// nullptr when MKL is absent, refused strict mode, or the CPU level has no strict branch.
const Mkl* load() {
  static const Mkl* mkl = []() -> const Mkl* {
    const char* env = std::getenv("EMBER_MKL");
    if (env && std::string(env) == "0") return nullptr;
    int branch = 0;
    switch (cpu_capability()) {
      case CpuCapability::AVX512:
        branch = kCbwrAvx512;
        break;
      case CpuCapability::AVX2:
        branch = kCbwrAvx2;
        break;
      default:
        return nullptr;
    }
    std::string hint;
    {
      std::lock_guard<std::mutex> lock(g_path_mu);
      hint = hint_path();
    }
    void* lib = hint.empty() ? nullptr : dlopen(hint.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libmkl_rt.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto set_layer = symbol<int (*)(int)>(lib, "MKL_Set_Threading_Layer");
    auto cbwr_set = symbol<int (*)(int)>(lib, "MKL_CBWR_Set");
    auto get_version = symbol<void (*)(char*, int)>(lib, "MKL_Get_Version_String");
    auto m = new Mkl;
    m->sgemm = symbol<Sgemm>(lib, "cblas_sgemm");
    m->dgemm = symbol<Dgemm>(lib, "cblas_dgemm");
    m->sgemm_batch = symbol<SgemmBatch>(lib, "cblas_sgemm_batch_strided");
    m->dgemm_batch = symbol<DgemmBatch>(lib, "cblas_dgemm_batch_strided");
    m->sjit_create = symbol<SJitCreate>(lib, "mkl_cblas_jit_create_sgemm");
    m->djit_create = symbol<DJitCreate>(lib, "mkl_cblas_jit_create_dgemm");
    m->sjit_get = symbol<JitGet>(lib, "mkl_jit_get_sgemm_ptr");
    m->djit_get = symbol<JitGet>(lib, "mkl_jit_get_dgemm_ptr");
    m->jit_destroy = symbol<int (*)(void*)>(lib, "mkl_jit_destroy");
    m->spack_size = symbol<PackGetSize>(lib, "cblas_sgemm_pack_get_size");
    m->dpack_size = symbol<PackGetSize>(lib, "cblas_dgemm_pack_get_size");
    m->spack = symbol<SPack>(lib, "cblas_sgemm_pack");
    m->dpack = symbol<DPack>(lib, "cblas_dgemm_pack");
    m->scompute = symbol<SCompute>(lib, "cblas_sgemm_compute");
    m->dcompute = symbol<DCompute>(lib, "cblas_dgemm_compute");
    for (int f = 0; f < kVmlFunctionCount; ++f) {
      m->vmd[f] = symbol<Mkl::Vmd>(lib, (std::string("vmd") + kVmlNames[f]).c_str());
      m->vms[f] = symbol<Mkl::Vms>(lib, (std::string("vms") + kVmlNames[f]).c_str());
    }
    const char* binary_names[2] = {"Pow", "Atan2"};
    for (int f = 0; f < 2; ++f) {
      m->vmd_binary[f] = symbol<Mkl::VmdBinary>(lib, (std::string("vmd") + binary_names[f]).c_str());
      m->vms_binary[f] = symbol<Mkl::VmsBinary>(lib, (std::string("vms") + binary_names[f]).c_str());
    }
    m->vmd_powx = symbol<decltype(m->vmd_powx)>(lib, "vmdPowx");
    m->vms_powx = symbol<decltype(m->vms_powx)>(lib, "vmsPowx");
    if (!m->sjit_create || !m->djit_create || !m->sjit_get || !m->djit_get || !m->jit_destroy)
      m->sjit_create = nullptr, m->djit_create = nullptr;
    // The threading layer must be chosen before any other MKL call; a failed strict-mode request
    // (an unsupported branch on this CPU) leaves MKL unused.
    if (!set_layer || !cbwr_set || !m->sgemm || !m->dgemm || set_layer(kThreadingGnu) < 0 ||
        cbwr_set(branch | kCbwrStrict) != 0) {
      delete m;
      return nullptr;
    }
    if (get_version) {
      char buf[256] = {};
      get_version(buf, sizeof buf - 1);
      m->version = buf;
    }
    return m;
  }();
  return mkl;
}

int as_int(int64_t v) { return static_cast<int>(v); }

}  // namespace

void set_mkl_library_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_path_mu);
  hint_path() = path;
}

void set_mkl_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }
bool mkl_enabled() { return g_enabled.load(std::memory_order_relaxed); }

bool mkl_gemm_available() { return mkl_enabled() && load() != nullptr; }

bool mkl_gemm_fits(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return m <= kMax && n <= kMax && k <= kMax && lda <= kMax && ldb <= kMax && ldc <= kMax;
}

std::string mkl_version() {
  const Mkl* m = load();
  return m ? m->version : std::string();
}

void mkl_sgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float* c, int64_t ldc, bool accumulate, float alpha) {
  load()->sgemm(kRowMajor, a_trans ? kTrans : kNoTrans, b_trans ? kTrans : kNoTrans, as_int(m), as_int(n), as_int(k),
                alpha, a, as_int(lda), b, as_int(ldb), accumulate ? 1.0f : 0.0f, c, as_int(ldc));
}

void mkl_dgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
               const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate, double alpha) {
  load()->dgemm(kRowMajor, a_trans ? kTrans : kNoTrans, b_trans ? kTrans : kNoTrans, as_int(m), as_int(n), as_int(k),
                alpha, a, as_int(lda), b, as_int(ldb), accumulate ? 1.0 : 0.0, c, as_int(ldc));
}

bool mkl_pack_available() {
  const Mkl* m = mkl_enabled() ? load() : nullptr;
  return m && m->spack_size && m->dpack_size && m->spack && m->dpack && m->scompute && m->dcompute;
}
size_t mkl_pack_b_bytes(bool is_double, int64_t m, int64_t n, int64_t k) {
  return (is_double ? load()->dpack_size : load()->spack_size)(kBMatrix, as_int(m), as_int(n), as_int(k));
}
void mkl_pack_b(bool is_double, bool b_trans, int64_t m, int64_t n, int64_t k, const void* b, int64_t ldb, void* dest) {
  const int t = b_trans ? kTrans : kNoTrans;
  if (is_double)
    load()->dpack(kRowMajor, kBMatrix, t, as_int(m), as_int(n), as_int(k), 1.0, static_cast<const double*>(b),
                  as_int(ldb), static_cast<double*>(dest));
  else
    load()->spack(kRowMajor, kBMatrix, t, as_int(m), as_int(n), as_int(k), 1.0f, static_cast<const float*>(b),
                  as_int(ldb), static_cast<float*>(dest));
}
void mkl_gemm_packed_b(bool is_double, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                       const void* packed_b, int64_t ldb, void* c, int64_t ldc, bool accumulate) {
  if (is_double)
    load()->dcompute(kRowMajor, kNoTrans, kPacked, as_int(m), as_int(n), as_int(k), static_cast<const double*>(a),
                     as_int(lda), static_cast<const double*>(packed_b), as_int(ldb), accumulate ? 1.0 : 0.0,
                     static_cast<double*>(c), as_int(ldc));
  else
    load()->scompute(kRowMajor, kNoTrans, kPacked, as_int(m), as_int(n), as_int(k), static_cast<const float*>(a),
                     as_int(lda), static_cast<const float*>(packed_b), as_int(ldb), accumulate ? 1.0f : 0.0f,
                     static_cast<float*>(c), as_int(ldc));
}

namespace {
template <typename T, int F>
void vml_call(int64_t n, const T* a, T* y) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  for (int64_t i = 0; i < n; i += kMax) {
    const int len = as_int(std::min(kMax, n - i));
    if constexpr (std::is_same_v<T, double>)
      load()->vmd[F](len, a + i, y + i, kVmlMode);
    else
      load()->vms[F](len, a + i, y + i, kVmlMode);
  }
}
template <typename T, int... F>
constexpr auto vml_table(std::integer_sequence<int, F...>) {
  return std::array<void (*)(int64_t, const T*, T*), sizeof...(F)>{&vml_call<T, F>...};
}
}  // namespace

VmlDoubleFn mkl_vml_double(VmlFunction f) {
  static constexpr auto kTable = vml_table<double>(std::make_integer_sequence<int, kVmlFunctionCount>());
  const Mkl* m = mkl_enabled() ? load() : nullptr;
  const int i = static_cast<int>(f);
  return m && m->vmd[i] ? kTable[i] : nullptr;
}
VmlFloatFn mkl_vml_float(VmlFunction f) {
  static constexpr auto kTable = vml_table<float>(std::make_integer_sequence<int, kVmlFunctionCount>());
  const Mkl* m = mkl_enabled() ? load() : nullptr;
  const int i = static_cast<int>(f);
  return m && m->vms[i] ? kTable[i] : nullptr;
}

namespace {
template <typename T>
void vml_binary_run(const Mkl* m, int f, int64_t n, const T* a, const T* b, T* y) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  for (int64_t i = 0; i < n; i += kMax) {
    const int len = as_int(std::min(kMax, n - i));
    if constexpr (std::is_same_v<T, double>)
      m->vmd_binary[f](len, a + i, b + i, y + i, kVmlMode);
    else
      m->vms_binary[f](len, a + i, b + i, y + i, kVmlMode);
  }
}
template <typename T>
void vml_binary_loop(const Mkl* m, int f, const TensorIter& it) {
  bool powx = f == static_cast<int>(VmlBinary::Pow);
  if constexpr (std::is_same_v<T, double>)
    powx = powx && m->vmd_powx;
  else
    powx = powx && m->vms_powx;
  it.for_each([m, f, powx](char** d, const int64_t* s, int64_t n) {
    constexpr int64_t E = sizeof(T);
    auto* o = reinterpret_cast<T*>(d[0]);
    auto* a = reinterpret_cast<const T*>(d[1]);
    auto* b = reinterpret_cast<const T*>(d[2]);
    if (s[0] == E && s[1] == E && s[2] == E) return vml_binary_run(m, f, n, a, b, o);
    if (powx && s[0] == E && s[1] == E && s[2] == 0 && n <= std::numeric_limits<int>::max()) {
      if constexpr (std::is_same_v<T, double>)
        m->vmd_powx(as_int(n), a, *b, o, kVmlMode);
      else
        m->vms_powx(as_int(n), a, *b, o, kVmlMode);
      return;
    }
    constexpr int64_t kBlock = 256;
    T x[kBlock], y[kBlock];
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      for (int64_t j = 0; j < len; ++j) {
        x[j] = *reinterpret_cast<const T*>(d[1] + (k + j) * s[1]);
        y[j] = *reinterpret_cast<const T*>(d[2] + (k + j) * s[2]);
      }
      vml_binary_run(m, f, len, x, y, x);
      for (int64_t j = 0; j < len; ++j) *reinterpret_cast<T*>(d[0] + (k + j) * s[0]) = x[j];
    }
  });
}
}  // namespace

bool mkl_vml_binary_loop(VmlBinary f, bool is_double, const TensorIter& it) {
  const Mkl* m = mkl_enabled() ? load() : nullptr;
  const int i = static_cast<int>(f);
  if (!m || !(is_double ? static_cast<bool>(m->vmd_binary[i]) : static_cast<bool>(m->vms_binary[i]))) return false;
  if (is_double)
    vml_binary_loop<double>(m, i, it);
  else
    vml_binary_loop<float>(m, i, it);
  return true;
}

bool mkl_gemm_batch_available() {
  const Mkl* m = mkl_enabled() ? load() : nullptr;
  return m && m->sgemm_batch && m->dgemm_batch;
}

void mkl_sgemm_batch(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                     int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
                     int64_t stride_c, int64_t batch) {
  load()->sgemm_batch(kRowMajor, a_trans ? kTrans : kNoTrans, b_trans ? kTrans : kNoTrans, as_int(m), as_int(n),
                      as_int(k), 1.0f, a, as_int(lda), as_int(stride_a), b, as_int(ldb), as_int(stride_b), 0.0f, c,
                      as_int(ldc), as_int(stride_c), as_int(batch));
}

void mkl_dgemm_batch(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                     int64_t stride_a, const double* b, int64_t ldb, int64_t stride_b, double* c, int64_t ldc,
                     int64_t stride_c, int64_t batch) {
  load()->dgemm_batch(kRowMajor, a_trans ? kTrans : kNoTrans, b_trans ? kTrans : kNoTrans, as_int(m), as_int(n),
                      as_int(k), 1.0, a, as_int(lda), as_int(stride_a), b, as_int(ldb), as_int(stride_b), 0.0, c,
                      as_int(ldc), as_int(stride_c), as_int(batch));
}

void MklJitGemm::run_piece(const void* a, const void* b, void* c, int64_t r) const {
  // row piece r of op(a) starts r * rows rows down a (a column over when a is stored transposed)
  const int64_t a_step = (a_trans_ ? 1 : lda_) * rows_ * elem_size_, c_step = ldc_ * rows_ * elem_size_;
  kernel_(jitter_, const_cast<char*>(static_cast<const char*>(a) + r * a_step), const_cast<void*>(b),
          static_cast<char*>(c) + r * c_step);
}

void MklJitGemm::run(const void* a, const void* b, void* c) const {
  for (int64_t r = 0; r < pieces(); ++r) run_piece(a, b, c, r);
}

const MklJitGemm* mkl_jit_gemm(bool is_double, bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, int64_t lda,
                               int64_t ldb, int64_t ldc, int64_t min_parts, double alpha, bool accumulate) {
  constexpr size_t kJitCacheSize = 256;
  const Mkl* mkl = mkl_enabled() ? load() : nullptr;
  // at the AVX2 level the kernels are still made for the CPU (AVX-512 here), which rounds
  // differently from MKL's AVX2 branch: only at the AVX-512 level
  if (!mkl || !mkl->sjit_create || cpu_capability() != CpuCapability::AVX512 ||
      !mkl_gemm_fits(m, n, k, lda, ldb, ldc) || m <= 0 || n <= 0 || k <= 0)
    return nullptr;
  using Key = std::tuple<bool, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, double, bool>;
  static std::mutex mu;
  static auto& cache = *new std::map<Key, MklJitGemm*>;  // nullptr: declined
  const Key key{is_double, a_trans, b_trans, m, n, k, lda, ldb, ldc, min_parts, alpha, accumulate};
  // each thread first looks among the answers it has had: no lock on the hot path (attention asks
  // for every block of every batch entry)
  thread_local std::map<Key, const MklJitGemm*> seen;
  if (auto it = seen.find(key); it != seen.end()) return it->second;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return seen[key] = it->second;
  if (cache.size() >= kJitCacheSize) return nullptr;  // (not remembered: seen stays as small as cache)
  MklJitGemm* made = nullptr;
  // the whole product, else halves, else quarters: pieces that tile m exactly
  for (int64_t parts = min_parts; parts <= 4 && !made; parts *= 2) {
    if (m % parts != 0) break;
    const int rows = as_int(m / parts);
    void* jitter = nullptr;
    const int ta = a_trans ? kTrans : kNoTrans, tb = b_trans ? kTrans : kNoTrans;
    const double beta = accumulate ? 1.0 : 0.0;
    int status =
        is_double ? mkl->djit_create(&jitter, kRowMajor, ta, tb, rows, as_int(n), as_int(k), alpha, as_int(lda),
                                     as_int(ldb), beta, as_int(ldc))
                  : mkl->sjit_create(&jitter, kRowMajor, ta, tb, rows, as_int(n), as_int(k), static_cast<float>(alpha),
                                     as_int(lda), as_int(ldb), static_cast<float>(beta), as_int(ldc));
    if (status == kJitSuccess && jitter) {
      void* kernel = is_double ? mkl->djit_get(jitter) : mkl->sjit_get(jitter);
      if (kernel) {
        made = new MklJitGemm(jitter, reinterpret_cast<MklJitGemm::Kernel>(kernel), a_trans, m, rows, lda, ldc,
                              is_double ? sizeof(double) : sizeof(float));
        break;
      }
    }
    if (jitter) mkl->jit_destroy(jitter);
  }
  cache.emplace(key, made);
  return seen[key] = made;
}

}  // namespace ember::cpu
