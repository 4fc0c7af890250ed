// Automatic mixed precision on CPU (torch.autocast("cpu")). Note [Autocast]: autocast is
// thread-local state consulted at the entry of the ops on torch's CPU lists: the
// lower-precision ops (convolutions, linear, the matmul family, attention) cast float32
// arguments to the autocast dtype (bfloat16 by default) and run there; the float32 ops (losses)
// cast 16-bit float arguments to float32. Casts are ordinary differentiable ops, so gradients
// reach float32 parameters in float32. Casts of leaf tensors that require grad (parameters) are
// cached until the outermost autocast region exits, so a weight used many times is cast once.
// When autocast is off an op pays one thread-local bool check.
#pragma once
#include <initializer_list>

#include "ember/core/device.h"
#include "ember/core/tensor.h"

namespace ember::autocast {

namespace detail {
extern thread_local bool cpu_active;  // enabled and not excluded: the ops' fast check
}

bool is_enabled(DeviceType device);
void set_enabled(DeviceType device, bool enabled);
ScalarType get_dtype(DeviceType device);
void set_dtype(DeviceType device, ScalarType dtype);  // bfloat16 or float16 on CPU
bool is_cache_enabled();
void set_cache_enabled(bool enabled);
int increment_nesting();  // entering an autocast region; returns the new depth
int decrement_nesting();  // leaving one; the cache is cleared when the depth reaches 0
void clear_cache();

// True when CPU autocast applies to an op on these tensors (CPU, autocast on, not inside an
// autocast op already).
inline bool active_for(std::initializer_list<const Tensor*> ts) {
  if (!detail::cpu_active) return false;
  for (const Tensor* t : ts)
    if (t && t->defined() && !t->device().is_cpu()) return false;
  return true;
}

// A float32 tensor in the autocast dtype (other tensors as they are).
Tensor to_lower(const Tensor& t);
// A 16-bit float tensor in float32 (other tensors as they are).
Tensor to_fp32(const Tensor& t);

// Runs the op body with autocast off, so its own calls of other listed ops do not cast again.
class ExcludeGuard {
 public:
  ExcludeGuard() : prev_(detail::cpu_active) { detail::cpu_active = false; }
  ~ExcludeGuard() { detail::cpu_active = prev_; }
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember::autocast
