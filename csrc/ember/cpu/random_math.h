// Transforms from random words to distributions: Box-Muller normals and the log/sin/cos it needs,
// as scalar code plus an AVX2+FMA path chosen at run time.
//
// Note [Box-Muller groups]: normals are made in groups of 8 pairs, pair p from words (2p, 2p+1)
// giving elements (2p, 2p+1). Callers always pass whole groups (the word buffer is padded), so an
// element is computed by the same code path wherever it sits; this keeps randn(n)[:m] == randn(m)
// bit for bit, and results independent of threads.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

#include "ember/core/philox.h"

namespace ember::cpu {

constexpr int64_t kNormalGroup = 8;  // pairs per Box-Muller group

// Natural log for x in [2^-24, 1] (normal floats): Cephes logf, about 1 ulp.
inline float log_f(float x) {
  uint32_t i = std::bit_cast<uint32_t>(x);
  int32_t e = int32_t(i >> 23) - 126;  // x = m * 2^e with m in [0.5, 1)
  float m = std::bit_cast<float>((i & 0x007fffffu) | 0x3f000000u);
  int32_t small = m < 0.70710678f;  // arithmetic rather than branches, so loops vectorize
  e -= small;
  float f = m + float(small) * m - 1.0f;  // 2m - 1 or m - 1: in [sqrt(.5) - 1, sqrt(2) - 1)
  float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y *= f * z;
  float fe = float(e);
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  return f + y + 0.693359375f * fe;
}

// sin and cos of 2*pi*u for u in [0, 1). The argument is a fraction of a turn, so reducing it to
// [-pi/4, pi/4] plus a quadrant is exact; then Cephes' minimax polynomials.
template <typename T>
inline void sincos_2pi(T u, T& s, T& c) {
  T t = u * T(4);
  T q = std::floor(t + T(0.5));
  T r = (t - q) * T(1.57079632679489661923);
  int qi = int(q) & 3;
  T z = r * r, sr, cr;
  if constexpr (std::is_same_v<T, float>) {
    sr = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
    cr = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
  } else {
    T ps = 1.58962301576546568060e-10;
    ps = ps * z - 2.50507477628578072866e-8;
    ps = ps * z + 2.75573136213857245213e-6;
    ps = ps * z - 1.98412698295895385996e-4;
    ps = ps * z + 8.33333333332211858878e-3;
    ps = ps * z - 1.66666666666666307295e-1;
    sr = r + r * z * ps;
    T pc = -1.13585365213876817300e-11;
    pc = pc * z + 2.08757008419747316778e-9;
    pc = pc * z - 2.75573141792967388112e-7;
    pc = pc * z + 2.48015872888517045348e-5;
    pc = pc * z - 1.38888888888730564116e-3;
    pc = pc * z + 4.16666666666665929218e-2;
    cr = 1.0 - 0.5 * z + z * z * pc;
  }
  T ss = (qi & 1) ? cr : sr, cc = (qi & 1) ? sr : cr;  // rotate by qi quarter turns
  s = (qi & 2) ? -ss : ss;
  c = ((qi + 1) & 2) ? -cc : cc;
}

namespace detail {

inline void box_muller_f32_scalar(const uint32_t* w, int64_t pairs, float* z) {
  for (int64_t p = 0; p < pairs; ++p) {
    float u1 = float(int32_t(w[2 * p] >> 8) + 1) * 0x1p-24f;  // (0, 1]
    float u2 = float(int32_t(w[2 * p + 1] >> 8)) * 0x1p-24f;  // [0, 1)
    float r = std::sqrt(-2.0f * log_f(u1)), s, c;
    sincos_2pi(u2, s, c);
    z[2 * p] = r * c;
    z[2 * p + 1] = r * s;
  }
}

#ifdef EMBER_X86_SIMD
__attribute__((target("avx2,fma"))) inline __m256 poly(__m256 y, __m256 x, float c) {
  return _mm256_fmadd_ps(y, x, _mm256_set1_ps(c));
}

// The scalar algorithm above, eight pairs per step.
__attribute__((target("avx2,fma"))) inline void box_muller_f32_avx2(const uint32_t* w, int64_t pairs, float* z) {
  const __m256i mant = _mm256_set1_epi32(0x007fffff), half_exp = _mm256_set1_epi32(0x3f000000);
  const __m256i one_i = _mm256_set1_epi32(1), three_i = _mm256_set1_epi32(3), two_i = _mm256_set1_epi32(2);
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t p = 0; p < pairs; p += 8) {
    // Split 16 words into the u1 words (even) and u2 words (odd) of pairs p..p+7, in order.
    __m256 a = _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2 * p)));
    __m256 b = _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2 * p + 8)));
    __m256i ev = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(a, b, 0x88)), 0xD8);
    __m256i od = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8);
    __m256 u1 =
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_srli_epi32(ev, 8), one_i)), _mm256_set1_ps(0x1p-24f));
    __m256 u2 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(od, 8)), _mm256_set1_ps(0x1p-24f));

    // r = sqrt(-2 log u1)
    __m256i bits = _mm256_castps_si256(u1);
    __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126));
    __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, mant), half_exp));
    __m256 small = _mm256_cmp_ps(m, _mm256_set1_ps(0.70710678f), _CMP_LT_OQ);
    e = _mm256_add_epi32(e, _mm256_castps_si256(small));  // the mask is -1 where small
    __m256 f = _mm256_sub_ps(_mm256_add_ps(m, _mm256_and_ps(small, m)), one);
    __m256 zz = _mm256_mul_ps(f, f);
    __m256 y = _mm256_set1_ps(7.0376836292e-2f);
    y = poly(y, f, -1.1514610310e-1f);
    y = poly(y, f, 1.1676998740e-1f);
    y = poly(y, f, -1.2420140846e-1f);
    y = poly(y, f, 1.4249322787e-1f);
    y = poly(y, f, -1.6668057665e-1f);
    y = poly(y, f, 2.0000714765e-1f);
    y = poly(y, f, -2.4999993993e-1f);
    y = poly(y, f, 3.3333331174e-1f);
    y = _mm256_mul_ps(y, _mm256_mul_ps(f, zz));
    __m256 fe = _mm256_cvtepi32_ps(e);
    y = _mm256_fmadd_ps(_mm256_set1_ps(-2.12194440e-4f), fe, y);
    y = _mm256_fmadd_ps(_mm256_set1_ps(-0.5f), zz, y);
    __m256 lg = _mm256_fmadd_ps(_mm256_set1_ps(0.693359375f), fe, _mm256_add_ps(f, y));
    __m256 r = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), lg));

    // sin, cos of 2 pi u2
    __m256 t = _mm256_mul_ps(u2, _mm256_set1_ps(4.0f));
    __m256 q = _mm256_floor_ps(_mm256_add_ps(t, _mm256_set1_ps(0.5f)));
    __m256 x = _mm256_mul_ps(_mm256_sub_ps(t, q), _mm256_set1_ps(1.57079632679489661923f));
    __m256i qi = _mm256_and_si256(_mm256_cvttps_epi32(q), three_i);
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 sp = _mm256_fmadd_ps(_mm256_set1_ps(-1.9515295891e-4f), x2, _mm256_set1_ps(8.3321608736e-3f));
    sp = poly(sp, x2, -1.6666654611e-1f);
    __m256 sr = _mm256_fmadd_ps(_mm256_mul_ps(sp, x2), x, x);
    __m256 cp = _mm256_fmadd_ps(_mm256_set1_ps(2.443315711809948e-5f), x2, _mm256_set1_ps(-1.388731625493765e-3f));
    cp = poly(cp, x2, 4.166664568298827e-2f);
    __m256 cr =
        _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(cp, x2), x2, _mm256_mul_ps(_mm256_set1_ps(-0.5f), x2)), one);
    __m256 swap = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(qi, one_i), one_i));
    __m256 ss = _mm256_blendv_ps(sr, cr, swap), cc = _mm256_blendv_ps(cr, sr, swap);
    __m256 s_sign = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(qi, two_i), 30));
    __m256 c_sign = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(_mm256_add_epi32(qi, one_i), two_i), 30));
    __m256 zs = _mm256_mul_ps(r, _mm256_xor_ps(ss, s_sign));
    __m256 zc = _mm256_mul_ps(r, _mm256_xor_ps(cc, c_sign));

    // Interleave back to (cos, sin) per pair.
    __m256 lo = _mm256_unpacklo_ps(zc, zs), hi = _mm256_unpackhi_ps(zc, zs);
    _mm256_storeu_ps(z + 2 * p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(z + 2 * p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
}
#endif

}  // namespace detail

// Standard normals z[2p], z[2p+1] for pairs p < round_up(pairs, kNormalGroup), each from the
// words w[2p] (radius) and w[2p+1] (angle). w and z must hold that many pairs.
inline void box_muller_f32(const uint32_t* w, int64_t pairs, float* z) {
  pairs = (pairs + kNormalGroup - 1) / kNormalGroup * kNormalGroup;
#ifdef EMBER_X86_SIMD
  if (ember::detail::cpu_has_avx2_fma()) return detail::box_muller_f32_avx2(w, pairs, z);
#endif
  detail::box_muller_f32_scalar(w, pairs, z);
}

// Double normals: pair p from the 64-bit words (w[4p], w[4p+1]) and (w[4p+2], w[4p+3]).
inline void box_muller_f64(const uint32_t* w, int64_t pairs, double* z) {
  for (int64_t p = 0; p < pairs; ++p) {
    uint64_t a = uint64_t(w[4 * p]) << 32 | w[4 * p + 1], b = uint64_t(w[4 * p + 2]) << 32 | w[4 * p + 3];
    double u1 = double((a >> 11) + 1) * 0x1p-53;  // (0, 1]
    double u2 = double(b >> 11) * 0x1p-53;        // [0, 1)
    double r = std::sqrt(-2.0 * std::log(u1)), s, c;
    sincos_2pi(u2, s, c);
    z[2 * p] = r * c;
    z[2 * p + 1] = r * s;
  }
}

}  // namespace ember::cpu
