// Checked integer arithmetic for sizes, numels, strides, byte counts and offsets.
//
// Note [Checked size arithmetic]
// Every size computation in the core goes through these helpers: a wrapped product would
// allocate a tiny (or 0-byte) buffer behind a huge shape, or let a view's offset wrap to a
// place outside its storage, and the first write would corrupt memory. The helpers use the
// compiler's overflow builtins (one multiply/add and a flag test), so they cost what the
// unchecked arithmetic costs. Overflow raises RuntimeError with PyTorch's messages:
// "numel: integer multiplication overflow" for a shape whose element count does not fit int64,
// "Storage size calculation overflowed with sizes=[...]" for a byte count that does not fit.
// A running product that overflows is an error even when a later dim is 0, as in PyTorch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ember/core/error.h"

namespace ember {

class IntArrayRef;

// True when a * b (a + b) overflows int64; *out gets the wrapped result either way.
inline bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool add_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }

// a * b and a + b, raising RuntimeError "<what>: integer multiplication/addition overflow".
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_expect(mul_overflows(a, b, &r), 0))
    throw Error(detail::str_cat(what, ": integer multiplication overflow"));
  return r;
}
inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_expect(add_overflows(a, b, &r), 0)) throw Error(detail::str_cat(what, ": integer addition overflow"));
  return r;
}

// Product of sizes; false when a running product overflows int64.
bool safe_numel(IntArrayRef sizes, int64_t* out);
// Product of sizes, raising "numel: integer multiplication overflow".
int64_t checked_numel(IntArrayRef sizes);

// Bytes a contiguous tensor of `sizes` needs (sizes must be non-negative). Raises PyTorch's
// "Storage size calculation overflowed with sizes=[...]" when it does not fit int64.
size_t storage_nbytes_contiguous(IntArrayRef sizes, size_t itemsize);
// Bytes a storage needs for a (sizes, strides, offset) layout with non-negative strides: 0 when
// the tensor is empty, else (offset + 1 + sum (size - 1) * stride) * itemsize. Raises PyTorch's
// "Storage size calculation overflowed with sizes=[...] and strides=[...]".
size_t storage_nbytes_strided(IntArrayRef sizes, IntArrayRef strides, size_t itemsize, int64_t offset = 0);

// Checks that every element of a (sizes, strides, offset) view lies inside a storage of
// `storage_nbytes` bytes (strides of any sign), with checked arithmetic; raises PyTorch's
// "setStorage: ... out of bounds for storage of size N" (or the overflow message) otherwise.
void check_view_in_bounds(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t itemsize,
                          size_t storage_nbytes);

}  // namespace ember

namespace ember {

// Note [Integer division without traps]
// x86's idiv raises SIGFPE for INT_MIN / -1 (and INT_MIN % -1), which kills the process. PyTorch
// returns the wrapped quotient (INT_MIN) and remainder 0, so the kernels divide through these.
// Division by zero is checked by the ops before the kernel (RuntimeError "ZeroDivisionError").
template <typename T>
inline T int_div_wrap(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (__builtin_expect(b == -1, 0)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}
template <typename T>
inline T int_mod_wrap(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (__builtin_expect(b == -1, 0)) return T(0);
  }
  return static_cast<T>(a % b);
}

}  // namespace ember
