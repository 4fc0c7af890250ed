// Conversions of contiguous runs for the hot pairs of copy_ / to(dtype): between the 16-bit
// floats and float/double (autocast casts, .half(), .float()), and from float/double to the
// integer types (.long(), .to(uint8)). Compiled once per ISA level (Note [Multi-ISA kernels] in
// isa.h): at the AVX2 and AVX-512 levels Half goes through the F16C instructions and floats to
// integers through the truncating conversion instructions, 8 at a time (the baseline's Half
// conversion ran 5-6x torch's time, float to uint8 2.3x). Every level gives the same bits.
#pragma once
#include <cstdint>
#include <limits>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// Note [Float to int conversion]
// C++ leaves float -> int undefined when the value does not fit (NaN, inf, 1e10 -> int32).
// PyTorch on x86 gives what the truncating conversion instructions give: the most negative
// value of the 32-bit (int8/int16/int32 targets) or 64-bit (uint8, int64) conversion, whose low
// bits are then kept. These helpers spell that out so results are the same on every machine.
inline int32_t trunc_i32(double v) {
  return (v > -2147483649.0 && v < 2147483648.0) ? static_cast<int32_t>(v) : std::numeric_limits<int32_t>::min();
}
inline int64_t trunc_i64(double v) {
  return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? static_cast<int64_t>(v)
                                                                    : std::numeric_limits<int64_t>::min();
}

// Whether convert_run handles dst <- src.
inline bool convert_run_supported(ScalarType dst, ScalarType src) {
  auto sixteen = [](ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; };
  auto wide = [](ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float64; };
  auto integer = [](ScalarType t) {
    return t == ScalarType::Int8 || t == ScalarType::Int16 || t == ScalarType::Int32 || t == ScalarType::Int64;
  };
  return dst != src && ((sixteen(dst) && (wide(src) || sixteen(src))) || (sixteen(src) && wide(dst)) ||
                        (wide(src) && integer(dst)) || (src == ScalarType::Float32 && dst == ScalarType::UInt8));
}

// dst[i] = src[i] converted, for i < n (contiguous runs; a pair convert_run_supported accepts).
EMBER_DECLARE_ISA_KERNEL(void, convert_run, (ScalarType dst_t, ScalarType src_t, void* dst, const void* src, int64_t n))
inline void convert_run(ScalarType dst_t, ScalarType src_t, void* dst, const void* src, int64_t n) {
  EMBER_ISA_SELECT(convert_run)(dst_t, src_t, dst, src, n);
}

// o[j] = last[-j] for j in [j0, j1), elements of `bytes` bytes (1, 2, 4 or 8): a row copied
// backwards (flip), 32 bytes at a time through one permute at the AVX2 and AVX-512 levels.
EMBER_DECLARE_ISA_KERNEL(void, reverse_run, (size_t bytes, void* o, const void* last, int64_t j0, int64_t j1))
inline void reverse_run(size_t bytes, void* o, const void* last, int64_t j0, int64_t j1) {
  EMBER_ISA_SELECT(reverse_run)(bytes, o, last, j0, j1);
}

}  // namespace ember::cpu
