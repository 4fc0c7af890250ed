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
// Threads: MKL's GNU threading layer runs on libgomp, the pool the kernels and OpenBLAS share
// (Note [Thread count across threads]: the caller adopts the count first); inside a parallel
// region MKL runs on the calling thread alone. EMBER_MKL=0 never loads it.
#include "ember/cpu/mkl_blas.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "ember/cpu/isa.h"

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

struct Mkl {
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  SgemmBatch sgemm_batch = nullptr;  // optional (MKL 2020 and later have them)
  DgemmBatch dgemm_batch = nullptr;
  std::string version;
};

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
               int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  load()->sgemm(kRowMajor, a_trans ? kTrans : kNoTrans, b_trans ? kTrans : kNoTrans, as_int(m), as_int(n), as_int(k),
                1.0f, a, as_int(lda), b, as_int(ldb), accumulate ? 1.0f : 0.0f, c, as_int(ldc));
}

void mkl_dgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
               const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate) {
  load()->dgemm(kRowMajor, a_trans ? kTrans : kNoTrans, b_trans ? kTrans : kNoTrans, as_int(m), as_int(n), as_int(k),
                1.0, a, as_int(lda), b, as_int(ldb), accumulate ? 1.0 : 0.0, c, as_int(ldc));
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

}  // namespace ember::cpu
