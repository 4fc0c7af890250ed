// Raw GEMM into existing memory, for fused layers that run many small products in a loop (the
// recurrent layers of ops/nn_rnn.cpp, on BLAS past the panel kernel's batch sizes).
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// One single-threaded BLAS product on raw row-major float32/float64 memory (dt): c (m x n, rows ldc
// apart) = a' @ b' (accumulate: c += a' @ b'), where a' is a (m x k, rows lda apart) or, with
// trans_a, the transpose of a (k x m); b' likewise. The fixed pieces of a fused layer's parallel
// step call it, from inside a parallel region or not: the same bits either way.
void gemm_raw_one_thread(ScalarType dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                         int64_t lda, const void* b, int64_t ldb, bool accumulate, void* c, int64_t ldc);

// torch.mm / torch.bmm with out= (libtorch's at::mm_out / at::bmm_out): out is resized to the
// product's shape and, when contiguous and apart from a and b, written in place (no fresh result
// copied in); the errors of mm/bmm, then torch's out= errors (autograd, dtype).
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b);

}  // namespace ember
