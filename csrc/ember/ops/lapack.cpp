// LAPACK-backed linear algebra (torch.linalg): factorizations run per matrix on column-major
// copies; gradients are LambdaBackward formulas written with ember ops (double backward works).
// Note [LAPACK layout]: a row-major tensor's transpose is the column-major matrix LAPACK wants, so
// inputs are copied as clone(A.mT).mT and outputs are returned as such transposed views.
#include "ember/ops/lapack.h"

#include <cblas.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/autograd/synthetic_grad.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/core/type_name.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"

extern "C" {
// Fortran LAPACK from OpenBLAS (no LAPACKE header needed); trailing size_t are string lengths.
// T is the element type, R its real type (singular values, eigenvalues, rcond, rwork).
#define EMBER_LAPACK_DECL(T, p, orgqr)                                                                                \
  void p##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);                             \
  void p##getrs_(const char* tr, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b,    \
                 const int* ldb, int* info, size_t);                                                                  \
  void p##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);                            \
  void p##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);     \
  void orgqr(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work, const int* lwork, \
             int* info);                                                                                              \
  void p##gels_(const char* trans, const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b,           \
                const int* ldb, T* work, const int* lwork, int* info, size_t);
// Bunch-Kaufman LDL^T (sytrf/sytrs) for all four types; the complex Hermitian LDL^H ones (hetrf/hetrs) below.
#define EMBER_LAPACK_LDL_DECL(T, p)                                                                                  \
  void p##sytrf_(const char* uplo, const int* n, T* a, const int* lda, int* ipiv, T* work, const int* lwork,         \
                 int* info, size_t);                                                                                 \
  void p##sytrs_(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b, \
                 const int* ldb, int* info, size_t);
EMBER_LAPACK_LDL_DECL(float, s)
EMBER_LAPACK_LDL_DECL(double, d)
EMBER_LAPACK_LDL_DECL(std::complex<float>, c)
EMBER_LAPACK_LDL_DECL(std::complex<double>, z)
#undef EMBER_LAPACK_LDL_DECL
// General eigenproblem: real geev returns eigenvalues as (wr, wi) and conjugate-pair eigenvectors as two
// real columns; complex geev returns them directly (with a real workspace rwork).
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info, size_t,
            size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info, size_t,
            size_t);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<float>* a, const int* lda,
            std::complex<float>* w, std::complex<float>* vl, const int* ldvl, std::complex<float>* vr, const int* ldvr,
            std::complex<float>* work, const int* lwork, float* rwork, int* info, size_t, size_t);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a, const int* lda,
            std::complex<double>* w, std::complex<double>* vl, const int* ldvl, std::complex<double>* vr,
            const int* ldvr, std::complex<double>* work, const int* lwork, double* rwork, int* info, size_t, size_t);
void chetrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* ipiv,
             std::complex<float>* work, const int* lwork, int* info, size_t);
void zhetrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* ipiv,
             std::complex<double>* work, const int* lwork, int* info, size_t);
void chetrs_(const char* uplo, const int* n, const int* nrhs, const std::complex<float>* a, const int* lda,
             const int* ipiv, std::complex<float>* b, const int* ldb, int* info, size_t);
void zhetrs_(const char* uplo, const int* n, const int* nrhs, const std::complex<double>* a, const int* lda,
             const int* ipiv, std::complex<double>* b, const int* ldb, int* info, size_t);
EMBER_LAPACK_DECL(float, s, sorgqr_)
EMBER_LAPACK_DECL(double, d, dorgqr_)
EMBER_LAPACK_DECL(std::complex<float>, c, cungqr_)
EMBER_LAPACK_DECL(std::complex<double>, z, zungqr_)
#undef EMBER_LAPACK_DECL
// The routines whose complex versions take an extra real workspace (rwork).
#define EMBER_LAPACK_REAL_DECL(T, p)                                                                                 \
  void p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u, const int* ldu,     \
                 T* vt, const int* ldvt, T* work, const int* lwork, int* iwork, int* info, size_t);                  \
  void p##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work,              \
                 const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);                        \
  void p##gelsy_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, int* jpvt, \
                 const T* rcond, int* rank, T* work, const int* lwork, int* info);                                   \
  void p##gelsd_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, T* s,      \
                 const T* rcond, int* rank, T* work, const int* lwork, int* iwork, int* info);                       \
  void p##gelss_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, T* s,      \
                 const T* rcond, int* rank, T* work, const int* lwork, int* info);
EMBER_LAPACK_REAL_DECL(float, s)
EMBER_LAPACK_REAL_DECL(double, d)
#undef EMBER_LAPACK_REAL_DECL
#define EMBER_LAPACK_COMPLEX_DECL(T, R, p)                                                                           \
  void p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u, const int* ldu,     \
                 T* vt, const int* ldvt, T* work, const int* lwork, R* rwork, int* iwork, int* info, size_t);        \
  void p##heevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w, T* work,              \
                 const int* lwork, R* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, size_t,    \
                 size_t);                                                                                            \
  void p##gelsy_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, int* jpvt, \
                 const R* rcond, int* rank, T* work, const int* lwork, R* rwork, int* info);                         \
  void p##gelsd_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, R* s,      \
                 const R* rcond, int* rank, T* work, const int* lwork, R* rwork, int* iwork, int* info);             \
  void p##gelss_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, R* s,      \
                 const R* rcond, int* rank, T* work, const int* lwork, R* rwork, int* info);
EMBER_LAPACK_COMPLEX_DECL(std::complex<float>, float, c)
EMBER_LAPACK_COMPLEX_DECL(std::complex<double>, double, z)
#undef EMBER_LAPACK_COMPLEX_DECL
}

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

// Workspace size a LAPACK query (lwork = -1) returned in work[0].
template <typename T>
int64_t lwork_of(T wq) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::real(wq)));
}

// Note [small getrs]: OpenBLAS's getrs splits the right-hand sides over its OpenMP threads whatever
// their size (OpenBLAS 0.3.21); for small systems waking the team costs far more than the solve
// (a 3x3 solve took 5 us alone, 1-20 ms on the loaded 2-core box). Small solves run with this
// thread's OpenMP count set to 1 for the call (OpenBLAS reads omp_get_max_threads()).
class SerialBlas {
 public:
  explicit SerialBlas(bool on) : on_(on) {
#ifdef _OPENMP
    if (on_) {
      old_ = omp_get_max_threads();
      omp_set_num_threads(1);
    }
#endif
  }
  ~SerialBlas() {
#ifdef _OPENMP
    if (on_) omp_set_num_threads(old_);
#endif
  }
  SerialBlas(const SerialBlas&) = delete;
  SerialBlas& operator=(const SerialBlas&) = delete;

 private:
  bool on_;
  int old_ = 1;
};

// ---- typed LAPACK wrappers: one signature for real and complex (rwork is unused for real) ----
template <typename T>
struct Lapack;
#define EMBER_LAPACK_COMMON(T, R, p, orgqr_fn)                                                                     \
  using Real = R;                                                                                                  \
  static void getrf(int m, int n, T* a, int lda, int* ipiv, int* info) { p##getrf_(&m, &n, a, &lda, ipiv, info); } \
  static void getrs(int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info) {             \
    char tr = 'N';                                                                                                 \
    p##getrs_(&tr, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);                                                    \
  }                                                                                                                \
  static void getrs_t(char tr, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info) {  \
    p##getrs_(&tr, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);                                                    \
  }                                                                                                                \
  static void potrf(char uplo, int n, T* a, int lda, int* info) { p##potrf_(&uplo, &n, a, &lda, info, 1); }        \
  static void geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info) {                          \
    p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, info);                                                           \
  }                                                                                                                \
  static void orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork, int* info) {             \
    orgqr_fn(&m, &n, &k, a, &lda, tau, work, &lwork, info);                                                        \
  }                                                                                                                \
  static void gels(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* work, int lwork, int* info) {          \
    char tr = 'N';                                                                                                 \
    p##gels_(&tr, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);                                         \
  }
#define EMBER_LAPACK_REAL_IMPL(T, p)                                                                                \
  template <>                                                                                                       \
  struct Lapack<T> {                                                                                                \
    EMBER_LAPACK_COMMON(T, T, p, p##orgqr_)                                                                         \
    static void gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt, T* work,        \
                      int lwork, T*, int* iwork, int* info) {                                                       \
      p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);                       \
    }                                                                                                               \
    static void syevd(char jobz, char uplo, int n, T* a, int lda, T* w, T* work, int lwork, T*, int, int* iwork,    \
                      int liwork, int* info) {                                                                      \
      p##syevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);                            \
    }                                                                                                               \
    static void gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, int* jpvt, T rcond, int* rank, T* work, \
                      int lwork, T*, int* info) {                                                                   \
      p##gelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, info);                           \
    }                                                                                                               \
    static void gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank, T* work,      \
                      int lwork, T*, int* iwork, int* info) {                                                       \
      p##gelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);                       \
    }                                                                                                               \
    static void gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank, T* work,      \
                      int lwork, T*, int* info) {                                                                   \
      p##gelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, info);                              \
    }                                                                                                               \
  };
EMBER_LAPACK_REAL_IMPL(float, s)
EMBER_LAPACK_REAL_IMPL(double, d)
#undef EMBER_LAPACK_REAL_IMPL
#define EMBER_LAPACK_COMPLEX_IMPL(T, R, p)                                                                          \
  template <>                                                                                                       \
  struct Lapack<T> {                                                                                                \
    EMBER_LAPACK_COMMON(T, R, p, p##ungqr_)                                                                         \
    static void gesdd(char jobz, int m, int n, T* a, int lda, R* s, T* u, int ldu, T* vt, int ldvt, T* work,        \
                      int lwork, R* rwork, int* iwork, int* info) {                                                 \
      p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);                \
    }                                                                                                               \
    static void syevd(char jobz, char uplo, int n, T* a, int lda, R* w, T* work, int lwork, R* rwork, int lrwork,   \
                      int* iwork, int liwork, int* info) {                                                          \
      p##heevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);            \
    }                                                                                                               \
    static void gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, int* jpvt, R rcond, int* rank, T* work, \
                      int lwork, R* rwork, int* info) {                                                             \
      p##gelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, rwork, info);                    \
    }                                                                                                               \
    static void gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, R* s, R rcond, int* rank, T* work,      \
                      int lwork, R* rwork, int* iwork, int* info) {                                                 \
      p##gelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, iwork, info);                \
    }                                                                                                               \
    static void gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, R* s, R rcond, int* rank, T* work,      \
                      int lwork, R* rwork, int* info) {                                                             \
      p##gelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, info);                       \
    }                                                                                                               \
  };
EMBER_LAPACK_COMPLEX_IMPL(std::complex<float>, float, c)
EMBER_LAPACK_COMPLEX_IMPL(std::complex<double>, double, z)
#undef EMBER_LAPACK_COMPLEX_IMPL
#undef EMBER_LAPACK_COMMON

// Runs f.template operator()<T>() for float32/float64 (function templates, see core/dispatch.h).
template <typename F>
decltype(auto) dispatch_lapack(ScalarType t, F&& f) {
  EMBER_CHECK(!is_complex(t), "internal error: real LAPACK routine called with ", dtype_name(t));
  if (t == ScalarType::Float64) return f(double{});
  return f(float{});
}
// float32/float64/complex64/complex128 (the Lapack<T> wrappers exist for all four).
template <typename F>
void dispatch_fc(ScalarType t, F&& f) {
  if (t == ScalarType::Complex64)
    f(std::complex<float>{});
  else if (t == ScalarType::Complex128)
    f(std::complex<double>{});
  else
    dispatch_lapack(t, f);
}

void check_float(const Tensor& a, const char* op, bool ints_not_implemented = false, bool complex_ok = false) {
  ScalarType t = a.dtype();
  if (t == ScalarType::Float32 || t == ScalarType::Float64) return;
  if (is_complex(t) && complex_ok) return;
  if (is_complex(t)) EMBER_NOT_IMPLEMENTED(op, ": complex inputs are not supported yet (no complex LAPACK)");
  if (t == ScalarType::Float16 || t == ScalarType::BFloat16 || ints_not_implemented)
    EMBER_NOT_IMPLEMENTED("\"", op, "\" not implemented for '", dtype_name(t), "'");
  throw Error(detail::str_cat(op, ": Expected a floating point or complex tensor as input. Got ", dtype_name(t)));
}
void check_matrix(const Tensor& a, const char* op, const char* name = "A", bool complex_ok = false) {
  EMBER_CHECK(a.dim() >= 2, op, ": The input tensor ", name, " must have at least 2 dimensions.");
  check_float(a, op, false, complex_ok);
}
// torch's own checks for half/bfloat16 in some ops come before the generic not-implemented one.
bool float_double_or_complex(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || is_complex(t);
}
void check_not_low_precision(const Tensor& a, const char* op) {
  ScalarType t = a.dtype();
  EMBER_CHECK(t != ScalarType::Float16 && t != ScalarType::BFloat16, op, ": Low precision dtypes not supported. Got ",
              scalar_type_name(t));
}
void check_float_or_double(const Tensor& a) {  // lstsq, matrix_rank
  EMBER_CHECK(float_double_or_complex(a.dtype()), "This function doesn't handle types other than float and double");
}
void check_square(const Tensor& a, const char* op, const char* name = "A", bool complex_ok = false) {
  check_matrix(a, op, name, complex_ok);
  int64_t m = a.size(-2), n = a.size(-1);
  EMBER_CHECK(m == n, op, ": ", name, " must be batches of square matrices, but they are ", m, " by ", n, " matrices");
}

Shape batch_shape(const Tensor& a) { return Shape(a.sizes().begin(), a.sizes().end() - 2); }
Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}
Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }
// The conjugate transpose (mT for real tensors): gradients of complex ops use A^H where real ones use A^T.
Tensor mH(const Tensor& t) { return is_complex(t.dtype()) ? conj(mT(t)) : mT(t); }

// Fresh column-major copy of A (..., m, n); Note [LAPACK layout].
Tensor fortran_copy(const Tensor& a) {
  autograd::NoGradGuard g;
  return mT(clone(mT(a), MemoryFormat::Contiguous));
}
Tensor fortran_empty(const Shape& batch, int64_t m, int64_t n, ScalarType dt) {
  return mT(empty(with(batch, {n, m}), dt));
}
int64_t nbatch(const Shape& batch) { return numel_of(batch); }

Tensor wrapped(double v) { return scalar_tensor(Scalar(v), std::nullopt, true); }
Tensor scale(const Tensor& t, double v) { return mul(t, wrapped(v)); }
Tensor eye_as(int64_t n, const Tensor& like) { return eye(n, n, like.dtype()); }
Tensor herm(const Tensor& a) { return scale(add(a, mH(a)), 0.5); }                              // sym for real tensors
Tensor re(const Tensor& t) { return is_complex(t.dtype()) ? scale(add(t, conj(t)), 0.5) : t; }  // Re, same dtype
Tensor abs_(const Tensor& t) { return add(relu(t), relu(neg(t))); }  // |x| with gradient sign(x), 0 at 0
Tensor sqrt_(const Tensor& t) { return pow(t, wrapped(0.5)); }

// ---- LU: det, slogdet, solve, inv ----
struct LU {
  Tensor lu;    // column-major factors
  Tensor piv;   // int32 [..., n]
  Shape infos;  // getrf info per matrix
};

LU lu_factor(const Tensor& a) {
  Shape batch = batch_shape(a);
  int64_t n = a.size(-1), B = nbatch(batch);
  LU r{fortran_copy(a), empty(with(batch, {n}), ScalarType::Int32), Shape(B, 0)};
  if (n == 0) return r;
  dispatch_fc(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = r.lu.data<T>();
    int* piv = r.piv.data<int>();
    // A batch splits among threads, each matrix factored on one (inside a parallel region BLAS
    // runs on one thread): 64 factorizations of 128x128 one after another, each on both threads,
    // took 1.5-1.7x torch's time. The factors do not depend on the thread count.
    auto factor = [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        int info = 0;
        Lapack<T>::getrf(n, n, p + i * n * n, n, piv + i * n, &info);
        r.infos[static_cast<size_t>(i)] = info;
      }
    };
    if (B > 1 && (B >= get_num_threads() || n <= 256))  // (a few large ones keep every thread each)
      parallel_for(0, B, std::max<int64_t>(1, kGrainSize / (n * n * n)), factor);
    else
      factor(0, B);
  });
  return r;
}

// Solves A X = B for same-batch A (..., n, n) and B (..., n, k).
// check=false: a singular A gives the inf/nan that dividing by its zero pivots produces.
Tensor solve_raw(const Tensor& a, const Tensor& b, const char* op, bool check = true) {
  LU f = lu_factor(a);
  Tensor x = fortran_copy(b);
  int64_t n = a.size(-1), k = b.size(-1), B = static_cast<int64_t>(f.infos.size());
  for (int64_t i = 0; i < B && check; ++i)
    if (f.infos[i] > 0) {
      if (std::string(op) == "linalg.inv")
        throw LinAlgError(detail::str_cat(op, ": The diagonal element ", f.infos[i],
                                          " is zero, the inversion could not be completed because the input matrix "
                                          "is singular."));
      throw LinAlgError(detail::str_cat(op, ": The solver failed because the input matrix is singular."));
    }
  if (n == 0 || k == 0) return x;
  SerialBlas serial(n * n * k < (int64_t{1} << 18));  // Note [small getrs]
  dispatch_fc(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < B; ++i) {
      int info = 0;
      Lapack<T>::getrs(n, k, f.lu.data<T>() + i * n * n, n, f.piv.data<int>() + i * n, x.data<T>() + i * n * k, n,
                       &info);
    }
  });
  return x;
}

Tensor solve_core(const Tensor& a, const Tensor& b, const char* op);

// A^{-1}: LU solve against the identity.
Tensor inv_core(const Tensor& a) {
  Tensor y;
  {
    autograd::NoGradGuard g;
    int64_t n = a.size(-1);
    y = solve_raw(a, expand(eye_as(n, a), a.sizes()), "linalg.inv");
  }
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    node->record("LinalgInvExBackward0", {y}, {}, {y}, [](const TensorList& g, const TensorList& s) -> TensorList {
      Tensor yt = mH(s[0]);
      return {neg(matmul(matmul(yt, g[0]), yt))};
    });
  }
  return y;
}

Tensor solve_core(const Tensor& a, const Tensor& b, const char* op) {
  Tensor x;
  {
    autograd::NoGradGuard g;
    x = solve_raw(a, b, op);
  }
  if (auto node = autograd::make_node<LambdaBackward>(a, b)) {
    node->record("LinalgSolveExBackward0", {x}, {a}, {x}, [op](const TensorList& g, const TensorList& s) -> TensorList {
      Tensor gb = solve_core(mH(s[0]), g[0], op);
      return {neg(matmul(gb, mH(s[1]))), gb};
    });
  }
  return x;
}

// ---- Cholesky, QR, SVD, eigh ----
Tensor cholesky_core(const Tensor& a) {
  Tensor l;
  {
    autograd::NoGradGuard g;
    l = fortran_copy(a);
    int64_t n = a.size(-1), B = nbatch(batch_shape(a));
    if (n > 0)
      dispatch_fc(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        T* p = l.data<T>();
        for (int64_t i = 0; i < B; ++i) {
          int info = 0;
          Lapack<T>::potrf('L', n, p + i * n * n, n, &info);
          for (int64_t d = 0; d < n && info == 0; ++d)  // potrf lets NaN through; torch reports it as not PD
            if (std::isnan(std::real(p[i * n * n + d * n + d]))) info = static_cast<int>(d + 1);
          if (info > 0)
            throw LinAlgError(
                detail::str_cat("linalg.cholesky: The factorization could not be completed because the input is not "
                                "positive-definite (the leading minor of order ",
                                info, " is not positive-definite)."));
          for (int64_t c = 1; c < n; ++c)  // zero the strict upper triangle LAPACK left alone
            for (int64_t r = 0; r < c; ++r) p[i * n * n + c * n + r] = T(0);
        }
      });
  }
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    // A = L L^H: gA = herm(L^{-H} Phi(L^H gL) L^{-1}), Phi = lower triangle with half diagonal.
    node->record("LinalgCholeskyExBackward0", {l}, {}, {l}, [](const TensorList& g, const TensorList& s) -> TensorList {
      const Tensor& L = s[0];
      int64_t n = L.size(-1);
      Tensor gl = tril(g[0]);
      Tensor phi = matmul(mH(L), gl);
      phi = sub(tril(phi), scale(mul(phi, eye_as(n, phi)), 0.5));
      Tensor linv = inv_core(L);
      return {herm(matmul(matmul(mH(linv), phi), linv))};
    });
  }
  return l;
}

// Reduced QR for m >= n: gA = (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q, where
// copyltu(M) = tril(M, -1) + tril(M, -1)^H + Re(diag(M)) (R's diagonal is real, as LAPACK's).
Tensor qr_backward_tall(const Tensor& gq, const Tensor& gr, const Tensor& q, const Tensor& r) {
  Tensor m = sub(matmul(r, mH(gr)), matmul(mH(gq), q));
  Tensor low = tril(m, -1);
  Tensor copyltu = add(add(low, mH(low)), mul(re(m), eye_as(m.size(-1), m)));
  Tensor b = add(gq, matmul(q, copyltu));
  return mH(solve_core(r, mH(b), "linalg.qr"));
}

std::pair<Tensor, Tensor> qr_core(const Tensor& a, const std::string& mode) {
  Shape batch = batch_shape(a);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), B = nbatch(batch);
  bool complete = mode == "complete", want_q = mode != "r";
  Tensor q, r;
  {
    autograd::NoGradGuard g;
    int64_t qc = complete ? m : k;
    // Factor in a buffer wide enough to hold complete Q's columns.
    int64_t wc = std::max(n, qc);
    Tensor buf = fortran_empty(batch, m, wc, a.dtype());
    if (buf.numel() > 0) {
      Tensor head = narrow(buf, -1, 0, n);
      copy_(head, a);
    }
    Tensor tau = empty(with(batch, {std::max<int64_t>(k, 1)}), a.dtype());
    r = fortran_empty(batch, complete ? m : k, n, a.dtype());
    if (want_q) q = fortran_empty(batch, m, qc, a.dtype());
    dispatch_fc(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      int64_t rr = r.size(-2);
      for (int64_t i = 0; i < B; ++i) {
        T* A = buf.data<T>() + i * m * wc;
        T* t = tau.data<T>() + i * std::max<int64_t>(k, 1);
        int info = 0;
        if (m > 0 && n > 0) {
          T wq;
          Lapack<T>::geqrf(m, n, A, m, t, &wq, -1, &info);
          std::vector<T> work(lwork_of(wq));
          Lapack<T>::geqrf(m, n, A, m, t, work.data(), static_cast<int>(work.size()), &info);
        }
        T* R = r.data<T>() + i * rr * n;  // column-major rr x n
        for (int64_t c = 0; c < n; ++c)
          for (int64_t j = 0; j < rr; ++j) R[c * rr + j] = j <= c && j < m ? A[c * m + j] : T(0);
        if (!want_q || m == 0) continue;
        if (k == 0) {  // Q is the identity's leading columns
          T* Q = q.data<T>() + i * m * qc;
          for (int64_t c = 0; c < qc; ++c)
            for (int64_t j = 0; j < m; ++j) Q[c * m + j] = T(j == c);
          continue;
        }
        T wq;
        Lapack<T>::orgqr(m, qc, k, A, m, t, &wq, -1, &info);
        std::vector<T> work(lwork_of(wq));
        Lapack<T>::orgqr(m, qc, k, A, m, t, work.data(), static_cast<int>(work.size()), &info);
        std::copy(A, A + m * qc, q.data<T>() + i * m * qc);
      }
    });
    if (!want_q) q = empty({0}, a.dtype());
  }
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    node->record(
        "LinalgQrBackward0", {q, r}, {}, {q, r}, [mode, m, n](const TensorList& g, const TensorList& s) -> TensorList {
          EMBER_CHECK(mode != "r",
                      "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                      "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
          EMBER_CHECK(mode == "reduced" || m <= n,
                      "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
          const Tensor &Q = s[0], &R = s[1];
          if (m >= n) return {qr_backward_tall(g[0], g[1], Q, R)};
          // Wide: A = Q [X | Y] with R = [U | V]; X's part as square, Y's part is Q gV.
          Tensor u = narrow(R, -1, 0, m), gu = narrow(g[1], -1, 0, m);
          Tensor y = narrow(matmul(Q, R), -1, m, n - m), gv = narrow(g[1], -1, m, n - m);
          Tensor gx = qr_backward_tall(add(g[0], matmul(y, mH(gv))), gu, Q, u);
          Tensor gy = matmul(Q, gv);
          // [gx | gy] = gx @ [I_m | 0] + gy @ (rows m.. of I_n), so the assembly stays differentiable.
          Tensor px = matmul(gx, eye(m, n, Q.dtype()));
          Tensor py = matmul(gy, narrow(eye(n, n, Q.dtype()), 0, m, n - m));
          return {add(px, py)};
        });
  }
  return {q, r};
}

// gesdd: A = U diag(S) Vh (U: m x ucols, Vh: vrows x n); S has the real dtype.
std::tuple<Tensor, Tensor, Tensor> svd_raw(const Tensor& a, bool full, bool compute_uv) {
  autograd::NoGradGuard g;
  Shape batch = batch_shape(a);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), B = nbatch(batch);
  int64_t uc = full ? m : k, vr = full ? n : k;
  Tensor work_a = fortran_copy(a);
  Tensor s = empty(with(batch, {k}), to_real(a.dtype()));
  Tensor u = compute_uv ? fortran_empty(batch, m, uc, a.dtype()) : empty({0}, a.dtype());
  Tensor vh = compute_uv ? fortran_empty(batch, vr, n, a.dtype()) : empty({0}, a.dtype());
  if (k == 0) {
    if (compute_uv) {
      u = contiguous(expand(eye(m, uc, a.dtype()), with(batch, {m, uc})));
      vh = contiguous(expand(eye(vr, n, a.dtype()), with(batch, {vr, n})));
    }
    return {u, s, vh};
  }
  char jobz = !compute_uv ? 'N' : (full ? 'A' : 'S');
  dispatch_fc(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = real_t<T>;
    std::vector<int> iwork(8 * k);
    // Complex gesdd's real workspace (LAPACK >= 3.7 sizes; generous for older ones).
    int64_t mx = std::max(m, n);
    std::vector<R> rwork(is_complex(a.dtype()) ? std::max(7 * k, k * std::max(5 * k + 7, 2 * mx + 2 * k + 1)) : 1);
    T dummy = 0;
    int info = 0, ldu = static_cast<int>(m), ldvt = static_cast<int>(compute_uv ? vr : 1);
    T wq;
    Lapack<T>::gesdd(jobz, m, n, work_a.data<T>(), m, s.data<R>(), compute_uv ? u.data<T>() : &dummy, ldu,
                     compute_uv ? vh.data<T>() : &dummy, std::max(ldvt, 1), &wq, -1, rwork.data(), iwork.data(), &info);
    std::vector<T> work(lwork_of(wq));
    const T* in = work_a.data<T>();
    // gesdd returns garbage (no error) for NaN/inf input; torch raises.
    EMBER_CHECK_TYPE(
        std::all_of(in, in + B * m * n, [](T v) { return std::isfinite(std::real(v)) && std::isfinite(std::imag(v)); }),
        LinAlgError,
        "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.");
    for (int64_t i = 0; i < B; ++i) {
      Lapack<T>::gesdd(jobz, m, n, work_a.data<T>() + i * m * n, m, s.data<R>() + i * k,
                       compute_uv ? u.data<T>() + i * m * uc : &dummy, ldu,
                       compute_uv ? vh.data<T>() + i * vr * n : &dummy, std::max(ldvt, 1), work.data(),
                       static_cast<int>(work.size()), rwork.data(), iwork.data(), &info);
      EMBER_CHECK_TYPE(info <= 0, LinAlgError,
                       "linalg.svd: The algorithm failed to converge because the input matrix is ill-conditioned "
                       "or has too many repeated singular values (error code: ",
                       info, ").");
    }
  });
  return {u, s, vh};
}

// Gradient of the reduced SVD (distinct singular values), with skew(X) = X - X^H, E_ij = s_j^2 - s_i^2:
// gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS) + i Im diag(U^H gU) / S] V^H
//      + (I - U U^H) gU S^{-1} V^H + U S^{-1} gV^H (I - V V^H).
// Complex singular vectors are unique only up to u_i, v_i -> e^{i phi} u_i, e^{i phi} v_i: a loss
// that depends on phi (Im diag(U^H gU) != -Im diag(V^H gV)) is ill-defined and raises, as torch.
Tensor svd_backward(const Tensor& gu_in, const Tensor& gs, const Tensor& gvh_in, const Tensor& U_in, const Tensor& S,
                    const Tensor& Vh_in) {
  int64_t k = S.size(-1), m = U_in.size(-2), n = Vh_in.size(-1);
  bool cplx = is_complex(U_in.dtype());
  Tensor U = narrow(U_in, -1, 0, k), Vh = narrow(Vh_in, -2, 0, k);
  Tensor gu = narrow(gu_in, -1, 0, k), gv = mH(narrow(gvh_in, -2, 0, k));
  Tensor V = mH(Vh);
  Tensor I = eye_as(k, S);
  Tensor s2 = mul(S, S);
  Tensor d = sub(unsqueeze(s2, -2), unsqueeze(s2, -1));  // d_ij = s_j^2 - s_i^2
  Tensor F = mul(div(wrapped(1.0), add(d, I)), sub(wrapped(1.0), I));
  Tensor utgu = matmul(mH(U), gu), vtgv = matmul(mH(V), gv);
  Tensor skew_u = sub(utgu, mH(utgu)), skew_v = sub(vtgv, mH(vtgv));
  if (cplx && !autograd::synthetic_grad_active()) {
    autograd::NoGradGuard ng;
    Tensor iu = imag(diagonal(skew_u, 0, -2, -1)), iv = imag(diagonal(skew_v, 0, -2, -1));
    Tensor ok = le(abs(add(iu, iv)), add(wrapped(1e-2), scale(abs(iv), 1e-2)));
    EMBER_CHECK(k == 0 || item(all(ok)).to_bool(),
                "svd_backward: The singular vectors in the complex case are specified up to multiplication by "
                "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.");
  }
  Tensor J = mul(F, skew_u), K = mul(F, skew_v);
  Tensor inner = add(add(mul(J, unsqueeze(S, -2)), diag_embed(gs)), mul(unsqueeze(S, -1), K));
  if (cplx) inner = add(inner, diag_embed(div(diagonal(skew_u, 0, -2, -1), scale(S, 2.0))));
  Tensor ga = matmul(matmul(U, inner), Vh);
  Tensor sinv = unsqueeze(div(wrapped(1.0), S), -2);
  if (m > k) ga = add(ga, matmul(mul(sub(gu, matmul(U, utgu)), sinv), Vh));
  if (n > k) ga = add(ga, matmul(U, mH(mul(sub(gv, matmul(V, vtgv)), sinv))));
  return ga;
}

std::pair<Tensor, Tensor> eigh_core(const Tensor& a, char uplo, bool want_vectors) {
  Shape batch = batch_shape(a);
  int64_t n = a.size(-1), B = nbatch(batch);
  Tensor w, v;
  {
    autograd::NoGradGuard g;
    v = fortran_copy(a);
    w = empty(with(batch, {n}), to_real(a.dtype()));  // eigenvalues of a Hermitian matrix are real
    if (n > 0)
      dispatch_fc(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using R = real_t<T>;
        char jobz = want_vectors ? 'V' : 'N';
        int info = 0, iq = 0;
        T wq;
        R rq = 0;
        Lapack<T>::syevd(jobz, uplo, n, v.data<T>(), n, w.data<R>(), &wq, -1, &rq, -1, &iq, -1, &info);
        std::vector<T> work(lwork_of(wq));
        std::vector<R> rwork(lwork_of(rq));
        std::vector<int> iwork(std::max(1, iq));
        for (int64_t i = 0; i < B; ++i) {
          Lapack<T>::syevd(jobz, uplo, n, v.data<T>() + i * n * n, n, w.data<R>() + i * n, work.data(),
                           static_cast<int>(work.size()), rwork.data(), static_cast<int>(rwork.size()), iwork.data(),
                           static_cast<int>(iwork.size()), &info);
          EMBER_CHECK_TYPE(info <= 0, LinAlgError,
                           "linalg.eigh: The algorithm failed to converge because the input matrix is "
                           "ill-conditioned or has too many repeated eigenvalues (error code: ",
                           info, ").");
        }
      });
  }
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    // A = V diag(w) V^H: gA = V (diag(gw) + F o skew(V^H gV) / 2) V^H, F_ij = 1 / (w_j - w_i), skew(X) = X - X^H
    // (the projection onto the skew-Hermitian tangent directions, as torch). Complex eigenvectors are unique
    // only up to v_i -> e^{i phi} v_i: a loss depending on phi (Im diag(V^H gV) != 0) raises, as torch.
    LambdaBackward::Fn fn = [want_vectors](const TensorList& g, const TensorList& s) -> TensorList {
      const Tensor& W = s[0];
      EMBER_CHECK(want_vectors, "linalg.eigvalsh: gradients need the eigenvectors");
      const Tensor& V = s[1];
      Tensor I = eye_as(W.size(-1), W);
      Tensor d = sub(unsqueeze(W, -2), unsqueeze(W, -1));
      Tensor F = mul(div(wrapped(1.0), add(d, I)), sub(wrapped(1.0), I));
      Tensor vhgv = matmul(mH(V), g[1]);
      if (is_complex(V.dtype()) && !autograd::synthetic_grad_active()) {
        autograd::NoGradGuard ng;
        Tensor im = imag(diagonal(vhgv, 0, -2, -1));
        EMBER_CHECK(W.size(-1) == 0 || item(all(le(abs(im), wrapped(1e-2)))).to_bool(),
                    "linalg_eigh_backward: The eigenvectors in the complex case are specified up to multiplication "
                    "by e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.");
      }
      Tensor inner = add(diag_embed(g[0]), mul(F, scale(sub(vhgv, mH(vhgv)), 0.5)));
      return {matmul(matmul(V, inner), mH(V))};
    };
    if (want_vectors)
      node->record("LinalgEighBackward0", {w, v}, {}, {w, v}, std::move(fn));
    else
      node->record("LinalgEighBackward0", {w}, {}, {w}, std::move(fn));
  }
  return {w, v};
}

// amax / amin over dims with gradient shared among ties (norm's inf orders).
Tensor extreme(const Tensor& t, std::vector<int64_t> dims, bool keepdim, bool is_max) {
  int64_t nd = t.dim();
  for (auto& d : dims) d = wrap_dim(d, nd);
  std::vector<bool> red(nd, false);
  for (int64_t d : dims) red[d] = true;
  Shape perm, kept, keep_shape;
  int64_t inner = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (!red[d]) perm.push_back(d), kept.push_back(t.sizes()[d]);
  for (int64_t d = 0; d < nd; ++d)
    if (red[d]) perm.push_back(d), inner *= t.sizes()[d];
  for (int64_t d = 0; d < nd; ++d) keep_shape.push_back(red[d] ? 1 : t.sizes()[d]);
  EMBER_CHECK(inner > 0 || t.numel() > 0 || numel_of(kept) == 0, "linalg.norm: Expected a non-empty tensor");
  EMBER_CHECK(inner > 0, "linalg.norm: cannot compute the max/min over a zero-size dimension");
  Tensor r;
  {
    autograd::NoGradGuard g;
    Tensor c = contiguous(permute(t, perm));
    r = empty(kept, t.dtype());
    int64_t outer = numel_of(kept);
    dispatch_lapack(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = c.data<T>();
      T* o = r.data<T>();
      for (int64_t i = 0; i < outer; ++i) {
        T best = p[i * inner];
        for (int64_t j = 1; j < inner; ++j) {
          T x = p[i * inner + j];
          if (x != x || (best == best && (is_max ? x > best : x < best))) best = x;
        }
        o[i] = best;
      }
    });
    r = reshape(r, keepdim ? keep_shape : kept);
  }
  if (auto node = autograd::make_node<LambdaBackward>(t)) {
    node->record(is_max ? "AmaxBackward0" : "AminBackward0", {r}, {t}, {r},
                 [keep_shape](const TensorList& g, const TensorList& s) -> TensorList {
                   Tensor res = reshape(s[1], keep_shape), gg = reshape(g[0], keep_shape);
                   Tensor mask = to_dtype(eq(s[0], res), s[0].dtype());
                   std::vector<int64_t> all;
                   for (int64_t d = 0; d < s[0].dim(); ++d)
                     if (keep_shape[d] == 1) all.push_back(d);
                   Tensor cnt = sum(mask, all, true);
                   return {mul(div(mask, cnt), gg)};
                 });
  }
  return r;
}

Tensor matrix_norm(const Tensor& a, const std::string& ord_str, double ord, int64_t d0, int64_t d1, bool keepdim) {
  int64_t nd = a.dim();
  d0 = wrap_dim(d0, nd), d1 = wrap_dim(d1, nd);
  EMBER_CHECK(d0 != d1, "linalg.matrix_norm: dims must be different. Got (", d0, ", ", d1, ")");
  if (a.dtype() == ScalarType::Float16 || a.dtype() == ScalarType::BFloat16) {
    if (ord_str == "nuc" || std::abs(ord) == 2) check_not_low_precision(a, "linalg.matrix_norm");  // SVD norms
    // Accumulated in float, as torch's reductions (extreme() reads float and double only).
    return to_dtype(matrix_norm(to_dtype(a, ScalarType::Float32), ord_str, ord, d0, d1, keepdim), a.dtype());
  }
  auto restore = [&](Tensor r) {  // r has the two dims reduced away
    if (!keepdim) return r;
    int64_t lo = std::min(d0, d1), hi = std::max(d0, d1);
    return unsqueeze(unsqueeze(r, lo), hi);
  };
  if (ord_str == "fro" && is_complex(a.dtype())) return vector_norm(a, 2.0, std::vector<int64_t>{d0, d1}, keepdim);
  if (ord_str == "fro") return sqrt_(sum(mul(a, a), std::vector<int64_t>{d0, d1}, keepdim));
  if (is_complex(a.dtype()) && ord_str.empty() && (std::isinf(ord) || std::abs(ord) == 1))
    return matrix_norm(ember::abs(a), ord_str, ord, d0, d1, keepdim);
  if (ord_str == "nuc" || std::abs(ord) == 2) {
    check_float(a, "linalg.matrix_norm", false, true);
    Tensor m = movedim(a, {d0, d1}, {nd - 2, nd - 1});
    Tensor s = linalg_svdvals(m);
    if (ord_str == "nuc") return restore(sum(s, std::vector<int64_t>{-1}));
    return restore(extreme(s, {-1}, false, ord > 0));
  }
  EMBER_CHECK(ord_str.empty(), "linalg.matrix_norm: Order ", ord_str, " not supported.");
  EMBER_CHECK(std::isinf(ord) || std::abs(ord) == 1, "linalg.matrix_norm: Order ", ord, " not supported.");
  // inf: max over rows of the absolute row sums (sum along d1); 1: max over columns (sum along d0).
  bool rows = std::isinf(ord);
  Tensor sums = sum(abs_(a), std::vector<int64_t>{rows ? d1 : d0}, true);
  return restore(squeeze(extreme(sums, {rows ? d0 : d1}, true, ord > 0), std::vector<int64_t>{d0, d1}));
}

// Note [det gradient on singular input]: d det(A)/dA is the cofactor matrix, det * A^{-T} only
// where A is invertible. Matrices whose LU has a zero pivot (sign == 0) take the SVD form
// A = U S Vh: cofactor = det(U) det(Vh) U diag(prod_{j != i} s_j) Vh, which holds for any rank
// (zero below rank n-1). torch 2.13 gives this same value under create_graph=True; its plain
// backward() returns zeros for exactly singular input, which gradcheck rejects.
Tensor det_backward(const Tensor& g, const Tensor& a, const Tensor& det, const Tensor& sign) {
  int64_t n = a.size(-1);
  Tensor singular = eq(sign, wrapped(0));
  bool any_singular;
  {
    autograd::NoGradGuard ng;
    any_singular = n > 0 && item(any(singular)).to_bool();
  }
  auto mat = [](const Tensor& t) { return unsqueeze(unsqueeze(t, -1), -1); };
  Tensor eye_n = eye_as(n, a);
  // Invertible matrices: g det A^{-T}; singular ones are swapped for I so inv cannot fail.
  Tensor a_inv = any_singular ? where(mat(singular), eye_n, a) : a;
  Tensor grad = mul(mat(mul(g, det)), mT(inv_core(a_inv)));
  if (!any_singular) return grad;
  auto [U, S, Vh] = linalg_svd(a, false);
  // prod_{j != i} s_j without dividing: exclusive cumulative products from both ends.
  Shape ones_shape = S.sizes();
  ones_shape.back() = 1;
  Tensor one = ones(ones_shape, S.dtype());
  Tensor left = cat({one, narrow(cumprod(S, -1), -1, 0, n - 1)}, -1);
  Tensor right = flip(cat({one, narrow(cumprod(flip(S, {-1}), -1), -1, 0, n - 1)}, -1), {-1});
  Tensor orient;
  {
    autograd::NoGradGuard ng;  // det(U) det(Vh) is +-1: a constant
    orient = mul(linalg_slogdet(U).first, linalg_slogdet(Vh).first);
  }
  Tensor cof = matmul(mul(U, unsqueeze(mul(left, right), -2)), Vh);
  return where(mat(singular), mul(mat(mul(g, orient)), cof), grad);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
Tensor linalg_inv(const Tensor& a) {
  check_not_low_precision(a, "linalg.inv");
  check_square(a, "linalg.inv", "A", true);
  return inv_core(a);
}

Tensor linalg_det(const Tensor& a) {
  check_square(a, "linalg.det", "A", true);
  Tensor d, sign, logabs;
  {
    autograd::NoGradGuard g;
    std::tie(sign, logabs) = linalg_slogdet(a);
    if (is_complex(a.dtype())) logabs = to_dtype(logabs, a.dtype());
    d = empty(sign.sizes(), a.dtype());
    dispatch_fc(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < d.numel(); ++i) d.data<T>()[i] = sign.data<T>()[i] * std::exp(logabs.data<T>()[i]);
    });
  }
  // sign is a plain constant (no history), only telling which matrices are singular.
  if (auto node = autograd::make_node<LambdaBackward>(a))
    node->record("LinalgDetBackward0", {d}, {a}, {d}, [sign](const TensorList& g, const TensorList& s) -> TensorList {
      if (is_complex(s[0].dtype())) {  // g * conj(det) * A^{-H} (invertible input)
        Tensor c = unsqueeze(unsqueeze(mul(g[0], conj(s[1])), -1), -1);
        return {mul(c, mH(inv_core(s[0])))};
      }
      return {det_backward(g[0], s[0], s[1], sign)};
    });
  return d;
}

std::pair<Tensor, Tensor> linalg_slogdet(const Tensor& a) {
  check_not_low_precision(a, "linalg.slogdet");
  check_square(a, "linalg.slogdet", "A", true);
  Shape batch = batch_shape(a);
  int64_t n = a.size(-1);
  Tensor sign = empty(batch, a.dtype()), logabs = empty(batch, to_real(a.dtype()));
  {
    autograd::NoGradGuard g;
    LU f = lu_factor(a);
    if (is_complex(a.dtype())) {
      // sign = (-1)^swaps * prod(u_jj / |u_jj|), logabs = sum log|u_jj| (real).
      EMBER_DISPATCH_COMPLEX(a.dtype(), "linalg.slogdet", [&] {
        using C = scalar_t;
        using R = typename C::value_type;
        for (int64_t i = 0; i < nbatch(batch); ++i) {
          const C* p = f.lu.data<C>() + i * n * n;
          const int* piv = f.piv.data<int>() + i * n;
          std::complex<double> sg = 1;
          double la = 0;
          bool zero = false;
          for (int64_t j = 0; j < n; ++j) {
            std::complex<double> x(p[j * n + j].real(), p[j * n + j].imag());
            if (piv[j] != j + 1) sg = -sg;
            double m = std::hypot(x.real(), x.imag());
            if (m == 0) {
              zero = true;
            } else {
              std::complex<double> u = x / m;
              sg = {sg.real() * u.real() - sg.imag() * u.imag(), sg.real() * u.imag() + sg.imag() * u.real()};
            }
            la += std::log(m);
          }
          sign.data<C>()[i] = zero ? C(0) : C(static_cast<R>(sg.real()), static_cast<R>(sg.imag()));
          logabs.data<R>()[i] = zero ? -std::numeric_limits<R>::infinity() : static_cast<R>(la);
        }
      });
    } else
      dispatch_lapack(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < nbatch(batch); ++i) {
          const T* p = f.lu.data<T>() + i * n * n;
          const int* piv = f.piv.data<int>() + i * n;
          T sg = 1, la = 0;
          for (int64_t j = 0; j < n; ++j) {
            T x = p[j * n + j];
            if (piv[j] != j + 1) sg = -sg;
            if (x < 0) sg = -sg;
            if (x == 0) sg = 0;
            la += std::log(std::abs(x));
          }
          sign.data<T>()[i] = sg;
          logabs.data<T>()[i] = sg == 0 ? -std::numeric_limits<T>::infinity() : la;
        }
      });
  }
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    bool any_singular = n > 0 && item(any(eq(sign, wrapped(0)))).to_bool();
    // d log|det A| / dA = A^{-T}; log|det| of a singular matrix is -inf and its gradient
    // unbounded: as torch, the LU solve then yields inf/nan instead of raising.
    node->record("LinalgSlogdetBackward0", {sign, logabs}, {a}, {sign},
                 [any_singular](const TensorList& g, const TensorList& s) -> TensorList {
                   Tensor inv;
                   if (any_singular) {
                     autograd::NoGradGuard ng;
                     int64_t n = s[0].size(-1);
                     inv = solve_raw(s[0], expand(eye_as(n, s[0]), s[0].sizes()), "linalg.slogdet", false);
                   } else {
                     inv = inv_core(s[0]);
                   }
                   // Complex: G = g_logabs + i Im(conj(sign) g_sign), grad = G A^{-H} (the real sign is constant).
                   Tensor G = g[1];
                   if (is_complex(s[0].dtype()) && g[0].defined()) {
                     Tensor i = scalar_tensor(Scalar(std::complex<double>(0, 1)), std::nullopt, true);
                     G = add(G, mul(imag(mul(conj(s[1]), g[0])), i));
                   }
                   return {mul(unsqueeze(unsqueeze(G, -1), -1), mH(inv))};
                 });
  }
  return {sign, logabs};
}

Tensor linalg_solve(const Tensor& a, const Tensor& b, bool left) {
  check_square(a, "linalg.solve", "A", true);
  check_float(b, "linalg.solve", false, true);
  EMBER_CHECK(a.dtype() == b.dtype(), "linalg.solve: Expected A and B to have the same dtype, but found A of type ",
              dtype_name(a.dtype()), " and B of type ", dtype_name(b.dtype()), " instead");
  if (!left) return mT(linalg_solve(mT(a), mT(b), true));
  int64_t n = a.size(-1);
  // B is a vector (or batch of vectors) when it has one dim less than A and matches A's leading shape.
  bool vector = b.dim() == 1 || (b.dim() == a.dim() - 1 && Shape(b.sizes().begin(), b.sizes().end()) ==
                                                               Shape(a.sizes().begin(), a.sizes().end() - 1));
  Tensor B = vector ? unsqueeze(b, -1) : b;
  EMBER_CHECK(B.dim() >= 2, "linalg.solve: The input tensor B must have at least 2 dimensions.");
  EMBER_CHECK(B.size(-2) == n, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (", a.size(-2),
              "x", n, " and ", B.size(-2), "x", B.size(-1), ")");
  Shape batch = broadcast_shapes(batch_shape(a), batch_shape(B), "linalg.solve");
  Tensor A = expand(a, with(batch, {n, n}));
  Tensor Bx = expand(B, with(batch, {n, B.size(-1)}));
  Tensor x = solve_core(A, Bx, "torch.linalg.solve");
  return vector ? squeeze(x, std::vector<int64_t>{-1}) : x;
}

Tensor linalg_cholesky(const Tensor& a, bool upper) {
  check_square(a, "linalg.cholesky", "A", true);
  Tensor l = cholesky_core(a);
  return upper ? mH(l) : l;
}

std::pair<Tensor, Tensor> linalg_qr(const Tensor& a, const std::string& mode) {
  check_matrix(a, "linalg.qr", "A", true);
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  return qr_core(a, mode);
}

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& a, bool full_matrices) {
  check_matrix(a, "linalg.svd", "A", true);
  auto [u, s, vh] = svd_raw(a, full_matrices, true);
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    node->record("LinalgSvdBackward0", {u, s, vh}, {}, {u, s, vh},
                 [](const TensorList& g, const TensorList& sv) -> TensorList {
                   return {svd_backward(g[0], g[1], g[2], sv[0], sv[1], sv[2])};
                 });
  }
  return {u, s, vh};
}

Tensor linalg_svdvals(const Tensor& a) {
  check_matrix(a, "linalg.svdvals", "A", true);
  if (autograd::needs_history({&a})) return std::get<1>(linalg_svd(a, false));
  return std::get<1>(svd_raw(a, false, false));
}

std::pair<Tensor, Tensor> linalg_eigh(const Tensor& a, const std::string& uplo) {
  check_float(a, "linalg_eigh_cpu", true, true);
  check_square(a, "linalg.eigh", "A", true);
  EMBER_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  return eigh_core(a, static_cast<char>(std::toupper(uplo[0])), true);
}

Tensor linalg_eigvalsh(const Tensor& a, const std::string& uplo) {
  check_float(a, "linalg_eigh_cpu", true, true);
  check_square(a, "linalg.eigvalsh", "A", true);
  EMBER_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  bool grad = autograd::needs_history({&a});
  return eigh_core(a, static_cast<char>(std::toupper(uplo[0])), grad).first;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor& a, const Tensor& b, std::optional<double> rcond,
                                                        const std::string& driver) {
  check_float_or_double(a);
  check_matrix(a, "torch.linalg.lstsq", "A", true);
  EMBER_CHECK(b.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  check_float_or_double(b);
  check_float(b, "torch.linalg.lstsq", false, true);
  EMBER_CHECK(a.dtype() == b.dtype(), "torch.linalg.lstsq: Expected input and other to have the same dtype, but got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  EMBER_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd" || driver == "gelss",
              "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  bool vector = b.dim() == 1 || (b.dim() == a.dim() - 1 && Shape(b.sizes().begin(), b.sizes().end()) ==
                                                               Shape(a.sizes().begin(), a.sizes().end() - 1));
  Tensor B = vector ? unsqueeze(b, -1) : b;
  int64_t m = a.size(-2), n = a.size(-1), k = B.size(-1);
  EMBER_CHECK(B.dim() == a.dim(),
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
              "(input.dim() - other.dim()) <= 1");
  EMBER_CHECK(B.size(-2) == m, "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  Shape batch = broadcast_shapes(batch_shape(a), batch_shape(B), "torch.linalg.lstsq");
  Tensor A = expand(a, with(batch, {m, n}));
  Tensor Bx = expand(B, with(batch, {m, k}));
  int64_t nb = nbatch(batch), mx = std::max(m, n), mn = std::min(m, n);
  // What torch returns per driver: rank for all but gels, singular values for gelsd/gelss.
  bool has_rank = driver != "gels", has_sv = driver == "gelsd" || driver == "gelss";
  Tensor rank = has_rank ? zeros(batch, ScalarType::Int64) : empty({0}, ScalarType::Int64);
  ScalarType rdt = to_real(a.dtype());  // singular values and residuals are real
  Tensor sv = has_sv ? zeros(with(batch, {mn}), rdt) : empty({0}, rdt);
  Tensor sol, bw;
  {
    autograd::NoGradGuard g;
    Tensor aw = fortran_copy(A);
    bw = fortran_empty(batch, mx, k, a.dtype());
    if (bw.numel() > 0) {
      fill_(bw, 0);
      Tensor head = narrow(bw, -2, 0, m);
      copy_(head, Bx);
    }
    dispatch_fc(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using R = real_t<T>;
      R rc = rcond ? static_cast<R>(*rcond) : std::numeric_limits<R>::epsilon() * static_cast<R>(mx);
      std::vector<int> jpvt(std::max<int64_t>(n, 1));
      for (int64_t i = 0; i < nb; ++i) {
        if (m == 0 || n == 0) continue;
        int info = 0, r = 0, iwq = 0;
        T wq;
        R rq = 0;
        T* pa = aw.data<T>() + i * m * n;
        T* pb = bw.data<T>() + i * mx * k;
        R* ps = has_sv ? sv.data<R>() + i * mn : nullptr;
        // Each driver twice: a workspace query (lwork = -1), then the solve.
        auto call = [&](T* work, int lwork, int* iwork, R* rwork) {
          if (driver == "gels") {
            Lapack<T>::gels(m, n, k, pa, m, pb, mx, work, lwork, &info);
          } else if (driver == "gelsd") {
            Lapack<T>::gelsd(m, n, k, pa, m, pb, mx, ps, rc, &r, work, lwork, rwork, iwork, &info);
          } else if (driver == "gelss") {
            Lapack<T>::gelss(m, n, k, pa, m, pb, mx, ps, rc, &r, work, lwork, rwork, &info);
          } else {
            std::fill(jpvt.begin(), jpvt.end(), 0);
            Lapack<T>::gelsy(m, n, k, pa, m, pb, mx, jpvt.data(), rc, &r, work, lwork, rwork, &info);
          }
        };
        call(&wq, -1, &iwq, &rq);
        std::vector<T> work(lwork_of(wq));
        std::vector<int> iwork(std::max(1, iwq));
        // Complex drivers' real workspace: gelsd reports its size, gelsy needs 2n, gelss 5 min(m, n).
        int64_t lrwork = driver == "gelsd" ? lwork_of(rq) : std::max(2 * n, 5 * mn);
        std::vector<R> rwork(is_complex(a.dtype()) ? std::max<int64_t>(lrwork, 1) : 1);
        call(work.data(), static_cast<int>(work.size()), iwork.data(), rwork.data());
        // gels (QR/LQ, no pivoting) stops at an exactly zero diagonal of R or L; B then holds no solution.
        if (driver == "gels" && info > 0)
          throw LinAlgError(detail::str_cat(
              "torch.linalg.lstsq: The least squares solution could not be computed because the input matrix does "
              "not have full rank (error code: ",
              info, ")."));
        if (has_rank) rank.data<int64_t>()[i] = r;
      }
    });
    sol = narrow(bw, -2, 0, n);
    if (n > mx) sol = zeros(with(batch, {n, k}), a.dtype());
  }
  // Gradients: the same least-squares solution written as pinv(A) @ B.
  bool grad = autograd::needs_history({&a, &b});
  if (grad) sol = matmul(linalg_pinv(A), Bx);
  // Squared residuals of each column, only for tall full-rank systems and not from gelsy (torch's rule).
  Tensor res = empty({0}, rdt);
  auto sq = [](const Tensor& d) { return is_complex(d.dtype()) ? real(mul(conj(d), d)) : mul(d, d); };
  bool full_rank = !has_rank || rank.numel() == 0 || item(amin(rank)).to_int() == n;
  if (m > n && driver == "gels" && n == 0) {
    res = zeros(with(batch, {k}), rdt);  // torch's gels reports zero residuals for an empty A
  } else if (m > n && driver != "gelsy" && full_rank) {
    if (grad) {
      Tensor d = sub(matmul(A, sol), Bx);
      res = sum(sq(d), std::vector<int64_t>{-2});
    } else {
      autograd::NoGradGuard g;
      Tensor d = narrow(bw, -2, n, m - n);
      res = sum(sq(d), std::vector<int64_t>{-2});
    }
  }
  if (vector) sol = squeeze(sol, std::vector<int64_t>{-1});
  return {sol, res, rank, sv};
}

namespace {
// Default tolerance: rtol = eps * max(m, n) when neither is given; atol = 0.
std::pair<double, double> tolerances(const Tensor& a, std::optional<double> atol, std::optional<double> rtol) {
  double eps = to_real(a.dtype()) == ScalarType::Float64 ? std::numeric_limits<double>::epsilon()
                                                         : std::numeric_limits<float>::epsilon();
  double at = atol.value_or(0.0);
  double rt = rtol ? *rtol : ((atol && *atol > 0) ? 0.0 : eps * static_cast<double>(std::max(a.size(-2), a.size(-1))));
  return {at, rt};
}
// The singular values (or |eigenvalues|) kept: s > max(atol, rtol * max(s)).
Tensor kept_mask(const Tensor& s_abs, double at, double rt) {
  autograd::NoGradGuard g;
  Tensor smax = s_abs.size(-1) > 0 ? extreme(s_abs, {-1}, true, true) : zeros(s_abs.sizes(), s_abs.dtype());
  Tensor tol = scale(smax, rt);
  Tensor atv = full(tol.sizes(), Scalar(at), tol.dtype());
  Tensor thr = add(mul(to_dtype(ge(tol, atv), tol.dtype()), sub(tol, atv)), atv);  // max(tol, atol)
  return to_dtype(gt(s_abs, thr), s_abs.dtype());
}
}  // namespace

Tensor linalg_pinv(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  EMBER_CHECK(a.dim() >= 2 && float_double_or_complex(a.dtype()), "linalg.pinv(", scalar_type_name(a.dtype()), "{",
              a.shape_str(),
              "}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types");
  check_matrix(a, "linalg.pinv", "A", true);
  if (hermitian) check_square(a, "linalg.eigh", "A", true);  // torch's hermitian path is eigh's
  auto [at, rt] = tolerances(a, atol, rtol);
  bool grad = autograd::needs_history({&a});
  if (hermitian && !grad) {  // with grad, the SVD path gives the general pinv gradient (as torch)
    auto [w, v] = eigh_core(a, 'L', true);
    Tensor mask = kept_mask(abs_(autograd::detach(w)), at, rt);
    Tensor winv = mul(div(mask, add(w, sub(wrapped(1.0), mask))), wrapped(1.0));
    return matmul(mul(v, unsqueeze(winv, -2)), mH(v));
  }
  auto [u, s, vh] = linalg_svd(a, false);
  Tensor mask = kept_mask(autograd::detach(s), at, rt);
  Tensor sinv = div(mask, add(s, sub(wrapped(1.0), mask)));  // 1/s where kept, else 0
  return matmul(mul(mH(vh), unsqueeze(sinv, -2)), mH(u));
}

Tensor linalg_matrix_rank(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  check_float_or_double(a);
  check_matrix(a, "linalg.matrix_rank", "A", true);
  if (hermitian) check_square(a, "linalg.eigh", "A", true);
  autograd::NoGradGuard g;
  auto [at, rt] = tolerances(a, atol, rtol);
  Tensor s = hermitian ? abs_(eigh_core(a, 'L', false).first) : std::get<1>(svd_raw(a, false, false));
  return sum(to_dtype(kept_mask(s, at, rt), ScalarType::Int64), std::vector<int64_t>{-1});
}

Tensor linalg_matrix_power(const Tensor& a, int64_t n) {
  EMBER_CHECK(a.dim() >= 2, "linalg.matrix_power: The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(a.size(-1) == a.size(-2), "linalg.matrix_power: A must be batches of square matrices, but they are ",
              a.size(-2), " by ", a.size(-1), " matrices");
  if (n == 0) {
    Tensor r = contiguous(expand(eye(a.size(-1), a.size(-1), a.dtype()), a.sizes()));
    if (auto node = autograd::make_node<LambdaBackward>(a))
      node->record("LinalgMatrixPowerBackward0", {r}, {}, {},
                   [s = a.sizes(), dt = a.dtype()](const TensorList&, const TensorList&) -> TensorList {
                     return {zeros(s, dt)};
                   });
    return r;
  }
  Tensor base = n < 0 ? linalg_inv(a) : a;
  // |n| as unsigned: -INT64_MIN does not fit int64_t.
  uint64_t m = n < 0 ? uint64_t{0} - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  if (m == 1) return base.is_same(a) ? clone(a) : base;
  Tensor result;
  while (m > 0) {  // square-and-multiply
    if (m & 1) result = result.defined() ? matmul(result, base) : base;
    m >>= 1;
    if (m) base = matmul(base, base);
  }
  return result;
}

Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim) {
  EMBER_CHECK(a.dim() == b.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  EMBER_CHECK(a.dtype() == b.dtype(), "linalg.cross: expected both inputs to have the same dtype, but got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), "linalg.cross");
  int64_t d = wrap_dim(dim, static_cast<int64_t>(shape.size()));
  EMBER_CHECK(a.size(d) == 3 && b.size(d) == 3, "linalg.cross: inputs dimension ", dim, " must have length 3. Got ",
              a.size(d), " and ", b.size(d));
  if (a.dtype() == ScalarType::Bool)
    EMBER_NOT_IMPLEMENTED("\"cross\" not implemented for 'Bool'");  // as torch's kernel
  Tensor out = empty(shape, a.dtype());
  {
    autograd::NoGradGuard g;
    Tensor A = expand(a, shape), B = expand(b, shape);
    for (int64_t i = 0; i < 3; ++i) {
      int64_t j = (i + 1) % 3, k = (i + 2) % 3;
      Tensor c = sub(mul(select(A, d, j), select(B, d, k)), mul(select(A, d, k), select(B, d, j)));
      Tensor dst = select(out, d, i);
      copy_(dst, c);
    }
  }
  if (auto node = autograd::make_node<LambdaBackward>(a, b)) {
    // d(a x b): ga = conj(b) x g, gb = g x conj(a) (summed back over broadcasting).
    node->record("LinalgCrossBackward0", {out}, {a, b}, {},
                 [d](const TensorList& g, const TensorList& s) -> TensorList {
                   Shape shape = g[0].sizes();
                   Tensor ga = linalg_cross(expand(conj(s[1]), shape), g[0], d);
                   Tensor gb = linalg_cross(g[0], expand(conj(s[0]), shape), d);
                   return {autograd::sum_to(ga, s[0].sizes()), autograd::sum_to(gb, s[1].sizes())};
                 });
  }
  return out;
}

Tensor linalg_norm(const Tensor& a, std::optional<double> ord, const std::string& ord_str, OptDims dims, bool keepdim) {
  // Complex: vector norms and the fro/1/inf matrix norms work on the moduli; nuc/2 need the SVD.
  // Half/bfloat16 go on: vector_norm and matrix_norm take them (torch refuses only the SVD norms).
  if (!is_complex(a.dtype()) && a.dtype() != ScalarType::Float16 && a.dtype() != ScalarType::BFloat16)
    check_float(a, "linalg.norm");
  bool matrix = !ord_str.empty() || (dims && dims->size() == 2) || (!dims && ord && a.dim() == 2);
  if (dims)
    EMBER_CHECK(dims->size() == 1 || dims->size() == 2,
                "linalg.norm: If dim is specified, it must be of length 1 or 2. Got ", dims->size());
  if (dims && !ord_str.empty())  // a string ord is a matrix norm
    EMBER_CHECK(dims->size() == 2, "linalg.matrix_norm: dim must be a 2-tuple. Got ", (*dims)[0]);
  if (!dims && (ord || !ord_str.empty()))
    EMBER_CHECK(a.dim() == 1 || a.dim() == 2,
                "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got ", a.dim(), "D.");
  if (!ord && ord_str.empty()) {  // 2-norm of the flattened input (Frobenius for matrices)
    return vector_norm(a, 2.0, dims, keepdim);
  }
  if (matrix) {
    int64_t d0 = dims ? (*dims)[0] : -2, d1 = dims ? (*dims)[1] : -1;
    return matrix_norm(a, ord_str, ord.value_or(0.0), d0, d1, keepdim);
  }
  return vector_norm(a, *ord, dims, keepdim);
}

std::pair<Tensor, Tensor> geqrf(const Tensor& a) {
  EMBER_CHECK(a.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  ScalarType t = a.dtype();
  if (!(t == ScalarType::Float32 || t == ScalarType::Float64 || is_complex(t)))
    EMBER_NOT_IMPLEMENTED("\"geqrf\" not implemented for '", dtype_name(t), "'");
  Shape batch = batch_shape(a);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), B = nbatch(batch);
  Tensor r = fortran_copy(a);
  Tensor tau = zeros(with(batch, {k}), t);
  if (m > 0 && n > 0)
    dispatch_fc(t, [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < B; ++i) {
        T* A = r.data<T>() + i * m * n;
        T* ti = tau.data<T>() + i * k;
        int info = 0;
        T wq;
        Lapack<T>::geqrf(m, n, A, m, ti, &wq, -1, &info);
        std::vector<T> work(lwork_of(wq));
        Lapack<T>::geqrf(m, n, A, m, ti, work.data(), static_cast<int>(work.size()), &info);
      }
    });
  // torch records a node that refuses to differentiate (so a graph through geqrf fails loudly).
  if (auto node = autograd::make_node<LambdaBackward>(a))
    node->record("GeqrfBackward0", {r, tau}, {}, {}, [](const TensorList&, const TensorList&) -> TensorList {
      EMBER_NOT_IMPLEMENTED("the derivative for 'geqrf' is not implemented.");
    });
  return {r, tau};
}

Tensor orgqr_values(const Tensor& a, const Tensor& tau) {
  EMBER_CHECK(a.dim() >= 2 && tau.dim() == a.dim() - 1, "orgqr: expected input (*, m, n) and tau (*, k)");
  int64_t m = a.size(-2), n = a.size(-1), k = tau.size(-1);
  EMBER_CHECK(m >= n && n >= k, "orgqr: expected m >= n >= k, got ", m, ", ", n, ", ", k);
  EMBER_CHECK(a.dtype() == tau.dtype(), "orgqr: tau and input dtypes differ");
  Shape batch = batch_shape(a);
  EMBER_CHECK(Shape(tau.sizes().begin(), tau.sizes().end() - 1) == batch, "orgqr: tau's batch shape differs");
  check_float(a, "orgqr", true, true);
  Tensor q = fortran_copy(a);
  Tensor t = contiguous(tau);
  int64_t B = nbatch(batch);
  if (m > 0 && n > 0)
    dispatch_fc(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < B; ++i) {
        T* A = q.data<T>() + i * m * n;
        int info = 0;
        T wq;
        Lapack<T>::orgqr(m, n, k, A, m, t.data<T>() + i * k, &wq, -1, &info);
        std::vector<T> work(lwork_of(wq));
        Lapack<T>::orgqr(m, n, k, A, m, t.data<T>() + i * k, work.data(), static_cast<int>(work.size()), &info);
      }
    });
  if (auto node = autograd::make_node<LambdaBackward>(a, tau))
    node->record("OrgqrValuesBackward", {q}, {}, {}, [](const TensorList&, const TensorList&) -> TensorList {
      EMBER_NOT_IMPLEMENTED("orgqr_values has no derivative: use ember.linalg.householder_product");
    });
  return q;
}

namespace {
// LDL wrappers: hermitian picks hetrf/hetrs for complex types (for real ones it is the same as symmetric).
template <typename T>
void ldl_trf(bool herm, int n, T* a, int* ipiv, T* work, int lwork, int* info) {
  char uplo = 'L';
  if constexpr (std::is_same_v<T, float>) {
    ssytrf_(&uplo, &n, a, &n, ipiv, work, &lwork, info, 1);
  } else if constexpr (std::is_same_v<T, double>) {
    dsytrf_(&uplo, &n, a, &n, ipiv, work, &lwork, info, 1);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    herm ? chetrf_(&uplo, &n, a, &n, ipiv, work, &lwork, info, 1)
         : csytrf_(&uplo, &n, a, &n, ipiv, work, &lwork, info, 1);
  } else {
    herm ? zhetrf_(&uplo, &n, a, &n, ipiv, work, &lwork, info, 1)
         : zsytrf_(&uplo, &n, a, &n, ipiv, work, &lwork, info, 1);
  }
}
template <typename T>
void ldl_trs(bool herm, int n, int nrhs, const T* a, const int* ipiv, T* b, int* info) {
  char uplo = 'L';
  if constexpr (std::is_same_v<T, float>) {
    ssytrs_(&uplo, &n, &nrhs, a, &n, ipiv, b, &n, info, 1);
  } else if constexpr (std::is_same_v<T, double>) {
    dsytrs_(&uplo, &n, &nrhs, a, &n, ipiv, b, &n, info, 1);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    herm ? chetrs_(&uplo, &n, &nrhs, a, &n, ipiv, b, &n, info, 1)
         : csytrs_(&uplo, &n, &nrhs, a, &n, ipiv, b, &n, info, 1);
  } else {
    herm ? zhetrs_(&uplo, &n, &nrhs, a, &n, ipiv, b, &n, info, 1)
         : zsytrs_(&uplo, &n, &nrhs, a, &n, ipiv, b, &n, info, 1);
  }
}

// torch has no derivative for the LDL functions: a graph through them fails on backward (a RuntimeError, as torch).
void refuse_grad(const char* name, const char* op, const Tensor& out, const Tensor& a, const Tensor& b = Tensor()) {
  auto node = b.defined() ? autograd::make_node<LambdaBackward>(a, b) : autograd::make_node<LambdaBackward>(a);
  if (node)
    node->record(name, {out}, {}, {}, [op](const TensorList&, const TensorList&) -> TensorList {
      throw Error(detail::str_cat("derivative for ", op, " is not implemented"));
    });
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& a, bool hermitian) {
  check_square(a, "torch.linalg.ldl_factor_ex", "A", /*complex_ok=*/true);
  Shape batch = batch_shape(a);
  int64_t n = a.size(-1), B = nbatch(batch);
  Tensor ld = fortran_copy(a);
  Tensor piv = zeros(with(batch, {n}), ScalarType::Int32);
  Tensor info = zeros(batch, ScalarType::Int32);
  if (n > 0)
    dispatch_fc(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < B; ++i) {
        T* A = ld.data<T>() + i * n * n;
        int inf = 0;
        T wq;
        ldl_trf<T>(hermitian, n, A, piv.data<int>() + i * n, &wq, -1, &inf);
        std::vector<T> work(lwork_of(wq));
        ldl_trf<T>(hermitian, n, A, piv.data<int>() + i * n, work.data(), static_cast<int>(work.size()), &inf);
        info.data<int>()[i] = inf;
      }
    });
  {
    autograd::NoGradGuard g;
    ld = tril(ld, 0);  // LAPACK leaves the upper triangle as it found it; torch zeroes it
  }
  refuse_grad("LinalgLdlFactorExBackward0", "linalg_ldl_factor_ex", ld, a);
  return {ld, piv, info};
}

Tensor ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian) {
  check_square(ld, "torch.linalg.ldl_solve", "LD", /*complex_ok=*/true);
  EMBER_CHECK(b.dim() >= 2, "torch.linalg.ldl_solve: B must have at least 2 dimensions.");
  EMBER_CHECK(pivots.dtype() == ScalarType::Int32, "torch.linalg.ldl_solve: Expected pivots to be integers. Got ",
              dtype_name(pivots.dtype()));
  EMBER_CHECK(ld.dtype() == b.dtype(), "torch.linalg.ldl_solve: LD dtype ", dtype_name(ld.dtype()),
              " does not match b dtype ", dtype_name(b.dtype()));
  int64_t n = ld.size(-1);
  EMBER_CHECK(b.size(-2) == n, "torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B (", n,
              "x", n, " and ", b.size(-2), "x", b.size(-1), ")");
  Shape batch = broadcast_shapes(batch_shape(ld), batch_shape(b));
  EMBER_CHECK(Shape(pivots.sizes().begin(), pivots.sizes().end() - 1) == batch_shape(ld) && pivots.size(-1) == n,
              "torch.linalg.ldl_solve: pivots must have shape (*, n) matching LD");
  int64_t k = b.size(-1), B = nbatch(batch);
  Tensor lde, pe, x;
  {
    autograd::NoGradGuard g;
    lde = fortran_copy(expand(ld, with(batch, {n, n})));
    pe = contiguous(expand(pivots, with(batch, {n})));
    x = fortran_copy(expand(b, with(batch, {n, k})));
  }
  if (n > 0 && k > 0)
    dispatch_fc(ld.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < B; ++i) {
        int inf = 0;
        ldl_trs<T>(hermitian, n, k, lde.data<T>() + i * n * n, pe.data<int>() + i * n, x.data<T>() + i * n * k, &inf);
      }
    });
  refuse_grad("LinalgLdlSolveBackward0", "linalg_ldl_solve", x, ld, b);
  return x;
}

namespace {
// One matrix through geev: A (column-major n x n, overwritten) -> w (n) and, when vr is given, the right
// eigenvectors written row-major into vr (n x n complex). Real inputs: conjugate pairs are rebuilt from
// LAPACK's (re, im) column pairs. Returns LAPACK's info.
template <typename T>
int geev_one(int n, T* a, std::complex<real_t<T>>* w, std::complex<real_t<T>>* vr) {
  using R = real_t<T>;
  using C = std::complex<R>;
  char jl = 'N', jr = vr ? 'V' : 'N';
  int info = 0, one = 1, lwork = -1;
  std::vector<T> v(vr ? static_cast<size_t>(n) * n : 1);
  T wq;
  T dummy{};
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    std::vector<T> wr(n), wi(n);
    auto call = [&](T* work, int lw) {
      if constexpr (std::is_same_v<T, float>)
        sgeev_(&jl, &jr, &n, a, &n, wr.data(), wi.data(), &dummy, &one, v.data(), &n, work, &lw, &info, 1, 1);
      else
        dgeev_(&jl, &jr, &n, a, &n, wr.data(), wi.data(), &dummy, &one, v.data(), &n, work, &lw, &info, 1, 1);
    };
    call(&wq, lwork);
    std::vector<T> work(lwork_of(wq));
    call(work.data(), static_cast<int>(work.size()));
    for (int j = 0; j < n; ++j) w[j] = C(wr[j], wi[j]);
    if (vr)
      for (int j = 0; j < n; ++j) {
        if (wi[j] == 0) {
          for (int r = 0; r < n; ++r) vr[r * n + j] = C(v[j * n + r], 0);
        } else if (wi[j] > 0 && j + 1 < n) {  // columns j, j+1 hold re and im of the pair's first vector
          for (int r = 0; r < n; ++r) {
            C z(v[j * n + r], v[(j + 1) * n + r]);
            vr[r * n + j] = z;
            vr[r * n + j + 1] = std::conj(z);
          }
          ++j;
        }
      }
  } else {
    std::vector<R> rwork(2 * static_cast<size_t>(std::max(n, 1)));
    auto call = [&](T* work, int lw) {
      if constexpr (std::is_same_v<T, std::complex<float>>)
        cgeev_(&jl, &jr, &n, a, &n, w, &dummy, &one, v.data(), &n, work, &lw, rwork.data(), &info, 1, 1);
      else
        zgeev_(&jl, &jr, &n, a, &n, w, &dummy, &one, v.data(), &n, work, &lw, rwork.data(), &info, 1, 1);
    };
    call(&wq, lwork);
    std::vector<T> work(lwork_of(wq));
    call(work.data(), static_cast<int>(work.size()));
    if (vr)
      for (int j = 0; j < n; ++j)
        for (int r = 0; r < n; ++r) vr[r * n + j] = v[j * n + r];
  }
  return info;
}

std::pair<Tensor, Tensor> eig_core(const Tensor& a, bool want_vectors, const char* op) {
  check_float(a, op, false, true);  // integers: RuntimeError, as torch
  check_square(a, op, "A", true);
  ScalarType ct = is_complex(a.dtype())
                      ? a.dtype()
                      : (a.dtype() == ScalarType::Float32 ? ScalarType::Complex64 : ScalarType::Complex128);
  Shape batch = batch_shape(a);
  int64_t n = a.size(-1), B = nbatch(batch);
  Tensor w = empty(with(batch, {n}), ct);
  Tensor v = want_vectors ? empty(with(batch, {n, n}), ct) : Tensor();
  {
    autograd::NoGradGuard g;
    if (n > 0) {
      EMBER_CHECK(item(all(isfinite(a))).to_bool(), op, ": input tensor should not contain infs or NaNs.");
      Tensor work_a = fortran_copy(a);
      dispatch_fc(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using C = std::complex<real_t<T>>;
        for (int64_t i = 0; i < B; ++i) {
          int info = geev_one<T>(static_cast<int>(n), work_a.data<T>() + i * n * n, w.data<C>() + i * n,
                                 want_vectors ? v.data<C>() + i * n * n : nullptr);
          EMBER_CHECK_TYPE(info <= 0, LinAlgError, op,
                           ": The algorithm failed to converge because the input matrix is ill-conditioned or has "
                           "too many repeated eigenvalues (error code: ",
                           info, ").");
        }
      });
    }
  }
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    // A = V diag(L) V^{-1}: gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / E) V^H with
    // E_ij = conj(L_j - L_i) off the diagonal (the second term keeps the unit-norm gauge of geev's vectors).
    // The vectors are unique only up to v_i -> e^{i phi} v_i: a loss depending on phi raises, as torch.
    bool real_input = !is_complex(a.dtype());
    LambdaBackward::Fn fn = [want_vectors, real_input, op](const TensorList& g, const TensorList& s) -> TensorList {
      const Tensor& L = s[0];
      EMBER_CHECK(want_vectors, op, ": gradients need the eigenvectors; use linalg.eig");
      const Tensor& V = s[1];
      Tensor Vh = mH(V);
      Tensor I = eye_as(L.size(-1), L);
      Tensor inner = diag_embed(g[0]);
      Tensor vhgv = matmul(Vh, g[1]);
      if (!autograd::synthetic_grad_active()) {
        autograd::NoGradGuard ng;
        Tensor im = imag(diagonal(vhgv, 0, -2, -1));
        EMBER_CHECK(L.size(-1) == 0 || item(all(le(abs(im), wrapped(1e-2)))).to_bool(),
                    "linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication "
                    "by e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.");
      }
      Tensor d = re(diagonal(vhgv, 0, -2, -1));
      Tensor t = sub(vhgv, mul(matmul(Vh, V), unsqueeze(d, -2)));
      Tensor E = conj(sub(unsqueeze(L, -2), unsqueeze(L, -1)));
      Tensor F = mul(div(wrapped(1.0), add(E, I)), sub(wrapped(1.0), I));
      inner = add(inner, mul(t, F));
      Tensor gA = linalg_solve(Vh, matmul(inner, Vh));
      return {real_input ? real(gA) : gA};
    };
    if (want_vectors)
      node->record("LinalgEigBackward0", {w, v}, {}, {w, v}, std::move(fn));
    else
      node->record("LinalgEigvalsBackward0", {w}, {}, {w}, std::move(fn));
  }
  return {w, v};
}
}  // namespace

std::pair<Tensor, Tensor> linalg_eig(const Tensor& a) { return eig_core(a, true, "linalg.eig"); }

Tensor linalg_eigvals(const Tensor& a) {
  // Gradients of the eigenvalues need the eigenvectors: compute them when a graph is being recorded.
  if (autograd::needs_history({&a})) return eig_core(a, true, "linalg.eigvals").first;
  return eig_core(a, false, "linalg.eigvals").first;
}

// ---- triangular solves (BLAS trsm) and LU (getrf / getrs) ----
namespace {
// Element offset of each matrix of t (..., r, c) in row-major batch order (batch strides may be 0).
std::vector<int64_t> matrix_offsets(const Tensor& t) {
  int64_t bd = t.dim() - 2, nb = nbatch(batch_shape(t));
  std::vector<int64_t> off(static_cast<size_t>(nb), 0);
  for (int64_t i = 0; i < nb; ++i) {
    int64_t rem = i, o = 0;
    for (int64_t d = bd - 1; d >= 0; --d) {
      o += (rem % t.size(d)) * t.stride(d);
      rem /= t.size(d);
    }
    off[static_cast<size_t>(i)] = o;
  }
  return off;
}

// B <- op(A)^{-1} B (left) or B op(A)^{-1}, row-major; complex pointers go as their real type (OpenBLAS
// declares them void* or float* depending on the version).
template <typename T>
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, CBLAS_DIAG diag, int m, int n, const T* a, int lda,
          T* b, int ldb) {
  using R = real_t<T>;
  if constexpr (std::is_same_v<T, float>) {
    cblas_strsm(CblasRowMajor, side, uplo, tr, diag, m, n, 1.0f, a, lda, b, ldb);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dtrsm(CblasRowMajor, side, uplo, tr, diag, m, n, 1.0, a, lda, b, ldb);
  } else {
    const T one(1);
    auto* o = reinterpret_cast<const R*>(&one);
    auto* ap = reinterpret_cast<const R*>(a);
    auto* bp = reinterpret_cast<R*>(b);
    if constexpr (std::is_same_v<T, std::complex<float>>)
      cblas_ctrsm(CblasRowMajor, side, uplo, tr, diag, m, n, o, ap, lda, bp, ldb);
    else
      cblas_ztrsm(CblasRowMajor, side, uplo, tr, diag, m, n, o, ap, lda, bp, ldb);
  }
}

// X for same-batch A (*, n, n) and B; B is copied, A read in place when each matrix is row- or
// column-major with a leading dimension (a column-major A is the row-major A^T, its other triangle).
Tensor solve_triangular_raw(const Tensor& a, const Tensor& b, bool upper, bool left, bool unit) {
  autograd::NoGradGuard g;
  int64_t n = a.size(-1);
  Tensor x = clone(b, MemoryFormat::Contiguous);
  int64_t rows = x.size(-2), cols = x.size(-1), nb = nbatch(batch_shape(x));
  if (nb == 0 || rows == 0 || cols == 0) return x;
  Tensor A = a;
  bool rowm = n <= 1 || (A.stride(-1) == 1 && A.stride(-2) >= n);
  bool colm = !rowm && A.stride(-2) == 1 && A.stride(-1) >= n;
  if (!rowm && !colm) {
    A = contiguous(A);
    rowm = true;
  }
  int lda = static_cast<int>(n <= 1 ? 1 : (rowm ? A.stride(-2) : A.stride(-1)));
  CBLAS_UPLO ul = (upper != colm) ? CblasUpper : CblasLower;
  CBLAS_TRANSPOSE tr = colm ? CblasTrans : CblasNoTrans;
  CBLAS_SIDE side = left ? CblasLeft : CblasRight;
  CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
  std::vector<int64_t> off = matrix_offsets(A);
  SerialBlas serial(n * n * std::max(rows, cols) < (int64_t{1} << 18));  // Note [small getrs]
  dispatch_fc(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* ap = A.data<T>();
    T* xp = x.data<T>();
    for (int64_t i = 0; i < nb; ++i)
      trsm<T>(side, ul, tr, diag, static_cast<int>(rows), static_cast<int>(cols), ap + off[static_cast<size_t>(i)], lda,
              xp + i * rows * cols, static_cast<int>(cols));
  });
  return x;
}

// Same-batch A and B. X = A^{-1} B: gB = A^{-H} gX, gA = -gB X^H (left); X = B A^{-1}: gB = gX A^{-H},
// gA = -X^H gB; gA is kept to the triangle that is read (without the diagonal when unitriangular).
Tensor solve_triangular_core(const Tensor& a, const Tensor& b, bool upper, bool left, bool unit) {
  Tensor x = solve_triangular_raw(a, b, upper, left, unit);
  if (auto node = autograd::make_node<LambdaBackward>(a, b)) {
    node->record("LinalgSolveTriangularBackward0", {x}, {a}, {x},
                 [upper, left, unit](const TensorList& g, const TensorList& s) -> TensorList {
                   Tensor gb = solve_triangular_core(mH(s[0]), g[0], !upper, left, unit);
                   Tensor ga = left ? neg(matmul(gb, mH(s[1]))) : neg(matmul(mH(s[1]), gb));
                   ga = upper ? triu(ga, unit ? 1 : 0) : tril(ga, unit ? -1 : 0);
                   return {ga, gb};
                 });
  }
  return x;
}

// Pivots (*, k) must be getrf's: 1-based row numbers in [1, m].
void check_pivots(const Tensor& pivots, int64_t m, const char* what) {
  Tensor p = contiguous(pivots);
  const int* d = p.data<int>();
  for (int64_t i = 0, e = p.numel(); i < e; ++i) EMBER_CHECK(d[i] >= 1 && d[i] <= m, what);
}

// The permutation matrices P (*, m, m) of getrf's sequential row swaps (1-based), A = P L U.
Tensor pivots_to_p(const Tensor& pivots, int64_t m, ScalarType dt) {
  autograd::NoGradGuard g;
  Shape batch(pivots.sizes().begin(), pivots.sizes().end() - 1);
  int64_t k = pivots.size(-1), nb = nbatch(batch);
  Tensor piv = contiguous(pivots);
  Tensor p = zeros(with(batch, {m, m}), dt);
  std::vector<int64_t> perm(static_cast<size_t>(m));
  dispatch_fc(dt, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < nb; ++i) {
      for (int64_t r = 0; r < m; ++r) perm[r] = r;
      const int* pv = piv.data<int>() + i * k;
      for (int64_t j = 0; j < k; ++j) std::swap(perm[j], perm[pv[j] - 1]);
      T* P = p.data<T>() + i * m * m;
      for (int64_t r = 0; r < m; ++r) P[perm[r] * m + r] = T(1);  // (P^T A)[r] = A[perm[r]]
    }
  });
  return p;
}

// Square A = P L U: with M = L^{-1} P^T dA U^{-1}, dL = L tril(M, -1) and dU = triu(M) U, so
// P^T gA = L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}.
Tensor lu_square_backward(const Tensor& gl, const Tensor& gu, const Tensor& l, const Tensor& u) {
  Tensor x = add(tril(matmul(mH(l), gl), -1), triu(matmul(gu, mH(u))));
  Tensor y = solve_triangular_core(mH(u), x, false, false, false);  // x U^{-H}
  return solve_triangular_core(mH(l), y, true, true, true);         // L^{-H} y
}

// P^T gA for A = P L U (L m x k unit lower, U k x n upper). Wide (m < n, U = [U1 U2]): U2 = L^{-1} P^T A2
// adds -L^{-H} gU2 U2^H to gL and gives gA2 = P L^{-H} gU2. Tall (m > n, L = [L1; L2]): L2 = (P^T A)_2 U^{-1}
// adds -L2^H gL2 U^{-H} to gU and gives (P^T gA)_2 = gL2 U^{-H}. The square part does the rest.
Tensor lu_backward(const Tensor& gl, const Tensor& gu, const Tensor& l, const Tensor& u) {
  int64_t m = l.size(-2), n = u.size(-1);
  if (m == n) return lu_square_backward(gl, gu, l, u);
  if (m < n) {
    Tensor u1 = narrow(u, -1, 0, m), u2 = narrow(u, -1, m, n - m);
    Tensor gu1 = narrow(gu, -1, 0, m), gu2 = narrow(gu, -1, m, n - m);
    Tensor gl2 = sub(gl, solve_triangular_core(mH(l), matmul(gu2, mH(u2)), true, true, true));
    return cat({lu_square_backward(gl2, gu1, l, u1), solve_triangular_core(mH(l), gu2, true, true, true)}, -1);
  }
  Tensor l1 = narrow(l, -2, 0, n), l2 = narrow(l, -2, n, m - n);
  Tensor gl1 = narrow(gl, -2, 0, n), gl2 = narrow(gl, -2, n, m - n);
  Tensor gu2 = sub(gu, solve_triangular_core(mH(u), matmul(mH(l2), gl2), false, false, false));
  return cat({lu_square_backward(gl1, gu2, l1, u), solve_triangular_core(mH(u), gl2, false, false, false)}, -2);
}

// L (m x k, unit diagonal) and U (k x n) of a compact LU, as ember ops (differentiable in lu).
std::pair<Tensor, Tensor> lu_parts(const Tensor& lu) {
  int64_t m = lu.size(-2), n = lu.size(-1), k = std::min(m, n);
  Tensor l = add(tril(narrow(lu, -1, 0, k), -1), eye(m, k, lu.dtype()));
  return {l, triu(narrow(lu, -2, 0, k))};
}
}  // namespace

Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  EMBER_CHECK(a.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(b.dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  int64_t n = a.size(-1);
  EMBER_CHECK(a.size(-2) == n, op, ": A must be batches of square matrices, but they are ", a.size(-2), " by ", n,
              " matrices");
  EMBER_CHECK((left ? b.size(-2) : b.size(-1)) == n, op, ": Incompatible shapes of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", b.size(-2), "x", b.size(-1), ")");
  check_float(a, "triangular_solve_cpu", true, true);
  Tensor A = a, B = to_dtype(b, a.dtype());  // B takes A's dtype, as torch (no promotion)
  Shape batch = broadcast_shapes(batch_shape(a), batch_shape(b), op);
  return solve_triangular_core(expand(A, with(batch, {n, n})), expand(B, with(batch, {b.size(-2), b.size(-1)})), upper,
                               left, unitriangular);
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& a, bool pivot, bool check_errors,
                                                       const std::string& op) {
  EMBER_CHECK(a.dim() >= 2, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: ", a.shape_str(),
              " instead");
  check_float(a, "lu_cpu", true, true);
  EMBER_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  Shape batch = batch_shape(a);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), nb = nbatch(batch);
  Tensor lu = fortran_copy(a);
  Tensor piv = zeros(with(batch, {k}), ScalarType::Int32);
  Tensor info = zeros(batch, ScalarType::Int32);
  if (k > 0)
    dispatch_fc(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < nb; ++i) {
        int inf = 0;
        Lapack<T>::getrf(static_cast<int>(m), static_cast<int>(n), lu.data<T>() + i * m * n, static_cast<int>(m),
                         piv.data<int>() + i * k, &inf);
        info.data<int>()[i] = inf;
      }
    });
  if (check_errors)
    for (int64_t i = 0; i < nb; ++i) {
      int inf = info.data<int>()[i];
      EMBER_CHECK(inf <= 0, op, ": U[", inf, ",", inf,
                  "] is zero and using it on lu_solve would result in a division by zero. If you still want to "
                  "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
    }
  if (auto node = autograd::make_node<LambdaBackward>(a)) {
    node->record("LinalgLuFactorExBackward0", {lu}, {piv}, {lu},
                 [](const TensorList& g, const TensorList& s) -> TensorList {
                   const Tensor& lu = s[1];
                   int64_t m = lu.size(-2), n = lu.size(-1), k = std::min(m, n);
                   auto [l, u] = lu_parts(lu);
                   Tensor gl = tril(narrow(g[0], -1, 0, k), -1), gu = triu(narrow(g[0], -2, 0, k));
                   return {matmul(pivots_to_p(s[0], m, lu.dtype()), lu_backward(gl, gu, l, u))};
                 });
  }
  return {lu, piv, info};
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& lu, const Tensor& pivots, bool unpack_data,
                                             bool unpack_pivots) {
  EMBER_CHECK(lu.dim() >= 2, "torch.lu_unpack: LU_data must have at least 2 dimensions, but got size ", lu.shape_str());
  check_float(lu, "lu_unpack", true, true);
  EMBER_CHECK(pivots.dtype() == ScalarType::Int32,
              "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\nNote: this "
              "function is intended to be used with the output produced by torch.linalg.lu_factor");
  int64_t m = lu.size(-2), n = lu.size(-1), k = std::min(m, n);
  Tensor none = empty({0}, lu.dtype());
  Tensor l = none, u = none, p = none;
  if (unpack_data) std::tie(l, u) = lu_parts(lu);
  if (unpack_pivots) {
    EMBER_CHECK(pivots.dim() >= 1 && pivots.size(-1) == k, "torch.lu_unpack: LU_pivots must have min(m, n) = ", k,
                " entries per matrix, but got shape ", pivots.shape_str());
    check_pivots(pivots, m,
                 "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly pass the "
                 "result of lu_factor?");
    // The pivots' batch broadcasts against LU's, as torch.
    Shape batch =
        broadcast_shapes(batch_shape(lu), Shape(pivots.sizes().begin(), pivots.sizes().end() - 1), "torch.lu_unpack");
    p = pivots_to_p(expand(pivots, with(batch, {k})), m, lu.dtype());
  }
  return {p, l, u};
}

Tensor linalg_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  EMBER_CHECK(lu.dim() >= 2, "torch.linalg.lu_solve: The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(b.dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  int64_t n = lu.size(-1);
  EMBER_CHECK(lu.size(-2) == n, "torch.linalg.lu_solve: A must be batches of square matrices, but they are ",
              lu.size(-2), " by ", n, " matrices");
  check_float(lu, "torch.linalg.lu_solve", false, true);
  EMBER_CHECK(lu.dtype() == b.dtype(), op, ": Expected LU and B to have the same dtype, but found LU of type ",
              dtype_name(lu.dtype()), " and B of type ", dtype_name(b.dtype()), " instead");
  EMBER_CHECK(pivots.dtype() == ScalarType::Int32, op, ": pivots should be a Tensor of scalar type torch.int32");
  EMBER_CHECK(pivots.dim() >= 1 && pivots.size(-1) == n, op,
              ": Number of pivots per batch should be same as the dimension of the matrix");
  EMBER_CHECK(Shape(pivots.sizes().begin(), pivots.sizes().end() - 1) == batch_shape(lu), op,
              ": Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape ",
              pivots.shape_str(), " instead");
  EMBER_CHECK((left ? b.size(-2) : b.size(-1)) == n, op, ": Incompatible shapes of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", b.size(-2), "x", b.size(-1), ")");
  check_pivots(pivots, n, "linalg.lu_solve: pivots must be between 1 and LU.size(-2) inclusive");
  if (!left) return mH(linalg_lu_solve(lu, pivots, mH(b), true, !adjoint));
  if (autograd::needs_history({&lu, &b})) {
    // A = P L U with L the unit lower and U the upper triangle of lu: two triangular solves, differentiable.
    Tensor p = pivots_to_p(pivots, n, lu.dtype());
    if (!adjoint) {
      Tensor y = linalg_solve_triangular(lu, matmul(mT(p), b), false, true, true);
      return linalg_solve_triangular(lu, y, true, true, false);
    }
    Tensor y = linalg_solve_triangular(mH(lu), b, false, true, false);       // U^H y = B
    return matmul(p, linalg_solve_triangular(mH(lu), y, true, true, true));  // L^H z = y, X = P z
  }
  Shape batch = broadcast_shapes(batch_shape(lu), batch_shape(b), op);
  int64_t k = b.size(-1), nb = nbatch(batch);
  Tensor lue, pe, x;
  {
    autograd::NoGradGuard g;
    lue = fortran_copy(expand(lu, with(batch, {n, n})));
    pe = contiguous(expand(pivots, with(batch, {n})));
    x = fortran_copy(expand(b, with(batch, {n, k})));
  }
  if (n == 0 || k == 0 || nb == 0) return x;
  SerialBlas serial(n * n * k < (int64_t{1} << 18));  // Note [small getrs]
  dispatch_fc(lu.dtype(), [&](auto tag) {
    using T = decltype(tag);
    char tr = !adjoint ? 'N' : (is_complex(lu.dtype()) ? 'C' : 'T');
    for (int64_t i = 0; i < nb; ++i) {
      int inf = 0;
      Lapack<T>::getrs_t(tr, static_cast<int>(n), static_cast<int>(k), lue.data<T>() + i * n * n, static_cast<int>(n),
                         pe.data<int>() + i * n, x.data<T>() + i * n * k, static_cast<int>(n), &inf);
    }
  });
  return x;
}

}  // namespace ember
