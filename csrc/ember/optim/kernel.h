// Helpers of the optimizers' element loops: kernel code (Note [Multi-ISA kernels] in cpu/isa.h),
// included after ember/cpu/isa_begin.h.
#pragma once
#include <type_traits>

#include "ember/cpu/isa_check.h"  // Note [Multi-ISA kernels]

namespace ember::optim::detail {
inline namespace EMBER_ISA_NS {

// Calls f(std::true_type) or f(std::false_type): options become compile-time constants inside
// the element loops, which GCC only vectorizes without branches (loop unswitching does not reach
// that many invariant conditions). Compiled at the kernel's level like the lambdas it calls, so
// they inline into one function and the loop sees its pointers and constants as locals: a
// baseline static_if kept each lambda out of line, reading them through the closure, and the
// loops stayed scalar (Adam on 2M parameters: 7.6 ms on one thread, memory-bound would be 2.5).
template <typename F>
inline void static_if(bool b, const F& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// torch's lerp: start + w * (end - start) for w < 0.5, else end - (end - start) * (1 - w).
// `small` is w < 0.5, computed once; both forms are evaluated so the loop stays branch-free.
template <typename T>
inline T lerp(T start, T end, T w, bool small) {
  T a = start + w * (end - start);
  T b = end - (end - start) * (T(1) - w);
  return small ? a : b;
}

// Weight decay of the Adam family: decoupled (AdamW) scales the parameter, otherwise the decay
// joins the gradient. kWd / kDecoupled are static_if's compile-time options.
template <bool kWd, bool kDecoupled, typename T>
inline void apply_weight_decay(T& g, T& p, T wd, T decay) {
  if constexpr (kWd) {
    if constexpr (kDecoupled)
      p = p * decay;
    else
      g = g + wd * p;
  }
}

}  // namespace EMBER_ISA_NS
}  // namespace ember::optim::detail
