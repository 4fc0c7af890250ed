// Index kernels compiled per ISA level, for ops/index.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

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

}  // namespace ember::cpu
