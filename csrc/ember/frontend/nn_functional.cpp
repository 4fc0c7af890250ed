#include "ember/frontend/nn_functional.h"

#include <cmath>

#include "ember/ops/nn.h"
#include "ember/ops/nn_pad.h"

namespace torch::nn::functional {

namespace {
using detail::reduction_code;
template <size_t D>
at::IntArrayRef ref(const ExpandingArray<D>& a) {
  return at::IntArrayRef(a->data(), D);
}
template <size_t D>
Tensor conv(const Tensor& input, const Tensor& weight, const ConvFuncOptions<D>& o) {
  if (const auto* p = std::get_if<ExpandingArray<D>>(&o.padding()))
    return at::convolution(input, weight, o.bias(), ref(o.stride()), ref(*p), ref(o.dilation()), false,
                           std::vector<int64_t>(D, 0), o.groups());
  std::string_view mode = std::holds_alternative<enumtype::kSame>(o.padding()) ? "same" : "valid";
  if constexpr (D == 1)
    return at::conv1d(input, weight, o.bias(), ref(o.stride()), mode, ref(o.dilation()), o.groups());
  else if constexpr (D == 2)
    return at::conv2d(input, weight, o.bias(), ref(o.stride()), mode, ref(o.dilation()), o.groups());
  else
    return at::conv3d(input, weight, o.bias(), ref(o.stride()), mode, ref(o.dilation()), o.groups());
}
template <size_t D>
Tensor conv_t(const Tensor& input, const Tensor& weight, const ConvTransposeFuncOptions<D>& o) {
  return at::convolution(input, weight, o.bias(), ref(o.stride()), ref(o.padding()), ref(o.dilation()), true,
                         ref(o.output_padding()), o.groups());
}
// Adaptive output sizes: an unset element keeps the input's size there.
template <size_t D>
std::vector<int64_t> adaptive_size(const Tensor& input, const ExpandingArrayWithOptionalElem<D>& out) {
  std::vector<int64_t> r(D);
  for (size_t i = 0; i < D; ++i)
    r[i] = (*out)[i] ? *(*out)[i] : input.size(input.dim() - static_cast<int64_t>(D) + static_cast<int64_t>(i));
  return r;
}
std::vector<int64_t> adaptive_size(const Tensor&, const ExpandingArray<1>& out) { return {(*out)[0]}; }
}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) { return at::linear(input, weight, bias); }
Tensor bilinear(const Tensor& i1, const Tensor& i2, const Tensor& weight, const Tensor& bias) {
  return at::bilinear(i1, i2, weight, bias);
}
Tensor conv1d(const Tensor& x, const Tensor& w, const Conv1dFuncOptions& o) { return conv<1>(x, w, o); }
Tensor conv2d(const Tensor& x, const Tensor& w, const Conv2dFuncOptions& o) { return conv<2>(x, w, o); }
Tensor conv3d(const Tensor& x, const Tensor& w, const Conv3dFuncOptions& o) { return conv<3>(x, w, o); }
Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const ConvTranspose1dFuncOptions& o) {
  return conv_t<1>(x, w, o);
}
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const ConvTranspose2dFuncOptions& o) {
  return conv_t<2>(x, w, o);
}
Tensor conv_transpose3d(const Tensor& x, const Tensor& w, const ConvTranspose3dFuncOptions& o) {
  return conv_t<3>(x, w, o);
}

#define EMBER_FE_F_POOL(nd)                                                                                      \
  std::tuple<Tensor, Tensor> max_pool##nd##d_with_indices(const Tensor& x, const MaxPool##nd##dFuncOptions& o) { \
    return at::max_pool##nd##d_with_indices(x, ref(o.kernel_size()), ref(o.stride()), ref(o.padding()),          \
                                            ref(o.dilation()), o.ceil_mode());                                   \
  }                                                                                                              \
  Tensor max_pool##nd##d(const Tensor& x, const MaxPool##nd##dFuncOptions& o) {                                  \
    return std::get<0>(max_pool##nd##d_with_indices(x, o));                                                      \
  }                                                                                                              \
  Tensor adaptive_max_pool##nd##d(const Tensor& x, const AdaptiveMaxPool##nd##dFuncOptions& o) {                 \
    return std::get<0>(at::adaptive_max_pool##nd##d(x, adaptive_size(x, o.output_size())));                      \
  }                                                                                                              \
  Tensor adaptive_avg_pool##nd##d(const Tensor& x, const AdaptiveAvgPool##nd##dFuncOptions& o) {                 \
    return at::adaptive_avg_pool##nd##d(x, adaptive_size(x, o.output_size()));                                   \
  }
EMBER_FE_F_POOL(1)
EMBER_FE_F_POOL(2)
EMBER_FE_F_POOL(3)
#undef EMBER_FE_F_POOL
Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o) {
  return at::avg_pool1d(x, ref(o.kernel_size()), ref(o.stride()), ref(o.padding()), o.ceil_mode(),
                        o.count_include_pad());
}
Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  return at::avg_pool2d(x, ref(o.kernel_size()), ref(o.stride()), ref(o.padding()), o.ceil_mode(),
                        o.count_include_pad(), o.divisor_override());
}
Tensor avg_pool3d(const Tensor& x, const AvgPool3dFuncOptions& o) {
  return at::avg_pool3d(x, ref(o.kernel_size()), ref(o.stride()), ref(o.padding()), o.ceil_mode(),
                        o.count_include_pad(), o.divisor_override());
}

Tensor dropout(Tensor x, const DropoutFuncOptions& o) {
  EMBER_CHECK_VALUE(o.p() >= 0 && o.p() <= 1, "dropout probability has to be between 0 and 1, but got ", o.p());
  return ember::dropout(x, o.p(), o.training(), o.inplace());
}
namespace {
Tensor feature_dropout_nd(Tensor x, const DropoutFuncOptions& o, int64_t nd, const char* name) {
  EMBER_CHECK_VALUE(o.p() >= 0 && o.p() <= 1, "dropout probability has to be between 0 and 1, but got ", o.p());
  int64_t batched = nd + 2;
  EMBER_CHECK(x.dim() == batched || x.dim() == batched - 1, name, ": Expected ", batched - 1, "D or ", batched,
              "D input, but received a ", x.dim(), "D input");
  if (x.dim() == batched) return ember::feature_dropout(x, o.p(), o.training(), o.inplace());
  // Unbatched: each channel is one feature map.
  Tensor r = Tensor(ember::feature_dropout(x.unsqueeze(0), o.p(), o.training(), o.inplace())).squeeze(0);
  return o.inplace() ? x : r;
}
}  // namespace
Tensor dropout1d(Tensor x, const Dropout1dFuncOptions& o) { return feature_dropout_nd(x, o, 1, "dropout1d"); }
Tensor dropout2d(Tensor x, const Dropout2dFuncOptions& o) { return feature_dropout_nd(x, o, 2, "dropout2d"); }
Tensor dropout3d(Tensor x, const Dropout3dFuncOptions& o) { return feature_dropout_nd(x, o, 3, "dropout3d"); }
Tensor alpha_dropout(Tensor x, const AlphaDropoutFuncOptions& o) {
  return ember::alpha_dropout(x, o.p(), o.training(), o.inplace());
}
Tensor feature_alpha_dropout(Tensor x, const FeatureAlphaDropoutFuncOptions& o) {
  return ember::feature_alpha_dropout(x, o.p(), o.training(), o.inplace());
}

Tensor batch_norm(const Tensor& x, const Tensor& mean, const Tensor& var, const BatchNormFuncOptions& o) {
  return at::batch_norm(x, o.weight(), o.bias(), mean, var, o.training(), o.momentum().value_or(0.1), o.eps());
}
Tensor instance_norm(const Tensor& x, const InstanceNormFuncOptions& o) {
  return at::instance_norm(x, o.weight(), o.bias(), o.running_mean(), o.running_var(), o.use_input_stats(),
                           o.momentum(), o.eps());
}
Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& o) {
  return at::layer_norm(x, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}
Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& o) {
  return at::group_norm(x, o.num_groups(), o.weight(), o.bias(), o.eps());
}
Tensor normalize(const Tensor& x, NormalizeFuncOptions o) {
  Tensor n = x.norm(o.p(), {o.dim()}, true).clamp_min(o.eps()).expand_as(x);
  return x / n;
}
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& o) {
  int64_t padding_idx = -1;
  if (o.padding_idx()) {
    int64_t p = *o.padding_idx();
    int64_t n = weight.size(0);
    EMBER_CHECK(p < n && p >= -n, "Padding_idx must be within num_embedding");
    padding_idx = p < 0 ? p + n : p;
  }
  if (o.max_norm()) {
    NoGradGuard no_grad;
    ember::Tensor w = weight;
    ember::embedding_renorm_(w, input.contiguous(), *o.max_norm(), o.norm_type());
  }
  return ember::embedding(weight, input, padding_idx, o.scale_grad_by_freq());
}
Tensor one_hot(const Tensor& t, int64_t num_classes) { return at::one_hot(t, num_classes); }

Tensor relu(Tensor x, const ReLUFuncOptions& o) { return o.inplace() ? at::relu_(x) : at::relu(x); }
Tensor relu6(Tensor x, const ReLU6FuncOptions& o) { return o.inplace() ? at::Tensor(x.clamp_(0, 6)) : at::relu6(x); }
Tensor selu(Tensor x, const SELUFuncOptions& o) { return o.inplace() ? at::Tensor(x.copy_(at::selu(x))) : at::selu(x); }
Tensor leaky_relu(Tensor x, const LeakyReLUFuncOptions& o) {
  return o.inplace() ? at::leaky_relu_(x, o.negative_slope()) : at::leaky_relu(x, o.negative_slope());
}
Tensor elu(Tensor x, const ELUFuncOptions& o) {
  Tensor r = at::elu(x, o.alpha());
  return o.inplace() ? at::Tensor(x.copy_(r)) : r;
}
Tensor celu(Tensor x, const CELUFuncOptions& o) {
  Tensor r = at::celu(x, o.alpha());
  return o.inplace() ? at::Tensor(x.copy_(r)) : r;
}
Tensor gelu(const Tensor& x, const GELUFuncOptions& o) { return at::gelu(x, o.approximate()); }
Tensor silu(const Tensor& x) { return at::silu(x); }
Tensor mish(const Tensor& x) { return at::mish(x); }
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o) { return at::softplus(x, o.beta(), o.threshold()); }
Tensor hardtanh(Tensor x, const HardtanhFuncOptions& o) {
  Tensor r = at::hardtanh(x, o.min_val(), o.max_val());
  return o.inplace() ? at::Tensor(x.copy_(r)) : r;
}
Tensor threshold(Tensor x, const ThresholdFuncOptions& o) {
  Tensor r = at::threshold(x, o.threshold(), o.value());
  return o.inplace() ? at::Tensor(x.copy_(r)) : r;
}
Tensor logsigmoid(const Tensor& x) { return at::log_sigmoid(x); }
Tensor hardsigmoid(const Tensor& x) { return at::hardsigmoid(x); }
Tensor hardswish(const Tensor& x) { return at::hardswish(x); }
Tensor softsign(const Tensor& x) { return ember::softsign(x); }
Tensor tanhshrink(const Tensor& x) { return x - x.tanh(); }
Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& o) {
  return at::where(x.abs() > o.lambda(), x, at::zeros_like(x));
}
Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& o) {
  double l = o.lambda();
  EMBER_CHECK(l >= 0, "lambda must be greater or equal to 0, but found to be ", l, ".");
  return at::where(x > l, x - l, at::where(x < -l, x + l, at::zeros_like(x)));
}
Tensor glu(const Tensor& x, const GLUFuncOptions& o) { return at::glu(x, o.dim()); }
Tensor prelu(const Tensor& x, const Tensor& w) { return at::prelu(x, w); }
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) { return at::softmax(x, o.dim(), o.dtype()); }
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) { return at::log_softmax(x, o.dim(), o.dtype()); }
Tensor softmin(const Tensor& x, const SoftminFuncOptions& o) { return at::softmax(-x, o.dim(), o.dtype()); }

Tensor mse_loss(const Tensor& x, const Tensor& t, const MSELossFuncOptions& o) {
  return at::mse_loss(x, t, reduction_code(o.reduction()));
}
Tensor l1_loss(const Tensor& x, const Tensor& t, const L1LossFuncOptions& o) {
  return at::l1_loss(x, t, reduction_code(o.reduction()));
}
Tensor cross_entropy(const Tensor& x, const Tensor& t, const CrossEntropyFuncOptions& o) {
  return at::cross_entropy_loss(x, t, o.weight(), reduction_code(o.reduction()), o.ignore_index(), o.label_smoothing());
}
Tensor nll_loss(const Tensor& x, const Tensor& t, const NLLLossFuncOptions& o) {
  return at::nll_loss(x, t, o.weight(), reduction_code(o.reduction()), o.ignore_index());
}
Tensor binary_cross_entropy(const Tensor& x, const Tensor& t, const BinaryCrossEntropyFuncOptions& o) {
  return at::binary_cross_entropy(x, t, o.weight(), reduction_code(o.reduction()));
}
Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& t,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& o) {
  return at::binary_cross_entropy_with_logits(x, t, o.weight(), o.pos_weight(), reduction_code(o.reduction()));
}
Tensor smooth_l1_loss(const Tensor& x, const Tensor& t, const SmoothL1LossFuncOptions& o) {
  return at::smooth_l1_loss(x, t, reduction_code(o.reduction()), o.beta().value_or(1.0));
}
Tensor huber_loss(const Tensor& x, const Tensor& t, const HuberLossFuncOptions& o) {
  return at::huber_loss(x, t, reduction_code(o.reduction()), o.delta());
}
Tensor kl_div(const Tensor& x, const Tensor& t, const KLDivFuncOptions& o) {
  if (std::holds_alternative<enumtype::kBatchMean>(o.reduction())) {
    Tensor total = at::kl_div(x, t, at::Reduction::Sum, o.log_target());
    return x.dim() != 0 ? total / x.size(0) : total;
  }
  int64_t r = std::holds_alternative<enumtype::kNone>(o.reduction())  ? at::Reduction::None
              : std::holds_alternative<enumtype::kSum>(o.reduction()) ? at::Reduction::Sum
                                                                      : at::Reduction::Mean;
  return at::kl_div(x, t, r, o.log_target());
}
Tensor hinge_embedding_loss(const Tensor& x, const Tensor& t, const HingeEmbeddingLossFuncOptions& o) {
  return at::hinge_embedding_loss(x, t, o.margin(), reduction_code(o.reduction()));
}
Tensor margin_ranking_loss(const Tensor& a, const Tensor& b, const Tensor& t, const MarginRankingLossFuncOptions& o) {
  return at::margin_ranking_loss(a, b, t, o.margin(), reduction_code(o.reduction()));
}
Tensor cosine_embedding_loss(const Tensor& a, const Tensor& b, const Tensor& t,
                             const CosineEmbeddingLossFuncOptions& o) {
  return at::cosine_embedding_loss(a, b, t, o.margin(), reduction_code(o.reduction()));
}
Tensor soft_margin_loss(const Tensor& x, const Tensor& t, const SoftMarginLossFuncOptions& o) {
  return at::soft_margin_loss(x, t, reduction_code(o.reduction()));
}
Tensor poisson_nll_loss(const Tensor& x, const Tensor& t, const PoissonNLLLossFuncOptions& o) {
  return at::poisson_nll_loss(x, t, o.log_input(), o.full(), o.eps(), reduction_code(o.reduction()));
}

Tensor cosine_similarity(const Tensor& a, const Tensor& b, const CosineSimilarityFuncOptions& o) {
  return at::cosine_similarity(a, b, o.dim(), o.eps());
}
Tensor pairwise_distance(const Tensor& a, const Tensor& b, const PairwiseDistanceFuncOptions& o) {
  return at::pairwise_distance(a, b, o.p(), o.eps(), o.keepdim());
}

Tensor pad(const Tensor& input, const PadFuncOptions& o) {
  const char* mode = std::holds_alternative<enumtype::kConstant>(o.mode())    ? "constant"
                     : std::holds_alternative<enumtype::kReflect>(o.mode())   ? "reflect"
                     : std::holds_alternative<enumtype::kReplicate>(o.mode()) ? "replicate"
                                                                              : "circular";
  return ember::pad(input, c10::to_ember(o.pad()), mode, o.value());
}

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  int64_t nd = input.dim() - 2;
  EMBER_CHECK(nd >= 1 && nd <= 3, "Input Error: Only 3D, 4D and 5D input Tensors supported (got ", input.dim(), "D)");
  EMBER_CHECK(o.size().has_value() != o.scale_factor().has_value(),
              "only one of size or scale_factor should be defined");
  std::vector<int64_t> out;
  std::vector<std::optional<double>> scales;
  if (o.size()) {
    out = *o.size();
    if (out.size() == 1 && nd > 1) out.assign(static_cast<size_t>(nd), out[0]);
    EMBER_CHECK(static_cast<int64_t>(out.size()) == nd,
                "Input and output must have the same number of spatial "
                "dimensions, but got input with spatial dimensions of ",
                input.sizes().slice(2), " and output size of ", at::IntArrayRef(out),
                ". Please provide input tensor in (N, C, d1, d2, "
                "...,dK) format and output size in (o1, o2, ...,oK) format.");
  } else {
    std::vector<double> sf = *o.scale_factor();
    if (sf.size() == 1 && nd > 1) sf.assign(static_cast<size_t>(nd), sf[0]);
    EMBER_CHECK(static_cast<int64_t>(sf.size()) == nd,
                "Input and scale_factor must have the same number of spatial "
                "dimensions");
    for (int64_t i = 0; i < nd; ++i) {
      out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + i)) * sf[i])));
      scales.push_back(o.recompute_scale_factor().value_or(false) ? std::nullopt : std::optional<double>(sf[i]));
    }
  }
  std::string mode = enumtype::name_of(o.mode());
  bool align = o.align_corners().value_or(false);
  EMBER_CHECK(!(o.align_corners().has_value() && (mode == "nearest" || mode == "area" || mode == "nearest-exact")),
              "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
              "trilinear");
  return ember::upsample(input, mode, at::to_ember(out), scales, align);
}

Tensor pixel_shuffle(const Tensor& x, const PixelShuffleFuncOptions& o) {
  return at::pixel_shuffle(x, o.upscale_factor());
}

}  // namespace torch::nn::functional
