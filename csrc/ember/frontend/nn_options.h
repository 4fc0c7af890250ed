// Options classes of torch::nn (Conv2dOptions(1, 10, 5).stride(2), ...) and torch::nn::functional
// (F::ConvFuncOptions, F::DropoutFuncOptions, ...): plain structs of named, chainable settings
// with libtorch's defaults.
#pragma once
#include <array>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "ember/frontend/functions.h"

// TORCH_ARG(T, name): a setting with a getter name() and a chainable setter name(value).
#define TORCH_ARG(T, name)                                              \
 public:                                                                \
  inline auto name(const T& new_##name)->decltype(*this) { /* NOLINT */ \
    this->name##_ = new_##name;                                         \
    return *this;                                                       \
  }                                                                     \
  inline auto name(T&& new_##name)->decltype(*this) { /* NOLINT */      \
    this->name##_ = std::move(new_##name);                              \
    return *this;                                                       \
  }                                                                     \
  inline const T& name() const noexcept { /* NOLINT */                  \
    return this->name##_;                                               \
  }                                                                     \
  inline T& name() noexcept { /* NOLINT */                              \
    return this->name##_;                                               \
  }                                                                     \
                                                                        \
 private:                                                               \
  T name##_ /* NOLINT */

namespace torch {

// The enum values options take (torch::kMean, torch::kSame, ...): one empty type each, so a
// setting can be a std::variant of the values it allows.
namespace enumtype {
#define EMBER_FE_ENUM(name, text)                          \
  struct k##name {                                         \
    static constexpr const char* str = text;               \
    bool operator==(const k##name&) const { return true; } \
  };
EMBER_FE_ENUM(None, "none")
EMBER_FE_ENUM(Mean, "mean")
EMBER_FE_ENUM(Sum, "sum")
EMBER_FE_ENUM(BatchMean, "batchmean")
EMBER_FE_ENUM(Valid, "valid")
EMBER_FE_ENUM(Same, "same")
EMBER_FE_ENUM(Zeros, "zeros")
EMBER_FE_ENUM(Reflect, "reflect")
EMBER_FE_ENUM(Replicate, "replicate")
EMBER_FE_ENUM(Circular, "circular")
EMBER_FE_ENUM(Constant, "constant")
EMBER_FE_ENUM(Nearest, "nearest")
EMBER_FE_ENUM(NearestExact, "nearest-exact")
EMBER_FE_ENUM(Linear, "linear")
EMBER_FE_ENUM(Bilinear, "bilinear")
EMBER_FE_ENUM(Bicubic, "bicubic")
EMBER_FE_ENUM(Trilinear, "trilinear")
EMBER_FE_ENUM(Area, "area")
EMBER_FE_ENUM(FanIn, "fan_in")
EMBER_FE_ENUM(FanOut, "fan_out")
EMBER_FE_ENUM(Conv1D, "conv1d")
EMBER_FE_ENUM(Conv2D, "conv2d")
EMBER_FE_ENUM(Conv3D, "conv3d")
EMBER_FE_ENUM(ConvTranspose1D, "conv_transpose1d")
EMBER_FE_ENUM(ConvTranspose2D, "conv_transpose2d")
EMBER_FE_ENUM(ConvTranspose3D, "conv_transpose3d")
EMBER_FE_ENUM(Sigmoid, "sigmoid")
EMBER_FE_ENUM(Tanh, "tanh")
EMBER_FE_ENUM(ReLU, "relu")
EMBER_FE_ENUM(GELU, "gelu")
EMBER_FE_ENUM(SiLU, "silu")
EMBER_FE_ENUM(Mish, "mish")
EMBER_FE_ENUM(LeakyReLU, "leaky_relu")
EMBER_FE_ENUM(LSTM, "LSTM")
EMBER_FE_ENUM(GRU, "GRU")
EMBER_FE_ENUM(RNN_TANH, "RNN_TANH")
EMBER_FE_ENUM(RNN_RELU, "RNN_RELU")
#undef EMBER_FE_ENUM

template <typename V>
const char* name_of(const V& v) {
  return std::visit([](const auto& e) { return std::decay_t<decltype(e)>::str; }, v);
}
}  // namespace enumtype

inline constexpr enumtype::kNone kNone{};
inline constexpr enumtype::kMean kMean{};
inline constexpr enumtype::kSum kSum{};
inline constexpr enumtype::kBatchMean kBatchMean{};
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kSame kSame{};
inline constexpr enumtype::kZeros kZeros{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kNearestExact kNearestExact{};
inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kBicubic kBicubic{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kGELU kGELU{};
inline constexpr enumtype::kSiLU kSiLU{};
inline constexpr enumtype::kMish kMish{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};
inline constexpr enumtype::kLSTM kLSTM{};
inline constexpr enumtype::kGRU kGRU{};
inline constexpr enumtype::kRNN_TANH kRNN_TANH{};
inline constexpr enumtype::kRNN_RELU kRNN_RELU{};

// A size given once or per dimension: ExpandingArray<2>(3) is {3, 3}.
template <size_t D, typename T = int64_t>
class ExpandingArray {
 public:
  ExpandingArray(std::initializer_list<T> list) : ExpandingArray(at::ArrayRef<T>(list)) {}  // NOLINT
  ExpandingArray(std::vector<T> vec) : ExpandingArray(at::ArrayRef<T>(vec)) {}              // NOLINT
  ExpandingArray(at::ArrayRef<T> values) {                                                  // NOLINT
    EMBER_CHECK(values.size() == D, "Expected ", D, " values, but instead got ", values.size());
    std::copy(values.begin(), values.end(), values_.begin());
  }
  ExpandingArray(T single_size) { values_.fill(single_size); }         // NOLINT
  ExpandingArray(const std::array<T, D>& values) : values_(values) {}  // NOLINT

  std::array<T, D>& operator*() { return values_; }
  const std::array<T, D>& operator*() const { return values_; }
  std::array<T, D>* operator->() { return &values_; }
  const std::array<T, D>* operator->() const { return &values_; }
  operator at::ArrayRef<T>() const { return at::ArrayRef<T>(values_.data(), D); }  // NOLINT
  size_t size() const noexcept { return D; }

 protected:
  std::array<T, D> values_;
};
template <size_t D, typename T>
std::ostream& operator<<(std::ostream& os, const ExpandingArray<D, T>& a) {
  if constexpr (D == 1)
    return os << (*a)[0];
  else
    return os << at::ArrayRef<T>(a);
}

// An ExpandingArray whose elements may be unset (None): adaptive pooling's output sizes.
template <size_t D, typename T = int64_t>
class ExpandingArrayWithOptionalElem : public ExpandingArray<D, std::optional<T>> {
 public:
  using ExpandingArray<D, std::optional<T>>::ExpandingArray;
  ExpandingArrayWithOptionalElem(std::initializer_list<T> list)  // NOLINT
      : ExpandingArrayWithOptionalElem(std::vector<T>(list)) {}
  ExpandingArrayWithOptionalElem(std::vector<T> vec)
      : ExpandingArray<D, std::optional<T>>(std::optional<T>()) {  // NOLINT
    EMBER_CHECK(vec.size() == D, "Expected ", D, " values, but instead got ", vec.size());
    for (size_t i = 0; i < D; ++i) this->values_[i] = vec[i];
  }
  ExpandingArrayWithOptionalElem(T single_size)
      : ExpandingArray<D, std::optional<T>>(std::optional<T>(single_size)) {}  // NOLINT
};
template <size_t D, typename T>
std::ostream& operator<<(std::ostream& os, const ExpandingArrayWithOptionalElem<D, T>& a) {
  auto one = [&](const std::optional<T>& v) -> std::ostream& { return v ? (os << *v) : (os << "None"); };
  if constexpr (D == 1) return one((*a)[0]);
  os << "[";
  for (size_t i = 0; i < D; ++i) {
    if (i) os << ", ";
    one((*a)[i]);
  }
  return os << "]";
}

}  // namespace torch

namespace torch::nn {

using at::Tensor;
using torch::ExpandingArray;
using torch::ExpandingArrayWithOptionalElem;

// ---- linear ----
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  TORCH_ARG(int64_t, in_features);
  TORCH_ARG(int64_t, out_features);
  TORCH_ARG(bool, bias) = true;
};
struct BilinearOptions {
  BilinearOptions(int64_t in1, int64_t in2, int64_t out) : in1_features_(in1), in2_features_(in2), out_features_(out) {}
  TORCH_ARG(int64_t, in1_features);
  TORCH_ARG(int64_t, in2_features);
  TORCH_ARG(int64_t, out_features);
  TORCH_ARG(bool, bias) = true;
};
struct IdentityOptions {};
struct FlattenOptions {
  TORCH_ARG(int64_t, start_dim) = 1;
  TORCH_ARG(int64_t, end_dim) = -1;
};
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(std::vector<int64_t>, sizes);
};

// ---- convolution ----
namespace detail {
template <size_t D>
using conv_padding_t = std::variant<ExpandingArray<D>, enumtype::kValid, enumtype::kSame>;
using conv_padding_mode_t =
    std::variant<enumtype::kZeros, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
}  // namespace detail

template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(ExpandingArray<D>, kernel_size);
  TORCH_ARG(ExpandingArray<D>, stride) = 1;
  TORCH_ARG(detail::conv_padding_t<D>, padding) = 0;

 public:
  decltype(auto) padding(std::initializer_list<int64_t> il) { return padding(ExpandingArray<D>(il)); }
  decltype(auto) padding(int64_t p) { return padding(ExpandingArray<D>(p)); }
  TORCH_ARG(ExpandingArray<D>, dilation) = 1;
  TORCH_ARG(int64_t, groups) = 1;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(detail::conv_padding_mode_t, padding_mode) = enumtype::kZeros();
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(ExpandingArray<D>, kernel_size);
  TORCH_ARG(ExpandingArray<D>, stride) = 1;
  TORCH_ARG(ExpandingArray<D>, padding) = 0;
  TORCH_ARG(ExpandingArray<D>, output_padding) = 0;
  TORCH_ARG(int64_t, groups) = 1;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(ExpandingArray<D>, dilation) = 1;
  TORCH_ARG(detail::conv_padding_mode_t, padding_mode) = enumtype::kZeros();
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

// ---- normalization ----
struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  TORCH_ARG(int64_t, num_features);
  TORCH_ARG(double, eps) = 1e-5;
  TORCH_ARG(std::optional<double>, momentum) = 0.1;
  TORCH_ARG(bool, affine) = true;
  TORCH_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;
struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  TORCH_ARG(int64_t, num_features);
  TORCH_ARG(double, eps) = 1e-5;
  TORCH_ARG(double, momentum) = 0.1;
  TORCH_ARG(bool, affine) = false;
  TORCH_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;
struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  TORCH_ARG(std::vector<int64_t>, normalized_shape);
  TORCH_ARG(double, eps) = 1e-5;
  TORCH_ARG(bool, elementwise_affine) = true;
};
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  TORCH_ARG(int64_t, num_groups);
  TORCH_ARG(int64_t, num_channels);
  TORCH_ARG(double, eps) = 1e-5;
  TORCH_ARG(bool, affine) = true;
};

// ---- dropout ----
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  TORCH_ARG(double, p);
  TORCH_ARG(bool, inplace) = false;
};
using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

// ---- embedding ----
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  TORCH_ARG(int64_t, num_embeddings);
  TORCH_ARG(int64_t, embedding_dim);
  TORCH_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  TORCH_ARG(std::optional<double>, max_norm) = std::nullopt;
  TORCH_ARG(double, norm_type) = 2.;
  TORCH_ARG(bool, scale_grad_by_freq) = false;
  TORCH_ARG(bool, sparse) = false;
  TORCH_ARG(Tensor, _weight) = Tensor();
};
struct EmbeddingFromPretrainedOptions {
  TORCH_ARG(bool, freeze) = true;
  TORCH_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  TORCH_ARG(std::optional<double>, max_norm) = std::nullopt;
  TORCH_ARG(double, norm_type) = 2.;
  TORCH_ARG(bool, scale_grad_by_freq) = false;
  TORCH_ARG(bool, sparse) = false;
};

// ---- pooling ----
template <size_t D>
struct MaxPoolOptions {
  MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  TORCH_ARG(ExpandingArray<D>, kernel_size);
  TORCH_ARG(ExpandingArray<D>, stride);
  TORCH_ARG(ExpandingArray<D>, padding) = 0;
  TORCH_ARG(ExpandingArray<D>, dilation) = 1;
  TORCH_ARG(bool, ceil_mode) = false;
};
using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;
template <size_t D>
struct AvgPoolOptions {
  AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  TORCH_ARG(ExpandingArray<D>, kernel_size);
  TORCH_ARG(ExpandingArray<D>, stride);
  TORCH_ARG(ExpandingArray<D>, padding) = 0;
  TORCH_ARG(bool, ceil_mode) = false;
  TORCH_ARG(bool, count_include_pad) = true;
  TORCH_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;
template <typename output_size_t>
struct AdaptiveAvgPoolOptions {
  AdaptiveAvgPoolOptions(output_size_t output_size) : output_size_(std::move(output_size)) {}  // NOLINT
  TORCH_ARG(output_size_t, output_size);
};
using AdaptiveAvgPool1dOptions = AdaptiveAvgPoolOptions<ExpandingArray<1>>;
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptionalElem<2>>;
using AdaptiveAvgPool3dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptionalElem<3>>;
template <typename output_size_t>
struct AdaptiveMaxPoolOptions {
  AdaptiveMaxPoolOptions(output_size_t output_size) : output_size_(std::move(output_size)) {}  // NOLINT
  TORCH_ARG(output_size_t, output_size);
};
using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<ExpandingArray<1>>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptionalElem<2>>;
using AdaptiveMaxPool3dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptionalElem<3>>;

// ---- activations ----
struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  TORCH_ARG(bool, inplace);
};
using ReLU6Options = ReLUOptions;
using SELUOptions = ReLUOptions;
struct LeakyReLUOptions {
  TORCH_ARG(double, negative_slope) = 1e-2;
  TORCH_ARG(bool, inplace) = false;
};
struct ELUOptions {
  TORCH_ARG(double, alpha) = 1.0;
  TORCH_ARG(bool, inplace) = false;
};
struct CELUOptions {
  TORCH_ARG(double, alpha) = 1.0;
  TORCH_ARG(bool, inplace) = false;
};
struct GELUOptions {
  TORCH_ARG(std::string, approximate) = "none";
};
struct SoftplusOptions {
  TORCH_ARG(double, beta) = 1.0;
  TORCH_ARG(double, threshold) = 20.0;
};
struct HardtanhOptions {
  TORCH_ARG(double, min_val) = -1.0;
  TORCH_ARG(double, max_val) = 1.0;
  TORCH_ARG(bool, inplace) = false;
};
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  TORCH_ARG(double, threshold);
  TORCH_ARG(double, value);
  TORCH_ARG(bool, inplace) = false;
};
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  TORCH_ARG(int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;
using SoftminOptions = SoftmaxOptions;
struct PReLUOptions {
  TORCH_ARG(int64_t, num_parameters) = 1;
  TORCH_ARG(double, init) = 0.25;
};
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  TORCH_ARG(int64_t, dim);
};
struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  TORCH_ARG(double, lambda);
};
using SoftshrinkOptions = HardshrinkOptions;

// ---- losses ----
namespace detail {
using reduction_t = std::variant<enumtype::kNone, enumtype::kMean, enumtype::kSum>;
// The int64 reduction code at:: functions take.
inline int64_t reduction_code(const reduction_t& r) {
  return std::holds_alternative<enumtype::kNone>(r)   ? at::Reduction::None
         : std::holds_alternative<enumtype::kMean>(r) ? at::Reduction::Mean
                                                      : at::Reduction::Sum;
}
}  // namespace detail
struct MSELossOptions {
  MSELossOptions(detail::reduction_t reduction = enumtype::kMean()) : reduction_(reduction) {}  // NOLINT
  TORCH_ARG(detail::reduction_t, reduction);
};
using L1LossOptions = MSELossOptions;
using SoftMarginLossOptions = MSELossOptions;
struct CrossEntropyLossOptions {
  TORCH_ARG(Tensor, weight) = {};
  TORCH_ARG(int64_t, ignore_index) = -100;
  TORCH_ARG(detail::reduction_t, reduction) = enumtype::kMean();
  TORCH_ARG(double, label_smoothing) = 0.0;
};
struct NLLLossOptions {
  TORCH_ARG(Tensor, weight) = {};
  TORCH_ARG(int64_t, ignore_index) = -100;
  TORCH_ARG(detail::reduction_t, reduction) = enumtype::kMean();
};
struct BCELossOptions {
  TORCH_ARG(Tensor, weight) = {};
  TORCH_ARG(detail::reduction_t, reduction) = enumtype::kMean();
};
struct BCEWithLogitsLossOptions {
  TORCH_ARG(Tensor, weight) = {};
  TORCH_ARG(detail::reduction_t, reduction) = enumtype::kMean();
  TORCH_ARG(Tensor, pos_weight) = {};
};
struct SmoothL1LossOptions {
  SmoothL1LossOptions(detail::reduction_t reduction = enumtype::kMean()) : reduction_(reduction) {}  // NOLINT
  TORCH_ARG(detail::reduction_t, reduction);
  TORCH_ARG(std::optional<double>, beta) = std::nullopt;
};
struct HuberLossOptions {
  HuberLossOptions(detail::reduction_t reduction = enumtype::kMean()) : reduction_(reduction) {}  // NOLINT
  TORCH_ARG(detail::reduction_t, reduction);
  TORCH_ARG(double, delta) = 1.0;
};
struct KLDivLossOptions {
  using reduction_t = std::variant<enumtype::kNone, enumtype::kBatchMean, enumtype::kSum, enumtype::kMean>;
  KLDivLossOptions(reduction_t reduction = enumtype::kMean()) : reduction_(reduction) {}  // NOLINT
  TORCH_ARG(reduction_t, reduction);
  TORCH_ARG(bool, log_target) = false;
};
struct HingeEmbeddingLossOptions {
  TORCH_ARG(double, margin) = 1.0;
  TORCH_ARG(detail::reduction_t, reduction) = enumtype::kMean();
};
struct MarginRankingLossOptions {
  TORCH_ARG(double, margin) = 0;
  TORCH_ARG(detail::reduction_t, reduction) = enumtype::kMean();
};
using CosineEmbeddingLossOptions = MarginRankingLossOptions;
struct PoissonNLLLossOptions {
  TORCH_ARG(bool, log_input) = true;
  TORCH_ARG(bool, full) = false;
  TORCH_ARG(double, eps) = 1e-8;
  TORCH_ARG(detail::reduction_t, reduction) = enumtype::kMean();
};

// ---- distance, shuffling, upsampling ----
struct CosineSimilarityOptions {
  TORCH_ARG(int64_t, dim) = 1;
  TORCH_ARG(double, eps) = 1e-8;
};
struct PairwiseDistanceOptions {
  TORCH_ARG(double, p) = 2.0;
  TORCH_ARG(double, eps) = 1e-6;
  TORCH_ARG(bool, keepdim) = false;
};
struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
  TORCH_ARG(int64_t, upscale_factor);
};
struct UpsampleOptions {
  using mode_t = std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kBicubic,
                              enumtype::kTrilinear>;
  TORCH_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  TORCH_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  TORCH_ARG(mode_t, mode) = enumtype::kNearest();
  TORCH_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

// ---- recurrent ----
struct RNNOptions {
  using nonlinearity_t = std::variant<enumtype::kTanh, enumtype::kReLU>;
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  TORCH_ARG(int64_t, input_size);
  TORCH_ARG(int64_t, hidden_size);
  TORCH_ARG(int64_t, num_layers) = 1;
  TORCH_ARG(nonlinearity_t, nonlinearity) = enumtype::kTanh();
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(bool, batch_first) = false;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(bool, bidirectional) = false;
};
struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  TORCH_ARG(int64_t, input_size);
  TORCH_ARG(int64_t, hidden_size);
  TORCH_ARG(int64_t, num_layers) = 1;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(bool, batch_first) = false;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(bool, bidirectional) = false;
  TORCH_ARG(int64_t, proj_size) = 0;
};
struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  TORCH_ARG(int64_t, input_size);
  TORCH_ARG(int64_t, hidden_size);
  TORCH_ARG(int64_t, num_layers) = 1;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(bool, batch_first) = false;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(bool, bidirectional) = false;
};
struct RNNCellOptions {
  using nonlinearity_t = std::variant<enumtype::kTanh, enumtype::kReLU>;
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  TORCH_ARG(int64_t, input_size);
  TORCH_ARG(int64_t, hidden_size);
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(nonlinearity_t, nonlinearity) = enumtype::kTanh();
};
struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  TORCH_ARG(int64_t, input_size);
  TORCH_ARG(int64_t, hidden_size);
  TORCH_ARG(bool, bias) = true;
};
using GRUCellOptions = LSTMCellOptions;

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  TORCH_ARG(int64_t, embed_dim);
  TORCH_ARG(int64_t, num_heads);
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(bool, add_bias_kv) = false;
  TORCH_ARG(bool, add_zero_attn) = false;
  TORCH_ARG(int64_t, kdim);
  TORCH_ARG(int64_t, vdim);
};

// ---- torch::nn::functional options ----
namespace functional {

template <size_t D>
struct ConvFuncOptions {
  using padding_t = detail::conv_padding_t<D>;
  TORCH_ARG(Tensor, bias) = Tensor();
  TORCH_ARG(ExpandingArray<D>, stride) = 1;
  TORCH_ARG(padding_t, padding) = 0;

 public:
  decltype(auto) padding(std::initializer_list<int64_t> il) { return padding(ExpandingArray<D>(il)); }
  decltype(auto) padding(int64_t p) { return padding(ExpandingArray<D>(p)); }
  TORCH_ARG(ExpandingArray<D>, dilation) = 1;
  TORCH_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;
template <size_t D>
struct ConvTransposeFuncOptions {
  TORCH_ARG(Tensor, bias) = Tensor();
  TORCH_ARG(ExpandingArray<D>, stride) = 1;
  TORCH_ARG(ExpandingArray<D>, padding) = 0;
  TORCH_ARG(ExpandingArray<D>, output_padding) = 0;
  TORCH_ARG(int64_t, groups) = 1;
  TORCH_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;
using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool2dFuncOptions = MaxPool2dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using AvgPool3dFuncOptions = AvgPool3dOptions;
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
struct DropoutFuncOptions {
  TORCH_ARG(double, p) = 0.5;
  TORCH_ARG(bool, training) = true;
  TORCH_ARG(bool, inplace) = false;
};
using Dropout1dFuncOptions = DropoutFuncOptions;
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;
using AlphaDropoutFuncOptions = DropoutFuncOptions;
using FeatureAlphaDropoutFuncOptions = DropoutFuncOptions;
struct BatchNormFuncOptions {
  TORCH_ARG(Tensor, weight) = Tensor();
  TORCH_ARG(Tensor, bias) = Tensor();
  TORCH_ARG(bool, training) = false;
  TORCH_ARG(std::optional<double>, momentum) = 0.1;
  TORCH_ARG(double, eps) = 1e-5;
};
struct InstanceNormFuncOptions {
  TORCH_ARG(Tensor, running_mean) = Tensor();
  TORCH_ARG(Tensor, running_var) = Tensor();
  TORCH_ARG(Tensor, weight) = Tensor();
  TORCH_ARG(Tensor, bias) = Tensor();
  TORCH_ARG(bool, use_input_stats) = true;
  TORCH_ARG(double, momentum) = 0.1;
  TORCH_ARG(double, eps) = 1e-5;
};
struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  TORCH_ARG(std::vector<int64_t>, normalized_shape);
  TORCH_ARG(Tensor, weight) = {};
  TORCH_ARG(Tensor, bias) = {};
  TORCH_ARG(double, eps) = 1e-5;
};
struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  TORCH_ARG(int64_t, num_groups);
  TORCH_ARG(Tensor, weight) = {};
  TORCH_ARG(Tensor, bias) = {};
  TORCH_ARG(double, eps) = 1e-5;
};
struct EmbeddingFuncOptions {
  TORCH_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  TORCH_ARG(std::optional<double>, max_norm) = std::nullopt;
  TORCH_ARG(double, norm_type) = 2.;
  TORCH_ARG(bool, scale_grad_by_freq) = false;
  TORCH_ARG(bool, sparse) = false;
};
struct LinearFuncOptions {};
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLUOptions;
using SELUFuncOptions = ReLUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using CELUFuncOptions = CELUOptions;
using GELUFuncOptions = GELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ThresholdFuncOptions = ThresholdOptions;
using GLUFuncOptions = GLUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = HardshrinkOptions;
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
using SoftminFuncOptions = SoftmaxFuncOptions;
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
using PixelShuffleFuncOptions = PixelShuffleOptions;
struct NormalizeFuncOptions {
  TORCH_ARG(double, p) = 2.0;
  TORCH_ARG(int64_t, dim) = 1;
  TORCH_ARG(double, eps) = 1e-12;
};
struct PadFuncOptions {
  using mode_t = std::variant<enumtype::kConstant, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT
  TORCH_ARG(std::vector<int64_t>, pad);
  TORCH_ARG(mode_t, mode) = enumtype::kConstant();
  TORCH_ARG(double, value) = 0;
};
struct InterpolateFuncOptions {
  using mode_t = std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kBicubic,
                              enumtype::kTrilinear, enumtype::kArea, enumtype::kNearestExact>;
  TORCH_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  TORCH_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  TORCH_ARG(mode_t, mode) = enumtype::kNearest();
  TORCH_ARG(std::optional<bool>, align_corners) = std::nullopt;
  TORCH_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
  TORCH_ARG(bool, antialias) = false;
};
struct OneHotFuncOptions {};

}  // namespace functional
}  // namespace torch::nn
