// Whether backward formulas are running on a synthetic incoming gradient (forward AD's double vjp,
// Note [Complex double vjp] in forward_ad.cpp) rather than on a real loss's gradient.
#pragma once

namespace ember::autograd {

// Checks on the incoming gradient's values, such as the complex SVD/eigh phase check (a loss must
// not depend on the singular vectors' phase), skip themselves then: the synthetic gradient is
// arbitrary, and only the formula's linear map matters.
bool synthetic_grad_active();

struct SyntheticGradGuard {
  SyntheticGradGuard();
  ~SyntheticGradGuard();
  SyntheticGradGuard(const SyntheticGradGuard&) = delete;
  SyntheticGradGuard& operator=(const SyntheticGradGuard&) = delete;
  bool prev;
};

}  // namespace ember::autograd
