// nn functional ops in C++ (ops/nn.h): losses, normalization, dropout, embedding. Bound as
// ember._C._nn_*; ember.nn.functional adds torch's Python-side argument handling.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include "common.h"
#include "ember/ops/nn_rnn.h"

namespace ember::py {
namespace {
Tensor opt_tensor(nb::handle h) { return h.is_none() ? Tensor() : nb::cast<Tensor>(h); }
}  // namespace

void bind_nn_norm(nb::module_& m) {
  using nb::arg;
  // Recurrent cells (ops/nn_rnn.cpp).
  m.def("_nn_lstm_cell_fused", &lstm_cell_fused, arg("gates"), arg("cx"));
  m.def(
      "_nn_lstm_layer",
      [](const Tensor& gi, const std::vector<int64_t>& batch_sizes, const Tensor& h0, const Tensor& c0,
         const Tensor& w_hh, bool reverse,
         bool gates_scratch) { return lstm_layer(gi, batch_sizes, h0, c0, w_hh, reverse, gates_scratch); },
      arg("gates"), arg("batch_sizes"), arg("h0"), arg("c0"), arg("w_hh"), arg("reverse"),
      arg("gates_scratch") = false);
  m.def(
      "_nn_lstm_layer_pair",
      [](const Tensor& gi_fwd, const Tensor& gi_bwd, const std::vector<int64_t>& batch_sizes, const Tensor& h0_fwd,
         const Tensor& c0_fwd, const Tensor& w_fwd, const Tensor& h0_bwd, const Tensor& c0_bwd, const Tensor& w_bwd,
         bool gates_scratch) {
        auto r =
            lstm_layer_pair(gi_fwd, gi_bwd, batch_sizes, h0_fwd, c0_fwd, w_fwd, h0_bwd, c0_bwd, w_bwd, gates_scratch);
        return std::make_pair(r[0], r[1]);
      },
      arg("gates_fwd"), arg("gates_bwd"), arg("batch_sizes"), arg("h0_fwd"), arg("c0_fwd"), arg("w_hh_fwd"),
      arg("h0_bwd"), arg("c0_bwd"), arg("w_hh_bwd"), arg("gates_scratch") = false);
  m.def(
      "_nn_gru_layer",
      [](const Tensor& gi, const std::vector<int64_t>& batch_sizes, const Tensor& h0, const Tensor& w_hh,
         nb::handle b_hh, bool reverse) { return gru_layer(gi, batch_sizes, h0, w_hh, opt_tensor(b_hh), reverse); },
      arg("gates"), arg("batch_sizes"), arg("h0"), arg("w_hh"), arg("b_hh").none(), arg("reverse"));
  m.def("_nn_gru_cell_fused", &gru_cell_fused, arg("input_gates"), arg("hidden_gates"), arg("hx"));
  m.def(
      "lstm_cell",
      [](const Tensor& input, nb::handle hx, const Tensor& w_ih, const Tensor& w_hh, nb::handle b_ih, nb::handle b_hh) {
        auto states = nb::cast<std::vector<Tensor>>(hx);
        if (states.size() != 2) throw nb::value_error("lstm_cell: expected hx to be a sequence of two tensors (h, c)");
        return lstm_cell(input, states[0], states[1], w_ih, w_hh, opt_tensor(b_ih), opt_tensor(b_hh));
      },
      arg("input"), arg("hx"), arg("w_ih"), arg("w_hh"), arg("b_ih") = nb::none(), arg("b_hh") = nb::none());
  auto cell = [&m](const char* name, Tensor (*fn)(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                                  const Tensor&, const Tensor&)) {
    m.def(
        name,
        [fn](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, nb::handle b_ih,
             nb::handle b_hh) { return fn(input, hx, w_ih, w_hh, opt_tensor(b_ih), opt_tensor(b_hh)); },
        arg("input"), arg("hx"), arg("w_ih"), arg("w_hh"), arg("b_ih") = nb::none(), arg("b_hh") = nb::none());
  };
  cell("gru_cell", &gru_cell);
  cell("rnn_tanh_cell", &rnn_tanh_cell);
  cell("rnn_relu_cell", &rnn_relu_cell);
  m.def(
      "_nn_sdpa_fused",
      [](const Tensor& q, const Tensor& k, const Tensor& v, nb::handle mask, bool is_causal,
         std::optional<double> scale) {
        return scaled_dot_product_attention_fused(q, k, v, opt_tensor(mask), is_causal, scale);
      },
      arg("query"), arg("key"), arg("value"), arg("attn_mask") = nb::none(), arg("is_causal") = false,
      arg("scale") = nb::none());
  m.def(
      "_nn_cross_entropy",
      [](const Tensor& input, const Tensor& target, nb::handle weight, const std::string& reduction,
         int64_t ignore_index, double label_smoothing) {
        return cross_entropy(input, target, opt_tensor(weight), reduction_from_string(reduction), ignore_index,
                             label_smoothing);
      },
      arg("input"), arg("target"), arg("weight") = nb::none(), arg("reduction") = "mean", arg("ignore_index") = -100,
      arg("label_smoothing") = 0.0);
  m.def(
      "_nn_smooth_l1_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction, double beta) {
        return smooth_l1_loss(input, target, reduction_from_string(reduction), beta);
      },
      arg("input"), arg("target"), arg("reduction") = "mean", arg("beta") = 1.0);
  m.def(
      "_nn_huber_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction, double delta) {
        return huber_loss(input, target, reduction_from_string(reduction), delta);
      },
      arg("input"), arg("target"), arg("reduction") = "mean", arg("delta") = 1.0);
  m.def(
      "_nn_nll_loss",
      [](const Tensor& input, const Tensor& target, nb::handle weight, const std::string& reduction,
         int64_t ignore_index) {
        return nll_loss(input, target, opt_tensor(weight), reduction_from_string(reduction), ignore_index);
      },
      arg("input"), arg("target"), arg("weight") = nb::none(), arg("reduction") = "mean", arg("ignore_index") = -100);
  m.def(
      "_nn_batch_norm",
      [](const Tensor& input, nb::handle rm, nb::handle rv, nb::handle w, nb::handle b, bool training, double momentum,
         double eps) {
        return batch_norm(input, opt_tensor(rm), opt_tensor(rv), opt_tensor(w), opt_tensor(b), training, momentum, eps);
      },
      arg("input"), arg("running_mean").none(), arg("running_var").none(), arg("weight") = nb::none(),
      arg("bias") = nb::none(), arg("training") = false, arg("momentum") = 0.1, arg("eps") = 1e-5);
  m.def(
      "_nn_layer_norm",
      [](const Tensor& input, nb::handle shape, nb::handle w, nb::handle b, double eps) {
        return layer_norm(input, int_or_ints(shape, "layer_norm"), opt_tensor(w), opt_tensor(b), eps);
      },
      arg("input"), arg("normalized_shape"), arg("weight") = nb::none(), arg("bias") = nb::none(), arg("eps") = 1e-5);
  m.def(
      "_nn_group_norm",
      [](const Tensor& input, int64_t groups, nb::handle w, nb::handle b, double eps) {
        return group_norm(input, groups, opt_tensor(w), opt_tensor(b), eps);
      },
      arg("input"), arg("num_groups"), arg("weight") = nb::none(), arg("bias") = nb::none(), arg("eps") = 1e-5);
  m.def(
      "_nn_instance_norm",
      [](const Tensor& input, nb::handle rm, nb::handle rv, nb::handle w, nb::handle b, bool use_input_stats,
         double momentum, double eps) {
        return instance_norm(input, opt_tensor(rm), opt_tensor(rv), opt_tensor(w), opt_tensor(b), use_input_stats,
                             momentum, eps);
      },
      arg("input"), arg("running_mean") = nb::none(), arg("running_var") = nb::none(), arg("weight") = nb::none(),
      arg("bias") = nb::none(), arg("use_input_stats") = true, arg("momentum") = 0.1, arg("eps") = 1e-5);
  m.def(
      "_nn_rms_norm",
      [](const Tensor& input, nb::handle shape, nb::handle w, std::optional<double> eps) {
        return rms_norm(input, int_or_ints(shape, "rms_norm"), opt_tensor(w), eps);
      },
      arg("input"), arg("normalized_shape"), arg("weight") = nb::none(), arg("eps") = nb::none());
  using DropFn = Tensor (*)(const Tensor&, double, bool, bool, Generator*);
  auto def_drop = [&](const char* name, DropFn f) {
    m.def(
        name,
        [f](const Tensor& input, double p, bool train, bool inplace) { return f(input, p, train, inplace, nullptr); },
        arg("input"), arg("p") = 0.5, arg("train") = true, arg("inplace") = false);
  };
  def_drop("_nn_dropout", &dropout);
  def_drop("_nn_feature_dropout", &feature_dropout);
  def_drop("_nn_alpha_dropout", &alpha_dropout);
  def_drop("_nn_feature_alpha_dropout", &feature_alpha_dropout);
  m.def(
      "_nn_embedding",
      [](const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq) {
        return embedding(weight, indices, padding_idx, scale_grad_by_freq);
      },
      arg("weight"), arg("indices"), arg("padding_idx") = -1, arg("scale_grad_by_freq") = false);
  m.def(
      "_nn_embedding_renorm_",
      [](Tensor weight, const Tensor& indices, double max_norm, double norm_type) {
        return embedding_renorm_(weight, indices, max_norm, norm_type);
      },
      arg("weight"), arg("indices"), arg("max_norm"), arg("norm_type"));
  m.def(
      "_nn_embedding_bag",
      [](const Tensor& weight, const Tensor& indices, nb::handle offsets, int64_t mode, nb::handle psw,
         bool include_last_offset, int64_t padding_idx) {
        return embedding_bag(weight, indices, opt_tensor(offsets), static_cast<EmbeddingBagMode>(mode), opt_tensor(psw),
                             include_last_offset, padding_idx);
      },
      arg("weight"), arg("indices"), arg("offsets") = nb::none(), arg("mode") = 1,
      arg("per_sample_weights") = nb::none(), arg("include_last_offset") = false, arg("padding_idx") = -1);
}

}  // namespace ember::py
