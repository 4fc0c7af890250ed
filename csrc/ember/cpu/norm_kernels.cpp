// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). CPU kernels of batch_norm and layer_norm
// (ops/nn_norm.cpp). Statistics are two-pass (mean, then the sum of squared deviations) over data that stays in cache:
// a layer_norm row, or one channel's strip of a batch_norm input. Row sums use 32 independent accumulators, which the
// compiler vectorizes without reassociating. Cross-row sums (batch_norm channels, layer_norm dw/db) are added per fixed
// block, so results do not depend on the thread count.
#include <cmath>
#include <vector>

#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/ops/nn_kernels.h"

// Kernel code from here on (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"  // row_to_float / row_from_float

namespace ember::cpu {
namespace {

// Row sums keep 32 independent partial sums (4 vectors of 8 floats at AVX2: one chain of adds
// waits on each add's latency, four keep the units busy; 8 partial sums held group_norm's forward
// at 1.3x torch's time), 8 of them for the row's last < 32 elements; then folded pairwise.
constexpr int kLanes = 32;
template <typename M>
M fold_lanes(M* acc, M s) {
  for (int j = 0; j < 16; ++j) acc[j] += acc[j + 16];
  for (int j = 0; j < 8; ++j) acc[j] += acc[j + 8];
  for (int j = 0; j < 8; ++j) s += acc[j];
  return s;
}
template <typename M, typename T>
M row_sum(const T* x, int64_t n) {
  M acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += static_cast<M>(x[k + j]);
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<M>(x[k + j]);
  M s = 0;
  for (; k < n; ++k) s += static_cast<M>(x[k]);
  return fold_lanes(acc, s);
}
// sum((x - m)^2)
template <typename M, typename T>
M row_sqdev(const T* x, int64_t n, M m) {
  M acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      M d = static_cast<M>(x[k + j]) - m;
      acc[j] += d * d;
    }
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) {
      M d = static_cast<M>(x[k + j]) - m;
      acc[j] += d * d;
    }
  M s = 0;
  for (; k < n; ++k) {
    M d = static_cast<M>(x[k]) - m;
    s += d * d;
  }
  return fold_lanes(acc, s);
}
// sum(dy) and sum(dy * (x - m))
template <typename M, typename T>
void row_grad_sums(const T* dy, const T* x, int64_t n, M m, M& s1, M& s2) {
  M a[kLanes] = {}, b[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      M g = static_cast<M>(dy[k + j]);
      a[j] += g;
      b[j] += g * (static_cast<M>(x[k + j]) - m);
    }
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) {
      M g = static_cast<M>(dy[k + j]);
      a[j] += g;
      b[j] += g * (static_cast<M>(x[k + j]) - m);
    }
  M r1 = 0, r2 = 0;
  for (; k < n; ++k) {
    M g = static_cast<M>(dy[k]);
    r1 += g;
    r2 += g * (static_cast<M>(x[k]) - m);
  }
  s1 = fold_lanes(a, r1), s2 = fold_lanes(b, r2);
}

// (N, C) inputs (BatchNorm1d on a batch of vectors) reduce columns: blocks of kColumnBlock
// columns run on the threads, each walking the rows in order with double sums per column, so a
// column's sum is the same for any thread count. The row piece is read as M (16-bit elements
// converted by the vector paths of loops.h first): one thread converting a Half at a time made
// float16 batch_norm 6.5x torch's time.
constexpr int64_t kColumnBlock = 256;
template <typename M, typename T>
const M* row_as(const T* p, M* buf, int64_t w) {
  if constexpr (std::is_same_v<T, M>) {
    return p;
  } else {
    row_to_float(p, buf, w);
    return buf;
  }
}
// A row of n elements for the planar loops: a float16 row converted into buf by vector code (one
// Half at a time, float16 batch_norm took 7x torch's time), any other row itself (bfloat16's
// conversion is a shift that vectorizes inline: through a buffer it measured slower).
template <typename T>
constexpr bool kHalfViaFloat = std::is_same_v<T, Half>;
template <typename M, typename T>
auto wide_row(const T* p, int64_t n, std::vector<M>& buf) {
  if constexpr (kHalfViaFloat<T>) {
    buf.resize(n);
    row_to_float(p, buf.data(), n);
    return static_cast<const M*>(buf.data());
  } else {
    return p;
  }
}
template <typename M, typename T>
void row_from_float_as(const M* p, T* out, int64_t w) {  // the way back: M to T
  if constexpr (std::is_same_v<T, M>)
    std::copy(p, p + w, out);
  else
    row_from_float(p, out, w);
}
template <typename F>
void for_column_blocks(int64_t N, int64_t C, const F& f) {
  const int64_t blocks = (C + kColumnBlock - 1) / kColumnBlock;
  parallel_for(0, blocks, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * kColumnBlock, 1)),
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b) f(b * kColumnBlock, std::min(kColumnBlock, C - b * kColumnBlock));
               });
}

template <typename T>
void bn_stats(const BatchNormArgs& a, Tensor& mean_t, Tensor& var_t) {
  using M = opmath_t<T>;
  const T* x = a.x.data<T>();
  M* mean = mean_t.data<M>();
  M* var = var_t.data<M>();
  const int64_t N = a.N, C = a.C, I = a.inner;
  const double cnt = static_cast<double>(N * I);
  if (I == 1) {  // (N, C): column blocks, rows in order, double sums
    for_column_blocks(N, C, [&](int64_t c0, int64_t w) {
      double s[kColumnBlock] = {}, q[kColumnBlock] = {};
      M buf[kColumnBlock];
      for (int64_t n = 0; n < N; ++n) {
        const M* r = row_as(x + n * C + c0, buf, w);
        for (int64_t j = 0; j < w; ++j) s[j] += static_cast<double>(r[j]);
      }
      for (int64_t j = 0; j < w; ++j) s[j] /= cnt;
      for (int64_t n = 0; n < N; ++n) {
        const M* r = row_as(x + n * C + c0, buf, w);
        for (int64_t j = 0; j < w; ++j) {
          const double d = static_cast<double>(r[j]) - s[j];
          q[j] += d * d;
        }
      }
      for (int64_t j = 0; j < w; ++j) mean[c0 + j] = static_cast<M>(s[j]), var[c0 + j] = static_cast<M>(q[j] / cnt);
    });
    return;
  }
  parallel_for(0, C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * I, 1)), [&](int64_t c0, int64_t c1) {
    std::vector<M> buf;  // 16-bit planes as floats (a Half at a time: float16 batch_norm 7x torch's time)
    for (int64_t c = c0; c < c1; ++c) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n) s += static_cast<double>(row_sum<M>(wide_row(x + (n * C + c) * I, I, buf), I));
      double m = s / cnt;
      double q = 0;
      for (int64_t n = 0; n < N; ++n)
        q += static_cast<double>(row_sqdev<M>(wide_row(x + (n * C + c) * I, I, buf), I, static_cast<M>(m)));
      mean[c] = static_cast<M>(m);
      var[c] = static_cast<M>(q / cnt);
    }
  });
}

template <typename T>
void bn_apply(const BatchNormArgs& a, const Tensor& scale_t, const Tensor& shift_t, Tensor& y_t) {
  using M = opmath_t<T>;
  const T* x = a.x.data<T>();
  const M* scale = scale_t.data<M>();
  const M* shift = shift_t.data<M>();
  T* y = y_t.data<T>();
  const int64_t C = a.C, I = a.inner;
  if (I == 1) {
    parallel_for(0, a.N, std::max<int64_t>(1, kGrainSize / C), [&](int64_t n0, int64_t n1) {
      if constexpr (std::is_same_v<T, M>) {
        for (int64_t n = n0; n < n1; ++n)
          for (int64_t c = 0; c < C; ++c) y[n * C + c] = x[n * C + c] * scale[c] + shift[c];
      } else {  // 16-bit rows through float pieces (the vector conversions of loops.h)
        M in[kColumnBlock], out[kColumnBlock];
        for (int64_t n = n0; n < n1; ++n)
          for (int64_t c0 = 0; c0 < C; c0 += kColumnBlock) {
            const int64_t w = std::min(kColumnBlock, C - c0);
            row_to_float(x + n * C + c0, in, w);
            for (int64_t j = 0; j < w; ++j) out[j] = in[j] * scale[c0 + j] + shift[c0 + j];
            row_from_float(out, y + n * C + c0, w);
          }
      }
    });
    return;
  }
  parallel_for(0, a.N * C, std::max<int64_t>(1, kGrainSize / I), [&](int64_t r0, int64_t r1) {
    std::vector<M> in, out(kHalfViaFloat<T> ? I : 0);
    for (int64_t r = r0; r < r1; ++r) {
      M sc = scale[r % C], sh = shift[r % C];
      const auto* xr = wide_row(x + r * I, I, in);
      if constexpr (!kHalfViaFloat<T>) {
        T* yr = y + r * I;
        for (int64_t k = 0; k < I; ++k) yr[k] = static_cast<T>(static_cast<M>(xr[k]) * sc + sh);
      } else {
        for (int64_t k = 0; k < I; ++k) out[k] = xr[k] * sc + sh;
        row_from_float(out.data(), y + r * I, I);
      }
    }
  });
}

template <typename T>
void bn_grad_sums(const BatchNormArgs& a, const Tensor& dy_t, const Tensor& mean_t, Tensor& s1_t, Tensor& s2_t) {
  using M = opmath_t<T>;
  const T* x = a.x.data<T>();
  const T* dy = dy_t.data<T>();
  const M* mean = mean_t.data<M>();
  M* s1 = s1_t.data<M>();
  M* s2 = s2_t.data<M>();
  const int64_t N = a.N, C = a.C, I = a.inner;
  if (I == 1) {  // (N, C): column blocks, rows in order, double sums
    for_column_blocks(N, C, [&](int64_t c0, int64_t w) {
      double p[kColumnBlock] = {}, q[kColumnBlock] = {};
      M gbuf[kColumnBlock], xbuf[kColumnBlock];
      for (int64_t n = 0; n < N; ++n) {
        const M* g = row_as(dy + n * C + c0, gbuf, w);
        const M* r = row_as(x + n * C + c0, xbuf, w);
        for (int64_t j = 0; j < w; ++j) {
          p[j] += static_cast<double>(g[j]);
          q[j] += static_cast<double>(g[j]) * (static_cast<double>(r[j]) - static_cast<double>(mean[c0 + j]));
        }
      }
      for (int64_t j = 0; j < w; ++j) s1[c0 + j] = static_cast<M>(p[j]), s2[c0 + j] = static_cast<M>(q[j]);
    });
    return;
  }
  parallel_for(0, C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * I, 1)), [&](int64_t c0, int64_t c1) {
    std::vector<M> gbuf, xbuf;
    for (int64_t c = c0; c < c1; ++c) {
      double p = 0, q = 0;
      for (int64_t n = 0; n < N; ++n) {
        M r1, r2;
        row_grad_sums<M>(wide_row(dy + (n * C + c) * I, I, gbuf), wide_row(x + (n * C + c) * I, I, xbuf), I, mean[c],
                         r1, r2);
        p += r1, q += r2;
      }
      s1[c] = static_cast<M>(p), s2[c] = static_cast<M>(q);
    }
  });
}

template <typename T>
void bn_backward_input(const BatchNormArgs& a, const Tensor& dy_t, const Tensor& mean_t, const Tensor& kdy_t,
                       const Tensor& kx_t, const Tensor& kout_t, Tensor& dx_t) {
  using M = opmath_t<T>;
  const T* x = a.x.data<T>();
  const T* dy = dy_t.data<T>();
  const M *mean = mean_t.data<M>(), *kdy = kdy_t.data<M>(), *kx = kx_t.data<M>(), *ko = kout_t.data<M>();
  T* dx = dx_t.data<T>();
  const int64_t C = a.C, I = a.inner;
  if (I == 1) {  // (N, C): whole rows (a task per element of r % C cost more than the arithmetic)
    parallel_for(0, a.N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t n0, int64_t n1) {
      M gbuf[kColumnBlock], xbuf[kColumnBlock], out[kColumnBlock];
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t c0 = 0; c0 < C; c0 += kColumnBlock) {
          const int64_t w = std::min(kColumnBlock, C - c0);
          const M* g = row_as(dy + n * C + c0, gbuf, w);
          const M* r = row_as(x + n * C + c0, xbuf, w);
          for (int64_t j = 0; j < w; ++j) {
            const int64_t c = c0 + j;
            out[j] = (g[j] - kdy[c] - (r[j] - mean[c]) * kx[c]) * ko[c];
          }
          row_from_float_as(out, dx + n * C + c0, w);
        }
    });
    return;
  }
  parallel_for(0, a.N * C, std::max<int64_t>(1, kGrainSize / I), [&](int64_t r0, int64_t r1) {
    std::vector<M> xbuf, gbuf, out(kHalfViaFloat<T> ? I : 0);
    for (int64_t r = r0; r < r1; ++r) {
      int64_t c = r % C;
      M m = mean[c], a1 = kdy[c], a2 = kx[c], a3 = ko[c];
      const auto *xr = wide_row(x + r * I, I, xbuf), *gr = wide_row(dy + r * I, I, gbuf);
      if constexpr (!kHalfViaFloat<T>) {
        T* dr = dx + r * I;
        for (int64_t k = 0; k < I; ++k)
          dr[k] = static_cast<T>((static_cast<M>(gr[k]) - a1 - (static_cast<M>(xr[k]) - m) * a2) * a3);
      } else {
        for (int64_t k = 0; k < I; ++k) out[k] = (gr[k] - a1 - (xr[k] - m) * a2) * a3;
        row_from_float(out.data(), dx + r * I, I);
      }
    }
  });
}

// One float layer_norm row (the Half path's buffers): its mean and rstd, and y = (x - mean) *
// rstd (* w) (+ b), as the element loop of ln_forward computes them. One loop per case: with
// the `if (w)` inside, GCC made the loop carry a masked load through the stack (7x torch's time).
inline void ln_row(const float* xr, int64_t N, const float* w, const float* b, double eps, float* yr, float& mean,
                   float& rstd) {
  const float m = row_sum<float>(xr, N) / static_cast<float>(N);
  const float v = row_sqdev<float>(xr, N, m) / static_cast<float>(N);
  const float rs = 1.0f / std::sqrt(v + static_cast<float>(eps));
  mean = m, rstd = rs;
  if (w && b) {
    for (int64_t k = 0; k < N; ++k) yr[k] = (xr[k] - m) * rs * w[k] + b[k];
  } else if (w) {
    for (int64_t k = 0; k < N; ++k) yr[k] = (xr[k] - m) * rs * w[k];
  } else if (b) {
    for (int64_t k = 0; k < N; ++k) yr[k] = (xr[k] - m) * rs + b[k];
  } else {
    for (int64_t k = 0; k < N; ++k) yr[k] = (xr[k] - m) * rs;
  }
}

template <typename T>
void ln_forward(const Tensor& x_t, int64_t Mrows, int64_t N, const Tensor& w_t, const Tensor& b_t, double eps,
                Tensor& y_t, Tensor& mean_t, Tensor& rstd_t) {
  using M = opmath_t<T>;
  const T* x = x_t.data<T>();
  const T* w = w_t.defined() ? w_t.data<T>() : nullptr;
  const T* b = b_t.defined() ? b_t.data<T>() : nullptr;
  T* y = y_t.data<T>();
  M* mean = mean_t.data<M>();
  M* rstd = rstd_t.data<M>();
  if constexpr (std::is_same_v<T, Half>) {
    // Note [Half in float blocks] (cpu/loops.h): rows convert to float and back in one pass each,
    // the row's arithmetic runs on floats (a conversion per element access left float16 11x
    // torch's time); the same values as converting element by element. (bfloat16's conversion
    // is a shift, which the element loops vectorize inline.)
    std::vector<M> wf(w ? N : 0), bf(b ? N : 0);
    if (w) row_to_float(w, wf.data(), N);
    if (b) row_to_float(b, bf.data(), N);
    parallel_for(0, Mrows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<M> xf(N), yf(N);
      for (int64_t r = r0; r < r1; ++r) {
        row_to_float(x + r * N, xf.data(), N);
        ln_row(xf.data(), N, w ? wf.data() : nullptr, b ? bf.data() : nullptr, eps, yf.data(), mean[r], rstd[r]);
        row_from_float(yf.data(), y + r * N, N);
      }
    });
    return;
  }
  parallel_for(0, Mrows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * N;
      T* yr = y + r * N;
      M m = row_sum<M>(xr, N) / static_cast<M>(N);
      M v = row_sqdev<M>(xr, N, m) / static_cast<M>(N);
      M rs = M(1) / std::sqrt(v + static_cast<M>(eps));
      mean[r] = m, rstd[r] = rs;
      if (w && b) {
        for (int64_t k = 0; k < N; ++k)
          yr[k] = static_cast<T>((static_cast<M>(xr[k]) - m) * rs * static_cast<M>(w[k]) + static_cast<M>(b[k]));
      } else {
        for (int64_t k = 0; k < N; ++k) {
          M v2 = (static_cast<M>(xr[k]) - m) * rs;
          if (w) v2 *= static_cast<M>(w[k]);
          if (b) v2 += static_cast<M>(b[k]);
          yr[k] = static_cast<T>(v2);
        }
      }
    }
  });
}

template <typename T>
void ln_backward(const Tensor& x_t, const Tensor& dy_t, int64_t Mrows, int64_t N, const Tensor& mean_t,
                 const Tensor& rstd_t, const Tensor& w_t, Tensor& dx_t, Tensor& dw_t, Tensor& db_t) {
  using M = opmath_t<T>;
  const T* x = x_t.data<T>();
  const T* dy = dy_t.data<T>();
  const M* mean = mean_t.data<M>();
  const M* rstd = rstd_t.data<M>();
  const T* w = w_t.defined() ? w_t.data<T>() : nullptr;
  T* dx = dx_t.defined() ? dx_t.data<T>() : nullptr;
  const bool param_grads = dw_t.defined() || db_t.defined();
  const int64_t nb = param_grads ? std::min<int64_t>(Mrows, 32) : 1;
  std::vector<M> dwb(param_grads ? nb * N : 0, M(0)), dbb(param_grads ? nb * N : 0, M(0));
  // Per row: xhat and g = dy * w into buffers (plus the dw/db partial sums), then the two row
  // sums with 8 accumulators, then dx; every loop vectorizes. 16-bit rows (x, dy, w, dx) pass
  // through float buffers converted by the vector paths of loops.h (the same values; a Half at a
  // time made float16 layer_norm's backward 1.55x torch's time).
  constexpr bool kWide = !std::is_same_v<T, M>;
  std::vector<M> w_wide(kWide && w ? N : 0);
  if constexpr (kWide) {
    if (w) row_to_float(w, w_wide.data(), N);
  }
  auto body = [&](int64_t blk, int64_t r0, int64_t r1) {
    std::vector<M> g(N), xh(N), x_wide(kWide ? N : 0), g_wide(kWide ? N : 0);
    M* dwr = param_grads ? dwb.data() + blk * N : nullptr;
    M* dbr = param_grads ? dbb.data() + blk * N : nullptr;
    for (int64_t r = r0; r < r1; ++r) {
      const M *xr, *gr, *wr;
      if constexpr (kWide) {
        row_to_float(x + r * N, x_wide.data(), N);
        row_to_float(dy + r * N, g_wide.data(), N);
        xr = x_wide.data(), gr = g_wide.data(), wr = w ? w_wide.data() : nullptr;
      } else {
        xr = x + r * N, gr = dy + r * N, wr = w;
      }
      const M m = mean[r], rs = rstd[r];
      for (int64_t k = 0; k < N; ++k) xh[k] = (xr[k] - m) * rs;
      if (param_grads)
        for (int64_t k = 0; k < N; ++k) {
          M gy = gr[k];
          dwr[k] += gy * xh[k];
          dbr[k] += gy;
        }
      if (!dx) continue;
      if (wr) {
        for (int64_t k = 0; k < N; ++k) g[k] = gr[k] * wr[k];
      } else {
        for (int64_t k = 0; k < N; ++k) g[k] = gr[k];
      }
      M s1 = row_sum<M>(g.data(), N) / static_cast<M>(N);
      M a2[8] = {};
      int64_t k = 0;
      for (; k + 8 <= N; k += 8)
        for (int j = 0; j < 8; ++j) a2[j] += g[k + j] * xh[k + j];
      M s2 = 0;
      for (; k < N; ++k) s2 += g[k] * xh[k];
      for (int j = 0; j < 8; ++j) s2 += a2[j];
      s2 /= static_cast<M>(N);
      if constexpr (kWide) {
        for (k = 0; k < N; ++k) x_wide[k] = rs * (g[k] - s1 - xh[k] * s2);  // (x's buffer is free again)
        row_from_float(x_wide.data(), dx + r * N, N);
      } else {
        T* dr = dx + r * N;
        for (k = 0; k < N; ++k) dr[k] = rs * (g[k] - s1 - xh[k] * s2);
      }
    }
  };
  if (param_grads) {
    parallel_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) body(blk, Mrows * blk / nb, Mrows * (blk + 1) / nb);
    });
    M* dw = dw_t.defined() ? dw_t.data<M>() : nullptr;
    M* db = db_t.defined() ? db_t.data<M>() : nullptr;
    for (int64_t k = 0; k < N; ++k) {
      M a = 0, c = 0;
      for (int64_t blk = 0; blk < nb; ++blk) a += dwb[blk * N + k], c += dbb[blk * N + k];
      if (dw) dw[k] = a;
      if (db) db[k] = c;
    }
  } else {
    parallel_for(0, Mrows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N, 1)),
                 [&](int64_t r0, int64_t r1) { body(0, r0, r1); });
  }
}

// group_norm's forward, one (n, group) at a time (Note [Fused group norm] in ops/nn_norm.cpp): its
// statistics (two passes, as bn_stats: the group is in L1 for the second), then y = x k + s for its
// channels while the group is still in cache. Separate statistics and apply passes read a 4 MiB
// input twice from L2/L3: 1.23-1.35x torch's time, which fuses them the same way.
template <typename T>
void gn_forward(const Tensor& x_t, int64_t N, int64_t C, int64_t G, int64_t S, const Tensor& w_t, const Tensor& b_t,
                double eps, Tensor& y_t, Tensor& mean_t, Tensor& rstd_t) {
  using M = opmath_t<T>;
  const int64_t Cg = C / G, D = Cg * S;
  const T* x = x_t.data<T>();
  T* y = y_t.data<T>();
  M *mean = mean_t.data<M>(), *rstd = rstd_t.data<M>();
  const M* w = w_t.defined() ? w_t.data<M>() : nullptr;
  const M* b = b_t.defined() ? b_t.data<M>() : nullptr;
  parallel_for(0, N * G, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(D, 1)), [&](int64_t g0, int64_t g1) {
    for (int64_t gi = g0; gi < g1; ++gi) {
      const T* xg = x + gi * D;
      T* yg = y + gi * D;
      const double m = static_cast<double>(row_sum<M>(xg, D)) / static_cast<double>(D);
      const double q = static_cast<double>(row_sqdev<M>(xg, D, static_cast<M>(m)));
      const M mu = static_cast<M>(m), var = static_cast<M>(q / static_cast<double>(D));
      const M r = M(1) / std::sqrt(var + static_cast<M>(eps));
      mean[gi] = mu, rstd[gi] = r;
      const int64_t c0 = (gi % G) * Cg;
      for (int64_t j = 0; j < Cg; ++j) {
        const M k = w ? r * w[c0 + j] : r, sh = (b ? b[c0 + j] : M(0)) - mu * k;
        const T* xr = xg + j * S;
        T* yr = yg + j * S;
        for (int64_t i = 0; i < S; ++i) yr[i] = static_cast<T>(static_cast<M>(xr[i]) * k + sh);
      }
    }
  });
}

// dx = dy * ka[r] + x * kb[r] + kc[r] over rows r of `inner` elements (group_norm's input gradient,
// Note [Fused group norm] in ops/nn_norm.cpp).
template <typename T>
void rows_backward_input(const Tensor& x_t, const Tensor& dy_t, int64_t rows, int64_t inner, const Tensor& ka_t,
                         const Tensor& kb_t, const Tensor& kc_t, Tensor& dx_t) {
  using M = opmath_t<T>;
  const T* x = x_t.data<T>();
  const T* dy = dy_t.data<T>();
  const M *ka = ka_t.data<M>(), *kb = kb_t.data<M>(), *kc = kc_t.data<M>();
  T* dx = dx_t.data<T>();
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(inner, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const M a = ka[r], b = kb[r], c = kc[r];
      const T *xr = x + r * inner, *gr = dy + r * inner;
      T* dr = dx + r * inner;
      for (int64_t k = 0; k < inner; ++k)
        dr[k] = static_cast<T>(static_cast<M>(gr[k]) * a + static_cast<M>(xr[k]) * b + c);
    }
  });
}

}  // namespace

void EMBER_ISA_KERNEL(group_norm_backward_input)(const Tensor& x, const Tensor& dy, int64_t rows, int64_t inner,
                                                 const Tensor& ka, const Tensor& kb, const Tensor& kc, Tensor& dx) {
  EMBER_DISPATCH_FLOAT(x.dtype(), "group_norm_backward",
                       [&] { rows_backward_input<scalar_t>(x, dy, rows, inner, ka, kb, kc, dx); });
}
void EMBER_ISA_KERNEL(group_norm_forward)(const Tensor& x, int64_t N, int64_t C, int64_t G, int64_t spatial,
                                          const Tensor& w, const Tensor& b, double eps, Tensor& y, Tensor& mean,
                                          Tensor& rstd) {
  EMBER_DISPATCH_FLOAT(x.dtype(), "group_norm",
                       [&] { gn_forward<scalar_t>(x, N, C, G, spatial, w, b, eps, y, mean, rstd); });
}
void EMBER_ISA_KERNEL(batch_norm_stats)(const BatchNormArgs& a, Tensor& mean, Tensor& var) {
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "batch_norm", [&] { bn_stats<scalar_t>(a, mean, var); });
}
void EMBER_ISA_KERNEL(batch_norm_apply)(const BatchNormArgs& a, const Tensor& scale, const Tensor& shift, Tensor& y) {
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "batch_norm", [&] { bn_apply<scalar_t>(a, scale, shift, y); });
}
void EMBER_ISA_KERNEL(batch_norm_grad_sums)(const BatchNormArgs& a, const Tensor& dy, const Tensor& mean, Tensor& s1,
                                            Tensor& s2) {
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "batch_norm_backward", [&] { bn_grad_sums<scalar_t>(a, dy, mean, s1, s2); });
}
void EMBER_ISA_KERNEL(batch_norm_backward_input)(const BatchNormArgs& a, const Tensor& dy, const Tensor& mean,
                                                 const Tensor& k_dy, const Tensor& k_x, const Tensor& k_out,
                                                 Tensor& dx) {
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "batch_norm_backward",
                       [&] { bn_backward_input<scalar_t>(a, dy, mean, k_dy, k_x, k_out, dx); });
}
void EMBER_ISA_KERNEL(layer_norm_forward)(const Tensor& x, int64_t M, int64_t N, const Tensor& w, const Tensor& b,
                                          double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm", [&] { ln_forward<scalar_t>(x, M, N, w, b, eps, y, mean, rstd); });
}
void EMBER_ISA_KERNEL(layer_norm_backward)(const Tensor& x, const Tensor& dy, int64_t M, int64_t N, const Tensor& mean,
                                           const Tensor& rstd, const Tensor& w, Tensor& dx, Tensor& dw, Tensor& db) {
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm_backward",
                       [&] { ln_backward<scalar_t>(x, dy, M, N, mean, rstd, w, dx, dw, db); });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
