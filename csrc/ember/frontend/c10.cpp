#include "ember/frontend/c10.h"

#include <cxxabi.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "ember/core/type_name.h"

namespace ember {

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << c10::toString(t); }

std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << (t == DeviceType::CPU ? "cpu" : "cuda"); }

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return os << s.to_bool();
    case Scalar::Kind::Int:
      return os << s.to_int();
    case Scalar::Kind::Float:
      return os << s.to_double();
    case Scalar::Kind::Complex:
      return os << "(" << s.to_complex().real() << "," << s.to_complex().imag() << ")";
  }
  return os;
}

}  // namespace ember

namespace c10 {

Device::Device(const std::string& spec) {
  ember::Device d(spec);
  type_ = d.type;
  index_ = d.index;
}

std::string Device::str() const {
  std::string s = is_cpu() ? "cpu" : "cuda";
  if (has_index()) {
    s += ':';
    s += std::to_string(index_);
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

const char* toString(ScalarType t) { return ember::scalar_type_name(t).data(); }  // (literals: NUL-ended)

// The names libtorch's TypeMeta reports (the C++ types' names as GCC spells them).
std::string_view TypeMeta::name() const { return cpp_type_name(t_); }

std::ostream& operator<<(std::ostream& os, const TypeMeta& t) { return os << t.name(); }

Scalar Scalar::operator-() const {
  switch (kind()) {
    case Kind::Bool:
      throw ember::Error("torch boolean negative, the `-` operator, is not supported.");
    case Kind::Int:
      return Scalar(-to_int());
    case Kind::Float:
      return Scalar(-to_double());
    case Kind::Complex:
      return Scalar(-to_complex());
  }
  return *this;
}

namespace detail {

void check_fail(const char* cond, const std::string& msg) {
  throw ember::Error(msg.empty() ? std::string("Expected ") + cond + " to be true, but got false." : msg);
}

void internal_assert_fail(const char* cond, const char* file, int line, const std::string& msg) {
  std::string m = std::string(cond) + " INTERNAL ASSERT FAILED at \"" + file + "\":" + std::to_string(line) +
                  ", please report a bug to Ember.";
  if (!msg.empty()) m += " " + msg;
  throw ember::Error(m);
}

void warn(const std::string& msg) { std::cerr << "Warning: " << msg << "\n"; }

}  // namespace detail

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> r(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && r ? std::string(r.get()) : std::string(mangled);
}

}  // namespace c10
