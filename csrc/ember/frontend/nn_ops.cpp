// at:: neural-network ops (torch::conv2d, torch::max_pool2d, torch::nll_loss, ...): the ember
// ops of ops/nn.h, and the losses ember.nn.functional composes in Python composed the same way.
#include <cmath>

#include "ember/frontend/functions.h"
#include "ember/ops/nn.h"
#include "ember/ops/nn_linear.h"
#include "ember/ops/nn_pad.h"
#include "ember/ops/operators.h"

namespace at {

namespace {
ember::Tensor opt(const std::optional<Tensor>& t) { return t ? ember::Tensor(*t) : ember::Tensor(); }
ember::Reduction reduction_of(int64_t r) {
  EMBER_CHECK(r >= 0 && r < Reduction::END, "invalid reduction code ", r);
  return static_cast<ember::Reduction>(r);
}
Tensor reduce(const Tensor& loss, int64_t r) { return ember::apply_reduction(loss, reduction_of(r)); }
std::tuple<Tensor, Tensor> pair(const std::tuple<ember::Tensor, ember::Tensor>& p) {
  return {std::get<0>(p), std::get<1>(p)};
}
}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  std::optional<ember::Tensor> b;
  if (bias && bias->defined()) b = *bias;
  return ember::linear(input, weight, b);
}
Tensor bilinear(const Tensor& i1, const Tensor& i2, const Tensor& weight, const std::optional<Tensor>& bias) {
  std::optional<ember::Tensor> b;
  if (bias && bias->defined()) b = *bias;
  return ember::bilinear(i1, i2, weight, b);
}

#define EMBER_FE_CONV(nd)                                                                                              \
  Tensor conv##nd##d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride, \
                     IntArrayRef padding, IntArrayRef dilation, int64_t groups) {                                      \
    return ember::conv##nd##d(input, weight, opt(bias), to_ember(stride), to_ember(padding), to_ember(dilation),       \
                              groups);                                                                                 \
  }                                                                                                                    \
  Tensor conv##nd##d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride, \
                     std::string_view padding, IntArrayRef dilation, int64_t groups) {                                 \
    return ember::conv##nd##d(input, weight, opt(bias), to_ember(stride), padding, to_ember(dilation), groups);        \
  }                                                                                                                    \
  Tensor conv_transpose##nd##d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,           \
                               IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,    \
                               IntArrayRef dilation) {                                                                 \
    return ember::conv_transpose##nd##d(input, weight, opt(bias), to_ember(stride), to_ember(padding),                 \
                                        to_ember(output_padding), groups, to_ember(dilation));                         \
  }
EMBER_FE_CONV(1)
EMBER_FE_CONV(2)
EMBER_FE_CONV(3)
#undef EMBER_FE_CONV
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  return ember::convolution(input, weight, opt(bias), to_ember(stride), to_ember(padding), to_ember(dilation),
                            transposed, to_ember(output_padding), groups);
}

#define EMBER_FE_POOL(nd)                                                                                            \
  std::tuple<Tensor, Tensor> max_pool##nd##d_with_indices(const Tensor& x, IntArrayRef k, IntArrayRef s,             \
                                                          IntArrayRef p, IntArrayRef d, bool ceil_mode) {            \
    return pair(ember::max_pool_with_indices(x, nd, to_ember(k), to_ember(s), to_ember(p), to_ember(d), ceil_mode)); \
  }                                                                                                                  \
  Tensor max_pool##nd##d(const Tensor& x, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d,                \
                         bool ceil_mode) {                                                                           \
    return std::get<0>(max_pool##nd##d_with_indices(x, k, s, p, d, ceil_mode));                                      \
  }                                                                                                                  \
  Tensor adaptive_avg_pool##nd##d(const Tensor& x, IntArrayRef out) {                                                \
    return ember::adaptive_avg_pool(x, nd, to_ember(out));                                                           \
  }                                                                                                                  \
  std::tuple<Tensor, Tensor> adaptive_max_pool##nd##d(const Tensor& x, IntArrayRef out) {                            \
    return pair(ember::adaptive_max_pool(x, nd, to_ember(out)));                                                     \
  }
EMBER_FE_POOL(1)
EMBER_FE_POOL(2)
EMBER_FE_POOL(3)
#undef EMBER_FE_POOL
Tensor avg_pool1d(const Tensor& x, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil_mode, bool cip) {
  return ember::avg_pool(x, 1, to_ember(k), to_ember(s), to_ember(p), ceil_mode, cip);
}
Tensor avg_pool2d(const Tensor& x, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil_mode, bool cip,
                  std::optional<int64_t> div) {
  return ember::avg_pool(x, 2, to_ember(k), to_ember(s), to_ember(p), ceil_mode, cip, div);
}
Tensor avg_pool3d(const Tensor& x, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil_mode, bool cip,
                  std::optional<int64_t> div) {
  return ember::avg_pool(x, 3, to_ember(k), to_ember(s), to_ember(p), ceil_mode, cip, div);
}

Tensor dropout(const Tensor& x, double p, bool train) { return ember::dropout(x, p, train); }
Tensor& dropout_(Tensor& x, double p, bool train) {
  ember::dropout(x, p, train, /*inplace=*/true);
  return x;
}
Tensor feature_dropout(const Tensor& x, double p, bool train) { return ember::feature_dropout(x, p, train); }
Tensor& feature_dropout_(Tensor& x, double p, bool train) {
  ember::feature_dropout(x, p, train, /*inplace=*/true);
  return x;
}
Tensor alpha_dropout(const Tensor& x, double p, bool train) { return ember::alpha_dropout(x, p, train); }
Tensor feature_alpha_dropout(const Tensor& x, double p, bool train) {
  return ember::feature_alpha_dropout(x, p, train);
}

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool) {
  return ember::batch_norm(input, opt(running_mean), opt(running_var), opt(weight), opt(bias), training, momentum, eps);
}
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                     const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                     bool use_input_stats, double momentum, double eps, bool) {
  return ember::instance_norm(input, opt(running_mean), opt(running_var), opt(weight), opt(bias), use_input_stats,
                              momentum, eps);
}
Tensor layer_norm(const Tensor& input, IntArrayRef shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool) {
  return ember::layer_norm(input, to_ember(shape), opt(weight), opt(bias), eps);
}
Tensor group_norm(const Tensor& input, int64_t groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool) {
  return ember::group_norm(input, groups, opt(weight), opt(bias), eps);
}
Tensor rms_norm(const Tensor& input, IntArrayRef shape, const std::optional<Tensor>& weight,
                std::optional<double> eps) {
  return ember::rms_norm(input, to_ember(shape), opt(weight), eps);
}
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq, bool) {
  if (padding_idx < 0 && padding_idx != -1) padding_idx += weight.size(0);
  return ember::embedding(weight, indices, padding_idx, scale_grad_by_freq);
}

// ---- losses ----

Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                int64_t ignore_index) {
  return ember::nll_loss(self, target, opt(weight), reduction_of(reduction), ignore_index);
}
Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                  int64_t ignore_index) {
  return nll_loss(self, target, weight, reduction, ignore_index);
}
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                          int64_t reduction, int64_t ignore_index, double label_smoothing) {
  return ember::cross_entropy(self, target, opt(weight), reduction_of(reduction), ignore_index, label_smoothing);
}
Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  Tensor d = self - target;
  return reduce(d * d, reduction);
}
Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return reduce((self - target).abs(), reduction);
}
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  Tensor d = (self - target).abs();
  if (beta == 0) return reduce(d, reduction);
  return reduce(where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction);
}
Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  Tensor d = (self - target).abs();
  return reduce(where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction);
}
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  EMBER_CHECK_VALUE(self.sizes() == target.sizes(), "Using a target size (", target.sizes(),
                    ") that is different to the input size (", self.sizes(),
                    ") is deprecated. Please ensure they have the same size.");
  if (self.numel())
    EMBER_CHECK(!((self < 0) | (self > 1)).any().item<bool>(), "all elements of input should be between 0 and 1");
  // Each log clamped at -100, as torch does.
  Tensor loss =
      -(target * clamp(log(self), -100, std::nullopt) + (1 - target) * clamp(log(1 - self), -100, std::nullopt));
  if (weight && weight->defined()) loss = loss * *weight;
  return reduce(loss, reduction);
}
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  EMBER_CHECK_VALUE(self.sizes() == target.sizes(), "Target size (", target.sizes(),
                    ") must be the same as input size (", self.sizes(), ")");
  Tensor softplus_neg = log1p(exp(-self.abs())) + relu(-self);  // log(1 + exp(-x)), stably
  Tensor loss;
  if (pos_weight && pos_weight->defined())
    loss = (1 - target) * self + ((*pos_weight - 1) * target + 1) * softplus_neg;
  else
    loss = (1 - target) * self + softplus_neg;
  if (weight && weight->defined()) loss = loss * *weight;
  return reduce(loss, reduction);
}
Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  Tensor loss;
  if (log_target)
    loss = exp(target) * (target - self);
  else  // xlogy(t, t) - t * input: 0 where the target is 0
    loss = where(target > 0, target * log(target), zeros_like(target)) - target * self;
  return reduce(loss, reduction);
}
Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  Tensor z = -target * self;
  return reduce(log1p(exp(-z.abs())) + relu(z), reduction);
}
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin, int64_t reduction) {
  Tensor zero = zeros_like(self);
  Tensor out_margin = where(target != 1, clamp(margin - self, 0, std::nullopt), zero);
  Tensor out_self = where(target != -1, self, zero);
  return reduce(out_margin + out_self, reduction);
}
Tensor margin_ranking_loss(const Tensor& i1, const Tensor& i2, const Tensor& target, double margin, int64_t reduction) {
  EMBER_CHECK(i1.dim() == i2.dim() && i1.dim() == target.dim(),
              "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: ", i1.sizes(),
              ", input2: ", i2.sizes(), ", target: ", target.sizes(), " ");
  return reduce(clamp(-target * (i1 - i2) + margin, 0, std::nullopt), reduction);
}
Tensor cosine_embedding_loss(const Tensor& i1, const Tensor& i2, const Tensor& target, double margin,
                             int64_t reduction) {
  EMBER_CHECK(i1.dim() == i2.dim(),
              "cosine_embedding_loss : All input tensors should have same dimension but got sizes: input1: ",
              i1.sizes(), ", input2: ", i2.sizes(), ", target: ", target.sizes(), " ");
  int64_t d = i1.dim() - 1;
  const double eps = 1e-12;
  Tensor prod = (i1 * i2).sum(d);
  Tensor mag = ((i1 * i1).sum(d) + eps) * ((i2 * i2).sum(d) + eps);
  Tensor cos = prod / sqrt(mag);
  Tensor zero = zeros_like(cos);
  Tensor pos = where(target == 1, 1 - cos, zero);
  Tensor neg = where(target == -1, clamp(cos - margin, 0, std::nullopt), zero);
  return reduce(pos + neg, reduction);
}
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction) {
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    Tensor stirling = target * log(target) - target + 0.5 * log(2 * M_PI * target);
    loss = loss + where(target > 1, stirling, zeros_like(stirling));
  }
  return reduce(loss, reduction);
}
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  ScalarType common = ember::result_type(x1, x2);
  EMBER_CHECK(ember::is_floating_point(common) || ember::is_complex(common),
              "expected common dtype to be floating point, yet common dtype is ", c10::toString(common));
  auto b = broadcast_tensors({x1, x2});
  Tensor n1 = b[0].norm(2, {dim}, true).clamp_min(eps);
  Tensor n2 = b[1].norm(2, {dim}, true).clamp_min(eps);
  return ((b[0] / n1) * (b[1] / n2)).sum(dim);
}
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  return (x1 - x2 + eps).norm(p, {-1}, keepdim);
}

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const c10::Scalar& value) {
  return ember::constant_pad_nd(self, c10::to_ember(pad), value);
}
Tensor pixel_shuffle(const Tensor& x, int64_t r) {
  EMBER_CHECK(x.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ", x.dim(),
              " dimension(s)");
  EMBER_CHECK(r > 0, "pixel_shuffle expects a positive upscale_factor, but got ", r);
  int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  EMBER_CHECK(c % (r * r) == 0,
              "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
              "but input.size(-3)=",
              c, " is not divisible by ", r * r);
  std::vector<int64_t> batch(x.sizes().begin(), x.sizes().end() - 3);
  int64_t nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> s1 = batch;
  for (int64_t v : {c / (r * r), r, r, h, w}) s1.push_back(v);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t v : {0, 3, 1, 4, 2}) perm.push_back(nb + v);
  std::vector<int64_t> s2 = batch;
  for (int64_t v : {c / (r * r), h * r, w * r}) s2.push_back(v);
  return x.reshape(s1).permute(perm).reshape(s2);
}
Tensor upsample_nearest2d(const Tensor& x, IntArrayRef out) { return ember::upsample(x, "nearest", to_ember(out)); }
Tensor upsample_bilinear2d(const Tensor& x, IntArrayRef out, bool align_corners) {
  return ember::upsample(x, "bilinear", to_ember(out), {}, align_corners);
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  EMBER_CHECK(hx.size() == 2, "lstm_cell expects two hidden states (h, c)");
  return pair(ember::lstm_cell(input, hx[0], hx[1], w_ih, w_hh, opt(b_ih), opt(b_hh)));
}
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return ember::gru_cell(input, hx, w_ih, w_hh, opt(b_ih), opt(b_hh));
}
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return ember::rnn_tanh_cell(input, hx, w_ih, w_hh, opt(b_ih), opt(b_hh));
}
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return ember::rnn_relu_cell(input, hx, w_ih, w_hh, opt(b_ih), opt(b_hh));
}
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  EMBER_CHECK(!(is_causal && attn_mask && attn_mask->defined()),
              "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  bool fused = dropout_p == 0.0 && (q.scalar_type() == kFloat || q.scalar_type() == kDouble) &&
               q.scalar_type() == k.scalar_type() && q.scalar_type() == v.scalar_type();
  if (fused) return ember::scaled_dot_product_attention_fused(q, k, v, opt(attn_mask), is_causal, scale);
  // softmax(q k^T * scale + mask) v, with dropout on the weights (the composition Python uses).
  double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;
  int64_t L = q.size(-2), S = k.size(-2);
  if (is_causal) {
    Tensor keep = at::ones({L, S}, kBool).tril();
    scores = scores.masked_fill(keep.logical_not(), -INFINITY);
  }
  if (attn_mask && attn_mask->defined()) {
    if (attn_mask->scalar_type() == kBool)
      scores = scores.masked_fill(attn_mask->logical_not(), -INFINITY);
    else
      scores = scores + *attn_mask;
  }
  Tensor w = softmax(scores, -1);
  if (dropout_p > 0) w = dropout(w, dropout_p, true);
  return matmul(w, v);
}

}  // namespace at
