#include "ember/frontend/nn_modules.h"

#include <cctype>
#include <cmath>

#include "ember/frontend/nn_init.h"

namespace torch::nn {

namespace F = torch::nn::functional;

namespace {
// Bools print as true/false and leave std::boolalpha set on the stream, as libtorch's modules do.
struct B {
  bool v;
};
B b(bool v) { return {v}; }
std::ostream& operator<<(std::ostream& s, B x) { return s << std::boolalpha << x.v; }
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for a bias, as torch's layers initialize it.
void init_bias(Tensor& bias, const Tensor& weight) {
  if (!bias.defined()) return;
  auto [fan_in, fan_out] = init::_calculate_fan_in_and_fan_out(weight);
  (void)fan_out;
  double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(bias, -bound, bound);
}
template <size_t D>
bool all_equal(const ExpandingArray<D>& a, int64_t v) {
  for (int64_t x : *a)
    if (x != v) return false;
  return true;
}
const char* padding_mode_name(const detail::conv_padding_mode_t& m) {
  if (std::holds_alternative<enumtype::kReflect>(m)) return "kReflect";
  if (std::holds_alternative<enumtype::kReplicate>(m)) return "kReplicate";
  if (std::holds_alternative<enumtype::kCircular>(m)) return "kCircular";
  return "kZeros";
}
}  // namespace

// ---- linear ----

void IdentityImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Identity()"; }

LinearImpl::LinearImpl(const LinearOptions& options_) : options(options_) { reset(); }

void LinearImpl::reset() {
  weight = register_parameter("weight", at::empty({options.out_features(), options.in_features()}));
  if (options.bias())
    bias = register_parameter("bias", at::empty({options.out_features()}));
  else
    bias = register_parameter("bias", Tensor(), /*requires_grad=*/false);
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  init_bias(bias, weight);
}

void LinearImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
    << ", bias=" << b(options.bias()) << ")";
}

Tensor LinearImpl::forward(const Tensor& input) { return F::linear(input, weight, bias); }

BilinearImpl::BilinearImpl(const BilinearOptions& options_) : options(options_) { reset(); }

void BilinearImpl::reset() {
  weight =
      register_parameter("weight", at::empty({options.out_features(), options.in1_features(), options.in2_features()}));
  if (options.bias())
    bias = register_parameter("bias", at::empty({options.out_features()}));
  else
    bias = register_parameter("bias", Tensor(), false);
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  double bound = 1.0 / std::sqrt(static_cast<double>(weight.size(1)));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

void BilinearImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Bilinear(in1_features=" << options.in1_features() << ", in2_features=" << options.in2_features()
    << ", out_features=" << options.out_features() << ", bias=" << b(options.bias()) << ")";
}

Tensor BilinearImpl::forward(const Tensor& a, const Tensor& c) { return F::bilinear(a, c, weight, bias); }

void FlattenImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}
Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(options.start_dim(), options.end_dim()); }

void UnflattenImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Unflatten(dim=" << options.dim() << ", unflattened_size={";
  for (size_t i = 0; i < options.sizes().size(); ++i) s << (i ? ", " : "") << options.sizes()[i];
  s << "})";
}
Tensor UnflattenImpl::forward(const Tensor& input) { return input.unflatten(options.dim(), options.sizes()); }

// ---- convolution ----

template <size_t D, typename Derived>
void ConvNdImpl<D, Derived>::reset() {
  const auto& o = options;
  EMBER_CHECK(o.in_channels() > 0 && o.groups() > 0 && o.out_channels() > 0,
              "in_channels, groups and out_channels must be a positive integer.");
  EMBER_CHECK(o.in_channels() % o.groups() == 0, "in_channels must be divisible by groups");
  EMBER_CHECK(o.out_channels() % o.groups() == 0, "out_channels must be divisible by groups");
  if (std::holds_alternative<enumtype::kSame>(o.padding()))
    for (int64_t s : *o.stride()) EMBER_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
  std::vector<int64_t> shape{o.out_channels(), o.in_channels() / o.groups()};
  shape.insert(shape.end(), o.kernel_size()->begin(), o.kernel_size()->end());
  weight = this->register_parameter("weight", at::empty(shape));
  if (o.bias())
    bias = this->register_parameter("bias", at::empty({o.out_channels()}));
  else
    bias = this->register_parameter("bias", Tensor(), false);
  reset_parameters();
}

template <size_t D, typename Derived>
void ConvNdImpl<D, Derived>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  init_bias(bias, weight);
}

template <size_t D, typename Derived>
void ConvNdImpl<D, Derived>::pretty_print(std::ostream& s) const {
  const auto& o = options;
  s << "torch::nn::Conv" << D << "d(" << o.in_channels() << ", " << o.out_channels()
    << ", kernel_size=" << o.kernel_size() << ", stride=" << o.stride();
  if (std::holds_alternative<enumtype::kValid>(o.padding()))
    s << ", padding='valid'";
  else if (std::holds_alternative<enumtype::kSame>(o.padding()))
    s << ", padding='same'";
  else if (const auto& p = std::get<ExpandingArray<D>>(o.padding()); !all_equal(p, 0))
    s << ", padding=" << p;
  if (!all_equal(o.dilation(), 1)) s << ", dilation=" << o.dilation();
  if (o.groups() != 1) s << ", groups=" << o.groups();
  if (!o.bias()) s << ", bias=" << b(false);
  if (!std::holds_alternative<enumtype::kZeros>(o.padding_mode()))
    s << ", padding_mode=" << padding_mode_name(o.padding_mode());
  s << ")";
}

template <size_t D, typename Derived>
Tensor ConvNdImpl<D, Derived>::forward(const Tensor& input) {
  const auto& o = options;
  F::ConvFuncOptions<D> fo;
  fo.bias(bias).stride(o.stride()).dilation(o.dilation()).groups(o.groups());
  if (!std::holds_alternative<enumtype::kZeros>(o.padding_mode())) {
    // Non-zero padding modes pad explicitly, then convolve without padding.
    const auto& p = std::get<ExpandingArray<D>>(o.padding());
    std::vector<int64_t> pad;
    for (size_t i = D; i-- > 0;) {
      pad.push_back((*p)[i]);
      pad.push_back((*p)[i]);
    }
    F::PadFuncOptions po(pad);
    if (std::holds_alternative<enumtype::kReflect>(o.padding_mode()))
      po.mode(enumtype::kReflect());
    else if (std::holds_alternative<enumtype::kReplicate>(o.padding_mode()))
      po.mode(enumtype::kReplicate());
    else
      po.mode(enumtype::kCircular());
    fo.padding(0);
    Tensor padded = F::pad(input, po);
    if constexpr (D == 1) return F::conv1d(padded, weight, fo);
    if constexpr (D == 2) return F::conv2d(padded, weight, fo);
    if constexpr (D == 3) return F::conv3d(padded, weight, fo);
  }
  fo.padding(o.padding());
  if constexpr (D == 1) return F::conv1d(input, weight, fo);
  if constexpr (D == 2) return F::conv2d(input, weight, fo);
  if constexpr (D == 3) return F::conv3d(input, weight, fo);
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::reset() {
  const auto& o = options;
  EMBER_CHECK(o.in_channels() > 0 && o.groups() > 0 && o.out_channels() > 0,
              "in_channels, groups and out_channels must be a positive integer.");
  EMBER_CHECK(o.in_channels() % o.groups() == 0, "in_channels must be divisible by groups");
  EMBER_CHECK(o.out_channels() % o.groups() == 0, "out_channels must be divisible by groups");
  EMBER_CHECK(std::holds_alternative<enumtype::kZeros>(o.padding_mode()),
              "Only \"zeros\" padding mode is supported for ConvTranspose", D, "d");
  std::vector<int64_t> shape{o.in_channels(), o.out_channels() / o.groups()};
  shape.insert(shape.end(), o.kernel_size()->begin(), o.kernel_size()->end());
  weight = this->register_parameter("weight", at::empty(shape));
  if (o.bias())
    bias = this->register_parameter("bias", at::empty({o.out_channels()}));
  else
    bias = this->register_parameter("bias", Tensor(), false);
  reset_parameters();
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  init_bias(bias, weight);
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::pretty_print(std::ostream& s) const {
  const auto& o = options;
  s << "torch::nn::ConvTranspose" << D << "d(" << o.in_channels() << ", " << o.out_channels()
    << ", kernel_size=" << o.kernel_size() << ", stride=" << o.stride();
  if (!all_equal(o.padding(), 0)) s << ", padding=" << o.padding();
  if (!all_equal(o.dilation(), 1)) s << ", dilation=" << o.dilation();
  if (!all_equal(o.output_padding(), 0)) s << ", output_padding=" << o.output_padding();
  if (o.groups() != 1) s << ", groups=" << o.groups();
  if (!o.bias()) s << ", bias=" << b(false);
  s << ")";
}

template <size_t D, typename Derived>
Tensor ConvTransposeNdImpl<D, Derived>::forward(const Tensor& input,
                                                const std::optional<at::IntArrayRef>& output_size) {
  const auto& o = options;
  std::vector<int64_t> out_pad(o.output_padding()->begin(), o.output_padding()->end());
  if (output_size) {
    // The output padding that gives the requested size (torch's _output_padding).
    std::vector<int64_t> want = output_size->vec();
    if (static_cast<int64_t>(want.size()) == input.dim()) want.erase(want.begin(), want.begin() + 2);
    if (static_cast<int64_t>(want.size()) == input.dim() - 1) want.erase(want.begin());
    EMBER_CHECK(want.size() == D, "ConvTranspose", D, "D: output_size must have ", D, " or ", D + 2, " elements (got ",
                output_size->size(), ")");
    int64_t first = input.dim() - static_cast<int64_t>(D);
    for (size_t i = 0; i < D; ++i) {
      int64_t min_size = (input.size(first + static_cast<int64_t>(i)) - 1) * (*o.stride())[i] - 2 * (*o.padding())[i] +
                         (*o.dilation())[i] * ((*o.kernel_size())[i] - 1) + 1;
      int64_t max_size = min_size + (*o.stride())[i] - 1;
      EMBER_CHECK(want[i] >= min_size && want[i] <= max_size, "requested an output size of ", at::IntArrayRef(want),
                  ", but valid sizes range from ", min_size, " to ", max_size, " (for an input of ",
                  input.sizes().slice(2), ")");
      out_pad[i] = want[i] - min_size;
    }
  }
  return at::convolution(input, weight, bias, at::IntArrayRef(o.stride()->data(), D),
                         at::IntArrayRef(o.padding()->data(), D), at::IntArrayRef(o.dilation()->data(), D), true,
                         out_pad, o.groups());
}

template class ConvNdImpl<1, Conv1dImpl>;
template class ConvNdImpl<2, Conv2dImpl>;
template class ConvNdImpl<3, Conv3dImpl>;
template class ConvTransposeNdImpl<1, ConvTranspose1dImpl>;
template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;
template class ConvTransposeNdImpl<3, ConvTranspose3dImpl>;

// ---- normalization ----

template <size_t D, typename Derived, typename Options>
void NormImplBase<D, Derived, Options>::reset() {
  if (options.affine()) {
    weight = this->register_parameter("weight", at::empty({options.num_features()}));
    bias = this->register_parameter("bias", at::empty({options.num_features()}));
  } else {
    weight = this->register_parameter("weight", Tensor(), false);
    bias = this->register_parameter("bias", Tensor(), false);
  }
  if (options.track_running_stats()) {
    running_mean = this->register_buffer("running_mean", at::zeros({options.num_features()}));
    running_var = this->register_buffer("running_var", at::ones({options.num_features()}));
    num_batches_tracked = this->register_buffer("num_batches_tracked", at::tensor(int64_t(0), at::kLong));
  } else {
    running_mean = this->register_buffer("running_mean", Tensor());
    running_var = this->register_buffer("running_var", Tensor());
    num_batches_tracked = this->register_buffer("num_batches_tracked", Tensor());
  }
  reset_parameters();
}

template <size_t D, typename Derived, typename Options>
void NormImplBase<D, Derived, Options>::reset_running_stats() {
  if (options.track_running_stats()) {
    init::zeros_(running_mean);
    init::ones_(running_var);
    init::zeros_(num_batches_tracked);
  }
}

template <size_t D, typename Derived, typename Options>
void NormImplBase<D, Derived, Options>::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

template <size_t D, typename Derived>
void BatchNormImplBase<D, Derived>::pretty_print(std::ostream& s) const {
  const auto& o = this->options;
  s << "torch::nn::BatchNorm" << D << "d(" << o.num_features() << ", eps=" << o.eps() << ", momentum=";
  if (o.momentum())
    s << *o.momentum();
  else
    s << "None";
  s << ", affine=" << b(o.affine()) << ", track_running_stats=" << b(o.track_running_stats()) << ")";
}

template <size_t D, typename Derived>
Tensor BatchNormImplBase<D, Derived>::forward(const Tensor& input) {
  if constexpr (D == 1)
    EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "expected 2D or 3D input (got ", input.dim(), "D input)");
  else
    EMBER_CHECK(input.dim() == static_cast<int64_t>(D) + 2, "expected ", D + 2, "D input (got ", input.dim(),
                "D input)");
  const auto& o = this->options;
  double factor = o.momentum().value_or(0.0);
  if (this->is_training() && o.track_running_stats() && this->num_batches_tracked.defined()) {
    this->num_batches_tracked.add_(1);
    if (!o.momentum()) factor = 1.0 / this->num_batches_tracked.template item<double>();  // cumulative average
  }
  bool use_batch_stats = this->is_training() || !this->running_mean.defined();
  return at::batch_norm(
      input, this->weight, this->bias, this->is_training() && !o.track_running_stats() ? Tensor() : this->running_mean,
      this->is_training() && !o.track_running_stats() ? Tensor() : this->running_var, use_batch_stats, factor, o.eps());
}

template <size_t D, typename Derived>
void InstanceNormImpl<D, Derived>::pretty_print(std::ostream& s) const {
  const auto& o = this->options;
  s << "torch::nn::InstanceNorm" << D << "d(" << o.num_features() << ", eps=" << o.eps()
    << ", momentum=" << o.momentum() << ", affine=" << b(o.affine())
    << ", track_running_stats=" << b(o.track_running_stats()) << ")";
}

template <size_t D, typename Derived>
Tensor InstanceNormImpl<D, Derived>::forward(const Tensor& input) {
  int64_t batched = static_cast<int64_t>(D) + 2;
  EMBER_CHECK(input.dim() == batched || input.dim() == batched - 1, "expected ", batched - 1, "D or ", batched,
              "D input (got ", input.dim(), "D input)");
  const auto& o = this->options;
  bool unbatched = input.dim() == batched - 1;
  Tensor x = unbatched ? input.unsqueeze(0) : input;
  Tensor r = at::instance_norm(x, this->weight, this->bias, this->running_mean, this->running_var,
                               this->is_training() || !o.track_running_stats(), o.momentum(), o.eps());
  return unbatched ? r.squeeze(0) : r;
}

template class NormImplBase<1, BatchNorm1dImpl, BatchNormOptions>;
template class NormImplBase<2, BatchNorm2dImpl, BatchNormOptions>;
template class NormImplBase<3, BatchNorm3dImpl, BatchNormOptions>;
template class BatchNormImplBase<1, BatchNorm1dImpl>;
template class BatchNormImplBase<2, BatchNorm2dImpl>;
template class BatchNormImplBase<3, BatchNorm3dImpl>;
template class NormImplBase<1, InstanceNorm1dImpl, InstanceNormOptions>;
template class NormImplBase<2, InstanceNorm2dImpl, InstanceNormOptions>;
template class NormImplBase<3, InstanceNorm3dImpl, InstanceNormOptions>;
template class InstanceNormImpl<1, InstanceNorm1dImpl>;
template class InstanceNormImpl<2, InstanceNorm2dImpl>;
template class InstanceNormImpl<3, InstanceNorm3dImpl>;

LayerNormImpl::LayerNormImpl(LayerNormOptions options_) : options(std::move(options_)) { reset(); }

void LayerNormImpl::reset() {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", at::empty(options.normalized_shape()));
    bias = register_parameter("bias", at::empty(options.normalized_shape()));
  } else {
    weight = register_parameter("weight", Tensor(), false);
    bias = register_parameter("bias", Tensor(), false);
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (options.elementwise_affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

void LayerNormImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::LayerNorm(" << at::IntArrayRef(options.normalized_shape()) << ", eps=" << options.eps()
    << ", elementwise_affine=" << b(options.elementwise_affine()) << ")";
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return at::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options_) : options(options_) { reset(); }

void GroupNormImpl::reset() {
  EMBER_CHECK_VALUE(options.num_channels() % options.num_groups() == 0, "num_channels must be divisible by num_groups");
  if (options.affine()) {
    weight = register_parameter("weight", at::empty({options.num_channels()}));
    bias = register_parameter("bias", at::empty({options.num_channels()}));
  } else {
    weight = register_parameter("weight", Tensor(), false);
    bias = register_parameter("bias", Tensor(), false);
  }
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

void GroupNormImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::GroupNorm(" << options.num_groups() << ", " << options.num_channels() << ", eps=" << options.eps()
    << ", affine=" << b(options.affine()) << ")";
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return at::group_norm(input, options.num_groups(), weight, bias, options.eps());
}

// ---- dropout ----

#define EMBER_FE_DROPOUT_DEF(Name, fn)                                                                              \
  Name##Impl::Name##Impl(const DropoutOptions& options_) : options(options_) { reset(); }                           \
  void Name##Impl::reset() {                                                                                        \
    EMBER_CHECK(options.p() >= 0. && options.p() <= 1., "dropout probability has to be between 0 and 1, but got ",  \
                options.p());                                                                                       \
  }                                                                                                                 \
  void Name##Impl::pretty_print(std::ostream& s) const {                                                            \
    s << "torch::nn::" #Name "(p=" << options.p() << ", inplace=" << b(options.inplace()) << ")";                   \
  }                                                                                                                 \
  Tensor Name##Impl::forward(Tensor input) {                                                                        \
    return F::fn(input, F::DropoutFuncOptions().p(options.p()).inplace(options.inplace()).training(is_training())); \
  }
EMBER_FE_DROPOUT_DEF(Dropout, dropout)
EMBER_FE_DROPOUT_DEF(Dropout1d, dropout1d)
EMBER_FE_DROPOUT_DEF(Dropout2d, dropout2d)
EMBER_FE_DROPOUT_DEF(Dropout3d, dropout3d)
EMBER_FE_DROPOUT_DEF(AlphaDropout, alpha_dropout)
EMBER_FE_DROPOUT_DEF(FeatureAlphaDropout, feature_alpha_dropout)
#undef EMBER_FE_DROPOUT_DEF

// ---- embedding ----

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions options_) : options(std::move(options_)) { reset(); }

void EmbeddingImpl::reset() {
  if (options.padding_idx()) {
    int64_t& p = *options.padding_idx();
    EMBER_CHECK(p < options.num_embeddings() && p >= -options.num_embeddings(),
                "Padding_idx must be within num_embeddings");
    if (p < 0) p += options.num_embeddings();
  }
  if (!options._weight().defined()) {
    weight = register_parameter("weight", at::empty({options.num_embeddings(), options.embedding_dim()}));
    reset_parameters();
  } else {
    EMBER_CHECK(options._weight().sizes() == at::IntArrayRef({options.num_embeddings(), options.embedding_dim()}),
                "Shape of _weight does not match num_embeddings and embedding_dim");
    weight = register_parameter("weight", options._weight());
  }
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    weight[*options.padding_idx()].fill_(0);
  }
}

void EmbeddingImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Embedding(num_embeddings=" << options.num_embeddings()
    << ", embedding_dim=" << options.embedding_dim();
  if (options.padding_idx()) s << ", padding_idx=" << *options.padding_idx();
  if (options.max_norm()) s << ", max_norm=" << *options.max_norm();
  if (options.norm_type() != 2) s << ", norm_type=" << options.norm_type();
  if (options.scale_grad_by_freq()) s << ", scale_grad_by_freq=" << b(true);
  if (options.sparse()) s << ", sparse=" << b(true);
  s << ")";
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return F::embedding(indices, weight,
                      F::EmbeddingFuncOptions()
                          .padding_idx(options.padding_idx())
                          .max_norm(options.max_norm())
                          .norm_type(options.norm_type())
                          .scale_grad_by_freq(options.scale_grad_by_freq())
                          .sparse(options.sparse()));
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& o) {
  EMBER_CHECK(embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional");
  Embedding e(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                  ._weight(embeddings)
                  .padding_idx(o.padding_idx())
                  .max_norm(o.max_norm())
                  .norm_type(o.norm_type())
                  .scale_grad_by_freq(o.scale_grad_by_freq())
                  .sparse(o.sparse()));
  e->weight.set_requires_grad(!o.freeze());
  return e;
}

// ---- pooling ----

void MaxPool1dImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::MaxPool1d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
    << ", padding=" << options.padding() << ", dilation=" << options.dilation()
    << ", ceil_mode=" << b(options.ceil_mode()) << ")";
}
void MaxPool2dImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::MaxPool2d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
    << ", padding=" << options.padding() << ", dilation=" << options.dilation()
    << ", ceil_mode=" << b(options.ceil_mode()) << ")";
}
void MaxPool3dImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::MaxPool3d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
    << ", padding=" << options.padding() << ", dilation=" << options.dilation()
    << ", ceil_mode=" << b(options.ceil_mode()) << ")";
}
Tensor MaxPool1dImpl::forward(const Tensor& x) { return F::max_pool1d(x, options); }
Tensor MaxPool2dImpl::forward(const Tensor& x) { return F::max_pool2d(x, options); }
Tensor MaxPool3dImpl::forward(const Tensor& x) { return F::max_pool3d(x, options); }
#define EMBER_FE_AVGPOOL_PRINT(D)                                                                               \
  void AvgPool##D##dImpl::pretty_print(std::ostream& s) const {                                                 \
    s << "torch::nn::AvgPool" #D "d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()   \
      << ", padding=" << options.padding() << ")";                                                              \
  }                                                                                                             \
  Tensor AvgPool##D##dImpl::forward(const Tensor& x) { return F::avg_pool##D##d(x, options); }                  \
  void AdaptiveAvgPool##D##dImpl::pretty_print(std::ostream& s) const {                                         \
    s << "torch::nn::AdaptiveAvgPool" #D "d(output_size=" << options.output_size() << ")";                      \
  }                                                                                                             \
  Tensor AdaptiveAvgPool##D##dImpl::forward(const Tensor& x) { return F::adaptive_avg_pool##D##d(x, options); } \
  void AdaptiveMaxPool##D##dImpl::pretty_print(std::ostream& s) const {                                         \
    s << "torch::nn::AdaptiveMaxPool" #D "d(output_size=" << options.output_size() << ")";                      \
  }                                                                                                             \
  Tensor AdaptiveMaxPool##D##dImpl::forward(const Tensor& x) { return F::adaptive_max_pool##D##d(x, options); }
EMBER_FE_AVGPOOL_PRINT(1)
EMBER_FE_AVGPOOL_PRINT(2)
EMBER_FE_AVGPOOL_PRINT(3)
#undef EMBER_FE_AVGPOOL_PRINT

void PixelShuffleImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::PixelShuffle(upscale_factor=" << options.upscale_factor() << ")";
}
Tensor PixelShuffleImpl::forward(const Tensor& x) { return F::pixel_shuffle(x, options); }

void UpsampleImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Upsample(";
  if (options.scale_factor())
    s << "scale_factor=" << at::ArrayRef<double>(*options.scale_factor());
  else if (options.size())
    s << "size=" << at::IntArrayRef(*options.size());
  std::string m = enumtype::name_of(options.mode());
  m[0] = static_cast<char>(std::toupper(m[0]));
  s << ", mode=k" << m << ")";
}

Tensor UpsampleImpl::forward(const Tensor& x) {
  F::InterpolateFuncOptions o;
  o.size(options.size()).scale_factor(options.scale_factor()).align_corners(options.align_corners());
  std::visit([&](const auto& m) { o.mode(m); }, options.mode());
  return F::interpolate(x, o);
}

// ---- activations ----

#define EMBER_FE_SIMPLE_DEF(Name, expr)                                                   \
  void Name##Impl::pretty_print(std::ostream& s) const { s << "torch::nn::" #Name "()"; } \
  Tensor Name##Impl::forward(const Tensor& input) { return expr; }
EMBER_FE_SIMPLE_DEF(Sigmoid, at::sigmoid(input))
EMBER_FE_SIMPLE_DEF(Tanh, at::tanh(input))
EMBER_FE_SIMPLE_DEF(SiLU, F::silu(input))
EMBER_FE_SIMPLE_DEF(Mish, F::mish(input))
EMBER_FE_SIMPLE_DEF(LogSigmoid, F::logsigmoid(input))
EMBER_FE_SIMPLE_DEF(Softsign, F::softsign(input))
EMBER_FE_SIMPLE_DEF(Tanhshrink, F::tanhshrink(input))
EMBER_FE_SIMPLE_DEF(Hardsigmoid, F::hardsigmoid(input))
EMBER_FE_SIMPLE_DEF(Hardswish, F::hardswish(input))
#undef EMBER_FE_SIMPLE_DEF

#define EMBER_FE_INPLACE_PRINT(Name)                     \
  void Name##Impl::pretty_print(std::ostream& s) const { \
    s << "torch::nn::" #Name "(";                        \
    if (options.inplace()) s << "inplace=" << b(true);   \
    s << ")";                                            \
  }
EMBER_FE_INPLACE_PRINT(ReLU)
EMBER_FE_INPLACE_PRINT(ReLU6)
EMBER_FE_INPLACE_PRINT(SELU)
#undef EMBER_FE_INPLACE_PRINT
void ReLUImpl::reset() {}
void ReLU6Impl::reset() {}
void SELUImpl::reset() {}
Tensor ReLUImpl::forward(Tensor x) { return F::relu(x, options); }
Tensor ReLU6Impl::forward(Tensor x) { return F::relu6(x, options); }
Tensor SELUImpl::forward(Tensor x) { return F::selu(x, options); }
void LeakyReLUImpl::reset() {}
void LeakyReLUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::LeakyReLU(negative_slope=" << options.negative_slope();
  if (options.inplace()) s << ", inplace=" << b(true);
  s << ")";
}
Tensor LeakyReLUImpl::forward(Tensor x) { return F::leaky_relu(x, options); }
void ELUImpl::reset() {}
void ELUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::ELU(alpha=" << options.alpha();
  if (options.inplace()) s << ", inplace=" << b(true);
  s << ")";
}
Tensor ELUImpl::forward(Tensor x) { return F::elu(x, options); }
void CELUImpl::reset() {}
void CELUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::CELU(alpha=" << options.alpha();
  if (options.inplace()) s << ", inplace=" << b(true);
  s << ")";
}
Tensor CELUImpl::forward(Tensor x) { return F::celu(x, options); }
void GELUImpl::reset() {}
void GELUImpl::pretty_print(std::ostream& s) const { s << "torch::nn::GELU()"; }
Tensor GELUImpl::forward(Tensor x) { return F::gelu(x, options); }
void SoftplusImpl::reset() {}
void SoftplusImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Softplus(beta=" << options.beta() << ", threshold=" << options.threshold() << ")";
}
Tensor SoftplusImpl::forward(Tensor x) { return F::softplus(x, options); }
void HardtanhImpl::reset() {
  EMBER_CHECK(options.max_val() > options.min_val(), "max_val must be larger than min_val");
}
void HardtanhImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val();
  if (options.inplace()) s << ", inplace=" << b(true);
  s << ")";
}
Tensor HardtanhImpl::forward(Tensor x) { return F::hardtanh(x, options); }
void GLUImpl::reset() {}
void GLUImpl::pretty_print(std::ostream& s) const { s << "torch::nn::GLU(dim=" << options.dim() << ")"; }
Tensor GLUImpl::forward(Tensor x) { return F::glu(x, options); }
void HardshrinkImpl::reset() {}
void HardshrinkImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Hardshrink(" << options.lambda() << ")"; }
Tensor HardshrinkImpl::forward(Tensor x) { return F::hardshrink(x, options); }
void SoftshrinkImpl::reset() {}
void SoftshrinkImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softshrink(" << options.lambda() << ")"; }
Tensor SoftshrinkImpl::forward(Tensor x) { return F::softshrink(x, options); }

void SoftmaxImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softmax(dim=" << options.dim() << ")"; }
Tensor SoftmaxImpl::forward(const Tensor& x) { return F::softmax(x, options.dim()); }
void LogSoftmaxImpl::pretty_print(std::ostream& s) const { s << "torch::nn::LogSoftmax(dim=" << options.dim() << ")"; }
Tensor LogSoftmaxImpl::forward(const Tensor& x) { return F::log_softmax(x, options.dim()); }
void SoftminImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softmin(dim=" << options.dim() << ")"; }
Tensor SoftminImpl::forward(const Tensor& x) { return F::softmin(x, options.dim()); }

void ThresholdImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Threshold(threshold=" << options.threshold() << ", value=" << options.value();
  if (options.inplace()) s << ", inplace=" << b(true);
  s << ")";
}
Tensor ThresholdImpl::forward(Tensor x) { return F::threshold(x, options); }

PReLUImpl::PReLUImpl(const PReLUOptions& options_) : options(options_) { reset(); }
void PReLUImpl::reset() { weight = register_parameter("weight", at::full({options.num_parameters()}, options.init())); }
void PReLUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::PReLU(num_parameters=" << options.num_parameters() << ")";
}
Tensor PReLUImpl::forward(const Tensor& x) { return F::prelu(x, weight); }

// ---- losses ----

#define EMBER_FE_LOSS_DEF(Name, fn)                                                          \
  Name##Impl::Name##Impl(Name##Options options_) : options(std::move(options_)) { reset(); } \
  void Name##Impl::pretty_print(std::ostream& s) const { s << "torch::nn::" #Name "()"; }    \
  Tensor Name##Impl::forward(const Tensor& input, const Tensor& target) { return F::fn(input, target, options); }
EMBER_FE_LOSS_DEF(MSELoss, mse_loss)
EMBER_FE_LOSS_DEF(L1Loss, l1_loss)
EMBER_FE_LOSS_DEF(CrossEntropyLoss, cross_entropy)
EMBER_FE_LOSS_DEF(NLLLoss, nll_loss)
EMBER_FE_LOSS_DEF(BCELoss, binary_cross_entropy)
EMBER_FE_LOSS_DEF(BCEWithLogitsLoss, binary_cross_entropy_with_logits)
EMBER_FE_LOSS_DEF(SmoothL1Loss, smooth_l1_loss)
EMBER_FE_LOSS_DEF(HuberLoss, huber_loss)
EMBER_FE_LOSS_DEF(KLDivLoss, kl_div)
EMBER_FE_LOSS_DEF(SoftMarginLoss, soft_margin_loss)
EMBER_FE_LOSS_DEF(HingeEmbeddingLoss, hinge_embedding_loss)
EMBER_FE_LOSS_DEF(PoissonNLLLoss, poisson_nll_loss)
#undef EMBER_FE_LOSS_DEF
// Losses whose weights are buffers (so they follow to(dtype) and show in buffers()).
void MSELossImpl::reset() {}
void L1LossImpl::reset() {}
void CrossEntropyLossImpl::reset() { options.weight() = register_buffer("weight", options.weight()); }
void NLLLossImpl::reset() { options.weight() = register_buffer("weight", options.weight()); }
void BCELossImpl::reset() { options.weight() = register_buffer("weight", options.weight()); }
void BCEWithLogitsLossImpl::reset() {
  options.weight() = register_buffer("weight", options.weight());
  options.pos_weight() = register_buffer("pos_weight", options.pos_weight());
}
void SmoothL1LossImpl::reset() {}
void HuberLossImpl::reset() {}
void KLDivLossImpl::reset() {}
void SoftMarginLossImpl::reset() {}
void HingeEmbeddingLossImpl::reset() {}
void PoissonNLLLossImpl::reset() {}
void MarginRankingLossImpl::pretty_print(std::ostream& s) const { s << "torch::nn::MarginRankingLoss()"; }
Tensor MarginRankingLossImpl::forward(const Tensor& a, const Tensor& c, const Tensor& t) {
  return F::margin_ranking_loss(a, c, t, options);
}
void CosineEmbeddingLossImpl::pretty_print(std::ostream& s) const { s << "torch::nn::CosineEmbeddingLoss()"; }
Tensor CosineEmbeddingLossImpl::forward(const Tensor& a, const Tensor& c, const Tensor& t) {
  return F::cosine_embedding_loss(a, c, t, options);
}

void CosineSimilarityImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::CosineSimilarity(dim=" << options.dim() << ", eps=" << options.eps() << ")";
}
Tensor CosineSimilarityImpl::forward(const Tensor& a, const Tensor& c) { return F::cosine_similarity(a, c, options); }
void PairwiseDistanceImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::PairwiseDistance(p=" << options.p() << ", eps=" << options.eps()
    << ", keepdim=" << b(options.keepdim()) << ")";
}
Tensor PairwiseDistanceImpl::forward(const Tensor& a, const Tensor& c) { return F::pairwise_distance(a, c, options); }

}  // namespace torch::nn
