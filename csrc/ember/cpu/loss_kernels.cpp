// CPU kernels of the class-index losses (ops/nn_loss.cpp). Note [Fused cross entropy]: each
// position's row of C logits is read once for its log-sum-exp (max, then sum of exp(x - max)),
// which is saved; the loss is lse - x[target] (plus the label-smoothing term), so no log_softmax
// tensor is ever written. The backward recomputes softmax from the saved lse in the same pass that
// writes dx. Totals are summed per fixed block in double, so results do not depend on threads.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/reduce_kernels.h"
#include "ember/cpu/vec_math.h"
#include "ember/ops/nn_kernels.h"

namespace ember::cpu {
namespace {

// log(sum(exp(x))) of a contiguous float row, 8 lanes at a time.
float row_lse(const float* x, int64_t n) {
  float m = reduce_contiguous(x, n, ExtremumOp<float, true>{});
  vf8 acc0 = splat(0.0f), acc1 = acc0;
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    acc0 += exp8(load8(x + k) - m);
    acc1 += exp8(load8(x + k + 8) - m);
  }
  for (; k + 8 <= n; k += 8) acc0 += exp8(load8(x + k) - m);
  acc0 += acc1;
  float s = 0;
  for (int j = 0; j < kVecF; ++j) s += acc0[j];
  for (; k < n; ++k) s += exp_f(x[k] - m);
  return m + std::log(s);
}

// log-sum-exp of C values `stride` apart.
template <typename T, typename M>
M strided_lse(const T* x, int64_t C, int64_t stride) {
  if constexpr (std::is_same_v<T, float>)
    if (stride == 1) return row_lse(x, C);
  M m = -std::numeric_limits<M>::infinity();
  for (int64_t c = 0; c < C; ++c) {
    M v = static_cast<M>(x[c * stride]);
    m = (m > v || m != m) ? m : v;
  }
  M s = 0;
  for (int64_t c = 0; c < C; ++c) s += std::exp(static_cast<M>(x[c * stride]) - m);
  return m + std::log(s);
}

int64_t num_blocks(int64_t P) { return std::min<int64_t>(P, 64); }

template <typename T>
LossTotals ce_forward(const ClassLossArgs& a, Tensor& loss, Tensor& lse_t) {
  using M = opmath_t<T>;
  const T* x = a.x.data<T>();
  const int64_t* tg = a.target.data<int64_t>();
  const T* w = a.weight.defined() ? a.weight.data<T>() : nullptr;
  T* out = loss.data<T>();
  M* lse = lse_t.data<M>();
  const int64_t C = a.C, inner = a.inner, P = a.outer * inner;
  const M ls = static_cast<M>(a.label_smoothing);
  const int64_t nb = num_blocks(P);
  std::vector<double> tot(nb, 0.0), wsum(nb, 0.0);
  parallel_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      int64_t p0 = P * blk / nb, p1 = P * (blk + 1) / nb;
      double t_acc = 0, w_acc = 0;
      for (int64_t p = p0; p < p1; ++p) {
        const T* row = x + (p / inner) * C * inner + p % inner;
        M l_row = strided_lse<T, M>(row, C, inner);
        lse[p] = l_row;
        int64_t t = tg[p];
        if (t == a.ignore_index) {
          out[p] = T(0);
          continue;
        }
        M wt = w ? static_cast<M>(w[t]) : M(1);
        M l = (M(1) - ls) * wt * (l_row - static_cast<M>(row[t * inner]));
        if (ls > 0) {
          M sm = 0;
          for (int64_t c = 0; c < C; ++c)
            sm += (w ? static_cast<M>(w[c]) : M(1)) * (l_row - static_cast<M>(row[c * inner]));
          l += ls / static_cast<M>(C) * sm;
        }
        out[p] = static_cast<T>(l);
        t_acc += l;
        w_acc += wt;
      }
      tot[blk] = t_acc, wsum[blk] = w_acc;
    }
  });
  LossTotals r;
  for (int64_t b = 0; b < nb; ++b) r.total += tot[b], r.weight += wsum[b];
  return r;
}

// dx[c] = k * softmax[c] - a2 * w[c] (- a1 at the target), see Note [Fused cross entropy].
template <typename T>
void ce_backward(const ClassLossArgs& a, const Tensor& lse_t, const Tensor& g, double gs, Tensor& dx_t) {
  using M = opmath_t<T>;
  const T* x = a.x.data<T>();
  const int64_t* tg = a.target.data<int64_t>();
  const T* w = a.weight.defined() ? a.weight.data<T>() : nullptr;
  const T* gp = g.defined() ? g.data<T>() : nullptr;
  const M* lse = lse_t.data<M>();
  T* dx = dx_t.data<T>();
  const int64_t C = a.C, inner = a.inner, P = a.outer * inner;
  const M ls = static_cast<M>(a.label_smoothing);
  M W = static_cast<M>(C);
  if (w) {
    W = 0;
    for (int64_t c = 0; c < C; ++c) W += static_cast<M>(w[c]);
  }
  parallel_for(0, P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      int64_t off = (p / inner) * C * inner + p % inner;
      const T* row = x + off;
      T* drow = dx + off;
      int64_t t = tg[p];
      if (t == a.ignore_index) {
        for (int64_t c = 0; c < C; ++c) drow[c * inner] = T(0);
        continue;
      }
      M s = gp ? static_cast<M>(gp[p]) : static_cast<M>(gs);
      M wt = w ? static_cast<M>(w[t]) : M(1);
      M a1 = s * (M(1) - ls) * wt, a2 = s * ls / static_cast<M>(C);
      M k = a1 + a2 * W, l = lse[p];
      if constexpr (std::is_same_v<T, float>) {
        if (inner == 1) {
          int64_t c = 0;
          vf8 kv = splat(k), a2v = splat(a2), lv = splat(l);
          for (; c + 8 <= C; c += 8) {
            vf8 d = kv * exp8(load8(row + c) - lv);
            d -= w ? a2v * load8(w + c) : a2v;
            store8(drow + c, d);
          }
          for (; c < C; ++c) drow[c] = k * exp_f(row[c] - l) - a2 * (w ? w[c] : 1.0f);
          drow[t] -= a1;
          continue;
        }
      }
      for (int64_t c = 0; c < C; ++c) {
        M pc = std::exp(static_cast<M>(row[c * inner]) - l);
        M d = k * pc - a2 * (w ? static_cast<M>(w[c]) : M(1));
        if (c == t) d -= a1;
        drow[c * inner] = static_cast<T>(d);
      }
    }
  });
}

template <typename T>
LossTotals nll_forward(const ClassLossArgs& a, Tensor& loss) {
  using M = opmath_t<T>;
  const T* x = a.x.data<T>();
  const int64_t* tg = a.target.data<int64_t>();
  const T* w = a.weight.defined() ? a.weight.data<T>() : nullptr;
  T* out = loss.data<T>();
  const int64_t C = a.C, inner = a.inner, P = a.outer * inner;
  LossTotals r;
  for (int64_t p = 0; p < P; ++p) {
    int64_t t = tg[p];
    if (t == a.ignore_index) {
      out[p] = T(0);
      continue;
    }
    M wt = w ? static_cast<M>(w[t]) : M(1);
    M l = -wt * static_cast<M>(x[(p / inner) * C * inner + t * inner + p % inner]);
    out[p] = static_cast<T>(l);
    r.total += l;
    r.weight += wt;
  }
  return r;
}

}  // namespace

LossTotals cross_entropy_forward(const ClassLossArgs& a, Tensor& loss, Tensor& lse) {
  LossTotals r;
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "cross_entropy", [&] { r = ce_forward<scalar_t>(a, loss, lse); });
  return r;
}
void cross_entropy_backward(const ClassLossArgs& a, const Tensor& lse, const Tensor& g, double gs, Tensor& dx) {
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "cross_entropy_backward", [&] { ce_backward<scalar_t>(a, lse, g, gs, dx); });
}
LossTotals nll_loss_forward(const ClassLossArgs& a, Tensor& loss) {
  LossTotals r;
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "nll_loss_forward_out_frame", [&] { r = nll_forward<scalar_t>(a, loss); });
  return r;
}

}  // namespace ember::cpu
