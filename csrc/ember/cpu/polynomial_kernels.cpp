// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). The three-term recurrences of
// the orthogonal polynomials (Note [Orthogonal polynomials] in ops/polynomials.cpp), vectorized
// across elements.
#include "ember/cpu/polynomial_kernels.h"

#include "ember/cpu/isa_begin.h"

namespace ember::cpu {
namespace {

// Four elements at a time in double vectors (GCC's vector extension; plain loops over arrays did
// not vectorize: 3 ns an element before the first step). Each group of four steps to its own
// largest degree with the recurrence in registers.
typedef double vd4 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));
typedef long long vl4 __attribute__((vector_size(32)));

// P_1(x) and P_{k+1} from P_k = c and P_{k-1} = p.
template <int Kind>
inline vd4 first(vd4 x) {
  if constexpr (Kind == 0 || Kind == 5 || Kind == 7) return x;  // T, He, P
  if constexpr (Kind == 1 || Kind == 4) return 2 * x;           // U, H
  if constexpr (Kind == 2) return 2 * x - 1;                    // V
  if constexpr (Kind == 3) return 2 * x + 1;                    // W
  return 1 - x;                                                 // L
}
template <int Kind>
inline vd4 next(vd4 x, double k, vd4 c, vd4 p) {
  if constexpr (Kind <= 3) return 2 * x * c - p;
  if constexpr (Kind == 4) return 2 * x * c - 2 * k * p;
  if constexpr (Kind == 5) return x * c - k * p;
  const double inv = 1 / (k + 1);  // a multiply: a division per step was the chain's slowest link
  if constexpr (Kind == 6) return ((2 * k + 1 - x) * c - k * p) * inv;
  return ((2 * k + 1) * x * c - k * p) * inv;
}

// n truncated toward zero as torch's cast to an integer; NaN and infinities (n - n is not 0) give
// -1. Below 2^52, adding and subtracting 2^52 rounds to nearest; a step back toward zero where
// that rounded away gives the truncation; larger magnitudes are integers already.
inline vd4 degree(vd4 n) {
  const vd4 big = vd4{} + 4503599627370496.0, zero = vd4{}, one = zero + 1.0;
  const vd4 a = n < zero ? -n : n;
  vd4 r = (a + big) - big;
  r = r > a ? r - one : r;
  r = a < big ? r : a;
  r = n < zero ? -r : r;
  return n - n == zero ? r : zero - 1.0;
}

// G groups of four side by side: one group's recurrence is a chain of dependent operations, so
// several in flight keep the vector units busy. They step to the largest degree among them.
template <int Kind, int G>
inline void groups(const vd4* x, const vd4* n, vd4* out) {
  vd4 d[G], p[G], c[G];
  double top = 0;
  const vd4 zero = vd4{};
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    d[g] = degree(n[g]);
    p[g] = zero + 1.0;
    c[g] = first<Kind>(x[g]);
    out[g] = d[g] < zero ? zero : d[g] == zero ? p[g] : c[g];
    top = std::max(top, std::max(std::max(d[g][0], d[g][1]), std::max(d[g][2], d[g][3])));
  }
  for (double k = 1; k < top; ++k) {
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const vd4 v = next<Kind>(x[g], k, c[g], p[g]);
      p[g] = c[g];
      c[g] = v;
      out[g] = d[g] == k + 1 ? v : out[g];
    }
  }
}

template <typename T>
inline vd4 load4(const T* p) {
  if constexpr (std::is_same_v<T, double>) {
    vd4 v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  } else {
    vf4 f;
    std::memcpy(&f, p, sizeof(f));
    return __builtin_convertvector(f, vd4);
  }
}
template <typename T>
inline void store4(T* p, vd4 v) {
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(p, &v, sizeof(v));
  } else {
    const vf4 f = __builtin_convertvector(v, vf4);
    std::memcpy(p, &f, sizeof(f));
  }
}

template <int Kind, typename T>
void polynomial_run(const T* x, const T* n, T* y, int64_t count) {
  constexpr int G = 4;
  int64_t i = 0;
  for (; i + 4 * G <= count; i += 4 * G) {
    vd4 xv[G], nv[G], r[G];
    for (int g = 0; g < G; ++g) {
      xv[g] = load4(x + i + 4 * g);
      nv[g] = load4(n + i + 4 * g);
    }
    groups<Kind, G>(xv, nv, r);
    for (int g = 0; g < G; ++g) store4(y + i + 4 * g, r[g]);
  }
  for (; i < count; i += 4) {  // the rest one group at a time, the last padded with degree 0
    vd4 xv = vd4{}, nv = vd4{}, r;
    for (int64_t j = 0; j < 4 && i + j < count; ++j) {
      xv[j] = static_cast<double>(x[i + j]);
      nv[j] = static_cast<double>(n[i + j]);
    }
    groups<Kind, 1>(&xv, &nv, &r);
    for (int64_t j = 0; j < 4 && i + j < count; ++j) y[i + j] = static_cast<T>(r[j]);
  }
}

template <typename T>
void polynomial_of(int kind, const T* x, const T* n, T* y, int64_t count) {
  switch (kind) {
    case 0:
      return polynomial_run<0>(x, n, y, count);
    case 1:
      return polynomial_run<1>(x, n, y, count);
    case 2:
      return polynomial_run<2>(x, n, y, count);
    case 3:
      return polynomial_run<3>(x, n, y, count);
    case 4:
      return polynomial_run<4>(x, n, y, count);
    case 5:
      return polynomial_run<5>(x, n, y, count);
    case 6:
      return polynomial_run<6>(x, n, y, count);
    default:
      return polynomial_run<7>(x, n, y, count);
  }
}

}  // namespace

void EMBER_ISA_KERNEL(orthogonal_polynomial)(int kind, ScalarType dt, const void* x, const void* n, void* y,
                                             int64_t count) {
  if (dt == ScalarType::Float64)
    polynomial_of<double>(kind, static_cast<const double*>(x), static_cast<const double*>(n), static_cast<double*>(y),
                          count);
  else
    polynomial_of<float>(kind, static_cast<const float*>(x), static_cast<const float*>(n), static_cast<float*>(y),
                         count);
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
