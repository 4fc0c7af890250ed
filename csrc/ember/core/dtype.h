// Element types, their properties, and PyTorch's type-promotion rules.
#pragma once
#include <complex>
#include <cstdint>
#include <string_view>

#include "ember/core/half.h"

namespace ember {

// Order matters: it indexes the tables in dtype.cpp.
enum class ScalarType : int8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  Undefined,
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);

size_t element_size(ScalarType t);
std::string_view dtype_name(ScalarType t);  // "float32", "int64", ...
inline bool is_floating_point(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 || t == ScalarType::Float32 || t == ScalarType::Float64;
}
inline bool is_complex(ScalarType t) { return t == ScalarType::Complex64 || t == ScalarType::Complex128; }
inline bool is_integral(ScalarType t, bool include_bool) {
  return (include_bool && t == ScalarType::Bool) || (t >= ScalarType::UInt8 && t <= ScalarType::Int64);
}
inline bool is_signed(ScalarType t) { return !(t == ScalarType::Bool || t == ScalarType::UInt8); }

// torch.promote_types: the smallest type both can be cast to without losing the category.
ScalarType promote_types(ScalarType a, ScalarType b);
// torch.can_cast: whether `from` may be written into `to` under PyTorch's same-kind rule.
bool can_cast(ScalarType from, ScalarType to);

ScalarType default_dtype();  // float32 unless set_default_dtype changed it
void set_default_dtype(ScalarType t);
ScalarType complex_for(ScalarType real);  // float32 -> complex64, ...

// std::complex<float>/<double> element types; real_t is the type of their parts.
template <typename T>
inline constexpr bool is_complex_v = false;
template <typename T>
inline constexpr bool is_complex_v<std::complex<T>> = true;
template <typename T>
struct RealType {
  using type = T;
};
template <typename T>
struct RealType<std::complex<T>> {
  using type = T;
};
template <typename T>
using real_t = typename RealType<T>::type;
ScalarType to_real(ScalarType t);  // complex64 -> float32, complex128 -> float64, others unchanged

template <typename T>
struct CppTypeToScalar;
#define EMBER_MAP_TYPE(T, S)                           \
  template <>                                          \
  struct CppTypeToScalar<T> {                          \
    static constexpr ScalarType value = ScalarType::S; \
  };
EMBER_MAP_TYPE(bool, Bool)
EMBER_MAP_TYPE(uint8_t, UInt8)
EMBER_MAP_TYPE(int8_t, Int8)
EMBER_MAP_TYPE(int16_t, Int16)
EMBER_MAP_TYPE(int32_t, Int32)
EMBER_MAP_TYPE(int64_t, Int64)
EMBER_MAP_TYPE(Half, Float16)
EMBER_MAP_TYPE(BFloat16, BFloat16)
EMBER_MAP_TYPE(float, Float32)
EMBER_MAP_TYPE(double, Float64)
EMBER_MAP_TYPE(std::complex<float>, Complex64)
EMBER_MAP_TYPE(std::complex<double>, Complex128)
#undef EMBER_MAP_TYPE

}  // namespace ember
