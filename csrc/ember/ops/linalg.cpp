#include <cblas.h>

#include <sstream>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/ops/ops.h"

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

// C[m,n] = A[m,k] @ B[k,n] for one matrix each; a, b, c point at element [0,0] with given strides.
template <typename T>
void gemm_one(const T* a, int64_t as0, int64_t as1, const T* b, int64_t bs0, int64_t bs1, T* c, int64_t m, int64_t n,
              int64_t k) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto la = blas_layout(m, k, as0, as1), lb = blas_layout(k, n, bs0, bs1);
    if (la && lb && m > 0 && n > 0 && k > 0) {
      auto ta = la->trans ? CblasTrans : CblasNoTrans, tb = lb->trans ? CblasTrans : CblasNoTrans;
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, la->ld, b, lb->ld, 0.0f, c, n);
      else
        cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, la->ld, b, lb->ld, 0.0, c, n);
      return;
    }
  }
  using A = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      A acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += static_cast<A>(static_cast<opmath_t<T>>(a[i * as0 + p * as1])) *
               static_cast<A>(static_cast<opmath_t<T>>(b[p * bs0 + j * bs1]));
      if constexpr (std::is_same_v<T, bool>)
        c[i * n + j] = acc != 0;
      else
        c[i * n + j] = static_cast<T>(static_cast<opmath_t<T>>(acc));
    }
}

// a: [B, m, k], b: [B, k, n] (any strides) -> contiguous [B, m, n].
Tensor batched_mm(const Tensor& a, const Tensor& b) {
  int64_t B = a.sizes()[0], m = a.sizes()[1], k = a.sizes()[2], n = b.sizes()[2];
  Tensor out = empty({B, m, n}, a.dtype());
  if (out.numel() == 0) return out;
  if (k == 0) return fill_(out, 0);
  EMBER_DISPATCH_ALL(a.dtype(), "matmul", [&] {
    const scalar_t* pa = a.data<scalar_t>();
    const scalar_t* pb = b.data<scalar_t>();
    scalar_t* pc = out.data<scalar_t>();
    auto one = [&](int64_t i) {
      gemm_one<scalar_t>(pa + i * a.strides()[0], a.strides()[1], a.strides()[2], pb + i * b.strides()[0],
                         b.strides()[1], b.strides()[2], pc + i * m * n, m, n, k);
    };
    // Small matrices: one thread per matrix (BLAS runs single-threaded inside a parallel region).
    if (B > 1 && m * n * k < (1 << 21)) {
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

Tensor mm(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 2, "self must be a matrix");
  EMBER_CHECK(b.dim() == 2, "mat2 must be a matrix");
  EMBER_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", dims_str(a), " and ",
              dims_str(b), ")");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ", dtype_name(a.dtype()),
              " != ", dtype_name(b.dtype()));
  Tensor r;
  {
    autograd::NoGradGuard raw;
    r = reshape(batched_mm(unsqueeze(a, 0), unsqueeze(b, 0)), Shape{a.sizes()[0], b.sizes()[1]});
  }
  if (auto n = autograd::make_node<autograd::MmBackward0>(a, b)) {
    n->self = autograd::SavedVariable(a, false);
    n->mat2 = autograd::SavedVariable(b, false);
    autograd::set_history(r, n);
  }
  return r;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  EMBER_CHECK(a.sizes()[0] == b.sizes()[0], "batch1 and batch2 must have same number of batches, got ", a.sizes()[0],
              " and ", b.sizes()[0]);
  EMBER_CHECK(a.sizes()[2] == b.sizes()[1], "Expected size for first two dimensions of batch2 tensor to be: [",
              a.sizes()[0], ", ", a.sizes()[2], "] but got: [", b.sizes()[0], ", ", b.sizes()[1], "].");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected scalar type ", dtype_name(a.dtype()), " but found ",
              dtype_name(b.dtype()));
  Tensor r = batched_mm(a, b);
  if (auto n = autograd::make_node<autograd::BmmBackward0>(a, b)) {
    n->self = autograd::SavedVariable(a, false);
    n->mat2 = autograd::SavedVariable(b, false);
    autograd::set_history(r, n);
  }
  return r;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db,
              "D");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ", dtype_name(a.dtype()),
              " != ", dtype_name(b.dtype()));
  if (da == 1 && db == 1) {
    EMBER_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
                b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
                " elements respectively");
    return reshape(mm(unsqueeze(a, 0), unsqueeze(b, 1)), Shape{});
  }
  if (da == 2 && db == 1) return reshape(mm(a, unsqueeze(b, 1)), Shape{a.sizes()[0]});
  if (da == 1 && db == 2) return reshape(mm(unsqueeze(a, 0), b), Shape{b.sizes()[1]});
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
  Tensor A3 = reshape(expand(A, ea), Shape{nb, m, k});
  Tensor B3 = reshape(expand(Bt, eb), Shape{nb, k, n});
  Tensor C = bmm(A3, B3);
  Shape out = batch;
  if (da > 1) out.push_back(m);
  if (db > 1) out.push_back(n);
  return reshape(C, out);
}

}  // namespace ember
