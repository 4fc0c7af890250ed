// The pdist and cdist kernels (cpu/distance_kernels.h, Note [pdist] in ops/distance.cpp).
#include "ember/cpu/distance_kernels.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ember/cpu/isa_begin.h"

namespace ember::cpu {
namespace {

enum class Norm { Zero, One, Two, Inf, General };

Norm norm_of(double p) {
  if (p == 0) return Norm::Zero;
  if (p == 1) return Norm::One;
  if (p == 2) return Norm::Two;
  if (std::isinf(p)) return Norm::Inf;
  return Norm::General;
}

// Note [Distances in lanes]: a distance between rows of m is a reduction over m; for short rows a
// vectorized reduction per pair is mostly its horizontal sum (pdist of 1024 x 8 took 1.9x torch's time).
// Below kRowColumns (128) the second operand is transposed once (bt, m x n), and the distances from one
// row a to the rows j of bt are taken column by column with the pairs in lanes: tiles of 4 vectors of
// pairs keep their sums in registers over the m columns, which are added in column order (as torch's
// kernels, which also put pairs in lanes; the same bits for any thread count). The general p (a pow per
// term, which does not vectorize) takes the same order in scalar loops.
//
// NaN, as torch: a NaN difference makes p = 0 distances NaN, and p = inf ones NaN in pdist, but cdist's
// max skips it (kSkipNan).
#if EMBER_ISA_LEVEL >= 1
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;  // (SSE2)
#endif
template <typename T>
struct Lanes;
template <>
struct Lanes<float> {
  typedef float V __attribute__((vector_size(kVectorBytes)));
};
template <>
struct Lanes<double> {
  typedef double V __attribute__((vector_size(kVectorBytes)));
};

// One coordinate's term (X a number or a vector of them). |u| as u < 0 ? -u : u + 0, so -0 gives +0.
template <Norm kNorm, typename X>
[[gnu::always_inline]] inline X term(X u) {
  if constexpr (kNorm == Norm::Two) return u * u;
  if constexpr (kNorm == Norm::One || kNorm == Norm::Inf) return u < 0 ? -u : u + X{};
  if constexpr (kNorm == Norm::Zero) return u == u ? (u != 0 ? X{} + 1 : X{}) : u;
}
template <Norm kNorm, bool kSkipNan, typename X>
[[gnu::always_inline]] inline X combine(X s, X t) {
  if constexpr (kNorm != Norm::Inf) return s + t;
  if constexpr (kNorm == Norm::Inf && kSkipNan) return s < t ? t : s;
  if constexpr (kNorm == Norm::Inf && !kSkipNan) return t > s || t != t ? t : s;
}

template <typename T, typename V = typename Lanes<T>::V>
[[gnu::always_inline]] inline V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename T, typename V = typename Lanes<T>::V>
[[gnu::always_inline]] inline void store(T* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}

// out[j] = ||a - bt[:, j]||_p for j < len, bt's rows m apart by ld (Note [Distances in lanes]).
template <Norm kNorm, bool kSkipNan, typename T>
void distances_to_columns(const T* a, const T* bt, int64_t ld, int64_t len, int64_t m, T p, T* out) {
  if constexpr (kNorm == Norm::General) {
    std::fill(out, out + len, T(0));
    for (int64_t c = 0; c < m; ++c) {
      const T* col = bt + c * ld;
      for (int64_t j = 0; j < len; ++j) out[j] += std::pow(std::fabs(a[c] - col[j]), p);
    }
    for (int64_t j = 0; j < len; ++j) out[j] = std::pow(out[j], T(1) / p);
  } else {
    using V = typename Lanes<T>::V;
    constexpr int64_t kLanes = sizeof(V) / sizeof(T), kTile = 4 * kLanes;
    // one tile at columns j..j + kTile of bt into o
    auto tile = [&](int64_t j, T* o) {
      V s0{}, s1{}, s2{}, s3{};
      const T* col = bt + j;
      for (int64_t c = 0; c < m; ++c, col += ld) {
        const V av = V{} + a[c];
        s0 = combine<kNorm, kSkipNan>(s0, term<kNorm>(av - load(col)));
        s1 = combine<kNorm, kSkipNan>(s1, term<kNorm>(av - load(col + kLanes)));
        s2 = combine<kNorm, kSkipNan>(s2, term<kNorm>(av - load(col + 2 * kLanes)));
        s3 = combine<kNorm, kSkipNan>(s3, term<kNorm>(av - load(col + 3 * kLanes)));
      }
      store(o, s0), store(o + kLanes, s1), store(o + 2 * kLanes, s2), store(o + 3 * kLanes, s3);
    };
    int64_t j = 0;
    for (; j + kTile <= len; j += kTile) tile(j, out + j);
    if (j < len) {  // the last columns as a whole tile too (bt's padding), so a pair's bits never depend on its place
      T rest[kTile];
      tile(j, rest);
      std::copy(rest, rest + (len - j), out + j);
    }
    if constexpr (kNorm == Norm::Two)
      for (int64_t k = 0; k < len; ++k) out[k] = std::sqrt(out[k]);
  }
}

// Long rows: ||a - b||_p for p = 1, 2 or general as a vectorized reduction along the row, its two halves
// in two independent chains (the same order for every thread count).
template <Norm kNorm, typename T>
T row_distance(const T* a, const T* b, int64_t m, T p) {
  auto term_of = [p](T u) {
    if constexpr (kNorm == Norm::General)
      return std::pow(std::fabs(u), p);
    else
      return term<kNorm>(u);
  };
  const int64_t h = m / 2;
  const T* a2 = a + h;
  const T* b2 = b + h;
  T s = 0, s1 = m % 2 ? term_of(a[m - 1] - b[m - 1]) : T(0);
#pragma omp simd reduction(+ : s, s1)
  for (int64_t k = 0; k < h; ++k) {
    s += term_of(a[k] - b[k]);
    s1 += term_of(a2[k] - b2[k]);
  }
  s += s1;
  if constexpr (kNorm == Norm::Two) return std::sqrt(s);
  if constexpr (kNorm == Norm::General) return std::pow(s, T(1) / p);
  return s;
}
// Rows from 128 columns on take row_distance (lanes 1.0-1.05x its time at 128 and 256 columns, 2-5x at
// 512 and more: the tiles' columns no longer stay in cache); p = 0 and inf always take lanes.
constexpr int64_t kRowColumns = 128;
template <Norm kNorm>
bool by_rows(int64_t m) {
  return (kNorm == Norm::One || kNorm == Norm::Two || kNorm == Norm::General) && m >= kRowColumns;
}

// The row stride of a transposed operand of n columns: room for a whole tile past the last column (the
// last columns are read as one), in an odd number of cache lines, so that the rows a tile reads spread
// over every cache set (a stride of 4 KB put them all in one: 2x slower at n = 1024).
template <typename T>
int64_t transposed_stride(int64_t n) {
  constexpr int64_t kLine = 64 / sizeof(T), kTile = 4 * sizeof(typename Lanes<T>::V) / sizeof(T);
  const int64_t lines = (n + kTile + kLine - 1) / kLine;
  return (lines | 1) * kLine;
}
// x (n rows of m) transposed into xt (m rows of ld, the padding zeros).
template <typename T>
std::vector<T> transposed(const T* x, int64_t n, int64_t m, int64_t ld) {
  std::vector<T> xt(static_cast<size_t>(m * ld));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < m; ++c) xt[c * ld + i] = x[i * m + c];
  return xt;
}

// The index of pair (i, j), i < j, in row-major order.
inline int64_t pair_index(int64_t i, int64_t j, int64_t n) { return i * n - i * (i + 1) / 2 + (j - i - 1); }

// The first pair of [k0, k1) as (i, j) and every one after it in row-major order: f(i, j0, j1) for each
// run of pairs (i, j0) ... (i, j1 - 1) of one row, whose outputs are contiguous from pair_index(i, j0).
template <typename F>
void for_pair_runs(int64_t n, int64_t k0, int64_t k1, const F& f) {
  int64_t i = 0, hi = n - 1;  // i: the last row whose first pair is <= k0
  while (i < hi) {
    const int64_t mid = (i + hi + 1) / 2;
    if (pair_index(mid, mid + 1, n) <= k0)
      i = mid;
    else
      hi = mid - 1;
  }
  int64_t j = i + 1 + (k0 - pair_index(i, i + 1, n));
  for (int64_t k = k0; k < k1; ++i, j = i + 1) {
    const int64_t len = std::min(n - j, k1 - k);
    f(i, j, j + len);
    k += len;
  }
}

template <Norm kNorm, typename T>
void pdist_rows(const T* x, T* out, int64_t n, int64_t m, T p) {
  if (by_rows<kNorm>(m)) {
    parallel_for(0, n * (n - 1) / 2, std::max<int64_t>(1, 16384 / m), [&](int64_t k0, int64_t k1) {
      for_pair_runs(n, k0, k1, [&](int64_t i, int64_t j0, int64_t j1) {
        T* o = out + pair_index(i, j0, n);
        for (int64_t j = j0; j < j1; ++j) o[j - j0] = row_distance<kNorm>(x + i * m, x + j * m, m, p);
      });
    });
    return;
  }
  const int64_t ld = transposed_stride<T>(n);
  const std::vector<T> xt = transposed(x, n, m, ld);
  const int64_t pairs = n * (n - 1) / 2;
  parallel_for(0, pairs, std::max<int64_t>(256, 16384 / std::max<int64_t>(m, 1)), [&](int64_t k0, int64_t k1) {
    for_pair_runs(n, k0, k1, [&](int64_t i, int64_t j0, int64_t j1) {
      distances_to_columns<kNorm, false>(x + i * m, xt.data() + j0, ld, j1 - j0, m, p, out + pair_index(i, j0, n));
    });
  });
}

template <Norm kNorm, typename T>
void cdist_rows(const T* x1, const T* x2, T* out, int64_t B, int64_t P, int64_t R, int64_t M, T p) {
  if (by_rows<kNorm>(M)) {
    parallel_for(0, B * P, std::max<int64_t>(1, 16384 / std::max<int64_t>(R * M, 1)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < R; ++j)
          out[r * R + j] = row_distance<kNorm>(x1 + r * M, x2 + ((r / P) * R + j) * M, M, p);
    });
    return;
  }
  const int64_t ld = transposed_stride<T>(R);
  std::vector<std::vector<T>> x2t(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) x2t[b] = transposed(x2 + b * R * M, R, M, ld);
  parallel_for(0, B * P, std::max<int64_t>(1, 16384 / std::max<int64_t>(R * M, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      distances_to_columns<kNorm, true>(x1 + r * M, x2t[r / P].data(), ld, R, M, p, out + r * R);
  });
}

// w d||u||_p / du for one coordinate u of a pair at distance d, X a number or a vector of them, torch's
// conventions: 0 where d = 0, and where u = 0 for p < 1. p = 2 takes w already divided by d (0 where d
// is): one division per pair. The general p is for numbers only (pow).
template <Norm kNorm, typename X, typename T>
[[gnu::always_inline]] inline X weighted_grad(X u, X w, X d, T p) {
  if constexpr (kNorm == Norm::Zero) return X{};
  if constexpr (kNorm == Norm::One) return (u > 0 ? w : X{}) - (u < 0 ? w : X{});
  if constexpr (kNorm == Norm::Two) return w * u;
  if constexpr (kNorm == Norm::Inf) {
    const X au = u < 0 ? -u : u, hit = au == d && d != 0 ? w : X{};
    return (u > 0 ? hit : X{}) - (u < 0 ? hit : X{});
  }
  if constexpr (kNorm == Norm::General) {
    if (d == 0 || (u == 0 && p < 1)) return X{};
    const X s = (u > 0 ? w : X{}) - (u < 0 ? w : X{});
    return s * std::pow(std::fabs(u), p - 1) / std::pow(d, p - 1);
  }
}
// p = 2's weight: w / d, 0 where d is 0.
template <Norm kNorm, typename X>
[[gnu::always_inline]] inline X pair_weight(X w, X d) {
  if constexpr (kNorm == Norm::Two) return d == 0 ? X{} : w / d;
  return w;
}

// Note [Distance gradients]: gi[c] = sum_j w[j] d||a - b_j||_p / da_c over the n columns b_j of bt (m
// rows of ld), d[j] their distances: the pairs in lanes, one vector of partial sums per column c (acc,
// m of them, so no single chain of additions), then each vector's lanes in order and the last
// columns one by one. The general p in scalar loops, in j order.
template <Norm kNorm, typename T>
void row_gradient(const T* a, const T* bt, int64_t ld, int64_t n, const T* w, const T* d, int64_t m, T p, T* acc,
                  T* gi) {
  using V = typename Lanes<T>::V;
  constexpr int64_t kLanes = sizeof(V) / sizeof(T);
  if constexpr (kNorm == Norm::Zero) {
    std::fill(gi, gi + m, T(0));  // a count of differences has gradient 0
  } else if constexpr (kNorm == Norm::General) {
    for (int64_t c = 0; c < m; ++c) {
      T s = 0;
      for (int64_t j = 0; j < n; ++j) s += weighted_grad<kNorm>(a[c] - bt[c * ld + j], w[j], d[j], p);
      gi[c] = s;
    }
  } else {
    std::fill(acc, acc + m * kLanes, T(0));  // (m vectors, unaligned: the vector's allocation gives 16 bytes)
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes) {
      const V dv = load(d + j), wv = pair_weight<kNorm>(load(w + j), dv);
      for (int64_t c = 0; c < m; ++c)
        store(acc + c * kLanes,
              load(acc + c * kLanes) + weighted_grad<kNorm>(V{} + a[c] - load(bt + c * ld + j), wv, dv, p));
    }
    for (int64_t c = 0; c < m; ++c) {
      T s = 0;
      for (int64_t k = 0; k < kLanes; ++k) s += acc[c * kLanes + k];
      for (int64_t t = j; t < n; ++t)
        s += weighted_grad<kNorm>(a[c] - bt[c * ld + t], pair_weight<kNorm>(w[t], d[t]), d[t], p);
      gi[c] = s;
    }
  }
}

// gt[c * kColumnBlock + k] -= w[k] d||a - b_k||_p / da_c for the len columns b_k of bt (m rows of ld): adds
// to gt the gradient with respect to each b_k (the pairs in lanes; wb: len scratch).
constexpr int64_t kColumnBlock = 128;

template <Norm kNorm, typename T>
void add_column_gradients(const T* a, const T* bt, int64_t ld, int64_t len, const T* w, const T* d, int64_t m, T p,
                          T* wb, T* gt) {
  for (int64_t k = 0; k < len; ++k) wb[k] = pair_weight<kNorm>(w[k], d[k]);
  for (int64_t c = 0; c < m; ++c) {
    const T ac = a[c];
    const T* col = bt + c * ld;
    T* acc = gt + c * kColumnBlock;
    for (int64_t k = 0; k < len; ++k) acc[k] -= weighted_grad<kNorm>(ac - col[k], wb[k], d[k], p);
  }
}

// pdist's gradient (Note [Distance gradients]): row r's pairs (r, j > r) lie side by side in g: row_gradient
// over them; its pairs (j < r, r) lie side by side for each j across a block of rows r: add_column_gradients
// per j into the block. Each thread writes only its own rows and blocks (no atomics), every sum in one
// order for any thread count, and g is read in runs (gathering the pairs (j, r) per row took a cache miss
// each: 3x torch's time at 2048 rows).
template <Norm kNorm, typename T>
void pdist_backward_rows(const T* g, const T* x, const T* dist, T* gx, int64_t n, int64_t m, T p) {
  constexpr int64_t kLanes = sizeof(typename Lanes<T>::V) / sizeof(T);
  const int64_t ld = transposed_stride<T>(n);
  const std::vector<T> xt = transposed(x, n, m, ld);
  // blocks of rows, each with both parts: the first part's work falls with r, the second's grows, so
  // every block has about the same
  const int64_t blocks = (n + kColumnBlock - 1) / kColumnBlock;
  parallel_for(0, blocks, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> acc(static_cast<size_t>(m * kLanes)), gt(static_cast<size_t>(m * kColumnBlock)), wb(kColumnBlock);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i0 = t * kColumnBlock, i1 = std::min(n, i0 + kColumnBlock);
      for (int64_t r = i0; r < i1; ++r) {
        const int64_t k = r + 1 < n ? pair_index(r, r + 1, n) : 0;
        row_gradient<kNorm>(x + r * m, xt.data() + r + 1, ld, n - r - 1, g + k, dist + k, m, p, acc.data(), gx + r * m);
      }
      if constexpr (kNorm == Norm::Zero) continue;
      std::fill(gt.begin(), gt.end(), T(0));
      for (int64_t j = 0; j + 1 < i1; ++j) {
        const int64_t c0 = std::max(i0, j + 1), k = pair_index(j, c0, n);
        add_column_gradients<kNorm>(x + j * m, xt.data() + c0, ld, i1 - c0, g + k, dist + k, m, p, wb.data(),
                                    gt.data() + (c0 - i0));
      }
      for (int64_t r = i0; r < i1; ++r)
        for (int64_t c = 0; c < m; ++c) gx[r * m + c] += gt[c * kColumnBlock + r - i0];
    }
  });
}

// cdist's gradients (Note [Distance gradients]): x1's rows by row_gradient against x2's (transposed), g and
// dist rows contiguous; x2's by add_column_gradients, each column block of a batch item accumulating over
// every row of x1 in order, so neither needs g transposed.
template <Norm kNorm, typename T>
void cdist_backward_rows(const T* g, const T* x1, const T* x2, const T* dist, T* gx1, T* gx2, int64_t B, int64_t P,
                         int64_t R, int64_t M, T p) {
  constexpr int64_t kLanes = sizeof(typename Lanes<T>::V) / sizeof(T);
  const int64_t ld = transposed_stride<T>(R);
  std::vector<std::vector<T>> x2t(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) x2t[b] = transposed(x2 + b * R * M, R, M, ld);
  if (gx1)
    parallel_for(0, B * P, std::max<int64_t>(1, 16384 / std::max<int64_t>(R * M, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<T> acc(static_cast<size_t>(M * kLanes));
      for (int64_t r = r0; r < r1; ++r)
        row_gradient<kNorm>(x1 + r * M, x2t[r / P].data(), ld, R, g + r * R, dist + r * R, M, p, acc.data(),
                            gx1 + r * M);
    });
  if (!gx2) return;
  const int64_t blocks = (R + kColumnBlock - 1) / kColumnBlock;
  parallel_for(0, B * blocks, std::max<int64_t>(1, 65536 / std::max<int64_t>(P * M * kColumnBlock, 1)),
               [&](int64_t t0, int64_t t1) {
                 std::vector<T> gt(static_cast<size_t>(M * kColumnBlock)), wb(kColumnBlock);
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t b = t / blocks, j0 = (t % blocks) * kColumnBlock, len = std::min(kColumnBlock, R - j0);
                   std::fill(gt.begin(), gt.end(), T(0));
                   for (int64_t i = 0; i < P; ++i) {
                     const int64_t r = b * P + i;
                     add_column_gradients<kNorm>(x1 + r * M, x2t[b].data() + j0, ld, len, g + r * R + j0,
                                                 dist + r * R + j0, M, p, wb.data(), gt.data());
                   }
                   for (int64_t k = 0; k < len; ++k)
                     for (int64_t c = 0; c < M; ++c) gx2[(b * R + j0 + k) * M + c] = gt[c * kColumnBlock + k];
                 }
               });
}

template <typename F>
void with_norm(double p, F&& f) {
  switch (norm_of(p)) {
    case Norm::Zero:
      return f(std::integral_constant<Norm, Norm::Zero>{});
    case Norm::One:
      return f(std::integral_constant<Norm, Norm::One>{});
    case Norm::Two:
      return f(std::integral_constant<Norm, Norm::Two>{});
    case Norm::Inf:
      return f(std::integral_constant<Norm, Norm::Inf>{});
    default:
      return f(std::integral_constant<Norm, Norm::General>{});
  }
}

// float and double (ops/distance.cpp refuses the rest).
template <typename F>
void with_dtype(ScalarType dtype, F&& f) {
  if (dtype == ScalarType::Float32)
    f(float{});
  else
    f(double{});
}

}  // namespace

void EMBER_ISA_KERNEL(pdist_forward)(ScalarType dtype, const void* x, void* out, int64_t n, int64_t m, double p) {
  with_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    with_norm(p, [&](auto norm) {
      pdist_rows<decltype(norm)::value>(static_cast<const T*>(x), static_cast<T*>(out), n, m, static_cast<T>(p));
    });
  });
}

void EMBER_ISA_KERNEL(pdist_backward)(ScalarType dtype, const void* g, const void* x, const void* dist, void* gx,
                                      int64_t n, int64_t m, double p) {
  with_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    with_norm(p, [&](auto norm) {
      pdist_backward_rows<decltype(norm)::value>(static_cast<const T*>(g), static_cast<const T*>(x),
                                                 static_cast<const T*>(dist), static_cast<T*>(gx), n, m,
                                                 static_cast<T>(p));
    });
  });
}

void EMBER_ISA_KERNEL(cdist_forward)(ScalarType dtype, const void* x1, const void* x2, void* out, int64_t B, int64_t P,
                                     int64_t R, int64_t M, double p) {
  with_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    with_norm(p, [&](auto norm) {
      cdist_rows<decltype(norm)::value>(static_cast<const T*>(x1), static_cast<const T*>(x2), static_cast<T*>(out), B,
                                        P, R, M, static_cast<T>(p));
    });
  });
}

void EMBER_ISA_KERNEL(cdist_backward)(ScalarType dtype, const void* g, const void* x1, const void* x2, const void* dist,
                                      void* gx1, void* gx2, int64_t B, int64_t P, int64_t R, int64_t M, double p) {
  with_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    with_norm(p, [&](auto norm) {
      cdist_backward_rows<decltype(norm)::value>(
          static_cast<const T*>(g), static_cast<const T*>(x1), static_cast<const T*>(x2), static_cast<const T*>(dist),
          static_cast<T*>(gx1), static_cast<T*>(gx2), B, P, R, M, static_cast<T>(p));
    });
  });
}

}  // namespace ember::cpu

#include "ember/cpu/isa_end.h"
