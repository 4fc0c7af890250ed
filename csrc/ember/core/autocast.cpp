// Note [Autocast] in autocast.h.
#include "ember/core/autocast.h"

#include <unordered_map>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/core/error.h"
#include "ember/ops/ops.h"

namespace ember::autocast {
namespace detail {
thread_local bool cpu_active = false;
}

namespace {
struct State {
  bool cpu_enabled = false;
  ScalarType cpu_dtype = ScalarType::BFloat16;
  bool cache_enabled = true;
  int nesting = 0;
  std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>> cache;  // source -> (source, cast)
};
thread_local State state;

void refresh() { detail::cpu_active = state.cpu_enabled; }
}  // namespace

bool is_enabled(DeviceType device) { return device == DeviceType::CPU && state.cpu_enabled; }

void set_enabled(DeviceType device, bool enabled) {
  if (device != DeviceType::CPU) {
    EMBER_CHECK(!enabled, "autocast: only CPU autocast is available in this build");
    return;
  }
  state.cpu_enabled = enabled;
  refresh();
}

ScalarType get_dtype(DeviceType device) { return device == DeviceType::CPU ? state.cpu_dtype : ScalarType::Float16; }

void set_dtype(DeviceType device, ScalarType dtype) {
  EMBER_CHECK(device == DeviceType::CPU, "autocast: only CPU autocast is available in this build");
  EMBER_CHECK(dtype == ScalarType::BFloat16 || dtype == ScalarType::Float16,
              "In CPU autocast, but the target dtype is not supported. CPU Autocast only supports dtypes of "
              "torch.bfloat16, torch.float16 currently.");
  state.cpu_dtype = dtype;
}

bool is_cache_enabled() { return state.cache_enabled; }
void set_cache_enabled(bool enabled) { state.cache_enabled = enabled; }

int increment_nesting() { return ++state.nesting; }
int decrement_nesting() {
  if (state.nesting > 0 && --state.nesting == 0) clear_cache();
  return state.nesting;
}
void clear_cache() { state.cache.clear(); }

Tensor to_lower(const Tensor& t) {
  if (!t.defined() || t.dtype() != ScalarType::Float32) return t;
  const ScalarType dt = state.cpu_dtype;
  // Parameters (leaves that require grad) are cast once per region; other tensors every time.
  const bool cacheable = state.cache_enabled && state.nesting > 0 && autograd::is_leaf(t) &&
                         autograd::requires_grad(t) && autograd::GradMode::is_enabled();
  if (cacheable) {
    auto it = state.cache.find(t.impl());
    if (it != state.cache.end() && it->second.second.dtype() == dt) return it->second.second;
  }
  Tensor r = to_dtype(t, dt);
  if (cacheable) state.cache[t.impl()] = {t, r};
  return r;
}

Tensor to_fp32(const Tensor& t) {
  if (!t.defined() || (t.dtype() != ScalarType::BFloat16 && t.dtype() != ScalarType::Float16)) return t;
  return to_dtype(t, ScalarType::Float32);
}

}  // namespace ember::autocast
