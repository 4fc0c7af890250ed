// torch::optim: optimizers with libtorch's classes (Optimizer, param groups, *Options, per-
// parameter state) over ember's fused update kernels (ember/optim/optim.h, the same calls the
// Python optimizers make), plus LBFGS and the learning-rate schedulers.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ember/frontend/nn_module.h"
#include "ember/frontend/nn_options.h"

namespace torch::optim {

using at::Tensor;

class OptimizerParamState {
 public:
  OptimizerParamState() = default;
  OptimizerParamState(const OptimizerParamState&) = default;
  OptimizerParamState& operator=(const OptimizerParamState&) = default;
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const;
};

template <typename Derived>
class OptimizerCloneableParamState : public OptimizerParamState {
 public:
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

class OptimizerOptions {
 public:
  OptimizerOptions() = default;
  OptimizerOptions(const OptimizerOptions&) = default;
  OptimizerOptions& operator=(const OptimizerOptions&) = default;
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const;
  virtual double get_lr() const;
  virtual void set_lr(const double lr);
};

template <typename Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// Parameters that share options; groups without their own options use the optimizer's defaults.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(const OptimizerParamGroup& g)
      : params_(g.params()), options_(g.has_options() ? g.options().clone() : nullptr) {}
  OptimizerParamGroup& operator=(const OptimizerParamGroup& g) {
    params_ = g.params();
    options_ = g.has_options() ? g.options().clone() : nullptr;
    return *this;
  }
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  Optimizer(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = default;
  explicit Optimizer(const std::vector<OptimizerParamGroup>& param_groups, std::unique_ptr<OptimizerOptions> defaults);
  explicit Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults)
      : Optimizer(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(parameters))}, std::move(defaults)) {}
  virtual ~Optimizer() = default;

  virtual void add_param_group(const OptimizerParamGroup& param_group);
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  void add_parameters(const std::vector<Tensor>& parameters);
  // Drops the gradients (set_to_none) or zeroes them in place.
  void zero_grad(bool set_to_none = true);
  const std::vector<Tensor>& parameters() const noexcept;
  std::vector<Tensor>& parameters() noexcept;
  size_t size() const noexcept;
  OptimizerOptions& defaults() noexcept { return *defaults_; }
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() noexcept { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return param_groups_; }
  // Per-parameter state, keyed by the parameter's TensorImpl (as libtorch keys it).
  std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state() noexcept { return state_; }
  const std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state() const noexcept { return state_; }
  virtual void save(serialize::OutputArchive& archive) const;
  virtual void load(serialize::InputArchive& archive);

 protected:
  std::vector<OptimizerParamGroup> param_groups_;
  std::unordered_map<void*, std::unique_ptr<OptimizerParamState>> state_;
  std::unique_ptr<OptimizerOptions> defaults_;
  // The state of p, created as S on first use.
  template <typename S>
  S& state_of(const Tensor& p) {
    auto& slot = state_[p.impl()];
    if (!slot) slot = std::make_unique<S>();
    return static_cast<S&>(*slot);
  }
};

// ---- SGD ----
struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr);
  TORCH_ARG(double, momentum) = 0;
  TORCH_ARG(double, dampening) = 0;
  TORCH_ARG(double, weight_decay) = 0;
  TORCH_ARG(bool, nesterov) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};
struct SGDParamState : public OptimizerCloneableParamState<SGDParamState> {
  TORCH_ARG(Tensor, momentum_buffer);
};
class SGD : public Optimizer {
 public:
  explicit SGD(const std::vector<OptimizerParamGroup>& param_groups, SGDOptions defaults);
  explicit SGD(std::vector<Tensor> params, SGDOptions defaults)
      : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;
};

// ---- Adam / AdamW ----
// step is a 0-d float32 tensor, as ember's (and PyTorch's) optimizer state holds it.
struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr);
  typedef std::tuple<double, double> betas_t;
  TORCH_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  TORCH_ARG(double, eps) = 1e-8;
  TORCH_ARG(double, weight_decay) = 0;
  TORCH_ARG(bool, amsgrad) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};
struct AdamParamState : public OptimizerCloneableParamState<AdamParamState> {
  TORCH_ARG(Tensor, exp_avg);
  TORCH_ARG(Tensor, exp_avg_sq);
  TORCH_ARG(Tensor, max_exp_avg_sq) = {};
  TORCH_ARG(Tensor, step_tensor);

 public:
  int64_t step() const { return step_tensor_.defined() ? static_cast<int64_t>(step_tensor_.item<double>()) : 0; }
};
class Adam : public Optimizer {
 public:
  explicit Adam(const std::vector<OptimizerParamGroup>& param_groups, AdamOptions defaults = {});
  explicit Adam(std::vector<Tensor> params, AdamOptions defaults = {})
      : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;
};

struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr);
  typedef std::tuple<double, double> betas_t;
  TORCH_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  TORCH_ARG(double, eps) = 1e-8;
  TORCH_ARG(double, weight_decay) = 1e-2;
  TORCH_ARG(bool, amsgrad) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};
using AdamWParamState = AdamParamState;
class AdamW : public Optimizer {
 public:
  explicit AdamW(const std::vector<OptimizerParamGroup>& param_groups, AdamWOptions defaults = {});
  explicit AdamW(std::vector<Tensor> params, AdamWOptions defaults = {})
      : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;
};

// ---- RMSprop ----
struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr);
  TORCH_ARG(double, alpha) = 0.99;
  TORCH_ARG(double, eps) = 1e-8;
  TORCH_ARG(double, weight_decay) = 0;
  TORCH_ARG(double, momentum) = 0;
  TORCH_ARG(bool, centered) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};
struct RMSpropParamState : public OptimizerCloneableParamState<RMSpropParamState> {
  TORCH_ARG(Tensor, square_avg);
  TORCH_ARG(Tensor, momentum_buffer) = {};
  TORCH_ARG(Tensor, grad_avg) = {};
  TORCH_ARG(Tensor, step_tensor);

 public:
  int64_t step() const { return step_tensor_.defined() ? static_cast<int64_t>(step_tensor_.item<double>()) : 0; }
};
class RMSprop : public Optimizer {
 public:
  explicit RMSprop(const std::vector<OptimizerParamGroup>& param_groups, RMSpropOptions defaults = {});
  explicit RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {})
      : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;
};

// ---- Adagrad ----
struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr);
  TORCH_ARG(double, lr_decay) = 0;
  TORCH_ARG(double, weight_decay) = 0;
  TORCH_ARG(double, initial_accumulator_value) = 0;
  TORCH_ARG(double, eps) = 1e-10;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};
struct AdagradParamState : public OptimizerCloneableParamState<AdagradParamState> {
  TORCH_ARG(Tensor, sum);
  TORCH_ARG(Tensor, step_tensor);

 public:
  int64_t step() const { return step_tensor_.defined() ? static_cast<int64_t>(step_tensor_.item<double>()) : 0; }
};
class Adagrad : public Optimizer {
 public:
  explicit Adagrad(const std::vector<OptimizerParamGroup>& param_groups, AdagradOptions defaults = {});
  explicit Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {})
      : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;
};

// ---- LBFGS: full-batch quasi-Newton steps; step() needs a closure that recomputes the loss ----
struct LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr);
  TORCH_ARG(int64_t, max_iter) = 20;
  TORCH_ARG(std::optional<int64_t>, max_eval) = std::nullopt;
  TORCH_ARG(double, tolerance_grad) = 1e-7;
  TORCH_ARG(double, tolerance_change) = 1e-9;
  TORCH_ARG(int64_t, history_size) = 100;
  TORCH_ARG(std::optional<std::string>, line_search_fn) = std::nullopt;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};
struct LBFGSParamState : public OptimizerCloneableParamState<LBFGSParamState> {
  TORCH_ARG(int64_t, func_evals) = 0;
  TORCH_ARG(int64_t, n_iter) = 0;
  TORCH_ARG(double, t) = 0;
  TORCH_ARG(double, prev_loss) = 0;
  TORCH_ARG(Tensor, d) = {};
  TORCH_ARG(Tensor, H_diag) = {};
  TORCH_ARG(Tensor, prev_flat_grad) = {};
  TORCH_ARG(std::vector<Tensor>, old_dirs) = {};
  TORCH_ARG(std::vector<Tensor>, old_stps) = {};
  TORCH_ARG(std::vector<Tensor>, ro) = {};
  TORCH_ARG(std::optional<std::vector<Tensor>>, al) = std::nullopt;
};
class LBFGS : public Optimizer {
 public:
  explicit LBFGS(const std::vector<OptimizerParamGroup>& param_groups, LBFGSOptions defaults = {});
  explicit LBFGS(std::vector<Tensor> params, LBFGSOptions defaults = {})
      : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure) override;

 private:
  Tensor gather_flat_grad();
  void add_grad(double step_size, const Tensor& update);
  std::tuple<double, Tensor> directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x, double t,
                                                  const Tensor& d);
  int64_t numel_ = -1;
};

// ---- learning-rate schedulers (torch::optim::StepLR, ...) ----
// step() sets every group's lr to get_lrs() and then counts the step, as libtorch's LRScheduler
// (so StepLR first decays at the (step_size + 1)-th call, as libtorch's does). The schedulers
// libtorch lacks (MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR) follow
// torch.optim.lr_scheduler: after k calls the lr is the Python scheduler's at epoch k.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {}
  virtual ~LRScheduler() = default;
  void step();

 protected:
  virtual std::vector<double> get_lrs() = 0;
  std::vector<double> get_current_lrs() const;
  unsigned step_count_ = 0;

 private:
  void set_optimizer_lrs(const std::vector<double>& learning_rates);
  Optimizer& optimizer_;
};

// Multiplies the lr by gamma every step_size steps.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, unsigned step_size, double gamma = 0.1);

 private:
  std::vector<double> get_lrs() override;
  unsigned step_size_;
  double gamma_;
};
// Multiplies the lr by gamma at each milestone step.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<unsigned> milestones, double gamma = 0.1);

 private:
  std::vector<double> get_lrs() override;
  std::vector<unsigned> milestones_;
  double gamma_;
};
// Multiplies the lr by gamma every step.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 private:
  std::vector<double> get_lrs() override;
  double gamma_;
};
// Cosine annealing from the initial lr to eta_min over t_max steps (then back up, as torch).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, unsigned t_max, double eta_min = 0);

 private:
  std::vector<double> get_lrs() override;
  std::vector<double> base_lrs_;
  unsigned t_max_;
  double eta_min_;
};
// lr = initial lr * lambda(step).
class LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, std::function<double(unsigned)> lr_lambda);

 private:
  std::vector<double> get_lrs() override;
  std::vector<double> base_lrs_;
  std::function<double(unsigned)> lambda_;
};

// Reduces the lr by `factor` when a metric stopped improving for `patience` steps.
class ReduceLROnPlateauScheduler {
 public:
  enum SchedulerMode { min, max };
  enum ThresholdMode { rel, abs };
  ReduceLROnPlateauScheduler(Optimizer& optimizer, SchedulerMode mode = min, float factor = 0.1, int patience = 10,
                             double threshold = 1e-4, ThresholdMode threshold_mode = rel, int cooldown = 0,
                             const std::vector<float>& min_lr = std::vector<float>(), double eps = 1e-8,
                             bool verbose = false);
  virtual ~ReduceLROnPlateauScheduler() = default;
  void step(float metric);

 private:
  bool is_better(float a) const;
  void reduce_lr(int epoch);
  Optimizer& optimizer_;
  SchedulerMode mode_;
  float factor_;
  int patience_;
  double threshold_;
  ThresholdMode threshold_mode_;
  int cooldown_, cooldown_counter_ = 0, num_bad_epochs_ = 0, last_epoch_ = 0;
  std::vector<float> min_lrs_;
  double eps_;
  bool verbose_;
  float best_;
};

}  // namespace torch::optim
