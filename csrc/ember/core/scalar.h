// A Python-number-like value: bool, integer, floating or complex.
#pragma once
#include <complex>
#include <cstdint>
#include <type_traits>

#include "ember/core/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float, Complex };
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool b) : kind_(Kind::Bool), i_(b) {}                                           // NOLINT
  Scalar(int v) : kind_(Kind::Int), i_(v) {}                                             // NOLINT
  Scalar(int64_t v) : kind_(Kind::Int), i_(v) {}                                         // NOLINT
  Scalar(double v) : kind_(Kind::Float), d_(v) {}                                        // NOLINT
  Scalar(float v) : kind_(Kind::Float), d_(v) {}                                         // NOLINT
  Scalar(std::complex<double> v) : kind_(Kind::Complex), d_(v.real()), im_(v.imag()) {}  // NOLINT
  Scalar(std::complex<float> v) : Scalar(std::complex<double>(v)) {}                     // NOLINT

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }
  // Real numbers read a complex value's real part (as a complex -> real cast does).
  double to_double() const { return has_double() ? d_ : static_cast<double>(i_); }
  // NaN and out-of-range doubles give INT64_MIN, what x86's conversion (and so torch) gives,
  // without the undefined behaviour of the plain cast (found by UBSan under fuzz_ops.py).
  int64_t to_int() const {
    if (!has_double()) return i_;
    return d_ >= -9223372036854775808.0 && d_ < 9223372036854775808.0 ? static_cast<int64_t>(d_) : INT64_MIN;
  }
  bool to_bool() const { return has_double() ? (d_ != 0 || im_ != 0) : i_ != 0; }
  std::complex<double> to_complex() const { return {to_double(), im_}; }
  template <typename T>
  T to() const {
    if constexpr (is_complex_v<T>)
      return T(to_complex());
    else if constexpr (std::is_same_v<T, bool>)
      return to_bool();
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(to_int());
    else if constexpr (std::is_same_v<T, double>)
      return to_double();
    else
      return T(static_cast<float>(to_double()));
  }
  // dtype a tensor made from this number gets (Python float -> default dtype).
  ScalarType natural_dtype() const {
    return kind_ == Kind::Bool      ? ScalarType::Bool
           : kind_ == Kind::Int     ? ScalarType::Int64
           : kind_ == Kind::Complex ? complex_for(default_dtype())
                                    : default_dtype();
  }

 private:
  bool has_double() const { return kind_ == Kind::Float || kind_ == Kind::Complex; }
  Kind kind_;
  union {
    int64_t i_;
    double d_;  // the real part of a complex value
  };
  double im_ = 0;
};

}  // namespace ember
