// Run a generic lambda with `scalar_t` bound to the C++ type of a runtime dtype.
#pragma once
#include "ember/core/dtype.h"
#include "ember/core/error.h"

#define EMBER_TYPE_CASE(enum_name, T, ...) \
  case ::ember::ScalarType::enum_name: {   \
    using scalar_t = T;                    \
    return __VA_ARGS__();                  \
  }

#define EMBER_INT_CASES(...)                   \
  EMBER_TYPE_CASE(UInt8, uint8_t, __VA_ARGS__) \
  EMBER_TYPE_CASE(Int8, int8_t, __VA_ARGS__)   \
  EMBER_TYPE_CASE(Int16, int16_t, __VA_ARGS__) \
  EMBER_TYPE_CASE(Int32, int32_t, __VA_ARGS__) \
  EMBER_TYPE_CASE(Int64, int64_t, __VA_ARGS__)

#define EMBER_FLOAT_CASES(...)                              \
  EMBER_TYPE_CASE(Float16, ::ember::Half, __VA_ARGS__)      \
  EMBER_TYPE_CASE(BFloat16, ::ember::BFloat16, __VA_ARGS__) \
  EMBER_TYPE_CASE(Float32, float, __VA_ARGS__)              \
  EMBER_TYPE_CASE(Float64, double, __VA_ARGS__)

#define EMBER_DISPATCH_SWITCH(dtype, name, ...)                                                         \
  [&] {                                                                                                 \
    switch (dtype) {                                                                                    \
      __VA_ARGS__                                                                                       \
      default:                                                                                          \
        EMBER_NOT_IMPLEMENTED("\"", name, "\" not implemented for '", ::ember::dtype_name(dtype), "'"); \
    }                                                                                                   \
  }()

// All real types including bool.
#define EMBER_DISPATCH_ALL(dtype, name, ...)                                                  \
  EMBER_DISPATCH_SWITCH(dtype, name,                                                          \
                        EMBER_TYPE_CASE(Bool, bool, __VA_ARGS__) EMBER_INT_CASES(__VA_ARGS__) \
                            EMBER_FLOAT_CASES(__VA_ARGS__))
#define EMBER_DISPATCH_NUMERIC(dtype, name, ...) \
  EMBER_DISPATCH_SWITCH(dtype, name, EMBER_INT_CASES(__VA_ARGS__) EMBER_FLOAT_CASES(__VA_ARGS__))
#define EMBER_DISPATCH_FLOAT(dtype, name, ...) EMBER_DISPATCH_SWITCH(dtype, name, EMBER_FLOAT_CASES(__VA_ARGS__))
#define EMBER_DISPATCH_INTEGRAL(dtype, name, ...) \
  EMBER_DISPATCH_SWITCH(dtype, name, EMBER_TYPE_CASE(Bool, bool, __VA_ARGS__) EMBER_INT_CASES(__VA_ARGS__))

// Complex cases are kept out of the macros above: only the dispatches that support complex
// pay for the extra instantiations.
#define EMBER_COMPLEX_CASES(...)                               \
  EMBER_TYPE_CASE(Complex64, std::complex<float>, __VA_ARGS__) \
  EMBER_TYPE_CASE(Complex128, std::complex<double>, __VA_ARGS__)
#define EMBER_DISPATCH_ALL_AND_COMPLEX(dtype, name, ...)                                      \
  EMBER_DISPATCH_SWITCH(dtype, name,                                                          \
                        EMBER_TYPE_CASE(Bool, bool, __VA_ARGS__) EMBER_INT_CASES(__VA_ARGS__) \
                            EMBER_FLOAT_CASES(__VA_ARGS__) EMBER_COMPLEX_CASES(__VA_ARGS__))
#define EMBER_DISPATCH_FLOAT_AND_COMPLEX(dtype, name, ...) \
  EMBER_DISPATCH_SWITCH(dtype, name, EMBER_FLOAT_CASES(__VA_ARGS__) EMBER_COMPLEX_CASES(__VA_ARGS__))
#define EMBER_DISPATCH_COMPLEX(dtype, name, ...) EMBER_DISPATCH_SWITCH(dtype, name, EMBER_COMPLEX_CASES(__VA_ARGS__))

namespace ember {
// Type used for arithmetic on T: 16-bit floats compute in float.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

// An element as type M. A bool is read as its byte (!= 0), as torch's c10::load does: its memory
// may hold other bytes (an uninitialized empty() tensor, a uint8 tensor viewed as bool), and
// loading such a byte as a C++ bool is undefined (UBSan: "invalid bool load"; GCC then passes
// the byte through, so a bool 190 became 190.0 in a float copy).
template <typename M, typename T>
inline M load_as(const T* p) {
  if constexpr (std::is_same_v<T, bool>)
    return static_cast<M>(*reinterpret_cast<const uint8_t*>(p) != 0);
  else
    return static_cast<M>(*p);
}
}  // namespace ember
