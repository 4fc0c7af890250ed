// Exceptions thrown by the core. Each maps to the Python exception PyTorch raises.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {  // -> RuntimeError
 public:
  using std::runtime_error::runtime_error;
  // c10::Error's accessors (the C++ frontend aliases c10::Error to this class).
  const char* what_without_backtrace() const noexcept { return what(); }
  std::string msg() const { return what(); }
};
class TypeError : public Error {  // -> TypeError
 public:
  using Error::Error;
};
class ValueError : public Error {  // -> ValueError
 public:
  using Error::Error;
};
class IndexError : public Error {  // -> IndexError
 public:
  using Error::Error;
};
class NotImplementedError : public Error {  // -> NotImplementedError
 public:
  using Error::Error;
};
class LinAlgError : public Error {  // -> ember.linalg.LinAlgError (a RuntimeError, as torch's)
 public:
  using Error::Error;
};

// PyTorch's TORCH_WARN_ONCE: each message is reported once per process through a hook (the
// Python bindings install one that raises a UserWarning); without a hook it goes to stderr.
using WarnHook = void (*)(const std::string&);
void set_warn_hook(WarnHook hook);
void warn_once(const std::string& msg);

namespace detail {
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}
}  // namespace detail

}  // namespace ember

// EMBER_CHECK(cond, msg...) throws ember::Error; the _TYPE form picks the class.
#define EMBER_CHECK_TYPE(cond, Exc, ...)                                                         \
  do {                                                                                           \
    if (__builtin_expect(!(cond), 0)) throw ::ember::Exc(::ember::detail::str_cat(__VA_ARGS__)); \
  } while (0)
#define EMBER_CHECK(cond, ...) EMBER_CHECK_TYPE(cond, Error, __VA_ARGS__)
#define EMBER_CHECK_INDEX(cond, ...) EMBER_CHECK_TYPE(cond, IndexError, __VA_ARGS__)
#define EMBER_CHECK_VALUE(cond, ...) EMBER_CHECK_TYPE(cond, ValueError, __VA_ARGS__)
#define EMBER_CHECK_TYPEERR(cond, ...) EMBER_CHECK_TYPE(cond, TypeError, __VA_ARGS__)
#define EMBER_NOT_IMPLEMENTED(...) throw ::ember::NotImplementedError(::ember::detail::str_cat(__VA_ARGS__))
