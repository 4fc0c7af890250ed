#include "ember/optim/group.h"

#include "ember/autograd/grad_mode.h"
#include "ember/ops/ops.h"

namespace ember::optim::detail {

Prepared prepare(const char* name, const TensorList& params, const TensorList& grads,
                 std::initializer_list<TensorList*> states) {
  EMBER_CHECK(states.size() <= static_cast<size_t>(kMaxStates), name, ": too many state lists");
  EMBER_CHECK_VALUE(grads.size() == params.size(), name, ": expected ", params.size(), " gradients, got ",
                    grads.size());
  Prepared pr;
  size_t n = params.size();
  pr.params.resize(n);
  pr.grads.resize(n);
  pr.states.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor& p = params[i];
    const Tensor& g = grads[i];
    EMBER_CHECK(p.defined() && g.defined(), name, ": parameter ", i, " or its gradient is undefined");
    ScalarType dt = p.dtype();
    if (dt != ScalarType::Float32 && dt != ScalarType::Float64)
      EMBER_NOT_IMPLEMENTED(name, ": parameters of dtype ", dtype_name(dt),
                            " are not supported (float32 and float64 are)");
    EMBER_CHECK(p.device().is_cpu() && g.device().is_cpu(), name, ": only CPU tensors are supported");
    EMBER_CHECK(g.dtype() == dt, name, ": gradient dtype ", dtype_name(g.dtype()), " does not match parameter dtype ",
                dtype_name(dt));
    EMBER_CHECK(g.sizes() == p.sizes(), name, ": gradient shape ", g.shape_str(), " does not match parameter shape ",
                p.shape_str());
    pr.total += p.numel();
    pr.params[i] = ember::contiguous(p);
    if (!pr.params[i].is_same(p)) pr.write_back.emplace_back(p, pr.params[i]);
    pr.grads[i] = ember::contiguous(g);
    size_t k = 0;
    for (TensorList* list : states) {
      EMBER_CHECK(list->size() == n, name, ": state list of length ", list->size(), " for ", n, " parameters");
      const Tensor& s = (*list)[i];
      EMBER_CHECK(s.defined() && s.dtype() == dt && s.sizes() == p.sizes() && s.device().is_cpu(), name,
                  ": state tensor of parameter ", i, " must be a CPU tensor of the parameter's dtype and shape");
      pr.states[i][k] = ember::contiguous(s);
      if (!pr.states[i][k].is_same(s)) pr.write_back.emplace_back(s, pr.states[i][k]);
      ++k;
    }
  }
  return pr;
}

void finish(Prepared& pr, const TensorList& params, std::initializer_list<TensorList*> states) {
  autograd::NoGradGuard no_grad;
  for (auto& [orig, copy] : pr.write_back) {
    Tensor dst = orig;
    ember::copy_(dst, copy);
  }
  for (const Tensor& p : params) p.bump_version("optimizer.step");
  for (TensorList* list : states)
    for (const Tensor& s : *list) s.bump_version("optimizer.step");
}

void ensure_state(TensorList& list, const TensorList& params, double value) {
  if (list.size() < params.size()) list.resize(params.size());
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i)
    if (!list[i].defined()) {
      list[i] = ember::empty_like(params[i]);
      ember::fill_(list[i], Scalar(value));
    }
}

void ensure_scalar(TensorList& list, size_t n, double value) {
  if (list.size() < n) list.resize(n);
  for (auto& t : list)
    if (!t.defined()) t = ember::full({}, Scalar(value), ScalarType::Float32);
}

double read_scalar(const Tensor& t) {
  EMBER_CHECK(t.defined() && t.numel() == 1, "optimizer: expected a one-element tensor for a scalar state");
  EMBER_CHECK(t.device().is_cpu(), "optimizer: scalar state must be on the CPU");
  return ember::contiguous(t.dtype() == ScalarType::Float64 ? t : ember::to_dtype(t, ScalarType::Float64))
      .data<double>()[0];
}

void write_scalar(const Tensor& t, double v) {
  autograd::NoGradGuard no_grad;
  Tensor dst = t;
  ember::fill_(dst, Scalar(v));
}

std::vector<double> bump_steps(TensorList& steps, size_t n) {
  ensure_scalar(steps, n, 0);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    // The counter keeps its dtype (float32 in PyTorch's state): round the sum through it.
    double v = read_scalar(steps[i]) + 1;
    write_scalar(steps[i], v);
    out[i] = read_scalar(steps[i]);
  }
  return out;
}

}  // namespace ember::optim::detail
