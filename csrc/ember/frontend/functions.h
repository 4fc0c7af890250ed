// Free functions of the C++ frontend (at::, re-exported as torch::): factories, torch::tensor,
// the operators as functions, and the neural-network ops libtorch exposes at top level
// (torch::conv2d, torch::max_pool2d, torch::nll_loss, ...). Each calls the ember op.
#pragma once
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/parallel.h"
#include "ember/frontend/tensor.h"

namespace at {

// at::Reduction::Mean etc., the int64_t reduction codes of libtorch's loss functions.
namespace Reduction {
enum Reduction { None, Mean, Sum, END };
}

// ---- factories ----
Tensor empty(IntArrayRef size, TensorOptions options = {}, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor full(IntArrayRef size, const c10::Scalar& fill_value, TensorOptions options = {});
Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
Tensor randint(int64_t high, IntArrayRef size, TensorOptions options = kLong);
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options = kLong);
Tensor randperm(int64_t n, TensorOptions options = kLong);
Tensor normal(double mean, double std, IntArrayRef size, TensorOptions options = {});
Tensor normal(const Tensor& mean, double std = 1);
Tensor normal(const Tensor& mean, const Tensor& std);
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& self, double p);
Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement = false);
Tensor poisson(const Tensor& rates);
// Integer scalars give int64, any floating one the default dtype (as torch.arange).
Tensor arange(const c10::Scalar& end, TensorOptions options = {});
Tensor arange(const c10::Scalar& start, const c10::Scalar& end, TensorOptions options = {});
Tensor arange(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step, TensorOptions options = {});
Tensor linspace(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, TensorOptions options = {});
Tensor logspace(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, double base = 10.0,
                TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor eye(int64_t n, int64_t m, TensorOptions options = {});
Tensor scalar_tensor(const c10::Scalar& s, TensorOptions options = {});
Tensor empty_like(const Tensor& self, TensorOptions options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor zeros_like(const Tensor& self, TensorOptions options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor ones_like(const Tensor& self, TensorOptions options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor full_like(const Tensor& self, const c10::Scalar& fill_value, TensorOptions options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor rand_like(const Tensor& self, TensorOptions options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor randn_like(const Tensor& self, TensorOptions options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor randint_like(const Tensor& self, int64_t high, TensorOptions options = {});
Tensor randint_like(const Tensor& self, int64_t low, int64_t high, TensorOptions options = {});
// A tensor over memory the caller owns (no copy); `deleter` runs when the last user is gone.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});

// torch::tensor({...}): a scalar, a (nested) braced list, a std::vector or an ArrayRef. Integer
// elements give int64 and floating ones the default dtype, as torch.tensor; all elements of one
// list must have one type.
namespace detail {
class TensorDataContainer {
 public:
  TensorDataContainer();  // {}: an empty 1-d tensor
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_same_v<T, ember::Half> ||
                                             std::is_same_v<T, ember::BFloat16> || ember::is_complex_v<T>,
                                         int> = 0>
  TensorDataContainer(T value) : kind_(Kind::Scalar), type_(scalar_type_of<T>()), scalar_(value) {}  // NOLINT
  TensorDataContainer(std::initializer_list<TensorDataContainer> list);                              // NOLINT
  template <typename T>
  TensorDataContainer(ArrayRef<T> values)  // NOLINT
      : TensorDataContainer(Tensor(), values.size(), scalar_type_of<T>()) {
    fill_from(values.data(), values.size());
  }
  template <typename T>
  TensorDataContainer(const std::vector<T>& values)  // NOLINT
      : TensorDataContainer(ArrayRef<T>(values)) {}
  TensorDataContainer(const std::vector<bool>& values);  // NOLINT

  bool is_scalar() const { return kind_ == Kind::Scalar; }
  bool is_init_list() const { return kind_ == Kind::List; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  ScalarType scalar_type() const { return type_; }
  Tensor convert_to_tensor(TensorOptions options) const;
  void pretty_print_recursive(std::ostream& os) const;

 private:
  enum class Kind { Scalar, List, Tensor };
  template <typename T>
  static ScalarType scalar_type_of() {
    if constexpr (std::is_same_v<T, bool>)
      return kBool;
    else if constexpr (std::is_same_v<T, float>)
      return kFloat;
    else if constexpr (std::is_floating_point_v<T>)
      return kDouble;
    else if constexpr (std::is_same_v<T, ember::Half> || std::is_same_v<T, ember::BFloat16> || ember::is_complex_v<T>)
      return ember::CppTypeToScalar<T>::value;
    else if constexpr (std::is_same_v<T, uint8_t>)
      return kByte;
    else if constexpr (std::is_same_v<T, int8_t>)
      return kChar;
    else if constexpr (std::is_same_v<T, int16_t>)
      return kShort;
    else if constexpr (sizeof(T) <= 4 && std::is_signed_v<T>)
      return kInt;
    else
      return kLong;
  }
  TensorDataContainer(Tensor, size_t n, ScalarType type);
  template <typename T>
  void fill_from(const T* p, size_t n) {
    for (size_t i = 0; i < n; ++i) set_element(i, c10::Scalar(p[i]));
  }
  void set_element(size_t i, const c10::Scalar& v);
  void fill(const Tensor& flat, int64_t& pos) const;

  Kind kind_;
  ScalarType type_ = kFloat;
  c10::Scalar scalar_;
  std::vector<TensorDataContainer> list_;
  std::vector<int64_t> sizes_;
  Tensor tensor_;
};
std::ostream& operator<<(std::ostream& os, const TensorDataContainer& c);
}  // namespace detail
Tensor tensor(detail::TensorDataContainer data, const TensorOptions& options = {});

// ---- pointwise ----
#define EMBER_FE_DECLARE_UNARY_FN(fn) \
  Tensor fn(const Tensor& self);      \
  Tensor& fn##_(Tensor& self);
EMBER_FE_UNARY_METHODS(EMBER_FE_DECLARE_UNARY_FN)
#undef EMBER_FE_DECLARE_UNARY_FN
Tensor neg(const Tensor& self);
Tensor round(const Tensor& self, int64_t decimals = 0);
Tensor isnan(const Tensor& self);
Tensor isinf(const Tensor& self);
Tensor isfinite(const Tensor& self);
Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);
Tensor add(const Tensor& self, const Tensor& other, const c10::Scalar& alpha = 1);
Tensor add(const Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const c10::Scalar& alpha = 1);
Tensor sub(const Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Tensor& other, const c10::Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const c10::Scalar& other, const c10::Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mul(const Tensor& self, const c10::Scalar& other);
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor div(const Tensor& self, const c10::Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor true_divide(const Tensor& self, const Tensor& other);
Tensor floor_divide(const Tensor& self, const Tensor& other);
Tensor remainder(const Tensor& self, const Tensor& other);
Tensor remainder(const Tensor& self, const c10::Scalar& other);
Tensor fmod(const Tensor& self, const Tensor& other);
Tensor fmod(const Tensor& self, const c10::Scalar& other);
Tensor pow(const Tensor& self, const Tensor& exponent);
Tensor pow(const Tensor& self, const c10::Scalar& exponent);
Tensor pow(const c10::Scalar& self, const Tensor& exponent);
Tensor maximum(const Tensor& self, const Tensor& other);
Tensor minimum(const Tensor& self, const Tensor& other);
Tensor fmax(const Tensor& self, const Tensor& other);
Tensor fmin(const Tensor& self, const Tensor& other);
Tensor atan2(const Tensor& self, const Tensor& other);
Tensor hypot(const Tensor& self, const Tensor& other);
Tensor copysign(const Tensor& self, const Tensor& other);
Tensor lerp(const Tensor& self, const Tensor& end, const c10::Scalar& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const c10::Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const c10::Scalar& value = 1);
Tensor clamp(const Tensor& self, const std::optional<c10::Scalar>& min,
             const std::optional<c10::Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max = {});
Tensor clamp_min(const Tensor& self, const c10::Scalar& min);
Tensor clamp_max(const Tensor& self, const c10::Scalar& max);
Tensor clip(const Tensor& self, const std::optional<c10::Scalar>& min,
            const std::optional<c10::Scalar>& max = std::nullopt);
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor where(const Tensor& condition, const c10::Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const c10::Scalar& other);
Tensor where(const Tensor& condition, const c10::Scalar& self, const c10::Scalar& other);
std::vector<Tensor> where(const Tensor& condition);
#define EMBER_FE_DECLARE_CMP_FN(fn)                   \
  Tensor fn(const Tensor& self, const Tensor& other); \
  Tensor fn(const Tensor& self, const c10::Scalar& other);
EMBER_FE_DECLARE_CMP_FN(eq)
EMBER_FE_DECLARE_CMP_FN(ne)
EMBER_FE_DECLARE_CMP_FN(lt)
EMBER_FE_DECLARE_CMP_FN(le)
EMBER_FE_DECLARE_CMP_FN(gt)
EMBER_FE_DECLARE_CMP_FN(ge)
#undef EMBER_FE_DECLARE_CMP_FN
Tensor logical_and(const Tensor& self, const Tensor& other);
Tensor logical_or(const Tensor& self, const Tensor& other);
Tensor logical_xor(const Tensor& self, const Tensor& other);
Tensor bitwise_and(const Tensor& self, const Tensor& other);
Tensor bitwise_or(const Tensor& self, const Tensor& other);
Tensor bitwise_xor(const Tensor& self, const Tensor& other);
bool equal(const Tensor& self, const Tensor& other);
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
Tensor isclose(const Tensor& self, const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);

// ---- activations ----
Tensor relu6(const Tensor& self);
Tensor leaky_relu(const Tensor& self, const c10::Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& self, const c10::Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& self, const c10::Scalar& alpha = 1, const c10::Scalar& scale = 1,
           const c10::Scalar& input_scale = 1);
Tensor selu(const Tensor& self);
Tensor celu(const Tensor& self, const c10::Scalar& alpha = 1.0);
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor silu(const Tensor& self);
Tensor mish(const Tensor& self);
Tensor softplus(const Tensor& self, const c10::Scalar& beta = 1, const c10::Scalar& threshold = 20);
Tensor hardtanh(const Tensor& self, const c10::Scalar& min_val = -1, const c10::Scalar& max_val = 1);
Tensor hardsigmoid(const Tensor& self);
Tensor hardswish(const Tensor& self);
Tensor log_sigmoid(const Tensor& self);
Tensor threshold(const Tensor& self, const c10::Scalar& threshold, const c10::Scalar& value);
Tensor prelu(const Tensor& self, const Tensor& weight);
Tensor glu(const Tensor& self, int64_t dim = -1);
Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

// ---- shape ----
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& self);
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor movedim(const Tensor& self, int64_t source, int64_t destination);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor expand(const Tensor& self, IntArrayRef size);
Tensor broadcast_to(const Tensor& self, IntArrayRef size);
std::vector<Tensor> broadcast_tensors(TensorList tensors);
Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor concat(TensorList tensors, int64_t dim = 0);
Tensor concatenate(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
Tensor hstack(TensorList tensors);
Tensor vstack(TensorList tensors);
Tensor dstack(TensorList tensors);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing = "ij");
Tensor flip(const Tensor& self, IntArrayRef dims);
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor diag(const Tensor& self, int64_t diagonal = 0);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor diag_embed(const Tensor& self, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor trace(const Tensor& self);
Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor contiguous(const Tensor& self);
Tensor detach(const Tensor& self);

// ---- indexing ----
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad = false);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const c10::Scalar& value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const c10::Scalar& alpha = 1);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const c10::Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor nonzero(const Tensor& self);
Tensor argwhere(const Tensor& self);
Tensor take(const Tensor& self, const Tensor& index);
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32 = false, bool right = false);
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);

// ---- reductions ----
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& self);
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& self, const Tensor& other);
Tensor min(const Tensor& self);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& self, const Tensor& other);
Tensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor all(const Tensor& self);
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& self);
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor std(const Tensor& self, bool unbiased = true);
Tensor std(const Tensor& self, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor var(const Tensor& self, bool unbiased = true);
Tensor var(const Tensor& self, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor norm(const Tensor& self, const c10::Scalar& p = 2);
Tensor norm(const Tensor& self, const std::optional<c10::Scalar>& p, IntArrayRef dim, bool keepdim = false);
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
Tensor median(const Tensor& self);
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim = std::nullopt);
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = {}, int64_t minlength = 0);
Tensor histc(const Tensor& self, int64_t bins = 100, const c10::Scalar& min = 0, const c10::Scalar& max = 0);

// ---- linear algebra ----
Tensor matmul(const Tensor& self, const Tensor& other);
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor bmm(const Tensor& self, const Tensor& mat2);
Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2);  // the product written into out
Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2);
Tensor mv(const Tensor& self, const Tensor& vec);
Tensor dot(const Tensor& self, const Tensor& other);
Tensor outer(const Tensor& self, const Tensor& vec2);
Tensor ger(const Tensor& self, const Tensor& vec2);
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta = 1,
             const c10::Scalar& alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar& beta = 1,
               const c10::Scalar& alpha = 1);
Tensor einsum(std::string_view equation, TensorList tensors, std::optional<IntArrayRef> path = std::nullopt);
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other);
Tensor kron(const Tensor& self, const Tensor& other);
Tensor inverse(const Tensor& self);
Tensor det(const Tensor& self);
Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim = std::nullopt);

// ---- neural-network ops (torch::conv2d, torch::max_pool2d, torch::nll_loss, ...) ----
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {});
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias = {});
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);
Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = 0, IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = 0, IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = 0, IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size);
Tensor dropout(const Tensor& input, double p, bool train);
Tensor& dropout_(Tensor& self, double p, bool train);
Tensor feature_dropout(const Tensor& input, double p, bool train);
Tensor& feature_dropout_(Tensor& self, double p, bool train);
Tensor alpha_dropout(const Tensor& input, double p, bool train);
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train);
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled = false);
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                     const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                     bool use_input_stats, double momentum, double eps, bool cudnn_enabled = false);
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-05, bool cudnn_enable = true);
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-05, bool cudnn_enabled = true);
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = {},
                std::optional<double> eps = std::nullopt);
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1, bool scale_grad_by_freq = false,
                 bool sparse = false);
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = {},
                int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = {},
                  int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = {},
                          int64_t reduction = Reduction::Mean, int64_t ignore_index = -100,
                          double label_smoothing = 0.0);
Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean, double beta = 1.0);
Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean, double delta = 1.0);
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = {},
                            int64_t reduction = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const std::optional<Tensor>& weight = {},
                                        const std::optional<Tensor>& pos_weight = {},
                                        int64_t reduction = Reduction::Mean);
Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean, bool log_target = false);
Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin = 1.0,
                            int64_t reduction = Reduction::Mean);
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                           int64_t reduction = Reduction::Mean);
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                             int64_t reduction = Reduction::Mean);
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction);
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-08);
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-06, bool keepdim = false);
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const c10::Scalar& value = 0);
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor);
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size);
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners);
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih = {}, const std::optional<Tensor>& b_hh = {});
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

// ---- threads ----
inline void set_num_threads(int n) { ember::set_num_threads(n); }
inline int get_num_threads() { return ember::get_num_threads(); }

// ---- grad mode and seeding ----
using NoGradGuard = ember::autograd::NoGradGuard;
using AutoGradMode = ember::autograd::AutoGradMode;
struct GradMode {
  static bool is_enabled() { return ember::autograd::GradMode::is_enabled(); }
  static void set_enabled(bool on) { ember::autograd::GradMode::set_enabled(on); }
};
// c10::InferenceMode: an RAII guard (tensors made inside are inference tensors).
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled();

 private:
  bool prev_inference_, prev_grad_;
};

}  // namespace at

namespace c10 {
using at::InferenceMode;
}
