// Row loops for elementwise kernels, with contiguous and scalar-operand fast paths the compiler
// vectorizes. `f` takes and returns values in opmath_t (float for 16-bit floats).
#pragma once
#include <algorithm>

#include "ember/core/dispatch.h"
#include "ember/cpu/isa_check.h"  // Note [Multi-ISA kernels]
#include "ember/cpu/iter.h"

namespace ember {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

#if defined(__x86_64__) && ((defined(EMBER_ISA_LEVEL) && EMBER_ISA_LEVEL >= 1) || defined(__F16C__))
// F16C (the AVX2 and AVX-512 levels): eight Halfs as floats (exact; a NaN made quiet, as
// Half::to_float does), and eight floats as Halfs (as Half::from_float: nearest even, NaN ->
// sign | 0x7e00, where F16C would keep the payload).
#define EMBER_F16C_LANES 1
#include <immintrin.h>
inline __m256 half8_to_float(const Half* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline void float8_to_half(Half* p, __m256 v) {
  const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m128i mag_mask = _mm_set1_epi16(0x7fff);
  const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, mag_mask), _mm_set1_epi16(0x7c00));
  const __m128i canonical = _mm_or_si128(_mm_andnot_si128(mag_mask, h), _mm_set1_epi16(0x7e00));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm_blendv_epi8(h, canonical, nan));
}
#endif

#ifdef EMBER_AVX512_LANES
// 16 elements of T (float, float16 or bfloat16) as floats, and back: all 16, or the lanes of mask
// m. A bfloat16 is rounded as BFloat16(float) rounds (to nearest even; NaN -> 0x7fc0).
template <typename T>
inline __m512 load16(const T* p, __mmask16 m = 0xffff) {
  if constexpr (std::is_same_v<T, float>) {
    return m == 0xffff ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
  } else if constexpr (std::is_same_v<T, Half>) {  // exact; a NaN made quiet, as Half::to_float
    return _mm512_cvtph_ps(m == 0xffff ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                       : _mm256_maskz_loadu_epi16(m, p));
  } else {
    static_assert(std::is_same_v<T, BFloat16>);
    const __m256i h =
        m == 0xffff ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)) : _mm256_maskz_loadu_epi16(m, p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}
template <typename T>
inline void store16(T* p, __m512 v, __mmask16 m = 0xffff) {
  if constexpr (std::is_same_v<T, float>) {
    if (m == 0xffff)
      _mm512_storeu_ps(p, v);
    else
      _mm512_mask_storeu_ps(p, m, v);
  } else if constexpr (std::is_same_v<T, Half>) {  // as Half::from_float: nearest even, NaN -> sign | 0x7e00
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i mag_mask = _mm256_set1_epi16(0x7fff);
    const __mmask16 nan = _mm256_cmpgt_epi16_mask(_mm256_and_si256(h, mag_mask), _mm256_set1_epi16(0x7c00));
    const __m256i canonical = _mm256_or_si256(_mm256_andnot_si256(mag_mask, h), _mm256_set1_epi16(0x7e00));
    const __m256i r = _mm256_mask_blend_epi16(nan, h, canonical);
    if (m == 0xffff)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), r);
    else
      _mm256_mask_storeu_epi16(p, m, r);
  } else {
    static_assert(std::is_same_v<T, BFloat16>);
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    r = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r, _mm512_set1_epi32(0x7fc0));
    const __m256i h = _mm512_cvtepi32_epi16(r);
    if (m == 0xffff)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
    else
      _mm256_mask_storeu_epi16(p, m, h);
  }
}
inline __mmask16 tail_mask16(int64_t left) { return static_cast<__mmask16>((1u << left) - 1); }
#endif

#ifdef EMBER_F16C_LANES
// f on each of 8 floats in a register (f inlined and vectorized, so x and z stay in registers).
template <typename F>
__attribute__((always_inline)) inline __m256 map8(const F& f, __m256 v) {
  float x[8], z[8];
  _mm256_storeu_ps(x, v);
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) z[j] = f(x[j]);
  return _mm256_loadu_ps(z);
}
template <typename F>
__attribute__((always_inline)) inline __m256 map8(const F& f, __m256 u, __m256 v) {
  float x[8], y[8], z[8];
  _mm256_storeu_ps(x, u);
  _mm256_storeu_ps(y, v);
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) z[j] = f(x[j], y[j]);
  return _mm256_loadu_ps(z);
}
#endif
#ifdef EMBER_AVX512_LANES
inline __m256 low8(__m512 v) { return _mm512_castps512_ps256(v); }
inline __m256 high8(__m512 v) { return _mm512_extractf32x8_ps(v, 1); }
inline __m512 join8(__m256 lo, __m256 hi) { return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1); }
#endif

// A contiguous row of T as floats, and back (T: float, or a 16-bit float rounded as T(float)).
template <typename T>
void row_to_float(const T* x, float* y, int64_t n);
template <typename T>
void row_from_float(const float* x, T* y, int64_t n);

// Note [Half in float blocks]: elementwise loops over Half convert contiguous runs to float in
// blocks (F16C at the AVX2 and AVX-512 levels), run f over the float block, where it vectorizes
// as for float, and convert back: the element loop converted one Half at a time in scalar code
// (float16 add 7x torch's time). Each element gets the same value as in the element loop.
// With F16C, runs of Half results go 8 at a time through registers instead (map8; with AVX-512,
// 16 converted at once, as two halves of 8): float16 add 1.5 -> 0.8x torch's time in cache, 1.25 ->
// 1.0 from memory. (16 at a time through float[16] ran 3-5x slower: the 512-bit store reaches f's
// 256-bit loads without store forwarding.)
constexpr int64_t kHalfBlock = 256;
template <typename out_t, typename F>
void half_unary_run(out_t* o, const Half* a, int64_t n, const F& f_ref) {
  const F f = f_ref;  // Note [Loop closure copies]
  int64_t start = 0;
  if constexpr (std::is_same_v<out_t, Half>) {
#ifdef EMBER_AVX512_LANES
    for (; start + 16 <= n; start += 16) {
      const __m512 v = load16(a + start);
      store16(o + start, join8(map8(f, low8(v)), map8(f, high8(v))));
    }
#endif
#ifdef EMBER_F16C_LANES
    for (; start + 8 <= n; start += 8) float8_to_half(o + start, map8(f, half8_to_float(a + start)));
#endif
  }
  float x[kHalfBlock], y[kHalfBlock];
  for (int64_t k = start; k < n; k += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, n - k);
    row_to_float(a + k, x, len);
    if constexpr (std::is_same_v<out_t, Half>) {
      for (int64_t j = 0; j < len; ++j) y[j] = f(x[j]);
      row_from_float(y, o + k, len);
    } else {
      for (int64_t j = 0; j < len; ++j) o[k + j] = static_cast<out_t>(f(x[j]));
    }
  }
}
// a or b may be one value for the whole run (a_scalar / b_scalar).
template <typename out_t, typename F>
void half_binary_run(out_t* o, const Half* a, bool a_scalar, const Half* b, bool b_scalar, int64_t n, const F& f_ref) {
  const F f = f_ref;  // Note [Loop closure copies]
  int64_t start = 0;
  if constexpr (std::is_same_v<out_t, Half>) {
    // a one-value operand (a_scalar / b_scalar) is read once, and only then (an empty run's may be null)
    const float as = a_scalar ? static_cast<float>(*a) : 0.0f, bs = b_scalar ? static_cast<float>(*b) : 0.0f;
#ifdef EMBER_AVX512_LANES
    for (; start + 16 <= n; start += 16) {
      const __m512 va = a_scalar ? _mm512_set1_ps(as) : load16(a + start);
      const __m512 vb = b_scalar ? _mm512_set1_ps(bs) : load16(b + start);
      store16(o + start, join8(map8(f, low8(va), low8(vb)), map8(f, high8(va), high8(vb))));
    }
#endif
#ifdef EMBER_F16C_LANES
    for (; start + 8 <= n; start += 8) {
      const __m256 va = a_scalar ? _mm256_set1_ps(as) : half8_to_float(a + start);
      const __m256 vb = b_scalar ? _mm256_set1_ps(bs) : half8_to_float(b + start);
      float8_to_half(o + start, map8(f, va, vb));
    }
#endif
  }
  float x[kHalfBlock], y[kHalfBlock], z[kHalfBlock];
  if (a_scalar) std::fill(x, x + kHalfBlock, static_cast<float>(*a));
  if (b_scalar) std::fill(y, y + kHalfBlock, static_cast<float>(*b));
  for (int64_t k = start; k < n; k += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, n - k);
    if (!a_scalar) row_to_float(a + k, x, len);
    if (!b_scalar) row_to_float(b + k, y, len);
    if constexpr (std::is_same_v<out_t, Half>) {
      for (int64_t j = 0; j < len; ++j) z[j] = f(x[j], y[j]);
      row_from_float(z, o + k, len);
    } else {
      for (int64_t j = 0; j < len; ++j) o[k + j] = static_cast<out_t>(f(x[j], y[j]));
    }
  }
}

// Note [Loop closure copies]: each row loop works on its own copy of f. The row lambda is called
// out of line from TensorIter (baseline code), so through a reference f's captures (leaky_relu's
// slope, add's alpha) live in memory that every output store might overwrite: GCC reloaded them
// per element and left the loop scalar (leaky_relu: 9.7x torch's time). A local copy is registers.
// Note [Rows of short runs]: the element loops take rows of runs at once (for_each_2d): one
// call, one closure copy and one layout check per block of rows instead of per run, which short
// runs need (a bias [4096, 32] + [32] took 1.8x torch's time run by run).
template <typename out_t, typename in_t, typename F>
void unary_loop(const TensorIter& it, const F& f_ref) {
  using M = opmath_t<in_t>;
  it.for_each_2d([&f_ref](char** d, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
    const F f = f_ref;  // Note [Loop closure copies]
    const bool dense = s[0] == sizeof(out_t) && s[1] == sizeof(in_t);
    for (int64_t r = 0; r < rows; ++r) {
      char* d0 = d[0] + r * outer[0];
      const char* d1 = d[1] + r * outer[1];
      auto* o = reinterpret_cast<out_t*>(d0);
      auto* a = reinterpret_cast<const in_t*>(d1);
      if (dense) {
        if constexpr (std::is_same_v<in_t, Half>)
          half_unary_run(o, a, n, f);  // Note [Half in float blocks]
        else
          for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(load_as<M>(a + k)));
      } else {
        for (int64_t k = 0; k < n; ++k)
          *reinterpret_cast<out_t*>(d0 + k * s[0]) =
              static_cast<out_t>(f(load_as<M>(reinterpret_cast<const in_t*>(d1 + k * s[1]))));
      }
    }
  });
}

template <typename out_t, typename in_t, typename F>
void binary_loop(const TensorIter& it, const F& f_ref) {
  using M = opmath_t<in_t>;
  it.for_each_2d([&f_ref](char** d, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
    const F f = f_ref;  // Note [Loop closure copies] (and Note [Rows of short runs])
    constexpr int64_t so = sizeof(out_t), si = sizeof(in_t);
    // 0: all dense, 1: b one value per run, 2: a one value per run, 3: strided
    const int layout = s[0] != so                 ? 3
                       : s[1] == si && s[2] == si ? 0
                       : s[1] == si && s[2] == 0  ? 1
                       : s[1] == 0 && s[2] == si  ? 2
                                                  : 3;
    for (int64_t r = 0; r < rows; ++r) {
      char* d0 = d[0] + r * outer[0];
      const char* d1 = d[1] + r * outer[1];
      const char* d2 = d[2] + r * outer[2];
      auto* o = reinterpret_cast<out_t*>(d0);
      auto* a = reinterpret_cast<const in_t*>(d1);
      auto* b = reinterpret_cast<const in_t*>(d2);
      if constexpr (std::is_same_v<in_t, Half>) {  // Note [Half in float blocks]
        if (s[0] == so && (s[1] == si || s[1] == 0) && (s[2] == si || s[2] == 0)) {
          half_binary_run(o, a, s[1] == 0, b, s[2] == 0, n, f);
          continue;
        }
      }
      if (layout == 0) {
        for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(load_as<M>(a + k), load_as<M>(b + k)));
      } else if (layout == 1) {
        const M bv = load_as<M>(b);
        for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(load_as<M>(a + k), bv));
      } else if (layout == 2) {
        const M av = load_as<M>(a);
        for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(av, load_as<M>(b + k)));
      } else {
        for (int64_t k = 0; k < n; ++k)
          *reinterpret_cast<out_t*>(d0 + k * s[0]) =
              static_cast<out_t>(f(load_as<M>(reinterpret_cast<const in_t*>(d1 + k * s[1])),
                                   load_as<M>(reinterpret_cast<const in_t*>(d2 + k * s[2]))));
      }
    }
  });
}

// out = f(x, y, z) with all three inputs of type in_t (or bool for where's condition), with a
// contiguous fast path and one for a broadcast third operand (a Python-number weight/value).
template <typename out_t, typename A, typename B, typename C, typename F>
void ternary_loop(const TensorIter& it, const F& f_ref) {
  // rows of runs per call: Note [Rows of short runs]
  it.for_each_2d([&f_ref](char** d, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
    const F f = f_ref;  // Note [Loop closure copies]
    const bool dense = s[0] == sizeof(out_t) && s[1] == sizeof(A) && s[2] == sizeof(B);
    for (int64_t r = 0; r < rows; ++r) {
      char* d0 = d[0] + r * outer[0];
      const char* d1 = d[1] + r * outer[1];
      const char* d2 = d[2] + r * outer[2];
      const char* d3 = d[3] + r * outer[3];
      auto* o = reinterpret_cast<out_t*>(d0);
      auto* x = reinterpret_cast<const A*>(d1);
      auto* y = reinterpret_cast<const B*>(d2);
      auto* z = reinterpret_cast<const C*>(d3);
      if (dense && s[3] == sizeof(C)) {
        for (int64_t k = 0; k < n; ++k) o[k] = f(x[k], y[k], z[k]);
      } else if (dense && s[3] == 0) {
        const C zv = *z;
        for (int64_t k = 0; k < n; ++k) o[k] = f(x[k], y[k], zv);
      } else {
        for (int64_t k = 0; k < n; ++k)
          *reinterpret_cast<out_t*>(d0 + k * s[0]) =
              f(*reinterpret_cast<const A*>(d1 + k * s[1]), *reinterpret_cast<const B*>(d2 + k * s[2]),
                *reinterpret_cast<const C*>(d3 + k * s[3]));
      }
    }
  });
}

template <typename T>
void row_to_float(const T* x, float* y, int64_t n) {
  int64_t k = 0;
#ifdef EMBER_AVX512_LANES
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>)
    for (; k + 16 <= n; k += 16) _mm512_storeu_ps(y + k, load16(x + k));
#endif
#ifdef EMBER_F16C_LANES
  if constexpr (std::is_same_v<T, Half>)
    for (; k + 8 <= n; k += 8) _mm256_storeu_ps(y + k, half8_to_float(x + k));
#endif
  for (; k < n; ++k) y[k] = static_cast<float>(x[k]);
}
template <typename T>
void row_from_float(const float* x, T* y, int64_t n) {
  int64_t k = 0;
#ifdef EMBER_AVX512_LANES
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>)
    for (; k + 16 <= n; k += 16) store16(y + k, _mm512_loadu_ps(x + k));
#endif
#ifdef EMBER_F16C_LANES
  if constexpr (std::is_same_v<T, Half>)
    for (; k + 8 <= n; k += 8) float8_to_half(y + k, _mm256_loadu_ps(x + k));
#endif
  for (; k < n; ++k) y[k] = static_cast<T>(x[k]);
}

#ifdef EMBER_AVX512_LANES

// Loops for an op with a 16-lane form f16 that gives f's float for every input (Note [16-lane
// float math] in unary_math.h), over float or bfloat16 elements (computed in float, as the
// element loops do): contiguous runs go 16 at a time (a masked tail included), strided ones
// element by element with f.
template <typename T, typename F16, typename F>
void unary_loop16(const TensorIter& it, const F16& f16, const F& f) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
      auto* o = reinterpret_cast<T*>(d[0]);
      auto* a = reinterpret_cast<const T*>(d[1]);
      int64_t k = 0;
      for (; k + 16 <= n; k += 16) store16(o + k, f16(load16(a + k)));
      if (k < n) store16(o + k, f16(load16(a + k, tail_mask16(n - k))), tail_mask16(n - k));
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<T*>(d[0] + k * s[0]) =
            static_cast<T>(f(static_cast<float>(*reinterpret_cast<const T*>(d[1] + k * s[1]))));
    }
  });
}
template <typename T, typename F16, typename F>
void binary_loop16(const TensorIter& it, const F16& f16, const F& f) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == sizeof(T)) {
      auto* o = reinterpret_cast<T*>(d[0]);
      auto* a = reinterpret_cast<const T*>(d[1]);
      auto* b = reinterpret_cast<const T*>(d[2]);
      int64_t k = 0;
      for (; k + 16 <= n; k += 16) store16(o + k, f16(load16(a + k), load16(b + k)));
      if (k < n) {
        const __mmask16 m = tail_mask16(n - k);
        store16(o + k, f16(load16(a + k, m), load16(b + k, m)), m);
      }
    } else if (s[0] == sizeof(T) && (s[1] == 0 || s[1] == sizeof(T)) && (s[2] == 0 || s[2] == sizeof(T))) {
      // one operand a broadcast value (a gradient expanded from a sum's: element by element it took
      // 3x the contiguous loop's time)
      auto* o = reinterpret_cast<T*>(d[0]);
      auto* a = reinterpret_cast<const T*>(d[1]);
      auto* b = reinterpret_cast<const T*>(d[2]);
      const bool a1 = s[1] == 0, b1 = s[2] == 0;
      const __m512 av = a1 ? _mm512_set1_ps(static_cast<float>(*a)) : _mm512_setzero_ps(),
                   bv = b1 ? _mm512_set1_ps(static_cast<float>(*b)) : _mm512_setzero_ps();
      int64_t k = 0;
      for (; k + 16 <= n; k += 16) store16(o + k, f16(a1 ? av : load16(a + k), b1 ? bv : load16(b + k)));
      if (k < n) {
        const __mmask16 m = tail_mask16(n - k);
        store16(o + k, f16(a1 ? av : load16(a + k, m), b1 ? bv : load16(b + k, m)), m);
      }
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<T*>(d[0] + k * s[0]) =
            static_cast<T>(f(static_cast<float>(*reinterpret_cast<const T*>(d[1] + k * s[1])),
                             static_cast<float>(*reinterpret_cast<const T*>(d[2] + k * s[2]))));
    }
  });
}
#endif

// Note [Exact float fmod]: fmod of floats is exact, and for |a / b| < 2^28 it is a - q * b with
// q = trunc(a / b) computed in double: the double quotient cannot round across an integer (a - n * b
// is a nonzero multiple of the smaller ulp of a and b, so a non-integer a / b is at least 2^-24 from
// every integer n >= 1, far more than a double's rounding error below 2^28), q * b has at most
// 28 + 24 bits, and a - q * b is fmod's float result, so both are exact in double. That form vectorizes; glibc's fmodf
// is a call per element (floor_divide, remainder and fmod on floats ran 6.5-7x torch's time). Elements outside it (|a /
// b| >= 2^28, b zero or infinite, NaN) are done again with std::fmod.
inline bool fmod_by_double(float a, float b, float& mod) {
  const double q = std::trunc(static_cast<double>(a) / static_cast<double>(b));
  mod = std::copysign(static_cast<float>(static_cast<double>(a) - q * static_cast<double>(b)), a);
  return std::fabs(q) < 268435456.0 && std::fabs(b) < std::numeric_limits<float>::infinity();
}

// out = f(a, b, fmod(a, b)) over float-computed elements (T: float, Half, BFloat16): contiguous
// runs (a broadcast scalar operand included) in blocks through fmod_by_double, then std::fmod for
// the elements it cannot take; strided runs element by element with std::fmod.
template <typename T, typename F>
void float_fmod_loop(const TensorIter& it, const F& f_ref) {
  it.for_each([&f_ref](char** d, const int64_t* s, int64_t n) {
    const F f = f_ref;  // Note [Loop closure copies]
    auto* o = reinterpret_cast<T*>(d[0]);
    auto* a = reinterpret_cast<const T*>(d[1]);
    auto* b = reinterpret_cast<const T*>(d[2]);
    constexpr int64_t st = sizeof(T);
    if (s[0] != st || (s[1] != st && s[1] != 0) || (s[2] != st && s[2] != 0)) {
      for (int64_t k = 0; k < n; ++k) {
        const float av = static_cast<float>(*reinterpret_cast<const T*>(d[1] + k * s[1]));
        const float bv = static_cast<float>(*reinterpret_cast<const T*>(d[2] + k * s[2]));
        *reinterpret_cast<T*>(d[0] + k * s[0]) = static_cast<T>(f(av, bv, std::fmod(av, bv)));
      }
      return;
    }
    constexpr int64_t kBlock = 256;
    float x[kBlock], y[kBlock], z[kBlock];
    if (s[1] == 0) std::fill(x, x + kBlock, static_cast<float>(*a));
    if (s[2] == 0) std::fill(y, y + kBlock, static_cast<float>(*b));
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      if (s[1] != 0) row_to_float(a + k, x, len);
      if (s[2] != 0) row_to_float(b + k, y, len);
      int slow = 0;
      for (int64_t j = 0; j < len; ++j) {
        float mod;
        slow |= !fmod_by_double(x[j], y[j], mod);
        z[j] = f(x[j], y[j], mod);
      }
      if (slow)
        for (int64_t j = 0; j < len; ++j) {
          float mod;
          if (!fmod_by_double(x[j], y[j], mod)) z[j] = f(x[j], y[j], std::fmod(x[j], y[j]));
        }
      row_from_float(z, o + k, len);
    }
  });
}

}  // namespace EMBER_ISA_NS
}  // namespace ember
