// Fused scaled-dot-product attention on the BLAS (ops/nn_attention.cpp decides shapes and
// records autograd). Note [Fused attention]: per (batch, block of query rows) the scores
// S = scale * Q K^T are one GEMM into a block-sized buffer, masked and soft-maxed in place, and
// O = P V is a second GEMM; only the row log-sum-exp is kept (N, L). The backward recomputes
// each block's P from it (flash attention's recomputation, with whole key rows per block), so
// neither pass ever holds the (L, S) score matrix of a whole batch entry.
#pragma once
#include <cstdint>
#include <vector>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// q (N, L, E), k (N, S, E), v (N, S, Ev), out (N, L, Ev), lse (N, L): contiguous, float or double.
struct AttentionGeometry {
  int64_t N = 1, L = 1, S = 1, E = 1, Ev = 1;
  double scale = 1;
  bool causal = false;  // query i sees keys j <= i
  // Optional mask (element strides): bool (true = may attend) or float (added to the scores, of
  // the q dtype); batch entry n's mask starts at mask_offset[n].
  enum class Mask { None, Bool, Float } mask_kind = Mask::None;
  const void* mask = nullptr;
  std::vector<int64_t> mask_offset;
  int64_t mask_row_stride = 0, mask_col_stride = 0;
};

// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h): the row exp loops vectorize.
EMBER_DECLARE_ISA_KERNEL(void, attention_forward_kernel,
                         (ScalarType dtype, const void* q, const void* k, const void* v, void* out, void* lse,
                          const AttentionGeometry& g))
EMBER_DECLARE_ISA_KERNEL(void, attention_backward_kernel,
                         (ScalarType dtype, const void* q, const void* k, const void* v, const void* out,
                          const void* dout, const void* lse, void* dq, void* dk, void* dv, const AttentionGeometry& g))

inline void attention_forward(ScalarType dtype, const void* q, const void* k, const void* v, void* out, void* lse,
                              const AttentionGeometry& g) {
  EMBER_ISA_SELECT(attention_forward_kernel)(dtype, q, k, v, out, lse, g);
}
// dq, dk, dv (shaped as q, k, v) from dout; rows with nothing to attend get zero gradients.
inline void attention_backward(ScalarType dtype, const void* q, const void* k, const void* v, const void* out,
                               const void* dout, const void* lse, void* dq, void* dk, void* dv,
                               const AttentionGeometry& g) {
  EMBER_ISA_SELECT(attention_backward_kernel)(dtype, q, k, v, out, dout, lse, dq, dk, dv, g);
}

}  // namespace ember::cpu
