// Small-GEMM kernels compiled per ISA level, for products too small or too often repeated for a
// BLAS call to pay: the recurrent products of fused layers (Note [Recurrent GEMM]) and tiny
// matrices of mm/bmm (Note [Tiny GEMM]). float32/float64 (dt).
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// c (m x n, rows ldc apart) = a (m x k, rows lda apart) @ b (accumulate: c += a @ b), where b comes
// packed: its columns in panels of panel_width(dt), each panel k rows of that width, contiguous,
// the last one zero-padded.
EMBER_DECLARE_ISA_KERNEL(void, panel_gemm,
                         (ScalarType dt, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                          const void* panels, void* c, int64_t ldc, bool accumulate))
// The panels' vector bytes at the level in use (64 at AVX-512, else 32); a panel is 3 vectors wide.
EMBER_DECLARE_ISA_KERNEL(int64_t, panel_vector_bytes, ())
inline int64_t panel_width(ScalarType dt) {
  return 3 * EMBER_ISA_SELECT(panel_vector_bytes)() / (dt == ScalarType::Float64 ? 8 : 4);
}

// c (m x n, contiguous rows) = a @ b for a with strides (as0, as1) and b with rows bs0 apart and
// contiguous columns; each output sums its k products in order.
EMBER_DECLARE_ISA_KERNEL(void, tiny_gemm,
                         (ScalarType dt, int64_t m, int64_t n, int64_t k, const void* a, int64_t as0, int64_t as1,
                          const void* b, int64_t bs0, void* c))

}  // namespace ember::cpu
