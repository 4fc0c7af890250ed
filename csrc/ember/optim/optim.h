// Fused optimizer updates: each function updates a whole parameter group in one call, one pass
// over each parameter's memory (Note [Fused optimizer step]). The Python classes in ember.optim
// and C++ programs share them. Parameters, gradients and state tensors are float32 or float64,
// one dtype per parameter; state tensors the caller leaves undefined are created here (so the
// first step initialises them as PyTorch does) and written back into the vectors.
//
// Step counters (`steps`) are 0-d tensors (float32 in PyTorch's state dicts); each call adds one.
#pragma once
#include <vector>

#include "ember/core/tensor.h"

namespace ember::optim {

using TensorList = std::vector<Tensor>;

struct SgdOptions {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};
// momentum_buffers: one per parameter (undefined = none yet); unused when momentum == 0.
void sgd_step(const TensorList& params, const TensorList& grads, TensorList& momentum_buffers, const SgdOptions& o);

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false, decoupled_weight_decay = false;  // decoupled: AdamW
};
void adam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
               TensorList& max_exp_avg_sqs, TensorList& steps, const AdamOptions& o);

struct AdamaxOptions {
  double lr = 2e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool maximize = false;
};
void adamax_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_infs,
                 TensorList& steps, const AdamaxOptions& o);

struct NadamOptions {
  double lr = 2e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3;
  bool decoupled_weight_decay = false, maximize = false;
};
// mu_products: 0-d float32 tensors (the running product of the momentum schedule).
void nadam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
                TensorList& mu_products, TensorList& steps, const NadamOptions& o);

struct RadamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled_weight_decay = false, maximize = false;
};
void radam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
                TensorList& steps, const RadamOptions& o);

struct AdagradOptions {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, eps = 1e-10, initial_accumulator_value = 0;
  bool maximize = false;
};
void adagrad_step(const TensorList& params, const TensorList& grads, TensorList& state_sums, TensorList& steps,
                  const AdagradOptions& o);

struct RmspropOptions {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};
// momentum_buffers used when momentum > 0, grad_avgs when centered.
void rmsprop_step(const TensorList& params, const TensorList& grads, TensorList& square_avgs,
                  TensorList& momentum_buffers, TensorList& grad_avgs, TensorList& steps, const RmspropOptions& o);

struct AdadeltaOptions {
  double lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0;
  bool maximize = false;
};
void adadelta_step(const TensorList& params, const TensorList& grads, TensorList& square_avgs, TensorList& acc_deltas,
                   TensorList& steps, const AdadeltaOptions& o);

struct AsgdOptions {
  double lr = 1e-2, lambd = 1e-4, alpha = 0.75, t0 = 1e6, weight_decay = 0;
  bool maximize = false;
};
// etas and mus: 0-d float32 tensors, updated after the step as PyTorch's schedule says.
void asgd_step(const TensorList& params, const TensorList& grads, TensorList& axs, TensorList& etas, TensorList& mus,
               TensorList& steps, const AsgdOptions& o);

struct RpropOptions {
  double lr = 1e-2, etaminus = 0.5, etaplus = 1.2, step_size_min = 1e-6, step_size_max = 50;
  bool maximize = false;
};
void rprop_step(const TensorList& params, const TensorList& grads, TensorList& prevs, TensorList& step_sizes,
                TensorList& steps, const RpropOptions& o);

}  // namespace ember::optim
