// Recurrent layers and multi-head attention of torch::nn: the time loop over ember's recurrent
// cell ops (the fused LSTM/GRU pointwise kernels), and attention composed of GEMMs and softmax.
#include "ember/ops/nn.h"

#include <cmath>
#include <limits>

#include "ember/frontend/nn_init.h"
#include "ember/frontend/nn_modules.h"
#include "ember/ops/nn_rnn.h"

namespace torch::nn {

namespace F = torch::nn::functional;

namespace {
// Bools print as true/false and leave std::boolalpha set on the stream, as libtorch's modules do.
struct B {
  bool v;
};
B b(bool v) { return {v}; }
std::ostream& operator<<(std::ostream& s, B x) { return s << std::boolalpha << x.v; }
enum class Mode { RNN_TANH, RNN_RELU, LSTM, GRU };

struct LayerWeights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

// One direction of one layer over the whole sequence x (L, N, in); h0/c0 (N, H).
// Returns the outputs (L, N, H_out) and the final states.
std::tuple<Tensor, Tensor, Tensor> run_direction(Mode mode, const Tensor& x, Tensor h, Tensor c, const LayerWeights& w,
                                                 bool reverse) {
  int64_t L = x.size(0);
  const ScalarType dt = x.scalar_type();
  if (mode == Mode::LSTM && !w.w_hr.defined() && x.device().is_cpu() &&
      (dt == ScalarType::Float32 || dt == ScalarType::Float64)) {
    // One op over all steps (Note [Fused LSTM layer] in ops/nn_rnn.cpp); both biases folded into
    // the input projection.
    const int64_t N = x.size(1), H = w.w_hh.size(1);
    Tensor gi = at::linear(x, w.w_ih, w.b_ih.defined() ? w.b_ih + w.b_hh : Tensor()).reshape({L * N, 4 * H});
    auto [out, hn, cn] = ember::lstm_layer(gi, std::vector<int64_t>(static_cast<size_t>(L), N), h, c, w.w_hh, reverse,
                                           /*gi_scratch=*/true);
    return {Tensor(out).reshape({L, N, H}), Tensor(hn), Tensor(cn)};
  }
  if (mode == Mode::GRU && x.device().is_cpu() && (dt == ScalarType::Float32 || dt == ScalarType::Float64)) {
    const int64_t N = x.size(1), H = w.w_hh.size(1);  // b_hh stays inside the reset gate
    Tensor gi = at::linear(x, w.w_ih, w.b_ih).reshape({L * N, 3 * H});
    auto [out, hn] = ember::gru_layer(gi, std::vector<int64_t>(static_cast<size_t>(L), N), h, w.w_hh, w.b_hh, reverse);
    return {Tensor(out).reshape({L, N, H}), Tensor(hn), c};
  }
  // Input projections of every step in one GEMM.
  Tensor gi_all = at::linear(x, w.w_ih, w.b_ih);
  std::vector<Tensor> outs(static_cast<size_t>(L));
  for (int64_t s = 0; s < L; ++s) {
    int64_t t = reverse ? L - 1 - s : s;
    Tensor gi = gi_all[t];
    Tensor gh = at::linear(h, w.w_hh, w.b_hh);
    switch (mode) {
      case Mode::LSTM: {
        auto [hy, cy] = ember::lstm_cell_fused(gi + gh, c);
        h = hy;
        c = cy;
        if (w.w_hr.defined()) h = at::linear(h, w.w_hr);
        break;
      }
      case Mode::GRU:
        h = ember::gru_cell_fused(gi, gh, h);
        break;
      case Mode::RNN_TANH:
        h = at::tanh(gi + gh);
        break;
      case Mode::RNN_RELU:
        h = at::relu(gi + gh);
        break;
    }
    outs[static_cast<size_t>(t)] = h;
  }
  return {at::stack(outs, 0), h, c};
}

struct RnnArgs {
  Mode mode;
  int64_t hidden_size, num_layers, proj_size;
  bool bias, batch_first, bidirectional, training;
  double dropout;
};

// The stacked (and optionally bidirectional) recurrence. hx/cx: (layers * dirs, N, H) or undefined.
std::tuple<Tensor, Tensor, Tensor> run_rnn(const RnnArgs& a, const std::vector<Tensor>& weights, Tensor input,
                                           Tensor hx, Tensor cx) {
  int64_t dirs = a.bidirectional ? 2 : 1;
  bool batched = input.dim() == 3;
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "input must have 2 or 3 dimensions, got ", input.dim());
  if (!batched) {
    input = input.unsqueeze(1);
    if (hx.defined()) hx = hx.unsqueeze(1);
    if (cx.defined()) cx = cx.unsqueeze(1);
  } else if (a.batch_first) {
    input = input.transpose(0, 1);
  }
  int64_t N = input.size(1);
  int64_t h_out = a.proj_size > 0 ? a.proj_size : a.hidden_size;
  if (!hx.defined()) hx = at::zeros({a.num_layers * dirs, N, h_out}, input.options().requires_grad(false));
  if (a.mode == Mode::LSTM && !cx.defined())
    cx = at::zeros({a.num_layers * dirs, N, a.hidden_size}, input.options().requires_grad(false));
  EMBER_CHECK(hx.dim() == 3 && hx.size(0) == a.num_layers * dirs && hx.size(1) == N && hx.size(2) == h_out,
              "Expected hidden size (", a.num_layers * dirs, ", ", N, ", ", h_out, "), got ", hx.sizes());
  if (a.mode == Mode::LSTM)
    EMBER_CHECK(cx.dim() == 3 && cx.size(0) == a.num_layers * dirs && cx.size(1) == N && cx.size(2) == a.hidden_size,
                "Expected hidden size (", a.num_layers * dirs, ", ", N, ", ", a.hidden_size, "), got ", cx.sizes());
  size_t per = (a.bias ? 4 : 2) + (a.proj_size > 0 ? 1 : 0);
  Tensor layer_input = input;
  std::vector<Tensor> h_n, c_n;
  for (int64_t l = 0; l < a.num_layers; ++l) {
    std::vector<Tensor> dir_out;
    for (int64_t d = 0; d < dirs; ++d) {
      size_t k = static_cast<size_t>(l * dirs + d) * per;
      LayerWeights w;
      w.w_ih = weights[k];
      w.w_hh = weights[k + 1];
      size_t next = k + 2;
      if (a.bias) {
        w.b_ih = weights[k + 2];
        w.b_hh = weights[k + 3];
        next = k + 4;
      }
      if (a.proj_size > 0) w.w_hr = weights[next];
      int64_t idx = l * dirs + d;
      auto [out, h, c] =
          run_direction(a.mode, layer_input, hx[idx], a.mode == Mode::LSTM ? cx[idx] : Tensor(), w, d == 1);
      dir_out.push_back(out);
      h_n.push_back(h);
      if (a.mode == Mode::LSTM) c_n.push_back(c);
    }
    layer_input = dirs == 1 ? dir_out[0] : at::cat(dir_out, 2);
    if (a.dropout > 0 && a.training && l + 1 < a.num_layers) layer_input = at::dropout(layer_input, a.dropout, true);
  }
  Tensor output = layer_input;
  Tensor hn = at::stack(h_n, 0), cn = a.mode == Mode::LSTM ? at::stack(c_n, 0) : Tensor();
  if (!batched) {
    output = output.squeeze(1);
    hn = hn.squeeze(1);
    if (cn.defined()) cn = cn.squeeze(1);
  } else if (a.batch_first) {
    output = output.transpose(0, 1);
  }
  return {output, hn, cn};
}

void rnn_pretty_print(std::ostream& s, const char* name, int64_t in, int64_t hidden, int64_t layers, bool bias,
                      bool batch_first, double dropout, bool bidirectional) {
  s << "torch::nn::" << name << "(input_size=" << in << ", hidden_size=" << hidden << ", num_layers=" << layers
    << ", bias=" << b(bias) << ", batch_first=" << b(batch_first) << ", dropout=" << dropout
    << ", bidirectional=" << b(bidirectional);
}
}  // namespace

void RNNImplBase::init_weights(Module& self, const Config& c) {
  flat_weights_.clear();
  int64_t dirs = c.bidirectional ? 2 : 1;
  int64_t gate = c.mode_gates * c.hidden_size;
  int64_t h_out = c.proj_size > 0 ? c.proj_size : c.hidden_size;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      int64_t in = l == 0 ? c.input_size : h_out * dirs;
      std::string suffix = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      flat_weights_.push_back(self.register_parameter("weight_ih" + suffix, at::empty({gate, in})));
      flat_weights_.push_back(self.register_parameter("weight_hh" + suffix, at::empty({gate, h_out})));
      if (c.bias) {
        flat_weights_.push_back(self.register_parameter("bias_ih" + suffix, at::empty({gate})));
        flat_weights_.push_back(self.register_parameter("bias_hh" + suffix, at::empty({gate})));
      }
      if (c.proj_size > 0)
        flat_weights_.push_back(self.register_parameter("weight_hr" + suffix, at::empty({c.proj_size, c.hidden_size})));
    }
  }
  double stdv = 1.0 / std::sqrt(static_cast<double>(c.hidden_size));
  for (Tensor& w : flat_weights_) init::uniform_(w, -stdv, stdv);
}

RNNImpl::RNNImpl(const RNNOptions& options_) : options(options_) { reset(); }
void RNNImpl::reset() {
  init_weights(*this, {1, options.input_size(), options.hidden_size(), options.num_layers(), 0, options.bias(),
                       options.batch_first(), options.bidirectional(), options.dropout()});
}
void RNNImpl::pretty_print(std::ostream& s) const {
  rnn_pretty_print(s, "RNN", options.input_size(), options.hidden_size(), options.num_layers(), options.bias(),
                   options.batch_first(), options.dropout(), options.bidirectional());
  s << ")";
}
std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  Mode m = std::holds_alternative<enumtype::kReLU>(options.nonlinearity()) ? Mode::RNN_RELU : Mode::RNN_TANH;
  RnnArgs a{m,
            options.hidden_size(),
            options.num_layers(),
            0,
            options.bias(),
            options.batch_first(),
            options.bidirectional(),
            is_training(),
            options.dropout()};
  auto [out, h, c] = run_rnn(a, flat_weights_, input, hx, Tensor());
  (void)c;
  return {out, h};
}

LSTMImpl::LSTMImpl(const LSTMOptions& options_) : options(options_) { reset(); }
void LSTMImpl::reset() {
  EMBER_CHECK(options.proj_size() >= 0, "proj_size should be a positive integer or zero to disable projections");
  EMBER_CHECK(options.proj_size() < options.hidden_size(), "proj_size has to be smaller than hidden_size");
  init_weights(*this, {4, options.input_size(), options.hidden_size(), options.num_layers(), options.proj_size(),
                       options.bias(), options.batch_first(), options.bidirectional(), options.dropout()});
}
void LSTMImpl::pretty_print(std::ostream& s) const {
  rnn_pretty_print(s, "LSTM", options.input_size(), options.hidden_size(), options.num_layers(), options.bias(),
                   options.batch_first(), options.dropout(), options.bidirectional());
  if (options.proj_size() > 0) s << ", proj_size=" << options.proj_size();
  s << ")";
}
std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  RnnArgs a{Mode::LSTM,       options.hidden_size(), options.num_layers(),    options.proj_size(),
            options.bias(),   options.batch_first(), options.bidirectional(), is_training(),
            options.dropout()};
  Tensor hx, cx;
  if (hx_opt) std::tie(hx, cx) = *hx_opt;
  auto [out, h, c] = run_rnn(a, flat_weights_, input, hx, cx);
  return {out, {h, c}};
}

GRUImpl::GRUImpl(const GRUOptions& options_) : options(options_) { reset(); }
void GRUImpl::reset() {
  init_weights(*this, {3, options.input_size(), options.hidden_size(), options.num_layers(), 0, options.bias(),
                       options.batch_first(), options.bidirectional(), options.dropout()});
}
void GRUImpl::pretty_print(std::ostream& s) const {
  rnn_pretty_print(s, "GRU", options.input_size(), options.hidden_size(), options.num_layers(), options.bias(),
                   options.batch_first(), options.dropout(), options.bidirectional());
  s << ")";
}
std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  RnnArgs a{Mode::GRU,        options.hidden_size(), options.num_layers(),    0,
            options.bias(),   options.batch_first(), options.bidirectional(), is_training(),
            options.dropout()};
  auto [out, h, c] = run_rnn(a, flat_weights_, input, hx, Tensor());
  (void)c;
  return {out, h};
}

// ---- cells ----

namespace {
template <typename Cell>
void init_cell(Cell& cell, int64_t gates, int64_t in, int64_t hidden, bool bias) {
  cell.weight_ih = cell.register_parameter("weight_ih", at::empty({gates * hidden, in}));
  cell.weight_hh = cell.register_parameter("weight_hh", at::empty({gates * hidden, hidden}));
  if (bias) {
    cell.bias_ih = cell.register_parameter("bias_ih", at::empty({gates * hidden}));
    cell.bias_hh = cell.register_parameter("bias_hh", at::empty({gates * hidden}));
  } else {
    cell.bias_ih = cell.register_parameter("bias_ih", Tensor(), false);
    cell.bias_hh = cell.register_parameter("bias_hh", Tensor(), false);
  }
  double stdv = 1.0 / std::sqrt(static_cast<double>(hidden));
  for (auto& p : cell.parameters()) init::uniform_(p, -stdv, stdv);
}
// Cells take (B, in) or unbatched (in) input; the state defaults to zeros.
Tensor cell_state(const Tensor& input, const Tensor& hx, int64_t hidden) {
  if (hx.defined()) return input.dim() == 1 ? hx.unsqueeze(0) : hx;
  int64_t batch = input.dim() == 1 ? 1 : input.size(0);
  return at::zeros({batch, hidden}, input.options().requires_grad(false));
}
void cell_print(std::ostream& s, const char* name, int64_t in, int64_t hidden, bool bias, const char* nl = nullptr) {
  s << "torch::nn::" << name << "(" << in << ", " << hidden;
  if (!bias) s << ", bias=" << b(false);
  if (nl) s << ", nonlinearity=" << nl;
  s << ")";
}
}  // namespace

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options_) : options(options_) { reset(); }
void RNNCellImpl::reset() { init_cell(*this, 1, options.input_size(), options.hidden_size(), options.bias()); }
void RNNCellImpl::pretty_print(std::ostream& s) const {
  bool relu = std::holds_alternative<enumtype::kReLU>(options.nonlinearity());
  cell_print(s, "RNNCell", options.input_size(), options.hidden_size(), options.bias(), relu ? "kReLU" : nullptr);
}
Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, "RNNCell: Expected input to be 1D or 2D, got ", input.dim(),
              "D instead");
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  Tensor h = cell_state(input, hx, options.hidden_size());
  Tensor r = std::holds_alternative<enumtype::kReLU>(options.nonlinearity())
                 ? at::rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                 : at::rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return input.dim() == 1 ? r.squeeze(0) : r;
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options_) : options(options_) { reset(); }
void LSTMCellImpl::reset() { init_cell(*this, 4, options.input_size(), options.hidden_size(), options.bias()); }
void LSTMCellImpl::pretty_print(std::ostream& s) const {
  cell_print(s, "LSTMCell", options.input_size(), options.hidden_size(), options.bias());
}
std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, "LSTMCell: Expected input to be 1D or 2D, got ", input.dim(),
              "D instead");
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  Tensor h, c;
  if (hx_opt) std::tie(h, c) = *hx_opt;
  h = cell_state(input, h, options.hidden_size());
  c = cell_state(input, c, options.hidden_size());
  auto [hy, cy] = at::lstm_cell(x, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
  if (input.dim() == 1) return {hy.squeeze(0), cy.squeeze(0)};
  return {hy, cy};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options_) : options(options_) { reset(); }
void GRUCellImpl::reset() { init_cell(*this, 3, options.input_size(), options.hidden_size(), options.bias()); }
void GRUCellImpl::pretty_print(std::ostream& s) const {
  cell_print(s, "GRUCell", options.input_size(), options.hidden_size(), options.bias());
}
Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, "GRUCell: Expected input to be 1D or 2D, got ", input.dim(),
              "D instead");
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  Tensor h = cell_state(input, hx, options.hidden_size());
  Tensor r = at::gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return input.dim() == 1 ? r.squeeze(0) : r;
}

// ---- multi-head attention ----

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_) : options(options_) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  int64_t E = options.embed_dim();
  _qkv_same_embed_dim = options.kdim() == E && options.vdim() == E;
  head_dim = E / options.num_heads();
  EMBER_CHECK(head_dim * options.num_heads() == E, "embed_dim must be divisible by num_heads");
  if (!_qkv_same_embed_dim) {
    q_proj_weight = register_parameter("q_proj_weight", at::empty({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", at::empty({E, options.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", at::empty({E, options.vdim()}));
    in_proj_weight = register_parameter("in_proj_weight", Tensor(), false);
  } else {
    in_proj_weight = register_parameter("in_proj_weight", at::empty({3 * E, E}));
    q_proj_weight = register_parameter("q_proj_weight", Tensor(), false);
    k_proj_weight = register_parameter("k_proj_weight", Tensor(), false);
    v_proj_weight = register_parameter("v_proj_weight", Tensor(), false);
  }
  if (options.bias())
    in_proj_bias = register_parameter("in_proj_bias", at::empty({3 * E}));
  else
    in_proj_bias = register_parameter("in_proj_bias", Tensor(), false);
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(options.bias())));
  if (options.add_bias_kv()) {
    bias_k = register_parameter("bias_k", at::empty({1, 1, E}));
    bias_v = register_parameter("bias_v", at::empty({1, 1, E}));
  } else {
    bias_k.reset();
    bias_v.reset();
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

void MultiheadAttentionImpl::pretty_print(std::ostream& s) const { s << "torch::nn::MultiheadAttention"; }

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask_in, bool average_attn_weights) {
  bool batched = query.dim() == 3;
  EMBER_CHECK(query.dim() == 2 || query.dim() == 3, "query should be unbatched 2D or batched 3D tensor but received ",
              query.dim(), "-D query tensor");
  Tensor q = batched ? query : query.unsqueeze(1);
  Tensor k = batched ? key : key.unsqueeze(1);
  Tensor v = batched ? value : value.unsqueeze(1);
  Tensor kpm = key_padding_mask;
  if (kpm.defined() && !batched) kpm = kpm.unsqueeze(0);
  int64_t L = q.size(0), N = q.size(1), E = options.embed_dim(), H = options.num_heads();
  EMBER_CHECK(q.size(2) == E, "was expecting embedding dimension of ", E, ", but got ", q.size(2));
  Tensor wq, wk, wv, bq, bk, bv;
  if (_qkv_same_embed_dim) {
    auto w = in_proj_weight.chunk(3, 0);
    wq = w[0], wk = w[1], wv = w[2];
  } else {
    wq = q_proj_weight, wk = k_proj_weight, wv = v_proj_weight;
  }
  if (in_proj_bias.defined()) {
    auto bb = in_proj_bias.chunk(3, 0);
    bq = bb[0], bk = bb[1], bv = bb[2];
  }
  Tensor qp = at::linear(q, wq, bq), kp = at::linear(k, wk, bk), vp = at::linear(v, wv, bv);
  Tensor attn_mask = attn_mask_in;
  if (attn_mask.defined() && attn_mask.dim() == 2) attn_mask = attn_mask.unsqueeze(0);
  auto pad_masks = [&]() {
    if (attn_mask.defined()) attn_mask = at::constant_pad_nd(attn_mask, {0, 1});
    if (kpm.defined()) kpm = at::constant_pad_nd(kpm, {0, 1});
  };
  if (bias_k.defined()) {
    kp = at::cat({kp, bias_k.repeat({1, N, 1})}, 0);
    vp = at::cat({vp, bias_v.repeat({1, N, 1})}, 0);
    pad_masks();
  }
  // (len, N, E) -> (N * H, len, head_dim)
  auto heads = [&](const Tensor& t) { return t.reshape({t.size(0), N * H, head_dim}).transpose(0, 1); };
  qp = heads(qp);
  kp = heads(kp);
  vp = heads(vp);
  if (options.add_zero_attn()) {
    kp = at::cat({kp, at::zeros({N * H, 1, head_dim}, kp.options().requires_grad(false))}, 1);
    vp = at::cat({vp, at::zeros({N * H, 1, head_dim}, vp.options().requires_grad(false))}, 1);
    pad_masks();
  }
  int64_t S = kp.size(1);
  Tensor scores = at::bmm(qp * (1.0 / std::sqrt(static_cast<double>(head_dim))), kp.transpose(1, 2));
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (attn_mask.defined()) {  // bool: true = not allowed; float: added
    if (attn_mask.scalar_type() == at::kBool)
      scores = scores.masked_fill(attn_mask, neg_inf);
    else
      scores = scores + attn_mask;
  }
  if (kpm.defined()) {
    Tensor m = kpm.reshape({N, 1, 1, S}).expand({N, H, 1, S}).reshape({N * H, 1, S});
    if (m.scalar_type() == at::kBool)
      scores = scores.masked_fill(m, neg_inf);
    else
      scores = scores + m;
  }
  Tensor weights = at::softmax(scores, -1);
  if (options.dropout() > 0) weights = at::dropout(weights, options.dropout(), is_training());
  Tensor out = at::bmm(weights, vp).transpose(0, 1).reshape({L, N, E});
  out = out_proj->forward(out);
  Tensor w;
  if (need_weights) {
    w = weights.reshape({N, H, L, S});
    if (average_attn_weights) w = w.mean({1});
    if (!batched) w = w.squeeze(0);
  }
  if (!batched) out = out.squeeze(1);
  return {out, w};
}

}  // namespace torch::nn
