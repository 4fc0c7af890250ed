// Explicit 8-lane float math for hot loops (GCC/Clang vector extensions: AVX2 under
// -march=native, SSE pairs otherwise). Written with vector types rather than left to the
// auto-vectorizer, which gives up on selects next to float ops under the default
// -ftrapping-math.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ember/cpu/isa_check.h"  // Note [Multi-ISA kernels]
#include "ember/cpu/unary_math.h"

// In the SSE baseline GCC notes that passing these 32-byte vectors by value has an AVX-specific
// ABI (-Wpsabi); it cannot matter here: the functions inline, each ISA level has its own copies.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ember::cpu {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

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
inline vf8 abs8(vf8 v) { return (vf8)((vi8)v & 0x7fffffff); }

// e^x in 8 lanes: the same body as the unary kernels' float exp (math::exp_lanes).
inline vf8 exp8(vf8 x) { return math::exp_lanes<vf8, vi8>(x); }

// Scalar e^x with exactly the lanes' arithmetic, so an element's value does not depend on
// whether it fell in a vector body or a tail.
inline float exp_f(float x) { return exp8(splat(x))[0]; }

// Note [Subnormal exps in softmax]: softmax, log-sum-exp and cross-entropy exponentiate x - max.
// Below float's normal range (x - max < -87) such a term is lost next to the max's e^0 = 1, but
// computing it (and dividing it by the sum) makes subnormal intermediates, each a microcode assist
// on Intel cores: a causally masked score matrix (half its entries -inf) took 4x the time of an
// unmasked one. These kernels use exp8_ftz, which gives 0 there; NaN still propagates.
inline vf8 exp8_ftz(vf8 x) {
  const vf8 lo = splat(-87.0f);
  return select(x < lo, splat(0.0f), exp8(max_nan(x, lo)));
}
inline float exp_f_ftz(float x) { return exp8_ftz(splat(x))[0]; }

// The widest float vector of the ISA level compiled for: 16 lanes where AVX-512 is on, else vf8.
// For loops bound by arithmetic (exp per element) rather than memory. A lane's value is the same
// at every width (exp_lanes is one body), so only the order of a sum over lanes differs.
#ifdef EMBER_AVX512_LANES
using vfw = float __attribute__((vector_size(64)));
using viw = int32_t __attribute__((vector_size(64)));
#else
using vfw = vf8;
using viw = vi8;
#endif
constexpr int kVecW = sizeof(vfw) / sizeof(float);
inline vfw splatw(float v) { return vfw{} + v; }
inline vfw loadw(const float* p) {
  vfw v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void storew(float* p, vfw v) { std::memcpy(p, &v, sizeof(v)); }
inline vfw expw(vfw x) { return math::exp_lanes<vfw, viw>(x); }
// exp8_ftz's rule (Note [Subnormal exps in softmax]) at this width.
inline vfw expw_ftz(vfw x) {
  const vfw lo = splatw(-87.0f);
  const viw below = x < lo;
  const vfw clamped = ((x > lo) | (x != x)) ? x : lo;
  return below ? splatw(0.0f) : expw(clamped);
}
inline float lane_sum(vfw v) {
  float s = 0;
  for (int j = 0; j < kVecW; ++j) s += v[j];
  return s;
}

// e^x for a kernel's computation type: the float path above, Note [Double exp] for double.
template <typename M>
inline M exp_any(M x) {
  if constexpr (std::is_same_v<M, float>)
    return exp_f(x);
  else
    return math::exp(x);
}

}  // namespace EMBER_ISA_NS
}  // namespace ember::cpu
