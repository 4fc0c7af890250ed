// Adagrad, RMSprop and Adadelta, as torch.optim's single-tensor algorithms, one pass per element.
#include <cmath>

#include "ember/optim/group.h"

// Kernel code from here on: compiled once per ISA level (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/optim/kernel.h"

namespace ember::optim {

void EMBER_ISA_KERNEL(adagrad_step)(const TensorList& params, const TensorList& grads, TensorList& state_sums,
                                    TensorList& steps, const AdagradOptions& o) {
  size_t n = params.size();
  detail::ensure_state(state_sums, params, o.initial_accumulator_value);
  std::vector<double> step = detail::bump_steps(steps, n), clr(n);
  for (size_t i = 0; i < n; ++i) clr[i] = o.lr / (1 + (step[i] - 1) * o.lr_decay);
  detail::run("adagrad", params, grads, {&state_sums}, [&]<typename T>(T, int64_t i, detail::Ptrs<T> q, int64_t len) {
    const T wd = static_cast<T>(o.weight_decay), eps = static_cast<T>(o.eps), neg_clr = static_cast<T>(-clr[i]);
    T* __restrict sum = q.s[0];
    T* __restrict pp = q.p;
    const T* __restrict gp = q.g;
    detail::static_if(o.maximize, [&](auto kMax) {
      detail::static_if(o.weight_decay != 0, [&](auto kWd) {
        for (int64_t k = 0; k < len; ++k) {
          T g = kMax ? -gp[k] : gp[k];
          if constexpr (kWd) g = g + wd * pp[k];
          T s = sum[k] + g * g;
          sum[k] = s;
          pp[k] = pp[k] + neg_clr * g / (std::sqrt(s) + eps);
        }
      });
    });
  });
}

void EMBER_ISA_KERNEL(rmsprop_step)(const TensorList& params, const TensorList& grads, TensorList& square_avgs,
                                    TensorList& momentum_buffers, TensorList& grad_avgs, TensorList& steps,
                                    const RmspropOptions& o) {
  size_t n = params.size();
  bool use_momentum = o.momentum > 0;
  detail::ensure_state(square_avgs, params);
  if (use_momentum) detail::ensure_state(momentum_buffers, params);
  if (o.centered) detail::ensure_state(grad_avgs, params);
  detail::bump_steps(steps, n);
  auto body = [&]<typename T>(T, int64_t, detail::Ptrs<T> q, int64_t len) {
    const T wd = static_cast<T>(o.weight_decay), eps = static_cast<T>(o.eps), alpha = static_cast<T>(o.alpha);
    const T w = static_cast<T>(1 - o.alpha), mom = static_cast<T>(o.momentum), neg_lr = static_cast<T>(-o.lr);
    const bool small = w < T(0.5);
    T* __restrict sq = q.s[0];
    T* __restrict buf = use_momentum ? q.s[1] : nullptr;
    T* __restrict gavg = o.centered ? q.s[use_momentum ? 2 : 1] : nullptr;
    T* __restrict pp = q.p;
    const T* __restrict gp = q.g;
    detail::static_if(o.maximize, [&](auto kMax) {
      detail::static_if(o.weight_decay != 0, [&](auto kWd) {
        detail::static_if(o.centered, [&](auto kCen) {
          detail::static_if(use_momentum, [&](auto kMom) {
            for (int64_t k = 0; k < len; ++k) {
              T g = kMax ? -gp[k] : gp[k];
              if constexpr (kWd) g = g + wd * pp[k];
              T s = sq[k] * alpha + w * g * g;
              sq[k] = s;
              T avg;
              if constexpr (kCen) {
                T ga = gavg[k];
                ga = detail::lerp(ga, g, w, small);
                gavg[k] = ga;
                avg = std::sqrt(s + T(-1) * ga * ga);
              } else {
                avg = std::sqrt(s);
              }
              avg = avg + eps;
              if constexpr (kMom) {
                T b = buf[k] * mom + g / avg;
                buf[k] = b;
                pp[k] = pp[k] + neg_lr * b;
              } else {
                pp[k] = pp[k] + neg_lr * g / avg;
              }
            }
          });
        });
      });
    });
  };
  if (use_momentum && o.centered)
    detail::run("rmsprop", params, grads, {&square_avgs, &momentum_buffers, &grad_avgs}, body);
  else if (use_momentum)
    detail::run("rmsprop", params, grads, {&square_avgs, &momentum_buffers}, body);
  else if (o.centered)
    detail::run("rmsprop", params, grads, {&square_avgs, &grad_avgs}, body);
  else
    detail::run("rmsprop", params, grads, {&square_avgs}, body);
}

void EMBER_ISA_KERNEL(adadelta_step)(const TensorList& params, const TensorList& grads, TensorList& square_avgs,
                                     TensorList& acc_deltas, TensorList& steps, const AdadeltaOptions& o) {
  size_t n = params.size();
  detail::ensure_state(square_avgs, params);
  detail::ensure_state(acc_deltas, params);
  detail::bump_steps(steps, n);
  detail::run("adadelta", params, grads, {&square_avgs, &acc_deltas},
              [&]<typename T>(T, int64_t, detail::Ptrs<T> q, int64_t len) {
                const T wd = static_cast<T>(o.weight_decay), eps = static_cast<T>(o.eps), rho = static_cast<T>(o.rho);
                const T w = static_cast<T>(1 - o.rho), neg_lr = static_cast<T>(-o.lr);
                T* __restrict sq = q.s[0];
                T* __restrict acc = q.s[1];
                T* __restrict pp = q.p;
                const T* __restrict gp = q.g;
                detail::static_if(o.maximize, [&](auto kMax) {
                  detail::static_if(o.weight_decay != 0, [&](auto kWd) {
                    for (int64_t k = 0; k < len; ++k) {
                      T g = kMax ? -gp[k] : gp[k];
                      if constexpr (kWd) g = g + wd * pp[k];
                      T s = sq[k] * rho + w * g * g;
                      sq[k] = s;
                      T std_ = std::sqrt(s + eps);
                      T delta = std::sqrt(acc[k] + eps) / std_ * g;
                      acc[k] = acc[k] * rho + w * delta * delta;
                      pp[k] = pp[k] + neg_lr * delta;
                    }
                  });
                });
              });
}

}  // namespace ember::optim
#include "ember/cpu/isa_end.h"
