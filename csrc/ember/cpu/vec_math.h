// Explicit 8-lane float math for hot loops (GCC/Clang vector extensions: AVX2 under
// -march=native, SSE pairs otherwise). Written with vector types rather than left to the
// auto-vectorizer, which gives up on selects next to float ops under the default
// -ftrapping-math.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ember::cpu {

using vf8 = float __attribute__((vector_size(32)));
using vi8 = int32_t __attribute__((vector_size(32)));
constexpr int kVecF = 8;

inline vf8 splat(float v) { return vf8{v, v, v, v, v, v, v, v}; }
inline vf8 load8(const float* p) {
  vf8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store8(float* p, vf8 v) { std::memcpy(p, &v, sizeof(v)); }
// Lanes of v where m is set, else of w (m from a comparison: all ones or zero per lane).
inline vf8 select(vi8 m, vf8 v, vf8 w) { return m ? v : w; }
// Largest of a and b, NaN if either is (torch's max/amax propagate NaN).
inline vf8 max_nan(vf8 a, vf8 b) { return select((a > b) | (a != a), a, b); }
inline vf8 min_nan(vf8 a, vf8 b) { return select((a < b) | (a != a), a, b); }

// e^x within 2 ulp over the whole range (denormal results and inf included, NaN propagates).
// Cephes' reduction x = n ln2 + r with a degree-6 polynomial for e^r; 2^n is applied as two
// factors so n in [-150, 128] never leaves the normal exponent range.
inline vf8 exp8(vf8 x) {
  vf8 xc = select(x < -104.0f, splat(-104.0f), x);
  xc = select(xc > 89.0f, splat(89.0f), xc);
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  vf8 n = (xc * 1.44269504088896341f + kRound) - kRound;
  vf8 r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  vf8 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  vi8 ni = __builtin_convertvector(n, vi8);
  vi8 n1 = ni >> 1, n2 = ni - n1;
  vf8 s1 = (vf8)((n1 + 127) << 23), s2 = (vf8)((n2 + 127) << 23);
  vf8 y = (p * s1) * s2;
  y = select(x < -104.0f, splat(0.0f), y);
  return select(x == x, y, x);
}

// Scalar e^x with exactly the lanes' arithmetic, so an element's value does not depend on
// whether it fell in a vector body or a tail.
inline float exp_f(float x) { return exp8(splat(x))[0]; }

// e^x for a kernel's computation type: the float path above, std::exp for double.
template <typename M>
inline M exp_any(M x) {
  if constexpr (std::is_same_v<M, float>)
    return exp_f(x);
  else
    return std::exp(x);
}

}  // namespace ember::cpu
