// 16-bit floating types stored as bits; arithmetic happens in float.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>

namespace ember {

namespace detail {
inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace detail

struct Half {
  uint16_t x;  // no initializer: keeps the type trivial (memcpy-able)
  Half() = default;
  Half(float f) : x(from_float(f)) {}  // NOLINT: implicit like a builtin float type
  operator float() const { return to_float(x); }

  // Both conversions are branch-free (selects only) so that loops over Half vectorize; they give
  // the bits the IEEE conversion (and the F16C instructions of cpu/convert_kernels.cpp) gives:
  // round to nearest even, overflow to inf, NaN as sign | 0x7e00 one way and quiet the other.
  static uint16_t from_float(float f) {
    uint32_t u = detail::f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    // a normal half: rebias the exponent (-112 << 23) and round to nearest even in integers
    uint32_t normal = (abs + 0xc8000fffu + ((abs >> 13) & 1u)) >> 13;
    // a subnormal half (or zero): adding 0.5 = 2^-1 puts ulp(subnormal half) at bit 0, so the
    // float addition does the rounding
    uint32_t subnormal = detail::f32_bits(detail::bits_f32(abs) + 0.5f) - 0x3f000000u;
    uint32_t r = abs < 0x38800000u ? subnormal : normal;
    r = abs >= 0x477ff000u ? 0x7c00u : r;  // overflows to inf (and inf)
    r = abs > 0x7f800000u ? 0x7e00u : r;   // NaN
    return static_cast<uint16_t>(sign | r);
  }
  static float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t bits = h & 0x7fffu;
    uint32_t normal = (bits << 13) + 0x38000000u;  // exponent + 112
    // inf / NaN: exponent 255, a NaN made quiet
    uint32_t special = (normal + 0x38000000u) | (bits > 0x7c00u ? 0x400000u : 0u);
    float subnormal = static_cast<float>(static_cast<int32_t>(bits)) * 5.9604644775390625e-8f;  // 2^-24
    uint32_t r = bits < 0x400u ? detail::f32_bits(subnormal) : (bits >= 0x7c00u ? special : normal);
    return detail::bits_f32(sign | r);
  }
};

struct BFloat16 {
  uint16_t x;
  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}  // NOLINT
  operator float() const { return detail::bits_f32(static_cast<uint32_t>(x) << 16); }

  static uint16_t from_float(float f) {
    uint32_t u = detail::f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);                     // round to nearest even
    return static_cast<uint16_t>(u >> 16);
  }
};

}  // namespace ember
