// Neural-network functional ops: losses, normalization, embedding and dropout (torch.nn.functional).
// Each op checks its arguments with torch's error classes, computes through a per-device kernel
// entry (ops/nn_kernels.h) and records a backward formula written with ember ops, so the C++ API
// and a C++ module library use them without Python.
#pragma once
#include <optional>
#include <string>

#include "ember/core/tensor.h"
#include "ember/ops/random.h"

namespace ember {

// torch's reduction modes (at::Reduction's numbering).
enum class Reduction : int { None = 0, Mean = 1, Sum = 2 };
// "none" / "mean" / "sum"; anything else is torch's ValueError "X is not a valid value for reduction".
Reduction reduction_from_string(const std::string& s);
// Applies a reduction to an elementwise loss.
Tensor apply_reduction(const Tensor& loss, Reduction r);

// ---- losses (ops/nn_loss.cpp) ----
// input (C), (N, C) or (N, C, d1, ...) of log-probabilities; target (), (N) or (N, d1, ...) class
// indices (int64 or uint8). An undefined weight means all ones.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
// One fused log_softmax + nll pass over dim 1 for class-index targets; a floating target shaped
// like the input holds class probabilities (then ignore_index does not apply).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     Reduction reduction = Reduction::Mean, int64_t ignore_index = -100, double label_smoothing = 0.0);

// ---- normalization (ops/nn_norm.cpp) ----
// input (N, C, *). In training the batch statistics normalize and, when given, running_mean/var
// are updated in place: r = (1 - momentum) r + momentum * stat (the variance unbiased).
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
// Normalizes over the trailing dims `normalized_shape`.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = Tensor(), const Tensor& running_var = Tensor(),
                     const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);
// eps unset: the machine epsilon of the input's dtype (torch's default).
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt);

// ---- dropout (ops/nn_dropout.cpp): identity unless train; p outside [0, 1] is a ValueError ----
// `inplace` writes the result into input (through the in-place ops, so autograd sees it).
Tensor dropout(const Tensor& input, double p = 0.5, bool train = true, bool inplace = false, Generator* gen = nullptr);
// One mask value per (N, C) feature map (dropout1d/2d/3d on batched input).
Tensor feature_dropout(const Tensor& input, double p = 0.5, bool train = true, bool inplace = false,
                       Generator* gen = nullptr);
// SELU-preserving dropout: dropped values become -alpha * scale, then an affine map keeps mean/variance.
Tensor alpha_dropout(const Tensor& input, double p = 0.5, bool train = true, bool inplace = false,
                     Generator* gen = nullptr);
Tensor feature_alpha_dropout(const Tensor& input, double p = 0.5, bool train = true, bool inplace = false,
                             Generator* gen = nullptr);

// ---- embedding (ops/nn_embedding.cpp) ----
// weight (num_embeddings, D) rows gathered by int32/int64 indices. padding_idx < 0 means none
// (callers wrap negative Python values first); its row gets no gradient.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false);
// Rescales in place (without recording) the rows of weight that `indices` reference whose
// norm_type-norm exceeds max_norm, to norm max_norm.
Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type);
enum class EmbeddingBagMode : int { Sum = 0, Mean = 1, Max = 2 };
// indices 1-d with offsets (bag starts), or 2-d (B, L) with offsets undefined.
Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                     EmbeddingBagMode mode = EmbeddingBagMode::Mean, const Tensor& per_sample_weights = Tensor(),
                     bool include_last_offset = false, int64_t padding_idx = -1);

}  // namespace ember
