// softmax and log_softmax along one dim. The input is read as (outer, R, inner) (Note [Reduction
// layout]); contiguous rows (inner == 1) take three passes over a row that stays in cache: max,
// exp and sum, then scale; float rows use the 8-lane exp of cpu/vec_math.h.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/cpu/reduce_kernels.h"
#include "ember/cpu/vec_math.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;
using cpu::vf8;

// One contiguous float row: y = softmax(x) or log_softmax(x).
void float_row(const float* x, float* y, int64_t n, bool log) {
  float m = cpu::reduce_contiguous(x, n, cpu::ExtremumOp<float, true>{});
  vf8 acc0 = cpu::splat(0.0f), acc1 = acc0;
  int64_t k = 0;
  if (log) {
    for (; k + 16 <= n; k += 16) {
      acc0 += cpu::exp8(cpu::load8(x + k) - m);
      acc1 += cpu::exp8(cpu::load8(x + k + 8) - m);
    }
    for (; k + 8 <= n; k += 8) acc0 += cpu::exp8(cpu::load8(x + k) - m);
  } else {
    for (; k + 16 <= n; k += 16) {
      vf8 e0 = cpu::exp8(cpu::load8(x + k) - m), e1 = cpu::exp8(cpu::load8(x + k + 8) - m);
      cpu::store8(y + k, e0);
      cpu::store8(y + k + 8, e1);
      acc0 += e0;
      acc1 += e1;
    }
    for (; k + 8 <= n; k += 8) {
      vf8 e = cpu::exp8(cpu::load8(x + k) - m);
      cpu::store8(y + k, e);
      acc0 += e;
    }
  }
  acc0 += acc1;
  float s = 0;
  for (int j = 0; j < cpu::kVecF; ++j) s += acc0[j];
  for (; k < n; ++k) {
    float e = cpu::exp_f(x[k] - m);
    if (!log) y[k] = e;
    s += e;
  }
  if (log) {  // (x - max) - log(sum), as torch: x - (max + log(sum)) loses log(sum) next to a huge max
    float lg = std::log(s);
    k = 0;
    for (; k + 8 <= n; k += 8) cpu::store8(y + k, (cpu::load8(x + k) - m) - lg);
    for (; k < n; ++k) y[k] = (x[k] - m) - lg;
  } else {
    float inv = 1.0f / s;
    k = 0;
    for (; k + 8 <= n; k += 8) cpu::store8(y + k, cpu::load8(y + k) * inv);
    for (; k < n; ++k) y[k] *= inv;
  }
}

// One contiguous row of another type, computed in M (float for 16-bit floats, double for double).
template <typename T>
void generic_row(const T* x, T* y, int64_t n, bool log, std::vector<float>& buf) {
  if constexpr (std::is_same_v<T, float>) {
    float_row(x, y, n, log);
  } else if constexpr (std::is_same_v<opmath_t<T>, float>) {
    buf.resize(2 * n);
    for (int64_t k = 0; k < n; ++k) buf[k] = static_cast<float>(x[k]);
    float_row(buf.data(), buf.data() + n, n, log);
    for (int64_t k = 0; k < n; ++k) y[k] = static_cast<T>(buf[n + k]);
  } else {
    using M = opmath_t<T>;
    M m = cpu::reduce_contiguous(x, n, cpu::ExtremumOp<T, true>{});
    M s = 0;
    for (int64_t k = 0; k < n; ++k) {
      M e = std::exp(static_cast<M>(x[k]) - m);
      if (!log) y[k] = static_cast<T>(e);
      s += e;
    }
    if (log) {
      M lg = std::log(s);
      for (int64_t k = 0; k < n; ++k) y[k] = static_cast<T>((static_cast<M>(x[k]) - m) - lg);
    } else {
      M inv = M(1) / s;
      for (int64_t k = 0; k < n; ++k) y[k] = static_cast<T>(static_cast<M>(y[k]) * inv);
    }
  }
}

// A tile of `len` (<= 64) float columns of an (R, inner) block: 8 columns per vector, all of a
// row's vectors side by side so every row access reads contiguous memory.
void float_columns(const float* xb, float* yb, int64_t R, int64_t inner, int64_t len, bool log) {
  constexpr int kMaxVecs = 8;
  int nv = static_cast<int>(len / cpu::kVecF);
  vf8 m[kMaxVecs], s[kMaxVecs];
  for (int v = 0; v < nv; ++v) m[v] = cpu::splat(-std::numeric_limits<float>::infinity()), s[v] = cpu::splat(0.0f);
  for (int64_t r = 0; r < R; ++r)
    for (int v = 0; v < nv; ++v) m[v] = cpu::max_nan(m[v], cpu::load8(xb + r * inner + v * 8));
  for (int64_t r = 0; r < R; ++r)
    for (int v = 0; v < nv; ++v) {
      vf8 e = cpu::exp8(cpu::load8(xb + r * inner + v * 8) - m[v]);
      if (!log) cpu::store8(yb + r * inner + v * 8, e);
      s[v] += e;
    }
  for (int v = 0; v < nv; ++v) {
    if (log) {
      for (int j = 0; j < cpu::kVecF; ++j) s[v][j] = std::log(s[v][j]);
    } else {
      s[v] = 1.0f / s[v];
    }
  }
  for (int64_t r = 0; r < R; ++r)
    for (int v = 0; v < nv; ++v) {
      float* out = yb + r * inner + v * 8;
      cpu::store8(out, log ? (cpu::load8(xb + r * inner + v * 8) - m[v]) - s[v] : cpu::load8(out) * s[v]);
    }
  // Leftover columns one by one.
  for (int64_t j = nv * 8; j < len; ++j) {
    float mx = -std::numeric_limits<float>::infinity(), sum = 0;
    for (int64_t r = 0; r < R; ++r) {
      float v = xb[r * inner + j];
      mx = (mx > v || mx != mx) ? mx : v;
    }
    for (int64_t r = 0; r < R; ++r) {
      float e = cpu::exp_f(xb[r * inner + j] - mx);
      if (!log) yb[r * inner + j] = e;
      sum += e;
    }
    float lg = std::log(sum), inv = 1.0f / sum;
    for (int64_t r = 0; r < R; ++r) yb[r * inner + j] = log ? (xb[r * inner + j] - mx) - lg : yb[r * inner + j] * inv;
  }
}

template <typename T>
void softmax_kernel(const T* x, T* y, int64_t outer, int64_t R, int64_t inner, bool log) {
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
  cpu::ExtremumOp<T, true> mx;
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
          M ev = cpu::exp_any<M>(static_cast<M>(xb[r * inner + j]) - m[j]);
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

Tensor softmax_impl(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  Tensor x = dtype ? to_dtype(t, *dtype) : t;
  dim = wrap_dim(dim, x.dim());
  const char* kernel = dim == std::max<int64_t>(x.dim() - 1, 0)
                           ? (log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl")
                           : (log ? "log_softmax_kernel_impl" : "softmax_kernel_impl");
  Tensor y = empty(x.sizes(), x.dtype());
  if (x.numel() == 0) return y;  // torch checks nothing for an empty input
  if (!is_floating_point(x.dtype()))
    EMBER_NOT_IMPLEMENTED("\"", kernel, "\" not implemented for '", dtype_name(x.dtype()), "'");
  {
    autograd::NoGradGuard raw;
    auto l = reduce_detail::dim_layout(x, dim);
    EMBER_DISPATCH_FLOAT(x.dtype(), kernel,
                         [&] { softmax_kernel(l.x.data<scalar_t>(), y.data<scalar_t>(), l.outer, l.R, l.inner, log); });
  }
  if (auto n = autograd::make_node<LambdaBackward>(x)) {
    std::vector<int64_t> dims{dim};
    n->record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {y}, {}, {y},
              [dims, log](const TensorList& g, const TensorList& s) -> TensorList {
                const Tensor& y = s[0];
                if (log)  // d log_softmax: g - softmax * sum(g)
                  return {sub(g[0], mul(ember::exp(y), sum(g[0], dims, /*keepdim=*/true)))};
                return {mul(y, sub(g[0], sum(mul(g[0], y), dims, /*keepdim=*/true)))};
              });
    n->jvp_fn = [dims, log](const TensorList& t, const TensorList& s) -> TensorList {
      if (!t[0].defined()) return {Tensor()};
      const Tensor& y = s[0];
      if (log)  // t - sum(softmax * t)
        return {sub(t[0], sum(mul(ember::exp(y), t[0]), dims, /*keepdim=*/true))};
      return {mul(y, sub(t[0], sum(mul(t[0], y), dims, /*keepdim=*/true)))};
    };
  }
  return y;
}

}  // namespace

Tensor softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(t, dim, dtype, false);
}
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(t, dim, dtype, true);
}

}  // namespace ember
