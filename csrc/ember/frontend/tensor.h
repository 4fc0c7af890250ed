// at::Tensor (also torch::Tensor): ember::Tensor with libtorch's methods.
//
// Note [C++ frontend]
// The C++ frontend (csrc/ember/frontend, namespaces at, c10 and torch) gives C++ programs the names
// and argument conventions of libtorch's C++ API, so a program written for libtorch compiles
// against Ember with only its include path and link line changed (the include directory
// csrc/compat maps <torch/torch.h> here). It is a thin layer: every method and function calls
// the ember op, autograd call or fused optimizer step that the Python API calls, so the two
// faces share one engine and one set of backward formulas. at::Tensor derives from ember::Tensor
// without adding state: a Tensor converts to and from ember::Tensor for free, and the methods
// that libtorch names differently (sizes(), dtype(), device()) hide ember's.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "ember/autograd/node.h"
#include "ember/frontend/c10.h"

namespace at {

using namespace c10;  // NOLINT: at:: re-exports c10's vocabulary, as in libtorch
class Tensor;
using TensorList = ArrayRef<Tensor>;
namespace indexing {
class TensorIndex;
}

// What a factory makes: dtype, device and requires_grad (each optional; the layout is always
// strided). The setters return modified copies, so options chain: dtype(kFloat).requires_grad(true).
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType t) { dtype_ = t; }                   // NOLINT
  TensorOptions(TypeMeta t) { dtype_ = t.toScalarType(); }      // NOLINT
  TensorOptions(Device d) { device_ = d; }                      // NOLINT
  TensorOptions(DeviceType d) { device_ = Device(d); }          // NOLINT
  TensorOptions(const std::string& d) { device_ = Device(d); }  // NOLINT
  TensorOptions(const char* d) { device_ = Device(d); }         // NOLINT
  TensorOptions(Layout) {}                                      // NOLINT
  TensorOptions(MemoryFormat f) { memory_format_ = f; }         // NOLINT

  TensorOptions dtype(std::optional<ScalarType> t) const {
    TensorOptions r = *this;
    r.dtype_ = t;
    return r;
  }
  TensorOptions dtype(ScalarType t) const { return dtype(std::optional<ScalarType>(t)); }
  TensorOptions dtype(TypeMeta t) const { return dtype(std::optional<ScalarType>(t.toScalarType())); }
  template <typename T>
  TensorOptions dtype() const {
    return dtype(std::optional<ScalarType>(ember::CppTypeToScalar<T>::value));
  }
  TensorOptions device(std::optional<Device> d) const {
    TensorOptions r = *this;
    r.device_ = d;
    return r;
  }
  TensorOptions device(DeviceType type, DeviceIndex index = -1) const { return device(Device(type, index)); }
  TensorOptions device_index(DeviceIndex index) const { return device(Device(kCUDA, index)); }
  TensorOptions requires_grad(std::optional<bool> r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }
  TensorOptions layout(std::optional<Layout>) const { return *this; }
  TensorOptions pinned_memory(std::optional<bool>) const { return *this; }
  TensorOptions memory_format(std::optional<MemoryFormat> f) const {
    TensorOptions r = *this;
    r.memory_format_ = f;
    return r;
  }

  TypeMeta dtype() const { return TypeMeta(dtype_.value_or(ember::default_dtype())); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  Layout layout() const { return kStrided; }
  bool pinned_memory() const { return false; }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  bool has_requires_grad() const { return requires_grad_.has_value(); }
  bool has_layout() const { return false; }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  std::optional<bool> requires_grad_opt() const { return requires_grad_; }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }
  // The options with unset fields taken from `o` (libtorch's merge_in in reverse).
  TensorOptions merge_in(TensorOptions o) const;

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<bool> requires_grad_;
  std::optional<MemoryFormat> memory_format_;
};
std::ostream& operator<<(std::ostream& os, const TensorOptions& o);
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions dtype(TypeMeta t) { return TensorOptions().dtype(t); }
template <typename T>
TensorOptions dtype() {
  return TensorOptions().dtype<T>();
}
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions device_index(DeviceIndex i) { return TensorOptions().device_index(i); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions layout(Layout) { return TensorOptions(); }
inline TensorOptions memory_format(MemoryFormat f) { return TensorOptions().memory_format(f); }
inline TypeMeta get_default_dtype() { return TypeMeta(ember::default_dtype()); }
inline ScalarType get_default_dtype_as_scalartype() { return ember::default_dtype(); }
inline void set_default_dtype(TypeMeta t) { ember::set_default_dtype(t.toScalarType()); }

// Element access through raw strides: tensor.accessor<float, 2>()[i][j].
template <typename T, size_t N>
class TensorAccessor {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  decltype(auto) operator[](int64_t i) const {
    if constexpr (N == 1)
      return static_cast<T&>(data_[i * strides_[0]]);
    else
      return TensorAccessor<T, N - 1>(data_ + i * strides_[0], sizes_ + 1, strides_ + 1);
  }
  int64_t size(int64_t d) const { return sizes_[d]; }
  int64_t stride(int64_t d) const { return strides_[d]; }
  IntArrayRef sizes() const { return IntArrayRef(sizes_, N); }
  IntArrayRef strides() const { return IntArrayRef(strides_, N); }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

using Node = ember::autograd::Node;

class Tensor : public ember::Tensor {
 public:
  Tensor() = default;
  Tensor(ember::Tensor t) : ember::Tensor(std::move(t)) {}  // NOLINT: ember ops return ember::Tensor

  // ---- properties ----
  IntArrayRef sizes() const { return IntArrayRef(ember::Tensor::sizes()); }
  IntArrayRef strides() const { return IntArrayRef(ember::Tensor::strides()); }
  int64_t size(int64_t dim) const { return ember::Tensor::size(dim); }
  int64_t stride(int64_t dim) const { return ember::Tensor::stride(dim); }
  int64_t ndimension() const { return dim(); }
  TypeMeta dtype() const { return TypeMeta(ember::Tensor::dtype()); }
  ScalarType scalar_type() const { return ember::Tensor::dtype(); }
  Device device() const { return Device(ember::Tensor::device()); }
  TensorOptions options() const;
  Layout layout() const { return kStrided; }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_sparse() const { return false; }
  bool is_mkldnn() const { return false; }
  bool is_quantized() const { return false; }
  bool is_meta() const { return false; }
  bool is_floating_point() const { return ember::is_floating_point(scalar_type()); }
  bool is_complex() const { return ember::is_complex(scalar_type()); }
  bool is_signed() const { return ember::is_signed(scalar_type()); }
  bool is_contiguous(MemoryFormat f = MemoryFormat::Contiguous) const;
  bool is_same_size(const Tensor& o) const { return sizes() == o.sizes(); }
  bool is_alias_of(const Tensor& o) const;
  bool is_nonzero() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  int64_t itemsize() const { return static_cast<int64_t>(element_size()); }
  std::string toString() const;  // "CPUFloatType"
  void reset() { *this = Tensor(); }
  int64_t use_count() const;
  int64_t _version() const { return version(); }
  void print() const;

  // ---- data ----
  void* data_ptr() const { return ember::Tensor::data_ptr(); }
  template <typename T>
  T* data_ptr() const {
    check_element_type(ember::CppTypeToScalar<std::remove_const_t<T>>::value);
    return reinterpret_cast<T*>(ember::Tensor::data_ptr());
  }
  const void* const_data_ptr() const { return data_ptr(); }
  template <typename T>
  const T* const_data_ptr() const {
    return data_ptr<T>();
  }
  void* mutable_data_ptr() const { return data_ptr(); }
  template <typename T>
  T* mutable_data_ptr() const {
    return data_ptr<T>();
  }
  template <typename T>
  T* data() const {
    return data_ptr<T>();
  }
  Tensor data() const;  // shares the data, no history, its own version counter (as x.data in Python)
  c10::Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() const& {
    check_element_type(ember::CppTypeToScalar<std::remove_const_t<T>>::value);
    check_accessor_dim(N);
    return TensorAccessor<T, N>(reinterpret_cast<T*>(ember::Tensor::data_ptr()), ember::Tensor::sizes().data(),
                                ember::Tensor::strides().data());
  }
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;

  // ---- autograd ----
  bool requires_grad() const;
  const Tensor& requires_grad_(bool requires_grad = true) const;
  const Tensor& set_requires_grad(bool requires_grad) const { return requires_grad_(requires_grad); }
  bool is_leaf() const;
  Tensor grad() const;
  void set_grad(const Tensor& g) const;
  std::shared_ptr<Node> grad_fn() const;
  int64_t output_nr() const;
  void retain_grad() const;
  bool retains_grad() const;
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                std::optional<TensorList> inputs = std::nullopt) const;
  Tensor detach() const;
  const Tensor& detach_() const;
  void set_data(const Tensor& new_data) const;
  // A hook gets the gradient and returns a replacement, or nothing (void) to keep it.
  template <typename F>
  unsigned register_hook(F&& hook) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F, Tensor>>)
      return register_hook_impl([h = std::forward<F>(hook)](const Tensor& g) {
        h(g);
        return Tensor();
      });
    else
      return register_hook_impl([h = std::forward<F>(hook)](const Tensor& g) { return Tensor(h(g)); });
  }
  void remove_hook(unsigned pos) const;

  // ---- conversion ----
  Tensor to(TensorOptions options, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor type_as(const Tensor& other) const { return to(other.scalar_type()); }
  Tensor cpu() const;
  Tensor cuda() const;
  Tensor contiguous(MemoryFormat f = MemoryFormat::Contiguous) const;
  Tensor clone(std::optional<MemoryFormat> f = std::nullopt) const;

  // ---- views and shape ----
  Tensor view(IntArrayRef size) const;
  Tensor view(ScalarType dtype) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape(IntArrayRef shape) const;
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor expand(IntArrayRef size, bool implicit = false) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze(IntArrayRef dims) const;
  Tensor unsqueeze(int64_t dim) const;
  const Tensor& squeeze_() const;
  const Tensor& squeeze_(int64_t dim) const;
  const Tensor& unsqueeze_(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor movedim(IntArrayRef source, IntArrayRef destination) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor mT() const { return transpose(-2, -1); }
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor unfold(int64_t dimension, int64_t size, int64_t step) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  const Tensor& resize_(IntArrayRef size) const;

  // ---- indexing ----
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& rhs) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const c10::Scalar& v) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& rhs) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const c10::Scalar& v) const;
  Tensor operator[](int64_t index) const;
  Tensor operator[](const Tensor& index) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index, bool sparse_grad = false) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const c10::Scalar& value) const;
  const Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  const Tensor& scatter_(int64_t dim, const Tensor& index, const c10::Scalar& value) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  const Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const c10::Scalar& alpha = 1) const;
  const Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const c10::Scalar& alpha = 1) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const c10::Scalar& value) const;
  const Tensor& index_fill_(int64_t dim, const Tensor& index, const c10::Scalar& value) const;
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor masked_fill(const Tensor& mask, const c10::Scalar& value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  const Tensor& masked_fill_(const Tensor& mask, const c10::Scalar& value) const;
  const Tensor& masked_fill_(const Tensor& mask, const Tensor& value) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor take(const Tensor& index) const;
  Tensor nonzero() const;
  Tensor where(const Tensor& condition, const Tensor& other) const;

  // ---- arithmetic ----
  Tensor add(const Tensor& other, const c10::Scalar& alpha = 1) const;
  Tensor add(const c10::Scalar& other, const c10::Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const c10::Scalar& alpha = 1) const;
  Tensor sub(const c10::Scalar& other, const c10::Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const c10::Scalar& other) const;
  Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor div(const c10::Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(const c10::Scalar& other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(const c10::Scalar& other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor floor_divide(const c10::Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const c10::Scalar& exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor atan2(const Tensor& other) const;
  Tensor lerp(const Tensor& end, const c10::Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const c10::Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const c10::Scalar& value = 1) const;
  Tensor clamp(const std::optional<c10::Scalar>& min, const std::optional<c10::Scalar>& max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = {}) const;
  Tensor clamp_min(const c10::Scalar& min) const;
  Tensor clamp_max(const c10::Scalar& max) const;
  Tensor clip(const std::optional<c10::Scalar>& min, const std::optional<c10::Scalar>& max = std::nullopt) const {
    return clamp(min, max);
  }
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor mv(const Tensor& vec) const;
  Tensor dot(const Tensor& other) const;
  Tensor outer(const Tensor& other) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta = 1, const c10::Scalar& alpha = 1) const;
  Tensor inverse() const;
  Tensor det() const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor neg() const;
  Tensor negative() const { return neg(); }
// clang-format off
#define EMBER_FE_UNARY_METHODS(X) \
  X(abs) X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) \
  X(sqrt) X(rsqrt) X(square) X(sin) X(cos) X(tan) X(asin) X(acos) \
  X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(sigmoid) \
  X(erf) X(erfc) X(erfinv) X(lgamma) X(digamma) X(floor) X(ceil) X(trunc) \
  X(frac) X(reciprocal) X(sign) X(sgn) X(relu) X(logical_not) X(bitwise_not) X(signbit)
// clang-format on
#define EMBER_FE_DECLARE_UNARY_METHOD(fn) \
  Tensor fn() const;                      \
  const Tensor& fn##_() const;
  EMBER_FE_UNARY_METHODS(EMBER_FE_DECLARE_UNARY_METHOD)
#undef EMBER_FE_DECLARE_UNARY_METHOD
  Tensor round(int64_t decimals = 0) const;
  const Tensor& round_(int64_t decimals = 0) const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor nan_to_num(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_xor(const Tensor& other) const;

  // ---- comparison ----
  Tensor eq(const Tensor& other) const;
  Tensor eq(const c10::Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const c10::Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const c10::Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const c10::Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const c10::Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const c10::Scalar& other) const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  Tensor isclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;

  // ---- reductions ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor nansum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor max(const Tensor& other) const { return maximum(other); }
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor min(const Tensor& other) const { return minimum(other); }
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor var(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor norm(const c10::Scalar& p = 2) const;
  Tensor norm(const std::optional<c10::Scalar>& p, IntArrayRef dim, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  Tensor count_nonzero(std::optional<int64_t> dim = std::nullopt) const;
  Tensor trace() const;

  // ---- in place ----
  const Tensor& add_(const Tensor& other, const c10::Scalar& alpha = 1) const;
  const Tensor& add_(const c10::Scalar& other, const c10::Scalar& alpha = 1) const;
  const Tensor& sub_(const Tensor& other, const c10::Scalar& alpha = 1) const;
  const Tensor& sub_(const c10::Scalar& other, const c10::Scalar& alpha = 1) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& mul_(const c10::Scalar& other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& div_(const c10::Scalar& other) const;
  const Tensor& pow_(const Tensor& exponent) const;
  const Tensor& pow_(const c10::Scalar& exponent) const;
  const Tensor& neg_() const;
  const Tensor& clamp_(const std::optional<c10::Scalar>& min,
                       const std::optional<c10::Scalar>& max = std::nullopt) const;
  const Tensor& clamp_min_(const c10::Scalar& min) const;
  const Tensor& clamp_max_(const c10::Scalar& max) const;
  const Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const c10::Scalar& value = 1) const;
  const Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const c10::Scalar& value = 1) const;
  const Tensor& lerp_(const Tensor& end, const c10::Scalar& weight) const;
  const Tensor& zero_() const;
  const Tensor& fill_(const c10::Scalar& value) const;
  const Tensor& fill_(const Tensor& value) const;
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  const Tensor& uniform_(double from = 0, double to = 1) const;
  const Tensor& normal_(double mean = 0, double std = 1) const;
  const Tensor& bernoulli_(double p = 0.5) const;
  const Tensor& random_(int64_t from, std::optional<int64_t> to) const;
  const Tensor& random_(int64_t to) const;
  const Tensor& random_() const;
  const Tensor& exponential_(double lambd = 1) const;
  const Tensor& t_() const;
  const Tensor& transpose_(int64_t dim0, int64_t dim1) const;
  Tensor bernoulli() const;
  Tensor multinomial(int64_t num_samples, bool replacement = false) const;

 private:
  void check_element_type(ScalarType want) const;
  void check_accessor_dim(size_t n) const;
  unsigned register_hook_impl(std::function<Tensor(const Tensor&)> hook) const;
};

// x.index({...}) items: an integer, a Slice, None (a new dim), Ellipsis ("..." too), a bool, or a
// tensor (advanced indexing), with the meaning Python's x[...] gives them.
namespace indexing {
struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};
inline constexpr std::nullopt_t None = std::nullopt;

class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,  // NOLINT
        std::optional<int64_t> step = std::nullopt);
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};
std::ostream& operator<<(std::ostream& os, const Slice& s);

enum class TensorIndexType { None, Ellipsis, SymInt, Boolean, Slice, Tensor };

class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}         // NOLINT
  TensorIndex(EllipsisIndexType) : type_(TensorIndexType::Ellipsis) {}  // NOLINT
  TensorIndex(const char* s);                                           // NOLINT: only "..."
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T i) : integer_(static_cast<int64_t>(i)), type_(TensorIndexType::SymInt) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T b) : boolean_(b), type_(TensorIndexType::Boolean) {}                       // NOLINT
  TensorIndex(Slice s) : slice_(s), type_(TensorIndexType::Slice) {}                       // NOLINT
  TensorIndex(Tensor t) : tensor_(std::move(t)), type_(TensorIndexType::Tensor) {}         // NOLINT
  TensorIndex(ember::Tensor t) : tensor_(std::move(t)), type_(TensorIndexType::Tensor) {}  // NOLINT

  bool is_none() const { return type_ == TensorIndexType::None; }
  bool is_ellipsis() const { return type_ == TensorIndexType::Ellipsis; }
  bool is_integer() const { return type_ == TensorIndexType::SymInt; }
  bool is_boolean() const { return type_ == TensorIndexType::Boolean; }
  bool is_slice() const { return type_ == TensorIndexType::Slice; }
  bool is_tensor() const { return type_ == TensorIndexType::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
  TensorIndexType type_;
};
std::ostream& operator<<(std::ostream& os, const TensorIndex& i);
}  // namespace indexing

// libtorch's printing: the values as a table (a common scale factor or scientific notation when
// the magnitudes call for it), then "[ CPUFloatType{2,3} ]".
std::ostream& operator<<(std::ostream& os, const Tensor& t);
void print(std::ostream& os, const Tensor& t, int64_t linesize = 80);

// ---- operators (Tensor and number operands, with Python's type promotion) ----
#define EMBER_FE_BINARY_OPERATOR(sym)                         \
  Tensor operator sym(const Tensor& a, const Tensor& b);      \
  Tensor operator sym(const Tensor& a, const c10::Scalar& b); \
  Tensor operator sym(const c10::Scalar& a, const Tensor& b);
EMBER_FE_BINARY_OPERATOR(+)
EMBER_FE_BINARY_OPERATOR(-)
EMBER_FE_BINARY_OPERATOR(*)
EMBER_FE_BINARY_OPERATOR(/)
EMBER_FE_BINARY_OPERATOR(%)
EMBER_FE_BINARY_OPERATOR(==)
EMBER_FE_BINARY_OPERATOR(!=)
EMBER_FE_BINARY_OPERATOR(<)
EMBER_FE_BINARY_OPERATOR(<=)
EMBER_FE_BINARY_OPERATOR(>)
EMBER_FE_BINARY_OPERATOR(>=)
EMBER_FE_BINARY_OPERATOR(&)
EMBER_FE_BINARY_OPERATOR(|)
EMBER_FE_BINARY_OPERATOR(^)
#undef EMBER_FE_BINARY_OPERATOR
Tensor operator-(const Tensor& a);
Tensor operator~(const Tensor& a);
Tensor operator!(const Tensor& a);
#define EMBER_FE_COMPOUND_OPERATOR(sym)                         \
  const Tensor& operator sym(const Tensor& a, const Tensor& b); \
  const Tensor& operator sym(const Tensor& a, const c10::Scalar& b);
EMBER_FE_COMPOUND_OPERATOR(+=)
EMBER_FE_COMPOUND_OPERATOR(-=)
EMBER_FE_COMPOUND_OPERATOR(*=)
EMBER_FE_COMPOUND_OPERATOR(/=)
#undef EMBER_FE_COMPOUND_OPERATOR

}  // namespace at

namespace torch {
using namespace at;  // NOLINT: torch:: re-exports at:: as libtorch's torch/types.h does
}  // namespace torch
