// Index kernels compiled per ISA level, for ops/index.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// x[mask] for a 1-element-wide row: copies the elements of `src` (n of them, `element_size`
// bytes each) whose mask byte m[i] is 1 to `dst`, chunk j (elements [j * cs, (j + 1) * cs))
// writing from output index start[j]. False, with nothing written, for an element size other
// than 1, 2, 4, 8 or 16.
EMBER_DECLARE_ISA_KERNEL(bool, compress_rows_kernel,
                         (size_t element_size, const uint8_t* m, const char* src, char* dst,
                          const std::vector<int64_t>& start, int64_t cs, int64_t n))
inline bool compress_rows_kernel(size_t element_size, const uint8_t* m, const char* src, char* dst,
                                 const std::vector<int64_t>& start, int64_t cs, int64_t n) {
  return EMBER_ISA_SELECT(compress_rows_kernel)(element_size, m, src, dst, start, cs, n);
}

// Note [Fused embedding bags] (ops/nn_embedding.cpp): out[b] = the sum (mean: divided by count[b])
// of rows ip[j] of w (D values each, type dt), times pp[j] when given, over entries j of bag b in
// [offs[b], the next offset or n), skipping entries equal to pad; for bags [b0, b1).
EMBER_DECLARE_ISA_KERNEL(void, embedding_bag_sums,
                         (ScalarType dt, int64_t b0, int64_t b1, const int64_t* offs, int64_t n_offs, int64_t n,
                          int64_t pad, const int64_t* ip, const void* w, const void* pp, const double* count, bool mean,
                          int64_t D, void* out))

}  // namespace ember::cpu
