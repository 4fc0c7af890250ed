// Element moves without a dtype dispatch, for kernels that only copy elements (index ops).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ember {

struct Word16 {
  uint64_t lo, hi;
};
// An element of N bytes as an unsigned word (a pair for 16): stores through it do not alias the
// kernels' int64 indices and bounds, which stay in registers (a char array aliased everything:
// gather reloaded its bounds for every element, 2x torch's time).
template <size_t N>
using Bytes = std::conditional_t<
    N == 1, uint8_t,
    std::conditional_t<N == 2, uint16_t,
                       std::conditional_t<N == 4, uint32_t, std::conditional_t<N == 8, uint64_t, Word16>>>>;
// Calls f(std::integral_constant<size_t, N>{}) for an element size N of 1, 2, 4, 8 or 16: kernels
// that only move elements need no dtype dispatch. False (f not called) for any other size.
template <typename F>
bool with_element_bytes(size_t n, F&& f) {
  switch (n) {
    case 1:
      f(std::integral_constant<size_t, 1>{});
      return true;
    case 2:
      f(std::integral_constant<size_t, 2>{});
      return true;
    case 4:
      f(std::integral_constant<size_t, 4>{});
      return true;
    case 8:
      f(std::integral_constant<size_t, 8>{});
      return true;
    case 16:
      f(std::integral_constant<size_t, 16>{});
      return true;
  }
  return false;
}

}  // namespace ember
