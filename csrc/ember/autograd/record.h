// Helpers ops use to record history. Note [Recording]: an op computes its result first, then
// asks make_node<T>(inputs...) for a node; null means nothing to record (grad mode off or no
// input requires grad), so ops pay one check on the fast path.
#pragma once
#include "ember/autograd/forward_ad.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"

namespace ember::autograd {

inline bool any_requires_grad(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t && t->defined() && requires_grad(*t)) return true;
  return false;
}

// True when an op on these inputs must record: for reverse mode, or because an input has a
// forward-mode tangent (Note [Forward AD]).
inline bool needs_history(std::initializer_list<const Tensor*> ts) {
  return (GradMode::is_enabled() && any_requires_grad(ts)) ||
         (forward_ad::is_active() && forward_ad::any_has_tangent(ts));
}

template <typename NodeT, typename... Ts>
std::shared_ptr<NodeT> make_node(const Ts&... inputs) {
  bool records = GradMode::is_enabled() && any_requires_grad({&inputs...});
  bool forward = forward_ad::is_active() && forward_ad::any_has_tangent({&inputs...});
  if (!records && !forward) return nullptr;
  auto node = std::make_shared<NodeT>();
  node->next_edges = {gradient_edge(inputs)...};
  if (forward) forward_ad::capture_inputs(node, {&inputs...}, records);
  return node;
}

// make_node over a runtime list of inputs (undefined entries are absent optional inputs).
template <typename NodeT>
std::shared_ptr<NodeT> make_node_list(const std::vector<Tensor>& inputs) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(&t);
  bool records = false, forward = false;
  for (const Tensor* t : ptrs) records = records || (t->defined() && requires_grad(*t));
  records = records && GradMode::is_enabled();
  if (forward_ad::is_active())
    for (const Tensor* t : ptrs) forward = forward || forward_ad::any_has_tangent({t});
  if (!records && !forward) return nullptr;
  auto node = std::make_shared<NodeT>();
  for (const Tensor& t : inputs) node->next_edges.push_back(gradient_edge(t));
  if (forward) forward_ad::capture_inputs(node, ptrs, records);
  return node;
}

// Sums `grad` down to `shape` (undoes broadcasting).
Tensor sum_to(const Tensor& grad, IntArrayRef shape);

// Note [In-place under autograd]: an in-place op on a tensor that needs history runs as
// prev = clone(self); r = op(prev, ...) out of place (recording as usual); the data of r is
// copied into self without recording; then self's history is rebased onto r's node. When self
// is a view, its base gets a CopySlices node, so `x[:, 0] = y` gives gradients to x's past and y.
void check_inplace(const Tensor& self, bool any_input_requires_grad);
// Raises torch's error for an in-place change to an output of split/unbind (Note [Multi-output views]).
[[noreturn]] void throw_multi_output_view_inplace(const Tensor& view, bool base_modified);
// Raises torch's error for an in-place op under grad mode on a view made under no_grad, when the
// op would need history (its base or another input requires grad; Note [View history]).
void check_no_grad_view_inplace(const Tensor& self, std::initializer_list<const Tensor*> others);
// Makes `node` (which produced a single output shaped like self) the history of self.
void rebase_history(const Tensor& self, const std::shared_ptr<Node>& node);
// True when an in-place op on `self` with these other inputs must take the autograd path.
inline bool inplace_needs_grad(const Tensor& self, std::initializer_list<const Tensor*> others) {
  if (!GradMode::is_enabled()) return false;
  if (self.impl()->view_made_no_grad) check_no_grad_view_inplace(self, others);
  if (requires_grad(self)) return true;
  for (const Tensor* t : others)
    if (t && t->defined() && requires_grad(*t)) return true;
  return false;
}
// ... or because a tangent is involved: such ops run out of place and copy_ the result into
// self, and copy_ updates self's tangent (Note [Forward AD]).
inline bool inplace_needs_history(const Tensor& self, std::initializer_list<const Tensor*> others) {
  return inplace_needs_grad(self, others) ||
         (forward_ad::is_active() && (forward_ad::any_has_tangent({&self}) || forward_ad::any_has_tangent(others)));
}

// Gradient of as_strided (and unfold): scatter-adds g at the view's storage positions, then
// reads them back at the input's. Overlapping views (unfold with step < size) accumulate.
// Built from differentiable ops, so as_strided and unfold differentiate twice.
Tensor as_strided_backward(const Tensor& g, const Shape& in_sizes, const Shape& in_strides, int64_t in_off,
                           const Shape& sizes, const Shape& strides, int64_t off);

// History for a view op's output: `backward` maps the view's gradient to the input's.
void set_view_history(const Tensor& input, const Tensor& view, const char* name,
                      std::function<Tensor(const Tensor&)> backward);

}  // namespace ember::autograd
