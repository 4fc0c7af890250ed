#include "ember/core/dtype.h"

#include <atomic>

#include "ember/core/error.h"
#include "ember/core/type_name.h"

namespace ember {
namespace {
using S = ScalarType;
constexpr size_t kSizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
constexpr std::string_view kNames[] = {"bool",    "uint8",    "int8",    "int16",   "int32",     "int64",
                                       "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
std::atomic<ScalarType> g_default_dtype{ScalarType::Float32};

int category(ScalarType t) {  // bool < integer < floating < complex
  if (t == S::Bool) return 0;
  if (is_integral(t, false)) return 1;
  if (is_floating_point(t)) return 2;
  return 3;
}
int int_bits(ScalarType t) { return static_cast<int>(element_size(t)) * 8; }
}  // namespace

size_t element_size(ScalarType t) {
  EMBER_CHECK(t != S::Undefined, "element_size of an undefined dtype");
  return kSizes[static_cast<int>(t)];
}
std::string_view dtype_name(ScalarType t) { return t == S::Undefined ? "undefined" : kNames[static_cast<int>(t)]; }

// The C++ types' names as GCC spells them: libtorch's TypeMeta and torch's messages use these.
constexpr std::string_view kCppNames[] = {"bool",  "unsigned char", "signed char",         "short int",
                                          "int",   "long int",      "c10::Half",           "c10::BFloat16",
                                          "float", "double",        "c10::complex<float>", "c10::complex<double>"};
std::string_view cpp_type_name(ScalarType t) {
  return t == S::Undefined ? "nullptr (uninitialized)" : kCppNames[static_cast<int>(t)];
}

// libtorch's ScalarType names ("Float", "Long"): its operator<< and some of torch's messages.
constexpr std::string_view kScalarTypeNames[] = {"Bool",  "Byte",   "Char",         "Short",
                                                 "Int",   "Long",   "Half",         "BFloat16",
                                                 "Float", "Double", "ComplexFloat", "ComplexDouble"};
std::string_view scalar_type_name(ScalarType t) {
  return t == S::Undefined ? "Undefined" : kScalarTypeNames[static_cast<int>(t)];
}

ScalarType complex_for(ScalarType real) {
  if (is_complex(real)) return real;
  return real == S::Float64 ? S::Complex128 : S::Complex64;
}

ScalarType to_real(ScalarType t) {
  if (t == S::Complex64) return S::Float32;
  if (t == S::Complex128) return S::Float64;
  return t;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == S::Undefined) return b;
  if (b == S::Undefined) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) {
    if (ca < cb) std::swap(a, b), std::swap(ca, cb);  // a has the higher category
    if (ca == 3 && cb == 2) {                         // complex with a real float
      return (a == S::Complex128 || b == S::Float64) ? S::Complex128 : S::Complex64;
    }
    return a;
  }
  switch (ca) {
    case 1: {  // two different integer types
      bool sa = is_signed(a), sb = is_signed(b);
      if (sa == sb) return int_bits(a) >= int_bits(b) ? a : b;
      ScalarType u = sa ? b : a, s = sa ? a : b;  // only uint8 is unsigned
      (void)u;
      return s == S::Int8 ? S::Int16 : s;
    }
    case 2:
      if ((a == S::Float16 && b == S::BFloat16) || (a == S::BFloat16 && b == S::Float16)) return S::Float32;
      return element_size(a) >= element_size(b) ? a : b;
    default:
      return element_size(a) >= element_size(b) ? a : b;
  }
}

bool can_cast(ScalarType from, ScalarType to) { return category(from) <= category(to); }

ScalarType default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(ScalarType t) {
  EMBER_CHECK_TYPEERR(t == S::Float32 || t == S::Float64 || t == S::Float16 || t == S::BFloat16,
                      "only floating-point types are supported as the default type");
  g_default_dtype.store(t);
}

}  // namespace ember
