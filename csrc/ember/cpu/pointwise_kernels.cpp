// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/pointwise_kernels.h"

#include <cmath>

#include "ember/core/checked_math.h"
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"

namespace ember::cpu {
namespace {

template <typename M>
M nan_max(M a, M b) {
  if constexpr (std::is_integral_v<M>)
    return a > b ? a : b;
  else
    return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <typename M>
M nan_min(M a, M b) {
  if constexpr (std::is_integral_v<M>)
    return a < b ? a : b;
  else
    return a != a ? a : (b != b ? b : (a < b ? a : b));
}

template <typename T>
void binary_kernel_t(PointwiseOp op, const TensorIter& it) {
  using M = opmath_t<T>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  switch (op) {
    case PointwiseOp::Atan2:
      if constexpr (kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return std::atan2(a, b); });
      break;
    case PointwiseOp::Hypot:
      if constexpr (kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return std::hypot(a, b); });
      break;
    case PointwiseOp::Copysign:
      if constexpr (kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return std::copysign(a, b); });
      break;
    case PointwiseOp::Maximum:
      binary_loop<T, T>(it, [](M a, M b) -> M { return nan_max(a, b); });
      break;
    case PointwiseOp::Minimum:
      binary_loop<T, T>(it, [](M a, M b) -> M { return nan_min(a, b); });
      break;
    case PointwiseOp::Fmax:
      if constexpr (kFloat)
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::fmax(a, b); });
      else
        binary_loop<T, T>(it, [](M a, M b) -> M { return a > b ? a : b; });
      break;
    case PointwiseOp::Fmin:
      if constexpr (kFloat)
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::fmin(a, b); });
      else
        binary_loop<T, T>(it, [](M a, M b) -> M { return a < b ? a : b; });
      break;
    case PointwiseOp::Fmod:
      if constexpr (kFloat)
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::fmod(a, b); });
      else if constexpr (!kBool)
        // Note [Integer division without traps]; a zero divisor can still appear mid-loop through an alias.
        binary_loop<T, T>(it, [](M a, M b) -> M { return b == 0 ? M(0) : int_mod_wrap(a, b); });
      break;
    case PointwiseOp::LogicalAnd:
      binary_loop<bool, T>(it, [](M a, M b) -> bool { return static_cast<bool>(a) && static_cast<bool>(b); });
      break;
    case PointwiseOp::LogicalOr:
      binary_loop<bool, T>(it, [](M a, M b) -> bool { return static_cast<bool>(a) || static_cast<bool>(b); });
      break;
    case PointwiseOp::LogicalXor:
      binary_loop<bool, T>(it, [](M a, M b) -> bool { return static_cast<bool>(a) != static_cast<bool>(b); });
      break;
    case PointwiseOp::BitwiseAnd:
      if constexpr (!kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return static_cast<M>(a & b); });
      break;
    case PointwiseOp::BitwiseOr:
      if constexpr (!kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return static_cast<M>(a | b); });
      break;
    case PointwiseOp::BitwiseXor:
      if constexpr (!kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return static_cast<M>(a ^ b); });
      break;
    case PointwiseOp::LeftShift:  // shifting by the width or more (or by a negative count) gives 0
      if constexpr (!kFloat && !kBool) {
        using U = std::make_unsigned_t<M>;
        constexpr M bits = static_cast<M>(sizeof(M) * 8);
        binary_loop<T, T>(
            it, [](M a, M b) -> M { return (b < 0 || b >= bits) ? M(0) : static_cast<M>(static_cast<U>(a) << b); });
      }
      break;
    case PointwiseOp::RightShift:  // ... and the sign for right shifts
      if constexpr (!kFloat && !kBool) {
        constexpr M bits = static_cast<M>(sizeof(M) * 8);
        binary_loop<T, T>(it, [](M a, M b) -> M {
          return (b < 0 || b >= bits) ? static_cast<M>(a < 0 ? -1 : 0) : static_cast<M>(a >> b);
        });
      }
      break;
  }
}

}  // namespace

void EMBER_ISA_KERNEL(pointwise_binary_kernel)(PointwiseOp op, const TensorIter& it, ScalarType compute,
                                               const char* name) {
  EMBER_DISPATCH_ALL(compute, name, [&] { binary_kernel_t<scalar_t>(op, it); });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
