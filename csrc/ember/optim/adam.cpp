// The Adam family: Adam/AdamW (amsgrad), Adamax, NAdam, RAdam, as torch.optim's single-tensor
// algorithms (PyTorch's default on CPU), each element updated in one pass.
#include <cmath>

#include "ember/optim/group.h"

// Kernel code from here on: compiled once per ISA level (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/optim/kernel.h"

namespace ember::optim {
using detail::apply_weight_decay;
using detail::lerp;
using detail::static_if;

void EMBER_ISA_KERNEL(adam_step)(const TensorList& params, const TensorList& grads, TensorList& exp_avgs,
                                 TensorList& exp_avg_sqs, TensorList& max_exp_avg_sqs, TensorList& steps,
                                 const AdamOptions& o) {
  size_t n = params.size();
  detail::ensure_state(exp_avgs, params);
  detail::ensure_state(exp_avg_sqs, params);
  if (o.amsgrad) detail::ensure_state(max_exp_avg_sqs, params);
  std::vector<double> step = detail::bump_steps(steps, n);
  std::vector<double> step_size(n), bc2_sqrt(n);
  for (size_t i = 0; i < n; ++i) {
    step_size[i] = o.lr / (1 - std::pow(o.beta1, step[i]));
    bc2_sqrt[i] = std::sqrt(1 - std::pow(o.beta2, step[i]));
  }
  auto body = [&]<typename T>(T, int64_t i, detail::Ptrs<T> q, int64_t len) {
    const T wd = static_cast<T>(o.weight_decay), decay = static_cast<T>(1 - o.lr * o.weight_decay);
    const T w1 = static_cast<T>(1 - o.beta1), b2 = static_cast<T>(o.beta2), w2 = static_cast<T>(1 - o.beta2);
    const T eps = static_cast<T>(o.eps), bc2 = static_cast<T>(bc2_sqrt[i]), neg_step = static_cast<T>(-step_size[i]);
    const bool small = w1 < T(0.5);
    T* __restrict m = q.s[0], * __restrict v = q.s[1], * __restrict vmax = q.s[2];
    T* __restrict pp = q.p;
    const T* __restrict gp = q.g;
    static_if(o.maximize, [&](auto kMax) {
      static_if(o.weight_decay != 0, [&](auto kWd) {
        static_if(o.decoupled_weight_decay, [&](auto kDecoupled) {
          static_if(o.amsgrad, [&](auto kAms) {
            for (int64_t k = 0; k < len; ++k) {
              T g = kMax ? -gp[k] : gp[k];
              T p = pp[k];
              apply_weight_decay<kWd, kDecoupled>(g, p, wd, decay);
              T mk = lerp(m[k], g, w1, small);
              T vk = v[k] * b2 + w2 * g * g;
              m[k] = mk;
              v[k] = vk;
              if constexpr (kAms) {
                vk = vmax[k] > vk ? vmax[k] : vk;
                vmax[k] = vk;
              }
              T denom = std::sqrt(vk) / bc2 + eps;
              pp[k] = p + neg_step * mk / denom;
            }
          });
        });
      });
    });
  };
  if (o.amsgrad)
    detail::run("adam", params, grads, {&exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs}, body);
  else
    detail::run("adam", params, grads, {&exp_avgs, &exp_avg_sqs}, body);
}

void EMBER_ISA_KERNEL(adamax_step)(const TensorList& params, const TensorList& grads, TensorList& exp_avgs,
                                   TensorList& exp_infs, TensorList& steps, const AdamaxOptions& o) {
  size_t n = params.size();
  detail::ensure_state(exp_avgs, params);
  detail::ensure_state(exp_infs, params);
  std::vector<double> step = detail::bump_steps(steps, n), clr(n);
  for (size_t i = 0; i < n; ++i) clr[i] = o.lr / (1 - std::pow(o.beta1, step[i]));
  detail::run(
      "adamax", params, grads, {&exp_avgs, &exp_infs}, [&]<typename T>(T, int64_t i, detail::Ptrs<T> q, int64_t len) {
        const T wd = static_cast<T>(o.weight_decay), w1 = static_cast<T>(1 - o.beta1), b2 = static_cast<T>(o.beta2);
        const T eps = static_cast<T>(o.eps), neg_clr = static_cast<T>(-clr[i]);
        T* __restrict m = q.s[0];
        T* __restrict u = q.s[1];
        T* __restrict pp = q.p;
        const T* __restrict gp = q.g;
        const bool small = w1 < T(0.5);
        static_if(o.maximize, [&](auto kMax) {
          static_if(o.weight_decay != 0, [&](auto kWd) {
            for (int64_t k = 0; k < len; ++k) {
              T g = kMax ? -gp[k] : gp[k];
              if constexpr (kWd) g = g + wd * pp[k];
              T mk = lerp(m[k], g, w1, small);
              T a = u[k] * b2, b = std::abs(g) + eps;
              T uk = (a >= b || std::isnan(a)) ? a : b;  // amax propagates NaN
              m[k] = mk;
              u[k] = uk;
              pp[k] = pp[k] + neg_clr * mk / uk;
            }
          });
        });
      });
}

void EMBER_ISA_KERNEL(nadam_step)(const TensorList& params, const TensorList& grads, TensorList& exp_avgs,
                                  TensorList& exp_avg_sqs, TensorList& mu_products, TensorList& steps,
                                  const NadamOptions& o) {
  size_t n = params.size();
  detail::ensure_state(exp_avgs, params);
  detail::ensure_state(exp_avg_sqs, params);
  detail::ensure_scalar(mu_products, n, 1.0);
  std::vector<double> step = detail::bump_steps(steps, n), bc2(n), c_grad(n), c_avg(n);
  for (size_t i = 0; i < n; ++i) {
    bc2[i] = 1 - std::pow(o.beta2, step[i]);
    double mu = o.beta1 * (1 - 0.5 * std::pow(0.96, step[i] * o.momentum_decay));
    double mu_next = o.beta1 * (1 - 0.5 * std::pow(0.96, (step[i] + 1) * o.momentum_decay));
    // The product lives in a 0-d tensor (float32 unless loaded for float64 params): multiply in its dtype.
    double prod = detail::read_scalar(mu_products[i]) * mu;
    if (mu_products[i].dtype() == ScalarType::Float32)
      prod = static_cast<float>(detail::read_scalar(mu_products[i])) * static_cast<float>(mu);
    detail::write_scalar(mu_products[i], prod);
    double mp = detail::read_scalar(mu_products[i]);
    c_grad[i] = -o.lr * (1 - mu) / (1 - mp);
    c_avg[i] = -o.lr * mu_next / (1 - mp * mu_next);
  }
  detail::run(
      "nadam", params, grads, {&exp_avgs, &exp_avg_sqs}, [&]<typename T>(T, int64_t i, detail::Ptrs<T> q, int64_t len) {
        const T wd = static_cast<T>(o.weight_decay), decay = static_cast<T>(1 - o.lr * o.weight_decay);
        const T w1 = static_cast<T>(1 - o.beta1), b2 = static_cast<T>(o.beta2), w2 = static_cast<T>(1 - o.beta2);
        const T eps = static_cast<T>(o.eps), bc = static_cast<T>(bc2[i]);
        const T cg = static_cast<T>(c_grad[i]), ca = static_cast<T>(c_avg[i]);
        T* __restrict m = q.s[0];
        T* __restrict v = q.s[1];
        T* __restrict pp = q.p;
        const T* __restrict gp = q.g;
        const bool small = w1 < T(0.5);
        static_if(o.maximize, [&](auto kMax) {
          static_if(o.weight_decay != 0, [&](auto kWd) {
            static_if(o.decoupled_weight_decay, [&](auto kDecoupled) {
              for (int64_t k = 0; k < len; ++k) {
                T g = kMax ? -gp[k] : gp[k];
                T p = pp[k];
                apply_weight_decay<kWd, kDecoupled>(g, p, wd, decay);
                T mk = lerp(m[k], g, w1, small);
                T vk = v[k] * b2 + w2 * g * g;
                m[k] = mk;
                v[k] = vk;
                T denom = std::sqrt(vk / bc) + eps;
                p = p + cg * g / denom;
                pp[k] = p + ca * mk / denom;
              }
            });
          });
        });
      });
}

void EMBER_ISA_KERNEL(radam_step)(const TensorList& params, const TensorList& grads, TensorList& exp_avgs,
                                  TensorList& exp_avg_sqs, TensorList& steps, const RadamOptions& o) {
  size_t n = params.size();
  detail::ensure_state(exp_avgs, params);
  detail::ensure_state(exp_avg_sqs, params);
  std::vector<double> step = detail::bump_steps(steps, n), bc1(n), bc2_sqrt(n), rect(n);
  double rho_inf = 2 / (1 - o.beta2) - 1;
  for (size_t i = 0; i < n; ++i) {
    bc1[i] = 1 - std::pow(o.beta1, step[i]);
    double bc2 = 1 - std::pow(o.beta2, step[i]);
    bc2_sqrt[i] = std::sqrt(bc2);
    double rho_t = rho_inf - 2 * step[i] * std::pow(o.beta2, step[i]) / bc2;
    // rect < 0: no variance rectification yet (plain momentum step)
    rect[i] = rho_t > 5 ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : -1;
  }
  detail::run(
      "radam", params, grads, {&exp_avgs, &exp_avg_sqs}, [&]<typename T>(T, int64_t i, detail::Ptrs<T> q, int64_t len) {
        const T wd = static_cast<T>(o.weight_decay), decay = static_cast<T>(1 - o.lr * o.weight_decay);
        const T w1 = static_cast<T>(1 - o.beta1), b2 = static_cast<T>(o.beta2), w2 = static_cast<T>(1 - o.beta2);
        const T eps = static_cast<T>(o.eps), b1c = static_cast<T>(bc1[i]), lr = static_cast<T>(o.lr);
        const T b2s = static_cast<T>(bc2_sqrt[i]), r = static_cast<T>(rect[i]);
        const bool rectify = rect[i] >= 0;
        T* __restrict m = q.s[0];
        T* __restrict v = q.s[1];
        T* __restrict pp = q.p;
        const T* __restrict gp = q.g;
        const bool small = w1 < T(0.5);
        static_if(o.maximize, [&](auto kMax) {
          static_if(o.weight_decay != 0, [&](auto kWd) {
            static_if(o.decoupled_weight_decay, [&](auto kDecoupled) {
              static_if(rectify, [&](auto kRectify) {
                for (int64_t k = 0; k < len; ++k) {
                  T g = kMax ? -gp[k] : gp[k];
                  T p = pp[k];
                  apply_weight_decay<kWd, kDecoupled>(g, p, wd, decay);
                  T mk = lerp(m[k], g, w1, small);
                  T vk = v[k] * b2 + w2 * g * g;
                  m[k] = mk;
                  v[k] = vk;
                  T corrected = mk / b1c;
                  if constexpr (kRectify) {
                    T adaptive = b2s / (std::sqrt(vk) + eps);
                    pp[k] = p - corrected * lr * adaptive * r;
                  } else {
                    pp[k] = p - corrected * lr;
                  }
                }
              });
            });
          });
        });
      });
}

}  // namespace ember::optim
#include "ember/cpu/isa_end.h"
