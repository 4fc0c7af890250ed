// The torch::nn layers: XImpl holds the options, parameters and forward(); X (TORCH_MODULE) is
// its holder. Parameter names, shapes, initialization and printed form follow libtorch.
#pragma once
#include <tuple>

#include "ember/frontend/nn_functional.h"
#include "ember/frontend/nn_module.h"

namespace torch::nn {

// ---- linear ----
class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  explicit IdentityImpl(const IdentityOptions& = {}) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input) { return input; }
};
TORCH_MODULE(Identity);

class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  LinearOptions options;
  Tensor weight, bias;
};
TORCH_MODULE(Linear);

class BilinearImpl : public Cloneable<BilinearImpl> {
 public:
  BilinearImpl(int64_t in1, int64_t in2, int64_t out) : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  explicit BilinearImpl(const BilinearOptions& options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input1, const Tensor& input2);
  BilinearOptions options;
  Tensor weight, bias;
};
TORCH_MODULE(Bilinear);

class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  FlattenOptions options;
};
TORCH_MODULE(Flatten);

class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(UnflattenOptions options) : options(std::move(options)) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  UnflattenOptions options;
};
TORCH_MODULE(Unflatten);

// ---- convolution ----
template <size_t D, typename Derived>
class ConvNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvNdImpl(ConvOptions<D> options) : options(std::move(options)) {}
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  ConvOptions<D> options;
  Tensor weight, bias;
};
template <size_t D, typename Derived>
class ConvTransposeNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvTransposeNdImpl(ConvTransposeOptions<D> options) : options(std::move(options)) {}
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, const std::optional<at::IntArrayRef>& output_size = std::nullopt);
  ConvTransposeOptions<D> options;
  Tensor weight, bias;
};
#define EMBER_FE_CONV_MODULE(Name, Base, Options, D)                                                     \
  class Name##Impl : public Base<D, Name##Impl> {                                                        \
   public:                                                                                               \
    Name##Impl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)                 \
        : Name##Impl(Options<D>(in_channels, out_channels, kernel_size)) {}                              \
    explicit Name##Impl(Options<D> options) : Base<D, Name##Impl>(std::move(options)) { this->reset(); } \
  };                                                                                                     \
  TORCH_MODULE(Name);
EMBER_FE_CONV_MODULE(Conv1d, ConvNdImpl, ConvOptions, 1)
EMBER_FE_CONV_MODULE(Conv2d, ConvNdImpl, ConvOptions, 2)
EMBER_FE_CONV_MODULE(Conv3d, ConvNdImpl, ConvOptions, 3)
EMBER_FE_CONV_MODULE(ConvTranspose1d, ConvTransposeNdImpl, ConvTransposeOptions, 1)
EMBER_FE_CONV_MODULE(ConvTranspose2d, ConvTransposeNdImpl, ConvTransposeOptions, 2)
EMBER_FE_CONV_MODULE(ConvTranspose3d, ConvTransposeNdImpl, ConvTransposeOptions, 3)
#undef EMBER_FE_CONV_MODULE

// ---- normalization ----
template <size_t D, typename Derived, typename Options>
class NormImplBase : public Cloneable<Derived> {
 public:
  explicit NormImplBase(const Options& options) : options(options) { NormImplBase::reset(); }
  void reset() override;
  void reset_running_stats();
  void reset_parameters();
  Options options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};

template <size_t D, typename Derived>
class BatchNormImplBase : public NormImplBase<D, Derived, BatchNormOptions> {
 public:
  using NormImplBase<D, Derived, BatchNormOptions>::NormImplBase;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
class BatchNorm1dImpl : public BatchNormImplBase<1, BatchNorm1dImpl> {
 public:
  using BatchNormImplBase<1, BatchNorm1dImpl>::BatchNormImplBase;
};
class BatchNorm2dImpl : public BatchNormImplBase<2, BatchNorm2dImpl> {
 public:
  using BatchNormImplBase<2, BatchNorm2dImpl>::BatchNormImplBase;
};
class BatchNorm3dImpl : public BatchNormImplBase<3, BatchNorm3dImpl> {
 public:
  using BatchNormImplBase<3, BatchNorm3dImpl>::BatchNormImplBase;
};
TORCH_MODULE(BatchNorm1d);
TORCH_MODULE(BatchNorm2d);
TORCH_MODULE(BatchNorm3d);

template <size_t D, typename Derived>
class InstanceNormImpl : public NormImplBase<D, Derived, InstanceNormOptions> {
 public:
  using NormImplBase<D, Derived, InstanceNormOptions>::NormImplBase;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
class InstanceNorm1dImpl : public InstanceNormImpl<1, InstanceNorm1dImpl> {
 public:
  using InstanceNormImpl<1, InstanceNorm1dImpl>::InstanceNormImpl;
};
class InstanceNorm2dImpl : public InstanceNormImpl<2, InstanceNorm2dImpl> {
 public:
  using InstanceNormImpl<2, InstanceNorm2dImpl>::InstanceNormImpl;
};
class InstanceNorm3dImpl : public InstanceNormImpl<3, InstanceNorm3dImpl> {
 public:
  using InstanceNormImpl<3, InstanceNorm3dImpl>::InstanceNormImpl;
};
TORCH_MODULE(InstanceNorm1d);
TORCH_MODULE(InstanceNorm2d);
TORCH_MODULE(InstanceNorm3d);

class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  LayerNormImpl(std::vector<int64_t> normalized_shape) : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(LayerNormOptions options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  LayerNormOptions options;
  Tensor weight, bias;
};
TORCH_MODULE(LayerNorm);

class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  GroupNormOptions options;
  Tensor weight, bias;
};
TORCH_MODULE(GroupNorm);

// ---- dropout ----
#define EMBER_FE_DROPOUT(Name, fn)                                   \
  class Name##Impl : public Cloneable<Name##Impl> {                  \
   public:                                                           \
    explicit Name##Impl(double p) : Name##Impl(DropoutOptions(p)) {} \
    explicit Name##Impl(const DropoutOptions& options = {});         \
    void reset() override;                                           \
    void pretty_print(std::ostream& stream) const override;          \
    Tensor forward(Tensor input);                                    \
    DropoutOptions options;                                          \
  };                                                                 \
  TORCH_MODULE(Name);
EMBER_FE_DROPOUT(Dropout, dropout)
EMBER_FE_DROPOUT(Dropout1d, dropout1d)
EMBER_FE_DROPOUT(Dropout2d, dropout2d)
EMBER_FE_DROPOUT(Dropout3d, dropout3d)
EMBER_FE_DROPOUT(AlphaDropout, alpha_dropout)
EMBER_FE_DROPOUT(FeatureAlphaDropout, feature_alpha_dropout)
#undef EMBER_FE_DROPOUT

// ---- embedding ----
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(EmbeddingOptions options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& indices);
  EmbeddingOptions options;
  Tensor weight;
};
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  using Impl = EmbeddingImpl;
  // An Embedding holding `embeddings` (rows = entries), frozen unless options say otherwise.
  static Embedding from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options = {});
};

// ---- pooling ----
#define EMBER_FE_POOL_MODULE(Name, Options)                                                       \
  class Name##Impl : public Cloneable<Name##Impl> {                                               \
   public:                                                                                        \
    explicit Name##Impl(const Options& options) : options(options) {}                             \
    template <typename A, typename = std::enable_if_t<std::is_constructible_v<Options, A> &&      \
                                                      !std::is_same_v<std::decay_t<A>, Options>>> \
    explicit Name##Impl(A&& a) : options(Options(std::forward<A>(a))) {}                          \
    void reset() override {}                                                                      \
    void pretty_print(std::ostream& stream) const override;                                       \
    Tensor forward(const Tensor& input);                                                          \
    Options options;                                                                              \
  };                                                                                              \
  TORCH_MODULE(Name);
EMBER_FE_POOL_MODULE(MaxPool1d, MaxPool1dOptions)
EMBER_FE_POOL_MODULE(MaxPool2d, MaxPool2dOptions)
EMBER_FE_POOL_MODULE(MaxPool3d, MaxPool3dOptions)
EMBER_FE_POOL_MODULE(AvgPool1d, AvgPool1dOptions)
EMBER_FE_POOL_MODULE(AvgPool2d, AvgPool2dOptions)
EMBER_FE_POOL_MODULE(AvgPool3d, AvgPool3dOptions)
EMBER_FE_POOL_MODULE(AdaptiveAvgPool1d, AdaptiveAvgPool1dOptions)
EMBER_FE_POOL_MODULE(AdaptiveAvgPool2d, AdaptiveAvgPool2dOptions)
EMBER_FE_POOL_MODULE(AdaptiveAvgPool3d, AdaptiveAvgPool3dOptions)
EMBER_FE_POOL_MODULE(AdaptiveMaxPool1d, AdaptiveMaxPool1dOptions)
EMBER_FE_POOL_MODULE(AdaptiveMaxPool2d, AdaptiveMaxPool2dOptions)
EMBER_FE_POOL_MODULE(AdaptiveMaxPool3d, AdaptiveMaxPool3dOptions)
EMBER_FE_POOL_MODULE(PixelShuffle, PixelShuffleOptions)
#undef EMBER_FE_POOL_MODULE

class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  UpsampleOptions options;
};
TORCH_MODULE(Upsample);

// ---- activations ----
// Modules without options: forward applies one function.
#define EMBER_FE_SIMPLE_ACTIVATION(Name)                    \
  class Name##Impl : public Cloneable<Name##Impl> {         \
   public:                                                  \
    Name##Impl() = default;                                 \
    void reset() override {}                                \
    void pretty_print(std::ostream& stream) const override; \
    Tensor forward(const Tensor& input);                    \
  };                                                        \
  TORCH_MODULE(Name);
EMBER_FE_SIMPLE_ACTIVATION(Sigmoid)
EMBER_FE_SIMPLE_ACTIVATION(Tanh)
EMBER_FE_SIMPLE_ACTIVATION(SiLU)
EMBER_FE_SIMPLE_ACTIVATION(Mish)
EMBER_FE_SIMPLE_ACTIVATION(LogSigmoid)
EMBER_FE_SIMPLE_ACTIVATION(Softsign)
EMBER_FE_SIMPLE_ACTIVATION(Tanhshrink)
EMBER_FE_SIMPLE_ACTIVATION(Hardsigmoid)
EMBER_FE_SIMPLE_ACTIVATION(Hardswish)
#undef EMBER_FE_SIMPLE_ACTIVATION

#define EMBER_FE_OPTIONS_ACTIVATION(Name, Options, Arg)                              \
  class Name##Impl : public Cloneable<Name##Impl> {                                  \
   public:                                                                           \
    explicit Name##Impl(const Options& options = Options(Arg)) : options(options) {} \
    void reset() override;                                                           \
    void pretty_print(std::ostream& stream) const override;                          \
    Tensor forward(Tensor input);                                                    \
    Options options;                                                                 \
  };                                                                                 \
  TORCH_MODULE(Name);
EMBER_FE_OPTIONS_ACTIVATION(ReLU, ReLUOptions, )
EMBER_FE_OPTIONS_ACTIVATION(ReLU6, ReLU6Options, )
EMBER_FE_OPTIONS_ACTIVATION(SELU, SELUOptions, )
EMBER_FE_OPTIONS_ACTIVATION(LeakyReLU, LeakyReLUOptions, )
EMBER_FE_OPTIONS_ACTIVATION(ELU, ELUOptions, )
EMBER_FE_OPTIONS_ACTIVATION(CELU, CELUOptions, )
EMBER_FE_OPTIONS_ACTIVATION(GELU, GELUOptions, )
EMBER_FE_OPTIONS_ACTIVATION(Softplus, SoftplusOptions, )
EMBER_FE_OPTIONS_ACTIVATION(Hardtanh, HardtanhOptions, )
EMBER_FE_OPTIONS_ACTIVATION(GLU, GLUOptions, )
EMBER_FE_OPTIONS_ACTIVATION(Hardshrink, HardshrinkOptions, )
EMBER_FE_OPTIONS_ACTIVATION(Softshrink, SoftshrinkOptions, )
#undef EMBER_FE_OPTIONS_ACTIVATION

#define EMBER_FE_DIM_ACTIVATION(Name)                                       \
  class Name##Impl : public Cloneable<Name##Impl> {                         \
   public:                                                                  \
    explicit Name##Impl(int64_t dim) : options(dim) {}                      \
    explicit Name##Impl(const Name##Options& options) : options(options) {} \
    void reset() override {}                                                \
    void pretty_print(std::ostream& stream) const override;                 \
    Tensor forward(const Tensor& input);                                    \
    Name##Options options;                                                  \
  };                                                                        \
  TORCH_MODULE(Name);
EMBER_FE_DIM_ACTIVATION(Softmax)
EMBER_FE_DIM_ACTIVATION(LogSoftmax)
EMBER_FE_DIM_ACTIVATION(Softmin)
#undef EMBER_FE_DIM_ACTIVATION

class ThresholdImpl : public Cloneable<ThresholdImpl> {
 public:
  ThresholdImpl(double threshold, double value) : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& options) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  ThresholdOptions options;
};
TORCH_MODULE(Threshold);

class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  PReLUOptions options;
  Tensor weight;
};
TORCH_MODULE(PReLU);

// ---- losses ----
#define EMBER_FE_LOSS(Name, Options)                           \
  class Name##Impl : public Cloneable<Name##Impl> {            \
   public:                                                     \
    explicit Name##Impl(Options options = {});                 \
    void reset() override;                                     \
    void pretty_print(std::ostream& stream) const override;    \
    Tensor forward(const Tensor& input, const Tensor& target); \
    Options options;                                           \
  };                                                           \
  TORCH_MODULE(Name);
EMBER_FE_LOSS(MSELoss, MSELossOptions)
EMBER_FE_LOSS(L1Loss, L1LossOptions)
EMBER_FE_LOSS(CrossEntropyLoss, CrossEntropyLossOptions)
EMBER_FE_LOSS(NLLLoss, NLLLossOptions)
EMBER_FE_LOSS(BCELoss, BCELossOptions)
EMBER_FE_LOSS(BCEWithLogitsLoss, BCEWithLogitsLossOptions)
EMBER_FE_LOSS(SmoothL1Loss, SmoothL1LossOptions)
EMBER_FE_LOSS(HuberLoss, HuberLossOptions)
EMBER_FE_LOSS(KLDivLoss, KLDivLossOptions)
EMBER_FE_LOSS(SoftMarginLoss, SoftMarginLossOptions)
EMBER_FE_LOSS(HingeEmbeddingLoss, HingeEmbeddingLossOptions)
EMBER_FE_LOSS(PoissonNLLLoss, PoissonNLLLossOptions)
#undef EMBER_FE_LOSS
#define EMBER_FE_LOSS3(Name, Options)                                                 \
  class Name##Impl : public Cloneable<Name##Impl> {                                   \
   public:                                                                            \
    explicit Name##Impl(Options options = {}) : options(options) {}                   \
    void reset() override {}                                                          \
    void pretty_print(std::ostream& stream) const override;                           \
    Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target); \
    Options options;                                                                  \
  };                                                                                  \
  TORCH_MODULE(Name);
EMBER_FE_LOSS3(MarginRankingLoss, MarginRankingLossOptions)
EMBER_FE_LOSS3(CosineEmbeddingLoss, CosineEmbeddingLossOptions)
#undef EMBER_FE_LOSS3

class CosineSimilarityImpl : public Cloneable<CosineSimilarityImpl> {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input1, const Tensor& input2);
  CosineSimilarityOptions options;
};
TORCH_MODULE(CosineSimilarity);
class PairwiseDistanceImpl : public Cloneable<PairwiseDistanceImpl> {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input1, const Tensor& input2);
  PairwiseDistanceOptions options;
};
TORCH_MODULE(PairwiseDistance);

// ---- recurrent layers: full sequences, stacked and optionally bidirectional ----
// Parameters weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} (and
// weight_hr_l{k} with proj_size), in torch's gate order; uniform in +-1/sqrt(hidden_size).
class RNNImplBase {
 public:
  virtual ~RNNImplBase() = default;
  std::vector<Tensor> all_weights() const { return flat_weights_; }
  void flatten_parameters() {}

 protected:
  struct Config {
    int64_t mode_gates, input_size, hidden_size, num_layers, proj_size;
    bool bias, batch_first, bidirectional;
    double dropout;
  };
  // Registers and initializes the parameters of every layer and direction.
  void init_weights(Module& self, const Config& c);
  std::vector<Tensor> flat_weights_;
};

class RNNImpl : public Cloneable<RNNImpl>, public RNNImplBase {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  RNNOptions options;
};
TORCH_MODULE(RNN);

class LSTMImpl : public Cloneable<LSTMImpl>, public RNNImplBase {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  LSTMOptions options;
};
TORCH_MODULE(LSTM);

class GRUImpl : public Cloneable<GRUImpl>, public RNNImplBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  GRUOptions options;
};
TORCH_MODULE(GRU);

class RNNCellImpl : public Cloneable<RNNCellImpl> {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, Tensor hx = {});
  RNNCellOptions options;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};
TORCH_MODULE(RNNCell);

class LSTMCellImpl : public Cloneable<LSTMCellImpl> {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  LSTMCellOptions options;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};
TORCH_MODULE(LSTMCell);

class GRUCellImpl : public Cloneable<GRUCellImpl> {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, Tensor hx = {});
  GRUCellOptions options;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};
TORCH_MODULE(GRUCell);

// ---- attention ----
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  // query (L, N, E), key/value (S, N, E) or unbatched (L, E)/(S, E); returns the output and, with
  // need_weights, the attention weights (averaged over heads unless average_attn_weights is false).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true);
  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v, q_proj_weight, k_proj_weight, v_proj_weight;
  Linear out_proj{nullptr};
  int64_t head_dim;
};
TORCH_MODULE(MultiheadAttention);

}  // namespace torch::nn
