#include <atomic>
#include <sstream>

#include "ember/autograd/accumulate.h"
#include "ember/autograd/anomaly.h"
#include "ember/autograd/forward_ad.h"
#include "ember/autograd/functions.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/core/type_name.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"
#include "ember/profiler/profiler.h"

namespace ember::autograd {
namespace {
std::atomic<uint64_t> g_next_seq{0};
}

Node::Node() : seq_(g_next_seq.fetch_add(1, std::memory_order_relaxed)) {}

void Node::add_pre_hook(uint32_t input_nr, GradHook hook) {
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  pre_hooks_.emplace_back(input_nr, std::move(hook));
  has_hooks_.store(true, std::memory_order_release);
}
void Node::add_post_hook(PostHook hook) {
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  post_hooks_.push_back(std::move(hook));
  has_hooks_.store(true, std::memory_order_release);
}
std::vector<Node::PreHook> Node::pre_hooks() const {
  if (!has_hooks_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  return pre_hooks_;
}
std::vector<PostHook> Node::post_hooks() const {
  if (!has_hooks_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  return post_hooks_;
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_meta_.push_back(InputMeta{t.sizes(), t.dtype()});
  return static_cast<uint32_t>(input_meta_.size() - 1);
}

AutogradMetaImpl* meta(const Tensor& t) { return static_cast<AutogradMetaImpl*>(t.impl()->autograd_meta()); }

AutogradMetaImpl& meta_or_create(const Tensor& t) {
  if (auto* m = meta(t)) return *m;
  // Two threads may get here for one tensor: the first to install its meta wins.
  return *static_cast<AutogradMetaImpl*>(t.impl()->install_autograd_meta(std::make_unique<AutogradMetaImpl>()));
}

void set_requires_grad(const Tensor& t, bool value) {
  AutogradMetaImpl* m = meta(t);
  if (m && m->grad_fn) {
    EMBER_CHECK(value,
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return;
  }
  if (value) {
    EMBER_CHECK(is_floating_point(t.dtype()) || is_complex(t.dtype()),
                "only Tensors of floating point and complex dtype can require gradients");
    EMBER_CHECK(!t.impl()->is_inference || InferenceMode::is_enabled(),
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
    meta_or_create(t).requires_grad = true;
  } else if (m) {
    m->requires_grad = false;
  }
}

std::shared_ptr<Node> grad_fn(const Tensor& t) {
  refresh_view_history(t);
  AutogradMetaImpl* m = meta(t);
  return m ? m->grad_fn : nullptr;
}

namespace {
ScalarType complex_of(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::Complex128 : ScalarType::Complex64;
}
}  // namespace

Tensor view_grad_to_base(const Tensor& g, const ViewGeometry& base, const ViewGeometry& view) {
  // Same element type: scatter-add through the storage positions (expanded views overlap).
  if (is_complex(base.dtype) == is_complex(g.dtype()))
    return as_strided_backward(g, base.sizes, base.strides, base.offset, view.sizes, view.strides, view.offset);
  // A buffer as long as the storage, in the base's dtype, seen in the view's dtype (they differ
  // for view_as_real/.real/.imag of a complex base and view_as_complex of a real one): the
  // view's geometry (storage offset included) places g there, the base's reads it back.
  ScalarType buf_dtype = is_complex(base.dtype) && !is_complex(g.dtype())   ? complex_of(g.dtype())
                         : !is_complex(base.dtype) && is_complex(g.dtype()) ? to_real(g.dtype())
                                                                            : g.dtype();
  Tensor buf = zeros({base.storage_numel}, buf_dtype);
  Tensor seen = buf;
  if (is_complex(buf_dtype) && !is_complex(g.dtype())) {
    seen = reshape(view_as_real(buf), {-1});
  } else if (!is_complex(buf_dtype) && is_complex(g.dtype())) {
    if (base.storage_numel % 2)
      throw NotImplementedError("gradient of a complex view of a real tensor with an odd-length storage");
    seen = view_as_complex(as_strided(buf, {base.storage_numel / 2, 2}, {2, 1}, 0));
  }
  Tensor slot = as_strided(seen, view.sizes, view.strides, view.offset);
  copy_(slot, g);
  return as_strided(buf, base.sizes, base.strides, base.offset);
}

void regenerate_view_history(const Tensor& view, uint32_t version, bool may_raise) {
  TensorImpl* impl = view.impl();
  const Tensor base(impl->view_base);
  AutogradMetaImpl* m = meta(view);
  AutogradMetaImpl* bm = meta(base);
  bool base_requires = bm && (bm->requires_grad || bm->grad_fn);
  if (!(m && m->grad_fn) && !base_requires) {
    impl->view_version.store(version, std::memory_order_relaxed);
    return;
  }
  if (impl->view_made_no_grad && GradMode::is_enabled()) {
    if (!may_raise) return;
    throw Error(
        "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
        "with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the no_grad block (if you "
        "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).");
  }
  if (impl->view_multi_output && GradMode::is_enabled()) {  // Note [Multi-output views]
    if (!may_raise) return;
    throw_multi_output_view_inplace(view, true);
  }
  // The view's gradient goes to the base's current history through its storage positions
  // (PyTorch's AsStridedBackward0).
  ViewGeometry bg{base.sizes(), base.strides(), base.storage_offset(), base.dtype(),
                  static_cast<int64_t>(base.impl()->storage()->nbytes() / base.element_size())};
  ViewGeometry vg{view.sizes(), view.strides(), view.storage_offset(), view.dtype(), 0};
  auto vb = std::make_shared<ViewBackward>();
  vb->name_ = "AsStridedBackward0";
  vb->next_edges.push_back(gradient_edge(base));
  vb->backward = [bg, vg](const Tensor& g) { return view_grad_to_base(g, bg, vg); };
  uint32_t nr = vb->add_input_metadata(view);
  AutogradMetaImpl& vm = meta_or_create(view);
  std::shared_ptr<Node> old;  // dropped after the lock
  {
    std::lock_guard<std::mutex> lock(vm.mutex);
    old = std::exchange(vm.grad_fn, vb);
    vm.output_nr = nr;
    vm.requires_grad = false;
  }
  impl->view_version.store(version, std::memory_order_relaxed);
}

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMetaImpl& m = meta_or_create(t);
  // One accumulator per leaf even when threads record ops on it at once: it serializes the
  // updates of .grad.
  std::lock_guard<std::mutex> lock(m.mutex);
  if (auto acc = m.grad_accumulator.lock()) return acc;
  // The accumulator holds the leaf (a new handle to the same impl); the leaf holds it weakly.
  auto acc = std::make_shared<AccumulateGrad>(t);
  acc->add_input_metadata(t);
  m.grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};  // an absent optional input (e.g. clamp's max)
  refresh_view_history(t);
  AutogradMetaImpl* m = meta(t);
  if (!m) return {};
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (m->requires_grad) return Edge{grad_accumulator(t), 0};
  return {};
}

void set_history(const Tensor& out, const std::shared_ptr<Node>& fn) {
  // An op's result that is a view of the op's own buffer (a base with no history that needs none: a
  // reshape of a fresh result) is a standalone result, as torch's ops return it. Left a view, an in-place
  // op on it rebased the history onto that base, which has none: the gradient was lost without a word.
  if (out.impl()->view_base && !dynamic_cast<ViewBackward*>(fn.get()) &&
      !requires_grad(Tensor(out.impl()->view_base))) {
    out.impl()->view_base = IntrusivePtr<TensorImpl>();
    out.impl()->view_made_no_grad = false;
  }
  if (AnomalyMode::is_enabled() && fn->forward_site.empty()) fn->forward_site = forward_trace();
  if (profiler::active()) profiler::note_sequence(fn->sequence_nr());  // links the forward op to its node
  AutogradMetaImpl& m = meta_or_create(out);
  uint32_t nr = fn->add_input_metadata(out);
  if (forward_ad::is_active() && forward_ad::on_set_history(out, fn)) return;  // forward-only: no history
  m.output_nr = nr;
  m.grad_fn = fn;
  m.requires_grad = false;
}

Tensor detach(const Tensor& t) {
  NoGradGuard no_history;
  forward_ad::HideLevelsGuard no_tangent(0);  // no forward gradient either (and no queued one is computed)
  Tensor d = alias(t);
  d.impl()->view_base = IntrusivePtr<TensorImpl>();  // shares data, but autograd treats it as standalone
  return d;
}

Tensor grad(const Tensor& t) {
  AutogradMetaImpl* m = meta(t);
  if (!m) return Tensor();
  std::shared_ptr<RetainedGrad> retained;
  {
    std::lock_guard<std::mutex> lock(m->mutex);
    if (!m->retained_grad || m->grad.defined()) return m->grad;
    retained = m->retained_grad;
  }
  std::lock_guard<std::mutex> lock(retained->mu);
  return retained->value;
}

std::optional<ScalarType> grad_dtype(const Tensor& t) {
  AutogradMetaImpl* m = meta(t);
  if (!m) return t.dtype();
  std::lock_guard<std::mutex> lock(m->mutex);
  if (m->grad_dtype_any) return std::nullopt;
  return m->grad_dtype ? *m->grad_dtype : t.dtype();
}

void set_grad_dtype(const Tensor& t, std::optional<ScalarType> dtype) {
  EMBER_CHECK(is_leaf(t), "grad_dtype can only be set on leaf tensors.");
  AutogradMetaImpl& m = meta_or_create(t);
  std::lock_guard<std::mutex> lock(m.mutex);
  m.grad_dtype = dtype;
  m.grad_dtype_any = !dtype;
}

void set_grad(const Tensor& t, const Tensor& g) {
  if (g.defined()) {
    EMBER_CHECK(g.sizes() == t.sizes(), "assigned grad has data of a different size");
    std::optional<ScalarType> want = grad_dtype(t);
    EMBER_CHECK(!want || g.dtype() == *want, "attempting to assign a gradient with dtype '", cpp_type_name(g.dtype()),
                "' to a tensor with grad_dtype '", scalar_type_name(*want),
                "'. The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
                "caution. Diverging the dtypes of a tensor and its gradient may break downstream systems that assume "
                "they match.");
    EMBER_CHECK(g.device() == t.device(), "assigned grad has data located on a different device");
  }
  AutogradMetaImpl& m = meta_or_create(t);
  Tensor old, old_retained;  // dropped after the locks (Note [Autograd threads])
  std::shared_ptr<RetainedGrad> retained;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    old = std::move(m.grad);
    m.grad = g;
    retained = m.retained_grad;
  }
  if (retained) {
    std::lock_guard<std::mutex> lock(retained->mu);
    old_retained = std::move(retained->value);
    retained->value = g;
  }
}

void retain_grad(const Tensor& t) {
  EMBER_CHECK(requires_grad(t), "can't retain_grad on Tensor that has requires_grad=False");
  AutogradMetaImpl& m = meta_or_create(t);
  std::shared_ptr<RetainedGrad> slot;
  std::shared_ptr<Node> fn;
  uint32_t nr;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    if (!m.grad_fn || m.retains_grad) return;  // leaves keep .grad anyway
    m.retains_grad = true;
    m.retained_grad = std::make_shared<RetainedGrad>();
    slot = m.retained_grad;
    fn = m.grad_fn;
    nr = m.output_nr;
  }
  fn->add_pre_hook(nr, [slot](const Tensor& g) {
    NoGradGuard ng;
    Tensor old;  // dropped after the lock
    std::lock_guard<std::mutex> lock(slot->mu);
    Tensor next = slot->value.defined() ? add(slot->value, g) : clone(g);
    old = std::exchange(slot->value, std::move(next));
    return Tensor();
  });
}

void add_leaf_hook(const Tensor& t, GradHook hook) {
  AutogradMetaImpl& m = meta_or_create(t);
  std::lock_guard<std::mutex> lock(m.mutex);
  m.hooks.push_back(std::move(hook));
}

void add_post_accumulate_hook(const Tensor& t, std::function<void(const Tensor&)> hook) {
  AutogradMetaImpl& m = meta_or_create(t);
  std::lock_guard<std::mutex> lock(m.mutex);
  m.post_accumulate_hooks.push_back(std::move(hook));
}

// ---- AccumulateGrad ----

namespace {
// Whether g is the only tensor that can reach its buffer, so .grad may take the buffer itself.
// A view of a dead temporary counts (a Linear's weight gradient arrives as t(t(g^T x))): its base,
// kept only by the view, holds the storage's other reference. A view of part of a buffer does
// not: taking it would keep the whole buffer alive as .grad.
bool exclusive_buffer(const Tensor& g) {
  if (g.impl_ptr().use_count() != 1) return false;
  const IntrusivePtr<TensorImpl>& base = g.impl()->view_base;
  if (base && base.use_count() != 1) return false;
  const Storage& st = g.impl()->storage();
  return st.use_count() == (base ? 2u : 1u) && static_cast<size_t>(g.numel()) * element_size(g.dtype()) == st->nbytes();
}
}  // namespace

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads[0]);
  AutogradMetaImpl& m = meta_or_create(variable_);
  std::vector<GradHook> hooks;
  std::vector<std::function<void(const Tensor&)>> post_hooks;
  std::optional<ScalarType> cast_to;  // Tensor.grad_dtype, when set to a dtype
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    hooks = m.hooks;
    post_hooks = m.post_accumulate_hooks;
    cast_to = m.grad_dtype;
  }
  for (auto& hook : hooks) {  // outside the lock: Python hooks take the GIL
    Tensor r = hook(g);
    if (r.defined()) g = r;
  }
  if (!g.defined()) return {};
  if (cast_to && g.dtype() != *cast_to) g = to_dtype(g, *cast_to);
  // Note [Autograd threads]: the read-modify-write of .grad is under the leaf's lock, so
  // concurrent backward passes lose no update; tensors that may own a Python object (the old
  // .grad, the incoming g) are dropped after it.
  Tensor old;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    if (!m.grad.defined()) {
      if (GradMode::is_enabled()) {
        m.grad = g;  // create_graph: keep the history of the gradient
      } else {
        // Steal the buffer when nothing else refers to it; otherwise copy, so .grad never aliases
        // another tensor (optimizers update it in place). Expanded grads are made dense.
        bool exclusive = exclusive_buffer(g);
        if (g.is_contiguous())
          m.grad = exclusive ? detach(g) : clone(g);
        else
          m.grad = contiguous(g);  // a fresh dense copy (one copy, not clone's and then contiguous's)
      }
    } else if (GradMode::is_enabled()) {
      Tensor sum = add(m.grad, g);
      old = std::exchange(m.grad, std::move(sum));
    } else {
      binary_op(BinaryOp::Add, m.grad, g, m.grad, /*inplace=*/true);
    }
  }
  for (auto& hook : post_hooks) hook(variable_);
  return {};
}

// ---- SavedVariable ----

namespace {
struct SavedHookState {
  std::vector<PackHook> stack;
  std::optional<std::string> disabled;
};
SavedHookState& saved_hooks() {
  thread_local SavedHookState state;
  return state;
}
}  // namespace

void push_saved_tensor_hooks(PackHook pack) {
  auto& s = saved_hooks();
  EMBER_CHECK(!s.disabled, *s.disabled);
  s.stack.push_back(std::move(pack));
}
void pop_saved_tensor_hooks() {
  auto& s = saved_hooks();
  if (!s.stack.empty()) s.stack.pop_back();
}
std::optional<std::string> set_saved_tensor_hooks_disabled(std::optional<std::string> message) {
  auto& s = saved_hooks();
  std::swap(s.disabled, message);
  return message;
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  EMBER_CHECK(!t.impl()->is_inference || InferenceMode::is_enabled(),
              "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
              "tensor and use it in autograd.");
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t.version();
  requires_grad_ = requires_grad(t);
  if (auto& hooks = saved_hooks().stack; !hooks.empty()) {  // Note [Saved tensor hooks]
    if (auto* m = meta(t)) {
      if (is_output) output_nr_ = m->output_nr;
      if (m->grad_fn) producer_ = m->grad_fn->name();
    }
    // The hook runs with no hooks installed (its own ops save tensors as usual, not through it).
    std::vector<PackHook> installed;
    installed.swap(hooks);
    struct Restore {
      std::vector<PackHook>& hooks;
      std::vector<PackHook>& installed;
      ~Restore() { hooks.swap(installed); }
    } restore{hooks, installed};
    packed_ = installed.back()(is_output ? detach(t) : t);
    return;
  }
  t.impl()->version_counter_ref().watched.store(true, std::memory_order_relaxed);
  if (is_output) {
    // Saving an output with its grad_fn would form a cycle (node -> tensor -> node): keep the
    // data only and rebuild the history from the owning node on unpack.
    data_ = detach(t);
    if (auto* m = meta(t)) {
      output_nr_ = m->output_nr;
      if (m->grad_fn) producer_ = m->grad_fn->name();
    }
  } else {
    data_ = t;
    if (auto* m = meta(t); m && m->grad_fn) producer_ = m->grad_fn->name();
  }
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  if (!was_defined_) return Tensor();
  EMBER_CHECK(!released_,
              "Trying to backward through the graph a second time (or directly access saved tensors after they "
              "have already been freed). Saved intermediate values of the graph are freed when you call "
              ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
              "a second time or if you need to access saved tensors after calling backward.");
  // A saved output gets its history back, so double backward sees it as the owner's output.
  auto with_history = [&](const Tensor& value) {
    if (!(is_output_ && requires_grad_ && owner && GradMode::is_enabled())) return value;
    Tensor t = detach(value);
    AutogradMetaImpl& m = meta_or_create(t);
    m.grad_fn = owner;
    m.output_nr = output_nr_;
    return t;
  };
  if (packed_) return with_history(packed_->unpack());  // Note [Saved tensor hooks]
  uint32_t now = data_.version();
  if (now != saved_version_) {
    std::string from = is_output_ && owner ? owner->name() : producer_;
    std::ostringstream msg;
    msg << "one of the variables needed for gradient computation has been modified by an inplace operation: ["
        << dtype_name(data_.dtype()) << " " << data_.shape_str() << "]";
    if (!from.empty()) msg << ", which is output " << output_nr_ << " of " << from << ",";
    msg << " is at version " << now << "; expected version " << saved_version_ << " instead.";
    std::string where = last_mutation_of(data_.impl()->version_counter_ref());
    if (!where.empty()) msg << " It was last modified by " << where << ".";
    msg << " Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
           "ember.autograd.set_detect_anomaly(True).";
    throw Error(msg.str());
  }
  return with_history(data_);
}

}  // namespace ember::autograd
