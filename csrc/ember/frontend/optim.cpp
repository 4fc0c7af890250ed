#include "ember/frontend/optim.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <unordered_set>

#include "ember/optim/optim.h"

namespace torch::optim {

std::unique_ptr<OptimizerParamState> OptimizerParamState::clone() const {
  throw ember::Error(
      "clone() has not been implemented for torch::optim::OptimizerParamState. Subclass "
      "torch::optim::OptimizerCloneableParamState<YourOptimizerParamState> instead.");
}
std::unique_ptr<OptimizerOptions> OptimizerOptions::clone() const {
  throw ember::Error(
      "clone() has not been implemented for torch::optim::OptimizerOptions. Subclass "
      "torch::optim::OptimizerCloneableOptions<YourOptimizerOptions> instead.");
}
double OptimizerOptions::get_lr() const {
  throw ember::Error(
      "OptimizerOptions::get_lr() has not been overridden and implemented in subclass of "
      "torch::optim::OptimizerOptions, you must override it in your subclass.");
}
void OptimizerOptions::set_lr(const double) {
  throw ember::Error(
      "OptimizerOptions::set_lr() has not been overridden and implemented in subclass of "
      "torch::optim::OptimizerOptions, you must override it in your subclass.");
}

OptimizerOptions& OptimizerParamGroup::options() {
  EMBER_CHECK(options_ != nullptr, "param group options are not set");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  EMBER_CHECK(options_ != nullptr, "param group options are not set");
  return *options_;
}

Optimizer::Optimizer(const std::vector<OptimizerParamGroup>& param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  for (const auto& g : param_groups) add_param_group(g);
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  for (const auto& p : param_group.params()) EMBER_CHECK(p.is_leaf(), "can't optimize a non-leaf Tensor");
  OptimizerParamGroup g(param_group.params(),
                        param_group.has_options() ? param_group.options().clone() : defaults_->clone());
  std::unordered_set<const void*> seen;
  for (const auto& group : param_groups_)
    for (const auto& p : group.params()) seen.insert(p.impl());
  for (const auto& p : g.params())
    EMBER_CHECK(!seen.count(p.impl()), "some parameters appear in more than one parameter group");
  param_groups_.push_back(std::move(g));
}

void Optimizer::add_parameters(const std::vector<Tensor>& parameters) {
  EMBER_CHECK(!param_groups_.empty(), "add_parameters: the optimizer has no param group");
  auto& params = param_groups_.back().params();
  params.insert(params.end(), parameters.begin(), parameters.end());
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& group : param_groups_)
    for (auto& p : group.params()) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
      } else if (g.grad_fn()) {
        p.set_grad(g.detach().zero_());
      } else {
        g.zero_();
      }
    }
}

const std::vector<Tensor>& Optimizer::parameters() const noexcept { return param_groups_.at(0).params(); }
std::vector<Tensor>& Optimizer::parameters() noexcept { return param_groups_.at(0).params(); }

size_t Optimizer::size() const noexcept {
  size_t n = 0;
  for (const auto& g : param_groups_) n += g.params().size();
  return n;
}

namespace {
// The parameters of a group that have gradients, with their gradients (as the fused steps take them).
struct Live {
  std::vector<ember::Tensor> params, grads;
  std::vector<const Tensor*> handles;
};
Live live_params(OptimizerParamGroup& group) {
  Live l;
  for (const Tensor& p : group.params()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    l.params.push_back(p);
    l.grads.push_back(g);
    l.handles.push_back(&p);
  }
  return l;
}
void check_lr(double lr) { EMBER_CHECK_VALUE(lr >= 0, "Invalid learning rate: ", lr); }
Tensor run_closure(const Optimizer::LossClosure& closure) {
  if (!closure) return {};
  AutoGradMode enable(true);
  return closure();
}
}  // namespace

// ---- SGD ----

SGD::SGD(const std::vector<OptimizerParamGroup>& param_groups, SGDOptions defaults)
    : Optimizer(param_groups, std::make_unique<SGDOptions>(defaults)) {
  check_lr(defaults.lr());
  EMBER_CHECK_VALUE(defaults.momentum() >= 0, "Invalid momentum value: ", defaults.momentum());
  EMBER_CHECK_VALUE(defaults.weight_decay() >= 0, "Invalid weight_decay value: ", defaults.weight_decay());
  EMBER_CHECK_VALUE(!defaults.nesterov() || (defaults.momentum() > 0 && defaults.dampening() == 0),
                    "Nesterov momentum requires a momentum and zero dampening");
}

Tensor SGD::step(LossClosure closure) {
  NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    auto& o = static_cast<SGDOptions&>(group.options());
    Live l = live_params(group);
    if (l.params.empty()) continue;
    std::vector<ember::Tensor> bufs;
    for (const Tensor* p : l.handles) {
      auto it = state_.find(p->impl());
      bufs.push_back(it != state_.end() ? static_cast<SGDParamState&>(*it->second).momentum_buffer() : Tensor());
    }
    ember::optim::SgdOptions eo;
    eo.lr = o.lr(), eo.momentum = o.momentum(), eo.dampening = o.dampening(), eo.weight_decay = o.weight_decay();
    eo.nesterov = o.nesterov();
    ember::optim::sgd_step(l.params, l.grads, bufs, eo);
    if (o.momentum() != 0)
      for (size_t i = 0; i < l.handles.size(); ++i) state_of<SGDParamState>(*l.handles[i]).momentum_buffer(bufs[i]);
  }
  return loss;
}

// ---- Adam / AdamW ----

namespace {
template <typename Options>
void adam_like(std::vector<OptimizerParamGroup>& groups, Optimizer& opt, bool decoupled,
               std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state) {
  for (auto& group : groups) {
    auto& o = static_cast<Options&>(group.options());
    Live l = live_params(group);
    if (l.params.empty()) continue;
    size_t n = l.params.size();
    std::vector<ember::Tensor> m(n), v(n), vmax(n), steps(n);
    for (size_t i = 0; i < n; ++i) {
      auto it = state.find(l.handles[i]->impl());
      if (it == state.end()) continue;
      auto& s = static_cast<AdamParamState&>(*it->second);
      m[i] = s.exp_avg(), v[i] = s.exp_avg_sq(), vmax[i] = s.max_exp_avg_sq(), steps[i] = s.step_tensor();
    }
    ember::optim::AdamOptions eo;
    eo.lr = o.lr(), eo.beta1 = std::get<0>(o.betas()), eo.beta2 = std::get<1>(o.betas()), eo.eps = o.eps();
    eo.weight_decay = o.weight_decay(), eo.amsgrad = o.amsgrad(), eo.decoupled_weight_decay = decoupled;
    ember::optim::adam_step(l.params, l.grads, m, v, vmax, steps, eo);
    for (size_t i = 0; i < n; ++i) {
      auto& slot = state[l.handles[i]->impl()];
      if (!slot) slot = std::make_unique<AdamParamState>();
      auto& s = static_cast<AdamParamState&>(*slot);
      s.exp_avg(m[i]).exp_avg_sq(v[i]).step_tensor(steps[i]);
      if (o.amsgrad()) s.max_exp_avg_sq(vmax[i]);
    }
  }
  (void)opt;
}
template <typename Options>
void check_adam(const Options& o) {
  check_lr(o.lr());
  EMBER_CHECK_VALUE(o.eps() >= 0, "Invalid epsilon value: ", o.eps());
  auto [b1, b2] = o.betas();
  EMBER_CHECK_VALUE(b1 >= 0 && b1 < 1, "Invalid beta parameter at index 0: ", b1);
  EMBER_CHECK_VALUE(b2 >= 0 && b2 < 1, "Invalid beta parameter at index 1: ", b2);
  EMBER_CHECK_VALUE(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
}
}  // namespace

Adam::Adam(const std::vector<OptimizerParamGroup>& param_groups, AdamOptions defaults)
    : Optimizer(param_groups, std::make_unique<AdamOptions>(defaults)) {
  check_adam(defaults);
}

Tensor Adam::step(LossClosure closure) {
  NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  adam_like<AdamOptions>(param_groups_, *this, false, state_);
  return loss;
}

AdamW::AdamW(const std::vector<OptimizerParamGroup>& param_groups, AdamWOptions defaults)
    : Optimizer(param_groups, std::make_unique<AdamWOptions>(defaults)) {
  check_adam(defaults);
}

Tensor AdamW::step(LossClosure closure) {
  NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  adam_like<AdamWOptions>(param_groups_, *this, true, state_);
  return loss;
}

// ---- RMSprop ----

RMSprop::RMSprop(const std::vector<OptimizerParamGroup>& param_groups, RMSpropOptions defaults)
    : Optimizer(param_groups, std::make_unique<RMSpropOptions>(defaults)) {
  check_lr(defaults.lr());
  EMBER_CHECK_VALUE(defaults.eps() >= 0, "Invalid epsilon value: ", defaults.eps());
  EMBER_CHECK_VALUE(defaults.momentum() >= 0, "Invalid momentum value: ", defaults.momentum());
  EMBER_CHECK_VALUE(defaults.weight_decay() >= 0, "Invalid weight_decay value: ", defaults.weight_decay());
  EMBER_CHECK_VALUE(defaults.alpha() >= 0, "Invalid alpha value: ", defaults.alpha());
}

Tensor RMSprop::step(LossClosure closure) {
  NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    auto& o = static_cast<RMSpropOptions&>(group.options());
    Live l = live_params(group);
    if (l.params.empty()) continue;
    size_t n = l.params.size();
    std::vector<ember::Tensor> sq(n), mom(n), gavg(n), steps(n);
    for (size_t i = 0; i < n; ++i) {
      auto it = state_.find(l.handles[i]->impl());
      if (it == state_.end()) continue;
      auto& s = static_cast<RMSpropParamState&>(*it->second);
      sq[i] = s.square_avg(), mom[i] = s.momentum_buffer(), gavg[i] = s.grad_avg(), steps[i] = s.step_tensor();
    }
    ember::optim::RmspropOptions eo;
    eo.lr = o.lr(), eo.alpha = o.alpha(), eo.eps = o.eps(), eo.weight_decay = o.weight_decay();
    eo.momentum = o.momentum(), eo.centered = o.centered();
    ember::optim::rmsprop_step(l.params, l.grads, sq, mom, gavg, steps, eo);
    for (size_t i = 0; i < n; ++i) {
      auto& s = state_of<RMSpropParamState>(*l.handles[i]);
      s.square_avg(sq[i]).step_tensor(steps[i]);
      if (o.momentum() > 0) s.momentum_buffer(mom[i]);
      if (o.centered()) s.grad_avg(gavg[i]);
    }
  }
  return loss;
}

// ---- Adagrad ----

Adagrad::Adagrad(const std::vector<OptimizerParamGroup>& param_groups, AdagradOptions defaults)
    : Optimizer(param_groups, std::make_unique<AdagradOptions>(defaults)) {
  check_lr(defaults.lr());
  EMBER_CHECK_VALUE(defaults.lr_decay() >= 0, "Invalid lr_decay value: ", defaults.lr_decay());
  EMBER_CHECK_VALUE(defaults.weight_decay() >= 0, "Invalid weight_decay value: ", defaults.weight_decay());
  EMBER_CHECK_VALUE(defaults.initial_accumulator_value() >= 0,
                    "Invalid initial_accumulator_value value: ", defaults.initial_accumulator_value());
  EMBER_CHECK_VALUE(defaults.eps() >= 0, "Invalid epsilon value: ", defaults.eps());
}

Tensor Adagrad::step(LossClosure closure) {
  NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    auto& o = static_cast<AdagradOptions&>(group.options());
    Live l = live_params(group);
    if (l.params.empty()) continue;
    size_t n = l.params.size();
    std::vector<ember::Tensor> sums(n), steps(n);
    for (size_t i = 0; i < n; ++i) {
      auto it = state_.find(l.handles[i]->impl());
      if (it == state_.end()) continue;
      auto& s = static_cast<AdagradParamState&>(*it->second);
      sums[i] = s.sum(), steps[i] = s.step_tensor();
    }
    ember::optim::AdagradOptions eo;
    eo.lr = o.lr(), eo.lr_decay = o.lr_decay(), eo.weight_decay = o.weight_decay(), eo.eps = o.eps();
    eo.initial_accumulator_value = o.initial_accumulator_value();
    ember::optim::adagrad_step(l.params, l.grads, sums, steps, eo);
    for (size_t i = 0; i < n; ++i) state_of<AdagradParamState>(*l.handles[i]).sum(sums[i]).step_tensor(steps[i]);
  }
  return loss;
}

// ---- LBFGS (PyTorch's algorithm, without a line search) ----

LBFGS::LBFGS(const std::vector<OptimizerParamGroup>& param_groups, LBFGSOptions defaults)
    : Optimizer(param_groups, std::make_unique<LBFGSOptions>(defaults)) {
  EMBER_CHECK(param_groups_.size() == 1, "LBFGS doesn't support per-parameter options (parameter groups)");
  if (defaults.line_search_fn())
    EMBER_CHECK_VALUE(*defaults.line_search_fn() == "strong_wolfe", "only 'strong_wolfe' is supported");
}

Tensor LBFGS::gather_flat_grad() {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups_[0].params()) {
    Tensor g = p.grad();
    views.push_back(g.defined() ? g.reshape({-1}) : at::zeros({p.numel()}, p.options().requires_grad(false)));
  }
  return at::cat(views, 0);
}

void LBFGS::add_grad(double step_size, const Tensor& update) {
  int64_t offset = 0;
  for (const Tensor& p : param_groups_[0].params()) {
    int64_t n = p.numel();
    p.add_(update.slice(0, offset, offset + n).view_as(p), step_size);
    offset += n;
  }
}

Tensor LBFGS::step(LossClosure closure) {
  NoGradGuard no_grad;
  EMBER_CHECK(closure != nullptr, "LBFGS requires a closure");
  auto& o = static_cast<LBFGSOptions&>(param_groups_[0].options());
  if (o.line_search_fn())
    EMBER_NOT_IMPLEMENTED(
        "LBFGS with line_search_fn='strong_wolfe' is not implemented in Ember's C++ frontend; "
        "use line_search_fn = std::nullopt (a fixed step)");
  double lr = o.lr(), tolerance_grad = o.tolerance_grad(), tolerance_change = o.tolerance_change();
  int64_t max_iter = o.max_iter(), max_eval = o.max_eval().value_or(max_iter * 5 / 4);
  int64_t history_size = o.history_size();
  auto& st = state_of<LBFGSParamState>(param_groups_[0].params().at(0));

  Tensor orig_loss = run_closure(closure);
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  st.func_evals(st.func_evals() + 1);
  Tensor flat_grad = gather_flat_grad();
  bool opt_cond = flat_grad.abs().max().item<double>() <= tolerance_grad;
  if (opt_cond) return orig_loss;

  Tensor d = st.d(), H_diag = st.H_diag(), prev_flat_grad = st.prev_flat_grad();
  double t = st.t(), prev_loss = st.prev_loss();
  std::vector<Tensor> old_dirs = st.old_dirs(), old_stps = st.old_stps(), ro = st.ro();
  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    st.n_iter(st.n_iter() + 1);
    if (st.n_iter() == 1) {
      d = flat_grad.neg();
      old_dirs.clear(), old_stps.clear(), ro.clear();
      H_diag = at::tensor(1.0, flat_grad.scalar_type());
    } else {
      // Update the memory with the last step's curvature pair (y, s), when it is positive.
      Tensor y = flat_grad.sub(prev_flat_grad);
      Tensor s = d.mul(t);
      Tensor ys = y.dot(s);
      if (ys.item<double>() > 1e-10) {
        if (static_cast<int64_t>(old_dirs.size()) == history_size) {
          old_dirs.erase(old_dirs.begin());
          old_stps.erase(old_stps.begin());
          ro.erase(ro.begin());
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(1.0 / ys);
        H_diag = ys / y.dot(y);
      }
      // Two-loop recursion: d = -H grad.
      size_t num_old = old_dirs.size();
      std::vector<Tensor> al(num_old);
      Tensor q = flat_grad.neg();
      for (size_t i = num_old; i-- > 0;) {
        al[i] = old_stps[i].dot(q) * ro[i];
        q.add_(old_dirs[i], -al[i].item<double>());
      }
      d = q * H_diag;
      Tensor r = d;
      for (size_t i = 0; i < num_old; ++i) {
        Tensor be_i = old_dirs[i].dot(r) * ro[i];
        r.add_(old_stps[i], (al[i] - be_i).item<double>());
      }
    }
    if (!prev_flat_grad.defined())
      prev_flat_grad = flat_grad.clone(at::MemoryFormat::Contiguous);
    else
      prev_flat_grad.copy_(flat_grad);
    prev_loss = loss;
    if (st.n_iter() == 1)
      t = std::min(1.0, 1.0 / flat_grad.abs().sum().item<double>()) * lr;
    else
      t = lr;
    double gtd = flat_grad.dot(d).item<double>();
    if (gtd > -tolerance_change) break;
    int64_t ls_func_evals = 0;
    add_grad(t, d);
    if (n_iter != max_iter) {
      loss = run_closure(closure).item<double>();
      flat_grad = gather_flat_grad();
      opt_cond = flat_grad.abs().max().item<double>() <= tolerance_grad;
      ls_func_evals = 1;
    }
    current_evals += ls_func_evals;
    st.func_evals(st.func_evals() + ls_func_evals);
    if (n_iter == max_iter) break;
    if (current_evals >= max_eval) break;
    if (opt_cond) break;
    if (d.mul(t).abs().max().item<double>() <= tolerance_change) break;
    if (std::abs(loss - prev_loss) < tolerance_change) break;
  }
  st.d(d).t(t).old_dirs(old_dirs).old_stps(old_stps).ro(ro).H_diag(H_diag).prev_flat_grad(prev_flat_grad);
  st.prev_loss(prev_loss);
  return orig_loss;
}

// ---- schedulers ----

void LRScheduler::step() {
  set_optimizer_lrs(get_lrs());
  ++step_count_;
}

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const auto& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

void LRScheduler::set_optimizer_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_.param_groups();
  EMBER_CHECK(lrs.size() == groups.size(), "Number of learning rates not equal to the number of param groups\n",
              "Number of learning rates given: ", lrs.size(), "\nNumber of param groups: ", groups.size());
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
}

StepLR::StepLR(Optimizer& optimizer, unsigned step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK_VALUE(step_size > 0, "StepLR: step_size must be positive");
}

std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  if (step_count_ != 0 && step_count_ % step_size_ == 0)
    for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<unsigned> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
}

std::vector<double> MultiStepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  for (unsigned m : milestones_)
    if (m == step_count_ + 1)  // the epoch this step reaches, as torch.optim.lr_scheduler counts
      for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {}

std::vector<double> ExponentialLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, unsigned t_max, double eta_min)
    : LRScheduler(optimizer), base_lrs_(get_current_lrs()), t_max_(t_max), eta_min_(eta_min) {
  EMBER_CHECK_VALUE(t_max > 0, "CosineAnnealingLR: t_max must be positive");
}

std::vector<double> CosineAnnealingLR::get_lrs() {
  // The closed form of torch's schedule at step_count_.
  std::vector<double> lrs;
  double c = std::cos(M_PI * static_cast<double>(step_count_ + 1) / static_cast<double>(t_max_));
  for (double base : base_lrs_) lrs.push_back(eta_min_ + (base - eta_min_) * (1 + c) / 2);
  return lrs;
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(unsigned)> lr_lambda)
    : LRScheduler(optimizer), base_lrs_(get_current_lrs()), lambda_(std::move(lr_lambda)) {}

std::vector<double> LambdaLR::get_lrs() {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * lambda_(step_count_ + 1));
  return lrs;
}

ReduceLROnPlateauScheduler::ReduceLROnPlateauScheduler(Optimizer& optimizer, SchedulerMode mode, float factor,
                                                       int patience, double threshold, ThresholdMode threshold_mode,
                                                       int cooldown, const std::vector<float>& min_lr, double eps,
                                                       bool verbose)
    : optimizer_(optimizer),
      mode_(mode),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      threshold_mode_(threshold_mode),
      cooldown_(cooldown),
      eps_(eps),
      verbose_(verbose) {
  EMBER_CHECK_VALUE(factor < 1.0, "ReduceLROnPlateauScheduler does not support a factor >= 1.0.");
  size_t n = optimizer.param_groups().size();
  if (min_lr.empty())
    min_lrs_.assign(n, 0.0f);
  else if (min_lr.size() == 1)
    min_lrs_.assign(n, min_lr[0]);
  else {
    EMBER_CHECK_VALUE(min_lr.size() == n, "Number of learning rates not equal to the number of param groups");
    min_lrs_ = min_lr;
  }
  best_ = mode == min ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
}

bool ReduceLROnPlateauScheduler::is_better(float a) const {
  if (mode_ == min && threshold_mode_ == rel) return a < best_ * (1.0 - threshold_);
  if (mode_ == min && threshold_mode_ == abs) return a < best_ - threshold_;
  if (mode_ == max && threshold_mode_ == rel) return a > best_ * (threshold_ + 1.0);
  return a > best_ + threshold_;
}

void ReduceLROnPlateauScheduler::step(float metric) {
  last_epoch_ += 1;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    num_bad_epochs_ += 1;
  }
  if (cooldown_counter_ > 0) {
    cooldown_counter_ -= 1;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > patience_) {
    reduce_lr(last_epoch_);
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
}

void ReduceLROnPlateauScheduler::reduce_lr(int epoch) {
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    double old_lr = groups[i].options().get_lr();
    double new_lr = std::max(old_lr * factor_, static_cast<double>(min_lrs_[i]));
    if (old_lr - new_lr > eps_) {
      groups[i].options().set_lr(new_lr);
      if (verbose_)
        std::cout << "Epoch " << epoch << ": reducing learning rate of group " << i << " to " << new_lr << std::endl;
    }
  }
}

}  // namespace torch::optim
