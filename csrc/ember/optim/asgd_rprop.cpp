// Averaged SGD and Rprop, as torch.optim's single-tensor algorithms, one pass per element.
#include <cmath>

#include "ember/optim/group.h"

// Kernel code from here on: compiled once per ISA level (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/optim/kernel.h"

namespace ember::optim {

void EMBER_ISA_KERNEL(asgd_step)(const TensorList& params, const TensorList& grads, TensorList& axs, TensorList& etas,
                                 TensorList& mus, TensorList& steps, const AsgdOptions& o) {
  size_t n = params.size();
  detail::ensure_state(axs, params);
  detail::ensure_scalar(etas, n, o.lr);
  detail::ensure_scalar(mus, n, 1.0);
  std::vector<double> step = detail::bump_steps(steps, n), eta(n), mu(n);
  for (size_t i = 0; i < n; ++i) {
    eta[i] = detail::read_scalar(etas[i]);
    mu[i] = detail::read_scalar(mus[i]);
  }
  detail::run("asgd", params, grads, {&axs}, [&]<typename T>(T, int64_t i, detail::Ptrs<T> q, int64_t len) {
    const T wd = static_cast<T>(o.weight_decay), decay = static_cast<T>(1 - o.lambd * eta[i]);
    const T neg_eta = static_cast<T>(-eta[i]), m = static_cast<T>(mu[i]);
    const bool copy = mu[i] == 1;
    T* __restrict ax = q.s[0];
    T* __restrict pp = q.p;
    const T* __restrict gp = q.g;
    detail::static_if(o.maximize, [&](auto kMax) {
      detail::static_if(o.weight_decay != 0, [&](auto kWd) {
        detail::static_if(copy, [&](auto kCopy) {
          for (int64_t k = 0; k < len; ++k) {
            T g = kMax ? -gp[k] : gp[k];
            if constexpr (kWd) g = g + wd * pp[k];
            T p = pp[k] * decay;
            p = p + neg_eta * g;
            pp[k] = p;
            ax[k] = kCopy ? p : ax[k] + (p - ax[k]) * m;
          }
        });
      });
    });
  });
  // PyTorch makes the new values float32 tensors before copying them into the state, so they are
  // rounded to float even when the state is float64.
  for (size_t i = 0; i < n; ++i) {
    detail::write_scalar(etas[i], static_cast<float>(o.lr / std::pow(1 + o.lambd * o.lr * step[i], o.alpha)));
    detail::write_scalar(mus[i], static_cast<float>(1 / std::max(1.0, step[i] - o.t0)));
  }
}

void EMBER_ISA_KERNEL(rprop_step)(const TensorList& params, const TensorList& grads, TensorList& prevs,
                                  TensorList& step_sizes, TensorList& steps, const RpropOptions& o) {
  size_t n = params.size();
  detail::ensure_state(prevs, params);
  detail::ensure_state(step_sizes, params, o.lr);
  detail::bump_steps(steps, n);
  detail::run("rprop", params, grads, {&prevs, &step_sizes},
              [&]<typename T>(T, int64_t, detail::Ptrs<T> q, int64_t len) {
                const T up = static_cast<T>(o.etaplus), down = static_cast<T>(o.etaminus);
                const T lo = static_cast<T>(o.step_size_min), hi = static_cast<T>(o.step_size_max);
                T* __restrict prev = q.s[0];
                T* __restrict size = q.s[1];
                T* __restrict pp = q.p;
                const T* __restrict gp = q.g;
                detail::static_if(o.maximize, [&](auto kMax) {
                  for (int64_t k = 0; k < len; ++k) {
                    T g = kMax ? -gp[k] : gp[k];
                    T prod = g * prev[k];
                    // torch's sign is 0 for NaN: a NaN product (a NaN gradient) keeps the step size
                    T factor = prod > 0 ? up : prod < 0 ? down : T(1);
                    T s = size[k] * factor;
                    s = std::isnan(s) ? s : std::min(std::max(s, lo), hi);
                    size[k] = s;
                    if (factor == down) g = 0;
                    T sg = g > 0 ? T(1) : g < 0 ? T(-1) : T(0);  // torch's sign: 0 for 0 and NaN
                    pp[k] = pp[k] + T(-1) * sg * s;
                    prev[k] = g;
                  }
                });
              });
}

}  // namespace ember::optim
#include "ember/cpu/isa_end.h"
