#include <atomic>
#include <sstream>

#include "ember/autograd/accumulate.h"
#include "ember/autograd/forward_ad.h"
#include "ember/autograd/grad_mode.h"
#include "ember/ops/ops.h"

namespace ember::autograd {
namespace {
std::atomic<uint64_t> g_next_seq{0};
}

Node::Node() : seq_(g_next_seq.fetch_add(1, std::memory_order_relaxed)) {}

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_meta_.push_back(InputMeta{t.sizes(), t.dtype()});
  return static_cast<uint32_t>(input_meta_.size() - 1);
}

AutogradMetaImpl* meta(const Tensor& t) { return static_cast<AutogradMetaImpl*>(t.impl()->autograd_meta()); }

AutogradMetaImpl& meta_or_create(const Tensor& t) {
  if (!t.impl()->autograd_meta()) t.impl()->set_autograd_meta(std::make_unique<AutogradMetaImpl>());
  return *meta(t);
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
  AutogradMetaImpl* m = meta(t);
  return m ? m->grad_fn : nullptr;
}

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMetaImpl& m = meta_or_create(t);
  if (auto acc = m.grad_accumulator.lock()) return acc;
  // The accumulator holds the leaf (a new handle to the same impl); the leaf holds it weakly.
  auto acc = std::make_shared<AccumulateGrad>(t);
  acc->add_input_metadata(t);
  m.grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};  // an absent optional input (e.g. clamp's max)
  AutogradMetaImpl* m = meta(t);
  if (!m) return {};
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (m->requires_grad) return Edge{grad_accumulator(t), 0};
  return {};
}

void set_history(const Tensor& out, const std::shared_ptr<Node>& fn) {
  if (AnomalyMode::is_enabled() && fn->forward_site.empty()) fn->forward_site = current_site();
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
  if (m->retained_grad && !m->grad.defined()) return *m->retained_grad;
  return m->grad;
}

void set_grad(const Tensor& t, const Tensor& g) {
  if (g.defined()) {
    EMBER_CHECK(g.sizes() == t.sizes(), "assigned grad has data of a different size");
    EMBER_CHECK(g.dtype() == t.dtype(), "assigned grad has data of a different type");
  }
  AutogradMetaImpl& m = meta_or_create(t);
  m.grad = g;
  if (m.retained_grad) *m.retained_grad = g;
}

void retain_grad(const Tensor& t) {
  EMBER_CHECK(requires_grad(t), "can't retain_grad on Tensor that has requires_grad=False");
  AutogradMetaImpl& m = meta_or_create(t);
  if (!m.grad_fn || m.retains_grad) return;  // leaves keep .grad anyway
  m.retains_grad = true;
  m.retained_grad = std::make_shared<Tensor>();
  std::shared_ptr<Tensor> slot = m.retained_grad;
  m.grad_fn->pre_hooks.emplace_back(m.output_nr, [slot](const Tensor& g) {
    NoGradGuard ng;
    *slot = slot->defined() ? add(*slot, g) : clone(g);
    return Tensor();
  });
}

// ---- AccumulateGrad ----

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads[0]);
  AutogradMetaImpl& m = meta_or_create(variable_);
  for (auto& hook : m.hooks) {
    Tensor r = hook(g);
    if (r.defined()) g = r;
  }
  if (!g.defined()) return {};
  if (!m.grad.defined()) {
    if (GradMode::is_enabled()) {
      m.grad = g;  // create_graph: keep the history of the gradient
    } else {
      // Steal the buffer when nothing else refers to it; otherwise copy, so .grad never aliases
      // another tensor (optimizers update it in place). Expanded grads are made dense.
      bool exclusive = g.impl_ptr().use_count() == 1 && g.impl()->storage().use_count() == 1;
      m.grad = exclusive && g.is_contiguous() ? detach(g) : contiguous(clone(g));
    }
  } else if (GradMode::is_enabled()) {
    m.grad = add(m.grad, g);
  } else {
    binary_op(BinaryOp::Add, m.grad, g, m.grad, /*inplace=*/true);
  }
  for (auto& hook : m.post_accumulate_hooks) hook(variable_);
  return {};
}

// ---- SavedVariable ----

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  EMBER_CHECK(!t.impl()->is_inference || InferenceMode::is_enabled(),
              "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
              "tensor and use it in autograd.");
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t.version();
  requires_grad_ = requires_grad(t);
  t.impl()->version_counter()->watched = true;
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
  uint32_t now = data_.version();
  if (now != saved_version_) {
    std::string from = is_output_ && owner ? owner->name() : producer_;
    std::ostringstream msg;
    msg << "one of the variables needed for gradient computation has been modified by an inplace operation: ["
        << dtype_name(data_.dtype()) << " " << data_.shape_str() << "]";
    if (!from.empty()) msg << ", which is output " << output_nr_ << " of " << from << ",";
    msg << " is at version " << now << "; expected version " << saved_version_ << " instead.";
    const std::string& where = data_.impl()->version_counter()->last_mutation;
    if (!where.empty()) msg << " It was last modified by " << where << ".";
    msg << " Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
           "ember.autograd.set_detect_anomaly(True).";
    throw Error(msg.str());
  }
  if (is_output_ && requires_grad_ && owner && GradMode::is_enabled()) {
    // Re-attach the history so double backward sees this value as the owner's output.
    Tensor t = detach(data_);
    AutogradMetaImpl& m = meta_or_create(t);
    m.grad_fn = owner;
    m.output_nr = output_nr_;
    return t;
  }
  return data_;
}

}  // namespace ember::autograd
