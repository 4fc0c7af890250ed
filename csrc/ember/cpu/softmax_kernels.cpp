// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/softmax_kernels.h"

#include <cmath>
#include <limits>
#include <vector>

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/reduce_kernels.h"
#include "ember/cpu/vec_math.h"

namespace ember::cpu {
namespace {

// One contiguous float row: y = softmax(x) or log_softmax(x), in the widest vectors (vfw).
void float_row(const float* x, float* y, int64_t n, bool log) {
  constexpr int W = kVecW;
  float m = reduce_contiguous(x, n, ExtremumOp<float, true>{});
  const vfw mv = splatw(m);
  vfw acc0 = splatw(0.0f), acc1 = acc0;
  int64_t k = 0;
  if (log) {
    for (; k + 2 * W <= n; k += 2 * W) {
      acc0 += expw_ftz(loadw(x + k) - mv);
      acc1 += expw_ftz(loadw(x + k + W) - mv);
    }
    for (; k + W <= n; k += W) acc0 += expw_ftz(loadw(x + k) - mv);
  } else {
    for (; k + 2 * W <= n; k += 2 * W) {
      vfw e0 = expw_ftz(loadw(x + k) - mv), e1 = expw_ftz(loadw(x + k + W) - mv);
      storew(y + k, e0);
      storew(y + k + W, e1);
      acc0 += e0;
      acc1 += e1;
    }
    for (; k + W <= n; k += W) {
      vfw e = expw_ftz(loadw(x + k) - mv);
      storew(y + k, e);
      acc0 += e;
    }
  }
  float s = lane_sum(acc0 + acc1);
  for (; k < n; ++k) {
    float e = exp_f_ftz(x[k] - m);
    if (!log) y[k] = e;
    s += e;
  }
  if (log) {  // (x - max) - log(sum), as torch: x - (max + log(sum)) loses log(sum) next to a huge max
    const float lg = std::log(s);
    const vfw lgv = splatw(lg);
    k = 0;
    for (; k + W <= n; k += W) storew(y + k, (loadw(x + k) - mv) - lgv);
    for (; k < n; ++k) y[k] = (x[k] - m) - lg;
  } else {
    const float inv = 1.0f / s;
    const vfw invv = splatw(inv);
    k = 0;
    for (; k + W <= n; k += W) storew(y + k, loadw(y + k) * invv);
    for (; k < n; ++k) y[k] *= inv;
  }
}

// Sum of term(k) for k < n in 8 interleaved partial sums (vectorizes; a single running sum is a
// chain of dependent adds), folded pairwise.
template <typename F>
inline double double_sum(int64_t n, const F& term) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) acc[j] += term(k + j);
  for (; k < n; ++k) acc[k & 7] += term(k);
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// One contiguous row of another type, computed in M (float for 16-bit floats, double for double).
template <typename T>
void generic_row(const T* x, T* y, int64_t n, bool log, std::vector<float>& buf) {
  if constexpr (std::is_same_v<T, float>) {
    float_row(x, y, n, log);
  } else if constexpr (std::is_same_v<opmath_t<T>, float>) {
    buf.resize(2 * n);
    row_to_float(x, buf.data(), n);
    float_row(buf.data(), buf.data() + n, n, log);
    row_from_float(buf.data() + n, y, n);
  } else {  // double: e^(x - max) into y in a loop that vectorizes (Note [Double exp]), then their sum
    static_assert(std::is_same_v<T, double>);
    const double m = reduce_contiguous(x, n, ExtremumOp<T, true>{});
    for (int64_t k = 0; k < n; ++k) y[k] = math::exp(x[k] - m);
    const double s = double_sum(n, [y](int64_t k) { return y[k]; });
    if (log) {
      const double lg = std::log(s);
      for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) - lg;
    } else {
      const double inv = 1.0 / s;
      for (int64_t k = 0; k < n; ++k) y[k] *= inv;
    }
  }
}

// A tile of `len` (<= 64) float columns of an (R, inner) block: 8 columns per vector, all of a
// row's vectors side by side so every row access reads contiguous memory.
void float_columns(const float* xb, float* yb, int64_t R, int64_t inner, int64_t len, bool log) {
  constexpr int kMaxVecs = 8;
  int nv = static_cast<int>(len / kVecF);
  vf8 m[kMaxVecs], s[kMaxVecs];
  for (int v = 0; v < nv; ++v) m[v] = splat(-std::numeric_limits<float>::infinity()), s[v] = splat(0.0f);
  for (int64_t r = 0; r < R; ++r)
    for (int v = 0; v < nv; ++v) m[v] = max_nan(m[v], load8(xb + r * inner + v * 8));
  for (int64_t r = 0; r < R; ++r)
    for (int v = 0; v < nv; ++v) {
      vf8 e = exp8_ftz(load8(xb + r * inner + v * 8) - m[v]);
      if (!log) store8(yb + r * inner + v * 8, e);
      s[v] += e;
    }
  for (int v = 0; v < nv; ++v) {
    if (log) {
      for (int j = 0; j < kVecF; ++j) s[v][j] = std::log(s[v][j]);
    } else {
      s[v] = 1.0f / s[v];
    }
  }
  for (int64_t r = 0; r < R; ++r)
    for (int v = 0; v < nv; ++v) {
      float* out = yb + r * inner + v * 8;
      store8(out, log ? (load8(xb + r * inner + v * 8) - m[v]) - s[v] : load8(out) * s[v]);
    }
  // Leftover columns one by one.
  for (int64_t j = nv * 8; j < len; ++j) {
    float mx = -std::numeric_limits<float>::infinity(), sum = 0;
    for (int64_t r = 0; r < R; ++r) {
      float v = xb[r * inner + j];
      mx = (mx > v || mx != mx) ? mx : v;
    }
    for (int64_t r = 0; r < R; ++r) {
      float e = exp_f_ftz(xb[r * inner + j] - mx);
      if (!log) yb[r * inner + j] = e;
      sum += e;
    }
    float lg = std::log(sum), inv = 1.0f / sum;
    for (int64_t r = 0; r < R; ++r) yb[r * inner + j] = log ? (xb[r * inner + j] - mx) - lg : yb[r * inner + j] * inv;
  }
}

template <typename T>
void softmax_t(const T* x, T* y, int64_t outer, int64_t R, int64_t inner, bool log) {
  using M = opmath_t<T>;
  if (outer == 0 || R == 0 || inner == 0) return;
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
      std::vector<float> buf;
      for (int64_t o = b; o < e; ++o) generic_row(x + o * R, y + o * R, R, log, buf);
    });
    return;
  }
  // Columns: a tile of `inner` positions is reduced over R at once (contiguous along the tile).
  constexpr int64_t kTile = 64;
  int64_t tiles = (inner + kTile - 1) / kTile;
  ExtremumOp<T, true> mx;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / (R * kTile)), [&](int64_t b, int64_t e) {
    M m[kTile], s[kTile];
    for (int64_t w = b; w < e; ++w) {
      int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
      const T* xb = x + o * R * inner + j0;
      T* yb = y + o * R * inner + j0;
      if constexpr (std::is_same_v<T, float>) {
        float_columns(xb, yb, R, inner, len, log);
        continue;
      }
      for (int64_t j = 0; j < len; ++j) m[j] = mx.init(), s[j] = 0;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t j = 0; j < len; ++j) m[j] = mx.step(m[j], xb[r * inner + j]);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t j = 0; j < len; ++j) {
          M ev = exp_any<M>(static_cast<M>(xb[r * inner + j]) - m[j]);
          if (!log) yb[r * inner + j] = static_cast<T>(ev);
          s[j] += ev;
        }
      if (log)
        for (int64_t j = 0; j < len; ++j) s[j] = std::log(s[j]);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t j = 0; j < len; ++j) {
          T& out = yb[r * inner + j];
          out = log ? static_cast<T>((static_cast<M>(xb[r * inner + j]) - m[j]) - s[j])
                    : static_cast<T>(static_cast<M>(out) / s[j]);
        }
    }
  });
}

// One row of the backward: sum first (g y, or g), then the gradient in a second pass.
void float_backward_row(const float* g, const float* y, float* gx, int64_t n, bool log) {
  vf8 acc0 = splat(0.0f), acc1 = acc0;
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    vf8 g0 = load8(g + k), g1 = load8(g + k + 8);
    acc0 += log ? g0 : g0 * load8(y + k);
    acc1 += log ? g1 : g1 * load8(y + k + 8);
  }
  for (; k + 8 <= n; k += 8) acc0 += log ? load8(g + k) : load8(g + k) * load8(y + k);
  acc0 += acc1;
  float s = 0;
  for (int j = 0; j < kVecF; ++j) s += acc0[j];
  for (; k < n; ++k) s += log ? g[k] : g[k] * y[k];
  const vf8 sv = splat(s);
  k = 0;
  if (log) {
    for (; k + 8 <= n; k += 8) store8(gx + k, load8(g + k) - exp8(load8(y + k)) * sv);
    for (; k < n; ++k) gx[k] = g[k] - exp_f(y[k]) * s;
  } else {
    for (; k + 8 <= n; k += 8) store8(gx + k, load8(y + k) * (load8(g + k) - sv));
    for (; k < n; ++k) gx[k] = y[k] * (g[k] - s);
  }
}

template <typename T>
void softmax_backward_t(const T* g, const T* y, T* gx, int64_t rows, int64_t R, bool log) {
  if (rows == 0 || R == 0) return;
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
    // 16-bit floats: a chunk's rows in float, each rounded once at the end
    std::vector<float> buf(std::is_same_v<opmath_t<T>, float> && !std::is_same_v<T, float> ? 3 * R : 0);
    for (int64_t o = b; o < e; ++o) {
      const T *gr = g + o * R, *yr = y + o * R;
      T* out = gx + o * R;
      if constexpr (std::is_same_v<T, float>) {
        float_backward_row(gr, yr, out, R, log);
      } else if constexpr (std::is_same_v<opmath_t<T>, float>) {
        float *gf = buf.data(), *yf = gf + R, *xf = yf + R;
        row_to_float(gr, gf, R);
        row_to_float(yr, yf, R);
        float_backward_row(gf, yf, xf, R, log);
        row_from_float(xf, out, R);
      } else {  // double
        static_assert(std::is_same_v<T, double>);
        if (log) {
          const double s = double_sum(R, [gr](int64_t k) { return gr[k]; });
          for (int64_t k = 0; k < R; ++k) out[k] = gr[k] - math::exp(yr[k]) * s;
        } else {
          const double s = double_sum(R, [gr, yr](int64_t k) { return gr[k] * yr[k]; });
          for (int64_t k = 0; k < R; ++k) out[k] = yr[k] * (gr[k] - s);
        }
      }
    }
  });
}

}  // namespace

void EMBER_ISA_KERNEL(softmax_backward_kernel)(const Tensor& g, const Tensor& y, Tensor& gx, int64_t rows, int64_t R,
                                               bool log) {
  EMBER_DISPATCH_FLOAT(g.dtype(), "softmax_backward", [&] {
    softmax_backward_t(g.data<scalar_t>(), y.data<scalar_t>(), gx.data<scalar_t>(), rows, R, log);
  });
}

void EMBER_ISA_KERNEL(softmax_kernel)(const Tensor& x, Tensor& y, int64_t outer, int64_t R, int64_t inner, bool log,
                                      const char* name) {
  EMBER_DISPATCH_FLOAT(x.dtype(), name,
                       [&] { softmax_t(x.data<scalar_t>(), y.data<scalar_t>(), outer, R, inner, log); });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
