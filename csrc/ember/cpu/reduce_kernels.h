// Reduction loops over the (outer, R, inner) layout of Note [Reduction layout] (ops/reduce_utils.h).
//
// A reducer `Op` folds input values of type T into an accumulator:
//   using acc_t;  acc_t init() const;  acc_t step(acc_t, T) const;  acc_t merge(acc_t, acc_t) const;
//   O finish(acc_t) const;
// inner == 1 reduces contiguous rows with 8 independent accumulators (they vectorize, and sums
// are more accurate than with one); inner > 1 accumulates whole rows of a tile of columns.
// Rows run in parallel; long rows in pieces fixed by their length (Note [Long-row reductions]).
#pragma once
#include <algorithm>
#include <concepts>
#include <limits>
#include <vector>

#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/isa_check.h"  // Note [Multi-ISA kernels]
#include "ember/cpu/loops.h"
#include "ember/cpu/vec_math.h"

namespace ember::cpu {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

// A reducer's result converted to the output type (16-bit floats convert through float).
template <typename O, typename V>
O cast_to(V v) {
  if constexpr (std::is_same_v<O, V>)
    return v;
  else if constexpr (std::is_same_v<O, bool>)
    return static_cast<opmath_t<V>>(v) != opmath_t<V>(0);
  else
    return static_cast<O>(static_cast<opmath_t<V>>(v));
}

// Largest (Max) or smallest value; a NaN wins (torch propagates NaN).
template <typename T, bool Max>
struct ExtremumOp {
  using M = opmath_t<T>;
  using acc_t = M;
  acc_t init() const {
    if constexpr (std::is_same_v<T, bool>)
      return !Max;
    else if constexpr (std::numeric_limits<M>::has_infinity)
      return Max ? -std::numeric_limits<M>::infinity() : std::numeric_limits<M>::infinity();
    else
      return Max ? std::numeric_limits<M>::lowest() : std::numeric_limits<M>::max();
  }
  acc_t step(acc_t a, T v) const { return merge(a, static_cast<M>(v)); }
  acc_t merge(acc_t a, acc_t b) const {
    if constexpr (std::is_same_v<T, bool>)
      return Max ? (a || b) : (a && b);
    else
      return ((Max ? a > b : a < b) || a != a) ? a : b;
  }
  vf8 vmerge(vf8 a, vf8 b) const requires std::is_same_v<T, float> { return Max ? max_nan(a, b) : min_nan(a, b); }
  T finish(acc_t a) const { return static_cast<T>(a); }
  using float_op = ExtremumOp<float, Max>;  // for HalfBlockReducer
};

// Reducers over float that also define `vf8 vmerge(vf8, vf8)` get an explicit 8-lane loop.
template <typename T, typename Op>
concept VectorReducer = std::is_same_v<T, float> && requires(const Op& o, vf8 v) {
  { o.vmerge(v, v) } -> std::same_as<vf8>;
};

// Additive reducers over float that define `vf8 vmap(vf8)` (the value each element adds: x*x,
// |x|, ...) add 32 float lanes per block of 2048 and the block totals in the accumulator type,
// as the float sum does.
template <typename T, typename Op>
concept BlockedSumReducer = std::is_same_v<T, float> && requires(const Op& o, vf8 v) {
  { o.vmap(v) } -> std::same_as<vf8>;
};

// 16-bit floats under a reducer with a float form (Op::float_op: max and min, whose result no
// order of merges changes) go in blocks converted to float (F16C / AVX-512 at those levels), each
// block through the float loop: float16 amax ran 6x torch's time one converted element at a time.
template <typename T, typename Op>
concept HalfBlockReducer = (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)&&requires {
  typename Op::float_op;
};

template <typename T, typename Op>
typename Op::acc_t reduce_contiguous(const T* p, int64_t n, const Op& op) {
  using A = typename Op::acc_t;
  if constexpr (HalfBlockReducer<T, Op>) {
    const typename Op::float_op float_op{};
    constexpr int64_t kBlock = 256;
    float block[kBlock];
    A r = op.init();
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      row_to_float(p + k, block, len);
      r = op.merge(r, reduce_contiguous(block, len, float_op));
    }
    return r;
  }
  if constexpr (BlockedSumReducer<T, Op>) {
    A total = op.init();
    int64_t k = 0;
    while (k + 32 <= n) {
      int64_t end = k + std::min<int64_t>(2048, (n - k) / 32 * 32);
      vf8 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
      for (; k < end; k += 32) {
        a0 += op.vmap(load8(p + k));
        a1 += op.vmap(load8(p + k + 8));
        a2 += op.vmap(load8(p + k + 16));
        a3 += op.vmap(load8(p + k + 24));
      }
      vf8 s = (a0 + a1) + (a2 + a3);
      for (int j = 0; j < kVecF; ++j) total = op.merge(total, static_cast<A>(s[j]));
    }
    for (; k < n; ++k) total = op.step(total, p[k]);
    return total;
  }
  if constexpr (VectorReducer<T, Op>) {
    if (n >= 32) {
      vf8 a0 = splat(op.init()), a1 = a0, a2 = a0, a3 = a0;
      int64_t k = 0;
      for (; k + 32 <= n; k += 32) {
        a0 = op.vmerge(a0, load8(p + k));
        a1 = op.vmerge(a1, load8(p + k + 8));
        a2 = op.vmerge(a2, load8(p + k + 16));
        a3 = op.vmerge(a3, load8(p + k + 24));
      }
      for (; k + 8 <= n; k += 8) a0 = op.vmerge(a0, load8(p + k));
      a0 = op.vmerge(op.vmerge(a0, a1), op.vmerge(a2, a3));
      A r = a0[0];
      for (int j = 1; j < kVecF; ++j) r = op.merge(r, a0[j]);
      for (; k < n; ++k) r = op.step(r, p[k]);
      return r;
    }
  }
  A acc[8];
  for (auto& a : acc) a = op.init();
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) acc[j] = op.step(acc[j], p[k + j]);
  for (; k < n; ++k) acc[0] = op.step(acc[0], p[k]);
  return op.merge(op.merge(op.merge(acc[0], acc[1]), op.merge(acc[2], acc[3])),
                  op.merge(op.merge(acc[4], acc[5]), op.merge(acc[6], acc[7])));
}

template <typename T, typename O, typename Op>
void reduce_rows(const T* x, O* out, int64_t outer, int64_t R, int64_t inner, const Op& op) {
  using A = typename Op::acc_t;
  if (outer == 0 || inner == 0) return;
  if (inner == 1) {
    if (R > kLongRow) {  // Note [Long-row reductions]
      reduce_long_rows(
          outer, R, op.init(),
          [&](int64_t o, int64_t lo, int64_t hi) { return reduce_contiguous(x + o * R + lo, hi - lo, op); },
          [&](const A& a, const A& b) { return op.merge(a, b); },
          [&](int64_t o, const A& total) { out[o] = cast_to<O>(op.finish(total)); });
      return;
    }
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) out[o] = cast_to<O>(op.finish(reduce_contiguous(x + o * R, R, op)));
    });
    return;
  }
  constexpr int64_t kTile = 256;
  int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kTile, 1)),
               [&](int64_t b, int64_t e) {
                 A acc[kTile];
                 for (int64_t w = b; w < e; ++w) {
                   int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
                   for (int64_t j = 0; j < len; ++j) acc[j] = op.init();
                   const T* base = x + o * R * inner + j0;
                   for (int64_t r = 0; r < R; ++r) {
                     const T* row = base + r * inner;
                     for (int64_t j = 0; j < len; ++j) acc[j] = op.step(acc[j], row[j]);
                   }
                   O* dst = out + o * inner + j0;
                   for (int64_t j = 0; j < len; ++j) dst[j] = cast_to<O>(op.finish(acc[j]));
                 }
               });
}

// Value-and-index reduction of a contiguous float row: blocks of 64 are first reduced with 8
// lanes (comparing to the best so far), and only a block that improves on it is scanned for the
// index, so most of the row is read once at vector speed.
template <typename Better>
void arg_reduce_float_row(const float* row, int64_t R, const Better& better, float& best_out, int64_t& bi_out) {
  constexpr int64_t kBlock = 64;
  const bool is_max = better(1.0f, 0.0f);
  {
    {
      float best = row[0];
      int64_t bi = 0;
      int64_t k = 0;
      for (; k + kBlock <= R && best == best; k += kBlock) {
        vf8 a = load8(row + k);
        for (int64_t j = 8; j < kBlock; j += 8)
          a = is_max ? max_nan(a, load8(row + k + j)) : min_nan(a, load8(row + k + j));
        float m = a[0];
        for (int j = 1; j < kVecF; ++j) {
          float v = a[j];
          m = ((is_max ? m > v : m < v) || m != m) ? m : v;
        }
        if (!(m != m || better(m, best))) continue;
        for (int64_t j = k; j < k + kBlock; ++j) {
          float v = row[j];
          if (v != v) {
            best = v, bi = j;
            break;
          }
          if (better(v, best)) best = v, bi = j;
        }
      }
      for (; k < R && best == best; ++k) {
        float v = row[k];
        if (v != v || better(v, best)) best = v, bi = k;
      }
      best_out = best, bi_out = bi;
    }
  }
}
// Rows of float, or of a 16-bit type converted to floats a row at a time (exact, and back exactly:
// the element loop's value and index; float16 max(dim) took 1.6x torch's time element by element).
template <typename T, typename Better>
void arg_reduce_float_rows(const T* x, T* values, int64_t* indices, int64_t outer, int64_t R, const Better& better) {
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
    std::vector<float> buf(std::is_same_v<T, float> ? 0 : R);
    for (int64_t o = b; o < e; ++o) {
      const float* row;
      if constexpr (std::is_same_v<T, float>) {
        row = x + o * R;
      } else {
        row_to_float(x + o * R, buf.data(), R);
        row = buf.data();
      }
      float best;
      int64_t bi;
      arg_reduce_float_row(row, R, better, best, bi);
      if (values) values[o] = static_cast<T>(best);
      if (indices) indices[o] = bi;
    }
  });
}

// Value-and-index reductions (max/min with dim, argmax, argmin). `better(v, best)` says v
// replaces the current best; the first of equal values wins, and a NaN beats everything (the
// first NaN is the result, as in torch).
template <typename T, typename M, typename Better>
void arg_reduce_rows(const T* x, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                     const Better& better) {
  if (outer == 0 || inner == 0 || R == 0) return;
  auto is_nan = [](M v) { return v != v; };
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    if (inner == 1 && R >= 64) {
      arg_reduce_float_rows(x, values, indices, outer, R, better);
      return;
    }
  }
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = x + o * R;
        M best = static_cast<M>(row[0]);
        int64_t bi = 0;
        if (!is_nan(best)) {
          for (int64_t r = 1; r < R; ++r) {
            M v = static_cast<M>(row[r]);
            if (is_nan(v)) {
              best = v, bi = r;
              break;
            }
            if (better(v, best)) best = v, bi = r;
          }
        }
        if (values) values[o] = static_cast<T>(best);
        if (indices) indices[o] = bi;
      }
    });
    return;
  }
  constexpr int64_t kTile = 256;
  int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kTile, 1)),
               [&](int64_t b, int64_t e) {
                 M best[kTile];
                 int64_t bi[kTile];
                 for (int64_t w = b; w < e; ++w) {
                   int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
                   const T* base = x + o * R * inner + j0;
                   for (int64_t j = 0; j < len; ++j) best[j] = static_cast<M>(base[j]), bi[j] = 0;
                   for (int64_t r = 1; r < R; ++r) {
                     const T* row = base + r * inner;
                     for (int64_t j = 0; j < len; ++j) {
                       M v = static_cast<M>(row[j]);
                       bool take = !is_nan(best[j]) && (is_nan(v) || better(v, best[j]));
                       best[j] = take ? v : best[j];
                       bi[j] = take ? r : bi[j];
                     }
                   }
                   int64_t off = o * inner + j0;
                   for (int64_t j = 0; j < len; ++j) {
                     if (values) values[off + j] = static_cast<T>(best[j]);
                     if (indices) indices[off + j] = bi[j];
                   }
                 }
               });
}

}  // namespace EMBER_ISA_NS
}  // namespace ember::cpu
