// Thread-local switches: whether ops record history, and inference mode.
#pragma once

namespace ember::autograd {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// RAII: sets grad mode for a scope and restores the previous value.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

// Inference mode: no history and no version tracking; tensors made inside are inference tensors.
struct InferenceMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Anomaly mode: nodes remember where their forward op ran; NaN gradients raise naming that op.
struct AnomalyMode {
  static bool is_enabled();
  static bool check_nan();
  static void set_enabled(bool enabled, bool check_nan = true);
};

}  // namespace ember::autograd
