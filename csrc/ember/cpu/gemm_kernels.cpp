// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). Small GEMMs (gemm_kernels.h).
#include "ember/cpu/gemm_kernels.h"

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/isa_check.h"  // EMBER_AVX512_LANES

namespace ember::cpu {
namespace {

// Note [Recurrent GEMM]: the recurrent products of a fused layer have few rows (the batch) and
// a weight reused at every step. OpenBLAS packs the weight again at each call and ran them at
// 15-18 GMAC/s on one Zen 3 core (8 x 512 by 512 x 256); packed once per layer call into panels,
// a register tile of 4 rows by 3 vectors (12 accumulators, all of AVX2's registers bar the three
// panel loads and a broadcast) ran at 47-61. GCC's vector extension keeps the tile in registers
// (plain arrays were spilled); 32-byte vectors at every level (two SSE registers each at the
// baseline). Each output sums its k products in order: the same bits for any thread count.
// At the AVX-512 level the panels are 3 vectors of 64 bytes (panel_vector_bytes), the tile up to
// 8 rows (24 accumulators of 32 registers): 4 x 3 of 32 bytes there ran the 16 x 512 x 128 steps
// of an LSTM at 1.4x torch's time.
typedef float vec32_f __attribute__((vector_size(32)));
typedef double vec32_d __attribute__((vector_size(32)));
typedef float vec64_f __attribute__((vector_size(64)));
typedef double vec64_d __attribute__((vector_size(64)));
template <typename T, int VB>
using vec_of = std::conditional_t<VB == 64, std::conditional_t<std::is_same_v<T, double>, vec64_d, vec64_f>,
                                  std::conditional_t<std::is_same_v<T, double>, vec32_d, vec32_f>>;
#ifdef EMBER_AVX512_LANES
constexpr int kPanelVectorBytes = 64, kPanelMaxTileRows = 8;
#else
constexpr int kPanelVectorBytes = 32, kPanelMaxTileRows = 4;
#endif

// The register tile both kernels share: c[R rows, cols <= NV vectors of VB bytes] (+)= a[R rows, k]
// @ b[k rows, NV vectors] with a's elements (as0, as1) apart and b's rows bs0 apart (a panel's width,
// or the right operand's row stride).
template <typename T, int VB, int R, int NV>
void tile(const T* __restrict a, int64_t as0, int64_t as1, const T* __restrict b, int64_t bs0, int64_t k,
          T* __restrict c, int64_t ldc, int64_t cols, bool accumulate) {
  using V = vec_of<T, VB>;
  constexpr int L = VB / sizeof(T), W = NV * L;
  V acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) acc[r][j] = V{};
  for (int64_t q = 0; q < k; ++q) {
    V bv[NV];
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) std::memcpy(&bv[j], b + q * bs0 + j * L, VB);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const T x = a[r * as0 + q * as1];
#pragma GCC unroll 3
      for (int j = 0; j < NV; ++j) acc[r][j] += x * bv[j];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    T* row = c + r * ldc;
    if (cols == W && !accumulate) {
      std::memcpy(row, acc[r], sizeof(acc[r]));
      continue;
    }
    T out[W];
    std::memcpy(out, acc[r], sizeof(out));
    if (accumulate)
      for (int64_t j = 0; j < cols; ++j) row[j] += out[j];
    else
      for (int64_t j = 0; j < cols; ++j) row[j] = out[j];
  }
}

// Rows of a in tiles of up to MaxR (4 or 8) against one block of NV vectors of b: whole tiles, then
// the remaining rows as one tile of 4 or fewer and one of the rest.
template <typename T, int VB, int NV, int MaxR = 4>
void tile_rows(int64_t m, const T* a, int64_t as0, int64_t as1, const T* b, int64_t bs0, int64_t k, T* c, int64_t ldc,
               int64_t cols, bool accumulate) {
  int64_t i = 0;
  auto run = [&]<int R>() {
    tile<T, VB, R, NV>(a + i * as0, as0, as1, b, bs0, k, c + i * ldc, ldc, cols, accumulate);
    i += R;
  };
  while (i + MaxR <= m) run.template operator()<MaxR>();
  if (MaxR > 4 && m - i >= 4) run.template operator()<4>();
  switch (m - i) {
    case 3:
      run.template operator()<3>();
      break;
    case 2:
      run.template operator()<2>();
      break;
    case 1:
      run.template operator()<1>();
      break;
    default:
      break;
  }
}

template <typename T>
void panel_gemm_of(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* panels, T* c, int64_t ldc,
                   bool accumulate) {
  constexpr int64_t W = 3 * (kPanelVectorBytes / sizeof(T));
  for (int64_t p = 0; p * W < n; ++p)
    tile_rows<T, kPanelVectorBytes, 3, kPanelMaxTileRows>(m, a, lda, 1, panels + p * k * W, W, k, c + p * W, ldc,
                                                          std::min(W, n - p * W), accumulate);
}

// Note [Tiny GEMM]: a BLAS call costs ~0.3 us before it computes anything and packs both operands
// again, more than a 16x16x16 product takes (bmm of 512 of them: 1.05-1.4x torch's time, 1024 4x4
// ones 1.26x). Products of at most kTinyGemmMacs (64^3) multiply-adds (ops/linalg.cpp) run here
// instead, in the register tiles of the panel kernel (up to 4 rows by 3 vectors), reading b's rows in
// place; columns past the last whole vector are summed one by one. On one Zen 3 core: 32^3 1.75x,
// 64^3 1.3x OpenBLAS's speed. (A row-at-a-time loop through memory waited on its own stores and ran
// slower than BLAS; the unroll pragmas keep the tile in registers.)
// The right operand's rows read in place: blocks of 3 vectors, then 2 or 1, then single columns.
template <typename T>
void tiny_gemm_of(int64_t m, int64_t n, int64_t k, const T* a, int64_t as0, int64_t as1, const T* b, int64_t bs0,
                  T* c) {
  constexpr int64_t L = 32 / sizeof(T);
  int64_t j = 0;
  for (; j + 3 * L <= n; j += 3 * L) tile_rows<T, 32, 3>(m, a, as0, as1, b + j, bs0, k, c + j, n, 3 * L, false);
  if (j + 2 * L <= n) {
    tile_rows<T, 32, 2>(m, a, as0, as1, b + j, bs0, k, c + j, n, 2 * L, false);
    j += 2 * L;
  } else if (j + L <= n) {
    tile_rows<T, 32, 1>(m, a, as0, as1, b + j, bs0, k, c + j, n, L, false);
    j += L;
  }
  for (; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      T sum = T(0);
      for (int64_t q = 0; q < k; ++q) sum += a[i * as0 + q * as1] * b[q * bs0 + j];
      c[i * n + j] = sum;
    }
}

}  // namespace

void EMBER_ISA_KERNEL(panel_gemm)(ScalarType dt, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                                  const void* panels, void* c, int64_t ldc, bool accumulate) {
  if (dt == ScalarType::Float64)
    panel_gemm_of<double>(m, n, k, static_cast<const double*>(a), lda, static_cast<const double*>(panels),
                          static_cast<double*>(c), ldc, accumulate);
  else
    panel_gemm_of<float>(m, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(panels),
                         static_cast<float*>(c), ldc, accumulate);
}
int64_t EMBER_ISA_KERNEL(panel_vector_bytes)() { return kPanelVectorBytes; }
void EMBER_ISA_KERNEL(tiny_gemm)(ScalarType dt, int64_t m, int64_t n, int64_t k, const void* a, int64_t as0,
                                 int64_t as1, const void* b, int64_t bs0, void* c) {
  if (dt == ScalarType::Float64)
    tiny_gemm_of<double>(m, n, k, static_cast<const double*>(a), as0, as1, static_cast<const double*>(b), bs0,
                         static_cast<double*>(c));
  else
    tiny_gemm_of<float>(m, n, k, static_cast<const float*>(a), as0, as1, static_cast<const float*>(b), bs0,
                        static_cast<float*>(c));
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
