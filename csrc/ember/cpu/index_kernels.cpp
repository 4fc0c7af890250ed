// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). The AVX2 levels compact
// with vpermd; the baseline runs the branchless scalar loop.
#include "ember/cpu/index_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "ember/cpu/element_bytes.h"
#include "ember/cpu/isa_begin.h"

namespace ember::cpu {
namespace {

#if EMBER_ISA_LEVEL >= 1 || (defined(EMBER_SINGLE_ISA) && defined(__AVX2__))  // AVX2 and AVX-512 levels
// For each 8-bit hit mask, the lane indices of its hits in order (a permutation for vpermd).
struct CompressTable {
  alignas(32) int32_t idx[256][8];
  CompressTable() {
    for (int b = 0; b < 256; ++b) {
      int k = 0;
      for (int l = 0; l < 8; ++l)
        if (b >> l & 1) idx[b][k++] = l;
      for (; k < 8; ++k) idx[b][k] = 0;
    }
  }
};
const CompressTable& compress_table() {
  static const CompressTable t;
  return t;
}
// Eight 4-byte elements per step (four 8-byte ones as lane pairs): permute the hits to the
// front and store all eight lanes; only runs while the store stays inside the chunk's range.
template <size_t N>
int64_t compress_avx2(const uint8_t* __restrict m, const char* __restrict src, char* __restrict dst, int64_t i,
                      int64_t e, int64_t& k, int64_t kend) {
  const auto& tab = compress_table().idx;
  constexpr int64_t L = 32 / N;  // elements per 32-byte vector
  const __m256i zero = _mm256_setzero_si256();
  for (; i + 32 <= e && k + 32 <= kend; i += 32) {
    __m256i mv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m + i));
    uint32_t bits = ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(mv, zero)));
    for (int g = 0; g < 32 / L; ++g) {
      uint32_t b = (bits >> (g * L)) & ((1u << L) - 1);
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + (i + g * L) * N));
      __m256i perm;
      if constexpr (N == 4) {
        perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(tab[b]));
      } else {  // lane l of 8 bytes = int32 lanes 2l, 2l + 1
        __m128i p4 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tab[b]));
        __m256i p = _mm256_cvtepu32_epi64(p4);
        p = _mm256_slli_epi64(p, 1);
        perm = _mm256_or_si256(p, _mm256_slli_epi64(_mm256_add_epi32(p, _mm256_set1_epi64x(1)), 32));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + k * N), _mm256_permutevar8x32_epi32(v, perm));
      k += __builtin_popcount(b);
    }
  }
  return i;
}
#endif

template <size_t N>
void compress_rows(const uint8_t* m, const char* src, char* dst, const std::vector<int64_t>& start, int64_t cs,
                   int64_t n) {
  (void)n;  // only the AVX2 path reads it
  parallel_for(0, static_cast<int64_t>(start.size()) - 1, 1, [&](int64_t lo, int64_t hi) {
    // Local restrict pointers: through the captures the compiler reloads them after each store.
    const Bytes<N>* __restrict s = reinterpret_cast<const Bytes<N>*>(src);
    Bytes<N>* __restrict d = reinterpret_cast<Bytes<N>*>(dst);
    const uint8_t* __restrict mk = m;
    for (int64_t j = lo; j < hi; ++j) {
      int64_t k = start[j], kend = start[j + 1], i = j * cs;
#if EMBER_ISA_LEVEL >= 1 || (defined(EMBER_SINGLE_ISA) && defined(__AVX2__))
      if constexpr (N == 4 || N == 8) {
        i = compress_avx2<N>(mk, src, dst, i, std::min(n, (j + 1) * cs), k, kend);
      }
#endif
      // Branchless: every element is stored, the cursor moves on a hit; the loop ends at the
      // chunk's last hit, so nothing is written past its output range.
      for (; k < kend; ++i) {
        d[k] = s[i];
        k += mk[i];
      }
    }
  });
}

}  // namespace

bool EMBER_ISA_KERNEL(compress_rows_kernel)(size_t element_size, const uint8_t* m, const char* src, char* dst,
                                            const std::vector<int64_t>& start, int64_t cs, int64_t n) {
  return with_element_bytes(element_size,
                            [&](auto bytes) { compress_rows<decltype(bytes)::value>(m, src, dst, start, cs, n); });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
