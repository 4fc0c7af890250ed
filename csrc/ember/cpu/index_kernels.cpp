// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). The AVX2 levels compact
// with vpermd; the baseline runs the branchless scalar loop.
#include "ember/cpu/index_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "ember/cpu/element_bytes.h"
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/isa_check.h"
#include "ember/cpu/loops.h"

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

// Note [Fused embedding bags] (ops/nn_embedding.cpp). float rows go 64 columns at a time (128 with
// AVX-512) through eight vector accumulators kept in registers, the bag's rows re-read (from L1)
// for each further piece; 16-bit rows 16 columns per vector at AVX-512 (converted in registers),
// through row_to_float below it; float64, and the columns past the last vector, in a plain loop.
// Compiled as baseline code with its sums in memory, 8192 rows of 128 in 1024 bags took 2.5x
// torch's time. No software prefetch of the rows ahead: on Zen 5 it cost 20-40% at every table
// size (0.5 to 256 MB), the out-of-order core already overlapping the random row reads.
typedef float bag_v8 __attribute__((vector_size(32)));
// unaligned loads and stores through pointers, not memcpy: a memcpy of the sums kept them on the stack
typedef float bag_v8u __attribute__((vector_size(32), aligned(4), may_alias));
typedef float bag_v16 __attribute__((vector_size(64)));
typedef float bag_v16u __attribute__((vector_size(64), aligned(4), may_alias));
template <int W>
struct BagVec {
  using V = bag_v8;
  using U = bag_v8u;
};
template <>
struct BagVec<16> {
  using V = bag_v16;
  using U = bag_v16u;
};

template <typename T>
void bag_sums(int64_t b0, int64_t b1, const int64_t* offs, int64_t n_offs, int64_t n, int64_t pad, const int64_t* ip,
              const T* wp, const T* pp, const double* count, bool mean, int64_t D, T* op) {
  using acc_t = opmath_t<T>;
  constexpr bool k16Bit = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  std::vector<acc_t> acc(D);
  std::vector<float> tmp(k16Bit ? D : 0);  // a 16-bit row as floats
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t j0 = offs[b], j1 = b + 1 < n_offs ? offs[b + 1] : n;
    int64_t c = 0;
    if constexpr (std::is_same_v<T, float>) {
      // one piece of NV vectors of W floats from column c; fully unrolled, so the sums stay in registers
      auto piece = [&](auto w_tag, auto nv_tag) {
        constexpr int W = decltype(w_tag)::value, NV = decltype(nv_tag)::value;
        using V = typename BagVec<W>::V;
        using U = typename BagVec<W>::U;
        V s[NV] = {};
        for (int64_t j = j0; j < j1; ++j) {
          if (ip[j] == pad) continue;  // (pad is -1 without a padding_idx)
          const float* row = wp + ip[j] * D + c;
          const V f = V{} + (pp ? pp[j] : 1.0f);
#pragma GCC unroll 8
          for (int q = 0; q < NV; ++q) {
            const V v = *reinterpret_cast<const U*>(row + W * q);
            s[q] += pp ? f * v : v;
          }
        }
        // straight to the output (a store to acc read back as wider vectors stalled store forwarding)
        if (mean) {
          const float k = static_cast<float>(std::max(count[b], 1.0));
#pragma GCC unroll 8
          for (int q = 0; q < NV; ++q) s[q] /= k;
        }
#pragma GCC unroll 8
        for (int q = 0; q < NV; ++q) *reinterpret_cast<U*>(op + b * D + c + W * q) = s[q];
        c += W * NV;
      };
      using I8 = std::integral_constant<int, 8>;
      using I1 = std::integral_constant<int, 1>;
#ifdef EMBER_AVX512_LANES
      // 64-byte loads: a bag's rows come from the L2 at twice the rate of 32-byte ones
      while (c + 128 <= D) piece(std::integral_constant<int, 16>{}, I8{});
#endif
      while (c + 64 <= D) piece(I8{}, I8{});
      while (c + 8 <= D) piece(I8{}, I1{});
    }
#ifdef EMBER_AVX512_LANES
    if constexpr (k16Bit) {
      // 16 columns per vector, converted in registers (load16/store16: rounded as T(float))
      auto piece16 = [&](auto nv_tag) {
        constexpr int NV = decltype(nv_tag)::value;
        __m512 s[NV];
#pragma GCC unroll 8
        for (int q = 0; q < NV; ++q) s[q] = _mm512_setzero_ps();
        for (int64_t j = j0; j < j1; ++j) {
          if (ip[j] == pad) continue;
          const T* row = wp + ip[j] * D + c;
          const __m512 f = _mm512_set1_ps(pp ? static_cast<float>(pp[j]) : 1.0f);
#pragma GCC unroll 8
          for (int q = 0; q < NV; ++q) {
            const __m512 v = load16(row + 16 * q);
            s[q] = pp ? _mm512_fmadd_ps(f, v, s[q]) : _mm512_add_ps(s[q], v);
          }
        }
        T* o = op + b * D + c;
#pragma GCC unroll 8
        for (int q = 0; q < NV; ++q) store16(o + 16 * q, s[q]);
        if (mean) {  // the sum rounded to T first, then divided, as torch's mean
          const __m512 k = _mm512_set1_ps(static_cast<float>(static_cast<T>(std::max(count[b], 1.0))));
#pragma GCC unroll 8
          for (int q = 0; q < NV; ++q) store16(o + 16 * q, _mm512_div_ps(load16(o + 16 * q), k));
        }
        c += 16 * NV;
      };
      while (c + 128 <= D) piece16(std::integral_constant<int, 8>{});
      while (c + 64 <= D) piece16(std::integral_constant<int, 4>{});
      while (c + 16 <= D) piece16(std::integral_constant<int, 1>{});
    }
#endif
    const int64_t c0 = c;  // columns [0, c0) are written
    if (c < D) {
      std::fill(acc.begin() + c, acc.end(), acc_t(0));
      for (int64_t j = j0; j < j1; ++j) {
        if (ip[j] == pad) continue;
        const T* row = wp + ip[j] * D;
        const acc_t f = pp ? static_cast<acc_t>(pp[j]) : acc_t(1);
        if constexpr (k16Bit) {  // converted in vector code (one value at a time: 5-50x torch's time)
          row_to_float(row + c, tmp.data(), D - c);
          for (int64_t d = c; d < D; ++d) acc[d] += pp ? f * tmp[d - c] : tmp[d - c];
        } else {
          for (int64_t d = c; d < D; ++d) acc[d] += pp ? f * static_cast<acc_t>(row[d]) : static_cast<acc_t>(row[d]);
        }
      }
    }
    T* o = op + b * D;
    if constexpr (k16Bit) {
      row_from_float(acc.data() + c0, o + c0, D - c0);
      if (mean) {  // the sum rounded to the weight's type first, then divided, as torch's mean
        const float k = static_cast<float>(static_cast<T>(std::max(count[b], 1.0)));
        row_to_float(o + c0, tmp.data(), D - c0);
        for (int64_t d = 0; d < D - c0; ++d) tmp[d] /= k;
        row_from_float(tmp.data(), o + c0, D - c0);
      }
    } else if (mean) {
      // the sum rounded to the weight's type first, then divided, as torch's mean
      const acc_t k = static_cast<acc_t>(static_cast<T>(std::max(count[b], 1.0)));
      for (int64_t d = c0; d < D; ++d) o[d] = static_cast<T>(static_cast<acc_t>(static_cast<T>(acc[d])) / k);
    } else {
      for (int64_t d = c0; d < D; ++d) o[d] = static_cast<T>(acc[d]);
    }
  }
}
}  // namespace

bool EMBER_ISA_KERNEL(compress_rows_kernel)(size_t element_size, const uint8_t* m, const char* src, char* dst,
                                            const std::vector<int64_t>& start, int64_t cs, int64_t n) {
  return with_element_bytes(element_size,
                            [&](auto bytes) { compress_rows<decltype(bytes)::value>(m, src, dst, start, cs, n); });
}

void EMBER_ISA_KERNEL(embedding_bag_sums)(ScalarType dt, int64_t b0, int64_t b1, const int64_t* offs, int64_t n_offs,
                                          int64_t n, int64_t pad, const int64_t* ip, const void* w, const void* pp,
                                          const double* count, bool mean, int64_t D, void* out) {
  EMBER_DISPATCH_FLOAT(dt, "embedding_bag", [&] {
    bag_sums<scalar_t>(b0, b1, offs, n_offs, n, pad, ip, static_cast<const scalar_t*>(w),
                       static_cast<const scalar_t*>(pp), count, mean, D, static_cast<scalar_t*>(out));
  });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
