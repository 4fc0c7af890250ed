#include "ember/frontend/autograd.h"

#include "ember/autograd/engine.h"
#include "ember/autograd/record.h"

namespace c10 {

std::string IValue::tagKind() const {
  static const char* names[] = {"None",   "Tensor",  "Double",     "Int",       "Bool",
                                "String", "IntList", "DoubleList", "TensorList"};
  return names[v_.index()];
}

}  // namespace c10

namespace torch::autograd {
namespace ag = ember::autograd;

namespace {
std::vector<ember::Tensor> ember_list(const variable_list& v) { return std::vector<ember::Tensor>(v.begin(), v.end()); }
variable_list at_list(const std::vector<ember::Tensor>& v) { return variable_list(v.begin(), v.end()); }
}  // namespace

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  EMBER_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(),
              "grad requires one grad_output per output (got ", grad_outputs.size(), " for ", outputs.size(),
              " outputs)");
  EMBER_CHECK(!inputs.empty(), "grad requires non-empty inputs.");
  ag::BackwardOptions o;
  o.create_graph = create_graph;
  o.keep_graph = retain_graph.value_or(create_graph);
  o.accumulate = false;
  o.allow_unused = allow_unused;
  std::vector<ember::Tensor> g =
      grad_outputs.empty() ? std::vector<ember::Tensor>(outputs.size()) : ember_list(grad_outputs);
  return at_list(ag::run_backward(ember_list(outputs), g, ember_list(inputs), o));
}

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  EMBER_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(),
              "backward requires one grad_tensor per tensor (got ", grad_tensors.size(), " for ", tensors.size(), ")");
  ag::BackwardOptions o;
  o.create_graph = create_graph;
  o.keep_graph = retain_graph.value_or(create_graph);
  o.accumulate = true;
  std::vector<ember::Tensor> g =
      grad_tensors.empty() ? std::vector<ember::Tensor>(tensors.size()) : ember_list(grad_tensors);
  ag::run_backward(ember_list(tensors), g, ember_list(inputs), o);
}

DetectAnomalyGuard::DetectAnomalyGuard(bool check_nan)
    : prev_(ag::AnomalyMode::is_enabled()), prev_nan_(ag::AnomalyMode::check_nan()) {
  ag::AnomalyMode::set_enabled(true, check_nan);
}
DetectAnomalyGuard::~DetectAnomalyGuard() { ag::AnomalyMode::set_enabled(prev_, prev_nan_); }
bool AnomalyMode::is_enabled() { return ag::AnomalyMode::is_enabled(); }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) { ag::AnomalyMode::set_enabled(enabled, check_nan); }

// ---- AutogradContext ----

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_dirty(const variable_list& inputs) {
  dirty_.clear();
  for (const at::Tensor& t : inputs)
    if (t.defined()) dirty_.insert(t.impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_.clear();
  for (const at::Tensor& t : outputs)
    if (t.defined()) non_differentiable_.insert(t.impl());
}

variable_list AutogradContext::get_saved_variables() const {
  auto owner = grad_fn_.lock();
  variable_list r;
  if (saved_.empty() && !to_save_.empty()) return to_save_;  // forward has not finished (or no graph)
  for (const ag::SavedVariable& v : saved_) r.push_back(v.unpack(owner));
  return r;
}

bool AutogradContext::needs_input_grad(size_t i) const { return i < needs_grad_.size() && needs_grad_[i]; }

bool AutogradContext::needs_input_grad(std::initializer_list<size_t> indices) const {
  for (size_t i : indices)
    if (needs_input_grad(i)) return true;
  return false;
}

namespace detail {

std::shared_ptr<CppNodeBase> make_node(std::shared_ptr<CppNodeBase> node, const variable_list& inputs) {
  bool any = false;
  node->ctx.needs_grad_.assign(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool r = inputs[i].defined() && ag::requires_grad(inputs[i]);
    node->ctx.needs_grad_[i] = r;
    any = any || r;
  }
  if (!any || !ag::GradMode::is_enabled()) {
    node->ctx.needs_grad_.assign(inputs.size(), false);
    return nullptr;
  }
  for (const at::Tensor& t : inputs) node->next_edges.push_back(t.defined() ? ag::gradient_edge(t) : ag::Edge{});
  return node;
}

ember::autograd::TensorList CppNodeBase::apply(ember::autograd::TensorList&& grads) {
  variable_list in(grads.begin(), grads.end());
  variable_list out = backward_fn(&ctx, std::move(in));
  size_t n = is_variable_input.size();
  if (out.size() > n) {  // extra trailing gradients are allowed when undefined, as libtorch
    for (size_t i = n; i < out.size(); ++i)
      EMBER_CHECK(!out[i].defined(), "function ", name_, " returned an incorrect number of gradients (expected ", n,
                  ", got ", out.size(), ")");
    out.resize(n);
  }
  EMBER_CHECK(out.size() == n, "function ", name_, " returned an incorrect number of gradients (expected ", n, ", got ",
              out.size(), ")");
  ember::autograd::TensorList r;
  r.reserve(next_edges.size());
  for (size_t i = 0; i < n; ++i) {
    if (!is_variable_input[i]) {
      EMBER_CHECK(!out[i].defined(), "function ", name_, " returned a gradient different than None at position ", i + 1,
                  ", but the corresponding forward input was not a Variable");
      continue;
    }
    size_t e = r.size();
    r.emplace_back();
    if (!out[i].defined() || !next_edges[e].valid()) continue;
    const ag::InputMeta& want = next_edges[e].fn->input_meta(next_edges[e].input_nr);
    EMBER_CHECK(out[i].ember::Tensor::sizes() == want.shape, "Function ", name_,
                " returned an invalid gradient at index ", i, " - got ", out[i].shape_str(),
                " but expected shape compatible with ", ember::shape_str(want.shape));
    r.back() = out[i];
  }
  return r;
}

void CppNodeBase::release_variables() {
  for (ag::SavedVariable& v : ctx.saved_) v.reset();
}

}  // namespace detail

variable_list detail_wrap_outputs(detail::CppNodeBase* node, AutogradContext* ctx, const variable_list& inputs,
                                  variable_list outputs) {
  for (at::Tensor& out : outputs) {
    if (!out.defined() || !node) continue;
    bool is_input = false;
    for (const at::Tensor& in : inputs)
      if (in.defined() && in.is_same(out)) is_input = true;
    if (ctx->non_differentiable_.count(out.impl())) {
      node->add_input_metadata(out);  // backward still receives a (zero) gradient for it
    } else if (ctx->dirty_.count(out.impl())) {
      ag::check_inplace(out, true);
      auto& m = ag::meta_or_create(out);
      m.grad_fn = node->shared_from_this();
      m.output_nr = node->add_input_metadata(out);
      m.requires_grad = false;
    } else {
      if (is_input) out = ag::detach(out);  // an input returned as is gets a fresh history
      ag::set_history(out, node->shared_from_this());
    }
  }
  for (const at::Tensor& t : ctx->to_save_) {
    bool is_output = false;
    for (const at::Tensor& o : outputs)
      if (t.defined() && o.is_same(t)) is_output = true;
    ctx->saved_.emplace_back(t, is_output && node);
  }
  ctx->to_save_.clear();
  if (node) ctx->grad_fn_ = node->shared_from_this();
  return outputs;
}

}  // namespace torch::autograd
