// The pdist kernels (cpu/distance_kernels.h, Note [pdist] in ops/distance.cpp).
#include "ember/cpu/distance_kernels.h"

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

// ||a - b||_p over m elements, summed (max for p = inf) by omp simd reductions (their order is the
// same for every thread count). kLong (rows from 128 on): the row's two halves in one loop, two
// independent chains; short rows take one (a second costs more than it saves there, and fixed
// lanes in an array stayed in memory: 2-3x slower).
template <Norm kNorm, bool kLong, typename T>
T row_distance(const T* a, const T* b, int64_t m, T p) {
  auto term = [p](T u) {
    if constexpr (kNorm == Norm::Zero) return u != 0 ? T(1) : T(0);
    if constexpr (kNorm == Norm::One || kNorm == Norm::Inf) return std::abs(u);
    if constexpr (kNorm == Norm::Two) return u * u;
    if constexpr (kNorm == Norm::General) return std::pow(std::abs(u), p);
  };
  T s = 0;
  if constexpr (kLong) {
    const int64_t h = m / 2;
    const T* a2 = a + h;
    const T* b2 = b + h;
    T s1 = m % 2 ? term(a[m - 1] - b[m - 1]) : T(0);
    if constexpr (kNorm == Norm::Inf) {
#pragma omp simd reduction(max : s, s1)
      for (int64_t k = 0; k < h; ++k) {
        s = std::max(s, term(a[k] - b[k]));
        s1 = std::max(s1, term(a2[k] - b2[k]));
      }
      s = std::max(s, s1);
    } else {
#pragma omp simd reduction(+ : s, s1)
      for (int64_t k = 0; k < h; ++k) {
        s += term(a[k] - b[k]);
        s1 += term(a2[k] - b2[k]);
      }
      s += s1;
    }
  } else if constexpr (kNorm == Norm::Inf) {
#pragma omp simd reduction(max : s)
    for (int64_t k = 0; k < m; ++k) s = std::max(s, term(a[k] - b[k]));
  } else {
#pragma omp simd reduction(+ : s)
    for (int64_t k = 0; k < m; ++k) s += term(a[k] - b[k]);
  }
  if constexpr (kNorm == Norm::Two) return std::sqrt(s);
  if constexpr (kNorm == Norm::General) return std::pow(s, T(1) / p);
  return s;
}

// The index of pair (i, j), i < j, in row-major order.
inline int64_t pair_index(int64_t i, int64_t j, int64_t n) { return i * n - i * (i + 1) / 2 + (j - i - 1); }

template <Norm kNorm, bool kLong, typename T>
void pdist_rows(const T* x, T* out, int64_t n, int64_t m, T p) {
  const int64_t pairs = n * (n - 1) / 2;
  parallel_for(0, pairs, std::max<int64_t>(1, 16384 / std::max<int64_t>(m, 1)), [&](int64_t k0, int64_t k1) {
    int64_t i = 0, hi = n - 1;  // the pair k0 = (i, j): i the last row whose first pair is <= k0
    while (i < hi) {
      const int64_t mid = (i + hi + 1) / 2;
      if (pair_index(mid, mid + 1, n) <= k0)
        i = mid;
      else
        hi = mid - 1;
    }
    int64_t j = i + 1 + (k0 - pair_index(i, i + 1, n));
    for (int64_t k = k0; k < k1; ++k) {
      out[k] = row_distance<kNorm, kLong>(x + i * m, x + j * m, m, p);
      if (++j == n) ++i, j = i + 1;
    }
  });
}

// d||u||_p / du for one coordinate u of a pair at distance d (torch's conventions: 0 where d = 0,
// and where u = 0 for p < 1).
template <Norm kNorm, typename T>
T coordinate_grad(T u, T d, T p) {
  const T s = T((u > 0) - (u < 0));
  if constexpr (kNorm == Norm::Zero) return T(0);
  if constexpr (kNorm == Norm::One) return s;
  if constexpr (kNorm == Norm::Two) return d == 0 ? T(0) : u / d;
  if constexpr (kNorm == Norm::Inf) return d == 0 ? T(0) : s * T(std::abs(u) == d);
  if (d == 0 || (u == 0 && p < 1)) return T(0);
  return s * std::pow(std::abs(u), p - 1) / std::pow(d, p - 1);
}

template <Norm kNorm, typename T>
void pdist_backward_rows(const T* g, const T* x, const T* dist, T* gx, int64_t n, int64_t m, T p) {
  parallel_for(0, n, std::max<int64_t>(1, 16384 / std::max<int64_t>(n * m, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      T* gi = gx + i * m;
      std::fill(gi, gi + m, T(0));
      if (kNorm == Norm::Zero) continue;  // a count of differences has gradient 0
      for (int64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const int64_t k = i < j ? pair_index(i, j, n) : pair_index(j, i, n);
        const T w = g[k], d = dist[k];
        if (w == 0) continue;
        const T* a = x + i * m;
        const T* b = x + j * m;
        if constexpr (kNorm == Norm::Two) {  // one division per pair
          const T scale = d == 0 ? T(0) : w / d;
          for (int64_t c = 0; c < m; ++c) gi[c] += scale * (a[c] - b[c]);
        } else {
          for (int64_t c = 0; c < m; ++c) gi[c] += w * coordinate_grad<kNorm>(a[c] - b[c], d, p);
        }
      }
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
      constexpr Norm kNorm = decltype(norm)::value;
      if (m >= 128)
        pdist_rows<kNorm, true>(static_cast<const T*>(x), static_cast<T*>(out), n, m, static_cast<T>(p));
      else
        pdist_rows<kNorm, false>(static_cast<const T*>(x), static_cast<T*>(out), n, m, static_cast<T>(p));
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

}  // namespace ember::cpu

#include "ember/cpu/isa_end.h"
