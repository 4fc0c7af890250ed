// Intel oneMKL's GEMM and vector math, loaded at run time when installed (Notes [MKL GEMM] and [MKL VML] in
// mkl_blas.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace ember {
class TensorIter;
}

namespace ember::cpu {

// c[m, n] (rows ldc apart) = a[m, k] @ b[k, n] (+ c when accumulate) through MKL's cblas_?gemm,
// row-major: a_trans/b_trans say whether a/b are stored transposed, lda/ldb their leading
// dimensions as CBLAS takes them; the product is scaled by alpha. Only when mkl_gemm_available(); runs
// on this thread's OpenMP count, bit-identical for any count (strict CNR mode).
void mkl_sgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float* c, int64_t ldc, bool accumulate, float alpha = 1.0f);
void mkl_dgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
               const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate, double alpha = 1.0);

// MKL's packed-operand GEMM (cblas_?gemm_pack / cblas_?gemm_compute): op(b) (k x n; b_trans: b is
// stored n x k) packed once into dest (mkl_pack_b_bytes bytes, not to be moved), then c[m, n] (+)= a[m, k]
// @ op(b) without repacking it on every call (a recurrent layer's step: 64x256 by 256x256 in 58 us
// against sgemm's 69). The product's m is the one given to the packing. Only when mkl_pack_available().
bool mkl_pack_available();
size_t mkl_pack_b_bytes(bool is_double, int64_t m, int64_t n, int64_t k);
void mkl_pack_b(bool is_double, bool b_trans, int64_t m, int64_t n, int64_t k, const void* b, int64_t ldb, void* dest);
void mkl_gemm_packed_b(bool is_double, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                       const void* packed_b, int64_t ldb, void* c, int64_t ldc, bool accumulate);

// c[i] = a[i] @ b[i] for i < batch, the matrices stride_* elements apart, in one call of MKL's
// cblas_?gemm_batch_strided (MKL spreads the batch over this thread's OpenMP count; strict CNR
// mode keeps the bits the same for any count). Only when mkl_gemm_batch_available().
void mkl_sgemm_batch(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                     int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
                     int64_t stride_c, int64_t batch);
void mkl_dgemm_batch(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                     int64_t stride_a, const double* b, int64_t ldb, int64_t stride_b, double* c, int64_t ldc,
                     int64_t stride_c, int64_t batch);
bool mkl_gemm_batch_available();

// One product shape compiled by MKL's JIT (Note [MKL JIT GEMM] in mkl_blas.cpp): run(a, b, c) is
// c[m, n] = a @ b for operands laid out as mkl_jit_gemm was told, on the calling thread alone.
class MklJitGemm {
 public:
  using Kernel = void (*)(void*, void*, void*, void*);
  MklJitGemm(void* jitter, Kernel kernel, bool a_trans, int64_t m, int64_t rows, int64_t lda, int64_t ldc,
             int64_t elem_size)
      : jitter_(jitter),
        kernel_(kernel),
        a_trans_(a_trans),
        m_(m),
        rows_(rows),
        lda_(lda),
        ldc_(ldc),
        elem_size_(elem_size) {}
  void run(const void* a, const void* b, void* c) const;
  // The product's row pieces (each its own call of the kernel; the bits do not depend on which
  // thread runs which): run() is run_piece(r) for r < pieces().
  int64_t pieces() const { return m_ / rows_; }
  void run_piece(const void* a, const void* b, void* c, int64_t r) const;

 private:
  void* jitter_;
  Kernel kernel_;
  bool a_trans_;
  int64_t m_, rows_, lda_, ldc_, elem_size_;
};
// The kernel for float32 (float64 when is_double) products of these shapes and leading dimensions
// (CBLAS's, row-major), in at least min_parts row pieces (1, 2 or 4), c = alpha * a @ b (+ c when
// accumulate), made on first use and kept; nullptr when MKL or its JIT declines.
const MklJitGemm* mkl_jit_gemm(bool is_double, bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, int64_t lda,
                               int64_t ldb, int64_t ldc, int64_t min_parts = 1, double alpha = 1.0,
                               bool accumulate = false);

// True when MKL was found, loaded and put in strict CNR mode for the CPU level in use (AVX2 or
// AVX-512), sizes fit its 32-bit integers (the caller checks `fits`), and it is enabled.
bool mkl_gemm_available();
bool mkl_gemm_fits(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc);

// Note [MKL VML]: y[i] = f(a[i]) for i < n by MKL's vector math library in its high-accuracy mode,
// float64 (vmd*) or float32 (vms*), on the calling thread (inside a parallel region). nullptr when
// MKL is not in use (mkl_gemm_available()) or lacks the function: the caller computes it itself.
enum class VmlFunction {
  Exp,
  Ln,
  Log2,
  Log10,
  Log1p,
  Expm1,
  Sin,
  Cos,
  Tan,
  Tanh,
  Erf,
  Erfc,
  Atan,
  Sinh,
  Cosh,
  Exp2,
  Asin,
  Acos,
  ErfInv
};
constexpr int kVmlFunctionCount = 19;
using VmlDoubleFn = void (*)(int64_t n, const double* a, double* y);
using VmlFloatFn = void (*)(int64_t n, const float* a, float* y);
VmlDoubleFn mkl_vml_double(VmlFunction f);
VmlFloatFn mkl_vml_float(VmlFunction f);
// out = f(a, b) over a float32/float64 TensorIter (out, a, b of that dtype) on MKL's vm?Pow / vm?Atan2
// (Note [MKL VML]): contiguous runs whole (pow with a broadcast exponent through vm?Powx), other layouts
// through blocks. false (nothing done) when MKL is not in use.
enum class VmlBinary { Pow, Atan2 };
bool mkl_vml_binary_loop(VmlBinary f, bool is_double, const TensorIter& it);

// Where to look first (the Python package passes its prefix's lib/libmkl_rt.so.2); otherwise the
// dynamic loader's search path. Takes effect only before the first GEMM loads the library.
void set_mkl_library_path(const std::string& path);
// ember.backends.mkl.enabled: on by default (off: oneDNN and OpenBLAS run every product).
void set_mkl_enabled(bool enabled);
bool mkl_enabled();
// What was loaded ("" when nothing): the library's path and MKL's version string.
std::string mkl_version();

}  // namespace ember::cpu
