// Conversions of contiguous runs between the 16-bit floats and float/double: the hot pairs of
// copy_ / to(dtype) (autocast casts, .half(), .float()). Compiled once per ISA level (Note
// [Multi-ISA kernels] in isa.h): at the AVX2 and AVX-512 levels Half goes through the F16C
// instructions, 8 at a time (the baseline has no F16C: its bit-twiddling Half conversion in
// core/half.h ran 5-6x torch's time). Every level gives the same bits as core/half.h.
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// Whether convert_run handles dst <- src.
inline bool convert_run_supported(ScalarType dst, ScalarType src) {
  auto sixteen = [](ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; };
  auto wide = [](ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float64; };
  return dst != src && ((sixteen(dst) && (wide(src) || sixteen(src))) || (sixteen(src) && wide(dst)));
}

// dst[i] = src[i] converted, for i < n (contiguous runs; a pair convert_run_supported accepts).
EMBER_DECLARE_ISA_KERNEL(void, convert_run, (ScalarType dst_t, ScalarType src_t, void* dst, const void* src, int64_t n))
inline void convert_run(ScalarType dst_t, ScalarType src_t, void* dst, const void* src, int64_t n) {
  EMBER_ISA_SELECT(convert_run)(dst_t, src_t, dst, src, n);
}

}  // namespace ember::cpu
