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
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(static_cast<M>(a[k])));
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<out_t*>(d[0] + k * s[0]) =
            static_cast<out_t>(f(static_cast<M>(*reinterpret_cast<const in_t*>(d[1] + k * s[1]))));
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
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(static_cast<M>(a[k]), static_cast<M>(b[k])));
    } else if (s[0] == so && s[1] == si && s[2] == 0) {
      const M bv = static_cast<M>(*b);
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(static_cast<M>(a[k]), bv));
    } else if (s[0] == so && s[1] == 0 && s[2] == si) {
      const M av = static_cast<M>(*a);
      for (int64_t k = 0; k < n; ++k) o[k] = static_cast<out_t>(f(av, static_cast<M>(b[k])));
    } else {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<out_t*>(d[0] + k * s[0]) =
            static_cast<out_t>(f(static_cast<M>(*reinterpret_cast<const in_t*>(d[1] + k * s[1])),
                                 static_cast<M>(*reinterpret_cast<const in_t*>(d[2] + k * s[2]))));
    }
  });
}

}  // namespace EMBER_ISA_NS
}  // namespace ember
