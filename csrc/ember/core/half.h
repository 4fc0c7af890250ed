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

  static uint16_t from_float(float f) {
    uint32_t u = detail::f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to inf
    if (abs < 0x38800000u) {                   // subnormal half (or zero): round to nearest even in float math
      float a = detail::bits_f32(abs) + 0.5f;  // 0.5 = 2^-1 shifts the mantissa so ulp(half sub)=1 bit
      return static_cast<uint16_t>(sign | (detail::f32_bits(a) - 0x3f000000u));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return static_cast<uint16_t>(sign | (abs >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return detail::bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
      return sign ? -v : v;
    }
    return detail::bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
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
