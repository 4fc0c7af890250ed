// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator. Output block = f(key, counter) with no state between blocks, so any
// element of a random stream can be computed directly from its position.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ember/cpu/isa.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EMBER_X86_SIMD 1
#include <immintrin.h>
#endif

namespace ember {

namespace philox {
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
constexpr int kRounds = 10;
}  // namespace philox

// One block: four 32-bit outputs for a 128-bit counter and a 64-bit key (Random123 layout).
inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int r = 0; r < philox::kRounds; ++r) {
    if (r) k[0] += philox::kW0, k[1] += philox::kW1;
    uint64_t p0 = uint64_t(philox::kM0) * c[0], p1 = uint64_t(philox::kM1) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c;
}

namespace detail {

inline void philox_fill_scalar(uint64_t key, uint64_t counter, int64_t nblocks, uint32_t* out) {
  const std::array<uint32_t, 2> k{uint32_t(key), uint32_t(key >> 32)};
  for (int64_t b = 0; b < nblocks; ++b) {
    uint64_t c = counter + uint64_t(b);
    auto r = philox4x32({uint32_t(c), uint32_t(c >> 32), 0, 0}, k);
    for (int j = 0; j < 4; ++j) out[4 * b + j] = r[j];
  }
}

#ifdef EMBER_X86_SIMD
// AVX2+FMA kernels run at the AVX2 and AVX512 kernel levels (Note [Multi-ISA kernels] in
// cpu/isa.h), so EMBER_CPU_CAPABILITY=default runs the portable code (used to test the fallback).
inline bool cpu_has_avx2_fma() { return cpu::cpu_capability() >= cpu::CpuCapability::AVX2; }

// Sixteen blocks per step: two independent groups of eight AVX2 lanes hide the multiply latency.
// 32x32->64 products come from vpmuludq on the even and odd 32-bit lanes.
__attribute__((target("avx2"))) inline void philox_fill_avx2(uint64_t key, uint64_t counter, int64_t nblocks,
                                                             uint32_t* out) {
  constexpr int G = 2;
  const __m256i m0 = _mm256_set1_epi32(int(philox::kM0)), m1 = _mm256_set1_epi32(int(philox::kM1));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i bias = _mm256_set1_epi32(int(0x80000000u));
  int64_t b = 0;
  for (; b + 8 * G <= nblocks; b += 8 * G) {
    __m256i c0[G], c1[G], c2[G], c3[G];
    for (int g = 0; g < G; ++g) {
      uint64_t base = counter + uint64_t(b + 8 * g);
      __m256i lo = _mm256_set1_epi32(int(uint32_t(base)));
      c0[g] = _mm256_add_epi32(lo, lane);
      // Lanes whose low word wrapped carry into the high word (unsigned compare via the sign bias).
      __m256i carry = _mm256_cmpgt_epi32(_mm256_xor_si256(lo, bias), _mm256_xor_si256(c0[g], bias));
      c1[g] = _mm256_sub_epi32(_mm256_set1_epi32(int(uint32_t(base >> 32))), carry);
      c2[g] = _mm256_setzero_si256(), c3[g] = _mm256_setzero_si256();
    }
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int r = 0; r < philox::kRounds; ++r) {
      if (r) k0 += philox::kW0, k1 += philox::kW1;
      const __m256i kv0 = _mm256_set1_epi32(int(k0)), kv1 = _mm256_set1_epi32(int(k1));
      for (int g = 0; g < G; ++g) {
        __m256i pe0 = _mm256_mul_epu32(c0[g], m0), po0 = _mm256_mul_epu32(_mm256_srli_epi64(c0[g], 32), m0);
        __m256i pe1 = _mm256_mul_epu32(c2[g], m1), po1 = _mm256_mul_epu32(_mm256_srli_epi64(c2[g], 32), m1);
        __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(pe0, 32), po0, 0xAA);
        __m256i lo0 = _mm256_blend_epi32(pe0, _mm256_slli_epi64(po0, 32), 0xAA);
        __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(pe1, 32), po1, 0xAA);
        __m256i lo1 = _mm256_blend_epi32(pe1, _mm256_slli_epi64(po1, 32), 0xAA);
        c0[g] = _mm256_xor_si256(_mm256_xor_si256(hi1, c1[g]), kv0);
        c2[g] = _mm256_xor_si256(_mm256_xor_si256(hi0, c3[g]), kv1);
        c1[g] = lo1;
        c3[g] = lo0;
      }
    }
    for (int g = 0; g < G; ++g) {
      // Transpose (c0..c3 of eight blocks) into block-major order.
      __m256i t0 = _mm256_unpacklo_epi32(c0[g], c1[g]), t1 = _mm256_unpackhi_epi32(c0[g], c1[g]);
      __m256i t2 = _mm256_unpacklo_epi32(c2[g], c3[g]), t3 = _mm256_unpackhi_epi32(c2[g], c3[g]);
      __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
      __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
      auto* o = reinterpret_cast<__m256i*>(out + 4 * (b + 8 * g));
      _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(u0, u1, 0x20));
      _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
      _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
      _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
    }
  }
  philox_fill_scalar(key, counter + uint64_t(b), nblocks - b, out + 4 * b);
}
#endif

}  // namespace detail

// Writes the 4 * nblocks words of the blocks with counters (counter + i, 0, 0) for i < nblocks,
// block i at out[4i .. 4i+3]. Integer-exact, so every code path gives the same words.
inline void philox_fill(uint64_t key, uint64_t counter, int64_t nblocks, uint32_t* out) {
#ifdef EMBER_X86_SIMD
  if (nblocks >= 16 && detail::cpu_has_avx2_fma()) return detail::philox_fill_avx2(key, counter, nblocks, out);
#endif
  detail::philox_fill_scalar(key, counter, nblocks, out);
}

}  // namespace ember
