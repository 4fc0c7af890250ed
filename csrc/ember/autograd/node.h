// The autograd graph: Nodes (backward functions), Edges, per-tensor metadata, saved tensors.
// Note [Node inputs]: a Node's inputs are the gradients of its forward op's outputs; its
// next_edges point, one per forward input, at the Nodes that receive the gradients it returns.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::autograd {

using TensorList = std::vector<Tensor>;
class Node;

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

struct InputMeta {
  Shape shape;
  ScalarType dtype;
};

using GradHook = std::function<Tensor(const Tensor&)>;  // returns undefined to keep the grad
using PostHook = std::function<void(const TensorList& grad_inputs, const TensorList& grad_outputs)>;

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // grads[i] is the gradient of forward output i (materialized as zeros when none flowed).
  // Returns one gradient per next edge (undefined for inputs that need none).
  virtual TensorList apply(TensorList&& grads) = 0;
  virtual std::string name() const = 0;
  // Drops saved tensors once backward ran without retain_graph.
  virtual void release_variables() {}
  // Python-defined nodes need the GIL; the engine asks so it can hold it only for them.
  virtual bool is_python() const { return false; }
  // False: the engine passes undefined (None) for outputs that got no gradient, instead of zeros
  // (autograd.Function's ctx.set_materialize_grads(False)).
  virtual bool materialize_grads() const { return true; }
  // Forward mode (Note [Forward AD]): the outputs' tangents from the inputs' (one per next edge,
  // undefined = zero). Empty: no formula here, the tangents are derived from apply().
  virtual std::vector<Tensor> jvp(const std::vector<Tensor>& tangents) {
    (void)tangents;
    return {};
  }

  uint32_t add_input_metadata(const Tensor& t);
  size_t num_inputs() const { return input_meta_.size(); }
  const InputMeta& input_meta(size_t i) const { return input_meta_[i]; }
  uint64_t sequence_nr() const { return seq_; }

  std::vector<Edge> next_edges;
  std::string forward_site;  // where forward ran (anomaly mode)

  // Hooks: registered from any thread while another runs backward through this node, so they
  // are read as copies taken under hooks_mutex_ (Note [Autograd threads]).
  using PreHook = std::pair<uint32_t, GradHook>;  // (input index, hook): Tensor.register_hook
  void add_pre_hook(uint32_t input_nr, GradHook hook);
  void add_post_hook(PostHook hook);  // Node.register_hook
  std::vector<PreHook> pre_hooks() const;
  std::vector<PostHook> post_hooks() const;
  // Held by the engine while it runs this node (hooks, apply, release of saved tensors), so
  // concurrent backward passes through a shared node do not race on its state. Recursive: a hook
  // may start a nested backward that reaches the same node.
  std::recursive_mutex& apply_mutex() { return apply_mutex_; }

 protected:
  std::vector<InputMeta> input_meta_;
  uint64_t seq_;

 private:
  mutable std::mutex hooks_mutex_;
  std::vector<PreHook> pre_hooks_;
  std::vector<PostHook> post_hooks_;
  std::atomic<bool> has_hooks_{false};
  std::recursive_mutex apply_mutex_;
};

// Note [Autograd threads]: backward runs without the GIL, so several threads may run it at once
// on graphs sharing nodes and leaves, while others (holding the GIL) register hooks or read
// .grad. Per-node state is guarded by Node::apply_mutex(); per-tensor state (grad, accumulator,
// hooks, retained grad, tangents) by AutogradMetaImpl::mutex. No lock is ever held while taking
// the GIL unless no GIL holder can wait for that lock: apply_mutex is never taken by code holding
// the GIL, and AutogradMetaImpl::mutex is never held while Python runs or while a tensor that may
// own a Python object is dropped (its release takes the GIL).
struct ForwardGrads {
  std::mutex mu;  // guards by_level
  std::vector<std::pair<int64_t, Tensor>> by_level;
};

// A non-leaf's retained gradient (retain_grad), written by a hook on its grad_fn.
struct RetainedGrad {
  std::mutex mu;
  Tensor value;
};

// Per-tensor autograd state (hangs off TensorImpl).
struct AutogradMetaImpl : AutogradMeta {
  std::mutex mutex;            // guards grad, grad_accumulator, the hook lists, retained_grad
  bool requires_grad = false;  // leaf flag; non-leaves require grad through grad_fn
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;
  uint32_t output_nr = 0;
  bool retains_grad = false;
  std::shared_ptr<RetainedGrad> retained_grad;  // written by retain_grad's hook (which must not own the tensor)
  std::vector<GradHook> hooks;                  // leaf hooks, run by AccumulateGrad before accumulating
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;
  // Forward-mode tangents, one per dual level (Note [Forward AD]); shared with the level's
  // registry so that leaving the level clears them.
  std::shared_ptr<ForwardGrads> fw;
  // Tensor.grad_dtype (a leaf's): unset follows the tensor's dtype; any = None (any dtype goes).
  std::optional<ScalarType> grad_dtype;
  bool grad_dtype_any = false;
};

AutogradMetaImpl* meta(const Tensor& t);  // null when the tensor never touched autograd
AutogradMetaImpl& meta_or_create(const Tensor& t);
// Note [View history] (tensor.h): rebuilds a view's grad_fn when its base or another view of it
// was modified in place since the view's history was made. Cheap when nothing changed.
// `may_raise` false: a view made under no_grad whose history cannot be rebuilt keeps its old one
// (requires_grad only reports; grad_fn and recording raise, as torch).
void regenerate_view_history(const Tensor& view, uint32_t version, bool may_raise);
inline void refresh_view_history(const Tensor& t, bool may_raise = true) {
  TensorImpl* impl = t.impl();
  if (!impl->view_base) return;
  uint32_t now = impl->version();
  if (impl->view_version.load(std::memory_order_relaxed) != now) regenerate_view_history(t, now, may_raise);
}
inline bool requires_grad(const Tensor& t) {
  if (!t.defined()) return false;
  refresh_view_history(t, /*may_raise=*/false);
  auto* m = meta(t);
  return m && (m->requires_grad || m->grad_fn);
}
void set_requires_grad(const Tensor& t, bool value);
std::shared_ptr<Node> grad_fn(const Tensor& t);
inline bool is_leaf(const Tensor& t) { return !grad_fn(t); }
std::shared_ptr<Node> grad_accumulator(const Tensor& t);
Edge gradient_edge(const Tensor& t);  // where gradients for t go
// Makes `fn` the history of `out` (output number = next input slot of fn).
void set_history(const Tensor& out, const std::shared_ptr<Node>& fn);
Tensor detach(const Tensor& t);  // same data and version counter, no history
Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& g);
void retain_grad(const Tensor& t);
// Tensor.grad_dtype (torch 2.10): the dtype backward gives a leaf's .grad; nullopt means None
// (whatever dtype arrives). Settable on leaves only.
std::optional<ScalarType> grad_dtype(const Tensor& t);
void set_grad_dtype(const Tensor& t, std::optional<ScalarType> dtype);
// Tensor.register_hook on a leaf (run by AccumulateGrad) and register_post_accumulate_grad_hook.
void add_leaf_hook(const Tensor& t, GradHook hook);
void add_post_accumulate_hook(const Tensor& t, std::function<void(const Tensor&)> hook);

// Geometry of a base or view, for the gradient of a view whose history was rebuilt.
struct ViewGeometry {
  Shape sizes, strides;
  int64_t offset;
  ScalarType dtype;
  int64_t storage_numel;  // the base's storage, in its elements
};
// The view's gradient placed in zeros shaped and laid out like the base.
Tensor view_grad_to_base(const Tensor& g, const ViewGeometry& base, const ViewGeometry& view);

// Note [Saved tensor hooks]: autograd.graph.saved_tensors_hooks(pack, unpack). While a pair is
// installed on a thread, every tensor saved for backward there is handed to pack, whose result
// is kept instead of the tensor, and backward gets its tensor back from unpack (offloading,
// compression, recomputation). The innermost pair applies; hooks are per thread, as torch's.
class PackedTensor {
 public:
  virtual ~PackedTensor() = default;
  virtual Tensor unpack() const = 0;
};
using PackHook = std::function<std::shared_ptr<PackedTensor>(const Tensor&)>;
void push_saved_tensor_hooks(PackHook pack);  // refused while disabled (below)
void pop_saved_tensor_hooks();
// disable_saved_tensors_hooks(message): pushing hooks raises `message` until re-enabled
// (std::nullopt); returns the previous setting.
std::optional<std::string> set_saved_tensor_hooks_disabled(std::optional<std::string> message);

// A tensor kept for backward, with the version it had (paper §4.3).
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  // `owner` is the node that saved it; needed to rebuild a saved output's history.
  Tensor unpack(const std::shared_ptr<Node>& owner = nullptr) const;
  void reset() {
    data_ = Tensor();
    packed_.reset();
    released_ = true;
  }
  bool defined() const { return was_defined_; }

 private:
  Tensor data_;
  std::shared_ptr<PackedTensor> packed_;  // instead of data_ under saved-tensor hooks
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool was_defined_ = false;
  bool released_ = false;
  bool requires_grad_ = false;
  std::string producer_;  // name of the node that produced it, for the error message
};

}  // namespace ember::autograd
