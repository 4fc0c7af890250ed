// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/convert_kernels.h"

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"  // the F16C helpers

namespace ember::cpu {
namespace {

// The conversions of copy.cpp's convert<To>(From) for these pairs: through float, a double
// rounded to float first (as torch's static_cast<Half>(double)).
template <typename To, typename From>
inline To convert_one(From v) {
  if constexpr (std::is_same_v<To, double>)
    return static_cast<double>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, float>)
    return static_cast<float>(v);
  else
    return To(static_cast<float>(v));
}

#ifdef EMBER_F16C_LANES
// Eight values as floats.
template <typename T>
inline __m256 load8(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return _mm256_loadu_ps(p);
  } else if constexpr (std::is_same_v<T, double>) {
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(p + 4)), _mm256_cvtpd_ps(_mm256_loadu_pd(p)));
  } else if constexpr (std::is_same_v<T, Half>) {
    return half8_to_float(p);
  } else {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
}

// Eight floats stored as T, rounded to nearest even, NaNs as core/half.h writes them.
template <typename T>
inline void store8(T* p, __m256 v) {
  if constexpr (std::is_same_v<T, float>) {
    _mm256_storeu_ps(p, v);
  } else if constexpr (std::is_same_v<T, double>) {
    _mm256_storeu_pd(p, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    _mm256_storeu_pd(p + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  } else if constexpr (std::is_same_v<T, Half>) {
    float8_to_half(p, v);
  } else {  // BFloat16::from_float: u + 0x7fff + (bit 16 of u), NaN -> 0x7fc0
    __m256i u = _mm256_castps_si256(v);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), nan);
    // the eight 16-bit values (all below 2^16, so the saturating pack keeps them) in order
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
}
#endif

template <typename To, typename From>
void run(void* dst, const void* src, int64_t n) {
  To* __restrict d = static_cast<To*>(dst);
  const From* __restrict s = static_cast<const From*>(src);
  int64_t i = 0;
#ifdef EMBER_F16C_LANES
  for (; i + 8 <= n; i += 8) store8<To>(d + i, load8<From>(s + i));
#endif
  for (; i < n; ++i) d[i] = convert_one<To>(s[i]);
}

// float / double -> an integer type, as copy.cpp's convert (Note [Float to int conversion]):
// int8/int16/int32 keep the low bits of the 32-bit truncation, int64 is the 64-bit one, and
// uint8 (float only) keeps the low byte of the 64-bit one, which is the low byte of the 32-bit
// one for every float: past 2^31 a float is a multiple of 256, and out of range both give 0.
template <typename To, typename From>
inline To to_int_one(From v) {
  if constexpr (std::is_same_v<To, int64_t> || std::is_same_v<To, uint8_t>)
    return static_cast<To>(trunc_i64(static_cast<double>(v)));
  else
    return static_cast<To>(trunc_i32(static_cast<double>(v)));
}

#ifdef EMBER_F16C_LANES  // (the AVX2 and AVX-512 levels)
template <typename From>
inline __m256i trunc8_i32(const From* p) {  // out of range and NaN -> INT32_MIN, as trunc_i32
  if constexpr (std::is_same_v<From, float>)
    return _mm256_cvttps_epi32(_mm256_loadu_ps(p));
  else
    return _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_loadu_pd(p + 4)), _mm256_cvttpd_epi32(_mm256_loadu_pd(p)));
}
#endif

template <typename To, typename From>
void run_int(void* dst, const void* src, int64_t n) {
  To* __restrict d = static_cast<To*>(dst);
  const From* __restrict s = static_cast<const From*>(src);
  int64_t i = 0;
  if constexpr (std::is_same_v<To, int64_t>) {
#ifdef EMBER_AVX512_LANES  // out of range and NaN -> INT64_MIN, as trunc_i64
    for (; i + 8 <= n; i += 8) {
      if constexpr (std::is_same_v<From, float>)
        _mm512_storeu_si512(d + i, _mm512_cvttps_epi64(_mm256_loadu_ps(s + i)));
      else
        _mm512_storeu_si512(d + i, _mm512_cvttpd_epi64(_mm512_loadu_pd(s + i)));
    }
#endif
#ifdef EMBER_F16C_LANES
    // AVX2 has no 64-bit truncation: below 2^31 in magnitude (nearly always) it is the 32-bit one
    // widened; eight values holding INT32_MIN (out of that range, NaN, or -2^31 itself) take the
    // scalar 64-bit one (all scalar: 1.9x torch's time)
    for (; i + 8 <= n; i += 8) {
      const __m256i t = trunc8_i32(s + i);
      if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(t, _mm256_set1_epi32(INT32_MIN)))) {
        for (int64_t j = i; j < i + 8; ++j) d[j] = to_int_one<To>(s[j]);
        continue;
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(t)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 4), _mm256_cvtepi32_epi64(_mm256_extracti128_si256(t, 1)));
    }
#endif
  } else {
#ifdef EMBER_F16C_LANES
    // 32-bit truncations a block at a time, then their low bits (a narrowing loop GCC vectorizes)
    int32_t block[256];
    for (; i + 8 <= n;) {
      const int64_t len = std::min<int64_t>(256, (n - i) / 8 * 8);
      int32_t* out32 = block;
      if constexpr (std::is_same_v<To, int32_t>) out32 = d + i;  // no narrowing: straight to dst
      for (int64_t j = 0; j < len; j += 8)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out32 + j), trunc8_i32(s + i + j));
      if constexpr (!std::is_same_v<To, int32_t>)
        for (int64_t j = 0; j < len; ++j) d[i + j] = static_cast<To>(block[j]);
      i += len;
    }
#endif
  }
  for (; i < n; ++i) d[i] = to_int_one<To>(s[i]);
}

template <typename From>
void run_from(ScalarType dst_t, void* dst, const void* src, int64_t n) {
  if constexpr (std::is_same_v<From, float> || std::is_same_v<From, double>) {
    switch (dst_t) {
      case ScalarType::Int8:
        return run_int<int8_t, From>(dst, src, n);
      case ScalarType::Int16:
        return run_int<int16_t, From>(dst, src, n);
      case ScalarType::Int32:
        return run_int<int32_t, From>(dst, src, n);
      case ScalarType::Int64:
        return run_int<int64_t, From>(dst, src, n);
      case ScalarType::UInt8:
        if constexpr (std::is_same_v<From, float>) return run_int<uint8_t, From>(dst, src, n);
        break;
      default:
        break;
    }
  }
  switch (dst_t) {
    case ScalarType::Float16:
      return run<Half, From>(dst, src, n);
    case ScalarType::BFloat16:
      return run<BFloat16, From>(dst, src, n);
    case ScalarType::Float32:
      if constexpr (!std::is_same_v<From, float> && !std::is_same_v<From, double>) return run<float, From>(dst, src, n);
      break;
    case ScalarType::Float64:
      if constexpr (!std::is_same_v<From, float> && !std::is_same_v<From, double>)
        return run<double, From>(dst, src, n);
      break;
    default:
      break;
  }
  EMBER_CHECK(false, "convert_run: unsupported conversion to ", dtype_name(dst_t));
}

// 32 bytes of E in reverse order (GCC vector extensions: one permute at the AVX2 level, two
// 16-byte shuffles at the baseline).
typedef uint8_t U8x32 __attribute__((vector_size(32)));
typedef uint16_t U16x16 __attribute__((vector_size(32)));
typedef uint32_t U32x8 __attribute__((vector_size(32)));
typedef uint64_t U64x4 __attribute__((vector_size(32)));
inline U8x32 reversed(U8x32 v) {
  return __builtin_shufflevector(v, v, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12,
                                 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}
inline U16x16 reversed(U16x16 v) {
  return __builtin_shufflevector(v, v, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}
inline U32x8 reversed(U32x8 v) { return __builtin_shufflevector(v, v, 7, 6, 5, 4, 3, 2, 1, 0); }
inline U64x4 reversed(U64x4 v) { return __builtin_shufflevector(v, v, 3, 2, 1, 0); }

template <typename E, typename V>
void reverse_elems(E* o, const E* last, int64_t j0, int64_t j1) {
  constexpr int64_t K = 32 / sizeof(E);
  int64_t j = j0;
  for (; j + K <= j1; j += K) {
    V v;
    std::memcpy(&v, last - j - (K - 1), 32);
    v = reversed(v);
    std::memcpy(o + j, &v, 32);
  }
  for (; j < j1; ++j) o[j] = last[-j];
}

}  // namespace

void EMBER_ISA_KERNEL(convert_run)(ScalarType dst_t, ScalarType src_t, void* dst, const void* src, int64_t n) {
  switch (src_t) {
    case ScalarType::Float16:
      return run_from<Half>(dst_t, dst, src, n);
    case ScalarType::BFloat16:
      return run_from<BFloat16>(dst_t, dst, src, n);
    case ScalarType::Float32:
      return run_from<float>(dst_t, dst, src, n);
    case ScalarType::Float64:
      return run_from<double>(dst_t, dst, src, n);
    default:
      EMBER_CHECK(false, "convert_run: unsupported conversion from ", dtype_name(src_t));
  }
}

void EMBER_ISA_KERNEL(reverse_run)(size_t bytes, void* o, const void* last, int64_t j0, int64_t j1) {
  switch (bytes) {
    case 1:
      reverse_elems<uint8_t, U8x32>(static_cast<uint8_t*>(o), static_cast<const uint8_t*>(last), j0, j1);
      break;
    case 2:
      reverse_elems<uint16_t, U16x16>(static_cast<uint16_t*>(o), static_cast<const uint16_t*>(last), j0, j1);
      break;
    case 4:
      reverse_elems<uint32_t, U32x8>(static_cast<uint32_t*>(o), static_cast<const uint32_t*>(last), j0, j1);
      break;
    case 8:
      reverse_elems<uint64_t, U64x4>(static_cast<uint64_t*>(o), static_cast<const uint64_t*>(last), j0, j1);
      break;
    default:
      throw Error("reverse_run: element size not supported");
  }
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
