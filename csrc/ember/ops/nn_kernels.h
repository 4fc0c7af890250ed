// Per-device kernel entries of the nn ops (ops/nn_*.cpp), as PyTorch's DispatchStub: an op calls
// `kernels::foo(device, args)`, which picks the back end; CPU kernels live in cpu/loss_kernels.cpp
// and cpu/norm_kernels.cpp. A CUDA back end adds cuda/ files and one branch per entry.
// All tensors handed to kernels are contiguous; statistics (lse, mean, rstd) have the opmath dtype
// (float32 for float16/bfloat16/float32 inputs, float64 for float64).
#pragma once
#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/cpu/isa.h"

namespace ember {

// Class-index losses over an input read as (outer, C, inner); target holds outer * inner int64.
struct ClassLossArgs {
  Tensor x, target, weight;  // weight: C elements or undefined
  int64_t outer = 1, C = 1, inner = 1, ignore_index = -100;
  double label_smoothing = 0;
};
// Sums the kernels return: the loss total and the weight of the non-ignored targets.
struct LossTotals {
  double total = 0, weight = 0;
};

struct BatchNormArgs {
  Tensor x;  // (N, C, inner)
  int64_t N = 1, C = 1, inner = 1;
};

namespace cpu {
// Each kernel is compiled once per ISA level (Note [Multi-ISA kernels] in cpu/isa.h); the entries
// below call the level in use.
// Fills loss (outer * inner, x's dtype: the unreduced loss, 0 where ignored) and lse.
EMBER_DECLARE_ISA_KERNEL(LossTotals, cross_entropy_forward, (const ClassLossArgs& a, Tensor& loss, Tensor& lse))
// dx = scale * d(loss)/dx, scale per position from g (undefined: the number g_scalar).
EMBER_DECLARE_ISA_KERNEL(void, cross_entropy_backward,
                         (const ClassLossArgs& a, const Tensor& lse, const Tensor& g, double g_scalar, Tensor& dx))
EMBER_DECLARE_ISA_KERNEL(LossTotals, nll_loss_forward, (const ClassLossArgs& a, Tensor& loss))

// Per-channel mean and biased variance (opmath dtype).
EMBER_DECLARE_ISA_KERNEL(void, batch_norm_stats, (const BatchNormArgs& a, Tensor& mean, Tensor& var))
// y = x * scale[c] + shift[c].
EMBER_DECLARE_ISA_KERNEL(void, batch_norm_apply,
                         (const BatchNormArgs& a, const Tensor& scale, const Tensor& shift, Tensor& y))
// Per-channel sums of dy and dy * (x - mean).
EMBER_DECLARE_ISA_KERNEL(void, batch_norm_grad_sums,
                         (const BatchNormArgs& a, const Tensor& dy, const Tensor& mean, Tensor& sum_dy,
                          Tensor& sum_dy_xmu))
// dx = (dy - k_dy[c] - (x - mean[c]) * k_x[c]) * k_out[c] (k_dy = 0, k_x = 0 in evaluation).
EMBER_DECLARE_ISA_KERNEL(void, batch_norm_backward_input,
                         (const BatchNormArgs& a, const Tensor& dy, const Tensor& mean, const Tensor& k_dy,
                          const Tensor& k_x, const Tensor& k_out, Tensor& dx))

// Rows of length N: y = (x - mean) * rstd * w + b; w, b may be undefined.
EMBER_DECLARE_ISA_KERNEL(void, layer_norm_forward,
                         (const Tensor& x, int64_t M, int64_t N, const Tensor& w, const Tensor& b, double eps,
                          Tensor& y, Tensor& mean, Tensor& rstd))
// dx (defined to be filled), dw/db (opmath sums over rows, filled when defined).
EMBER_DECLARE_ISA_KERNEL(void, layer_norm_backward,
                         (const Tensor& x, const Tensor& dy, int64_t M, int64_t N, const Tensor& mean,
                          const Tensor& rstd, const Tensor& w, Tensor& dx, Tensor& dw, Tensor& db))

// group_norm over contiguous (N, C, spatial) x: y, and mean/rstd per (n, group) (opmath dtype);
// w, b (opmath dtype, C values) may be undefined.
EMBER_DECLARE_ISA_KERNEL(void, group_norm_forward,
                         (const Tensor& x, int64_t N, int64_t C, int64_t G, int64_t spatial, const Tensor& w,
                          const Tensor& b, double eps, Tensor& y, Tensor& mean, Tensor& rstd))
// dx = dy * ka[r] + x * kb[r] + kc[r] over `rows` rows of `inner` (group_norm's backward).
EMBER_DECLARE_ISA_KERNEL(void, group_norm_backward_input,
                         (const Tensor& x, const Tensor& dy, int64_t rows, int64_t inner, const Tensor& ka,
                          const Tensor& kb, const Tensor& kc, Tensor& dx))

// The pointwise halves of the recurrent cells (ops/nn_rnn.cpp), on contiguous (B, k * H) gates.
// LSTM: hy, cy from gates (i, f, g, o) and cx; backward: dgates, dcx from ghy, gcy (all defined).
EMBER_DECLARE_ISA_KERNEL(void, lstm_cell_forward,
                         (const Tensor& gates, const Tensor& cx, int64_t B, int64_t H, Tensor& hy, Tensor& cy))
EMBER_DECLARE_ISA_KERNEL(void, lstm_cell_backward,
                         (const Tensor& gates, const Tensor& cx, const Tensor& cy, const Tensor& ghy, const Tensor& gcy,
                          int64_t B, int64_t H, Tensor& dgates, Tensor& dcx))
// GRU: hy from the input and hidden projections gi, gh (r, z, n; biases included) and hx.
EMBER_DECLARE_ISA_KERNEL(void, gru_cell_forward,
                         (const Tensor& gi, const Tensor& gh, const Tensor& hx, int64_t B, int64_t H, Tensor& hy))
EMBER_DECLARE_ISA_KERNEL(void, gru_cell_backward,
                         (const Tensor& gi, const Tensor& gh, const Tensor& hx, const Tensor& ghy, int64_t B, int64_t H,
                          Tensor& dgi, Tensor& dgh, Tensor& dhx))
// One time step of the fused LSTM layer (Note [Fused LSTM layer], ops/nn_rnn.cpp) on `rows` rows of
// float32/float64 (dt) for H hidden units: gate rows (4H wide: i, f, g, o) are ldg elements apart,
// state rows ldh apart. The gates hold the pre-activations and are overwritten with the
// activations; c_prev in, c and h out.
EMBER_DECLARE_ISA_KERNEL(void, lstm_layer_step_forward,
                         (ScalarType dt, void* gates, const void* c_prev, void* c, void* h, int64_t rows, int64_t H,
                          int64_t ldg, int64_t ldh))
// Its backward from the activations, c_prev, c and the gradients dh plus dout (the step's output
// gradient, or null): dgates, and dc from the gradient of c to that of c_prev, in place.
EMBER_DECLARE_ISA_KERNEL(void, lstm_layer_step_backward,
                         (ScalarType dt, const void* act, const void* c_prev, const void* c, const void* dh,
                          const void* dout, void* dc, void* dgates, int64_t rows, int64_t H, int64_t ldg, int64_t ldh))
// One time step of the fused GRU layer (Note [Fused LSTM layer], ops/nn_rnn.cpp) on `rows` rows for
// H hidden units: gi holds the input projections (r, z, n; b_ih included), gh the hidden ones
// (b_hh included) in rows ldg apart; h_prev in, h out (rows ldh apart). The activations r, z, n
// overwrite gi; gh is kept (its n part enters backward).
EMBER_DECLARE_ISA_KERNEL(void, gru_layer_step_forward,
                         (ScalarType dt, void* gi, const void* gh, const void* h_prev, void* h, int64_t rows, int64_t H,
                          int64_t ldg, int64_t ldh))
// Its backward from the activations, gh, h_prev and dh (+ dout, or null): dgi and dgh (rows ldg
// apart), and dh replaced by its direct part dh * z (the product with W_hh is added after).
EMBER_DECLARE_ISA_KERNEL(void, gru_layer_step_backward,
                         (ScalarType dt, const void* act, const void* gh, const void* h_prev, void* dh,
                          const void* dout, void* dgi, void* dgh, int64_t rows, int64_t H, int64_t ldg, int64_t ldh))
}  // namespace cpu

namespace kernels {
inline void check_backend(const Tensor& t, const char* op) {
  if (!t.device().is_cpu()) EMBER_NOT_IMPLEMENTED(op, ": no kernel for device ", t.device().str());
}
#define EMBER_NN_ENTRY(ret, name, first, params, args) \
  inline ret name params {                             \
    check_backend(first, #name);                       \
    return EMBER_ISA_SELECT(cpu::name) args;           \
  }
EMBER_NN_ENTRY(LossTotals, cross_entropy_forward, a.x, (const ClassLossArgs& a, Tensor& loss, Tensor& lse),
               (a, loss, lse))
EMBER_NN_ENTRY(void, cross_entropy_backward, a.x,
               (const ClassLossArgs& a, const Tensor& lse, const Tensor& g, double gs, Tensor& dx), (a, lse, g, gs, dx))
EMBER_NN_ENTRY(LossTotals, nll_loss_forward, a.x, (const ClassLossArgs& a, Tensor& loss), (a, loss))
EMBER_NN_ENTRY(void, batch_norm_stats, a.x, (const BatchNormArgs& a, Tensor& mean, Tensor& var), (a, mean, var))
EMBER_NN_ENTRY(void, batch_norm_apply, a.x,
               (const BatchNormArgs& a, const Tensor& scale, const Tensor& shift, Tensor& y), (a, scale, shift, y))
EMBER_NN_ENTRY(void, batch_norm_grad_sums, a.x,
               (const BatchNormArgs& a, const Tensor& dy, const Tensor& mean, Tensor& s1, Tensor& s2),
               (a, dy, mean, s1, s2))
EMBER_NN_ENTRY(void, batch_norm_backward_input, a.x,
               (const BatchNormArgs& a, const Tensor& dy, const Tensor& mean, const Tensor& k_dy, const Tensor& k_x,
                const Tensor& k_out, Tensor& dx),
               (a, dy, mean, k_dy, k_x, k_out, dx))
EMBER_NN_ENTRY(void, layer_norm_forward, x,
               (const Tensor& x, int64_t M, int64_t N, const Tensor& w, const Tensor& b, double eps, Tensor& y,
                Tensor& mean, Tensor& rstd),
               (x, M, N, w, b, eps, y, mean, rstd))
EMBER_NN_ENTRY(void, layer_norm_backward, x,
               (const Tensor& x, const Tensor& dy, int64_t M, int64_t N, const Tensor& mean, const Tensor& rstd,
                const Tensor& w, Tensor& dx, Tensor& dw, Tensor& db),
               (x, dy, M, N, mean, rstd, w, dx, dw, db))
EMBER_NN_ENTRY(void, group_norm_forward, x,
               (const Tensor& x, int64_t N, int64_t C, int64_t G, int64_t spatial, const Tensor& w, const Tensor& b,
                double eps, Tensor& y, Tensor& mean, Tensor& rstd),
               (x, N, C, G, spatial, w, b, eps, y, mean, rstd))
EMBER_NN_ENTRY(void, group_norm_backward_input, x,
               (const Tensor& x, const Tensor& dy, int64_t rows, int64_t inner, const Tensor& ka, const Tensor& kb,
                const Tensor& kc, Tensor& dx),
               (x, dy, rows, inner, ka, kb, kc, dx))
EMBER_NN_ENTRY(void, lstm_cell_forward, gates,
               (const Tensor& gates, const Tensor& cx, int64_t B, int64_t H, Tensor& hy, Tensor& cy),
               (gates, cx, B, H, hy, cy))
EMBER_NN_ENTRY(void, lstm_cell_backward, gates,
               (const Tensor& gates, const Tensor& cx, const Tensor& cy, const Tensor& ghy, const Tensor& gcy,
                int64_t B, int64_t H, Tensor& dgates, Tensor& dcx),
               (gates, cx, cy, ghy, gcy, B, H, dgates, dcx))
EMBER_NN_ENTRY(void, gru_cell_forward, gi,
               (const Tensor& gi, const Tensor& gh, const Tensor& hx, int64_t B, int64_t H, Tensor& hy),
               (gi, gh, hx, B, H, hy))
EMBER_NN_ENTRY(void, gru_cell_backward, gi,
               (const Tensor& gi, const Tensor& gh, const Tensor& hx, const Tensor& ghy, int64_t B, int64_t H,
                Tensor& dgi, Tensor& dgh, Tensor& dhx),
               (gi, gh, hx, ghy, B, H, dgi, dgh, dhx))
#undef EMBER_NN_ENTRY
}  // namespace kernels

}  // namespace ember
