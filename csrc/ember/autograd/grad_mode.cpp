#include "ember/autograd/grad_mode.h"

#include <atomic>

#include "ember/autograd/anomaly.h"
#include "ember/autograd/node.h"
#include "ember/core/tensor.h"
#include "ember/core/warning.h"

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

namespace {
std::atomic<TraceHook> g_trace_hook{nullptr};
}
void set_forward_trace_hook(TraceHook hook) { g_trace_hook.store(hook); }
std::string forward_trace() {
  TraceHook h = g_trace_hook.load(std::memory_order_relaxed);
  std::string t = h ? h() : std::string();
  return t.empty() ? current_site() : t;
}
void warn_anomaly(const Node& node) {
  if (node.forward_site.empty())
    warn("Error detected in " + node.name() +
         ". No forward pass information available. Enable detect anomaly during forward pass for more information.");
  else
    warn("Error detected in " + node.name() + ". Traceback of forward call that caused the error:\n" +
         node.forward_site);
}

}  // namespace ember::autograd
