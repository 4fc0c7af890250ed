#include "ember/autograd/grad_mode.h"

#include <atomic>

#include "ember/core/tensor.h"

namespace ember::autograd {
namespace {
thread_local bool t_grad_enabled = true;
std::atomic<bool> g_anomaly{false};  // process-wide, as torch.autograd.set_detect_anomaly
std::atomic<bool> g_anomaly_nan{true};
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }
bool InferenceMode::is_enabled() { return inference_mode_enabled(); }
void InferenceMode::set_enabled(bool enabled) { set_inference_mode_enabled(enabled); }
bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
bool AnomalyMode::check_nan() { return g_anomaly_nan.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) {
  g_anomaly.store(enabled);
  g_anomaly_nan.store(check_nan);
}

}  // namespace ember::autograd
