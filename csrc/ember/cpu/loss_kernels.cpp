// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). CPU kernels of the class-index losses
// (ops/nn_loss.cpp). Note [Fused cross entropy]: each position's row of C logits is read once for its log-sum-exp (max,
// then sum of exp(x - max)), which is saved; the loss is lse - x[target] (plus the label-smoothing term), so no
// log_softmax tensor is ever written. The backward recomputes softmax from the saved lse in the same pass that writes
// dx. Totals are summed per fixed block in double, so results do not depend on threads.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/ops/nn_kernels.h"

// Kernel code from here on (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/reduce_kernels.h"
#include "ember/cpu/vec_math.h"

namespace ember::cpu {
namespace {

// log(sum(exp(x))) of a contiguous float row, in the widest vectors (vfw; 8 lanes took 1.34x torch's
// time for 512x1000 on Zen 5, where softmax's 16-lane row took 0.8x).
float row_lse(const float* x, int64_t n) {
  constexpr int W = kVecW;
  const float m = reduce_contiguous(x, n, ExtremumOp<float, true>{});
  const vfw mv = splatw(m);
  vfw acc0 = splatw(0.0f), acc1 = acc0;
  int64_t k = 0;
  for (; k + 2 * W <= n; k += 2 * W) {
    acc0 += expw_ftz(loadw(x + k) - mv);
    acc1 += expw_ftz(loadw(x + k + W) - mv);
  }
  for (; k + W <= n; k += W) acc0 += expw_ftz(loadw(x + k) - mv);
  float s = lane_sum(acc0 + acc1);
  for (; k < n; ++k) s += exp_f_ftz(x[k] - m);
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

constexpr int64_t kTile = 64;  // positions handled together when C is strided (inner > 1)

// lse of `len` (<= kTile) adjacent positions whose C logits are `inner` apart (N-d inputs):
// every pass walks the classes in order and the tile's positions contiguously.
template <typename T, typename M>
void tile_lse(const T* x, int64_t C, int64_t inner, int64_t len, M* lse) {
  M m[kTile], acc[kTile];
  for (int64_t j = 0; j < len; ++j) m[j] = -std::numeric_limits<M>::infinity(), acc[j] = 0;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < len; ++j) {
      M v = static_cast<M>(x[c * inner + j]);
      m[j] = (m[j] > v || m[j] != m[j]) ? m[j] : v;
    }
  int64_t nv = 0;
  if constexpr (std::is_same_v<T, float>) {
    nv = len / kVecF;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t v = 0; v < nv; ++v) {
        vf8 e = exp8_ftz(load8(x + c * inner + v * kVecF) - load8(m + v * kVecF));
        store8(acc + v * kVecF, load8(acc + v * kVecF) + e);
      }
  }
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = nv * kVecF; j < len; ++j) acc[j] += std::exp(static_cast<M>(x[c * inner + j]) - m[j]);
  for (int64_t j = 0; j < len; ++j) lse[j] = m[j] + std::log(acc[j]);
}

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
  // Work items: single positions (inner == 1) or tiles of kTile positions within one sample.
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t items = inner == 1 ? P : a.outer * tiles;
  const int64_t nb = num_blocks(items);
  std::vector<double> tot(nb, 0.0), wsum(nb, 0.0);
  parallel_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
    M sm[kTile];
    std::vector<float> row_buf;  // a 16-bit row as floats (Note [16-bit rows in cross entropy])
    for (int64_t blk = b0; blk < b1; ++blk) {
      double t_acc = 0, w_acc = 0;
      for (int64_t it = items * blk / nb, ie = items * (blk + 1) / nb; it < ie; ++it) {
        int64_t n = inner == 1 ? it : it / tiles, j0 = inner == 1 ? 0 : (it % tiles) * kTile;
        int64_t len = inner == 1 ? 1 : std::min(kTile, inner - j0);
        const T* base = x + n * C * inner + j0;
        int64_t p0 = n * inner + j0;
        const M* row = nullptr;  // inner == 1: the row in M
        if (inner == 1) {
          if constexpr (std::is_same_v<T, M>) {
            row = base;
          } else {
            row_buf.resize(C);
            row_to_float(base, row_buf.data(), C);
            row = row_buf.data();
          }
          lse[p0] = strided_lse<M, M>(row, C, 1);
        } else {
          tile_lse<T, M>(base, C, inner, len, lse + p0);
        }
        if (ls > 0 && inner == 1) {  // sum_c w_c (lse - x_c) over a contiguous row, 8 accumulators
          M acc[8] = {}, l0 = lse[p0], r = 0;
          int64_t c = 0;
          for (; c + 8 <= C; c += 8)
            for (int q = 0; q < 8; ++q) acc[q] += (w ? static_cast<M>(w[c + q]) : M(1)) * (l0 - row[c + q]);
          for (; c < C; ++c) r += (w ? static_cast<M>(w[c]) : M(1)) * (l0 - row[c]);
          for (int q = 0; q < 8; ++q) r += acc[q];
          sm[0] = r;
        } else if (ls > 0) {  // sum_c w_c (lse - x_c) per position, in class order
          for (int64_t j = 0; j < len; ++j) sm[j] = 0;
          for (int64_t c = 0; c < C; ++c) {
            M wc = w ? static_cast<M>(w[c]) : M(1);
            for (int64_t j = 0; j < len; ++j) sm[j] += wc * (lse[p0 + j] - static_cast<M>(base[c * inner + j]));
          }
        }
        for (int64_t j = 0; j < len; ++j) {
          int64_t p = p0 + j, t = tg[p];
          if (t == a.ignore_index) {
            out[p] = T(0);
            continue;
          }
          M wt = w ? static_cast<M>(w[t]) : M(1);
          M l = (M(1) - ls) * wt * (lse[p] - static_cast<M>(base[t * inner + j]));
          if (ls > 0) l += ls / static_cast<M>(C) * sm[j];
          out[p] = static_cast<T>(l);
          t_acc += l;
          w_acc += wt;
        }
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
  const int64_t C = a.C, inner = a.inner;
  const M ls = static_cast<M>(a.label_smoothing);
  M W = static_cast<M>(C);
  if (w) {
    W = 0;
    for (int64_t c = 0; c < C; ++c) W += static_cast<M>(w[c]);
  }
  // Coefficients of one position: a1 = s (1 - ls) w_t, a2 = s ls / C, k = a1 + a2 W (0 when ignored).
  auto coefs = [&](int64_t p, M& a1, M& a2, M& k) {
    int64_t t = tg[p];
    if (t == a.ignore_index) {
      a1 = a2 = k = 0;
      return;
    }
    M s = gp ? static_cast<M>(gp[p]) : static_cast<M>(gs);
    a1 = s * (M(1) - ls) * (w ? static_cast<M>(w[t]) : M(1));
    a2 = s * ls / static_cast<M>(C);
    k = a1 + a2 * W;
  };
  if (inner == 1) {
    // Note [16-bit rows in cross entropy]: a bfloat16/float16 row is converted to floats once, runs
    // the float path's vector exp, and is rounded once at the end (the target's term included):
    // element by element, std::exp made float16 cross_entropy 4-6x torch's time.
    std::vector<float> w_float;
    if constexpr (!std::is_same_v<T, M>) {
      if (w) {
        w_float.resize(C);
        row_to_float(w, w_float.data(), C);
      }
    }
    parallel_for(0, a.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t p0, int64_t p1) {
      if constexpr (!std::is_same_v<T, M>) {
        std::vector<float> in(C), d(C);
        const float* wf = w ? w_float.data() : nullptr;
        for (int64_t p = p0; p < p1; ++p) {
          T* drow = dx + p * C;
          const int64_t t = tg[p];
          if (t == a.ignore_index) {
            for (int64_t c = 0; c < C; ++c) drow[c] = T(0);
            continue;
          }
          M a1, a2, k;
          coefs(p, a1, a2, k);
          row_to_float(x + p * C, in.data(), C);
          const vfw kv = splatw(k), a2v = splatw(a2), lv = splatw(lse[p]);
          int64_t c = 0;
          for (; c + kVecW <= C; c += kVecW) {
            vfw v = kv * expw_ftz(loadw(in.data() + c) - lv);
            v -= wf ? a2v * loadw(wf + c) : a2v;
            storew(d.data() + c, v);
          }
          for (; c < C; ++c) d[c] = k * exp_f_ftz(in[c] - lse[p]) - a2 * (wf ? wf[c] : 1.0f);
          d[t] -= a1;
          row_from_float(d.data(), drow, C);
        }
        return;
      }
      for (int64_t p = p0; p < p1; ++p) {
        const T* row = x + p * C;
        T* drow = dx + p * C;
        int64_t t = tg[p];
        if (t == a.ignore_index) {
          for (int64_t c = 0; c < C; ++c) drow[c] = T(0);
          continue;
        }
        M a1, a2, k;
        coefs(p, a1, a2, k);
        M l = lse[p];
        int64_t c = 0;
        if constexpr (std::is_same_v<T, float>) {
          const vfw kv = splatw(k), a2v = splatw(a2), lv = splatw(l);
          for (; c + kVecW <= C; c += kVecW) {
            vfw d = kv * expw_ftz(loadw(row + c) - lv);
            d -= w ? a2v * loadw(w + c) : a2v;
            storew(drow + c, d);
          }
        }
        for (; c < C; ++c)
          drow[c] = static_cast<T>(k * std::exp(static_cast<M>(row[c]) - l) - a2 * (w ? static_cast<M>(w[c]) : M(1)));
        drow[t] = static_cast<T>(static_cast<M>(drow[t]) - a1);
      }
    });
    return;
  }
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, a.outer * tiles, std::max<int64_t>(1, kGrainSize / (C * kTile)), [&](int64_t i0, int64_t i1) {
    M a1[kTile], a2[kTile], k[kTile];
    for (int64_t it = i0; it < i1; ++it) {
      int64_t n = it / tiles, j0 = (it % tiles) * kTile, len = std::min(kTile, inner - j0);
      int64_t off = n * C * inner + j0, p0 = n * inner + j0;
      const T* base = x + off;
      T* dbase = dx + off;
      const M* l = lse + p0;
      for (int64_t j = 0; j < len; ++j) coefs(p0 + j, a1[j], a2[j], k[j]);
      int64_t nv = 0;
      if constexpr (std::is_same_v<T, float>) nv = len / kVecF;
      for (int64_t c = 0; c < C; ++c) {
        M wc = w ? static_cast<M>(w[c]) : M(1);
        if constexpr (std::is_same_v<T, float>) {
          for (int64_t v = 0; v < nv; ++v) {
            int64_t j = v * kVecF;
            vf8 e = exp8_ftz(load8(base + c * inner + j) - load8(l + j));
            store8(dbase + c * inner + j, load8(k + j) * e - load8(a2 + j) * wc);
          }
        }
        for (int64_t j = nv * kVecF; j < len; ++j)
          dbase[c * inner + j] =
              static_cast<T>(k[j] * std::exp(static_cast<M>(base[c * inner + j]) - l[j]) - a2[j] * wc);
      }
      for (int64_t j = 0; j < len; ++j) {
        int64_t t = tg[p0 + j];
        if (t == a.ignore_index) {
          for (int64_t c = 0; c < C; ++c) dbase[c * inner + j] = T(0);
          continue;
        }
        T& d = dbase[t * inner + j];
        d = static_cast<T>(static_cast<M>(d) - a1[j]);
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
  const int64_t C = a.C, inner = a.inner;
  // The losses first, their total in a second pass: with both totals in the first loop GCC paired
  // them in one vector kept in memory, a store and reload per position (6.5 ns each; 4096x10 took
  // 1.4x torch's time). 16-bit losses are rounded when stored, so there the total sums the
  // unrounded values in the one loop. Positions are walked as (o, i), not divided out of p.
  double total = 0, weight = 0;
  int64_t valid = 0;
  for (int64_t o = 0, p = 0; o < a.outer; ++o) {
    const T* xo = x + o * C * inner;
    for (int64_t i = 0; i < inner; ++i, ++p) {
      const int64_t t = tg[p];
      if (t == a.ignore_index) {
        out[p] = T(0);
        continue;
      }
      const M wt = w ? static_cast<M>(w[t]) : M(1);
      const M l = -wt * static_cast<M>(xo[t * inner + i]);
      out[p] = static_cast<T>(l);
      if constexpr (!std::is_same_v<T, M>) total += l;
      if (w)
        weight += wt;
      else
        ++valid;
    }
  }
  if constexpr (std::is_same_v<T, M>)
    for (int64_t p = 0, P = a.outer * inner; p < P; ++p) total += out[p];
  LossTotals r;
  r.total = total;
  r.weight = w ? weight : static_cast<double>(valid);
  return r;
}

}  // namespace

LossTotals EMBER_ISA_KERNEL(cross_entropy_forward)(const ClassLossArgs& a, Tensor& loss, Tensor& lse) {
  LossTotals r;
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "cross_entropy", [&] { r = ce_forward<scalar_t>(a, loss, lse); });
  return r;
}
void EMBER_ISA_KERNEL(cross_entropy_backward)(const ClassLossArgs& a, const Tensor& lse, const Tensor& g, double gs,
                                              Tensor& dx) {
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "cross_entropy_backward", [&] { ce_backward<scalar_t>(a, lse, g, gs, dx); });
}
LossTotals EMBER_ISA_KERNEL(nll_loss_forward)(const ClassLossArgs& a, Tensor& loss) {
  LossTotals r;
  EMBER_DISPATCH_FLOAT(a.x.dtype(), "nll_loss_forward_out_frame", [&] { r = nll_forward<scalar_t>(a, loss); });
  return r;
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
