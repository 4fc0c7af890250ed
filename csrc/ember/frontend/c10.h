// The C++ frontend's basic vocabulary with libtorch's names (namespace c10, re-exported in at and
// torch): ArrayRef/IntArrayRef, Device, dtype constants (kFloat32, kLong, ...), TypeMeta, Scalar,
// OrderedDict, errors and TORCH_CHECK. Everything maps onto ember's own types; nothing here
// computes (Note [C++ frontend] in frontend/tensor.h).
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/device.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"
#include "ember/ops/ops.h"

namespace ember {
// Printed as libtorch prints them (ADL finds these for ember's types).
std::ostream& operator<<(std::ostream& os, ScalarType t);
std::ostream& operator<<(std::ostream& os, DeviceType t);
std::ostream& operator<<(std::ostream& os, const Scalar& s);
}  // namespace ember

namespace c10 {

template <typename T>
using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
using nullopt_t = std::nullopt_t;
using string_view = std::string_view;

using Error = ember::Error;
using IndexError = ember::IndexError;
using ValueError = ember::ValueError;
using TypeError = ember::TypeError;
using NotImplementedError = ember::NotImplementedError;
using LinAlgError = ember::LinAlgError;

// A non-owning view of contiguous elements, valid for the duration of a call (as c10::ArrayRef):
// binds to a vector, a std::array, a braced list or a single element.
template <typename T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = size_t;

  constexpr ArrayRef() = default;
  ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
  constexpr ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(end - begin) {}
  template <typename A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const T (&a)[N]) : data_(a), size_(N) {}  // NOLINT
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"    // valid for the call, as c10::ArrayRef
  constexpr ArrayRef(const std::initializer_list<T>& l)  // NOLINT
      : data_(l.begin() == l.end() ? nullptr : l.begin()), size_(l.size()) {}
#pragma GCC diagnostic pop

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    if (i >= size_) throw ember::IndexError("ArrayRef: index " + std::to_string(i) + " out of range");
    return data_[i];
  }
  ArrayRef slice(size_t start, size_t n) const { return ArrayRef(data_ + start, n); }
  ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }
  bool equals(ArrayRef o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (!(data_[i] == o.data_[i])) return false;
    return true;
  }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return vec(); }  // NOLINT

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};
template <typename T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
  return a.equals(b);
}
template <typename T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) {
  return !a.equals(b);
}
template <typename T>
bool operator==(const std::vector<T>& a, ArrayRef<T> b) {
  return ArrayRef<T>(a).equals(b);
}
template <typename T>
bool operator==(ArrayRef<T> a, const std::vector<T>& b) {
  return a.equals(ArrayRef<T>(b));
}
// "[2, 3]", as libtorch prints sizes.
template <typename T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << "[";
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << "]";
}
using IntArrayRef = ArrayRef<int64_t>;
using DimnameList = ArrayRef<std::string>;  // named tensors are not supported; only for signatures
inline ember::IntArrayRef to_ember(IntArrayRef a) { return ember::IntArrayRef(a.data(), a.size()); }

// ---- devices ----
using DeviceType = ember::DeviceType;
using DeviceIndex = int8_t;
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

class Device {
 public:
  Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}  // NOLINT
  Device(const std::string& spec);                                                 // NOLINT "cpu", "cuda:1"
  Device(const char* spec) : Device(std::string(spec)) {}                          // NOLINT
  Device(ember::Device d) : type_(d.type), index_(d.index) {}                      // NOLINT
  operator ember::Device() const { return ember::Device(type_, index_); }          // NOLINT

  DeviceType type() const noexcept { return type_; }
  DeviceIndex index() const noexcept { return index_; }
  bool has_index() const noexcept { return index_ != -1; }
  bool is_cpu() const noexcept { return type_ == DeviceType::CPU; }
  bool is_cuda() const noexcept { return type_ == DeviceType::CUDA; }
  void set_index(DeviceIndex i) { index_ = i; }
  std::string str() const;
  bool operator==(const Device& o) const noexcept { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const noexcept { return !(*this == o); }

 private:
  DeviceType type_;
  DeviceIndex index_ = -1;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

// ---- element types ----
using ScalarType = ember::ScalarType;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kByte = ScalarType::UInt8;
constexpr ScalarType kUInt8 = ScalarType::UInt8;
constexpr ScalarType kChar = ScalarType::Int8;
constexpr ScalarType kInt8 = ScalarType::Int8;
constexpr ScalarType kShort = ScalarType::Int16;
constexpr ScalarType kInt16 = ScalarType::Int16;
constexpr ScalarType kInt = ScalarType::Int32;
constexpr ScalarType kInt32 = ScalarType::Int32;
constexpr ScalarType kLong = ScalarType::Int64;
constexpr ScalarType kInt64 = ScalarType::Int64;
constexpr ScalarType kHalf = ScalarType::Float16;
constexpr ScalarType kFloat16 = ScalarType::Float16;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat = ScalarType::Float32;
constexpr ScalarType kFloat32 = ScalarType::Float32;
constexpr ScalarType kDouble = ScalarType::Float64;
constexpr ScalarType kFloat64 = ScalarType::Float64;
constexpr ScalarType kComplexFloat = ScalarType::Complex64;
constexpr ScalarType kComplexDouble = ScalarType::Complex128;
using Half = ember::Half;
using BFloat16 = ember::BFloat16;
template <typename T>
using complex = std::complex<T>;

// libtorch's names: "Float", "Long", ... (what operator<< prints).
const char* toString(ScalarType t);
inline bool isFloatingType(ScalarType t) { return ember::is_floating_point(t); }
inline bool isComplexType(ScalarType t) { return ember::is_complex(t); }
inline bool isIntegralType(ScalarType t, bool include_bool) { return ember::is_integral(t, include_bool); }
inline size_t elementSize(ScalarType t) { return ember::element_size(t); }
template <typename T>
constexpr ScalarType CppTypeToScalarType() {
  return ember::CppTypeToScalar<T>::value;
}

enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;
using MemoryFormat = ember::MemoryFormat;

// What Tensor::dtype() returns in libtorch: compares equal to a ScalarType, prints the C++ type's
// name ("float", "long int").
class TypeMeta {
 public:
  TypeMeta() = default;
  TypeMeta(ScalarType t) : t_(t) {}  // NOLINT
  template <typename T>
  static TypeMeta Make() {
    return TypeMeta(ember::CppTypeToScalar<T>::value);
  }
  ScalarType toScalarType() const { return t_; }
  operator ScalarType() const { return t_; }  // NOLINT
  std::string_view name() const;
  size_t itemsize() const { return ember::element_size(t_); }
  template <typename T>
  bool Match() const {
    return t_ == ember::CppTypeToScalar<T>::value;
  }
  bool operator==(const TypeMeta& o) const { return t_ == o.t_; }
  bool operator!=(const TypeMeta& o) const { return t_ != o.t_; }
  bool operator==(ScalarType o) const { return t_ == o; }
  bool operator!=(ScalarType o) const { return t_ != o; }

 private:
  ScalarType t_ = ScalarType::Float32;
};
std::ostream& operator<<(std::ostream& os, const TypeMeta& t);
inline ScalarType typeMetaToScalarType(TypeMeta m) { return m.toScalarType(); }
inline TypeMeta scalarTypeToTypeMeta(ScalarType t) { return TypeMeta(t); }

// ember::Scalar with libtorch's accessors and every C++ number type as a source.
class Scalar : public ember::Scalar {
 public:
  using ember::Scalar::Scalar;
  Scalar() = default;
  Scalar(const ember::Scalar& s) : ember::Scalar(s) {}                                      // NOLINT
  Scalar(long long v) : ember::Scalar(static_cast<int64_t>(v)) {}                           // NOLINT
  Scalar(unsigned v) : ember::Scalar(static_cast<int64_t>(v)) {}                            // NOLINT
  Scalar(unsigned long v) : ember::Scalar(static_cast<int64_t>(v)) {}                       // NOLINT
  Scalar(unsigned long long v) : ember::Scalar(static_cast<int64_t>(v)) {}                  // NOLINT
  Scalar(int16_t v) : ember::Scalar(static_cast<int64_t>(v)) {}                             // NOLINT
  Scalar(int8_t v) : ember::Scalar(static_cast<int64_t>(v)) {}                              // NOLINT
  Scalar(uint8_t v) : ember::Scalar(static_cast<int64_t>(v)) {}                             // NOLINT
  Scalar(uint16_t v) : ember::Scalar(static_cast<int64_t>(v)) {}                            // NOLINT
  Scalar(ember::Half v) : ember::Scalar(static_cast<double>(static_cast<float>(v))) {}      // NOLINT
  Scalar(ember::BFloat16 v) : ember::Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT

  double toDouble() const { return to_double(); }
  float toFloat() const { return static_cast<float>(to_double()); }
  int64_t toLong() const { return to_int(); }
  int toInt() const { return static_cast<int>(to_int()); }
  bool toBool() const { return to_bool(); }
  std::complex<double> toComplexDouble() const { return to_complex(); }
  bool isFloatingPoint() const { return is_floating(); }
  bool isIntegral(bool include_bool) const { return is_integral() || (include_bool && is_bool()); }
  bool isBoolean() const { return is_bool(); }
  bool isComplex() const { return is_complex(); }
  ScalarType type() const { return natural_dtype(); }
  Scalar operator-() const;
};

// ---- errors ----
namespace detail {
[[noreturn]] void check_fail(const char* cond, const std::string& msg);
[[noreturn]] void internal_assert_fail(const char* cond, const char* file, int line, const std::string& msg);
template <typename... Args>
std::string format(const Args&... args) {
  if constexpr (sizeof...(Args) == 0)
    return std::string();
  else
    return ember::detail::str_cat(args...);
}
void warn(const std::string& msg);
}  // namespace detail

// ---- an insertion-ordered dictionary (torch::OrderedDict): items keep their order, keys are unique ----
template <typename Key, typename Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return pair_.first; }
    Value& value() noexcept { return pair_.second; }
    const Value& value() const noexcept { return pair_.second; }
    Value& operator*() noexcept { return pair_.second; }
    const Value& operator*() const noexcept { return pair_.second; }
    Value* operator->() noexcept { return &pair_.second; }
    const Value* operator->() const noexcept { return &pair_.second; }
    const std::pair<Key, Value>& pair() const noexcept { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };
  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  explicit OrderedDict(std::string key_description = "Key") : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) : OrderedDict() {
    for (const Item& it : items) insert(it.key(), it.value());
  }

  const std::string& key_description() const noexcept { return key_description_; }
  Item& front() { return at_checked(0); }
  const Item& front() const { return const_cast<OrderedDict*>(this)->at_checked(0); }
  Item& back() { return at_checked(items_.size() - 1); }
  const Item& back() const { return const_cast<OrderedDict*>(this)->at_checked(items_.size() - 1); }
  Item& operator[](size_t index) { return at_checked(index); }
  const Item& operator[](size_t index) const { return const_cast<OrderedDict*>(this)->at_checked(index); }
  Value& operator[](const Key& key) {
    if (Value* v = find(key)) return *v;
    throw ember::Error(key_description_ + " '" + key_string(key) + "' is not defined");
  }
  const Value& operator[](const Key& key) const { return (*const_cast<OrderedDict*>(this))[key]; }
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept { return const_cast<OrderedDict*>(this)->find(key); }
  bool contains(const Key& key) const noexcept { return find(key) != nullptr; }

  Iterator begin() { return items_.begin(); }
  ConstIterator begin() const { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator end() const { return items_.end(); }
  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  void reserve(size_t n) {
    items_.reserve(n);
    index_.reserve(n);
  }

  template <typename K, typename... Args>
  Value& insert(K&& key, Args&&... args) {
    Key k(std::forward<K>(key));
    if (index_.count(k)) throw ember::Error(key_description_ + " '" + key_string(k) + "' already defined");
    index_.emplace(k, items_.size());
    items_.emplace_back(std::move(k), Value(std::forward<Args>(args)...));
    return items_.back().value();
  }
  Value& insert(Key key, Value&& value) {
    if (index_.count(key)) throw ember::Error(key_description_ + " '" + key_string(key) + "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  void update(const OrderedDict& other) {
    for (const Item& it : other) {
      if (Value* v = find(it.key()))
        *v = it.value();
      else
        insert(it.key(), it.value());
    }
  }
  void erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) throw ember::Error(key_description_ + " '" + key_string(key) + "' is not defined");
    size_t pos = it->second;
    index_.erase(it);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
    for (auto& [k, i] : index_)
      if (i > pos) --i;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }
  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> r;
    for (const Item& it : items_) r.push_back(it.key());
    return r;
  }
  std::vector<Value> values() const {
    std::vector<Value> r;
    for (const Item& it : items_) r.push_back(it.value());
    return r;
  }
  std::vector<std::pair<Key, Value>> pairs() const {
    std::vector<std::pair<Key, Value>> r;
    for (const Item& it : items_) r.push_back(it.pair());
    return r;
  }

 private:
  Item& at_checked(size_t i) {
    if (i >= items_.size())
      throw ember::IndexError("Index " + std::to_string(i) + " is out of bounds (OrderedDict of size " +
                              std::to_string(items_.size()) + ")");
    return items_[i];
  }
  static std::string key_string(const Key& k) {
    if constexpr (std::is_convertible_v<Key, std::string>)
      return std::string(k);
    else
      return "<key>";
  }
  std::unordered_map<Key, size_t> index_;
  std::vector<Item> items_;
  std::string key_description_;
};

// c10::irange(n) / irange(b, e): integer ranges for range-for loops.
template <typename T>
class IntRange {
 public:
  struct It {
    T v;
    T operator*() const { return v; }
    It& operator++() {
      ++v;
      return *this;
    }
    bool operator!=(const It& o) const { return v != o.v; }
    bool operator==(const It& o) const { return v == o.v; }
  };
  IntRange(T b, T e) : b_(b), e_(e < b ? b : e) {}
  It begin() const { return {b_}; }
  It end() const { return {e_}; }

 private:
  T b_, e_;
};
template <typename T>
IntRange<T> irange(T end) {
  return IntRange<T>(T(0), end);
}
template <typename B, typename E>
IntRange<std::common_type_t<B, E>> irange(B begin, E end) {
  using T = std::common_type_t<B, E>;
  return IntRange<T>(static_cast<T>(begin), static_cast<T>(end));
}

// Demangled C++ type name (Module::name(), the node name of a custom autograd Function).
std::string demangle(const char* mangled);

}  // namespace c10

// TORCH_CHECK(cond, msg...): c10::Error (ember::Error) carrying the message, or libtorch's default
// text when there is none. The _INDEX/_VALUE/_TYPE forms throw the matching error class.
#define EMBER_FE_CHECK_AS(cond, Exc, ...)                                                                     \
  do {                                                                                                        \
    if (__builtin_expect(!(cond), 0)) {                                                                       \
      std::string ember_fe_msg_ = ::c10::detail::format(__VA_ARGS__);                                         \
      if (ember_fe_msg_.empty())                                                                              \
        ember_fe_msg_ = "Expected " #cond                                                                     \
                        " to be true, but got false.  (Could this error message be improved?  If so, please " \
                        "report an enhancement request to PyTorch.)";                                         \
      throw ::ember::Exc(ember_fe_msg_);                                                                      \
    }                                                                                                         \
  } while (0)
#define TORCH_CHECK(cond, ...) EMBER_FE_CHECK_AS(cond, Error, ##__VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) EMBER_FE_CHECK_AS(cond, IndexError, ##__VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) EMBER_FE_CHECK_AS(cond, ValueError, ##__VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) EMBER_FE_CHECK_AS(cond, TypeError, ##__VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) EMBER_FE_CHECK_AS(cond, NotImplementedError, ##__VA_ARGS__)
#define TORCH_CHECK_EQ(a, b) TORCH_CHECK((a) == (b))
#define TORCH_CHECK_NE(a, b) TORCH_CHECK((a) != (b))
#define TORCH_CHECK_LE(a, b) TORCH_CHECK((a) <= (b))
#define TORCH_CHECK_LT(a, b) TORCH_CHECK((a) < (b))
#define TORCH_CHECK_GE(a, b) TORCH_CHECK((a) >= (b))
#define TORCH_CHECK_GT(a, b) TORCH_CHECK((a) > (b))
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                                  \
  do {                                                                                                    \
    if (__builtin_expect(!(cond), 0))                                                                     \
      ::c10::detail::internal_assert_fail(#cond, __FILE__, __LINE__, ::c10::detail::format(__VA_ARGS__)); \
  } while (0)
#define AT_ASSERT(cond, ...) TORCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) TORCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define AT_ERROR(...) throw ::ember::Error(::c10::detail::format(__VA_ARGS__))
#define TORCH_WARN(...) ::c10::detail::warn(::c10::detail::format(__VA_ARGS__))
#define TORCH_WARN_ONCE(...) ::ember::warn_once(::c10::detail::format(__VA_ARGS__))
