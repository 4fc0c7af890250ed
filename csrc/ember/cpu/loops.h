// Row loops for elementwise kernels, with contiguous and scalar-operand fast paths the compiler
// vectorizes. `f` takes and returns values in opmath_t (float for 16-bit floats).
#pragma once
#include "ember/core/dispatch.h"
#include "ember/cpu/isa_check.h"  // Note [Multi-ISA kernels]
#include "ember/cpu/iter.h"

namespace ember {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

template <typename out_t, typename in_t, typename F>
void unary_loop(const TensorIter& it, const F& f) {
  using M = opmath_t<in_t>;
  it.for_each([&f](char** d, const int64_t* s, int64_t n) {
    auto* o = reinterpret_cast<out_t*>(d[0]);
    auto* a = reinterpret_cast<const in_t*>(d[1]);
    if (s[0] == sizeof(out_t) && s[1] == sizeof(in_t)) {
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(load_as<M>(a + k)));
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<out_t*>(d[0] + k * s[0]) =
            static_cast<out_t>(f(load_as<M>(reinterpret_cast<const in_t*>(d[1] + k * s[1]))));
    }
  });
}

template <typename out_t, typename in_t, typename F>
void binary_loop(const TensorIter& it, const F& f) {
  using M = opmath_t<in_t>;
  it.for_each([&f](char** d, const int64_t* s, int64_t n) {
    auto* o = reinterpret_cast<out_t*>(d[0]);
    auto* a = reinterpret_cast<const in_t*>(d[1]);
    auto* b = reinterpret_cast<const in_t*>(d[2]);
    constexpr int64_t so = sizeof(out_t), si = sizeof(in_t);
    if (s[0] == so && s[1] == si && s[2] == si) {
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(load_as<M>(a + k), load_as<M>(b + k)));
    } else if (s[0] == so && s[1] == si && s[2] == 0) {
      const M bv = load_as<M>(b);
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(load_as<M>(a + k), bv));
    } else if (s[0] == so && s[1] == 0 && s[2] == si) {
      const M av = load_as<M>(a);
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(av, load_as<M>(b + k)));
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<out_t*>(d[0] + k * s[0]) =
            static_cast<out_t>(f(load_as<M>(reinterpret_cast<const in_t*>(d[1] + k * s[1])),
                                 load_as<M>(reinterpret_cast<const in_t*>(d[2] + k * s[2]))));
    }
  });
}

#ifdef EMBER_AVX512_LANES
// Float loops for an op with a 16-lane form f16 that gives f's float for every input (Note
// [16-lane float math] in unary_math.h): contiguous runs go 16 at a time (a masked tail included),
// strided ones element by element with f.
template <typename F16, typename F>
void unary_loop16(const TensorIter& it, const F16& f16, const F& f) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
      auto* o = reinterpret_cast<float*>(d[0]);
      auto* a = reinterpret_cast<const float*>(d[1]);
      int64_t k = 0;
      for (; k + 16 <= n; k += 16) _mm512_storeu_ps(o + k, f16(_mm512_loadu_ps(a + k)));
      if (k < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - k)) - 1);
        _mm512_mask_storeu_ps(o + k, m, f16(_mm512_maskz_loadu_ps(m, a + k)));
      }
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<float*>(d[0] + k * s[0]) = f(*reinterpret_cast<const float*>(d[1] + k * s[1]));
    }
  });
}
template <typename F16, typename F>
void binary_loop16(const TensorIter& it, const F16& f16, const F& f) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float) && s[2] == sizeof(float)) {
      auto* o = reinterpret_cast<float*>(d[0]);
      auto* a = reinterpret_cast<const float*>(d[1]);
      auto* b = reinterpret_cast<const float*>(d[2]);
      int64_t k = 0;
      for (; k + 16 <= n; k += 16) _mm512_storeu_ps(o + k, f16(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k)));
      if (k < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - k)) - 1);
        _mm512_mask_storeu_ps(o + k, m, f16(_mm512_maskz_loadu_ps(m, a + k), _mm512_maskz_loadu_ps(m, b + k)));
      }
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<float*>(d[0] + k * s[0]) =
            f(*reinterpret_cast<const float*>(d[1] + k * s[1]), *reinterpret_cast<const float*>(d[2] + k * s[2]));
    }
  });
}
#endif

}  // namespace EMBER_ISA_NS
}  // namespace ember
