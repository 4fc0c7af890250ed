// Recurrent cells: the fused pointwise halves of the LSTM and GRU cells (kernels in
// cpu/rnn_kernels.cpp) and torch's cell functions (lstm_cell, gru_cell, rnn_tanh_cell,
// rnn_relu_cell) built on them. The projections are GEMMs (linear); the fused ops turn the ten or
// so elementwise ops of a cell, each with an output and an autograd node, into one pass forward
// and one backward. Their backward under create_graph is written with ember ops, so higher-order
// gradients work as through the unfused formulas.
#include "ember/ops/nn.h"

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/ops/nn_kernels.h"
#include "ember/ops/nn_linear.h"
#include "ember/ops/operators.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

void check_pair(const Tensor& a, const Tensor& b, const char* op, const char* an, const char* bn) {
  EMBER_CHECK(a.device() == b.device(), op, ": expected ", an, " and ", bn, " on the same device, got ",
              a.device().str(), " and ", b.device().str());
  EMBER_CHECK(a.dtype() == b.dtype(), op, ": expected ", an, " and ", bn, " to have the same dtype, got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
}

// (B, chunks * H) gates and a (B, H) state; returns H.
int64_t check_gates(const Tensor& gates, const Tensor& state, int64_t chunks, const char* op, const char* gname,
                    const char* sname) {
  EMBER_CHECK(gates.dim() == 2 && state.dim() == 2, op, ": expected 2-D ", gname, " and ", sname, ", got ", gates.dim(),
              "-D and ", state.dim(), "-D");
  const int64_t H = state.size(1);
  EMBER_CHECK(gates.size(0) == state.size(0) && gates.size(1) == chunks * H, op, ": ", gname, " of shape ",
              gates.shape_str(), " does not match ", sname, " of shape ", state.shape_str(), " (expected (",
              state.size(0), ", ", chunks * H, "))");
  check_pair(gates, state, op, gname, sname);
  if (!is_floating_point(gates.dtype()))
    EMBER_NOT_IMPLEMENTED(op, " is not implemented for '", dtype_name(gates.dtype()), "'");
  return H;
}

Tensor gate(const Tensor& g, int64_t k, int64_t H) { return narrow(g, 1, k * H, H); }
Tensor one_minus(const Tensor& t) { return 1.0 - t; }

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell_fused(const Tensor& gates_in, const Tensor& cx_in) {
  const int64_t H = check_gates(gates_in, cx_in, 4, "lstm_cell", "gates", "cx"), B = cx_in.size(0);
  Tensor gates = contiguous(gates_in), cx = contiguous(cx_in);
  Tensor hy = empty({B, H}, gates.dtype(), gates.device()), cy = empty({B, H}, gates.dtype(), gates.device());
  {
    autograd::NoGradGuard raw;
    kernels::lstm_cell_forward(gates, cx, B, H, hy, cy);
  }
  if (auto n = autograd::make_node<LambdaBackward>(gates_in, cx_in)) {
    n->record("FusedLstmCellBackward0", {hy, cy}, {gates_in, cx_in}, {cy},
              [H, B](const TensorList& g, const TensorList& s) -> TensorList {
                const Tensor &gates = s[0], &cx = s[1], &cy = s[2];
                if (!g[0].defined() && !g[1].defined()) return {Tensor(), Tensor()};
                if (autograd::GradMode::is_enabled()) {  // create_graph: differentiable formulas
                  Tensor i = sigmoid(gate(gates, 0, H)), f = sigmoid(gate(gates, 1, H)), gg = tanh(gate(gates, 2, H)),
                         o = sigmoid(gate(gates, 3, H)), tc = tanh(cy);
                  Tensor gh = g[0].defined() ? g[0] : zeros(cy.sizes(), cy.dtype(), cy.device());
                  Tensor dc = gh * o * one_minus(tc * tc);
                  if (g[1].defined()) dc = dc + g[1];
                  Tensor dgates = cat({dc * gg * i * one_minus(i), dc * cx * f * one_minus(f),
                                       dc * i * one_minus(gg * gg), gh * tc * o * one_minus(o)},
                                      1);
                  return {dgates, dc * f};
                }
                Tensor dgates = empty({B, 4 * H}, gates.dtype(), gates.device());
                Tensor dcx = empty({B, H}, gates.dtype(), gates.device());
                auto grad_or_zeros = [&](const Tensor& t) {
                  return t.defined() ? contiguous(t) : zeros({B, H}, gates.dtype(), gates.device());
                };
                Tensor ghy = grad_or_zeros(g[0]), gcy = grad_or_zeros(g[1]);
                kernels::lstm_cell_backward(contiguous(gates), contiguous(cx), contiguous(cy), ghy, gcy, B, H, dgates,
                                            dcx);
                return {dgates, dcx};
              });
  }
  return {hy, cy};
}

Tensor gru_cell_fused(const Tensor& gi_in, const Tensor& gh_in, const Tensor& hx_in) {
  const int64_t H = check_gates(gi_in, hx_in, 3, "gru_cell", "input_gates", "hx"), B = hx_in.size(0);
  check_gates(gh_in, hx_in, 3, "gru_cell", "hidden_gates", "hx");
  Tensor gi = contiguous(gi_in), gh = contiguous(gh_in), hx = contiguous(hx_in);
  Tensor hy = empty({B, H}, gi.dtype(), gi.device());
  {
    autograd::NoGradGuard raw;
    kernels::gru_cell_forward(gi, gh, hx, B, H, hy);
  }
  if (auto n = autograd::make_node<LambdaBackward>(gi_in, gh_in, hx_in)) {
    n->record(
        "FusedGruCellBackward0", {hy}, {gi_in, gh_in, hx_in}, {},
        [H, B](const TensorList& g, const TensorList& s) -> TensorList {
          const Tensor &gi = s[0], &gh = s[1], &hx = s[2];
          if (!g[0].defined()) return {Tensor(), Tensor(), Tensor()};
          if (autograd::GradMode::is_enabled()) {  // create_graph: differentiable formulas
            Tensor r = sigmoid(gate(gi, 0, H) + gate(gh, 0, H)), z = sigmoid(gate(gi, 1, H) + gate(gh, 1, H));
            Tensor hn = gate(gh, 2, H), n = tanh(gate(gi, 2, H) + r * hn);
            Tensor dn = g[0] * one_minus(z) * one_minus(n * n);
            Tensor dr = dn * hn * r * one_minus(r), dz = g[0] * (hx - n) * z * one_minus(z);
            return {cat({dr, dz, dn}, 1), cat({dr, dz, dn * r}, 1), g[0] * z};
          }
          Tensor dgi = empty({B, 3 * H}, gi.dtype(), gi.device()), dgh = empty({B, 3 * H}, gi.dtype(), gi.device());
          Tensor dhx = empty({B, H}, gi.dtype(), gi.device());
          kernels::gru_cell_backward(contiguous(gi), contiguous(gh), contiguous(hx), contiguous(g[0]), B, H, dgi, dgh,
                                     dhx);
          return {dgi, dgh, dhx};
        });
  }
  return hy;
}

namespace {
// input (B, I), states (B, H) (torch's cell functions take no unbatched form: the modules add the
// batch dim themselves).
void check_cell_args(const Tensor& input, const Tensor& hx, const char* op) {
  EMBER_CHECK_INDEX(input.dim() >= 2 && hx.dim() >= 2,
                    "Dimension out of range (expected to be in range of [-1, 0], "
                    "but got 1)");
  EMBER_CHECK(input.dim() == 2 && hx.dim() == 2, op, ": expected 2-D input and hidden state, got ", input.dim(),
              "-D and ", hx.dim(), "-D");
}
Tensor projection(const Tensor& x, const Tensor& w, const Tensor& b) {
  return linear(x, w, b.defined() ? std::optional<Tensor>(b) : std::nullopt);
}
}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_cell_args(input, hx, "lstm_cell");
  return lstm_cell_fused(projection(input, w_ih, b_ih) + projection(hx, w_hh, b_hh), cx);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  check_cell_args(input, hx, "gru_cell");
  return gru_cell_fused(projection(input, w_ih, b_ih), projection(hx, w_hh, b_hh), hx);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  check_cell_args(input, hx, "rnn_tanh_cell");
  return tanh(projection(input, w_ih, b_ih) + projection(hx, w_hh, b_hh));
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  check_cell_args(input, hx, "rnn_relu_cell");
  return relu(projection(input, w_ih, b_ih) + projection(hx, w_hh, b_hh));
}

}  // namespace ember
