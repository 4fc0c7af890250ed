// SGD with momentum, dampening, Nesterov momentum and weight decay, as torch.optim.SGD.
#include "ember/ops/ops.h"
#include "ember/optim/group.h"

// Kernel code from here on: compiled once per ISA level (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/optim/kernel.h"

namespace ember::optim {

void EMBER_ISA_KERNEL(sgd_step)(const TensorList& params, const TensorList& grads, TensorList& momentum_buffers,
                                const SgdOptions& o) {
  size_t n = params.size();
  bool use_momentum = o.momentum != 0;
  std::vector<char> first(n, 0);  // a new buffer starts as the (decayed) gradient itself
  if (use_momentum) {
    if (momentum_buffers.size() < n) momentum_buffers.resize(n);
    for (size_t i = 0; i < n; ++i)
      if (!momentum_buffers[i].defined()) {
        momentum_buffers[i] = ember::empty_like(params[i]);
        first[i] = 1;
      }
  }
  TensorList none;
  auto body = [&]<typename T>(T, int64_t i, detail::Ptrs<T> q, int64_t len) {
    const T wd = static_cast<T>(o.weight_decay), mom = static_cast<T>(o.momentum);
    const T damp = static_cast<T>(1 - o.dampening), neg_lr = static_cast<T>(-o.lr);
    const bool fresh = use_momentum && first[i];
    T* __restrict buf = q.s[0];
    T* __restrict pp = q.p;
    const T* __restrict gp = q.g;
    detail::static_if(o.maximize, [&](auto kMax) {
      detail::static_if(o.weight_decay != 0, [&](auto kWd) {
        detail::static_if(use_momentum, [&](auto kMom) {
          detail::static_if(o.nesterov, [&](auto kNesterov) {
            for (int64_t k = 0; k < len; ++k) {
              T g = kMax ? -gp[k] : gp[k];
              if constexpr (kWd) g = g + wd * pp[k];
              if constexpr (kMom) {
                T b = fresh ? g : buf[k] * mom + damp * g;
                buf[k] = b;
                g = kNesterov ? g + mom * b : b;
              }
              pp[k] = pp[k] + neg_lr * g;
            }
          });
        });
      });
    });
  };
  if (use_momentum)
    detail::run("sgd", params, grads, {&momentum_buffers}, body);
  else
    detail::run("sgd", params, grads, {}, body);
}

}  // namespace ember::optim
#include "ember/cpu/isa_end.h"
