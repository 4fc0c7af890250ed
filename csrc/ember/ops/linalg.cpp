#include <cblas.h>

#include <algorithm>
#include <array>
#include <exception>
#include <optional>
#include <sstream>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/autocast.h"
#include "ember/core/dispatch.h"
#include "ember/core/mem_overlap.h"
#include "ember/core/parallel.h"
#include "ember/core/type_name.h"
#include "ember/cpu/gemm_kernels.h"
#include "ember/cpu/mkl_blas.h"
#include "ember/cpu/onednn.h"
#include "ember/ops/complex.h"
#include "ember/ops/gemm.h"
#include "ember/ops/ops.h"
#include "ember/ops/unsafe_view.h"

namespace ember {
namespace {

struct MatLayout {  // how to hand a 2-d view to BLAS without copying
  bool trans;
  int64_t ld;
};
std::optional<MatLayout> blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cs == 1 && (rs >= std::max<int64_t>(cols, 1) || rows == 1))
    return MatLayout{false, std::max<int64_t>(rs, std::max<int64_t>(cols, 1))};
  if (rs == 1 && (cs >= std::max<int64_t>(rows, 1) || cols == 1))
    return MatLayout{true, std::max<int64_t>(cs, std::max<int64_t>(rows, 1))};
  return std::nullopt;
}

// C[m,n] = A[m,k] @ B[k,n] for one matrix each; a, b, c point at element [0,0] with given strides
// (C's rows `ldc` apart, n when -1).
template <typename T>
void gemm_one(const T* a, int64_t as0, int64_t as1, const T* b, int64_t bs0, int64_t bs1, T* c, int64_t m, int64_t n,
              int64_t k, int64_t ldc = -1) {
  if (ldc < 0) ldc = n;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || is_complex_v<T>) {
    auto la = blas_layout(m, k, as0, as1), lb = blas_layout(k, n, bs0, bs1);
    if (la && lb && m > 0 && n > 0 && k > 0) {
      auto ta = la->trans ? CblasTrans : CblasNoTrans, tb = lb->trans ? CblasTrans : CblasNoTrans;
      const T one(1), zero(0);
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, la->ld, b, lb->ld, 0.0f, c, ldc);
      else if constexpr (std::is_same_v<T, double>)
        cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, la->ld, b, lb->ld, 0.0, c, ldc);
      else if constexpr (std::is_same_v<T, std::complex<float>>)
        cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, la->ld, b, lb->ld, &zero, c, ldc);
      else
        cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, la->ld, b, lb->ld, &zero, c, ldc);
      return;
    }
  }
  using A = std::conditional_t<std::is_integral_v<T>, int64_t,
                               std::conditional_t<is_complex_v<T>, std::complex<double>, double>>;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      A acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += static_cast<A>(static_cast<opmath_t<T>>(a[i * as0 + p * as1])) *
               static_cast<A>(static_cast<opmath_t<T>>(b[p * bs0 + j * bs1]));
      if constexpr (std::is_same_v<T, bool>)
        c[i * ldc + j] = acc != 0;
      else
        c[i * ldc + j] = static_cast<T>(static_cast<opmath_t<T>>(acc));
    }
}

// Note [Deterministic GEMM threading]: OpenBLAS's own threading makes results depend on the
// thread count (with its Haswell kernels for almost every shape between 1 and 2 threads; on any
// kernels when it splits a long k). So a product is cut here into pieces fixed by its shape
// alone, and each piece is one single-threaded BLAS call (BLAS runs single-threaded inside a
// parallel region, and under OneBlasThread outside one): the same calls for any number of
// threads, spread over however many there are. The pieces are row (or column, the longer side)
// bands, a power of two of them (2 or 4 threads share them evenly), at least 128 wide: each
// band packs the other operand again, so more bands cost more copying.
struct OneBlasThread {  // OpenBLAS reads the calling thread's OpenMP count
  int restore = get_num_threads();
#ifdef _OPENMP
  OneBlasThread() { omp_set_num_threads(1); }
  ~OneBlasThread() { omp_set_num_threads(restore); }
#endif
};

// Float32 pieces of at least this many multiply-adds run on oneDNN's one-thread matmul where it
// is available (AVX-512): 2-26% faster than OpenBLAS's on the transposed-left weight gradients
// of a transformer's layers. Below it oneDNN's per-call cost shows (a 100^3 product: 0.76-0.87x
// OpenBLAS's speed).
constexpr int64_t kOnednnPieceMacs = int64_t(1) << 21;

// Products of at least this many multiply-adds run on MKL where it is installed (Note [MKL GEMM]):
// from there on its time measured 0.80-1.01x that of oneDNN's and OpenBLAS's (paired runs, 2048x256
// to 2048^3, plain and transposed left operands); below it its per-call cost shows (64^3: 1.3x).
constexpr int64_t kMklMinMacs = int64_t(1) << 21;

// Batched products of at most this many multiply-adds each run on MKL's JIT kernels (Note [MKL JIT
// GEMM] in cpu/mkl_blas.cpp).
constexpr int64_t kMklJitMaxMacs = int64_t(1) << 21;
// Single products of at most this many (and more than Note [Tiny GEMM]'s) on JIT row pieces.
constexpr int64_t kMklJitSingleMaxMacs = int64_t(1) << 22;

// Products of at most this many multiply-adds run on cpu::tiny_gemm (Note [Tiny GEMM]): bmm of 64
// 64^3 products 0.89x torch's time there against 1.04x on OpenBLAS, 32^3 ones 0.85x against 1.2x.
constexpr int64_t kTinyGemmMacs = 64 * 64 * 64;

template <typename T>
void gemm_piece(const T* a, int64_t as0, int64_t as1, const T* b, int64_t bs0, int64_t bs1, T* c, int64_t m, int64_t n,
                int64_t k, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    if (m * n * k >= kOnednnPieceMacs && cpu::onednn_matmul_f32_available() && blas_layout(m, k, as0, as1) &&
        blas_layout(k, n, bs0, bs1)) {
      const int64_t sa[3] = {m * k, m == 1 ? k : as0, k == 1 ? 1 : as1},
                    sb[3] = {k * n, k == 1 ? n : bs0, n == 1 ? 1 : bs1};
      cpu::onednn_matmul_f32_one_thread(a, sa, b, sb, c, 1, m, n, k, ldc);
      return;
    }
  }
  gemm_one<T>(a, as0, as1, b, bs0, bs1, c, m, n, k, ldc);
}

// parallel_for whose body may throw (a oneDNN failure): an exception must not leave the parallel
// region, so the first one is kept and rethrown after it.
template <typename F>
void parallel_for_rethrow(int64_t begin, int64_t end, const F& f) {
  std::exception_ptr failure;
  parallel_for(begin, end, 1, [&](int64_t lo, int64_t hi) {
    try {
      f(lo, hi);
    } catch (...) {
#pragma omp critical(ember_gemm_failure)
      if (!failure) failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
}

template <typename T>
void gemm_blocked(const T* a, int64_t as0, int64_t as1, const T* b, int64_t bs0, int64_t bs1, T* c, int64_t m,
                  int64_t n, int64_t k) {
  const bool by_rows = m >= n;
  const int64_t len = by_rows ? m : n;
  int64_t bands = 1;
  while (bands < 4 && len / (bands * 2) >= 128 && m * n * k / (bands * 2) >= (int64_t(1) << 20)) bands *= 2;
  const int64_t width = (len + bands - 1) / bands;
  auto band = [&](int64_t t) {
    const int64_t lo = t * width, w = std::min(width, len - lo);
    if (w <= 0) return;
    if (by_rows)
      gemm_piece<T>(a + lo * as0, as0, as1, b, bs0, bs1, c + lo * n, w, n, k, n);
    else
      gemm_piece<T>(a, as0, as1, b + lo * bs1, bs0, bs1, c + lo, m, w, k, n);
  };
  if (bands == 1 || get_num_threads() == 1 || in_parallel_region()) {
    OneBlasThread one;
    for (int64_t t = 0; t < bands; ++t) band(t);
    return;
  }
  parallel_for_rethrow(0, bands, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) band(t);
  });
}

// out[i] (+)= a[i] @ b[i] on MKL (Note [MKL GEMM]) for float32/float64 matrices BLAS reads in
// place, on this thread's OpenMP count (one thread inside a parallel region).
void mkl_gemm_at(const Tensor& a, const Tensor& b, Tensor& out, bool accumulate, int64_t i) {
  const int64_t m = a.sizes()[1], k = a.sizes()[2], n = b.sizes()[2];
  auto la = blas_layout(m, k, a.strides()[1], a.strides()[2]), lb = blas_layout(k, n, b.strides()[1], b.strides()[2]);
  if (a.dtype() == ScalarType::Float32)
    cpu::mkl_sgemm(la->trans, lb->trans, m, n, k, a.data<float>() + i * a.strides()[0], la->ld,
                   b.data<float>() + i * b.strides()[0], lb->ld, out.data<float>() + i * m * n, n, accumulate);
  else
    cpu::mkl_dgemm(la->trans, lb->trans, m, n, k, a.data<double>() + i * a.strides()[0], la->ld,
                   b.data<double>() + i * b.strides()[0], lb->ld, out.data<double>() + i * m * n, n, accumulate);
}

// Whether mkl_gemm_at can run these operands: MKL available, layouts BLAS reads, sizes that fit.
bool mkl_gemm_ok(const Tensor& a, const Tensor& b) {
  const int64_t m = a.sizes()[1], k = a.sizes()[2], n = b.sizes()[2];
  auto la = blas_layout(m, k, a.strides()[1], a.strides()[2]), lb = blas_layout(k, n, b.strides()[1], b.strides()[2]);
  return la && lb && m * n * k > 0 && cpu::mkl_gemm_fits(m, n, k, la->ld, lb->ld, n) && cpu::mkl_gemm_available();
}

// out[0] = a[0] @ b[0] on MKL; false, having done nothing, when mkl_gemm_ok says no.
bool mkl_gemm(const Tensor& a, const Tensor& b, Tensor& out) {
  if (!mkl_gemm_ok(a, b)) return false;
  adopt_num_threads();  // MKL's GNU threading layer runs on this thread's OpenMP count
  mkl_gemm_at(a, b, out, false, 0);
  return true;
}

// a: [B, m, k], b: [B, k, n] (any strides) -> contiguous [B, m, n]: a new tensor, or `into` when
// given (contiguous, that shape and a's dtype, sharing no memory with a or b: mm/bmm with out=).
Tensor batched_mm(const Tensor& a_in, const Tensor& b_in, const Tensor& into = Tensor()) {
  int64_t B = a_in.sizes()[0], m = a_in.sizes()[1], k = a_in.sizes()[2], n = b_in.sizes()[2];
  Tensor out = into.defined() ? into : empty({B, m, n}, a_in.dtype());
  if (out.numel() == 0) return out;
  if (k == 0) return fill_(out, 0);
  // A matrix BLAS cannot read in place (an expanded, stride-0 operand such as the gradient of a
  // sum, or a doubly strided view) is copied once: GEMM on the copy beats the scalar loop by far.
  Tensor a = a_in, b = b_in;
  ScalarType dt = a.dtype();
  // bfloat16 on oneDNN's matmul where it has fast kernels (Note [bfloat16 matmul] in cpu/onednn.h).
  if (dt == ScalarType::BFloat16 && cpu::onednn_bf16_available() && a.device().is_cpu()) {
    auto strided_ok = [](const Tensor& t) {
      return (t.strides()[0] != 0 || t.sizes()[0] == 1) && (t.strides()[1] == 1 || t.strides()[2] == 1);
    };
    if (!strided_ok(a)) a = contiguous(a);
    if (!strided_ok(b)) b = contiguous(b);
    int64_t as[3] = {a.strides()[0], a.strides()[1], a.strides()[2]},
            bs[3] = {b.strides()[0], b.strides()[1], b.strides()[2]};
    if (a.sizes()[0] == 1) as[0] = m * k;  // a broadcast batch stride of one matrix is irrelevant
    if (b.sizes()[0] == 1) bs[0] = k * n;
    cpu::onednn_matmul_bf16(a.data<BFloat16>(), as, b.data<BFloat16>(), bs, out.data<BFloat16>(), B, m, n, k);
    return out;
  }
  // 16-bit floats otherwise: float32 GEMM on converted copies, rounded once at the end (float
  // accumulation, as torch's CPU kernels; the scalar loop below ran ~100x slower).
  if (dt == ScalarType::BFloat16 || dt == ScalarType::Float16)
    return copy_(out, batched_mm(to_dtype(a, ScalarType::Float32), to_dtype(b, ScalarType::Float32)));
  if (dt == ScalarType::Float32 || dt == ScalarType::Float64 || is_complex(dt)) {
    if (!blas_layout(m, k, a.strides()[1], a.strides()[2])) a = contiguous(a);
    if (!blas_layout(k, n, b.strides()[1], b.strides()[2])) b = contiguous(b);
  }
  const bool mkl_real = (dt == ScalarType::Float32 || dt == ScalarType::Float64) && a.device().is_cpu();
  // Note [MKL JIT GEMM] (cpu/mkl_blas.cpp): products up to 128^3 on a kernel MKL made for their
  // shape, one matrix per thread: a batch's (64 128x64 by 64x128 products: 1.06-1.11 -> 0.96-0.99x
  // torch's time; 64 128^3 ones 0.87-0.93 -> 0.92-1.02x torch's throughput). Larger ones ran no
  // faster (16 256^3 products 1.03x the batch call's time). A single product past Note [Tiny
  // GEMM]'s size and up to 2^22 multiply-adds runs in 2 or 4 row pieces (by its size, never by
  // the thread count, so the bits stay the same for any count) spread over the threads: 100^3
  // 1.36x torch's time on OpenBLAS -> 0.71-0.81x, 128^3 0.99x on threaded MKL -> 0.81-0.91x,
  // 128x256x128 0.99 -> 0.75-0.82x.
  const int64_t macs = m * n * k;
  if (mkl_real && macs > kTinyGemmMacs && macs <= (B == 1 ? kMklJitSingleMaxMacs : kMklJitMaxMacs) &&
      (B == 1 || B * macs >= kMklMinMacs) && (B == 1 || (a.strides()[0] != 0 && b.strides()[0] != 0)) &&
      mkl_gemm_ok(a, b)) {
    auto la = blas_layout(m, k, a.strides()[1], a.strides()[2]), lb = blas_layout(k, n, b.strides()[1], b.strides()[2]);
    const bool f64 = dt == ScalarType::Float64;
    const cpu::MklJitGemm* jit = nullptr;
    int64_t parts = B > 1 ? 1 : macs >= (int64_t(1) << 21) ? 4 : macs >= (int64_t(1) << 19) ? 2 : 1;
    for (; parts >= 1 && !jit; parts /= 2)
      if (m % parts == 0) jit = cpu::mkl_jit_gemm(f64, la->trans, lb->trans, m, n, k, la->ld, lb->ld, n, parts);
    if (jit) {
      const int64_t elem = f64 ? 8 : 4;
      const char *pa = static_cast<const char*>(a.data_ptr()), *pb = static_cast<const char*>(b.data_ptr());
      char* pc = static_cast<char*>(out.data_ptr());
      if (B == 1) {
        parallel_for(0, jit->pieces(), 1, [&](int64_t lo, int64_t hi) {
          for (int64_t r = lo; r < hi; ++r) jit->run_piece(pa, pb, pc, r);
        });
      } else {
        parallel_for(0, B, 1, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i)
            jit->run(pa + i * a.strides()[0] * elem, pb + i * b.strides()[0] * elem, pc + i * m * n * elem);
        });
      }
      return out;
    }
  }
  // Note [MKL GEMM] (cpu/mkl_blas.cpp): one float32/float64 product on MKL where it is installed.
  if (mkl_real && B == 1 && m * n * k >= kMklMinMacs && mkl_gemm(a, b, out)) return out;
  // A batch: one call of MKL's batch GEMM, which spreads the matrices over the threads: 2-6% faster
  // than a parallel loop of single-threaded MKL products (which remains for an MKL without the
  // batch call or strides past 32 bits), itself 1.1x faster than oneDNN's batched matmul on 64
  // products of 128^3. Strict CNR mode gives the same bits for any thread count either way; it
  // costs these small products about 10% against MKL's default mode (torch's), large ones nothing.
  if (mkl_real && B > 1 && B * m * n * k >= kMklMinMacs && a.strides()[0] != 0 && b.strides()[0] != 0 &&
      mkl_gemm_ok(a, b)) {
    adopt_num_threads();
    if (cpu::mkl_gemm_batch_available() && cpu::mkl_gemm_fits(B, m * n, 0, a.strides()[0], b.strides()[0], 0)) {
      auto la = blas_layout(m, k, a.strides()[1], a.strides()[2]),
           lb = blas_layout(k, n, b.strides()[1], b.strides()[2]);
      if (dt == ScalarType::Float32)
        cpu::mkl_sgemm_batch(la->trans, lb->trans, m, n, k, a.data<float>(), la->ld, a.strides()[0], b.data<float>(),
                             lb->ld, b.strides()[0], out.data<float>(), n, m * n, B);
      else
        cpu::mkl_dgemm_batch(la->trans, lb->trans, m, n, k, a.data<double>(), la->ld, a.strides()[0], b.data<double>(),
                             lb->ld, b.strides()[0], out.data<double>(), n, m * n, B);
    } else if (B >= get_num_threads()) {
      parallel_for_rethrow(0, B, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) mkl_gemm_at(a, b, out, false, i);
      });
    } else {
      for (int64_t i = 0; i < B; ++i) mkl_gemm_at(a, b, out, false, i);
    }
    return out;
  }
  // Note [float32 matmul on oneDNN]: one float32 product of at least 2^21 multiply-adds runs on
  // oneDNN's brgemm matmul, measured 8-20% faster than Debian's OpenBLAS 0.3.21 on the shapes of a
  // small transformer's layers (2048x256 by 256x768 and their gradients) with AVX-512, and on par
  // for large squares. Only with a row-major left operand: with a transposed one (x^T @ g) oneDNN
  // splits k among threads for some shapes, so results would depend on the thread count; row-major
  // ones measured bit-identical for 1-64 threads (test_threads_determinism.py). Transposed ones
  // run below as the fixed pieces of Note [Deterministic GEMM threading], each on oneDNN's
  // one-thread matmul (gemm_piece; a batch as one call per thread's share of it). Only with
  // AVX-512: below it oneDNN's gemm-based matmul splits k by thread count. Batches (bmm of
  // 64 128x128 products: 1.3x the loop of single-threaded BLAS calls) run as one oneDNN call.
  if (dt == ScalarType::Float32 && B * m * n * k >= (int64_t(1) << 21) && (a.strides()[2] == 1 || k == 1) &&
      cpu::onednn_matmul_f32_available() && a.device().is_cpu()) {
    adopt_num_threads();  // oneDNN, like OpenBLAS, runs on this thread's OpenMP count
    // a size-1 dim's stride is free (0 when expanded): the dense one; an expanded batch is copied
    if (B > 1 && a.strides()[0] == 0) a = contiguous(a);
    if (B > 1 && b.strides()[0] == 0) b = contiguous(b);
    int64_t as[3] = {B == 1 ? m * k : a.strides()[0], m == 1 ? k : a.strides()[1], k == 1 ? 1 : a.strides()[2]},
            bs[3] = {B == 1 ? k * n : b.strides()[0], k == 1 ? n : b.strides()[1], n == 1 ? 1 : b.strides()[2]};
    cpu::onednn_matmul_f32(a.data<float>(), as, b.data<float>(), bs, out.data<float>(), B, m, n, k);
    return out;
  }
  // A transposed left operand whose rows lie far apart (a = x^T of a wide x: a Linear's weight
  // gradient g^T @ x with 1024 outputs) is read down columns 4 KiB apart, which thrashes the cache
  // sets: 0.81x torch's speed. When b's rows are much closer, c^T = b^T @ a^T reads that way (its
  // left operand b^T, with b's stride) and one transposed copy of the small result follows
  // (dY^T X of 2048x1024 by 2048x256: 6.65 -> 5.38 ms). A choice by shape, so results stay the same
  // for any thread count.
  if (dt == ScalarType::Float32 && B == 1 && m > 1 && n > 1 && a.strides()[1] == 1 && b.strides()[2] == 1 &&
      a.strides()[2] >= 2 * b.strides()[1] && k >= std::max(m, n) && m * n * k >= kOnednnPieceMacs &&
      cpu::onednn_matmul_f32_available() && a.device().is_cpu())
    return copy_(out, transpose(batched_mm(transpose(b, 1, 2), transpose(a, 1, 2)), 1, 2));
  adopt_num_threads();  // OpenBLAS reads this thread's OpenMP count (Note [Thread count across threads])
  EMBER_DISPATCH_ALL_AND_COMPLEX(a.dtype(), "matmul", [&] {
    const scalar_t* pa = a.data<scalar_t>();
    const scalar_t* pb = b.data<scalar_t>();
    scalar_t* pc = out.data<scalar_t>();
    // Note [Deterministic GEMM threading]: the same bands whichever loop below runs (inside the
    // batch loop's parallel region each matrix's bands run one after another).
    // Note [Tiny GEMM] (cpu/gemm_kernels.cpp): tiny float products without a BLAS call.
    constexpr bool real_float = std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>;
    const bool tiny = real_float && m * n * k <= kTinyGemmMacs && (b.strides()[2] == 1 || n == 1) && k > 0;
    const auto tiny_gemm = EMBER_ISA_SELECT(cpu::tiny_gemm);
    auto one = [&](int64_t i) {
      if (tiny)
        tiny_gemm(dt, m, n, k, pa + i * a.strides()[0], a.strides()[1], a.strides()[2], pb + i * b.strides()[0],
                  b.strides()[1], pc + i * m * n);
      else
        gemm_blocked<scalar_t>(pa + i * a.strides()[0], a.strides()[1], a.strides()[2], pb + i * b.strides()[0],
                               b.strides()[1], b.strides()[2], pc + i * m * n, m, n, k);
    };
    // One thread per matrix (BLAS runs single-threaded inside a parallel region) unless matrices
    // are big: a loop of threaded GEMMs on 128^3 ran 30x slower than this on a loaded 2-core box.
    // Tiny batches stay serial: waking the team costs more than the products (a gradcheck of small
    // batched Householder products ran 10-50x slower on the loaded box with a region per bmm).
    if (B > 1 && B * m * n * k >= (1 << 15) &&
        (m * n * k < (1 << 21) || (B >= get_num_threads() && m * n * k <= (1 << 24)))) {
      // float32 (transposed-left: row-major ones ran on oneDNN above) as one one-thread oneDNN call
      // per thread's share of the batch: a call per matrix cost more than the 128x128 products
      if constexpr (std::is_same_v<scalar_t, float>) {
        if (B * m * n * k >= kOnednnPieceMacs && a.strides()[0] != 0 && b.strides()[0] != 0 &&
            cpu::onednn_matmul_f32_available() && a.device().is_cpu()) {
          const int64_t sa[3] = {a.strides()[0], m == 1 ? k : a.strides()[1], k == 1 ? 1 : a.strides()[2]},
                        sb[3] = {b.strides()[0], k == 1 ? n : b.strides()[1], n == 1 ? 1 : b.strides()[2]};
          parallel_for_rethrow(0, B, [&](int64_t lo, int64_t hi) {
            // (the casts only name float as float: this branch is compiled, not taken, for other types)
            cpu::onednn_matmul_f32_one_thread(reinterpret_cast<const float*>(pa + lo * sa[0]), sa,
                                              reinterpret_cast<const float*>(pb + lo * sb[0]), sb,
                                              reinterpret_cast<float*>(pc + lo * m * n), hi - lo, m, n, k, n);
          });
          return;
        }
      }
      parallel_for(0, B, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) one(i);
      });
    } else {
      for (int64_t i = 0; i < B; ++i) one(i);
    }
  });
  return out;
}

std::string dims_str(const Tensor& t) {
  std::ostringstream ss;
  for (int64_t i = 0; i < t.dim(); ++i) ss << (i ? "x" : "") << t.sizes()[i];
  return ss.str();
}

}  // namespace

void gemm_raw_one_thread(ScalarType dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                         int64_t lda, const void* b, int64_t ldb, bool accumulate, void* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  std::optional<OneBlasThread> one;  // inside a parallel region BLAS runs on one thread already
  if (!in_parallel_region()) one.emplace();
  // MKL where it is in use (Note [MKL GEMM]): a recurrent step's 64x256 by 256x256 product took
  // 87 us on OpenBLAS, 69 on MKL
  if (cpu::mkl_gemm_available() && cpu::mkl_gemm_fits(m, n, k, lda, ldb, ldc)) {
    if (dt == ScalarType::Float32)
      cpu::mkl_sgemm(trans_a, trans_b, m, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb,
                     static_cast<float*>(c), ldc, accumulate, 1.0f);
    else
      cpu::mkl_dgemm(trans_a, trans_b, m, n, k, static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb,
                     static_cast<double*>(c), ldc, accumulate, 1.0);
    return;
  }
  const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  if (dt == ScalarType::Float32)
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, static_cast<const float*>(a), lda, static_cast<const float*>(b),
                ldb, accumulate ? 1.0f : 0.0f, static_cast<float*>(c), ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, static_cast<const double*>(a), lda, static_cast<const double*>(b),
                ldb, accumulate ? 1.0 : 0.0, static_cast<double*>(c), ldc);
}

// Note [Autocast]: the matmul family runs in the autocast dtype under CPU autocast.
#define EMBER_AUTOCAST_LOWER(call, ...)      \
  if (autocast::active_for({__VA_ARGS__})) { \
    autocast::ExcludeGuard autocast_exclude; \
    return call;                             \
  }

namespace {
void check_mm(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 2, "self must be a matrix");
  EMBER_CHECK(b.dim() == 2, "mat2 must be a matrix");
  EMBER_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", dims_str(a), " and ",
              dims_str(b), ")");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ", cpp_type_name(a.dtype()),
              " != ", cpp_type_name(b.dtype()));
}
void check_bmm(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  EMBER_CHECK(a.sizes()[0] == b.sizes()[0], "batch1 and batch2 must have same number of batches, got ", a.sizes()[0],
              " and ", b.sizes()[0]);
  EMBER_CHECK(a.sizes()[2] == b.sizes()[1], "Expected size for first two dimensions of batch2 tensor to be: [",
              a.sizes()[0], ", ", a.sizes()[2], "] but got: [", b.sizes()[0], ", ", b.sizes()[1], "].");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected scalar type ", scalar_type_name(a.dtype()), " but found ",
              scalar_type_name(b.dtype()));
}

// mm/bmm with out=: the checks of the op, then out's (as torch: no autograd through out=, out's
// dtype the product's, no autocast for out= forms). The product goes straight into out when it is
// contiguous after resizing, shares no memory with a or b and takes no autograd part; otherwise it
// is computed first (out may alias an input) and copied in. The direct write saved the copy of a fresh result
// (mm 1024^3 with out=: 0.97x torch's speed).
template <typename Compute>
Tensor& product_into(Tensor& out, const Tensor& a, const Tensor& b, Shape shape, const char* op,
                     const Compute& compute) {
  const bool grad = autograd::GradMode::is_enabled() &&
                    (autograd::requires_grad(a) || autograd::requires_grad(b) || autograd::requires_grad(out));
  EMBER_CHECK(!grad, op,
              "(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
  autocast::ExcludeGuard no_autocast;
  const bool direct = a.device().is_cpu() && b.device().is_cpu() && out.device().is_cpu() &&
                      !autograd::requires_grad(out) && !detail::same_storage(out, a) && !detail::same_storage(out, b);
  EMBER_CHECK(out.dtype() == a.dtype(), "Expected out tensor to have dtype ", cpp_type_name(a.dtype()), ", but got ",
              cpp_type_name(out.dtype()), " instead");
  Tensor r = direct ? Tensor() : compute(Tensor());  // out may alias an input: the product first
  resize_(out, shape);
  if (!direct || !out.is_contiguous()) return copy_(out, r.defined() ? r : compute(Tensor()));
  out.bump_version();
  compute(out);
  return out;
}
}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  EMBER_AUTOCAST_LOWER(mm(autocast::to_lower(a), autocast::to_lower(b)), &a, &b)
  check_mm(a, b);
  Tensor r;
  {
    autograd::NoGradGuard raw;
    r = unsafe_view(batched_mm(unsqueeze(a, 0), unsqueeze(b, 0)), Shape{a.sizes()[0], b.sizes()[1]});
  }
  if (auto n = autograd::make_node<autograd::MmBackward0>(a, b)) {
    n->self = autograd::SavedVariable(a, false);
    n->mat2 = autograd::SavedVariable(b, false);
    n->mat2_transposed = b.strides()[0] == 1 && b.strides()[1] != 1;
    autograd::set_history(r, n);
  }
  return r;
}

Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  check_mm(a, b);
  return product_into(out, a, b, Shape{a.sizes()[0], b.sizes()[1]}, "mm", [&](const Tensor& into) {
    if (!into.defined()) return mm(a, b);
    autograd::NoGradGuard raw;
    return batched_mm(unsqueeze(a, 0), unsqueeze(b, 0), unsqueeze(into, 0));
  });
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  EMBER_AUTOCAST_LOWER(bmm(autocast::to_lower(a), autocast::to_lower(b)), &a, &b)
  check_bmm(a, b);
  Tensor r = batched_mm(a, b);
  if (auto n = autograd::make_node<autograd::BmmBackward0>(a, b)) {
    n->self = autograd::SavedVariable(a, false);
    n->mat2 = autograd::SavedVariable(b, false);
    autograd::set_history(r, n);
  }
  return r;
}

Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  check_bmm(a, b);
  return product_into(out, a, b, Shape{a.sizes()[0], a.sizes()[1], b.sizes()[2]}, "bmm", [&](const Tensor& into) {
    if (!into.defined()) return bmm(a, b);
    autograd::NoGradGuard raw;
    return batched_mm(a, b, into);
  });
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_AUTOCAST_LOWER(matmul(autocast::to_lower(a), autocast::to_lower(b)), &a, &b)
  int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db,
              "D");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ", dtype_name(a.dtype()),
              " != ", dtype_name(b.dtype()));
  if (da == 1 && db == 1) {
    EMBER_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
                b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
                " elements respectively");
    return unsafe_view(mm(unsqueeze(a, 0), unsqueeze(b, 1)), Shape{});
  }
  if (da == 2 && db == 1) return unsafe_view(mm(a, unsqueeze(b, 1)), Shape{a.sizes()[0]});
  if (da == 1 && db == 2) return unsafe_view(mm(unsqueeze(a, 0), b), Shape{b.sizes()[1]});
  if (da == 2 && db == 2) return mm(a, b);
  // Batched: treat 1-d operands as a row/column, broadcast the batch dims.
  Tensor A = da == 1 ? unsqueeze(a, 0) : a;
  Tensor Bt = db == 1 ? unsqueeze(b, 1) : b;
  int64_t m = A.sizes()[A.dim() - 2], k = A.sizes()[A.dim() - 1];
  int64_t k2 = Bt.sizes()[Bt.dim() - 2], n = Bt.sizes()[Bt.dim() - 1];
  EMBER_CHECK(k == k2, "Expected size for first two dimensions of batch2 tensor to be: [", k, ", ", n, "] but got: [",
              k2, ", ", n, "].");
  Shape ba(A.sizes().begin(), A.sizes().end() - 2), bb(Bt.sizes().begin(), Bt.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul");
  int64_t nb = numel_of(batch);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {m, k});
  eb.insert(eb.end(), {k, n});
  // Folding the batch dims copies an operand whose batch dims do not merge (attention's heads,
  // B x H of a (B, T, H, d) tensor). A column-major one (k^T) is copied column-major: the copy
  // then runs along its contiguous dim, and bmm takes the transposed result as it is (q @ k^T of
  // 64 128x64 heads: 1.34 -> 1.01 ms, torch 1.34).
  auto fold = [nb](const Tensor& t, const Shape& full, int64_t r, int64_t c) {
    Tensor e = expand(t, full);
    const int64_t d = e.dim();
    if (r > 1 && c > 1 && e.strides()[d - 2] == 1 && e.strides()[d - 1] != 1)
      return transpose(reshape(transpose(e, d - 2, d - 1), Shape{nb, c, r}), 1, 2);
    return reshape(e, Shape{nb, r, c});
  };
  Tensor A3 = fold(A, ea, m, k);
  Tensor B3 = fold(Bt, eb, k, n);
  Tensor C = bmm(A3, B3);
  Shape out = batch;
  if (da > 1) out.push_back(m);
  if (db > 1) out.push_back(n);
  return unsafe_view(C, out);
}

// ---- products built on mm/bmm: their gradients come from mm/bmm, mul and add ----
namespace {
Tensor scaled(const Tensor& t, const Scalar& s) {
  if (!s.is_bool() && s.to_complex() == std::complex<double>(1.0)) return t;
  return mul(t, scalar_tensor(s, std::nullopt, true));
}
// beta * input + alpha * prod with input broadcast to prod's shape (input ignored when beta == 0).
Tensor add_product(const char* op, const Tensor& input, const Tensor& prod, const Scalar& beta, const Scalar& alpha) {
  Shape target = prod.sizes();
  bool ok = input.dim() <= prod.dim();
  for (int64_t i = 0; ok && i < input.dim(); ++i) {
    int64_t s = input.sizes()[input.dim() - 1 - i];
    ok = s == 1 || s == target[target.size() - 1 - i];
  }
  EMBER_CHECK(ok, op, ": the size of input ", input.shape_str(), " is not broadcastable to the result's ",
              shape_str(target));
  EMBER_CHECK(input.dtype() == prod.dtype(), op, ": expected input and the matrices to have the same dtype, but got ",
              dtype_name(input.dtype()), " and ", dtype_name(prod.dtype()));
  Tensor p = scaled(prod, alpha);
  if (!beta.is_bool() && beta.to_complex() == std::complex<double>(0.0)) return p;
  return add(scaled(expand(input, target), beta), p);
}

// addmm on MKL (Note [MKL GEMM]): the bias is copied into the result, which the product then
// accumulates into (beta = 1), as torch's addmm does. Undefined when it does not apply.
Tensor addmm_mkl(const Tensor& input, const Tensor& m1, const Tensor& m2) {
  const ScalarType dt = m1.dtype();
  if (dt != ScalarType::Float32 && dt != ScalarType::Float64) return {};
  for (const Tensor* t : {&input, &m1, &m2})
    if (t->dtype() != dt || !t->device().is_cpu()) return {};
  const int64_t m = m1.sizes()[0], k = m1.sizes()[1], n = m2.sizes()[1];
  const bool bias_ok = (input.dim() == 1 && input.sizes()[0] == n) ||
                       (input.dim() == 2 && (input.sizes()[0] == m || input.sizes()[0] == 1) && input.sizes()[1] == n);
  if (!bias_ok || k != m2.sizes()[0] || m * n * k < kMklMinMacs) return {};
  const Tensor a = unsqueeze(m1, 0), b = unsqueeze(m2, 0);
  if (!mkl_gemm_ok(a, b)) return {};  // before the bias is copied
  Tensor out = empty({m, n}, dt);
  copy_(out, expand(input, Shape{m, n}));
  adopt_num_threads();  // MKL's GNU threading layer runs on this thread's OpenMP count
  mkl_gemm_at(a, b, out, true, 0);
  return out;
}

// Note [float32 matmul on oneDNN] again: a float32 vector bias goes into the oneDNN product
// itself, added as each output tile is written (the separate add pass cost ~8% of a small
// transformer's linear layers). bfloat16 (Note [bfloat16 matmul]) too, where the bias is added
// to the float accumulator before the one rounding, as torch's oneDNN linear does (the separate
// add rounded twice, and cost 0.68-0.84x torch's speed on a transformer's layers). Undefined
// when it does not apply.
Tensor addmm_onednn(const Tensor& input, const Tensor& m1, const Tensor& m2) {
  const ScalarType dt = m1.dtype();
  for (const Tensor* t : {&input, &m1, &m2})
    if (t->dtype() != dt || !t->device().is_cpu()) return {};
  const bool bf16 = dt == ScalarType::BFloat16;
  if (bf16 ? !cpu::onednn_bf16_available() : (dt != ScalarType::Float32 || !cpu::onednn_matmul_f32_available()))
    return {};
  const int64_t m = m1.sizes()[0], k = m1.sizes()[1], n = m2.sizes()[1];
  if (input.dim() != 1 || k != m2.sizes()[0] || input.sizes()[0] != n || (n > 1 && input.strides()[0] != 1) ||
      m * n * k == 0 || (!bf16 && m * n * k < (int64_t(1) << 21)))
    return {};
  auto la = blas_layout(m, k, m1.strides()[0], m1.strides()[1]);
  auto lb = blas_layout(k, n, m2.strides()[0], m2.strides()[1]);
  if (!la || la->trans || !lb) return {};
  Tensor out = empty({m, n}, dt);
  adopt_num_threads();  // oneDNN runs on this thread's OpenMP count
  // a size-1 dim's stride is free (0 when expanded): the dense one
  int64_t as[3] = {m * k, m == 1 ? k : m1.strides()[0], k == 1 ? 1 : m1.strides()[1]},
          bs[3] = {k * n, k == 1 ? n : m2.strides()[0], n == 1 ? 1 : m2.strides()[1]};
  if (bf16)
    cpu::onednn_matmul_bf16(m1.data<BFloat16>(), as, m2.data<BFloat16>(), bs, out.data<BFloat16>(), 1, m, n, k,
                            input.data<BFloat16>());
  else
    cpu::onednn_matmul_f32(m1.data<float>(), as, m2.data<float>(), bs, out.data<float>(), 1, m, n, k,
                           input.data<float>());
  return out;
}
}  // namespace

Tensor mv(const Tensor& a, const Tensor& v) {
  (void)a.size(0);  // torch sizes the result first: a 0-d matrix is an IndexError
  EMBER_CHECK(a.dim() == 2 && v.dim() == 1, "vector + matrix @ vector expected, got 1, ", a.dim(), ", ", v.dim());
  EMBER_CHECK(a.sizes()[1] == v.sizes()[0], "size mismatch, got input (", a.sizes()[0], "), mat (", dims_str(a),
              "), vec (", v.sizes()[0], ")");
  return unsafe_view(mm(a, unsqueeze(v, 1)), Shape{a.sizes()[0]});
}

Tensor dot(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(), "D tensors");
  EMBER_CHECK(a.dtype() == b.dtype(), "dot : expected both vectors to have same dtype, but found ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  EMBER_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
              b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
              " elements respectively");
  return unsafe_view(mm(unsqueeze(a, 0), unsqueeze(b, 1)), Shape{});
}

Tensor vdot(const Tensor& a, const Tensor& b) { return dot(is_complex(a.dtype()) ? conj(a) : a, b); }

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, Scalar beta, Scalar alpha) {
  EMBER_AUTOCAST_LOWER(addmm(autocast::to_lower(input), autocast::to_lower(m1), autocast::to_lower(m2), beta, alpha),
                       &input, &m1, &m2)
  auto is_one = [](const Scalar& s) { return !s.is_bool() && s.to_complex() == std::complex<double>(1.0); };
  if (!is_one(beta) || !is_one(alpha)) return add_product("addmm", input, mm(m1, m2), beta, alpha);
  Tensor r;
  {
    autograd::NoGradGuard raw;  // the history is the one node below
    autograd::forward_ad::HideLevelsGuard no_tangent(0);
    if (m1.dim() == 2 && m2.dim() == 2) {
      // Outputs up to 512 wide: oneDNN's product with the bias fused measured 5-8% faster than
      // MKL's copy-then-accumulate (2048x256 by 256x256 or 1024x256); wider ones 1-10% slower.
      const bool narrow = m2.sizes()[1] <= 512;
      r = narrow ? addmm_onednn(input, m1, m2) : addmm_mkl(input, m1, m2);
      if (!r.defined()) r = narrow ? addmm_mkl(input, m1, m2) : addmm_onednn(input, m1, m2);
    }
    if (!r.defined()) r = add_product("addmm", input, mm(m1, m2), beta, alpha);
  }
  if (auto node = autograd::make_node<autograd::AddmmBackward0>(input, m1, m2)) {
    node->mat1 = autograd::SavedVariable(m1, false);
    node->mat2 = autograd::SavedVariable(m2, false);
    node->self_sizes = input.sizes();
    node->out_sizes = r.sizes();
    node->mat2_transposed = m2.strides()[0] == 1 && m2.strides()[1] != 1;
    autograd::set_history(r, node);
  }
  return r;
}
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, Scalar beta, Scalar alpha) {
  // Checked here: mv's own first check (mat.size(0)) is an IndexError torch's addmv does not raise.
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ", input.dim(), ", ", mat.dim(),
              ", ", vec.dim());
  return add_product("addmv", input, mv(mat, vec), beta, alpha);
}
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta, Scalar alpha) {
  EMBER_AUTOCAST_LOWER(baddbmm(autocast::to_lower(input), autocast::to_lower(b1), autocast::to_lower(b2), beta, alpha),
                       &input, &b1, &b2)
  // torch sizes the result from these dims first, so a 0-d or 2-d operand is an IndexError.
  (void)b1.size(0), (void)b1.size(1), (void)b2.size(2);
  return add_product("baddbmm", input, bmm(b1, b2), beta, alpha);
}
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta, Scalar alpha) {
  EMBER_AUTOCAST_LOWER(addbmm(autocast::to_lower(input), autocast::to_lower(b1), autocast::to_lower(b2), beta, alpha),
                       &input, &b1, &b2)
  (void)b1.size(1), (void)b2.size(2);  // the result's dims first, as torch (IndexError for a 0-d or 2-d operand)
  EMBER_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  EMBER_CHECK(b1.sizes()[0] == b2.sizes()[0], "batch1 and batch2 must have same number of batches, got ", b1.sizes()[0],
              " and ", b2.sizes()[0]);
  EMBER_CHECK(b1.sizes()[2] == b2.sizes()[1], "Incompatible matrix sizes for bmm (", b1.sizes()[1], "x", b1.sizes()[2],
              " and ", b2.sizes()[1], "x", b2.sizes()[2], ")");
  // sum_b b1[b] @ b2[b] is one GEMM: [n, B*k] @ [B*k, p].
  int64_t B = b1.sizes()[0], n = b1.sizes()[1], k = b1.sizes()[2], p = b2.sizes()[2];
  Tensor lhs = reshape(permute(b1, {1, 0, 2}), Shape{n, B * k});
  Tensor rhs = reshape(b2, Shape{B * k, p});
  return add_product("addbmm", input, mm(lhs, rhs), beta, alpha);
}

// Note [einsum]: each operand first takes diagonals for repeated labels (mask by an identity and
// sum, so any order of gradient works) and sums labels nobody else uses; then operands are folded
// left to right, each pair permuted to [batch, left, contracted] x [batch, contracted, right] and
// multiplied with one bmm. 'ij,jk->ik' and 'bij,bjk->bik' therefore run as a single BLAS GEMM.
namespace {
constexpr int kLetters = 52;  // 'A'-'Z' -> 0..25, 'a'-'z' -> 26..51 (ASCII order); ellipsis dims follow

int label_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  throw Error(detail::str_cat("einsum(): invalid subscript given at index of the equation string: '", c, "'"));
}
char label_char(int id) { return id < 26 ? char('A' + id) : char('a' + id - 26); }

struct Term {
  std::vector<int> labels;  // -1 marks the ellipsis
  bool has_ellipsis = false;
  int letters = 0;
};

Term parse_term(const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!t.has_ellipsis, "einsum(): found '.' for operand that is not part of any ellipsis");
      EMBER_CHECK(s.compare(i, 3, "...") == 0, "einsum(): found '.' for operand that is not part of any ellipsis");
      t.has_ellipsis = true;
      t.labels.push_back(-1);
      i += 2;
      continue;
    }
    t.labels.push_back(label_id(c));
    ++t.letters;
  }
  return t;
}

// Operand with its dims' labels.
struct Labeled {
  Tensor t;
  std::vector<int> labels;
};

// Diagonal over dims p < q (equal sizes), written as mask-and-sum so it stays differentiable.
Tensor take_diagonal(const Tensor& t, int64_t p, int64_t q) {
  int64_t n = t.sizes()[p];
  Shape ms(t.dim(), 1);
  ms[p] = n, ms[q] = n;
  Tensor mask = reshape(eye(n, n, t.dtype()), ms);
  return sum(mul(t, mask), std::vector<int64_t>{q});
}
}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  EMBER_CHECK(!operands.empty(), "einsum(): must provide at least one operand");
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> parts;
  {
    size_t start = 0;
    for (size_t i = 0; i <= lhs.size(); ++i)
      if (i == lhs.size() || lhs[i] == ',') parts.push_back(lhs.substr(start, i - start)), start = i + 1;
  }
  EMBER_CHECK(parts.size() <= operands.size(), "einsum(): fewer operands were provided than specified in the equation");
  EMBER_CHECK(parts.size() >= operands.size(), "einsum(): more operands were provided than specified in the equation");
  size_t nops = operands.size();
  std::vector<Term> terms;
  int64_t ell = 0;
  for (size_t i = 0; i < nops; ++i) {
    terms.push_back(parse_term(parts[i]));
    const Term& t = terms.back();
    int64_t nd = operands[i].dim();
    if (t.has_ellipsis) {
      EMBER_CHECK(nd >= t.letters, "einsum(): the number of subscripts in the equation (", t.letters,
                  ") is more than the number of dimensions (", nd, ") for operand ", i);
      ell = std::max(ell, nd - t.letters);
    } else {
      EMBER_CHECK(nd == t.letters, "einsum(): the number of subscripts in the equation (", t.letters,
                  ") does not match the number of dimensions (", nd, ") for operand ", i, " and no ellipsis was given");
    }
  }
  // Expand the ellipsis into right-aligned shared labels kLetters + j.
  std::vector<Labeled> ops(nops);
  std::array<int, 64> count{};  // how many operands use each letter label
  for (size_t i = 0; i < nops; ++i) {
    int64_t e = operands[i].dim() - terms[i].letters;
    ops[i].t = operands[i];
    for (int l : terms[i].labels) {
      if (l == -1) {
        for (int64_t j = 0; j < e; ++j) ops[i].labels.push_back(kLetters + static_cast<int>(ell - e + j));
      } else {
        ops[i].labels.push_back(l);
        ++count[l];
      }
    }
  }
  std::vector<int> out_labels;
  if (arrow == std::string::npos) {
    for (int64_t j = 0; j < ell; ++j) out_labels.push_back(kLetters + static_cast<int>(j));
    for (int l = 0; l < kLetters; ++l)
      if (count[l] == 1) out_labels.push_back(l);
  } else {
    Term o = parse_term(equation.substr(arrow + 2));
    std::vector<bool> seen(kLetters, false);
    for (int l : o.labels) {
      if (l == -1) {
        for (int64_t j = 0; j < ell; ++j) out_labels.push_back(kLetters + static_cast<int>(j));
        continue;
      }
      EMBER_CHECK(!seen[l], "einsum(): output subscript ", label_char(l), " appears more than once in the output");
      EMBER_CHECK(count[l] > 0, "einsum(): output subscript ", label_char(l),
                  " does not appear in the equation for any input operand");
      seen[l] = true;
      out_labels.push_back(l);
    }
  }
  // Sizes per label (1 broadcasts), checked across operands.
  std::vector<int64_t> label_size(kLetters + ell, 1);
  for (size_t i = 0; i < nops; ++i)
    for (size_t d = 0; d < ops[i].labels.size(); ++d) {
      int l = ops[i].labels[d];
      int64_t s = ops[i].t.sizes()[d];
      if (s == 1) continue;
      EMBER_CHECK(label_size[l] == 1 || label_size[l] == s,
                  "einsum(): operands do not broadcast with remapped shapes (original->remapped): subscript ",
                  l < kLetters ? std::string(1, label_char(l)) : std::string("..."), " has sizes ", label_size[l],
                  " and ", s);
      label_size[l] = s;
    }
  auto in_output = [&](int l) { return std::find(out_labels.begin(), out_labels.end(), l) != out_labels.end(); };
  // needed_after[i][l]: label l is used by an operand after i or by the output.
  auto needed_after = [&](size_t i, int l) {
    if (in_output(l)) return true;
    for (size_t j = i + 1; j < nops; ++j)
      if (std::find(ops[j].labels.begin(), ops[j].labels.end(), l) != ops[j].labels.end()) return true;
    return false;
  };
  auto used_elsewhere = [&](size_t i, int l) {
    if (in_output(l)) return true;
    for (size_t j = 0; j < nops; ++j)
      if (j != i && std::find(ops[j].labels.begin(), ops[j].labels.end(), l) != ops[j].labels.end()) return true;
    return false;
  };
  // Per operand: diagonals for repeated labels, then sum labels used nowhere else.
  for (size_t i = 0; i < nops; ++i) {
    Labeled& op = ops[i];
    for (size_t p = 0; p < op.labels.size(); ++p)
      for (size_t q = op.labels.size(); q-- > p + 1;)
        if (op.labels[q] == op.labels[p]) {
          int64_t sp = op.t.sizes()[p], sq = op.t.sizes()[q];
          EMBER_CHECK(sp == sq, "einsum(): subscript ", label_char(op.labels[p]), " is repeated for operand ", i,
                      " but the sizes don't match, ", sp, " != ", sq);
          op.t = take_diagonal(op.t, static_cast<int64_t>(p), static_cast<int64_t>(q));
          op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(q));
        }
    std::vector<int64_t> drop;
    std::vector<int> keep;
    for (size_t d = 0; d < op.labels.size(); ++d) {
      if (used_elsewhere(i, op.labels[d]))
        keep.push_back(op.labels[d]);
      else
        drop.push_back(static_cast<int64_t>(d));
    }
    if (!drop.empty()) op.t = sum(op.t, drop), op.labels = keep;
  }
  auto dim_of = [](const std::vector<int>& labels, int l) {
    return static_cast<int64_t>(std::find(labels.begin(), labels.end(), l) - labels.begin());
  };
  Labeled acc = ops[0];
  for (size_t i = 1; i < nops; ++i) {
    const Labeled& rhs = ops[i];
    std::vector<int> batch, left, contracted, right;
    for (int l : acc.labels) {
      bool in_r = std::find(rhs.labels.begin(), rhs.labels.end(), l) != rhs.labels.end();
      if (!in_r)
        left.push_back(l);
      else if (needed_after(i, l))
        batch.push_back(l);
      else
        contracted.push_back(l);
    }
    for (int l : rhs.labels)
      if (std::find(acc.labels.begin(), acc.labels.end(), l) == acc.labels.end()) right.push_back(l);
    auto arrange = [&](const Labeled& x, std::initializer_list<const std::vector<int>*> groups) {
      Shape perm, sizes, grouped;
      for (auto* g : groups) {
        int64_t n = 1;
        for (int l : *g) {
          int64_t d = dim_of(x.labels, l);
          if (d == static_cast<int64_t>(x.labels.size())) continue;  // label absent from this side
          perm.push_back(d);
        }
        for (int l : *g) n *= label_size[l], sizes.push_back(label_size[l]);
        grouped.push_back(n);
      }
      Tensor t = permute(x.t, perm);
      // Broadcast size-1 dims (and labels the other side alone has) to the label sizes.
      Shape cur;
      size_t k = 0;
      for (auto* g : groups)
        for (int l : *g) {
          if (dim_of(x.labels, l) == static_cast<int64_t>(x.labels.size())) continue;
          cur.push_back(t.sizes()[k++]);
          (void)l;
        }
      Shape full;
      for (auto* g : groups)
        for (int l : *g) full.push_back(dim_of(x.labels, l) == static_cast<int64_t>(x.labels.size()) ? 1 : -1);
      Shape with_ones;
      k = 0;
      for (size_t j = 0; j < full.size(); ++j) with_ones.push_back(full[j] == 1 ? 1 : cur[k++]);
      t = reshape(t, with_ones);
      t = expand(t, sizes);
      return reshape(t, grouped);
    };
    Tensor a3 = arrange(acc, {&batch, &left, &contracted});
    Tensor b3 = arrange(rhs, {&batch, &contracted, &right});
    Tensor c = bmm(a3, b3);
    Shape out_sizes;
    std::vector<int> labels;
    for (auto* g : {&batch, &left, &right})
      for (int l : *g) out_sizes.push_back(label_size[l]), labels.push_back(l);
    acc.t = reshape(c, out_sizes);
    acc.labels = labels;
  }
  // Sum what the output drops (only possible with one operand), then order as the output.
  std::vector<int64_t> drop;
  std::vector<int> keep;
  for (size_t d = 0; d < acc.labels.size(); ++d) {
    if (in_output(acc.labels[d]))
      keep.push_back(acc.labels[d]);
    else
      drop.push_back(static_cast<int64_t>(d));
  }
  if (!drop.empty()) acc.t = sum(acc.t, drop), acc.labels = keep;
  Shape perm;
  bool identity = true;
  for (size_t j = 0; j < out_labels.size(); ++j) {
    int64_t d = dim_of(acc.labels, out_labels[j]);
    if (d == static_cast<int64_t>(acc.labels.size())) {  // an ellipsis dim no operand has
      acc.t = unsqueeze(acc.t, acc.t.dim());
      acc.labels.push_back(out_labels[j]);
    }
    perm.push_back(d);
    identity = identity && d == static_cast<int64_t>(j);
  }
  // An operand passed through unchanged ("ij->ij") comes back as a view of it, as torch's, not as
  // the operand itself.
  const bool is_operand =
      std::any_of(operands.begin(), operands.end(), [&](const Tensor& o) { return o.is_same(acc.t); });
  if (!identity || is_operand) acc.t = permute(acc.t, perm);
  return acc.t;
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  EMBER_CHECK(dims_a.size() == dims_b.size(), "both dimension lists should have same length");
  std::vector<bool> ca(a.dim(), false), cb(b.dim(), false);
  Shape pa, pb, out;
  int64_t k = 1;
  Tensor A = a, B = b;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t da = wrap_dim(dims_a[i], a.dim(), false), db = wrap_dim(dims_b[i], b.dim(), false);
    int64_t sa = A.sizes()[da], sb = B.sizes()[db];
    if (sa != sb) {  // a size-1 side broadcasts (torch): the other is summed over its dim first
      EMBER_CHECK(sa == 1 || sb == 1, "contracted dimensions need to match, but first has size ", sa, " in dim ",
                  dims_a[i], " and second has size ", sb, " in dim ", dims_b[i]);
      if (sb == 1)
        A = sum(A, std::vector<int64_t>{da}, true);
      else
        B = sum(B, std::vector<int64_t>{db}, true);
    }
    EMBER_CHECK(!ca[da] && !cb[db], "tensordot: a dimension appears twice in dims");
    ca[da] = cb[db] = true;
    k *= A.sizes()[da];
  }
  int64_t fa = 1, fb = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!ca[d]) pa.push_back(d), out.push_back(a.sizes()[d]), fa *= a.sizes()[d];
  for (size_t i = 0; i < dims_a.size(); ++i) pa.push_back(wrap_dim(dims_a[i], a.dim()));
  for (size_t i = 0; i < dims_b.size(); ++i) pb.push_back(wrap_dim(dims_b[i], b.dim()));
  for (int64_t d = 0; d < b.dim(); ++d)
    if (!cb[d]) pb.push_back(d), out.push_back(b.sizes()[d]), fb *= b.sizes()[d];
  Tensor r = mm(reshape(permute(A, pa), Shape{fa, k}), reshape(permute(B, pb), Shape{k, fb}));
  return reshape(r, out);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  EMBER_CHECK(dims >= 0, "tensordot expects dims >= 0, but got dims=", dims);
  EMBER_CHECK(dims <= a.dim() && dims <= b.dim(), "tensordot expects dims < ndim_a or ndim_b, but got dims=", dims);
  Shape da, db;
  for (int64_t i = 0; i < dims; ++i)
    da.push_back(i - dims), db.push_back(i);  // a's dims counted from the end, as torch
  return tensordot(a, b, da, db);
}

}  // namespace ember
