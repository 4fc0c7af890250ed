#include "ember/autograd/grad_mode.h"

#include <atomic>

namespace ember::autograd {
namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference = false;
std::atomic<bool> g_anomaly{false};  // process-wide, as torch.autograd.set_detect_anomaly
std::atomic<bool> g_anomaly_nan{true};
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }
bool InferenceMode::is_enabled() { return t_inference; }
void InferenceMode::set_enabled(bool enabled) { t_inference = enabled; }
bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
bool AnomalyMode::check_nan() { return g_anomaly_nan.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) {
  g_anomaly.store(enabled);
  g_anomaly_nan.store(check_nan);
}

}  // namespace ember::autograd
