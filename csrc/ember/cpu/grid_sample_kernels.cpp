// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/grid_sample_kernels.h"

#include <algorithm>
#include <cmath>

#include "ember/core/parallel.h"
#include "ember/cpu/isa_begin.h"

namespace ember::cpu {
namespace {

// Note [Vectorized grid_sample taps]: the bilinear forward with zeros or border padding, in blocks
// of kBlock output pixels. Each block's four taps per pixel are computed first, branch-free, into
// arrays (offset y * W + x as int32, weight, and in-range as a 0/1 of the compute type), so the
// loop over the block vectorizes; then every channel reads its four taps by gathers. The compute
// type is the data's (float for float32, as torch's kernel). As torch's masked gathers, an out-of-range
// tap reads offset 0 and takes the value 0 (inf and NaN there stay out), and every tap is multiplied
// by its weight: an in-range inf of weight 0 gives NaN, and so does a NaN or infinite grid point (its
// weights are NaN) with zeros padding; border padding clips NaN to 0. (ops/nn_grid_sample.cpp's scalar taps in double
// took 3.5x torch's time at 3 channels of 224 x 224.)
constexpr int64_t kBlock = 128;

template <typename T>
struct BlockTaps {
  int32_t at[4][kBlock];
  T w[4][kBlock];
  T ok[4][kBlock];
};

// kBorder: padding "border", else "zeros".
template <typename T, bool kBorder>
void block_taps(const T* __restrict g, int64_t len, int64_t H, int64_t W, bool align_corners, BlockTaps<T>& t) {
  const T hx = T(W - 1), hy = T(H - 1);
  const int32_t w32 = static_cast<int32_t>(W);
  // torch's unnormalization, (g + 1) / 2 * (size - 1) or ((g + 1) * size - 1) / 2, as ((g + 1) * a - b) / 2
  // (the same roundings: halving is exact), with loop-invariant a and b so the loop vectorizes
  const T ax = align_corners ? hx : T(W), ay = align_corners ? hy : T(H), b = align_corners ? T(0) : T(1);
  for (int64_t i = 0; i < len; ++i) {
    T x = ((g[2 * i] + T(1)) * ax - b) / T(2), y = ((g[2 * i + 1] + T(1)) * ay - b) / T(2);
    if constexpr (kBorder) {  // clip to the border; NaN to 0, as torch's max(x, 0)
      x = x > T(0) ? x : T(0);
      x = x < hx ? x : hx;
      y = y > T(0) ? y : T(0);
      y = y < hy ? y : hy;
    }
    const T x0 = std::floor(x), y0 = std::floor(y);
    const T wx1 = x - x0, wx0 = x0 + T(1) - x, wy1 = y - y0, wy0 = y0 + T(1) - y;
    const bool in_x0 = x0 >= T(0) && x0 <= hx, in_x1 = x0 + T(1) >= T(0) && x0 + T(1) <= hx;
    const bool in_y0 = y0 >= T(0) && y0 <= hy, in_y1 = y0 + T(1) >= T(0) && y0 + T(1) <= hy;
    // each tap's column and row clamped into the plane before converting (NaN to 0), so every offset is
    // in range, and an in-range tap's is its own
    auto index = [](T v, T hi) {
      v = v > T(0) ? v : T(0);
      return static_cast<int32_t>(v < hi ? v : hi);
    };
    const int32_t xi = index(x0, hx), xi1 = index(x0 + T(1), hx), yi = index(y0, hy), yi1 = index(y0 + T(1), hy);
    t.at[0][i] = yi * w32 + xi, t.at[1][i] = yi * w32 + xi1;
    t.at[2][i] = yi1 * w32 + xi, t.at[3][i] = yi1 * w32 + xi1;
    t.w[0][i] = wx0 * wy0, t.w[1][i] = wx1 * wy0, t.w[2][i] = wx0 * wy1, t.w[3][i] = wx1 * wy1;
    t.ok[0][i] = in_x0 && in_y0 ? T(1) : T(0), t.ok[1][i] = in_x1 && in_y0 ? T(1) : T(0);
    t.ok[2][i] = in_x0 && in_y1 ? T(1) : T(0), t.ok[3][i] = in_x1 && in_y1 ? T(1) : T(0);
  }
}

template <typename T>
void apply_taps(const T* __restrict plane, const BlockTaps<T>& t, int64_t len, T* __restrict o) {
  for (int64_t i = 0; i < len; ++i) {
    const T v0 = plane[t.at[0][i]], v1 = plane[t.at[1][i]], v2 = plane[t.at[2][i]], v3 = plane[t.at[3][i]];
    const T a = t.w[0][i] * (t.ok[0][i] != T(0) ? v0 : T(0)), b = t.w[1][i] * (t.ok[1][i] != T(0) ? v1 : T(0));
    const T c = t.w[2][i] * (t.ok[2][i] != T(0) ? v2 : T(0)), d = t.w[3][i] * (t.ok[3][i] != T(0) ? v3 : T(0));
    o[i] = ((a + b) + c) + d;  // torch's order
  }
}

template <typename T>
void bilinear(const T* x, const T* g, T* o, int64_t N, int64_t C, int64_t H, int64_t W, int64_t Q, int padding,
              bool align_corners) {
  const int64_t HW = H * W;
  parallel_for(0, N * Q, std::max<int64_t>(kBlock, 16384 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
    BlockTaps<T> taps;
    for (int64_t p0 = b; p0 < e;) {
      const int64_t n = p0 / Q, q0 = p0 % Q, len = std::min({kBlock, e - p0, Q - q0});
      if (padding == 1)
        block_taps<T, true>(g + 2 * p0, len, H, W, align_corners, taps);
      else
        block_taps<T, false>(g + 2 * p0, len, H, W, align_corners, taps);
      for (int64_t c = 0; c < C; ++c) apply_taps(x + (n * C + c) * HW, taps, len, o + (n * C + c) * Q + q0);
      p0 += len;
    }
  });
}

}  // namespace

void EMBER_ISA_KERNEL(grid_sample_bilinear)(ScalarType dt, const void* x, const void* grid, void* out, int64_t N,
                                            int64_t C, int64_t H, int64_t W, int64_t Q, int padding,
                                            bool align_corners) {
  if (dt == ScalarType::Float32)
    bilinear(static_cast<const float*>(x), static_cast<const float*>(grid), static_cast<float*>(out), N, C, H, W, Q,
             padding, align_corners);
  else
    bilinear(static_cast<const double*>(x), static_cast<const double*>(grid), static_cast<double*>(out), N, C, H, W, Q,
             padding, align_corners);
}

}  // namespace ember::cpu

#include "ember/cpu/isa_end.h"
