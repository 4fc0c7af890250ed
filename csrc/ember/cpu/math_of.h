// exp, sigmoid and tanh for a kernel's opmath type M: the vectorizable float routines of
// unary_math.h for float; for double exp and sigmoid through Note [Double exp], tanh through Note [Double math]. Kernel
// code (Note [Multi-ISA kernels] in isa.h): include after isa_begin.h and unary_math.h.
#pragma once
#include <cmath>
#include <type_traits>

#include "ember/cpu/double_math.h"
#include "ember/cpu/unary_math.h"

namespace ember::math {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

template <typename M>
EMBER_MATH_INLINE M exp_of(M x) {
  return math::exp(x);  // float: exp_lanes; double: Note [Double exp]
}
template <typename M>
EMBER_MATH_INLINE M sigmoid_of(M x) {
  if constexpr (std::is_same_v<M, float>)
    return math::sigmoid(x);
  else
    return M(1) / (M(1) + math::exp(-x));
}
template <typename M>
EMBER_MATH_INLINE M tanh_of(M x) {
  return math::tanh(x);  // float: unary_math.h; double: Note [Double math]
}

}  // namespace EMBER_ISA_NS
}  // namespace ember::math
