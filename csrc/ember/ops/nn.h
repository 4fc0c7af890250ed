// Neural-network functional ops (torch.nn.functional's C++ side): convolution, pooling.
// Each records its backward formula, written with ember ops, so double backward works.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/ops/random.h"

namespace ember {

// ---- convolution (ops/nn_conv.cpp; kernels in cpu/conv_kernels.cpp) ----
// torch.convolution: input (N, C, *) or unbatched (C, *), weight (C_out, C_in / groups, k...) or,
// transposed, (C_in, C_out / groups, k...); bias undefined for none. stride/padding/dilation/
// output_padding hold one value or one per spatial dim.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
// padding "same" (output as large as the input; stride 1 only) or "valid" (no padding).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});

}  // namespace ember

namespace ember {

// ---- pooling (ops/nn_pool.cpp; kernels in cpu/pool_kernels.cpp) ----
// nd = number of spatial dims (1-3); input (N, C, *) or unbatched (C, *). kernel_size, stride
// (empty: the kernel size), padding and dilation hold one value or nd values. Indices are flat
// positions within each (n, c) plane, as torch's.
std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& input, int64_t nd, IntArrayRef kernel_size,
                                                 IntArrayRef stride = {}, IntArrayRef padding = {0},
                                                 IntArrayRef dilation = {1}, bool ceil_mode = false);
Tensor avg_pool(const Tensor& input, int64_t nd, IntArrayRef kernel_size, IntArrayRef stride = {},
                IntArrayRef padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool(const Tensor& input, int64_t nd, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool(const Tensor& input, int64_t nd, IntArrayRef output_size);
// Scatters input into zeros of spatial size output_size (nd = its length) at indices.
Tensor max_unpool(const Tensor& input, const Tensor& indices, IntArrayRef output_size);
// F.unfold (sliding 2-d blocks to columns) and F.fold (its adjoint: columns summed into an image).
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride);
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);

// ---- padding (ops/nn_pad.cpp) ----
// F.pad's reflect/replicate/circular core: the last maps.size() dims of input gathered through
// maps[d][o] (the source position of output position o along padded dim d), in one pass; its
// backward (named node_name) adds each output gradient into its source.
Tensor pad_gather(const Tensor& input, const std::vector<std::vector<int64_t>>& maps, const std::string& node_name);

// ---- interpolation (ops/nn_upsample.cpp) ----
// F.interpolate's core: input (N, C, *spatial) resized to output_size (one per spatial dim) with
// mode nearest, nearest-exact, linear/bilinear/trilinear, bicubic or area. scales (empty, or one
// optional per dim) are the user's scale factors, which torch uses for the coordinate mapping.
// F.grid_sample of 4-d float32/float64 input (ops/nn_grid_sample.cpp, Note [Fused grid_sample]):
// bilinear (nearest: true for nearest), padding 0 zeros, 1 border, 2 reflection.
Tensor grid_sample_2d(const Tensor& input, const Tensor& grid, bool nearest, int padding, bool align_corners);
Tensor upsample(const Tensor& input, std::string_view mode, IntArrayRef output_size,
                const std::vector<std::optional<double>>& scales = {}, bool align_corners = false);

// Neural-network functional ops: losses, normalization, embedding and dropout (torch.nn.functional).
// Each op checks its arguments with torch's error classes, computes through a per-device kernel
// entry (ops/nn_kernels.h) and records a backward formula written with ember ops, so the C++ API
// and a C++ module library use them without Python.

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
// Note [Fused regression losses]: input and target of one shape and one floating dtype (the
// Python functions broadcast first); beta > 0 (beta 0 is l1_loss, as torch), delta > 0.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean, double delta = 1.0);

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

// ---- recurrent cells (ops/nn_rnn.cpp; kernels in cpu/rnn_kernels.cpp) ----
// The pointwise half of an LSTM cell: gates (B, 4H) = x W_ih^T + b_ih + h W_hh^T + b_hh in
// torch's (i, f, g, o) order, cx (B, H); returns (hy, cy).
std::tuple<Tensor, Tensor> lstm_cell_fused(const Tensor& gates, const Tensor& cx);
// The pointwise half of a GRU cell: gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh, both (B, 3H)
// in (r, z, n) order, hx (B, H); returns hy.
Tensor gru_cell_fused(const Tensor& gi, const Tensor& gh, const Tensor& hx);
// torch.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell: input (B, I), states (B, H);
// biases undefined for none.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());

// ---- attention (ops/nn_attention.cpp; kernels in cpu/attention_kernels.cpp) ----
// softmax(query key^T * scale + mask) value over the last two dims, fused (Note [Fused
// attention]): query (..., L, E), key (..., S, E), value (..., S, Ev), leading dims broadcast;
// attn_mask undefined, bool (true = may attend) or of the query's dtype (added), broadcast to
// (..., L, S), not requiring grad; is_causal: query i sees keys j <= i; scale defaults to
// 1/sqrt(E). Rows with nothing to attend give zeros. float32/float64, no dropout: the rest of
// nn.functional.scaled_dot_product_attention is a composition in Python.
Tensor scaled_dot_product_attention_fused(const Tensor& query, const Tensor& key, const Tensor& value,
                                          const Tensor& attn_mask = Tensor(), bool is_causal = false,
                                          std::optional<double> scale = std::nullopt);

}  // namespace ember
