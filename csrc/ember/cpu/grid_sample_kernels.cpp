// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/grid_sample_kernels.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ember/core/parallel.h"
#include "ember/cpu/isa_begin.h"

namespace ember::cpu {
namespace {

// Note [Vectorized grid_sample taps]: grid_sample in blocks of kBlock output pixels. Each block's
// taps (four for bilinear, one for nearest) are computed first, branch-free, into arrays (offset
// y * W + x, weight, and in-range as a 0/1 of the compute type), so the loop over the block
// vectorizes; then every channel reads its taps by gathers (the forward and the grid gradient) or
// adds into them (the input gradient, a scalar scatter: taps of neighbouring pixels collide). The
// compute type is the data's (float for float32, as torch's kernel). As torch's masked gathers, an
// out-of-range tap reads a clamped offset and takes the value 0 (inf and NaN there stay out), and
// every bilinear tap is multiplied by its weight: an in-range inf of weight 0 gives NaN, and so
// does a NaN or infinite grid point (its weights are NaN) with zeros padding; border and reflection
// padding clip NaN to 0. Offsets are int32 below 2^31 elements a plane (the gathers of AVX2 take
// 8 of them), else int64. (Scalar taps in double took 3.5x torch's time at 3 channels of 224 x 224,
// 3x with nearest or reflection.)
constexpr int64_t kBlock = 128;

template <typename T, typename Idx>
struct BlockTaps {
  Idx at[8][kBlock];  // (4 taps in 2-d, 8 in 3-d; tap k is x + 2 y + 4 z of the cell's corners, torch's order)
  T w[8][kBlock];
  T ok[8][kBlock];
  // for the grid gradient: the linear weights along x, y and z, d(coordinate)/d(grid value)
  T wx0[kBlock], wx1[kBlock], wy0[kBlock], wy1[kBlock], wz0[kBlock], wz1[kBlock], dx[kBlock], dy[kBlock], dz[kBlock];
};

// One axis of the input: torch's unnormalization, (g + 1) / 2 * (size - 1) or ((g + 1) * size - 1) / 2,
// as ((g + 1) * a - b) / 2 (the same roundings: halving is exact), and the reflection interval
// [lo, lo + span] (torch's twice_low / 2 and (twice_high - twice_low) / 2).
template <typename T>
struct Axis {
  T a, b, hi, lo, span;
  Axis(int64_t size, bool align_corners)
      : a(align_corners ? T(size - 1) : T(size)),
        b(align_corners ? T(0) : T(1)),
        hi(T(size - 1)),
        lo(align_corners ? T(0) : T(-0.5)),
        span(align_corners ? T(size - 1) : T(size)) {}
};

// The source coordinate of grid value g along an axis, d its derivative in g. kPad: 0 zeros (the
// coordinate as it is), 1 border (clipped), 2 reflection (reflected, then clipped). The clip's
// derivative is 0 on the borders and past them, as torch's. The clip takes NaN to 0 in 2-d (torch's
// vectorized max(x, 0) then min) and to the upper border in 3-d (kNanHigh: torch's scalar
// min(size - 1, max(x, 0)), whose max passes NaN on and whose min then gives size - 1).
template <typename T, int kPad, bool kNanHigh>
[[gnu::always_inline]] inline T source(T g, T a, T b, T hi, T lo, T span, T& d) {
  T x = ((g + T(1)) * a - b) / T(2);
  d = a / T(2);
  if constexpr (kPad == 2) {
    // e = |x - lo| mod 2 span: q * two is exact, and so is the difference (Sterbenz) while |x - lo| has no
    // fraction bits lost (below 2^24 for float); q off by one from the division's rounding is put back.
    const T t = x - lo, at = std::fabs(t), two = span * T(2);
    const T q = std::floor(at / two);
    T e = at - q * two;
    e = e < T(0) ? e + two : e;
    e = e >= two ? e - two : e;
    const bool back = e >= span;  // an odd number of reflections
    x = span > T(0) ? (back ? two - e : e) + lo : T(0);
    d = span > T(0) ? ((t < T(0)) != back ? -d : d) : T(0);
  }
  if constexpr (kPad >= 1) {
    d = x > T(0) && x < hi ? d : T(0);
    if constexpr (kNanHigh) {
      x = x < T(0) ? T(0) : x;
      x = x < hi ? x : hi;
    } else {
      x = x > T(0) ? x : T(0);
      x = x < hi ? x : hi;
    }
  }
  return x;
}

// The offset of a tap's row or column v (an integer value, maybe out of range or NaN) clamped into
// [0, size - 1]: every offset read is in the plane; an in-range tap's is its own.
template <typename T, typename Idx>
[[gnu::always_inline]] inline Idx clamp_index(T v, T hi, Idx last) {
  v = v > T(0) ? v : T(0);
  const Idx i = static_cast<Idx>(v < hi ? v : hi);
  return i < last ? i : last;
}

// The taps of len grid points g (kDims values each: x, y[, z]) in an input of D x H x W (D = 1 in 2-d).
template <typename T, typename Idx, int kDims, bool kNearest, int kPad, bool kGrad>
void block_taps(const T* __restrict g, int64_t len, int64_t D, int64_t H, int64_t W, bool align_corners,
                BlockTaps<T, Idx>& t) {
  const Axis<T> ax(W, align_corners), ay(H, align_corners), az(D, align_corners);
  const T axa = ax.a, axb = ax.b, hx = ax.hi, axlo = ax.lo, axspan = ax.span;
  const T aya = ay.a, ayb = ay.b, hy = ay.hi, aylo = ay.lo, ayspan = ay.span;
  const T aza = az.a, azb = az.b, hz = az.hi, azlo = az.lo, azspan = az.span;
  const Idx w_idx = static_cast<Idx>(W), hw_idx = static_cast<Idx>(H * W);
  const Idx last_x = static_cast<Idx>(W - 1), last_y = static_cast<Idx>(H - 1), last_z = static_cast<Idx>(D - 1);
  for (int64_t i = 0; i < len; ++i) {
    T dx, dy, dz = T(0);
    constexpr bool kNanHigh = kDims == 3;
    const T x = source<T, kPad, kNanHigh>(g[kDims * i], axa, axb, hx, axlo, axspan, dx);
    const T y = source<T, kPad, kNanHigh>(g[kDims * i + 1], aya, ayb, hy, aylo, ayspan, dy);
    const T z = kDims == 3 ? source<T, kPad, kNanHigh>(g[kDims * i + kDims - 1], aza, azb, hz, azlo, azspan, dz) : T(0);
    if constexpr (kNearest) {
      const T xr = std::nearbyint(x), yr = std::nearbyint(y), zr = std::nearbyint(z);  // half to even, as torch
      t.at[0][i] =
          clamp_index(zr, hz, last_z) * hw_idx + clamp_index(yr, hy, last_y) * w_idx + clamp_index(xr, hx, last_x);
      const bool in = xr >= T(0) && xr <= hx && yr >= T(0) && yr <= hy && zr >= T(0) && zr <= hz;
      t.ok[0][i] = in ? T(1) : T(0);
    } else {
      const T x0 = std::floor(x), y0 = std::floor(y), x1 = x0 + T(1), y1 = y0 + T(1);
      const T wx1 = x - x0, wx0 = x1 - x, wy1 = y - y0, wy0 = y1 - y;
      const bool in_x0 = x0 >= T(0) && x0 <= hx, in_x1 = x1 >= T(0) && x1 <= hx;
      const bool in_y0 = y0 >= T(0) && y0 <= hy, in_y1 = y1 >= T(0) && y1 <= hy;
      const Idx xi = clamp_index(x0, hx, last_x), xi1 = clamp_index(x1, hx, last_x);
      const Idx yi = clamp_index(y0, hy, last_y) * w_idx, yi1 = clamp_index(y1, hy, last_y) * w_idx;
      if constexpr (kDims == 2) {
        t.at[0][i] = yi + xi, t.at[1][i] = yi + xi1, t.at[2][i] = yi1 + xi, t.at[3][i] = yi1 + xi1;
        t.w[0][i] = wx0 * wy0, t.w[1][i] = wx1 * wy0, t.w[2][i] = wx0 * wy1, t.w[3][i] = wx1 * wy1;
        t.ok[0][i] = in_x0 && in_y0 ? T(1) : T(0), t.ok[1][i] = in_x1 && in_y0 ? T(1) : T(0);
        t.ok[2][i] = in_x0 && in_y1 ? T(1) : T(0), t.ok[3][i] = in_x1 && in_y1 ? T(1) : T(0);
      } else {
        const T z0 = std::floor(z), z1 = z0 + T(1), wz1 = z - z0, wz0 = z1 - z;
        const bool in_z0 = z0 >= T(0) && z0 <= hz, in_z1 = z1 >= T(0) && z1 <= hz;
        const Idx zi = clamp_index(z0, hz, last_z) * hw_idx, zi1 = clamp_index(z1, hz, last_z) * hw_idx;
        const Idx row[4] = {zi + yi, zi + yi1, zi1 + yi, zi1 + yi1};  // (y, z): 00, 10, 01, 11
        const bool row_in[4] = {in_y0 && in_z0, in_y1 && in_z0, in_y0 && in_z1, in_y1 && in_z1};
        for (int r = 0; r < 4; ++r) {
          t.at[2 * r][i] = row[r] + xi, t.at[2 * r + 1][i] = row[r] + xi1;
          t.ok[2 * r][i] = row_in[r] && in_x0 ? T(1) : T(0), t.ok[2 * r + 1][i] = row_in[r] && in_x1 ? T(1) : T(0);
        }
        // torch's products, x first: wx * wy * wz
        t.w[0][i] = wx0 * wy0 * wz0, t.w[1][i] = wx1 * wy0 * wz0, t.w[2][i] = wx0 * wy1 * wz0;
        t.w[3][i] = wx1 * wy1 * wz0, t.w[4][i] = wx0 * wy0 * wz1, t.w[5][i] = wx1 * wy0 * wz1;
        t.w[6][i] = wx0 * wy1 * wz1, t.w[7][i] = wx1 * wy1 * wz1;
        if constexpr (kGrad) t.wz0[i] = wz0, t.wz1[i] = wz1, t.dz[i] = dz;
      }
      if constexpr (kGrad) {
        t.wx0[i] = wx0, t.wx1[i] = wx1, t.wy0[i] = wy0, t.wy1[i] = wy1;
        t.dx[i] = dx, t.dy[i] = dy;
      }
    }
  }
}

// o[i] = the block's samples of one channel's plane. 2-d: every bilinear tap multiplied by its weight, as
// torch's masked gathers; 3-d: out-of-range taps skipped (their weights not multiplied in), as torch's
// 3-d kernel, so a NaN grid point gives 0 there.
template <typename T, typename Idx, int kDims, bool kNearest>
void apply_taps(const T* __restrict plane, const BlockTaps<T, Idx>& t, int64_t len, T* __restrict o) {
  if constexpr (kNearest) {
    for (int64_t i = 0; i < len; ++i) {
      const T v = plane[t.at[0][i]];
      o[i] = t.ok[0][i] != T(0) ? v : T(0);
    }
  } else if constexpr (kDims == 2) {
    for (int64_t i = 0; i < len; ++i) {
      const T v0 = plane[t.at[0][i]], v1 = plane[t.at[1][i]], v2 = plane[t.at[2][i]], v3 = plane[t.at[3][i]];
      const T a = t.w[0][i] * (t.ok[0][i] != T(0) ? v0 : T(0)), b = t.w[1][i] * (t.ok[1][i] != T(0) ? v1 : T(0));
      const T c = t.w[2][i] * (t.ok[2][i] != T(0) ? v2 : T(0)), d = t.w[3][i] * (t.ok[3][i] != T(0) ? v3 : T(0));
      o[i] = ((a + b) + c) + d;  // torch's order
    }
  } else {
    for (int64_t i = 0; i < len; ++i) {
      T s = T(0);
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const T v = plane[t.at[k][i]];
        s += t.ok[k][i] != T(0) ? v * t.w[k][i] : T(0);
      }
      o[i] = s;
    }
  }
}

// The blocks of output pixels [b, e) (of N * Q), never across a batch item: f(n, q0, len, grid points).
template <typename F>
void for_blocks(int64_t b, int64_t e, int64_t Q, const F& f) {
  for (int64_t p0 = b; p0 < e;) {
    const int64_t n = p0 / Q, q0 = p0 % Q, len = std::min({kBlock, e - p0, Q - q0});
    f(n, q0, len);
    p0 += len;
  }
}

template <typename T, typename Idx, int kDims, bool kNearest, int kPad>
void forward(const GridSampleGeometry& s, const T* x, const T* grid, T* out) {
  const int64_t plane = s.D * s.H * s.W, C = s.C, Q = s.Q;
  parallel_for(0, s.N * Q, std::max<int64_t>(kBlock, 16384 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
    BlockTaps<T, Idx> taps;
    for_blocks(b, e, Q, [&](int64_t n, int64_t q0, int64_t len) {
      block_taps<T, Idx, kDims, kNearest, kPad, false>(grid + kDims * (n * Q + q0), len, s.D, s.H, s.W, s.align_corners,
                                                       taps);
      for (int64_t c = 0; c < C; ++c)
        apply_taps<T, Idx, kDims, kNearest>(x + (n * C + c) * plane, taps, len, out + (n * C + c) * Q + q0);
    });
  });
}

// gin += gout through the taps. Threads take runs of (n, c) planes, each plane's additions in pixel
// order whatever the number of threads; a thread computes each block's taps once for its channels of
// that batch item.
template <typename T, typename Idx, int kDims, bool kNearest, int kPad>
void input_grad(const GridSampleGeometry& s, const T* grid, const T* gout, T* gin) {
  constexpr int kTaps = kNearest ? 1 : 1 << kDims;
  const int64_t plane_size = s.D * s.H * s.W, C = s.C, Q = s.Q;
  parallel_for(0, s.N * C, std::max<int64_t>(1, 32768 / std::max<int64_t>(Q, 1)), [&](int64_t b, int64_t e) {
    BlockTaps<T, Idx> taps;
    for (int64_t n = b / C; n * C < e; ++n) {
      const int64_t c0 = std::max(b, n * C) - n * C, c1 = std::min(e, (n + 1) * C) - n * C;
      for_blocks(n * Q, (n + 1) * Q, Q, [&](int64_t, int64_t q0, int64_t len) {
        block_taps<T, Idx, kDims, kNearest, kPad, false>(grid + kDims * (n * Q + q0), len, s.D, s.H, s.W,
                                                         s.align_corners, taps);
        for (int64_t c = c0; c < c1; ++c) {
          T* plane = gin + (n * C + c) * plane_size;
          const T* go = gout + (n * C + c) * Q + q0;
          for (int64_t i = 0; i < len; ++i)
            for (int k = 0; k < kTaps; ++k)
              if (taps.ok[k][i] != T(0)) plane[taps.at[k][i]] += kNearest ? go[i] : taps.w[k][i] * go[i];
        }
      });
    }
  });
}

// ggrid = the sums over channels of gout times the taps' differences, scaled by d(coordinate)/d(grid).
template <typename T, typename Idx, int kDims, int kPad>
void grid_grad(const GridSampleGeometry& s, const T* x, const T* grid, const T* gout, T* ggrid) {
  const int64_t plane_size = s.D * s.H * s.W, C = s.C, Q = s.Q;
  parallel_for(0, s.N * Q, std::max<int64_t>(kBlock, 16384 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
    BlockTaps<T, Idx> t;
    T sx[kBlock], sy[kBlock], sz[kBlock];
    for_blocks(b, e, Q, [&](int64_t n, int64_t q0, int64_t len) {
      block_taps<T, Idx, kDims, false, kPad, true>(grid + kDims * (n * Q + q0), len, s.D, s.H, s.W, s.align_corners, t);
      std::fill(sx, sx + len, T(0));
      std::fill(sy, sy + len, T(0));
      std::fill(sz, sz + len, T(0));
      for (int64_t c = 0; c < C; ++c) {
        const T* __restrict plane = x + (n * C + c) * plane_size;
        const T* __restrict go = gout + (n * C + c) * Q + q0;
        if constexpr (kDims == 2) {
          for (int64_t i = 0; i < len; ++i) {
            const T v0 = t.ok[0][i] != T(0) ? plane[t.at[0][i]] : T(0),
                    v1 = t.ok[1][i] != T(0) ? plane[t.at[1][i]] : T(0);
            const T v2 = t.ok[2][i] != T(0) ? plane[t.at[2][i]] : T(0),
                    v3 = t.ok[3][i] != T(0) ? plane[t.at[3][i]] : T(0);
            sx[i] += go[i] * ((v1 - v0) * t.wy0[i] + (v3 - v2) * t.wy1[i]);
            sy[i] += go[i] * ((v2 - v0) * t.wx0[i] + (v3 - v1) * t.wx1[i]);
          }
        } else {
          for (int64_t i = 0; i < len; ++i) {
            T v[8];
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) v[k] = t.ok[k][i] != T(0) ? plane[t.at[k][i]] : T(0);
            const T wx0 = t.wx0[i], wx1 = t.wx1[i], wy0 = t.wy0[i], wy1 = t.wy1[i], wz0 = t.wz0[i], wz1 = t.wz1[i];
            // v[x + 2 y + 4 z]: differences along x over the (y, z) rows, along y over (x, z), along z over (x, y)
            sx[i] += go[i] * (((v[1] - v[0]) * wy0 + (v[3] - v[2]) * wy1) * wz0 +
                              ((v[5] - v[4]) * wy0 + (v[7] - v[6]) * wy1) * wz1);
            sy[i] += go[i] * (((v[2] - v[0]) * wx0 + (v[3] - v[1]) * wx1) * wz0 +
                              ((v[6] - v[4]) * wx0 + (v[7] - v[5]) * wx1) * wz1);
            sz[i] += go[i] * (((v[4] - v[0]) * wx0 + (v[5] - v[1]) * wx1) * wy0 +
                              ((v[6] - v[2]) * wx0 + (v[7] - v[3]) * wx1) * wy1);
          }
        }
      }
      T* gg = ggrid + kDims * (n * Q + q0);
      for (int64_t i = 0; i < len; ++i) {
        gg[kDims * i] = sx[i] * t.dx[i], gg[kDims * i + 1] = sy[i] * t.dy[i];
        if constexpr (kDims == 3) gg[kDims * i + 2] = sz[i] * t.dz[i];
      }
    });
  });
}

// f(T{}, Idx{}, dims, nearest, padding) with the last three as compile-time constants.
template <typename F>
void with_modes(ScalarType dt, const GridSampleGeometry& s, const F& f) {
  auto pad = [&](auto t, auto idx, auto nearest) {
    auto dims = [&](auto padding) {
      if (s.dims == 3)
        f(t, idx, std::integral_constant<int, 3>{}, nearest, padding);
      else
        f(t, idx, std::integral_constant<int, 2>{}, nearest, padding);
    };
    if (s.padding == 0)
      dims(std::integral_constant<int, 0>{});
    else if (s.padding == 1)
      dims(std::integral_constant<int, 1>{});
    else
      dims(std::integral_constant<int, 2>{});
  };
  auto mode = [&](auto t, auto idx) {
    if (s.nearest)
      pad(t, idx, std::true_type{});
    else
      pad(t, idx, std::false_type{});
  };
  auto index = [&](auto t) {
    if (s.D * s.H * s.W < (int64_t{1} << 31))
      mode(t, int32_t{});
    else
      mode(t, int64_t{});
  };
  if (dt == ScalarType::Float32)
    index(float{});
  else
    index(double{});
}

}  // namespace

void EMBER_ISA_KERNEL(grid_sample_forward)(ScalarType dt, const GridSampleGeometry& s, const void* x, const void* grid,
                                           void* out) {
  with_modes(dt, s, [&](auto t, auto idx, auto dims, auto nearest, auto pad) {
    using T = decltype(t);
    forward<T, decltype(idx), dims(), nearest(), pad()>(s, static_cast<const T*>(x), static_cast<const T*>(grid),
                                                        static_cast<T*>(out));
  });
}

void EMBER_ISA_KERNEL(grid_sample_backward)(ScalarType dt, const GridSampleGeometry& s, const void* x, const void* grid,
                                            const void* gout, void* gin, void* ggrid) {
  with_modes(dt, s, [&](auto t, auto idx, auto dims, auto nearest, auto pad) {
    using T = decltype(t);
    using Idx = decltype(idx);
    const T* g = static_cast<const T*>(grid);
    const T* go = static_cast<const T*>(gout);
    if (gin) input_grad<T, Idx, dims(), nearest(), pad()>(s, g, go, static_cast<T*>(gin));
    if constexpr (!nearest())
      if (ggrid) grid_grad<T, Idx, dims(), pad()>(s, static_cast<const T*>(x), g, go, static_cast<T*>(ggrid));
  });
}

}  // namespace ember::cpu

#include "ember/cpu/isa_end.h"
