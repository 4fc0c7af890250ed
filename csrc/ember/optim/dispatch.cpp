// The public optimizer steps of optim.h: each calls its compile for the ISA level in use (the
// algorithm files are compiled once per level, Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa.h"
#include "ember/optim/optim.h"

namespace ember::optim {

EMBER_DECLARE_ISA_KERNEL(void, sgd_step,
                         (const TensorList& params, const TensorList& grads, TensorList& momentum_buffers,
                          const SgdOptions& o))
void sgd_step(const TensorList& params, const TensorList& grads, TensorList& momentum_buffers, const SgdOptions& o) {
  EMBER_ISA_SELECT(sgd_step)(params, grads, momentum_buffers, o);
}

EMBER_DECLARE_ISA_KERNEL(void, adam_step,
                         (const TensorList& params, const TensorList& grads, TensorList& exp_avgs,
                          TensorList& exp_avg_sqs, TensorList& max_exp_avg_sqs, TensorList& steps,
                          const AdamOptions& o))
void adam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
               TensorList& max_exp_avg_sqs, TensorList& steps, const AdamOptions& o) {
  EMBER_ISA_SELECT(adam_step)(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, adamax_step,
                         (const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_infs,
                          TensorList& steps, const AdamaxOptions& o))
void adamax_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_infs,
                 TensorList& steps, const AdamaxOptions& o) {
  EMBER_ISA_SELECT(adamax_step)(params, grads, exp_avgs, exp_infs, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, nadam_step,
                         (const TensorList& params, const TensorList& grads, TensorList& exp_avgs,
                          TensorList& exp_avg_sqs, TensorList& mu_products, TensorList& steps, const NadamOptions& o))
void nadam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
                TensorList& mu_products, TensorList& steps, const NadamOptions& o) {
  EMBER_ISA_SELECT(nadam_step)(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, radam_step,
                         (const TensorList& params, const TensorList& grads, TensorList& exp_avgs,
                          TensorList& exp_avg_sqs, TensorList& steps, const RadamOptions& o))
void radam_step(const TensorList& params, const TensorList& grads, TensorList& exp_avgs, TensorList& exp_avg_sqs,
                TensorList& steps, const RadamOptions& o) {
  EMBER_ISA_SELECT(radam_step)(params, grads, exp_avgs, exp_avg_sqs, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, adagrad_step,
                         (const TensorList& params, const TensorList& grads, TensorList& state_sums, TensorList& steps,
                          const AdagradOptions& o))
void adagrad_step(const TensorList& params, const TensorList& grads, TensorList& state_sums, TensorList& steps,
                  const AdagradOptions& o) {
  EMBER_ISA_SELECT(adagrad_step)(params, grads, state_sums, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, rmsprop_step,
                         (const TensorList& params, const TensorList& grads, TensorList& square_avgs,
                          TensorList& momentum_buffers, TensorList& grad_avgs, TensorList& steps,
                          const RmspropOptions& o))
void rmsprop_step(const TensorList& params, const TensorList& grads, TensorList& square_avgs,
                  TensorList& momentum_buffers, TensorList& grad_avgs, TensorList& steps, const RmspropOptions& o) {
  EMBER_ISA_SELECT(rmsprop_step)(params, grads, square_avgs, momentum_buffers, grad_avgs, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, adadelta_step,
                         (const TensorList& params, const TensorList& grads, TensorList& square_avgs,
                          TensorList& acc_deltas, TensorList& steps, const AdadeltaOptions& o))
void adadelta_step(const TensorList& params, const TensorList& grads, TensorList& square_avgs, TensorList& acc_deltas,
                   TensorList& steps, const AdadeltaOptions& o) {
  EMBER_ISA_SELECT(adadelta_step)(params, grads, square_avgs, acc_deltas, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, asgd_step,
                         (const TensorList& params, const TensorList& grads, TensorList& axs, TensorList& etas,
                          TensorList& mus, TensorList& steps, const AsgdOptions& o))
void asgd_step(const TensorList& params, const TensorList& grads, TensorList& axs, TensorList& etas, TensorList& mus,
               TensorList& steps, const AsgdOptions& o) {
  EMBER_ISA_SELECT(asgd_step)(params, grads, axs, etas, mus, steps, o);
}

EMBER_DECLARE_ISA_KERNEL(void, rprop_step,
                         (const TensorList& params, const TensorList& grads, TensorList& prevs, TensorList& step_sizes,
                          TensorList& steps, const RpropOptions& o))
void rprop_step(const TensorList& params, const TensorList& grads, TensorList& prevs, TensorList& step_sizes,
                TensorList& steps, const RpropOptions& o) {
  EMBER_ISA_SELECT(rprop_step)(params, grads, prevs, step_sizes, steps, o);
}

}  // namespace ember::optim
