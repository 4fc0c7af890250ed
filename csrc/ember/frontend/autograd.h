// torch::autograd for C++: backward/grad over several tensors, and custom differentiable
// functions (torch::autograd::Function<T> with an AutogradContext), recorded as nodes of
// ember's autograd graph and run by its engine (Note [C++ frontend]).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/frontend/functions.h"

namespace c10 {

// A small tagged value (c10::IValue) for AutogradContext::saved_data.
class IValue {
 public:
  IValue() = default;
  IValue(std::nullopt_t) {}                                  // NOLINT
  IValue(at::Tensor t) : v_(std::move(t)) {}                 // NOLINT
  IValue(ember::Tensor t) : v_(at::Tensor(std::move(t))) {}  // NOLINT
  IValue(double d) : v_(d) {}                                // NOLINT
  IValue(float d) : v_(static_cast<double>(d)) {}            // NOLINT
  IValue(int64_t i) : v_(i) {}                               // NOLINT
  IValue(int i) : v_(static_cast<int64_t>(i)) {}             // NOLINT
  IValue(bool b) : v_(b) {}                                  // NOLINT
  IValue(std::string s) : v_(std::move(s)) {}                // NOLINT
  IValue(const char* s) : v_(std::string(s)) {}              // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}       // NOLINT
  IValue(IntArrayRef v) : v_(v.vec()) {}                     // NOLINT
  IValue(std::vector<double> v) : v_(std::move(v)) {}        // NOLINT
  IValue(std::vector<at::Tensor> v) : v_(std::move(v)) {}    // NOLINT
  IValue(const c10::Scalar& s) {                             // NOLINT
    if (s.is_floating())
      v_ = s.to_double();
    else if (s.is_bool())
      v_ = s.to_bool();
    else
      v_ = s.to_int();
  }

  bool isNone() const { return v_.index() == 0; }
  bool isTensor() const { return std::holds_alternative<at::Tensor>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(v_); }
  bool isDoubleList() const { return std::holds_alternative<std::vector<double>>(v_); }
  bool isTensorList() const { return std::holds_alternative<std::vector<at::Tensor>>(v_); }
  bool isScalar() const { return isDouble() || isInt() || isBool(); }

  const at::Tensor& toTensor() const { return get<at::Tensor>("Tensor"); }
  double toDouble() const { return get<double>("Double"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  bool toBool() const { return get<bool>("Bool"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  std::string toString() const { return toStringRef(); }
  std::vector<int64_t> toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  std::vector<int64_t> toIntList() const { return toIntVector(); }
  std::vector<double> toDoubleVector() const { return get<std::vector<double>>("DoubleList"); }
  std::vector<at::Tensor> toTensorVector() const { return get<std::vector<at::Tensor>>("TensorList"); }
  c10::Scalar toScalar() const {
    if (isDouble()) return c10::Scalar(toDouble());
    if (isInt()) return c10::Scalar(toInt());
    return c10::Scalar(toBool());
  }
  std::string tagKind() const;

 private:
  template <typename T>
  const T& get(const char* what) const {
    if (const T* p = std::get_if<T>(&v_)) return *p;
    throw ember::Error(std::string("Expected ") + what + " but got " + tagKind());
  }
  std::variant<std::monostate, at::Tensor, double, int64_t, bool, std::string, std::vector<int64_t>,
               std::vector<double>, std::vector<at::Tensor>>
      v_;
};

}  // namespace c10

namespace at {
using c10::IValue;
}

namespace torch::autograd {

using at::Tensor;
using Variable = at::Tensor;
using variable_list = std::vector<at::Tensor>;
using tensor_list = std::vector<at::Tensor>;
using Node = ember::autograd::Node;
using at::AutoGradMode;
using at::GradMode;
using at::NoGradGuard;

// Backpropagates from `outputs`, returning the gradients of `inputs` (not accumulated into .grad).
variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                   bool allow_unused = false);
// Accumulates the gradients of the graph's leaves (or only of `inputs`) into their .grad.
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const variable_list& inputs = {});

// Anomaly detection while the guard lives (torch::autograd::DetectAnomalyGuard).
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool check_nan = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_, prev_nan_;
};
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled, bool check_nan = true);
};

namespace detail {
struct CppNodeBase;
// A node for these tensor inputs when grad mode is on and one of them requires grad, else null.
std::shared_ptr<CppNodeBase> make_node(std::shared_ptr<CppNodeBase> node, const variable_list& inputs);
}  // namespace detail

// What forward and backward of a custom Function share: tensors saved for backward (checked
// against in-place changes on unpack), other values in saved_data, and the marks forward sets.
struct AutogradContext {
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  std::unordered_map<std::string, at::IValue> saved_data;

  void save_for_backward(variable_list to_save);
  void mark_dirty(const variable_list& inputs);
  void mark_non_differentiable(const variable_list& outputs);
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  variable_list get_saved_variables() const;
  bool needs_input_grad(size_t output_edge_index) const;
  bool needs_input_grad(std::initializer_list<size_t> indices) const;

 private:
  friend struct detail::CppNodeBase;
  friend std::shared_ptr<detail::CppNodeBase> detail::make_node(std::shared_ptr<detail::CppNodeBase> node,
                                                                const variable_list& inputs);
  friend variable_list detail_wrap_outputs(detail::CppNodeBase*, AutogradContext*, const variable_list&, variable_list);
  variable_list to_save_;
  std::vector<ember::autograd::SavedVariable> saved_;
  std::unordered_set<const ember::TensorImpl*> dirty_, non_differentiable_;
  std::weak_ptr<Node> grad_fn_;
  std::vector<bool> needs_grad_;  // per tensor input
  bool materialize_grads_ = true;
};

namespace detail {

using BackwardFn = std::function<variable_list(AutogradContext*, variable_list)>;

// The node a custom Function records; apply() calls the user's backward with the context.
struct CppNodeBase : Node {
  AutogradContext ctx;
  std::string name_;
  BackwardFn backward_fn;
  std::vector<bool> is_variable_input;  // per forward argument (tensors in lists each count)
  std::string name() const override { return name_; }
  bool materialize_grads() const override { return ctx.materialize_grads_; }
  ember::autograd::TensorList apply(ember::autograd::TensorList&& grads) override;
  void release_variables() override;
};

// Forward's arguments as libtorch counts them: each tensor (also inside a list, or an optional)
// is a variable input with an edge; any other argument is an input that gets no gradient.
inline void collect(variable_list& out, std::vector<bool>& is_var, const at::Tensor& t) {
  out.push_back(t);
  is_var.push_back(true);
}
inline void collect(variable_list& out, std::vector<bool>& is_var, const ember::Tensor& t) {
  out.push_back(t);
  is_var.push_back(true);
}
inline void collect(variable_list& out, std::vector<bool>& is_var, const std::vector<at::Tensor>& ts) {
  for (const at::Tensor& t : ts) collect(out, is_var, t);
}
inline void collect(variable_list& out, std::vector<bool>& is_var, const std::optional<at::Tensor>& t) {
  collect(out, is_var, t ? *t : at::Tensor());
}
template <typename T>
void collect(variable_list&, std::vector<bool>& is_var, const T&) {
  is_var.push_back(false);
}

}  // namespace detail

variable_list detail_wrap_outputs(detail::CppNodeBase* node, AutogradContext* ctx, const variable_list& inputs,
                                  variable_list outputs);

// Named so that grad_fn()->name() reads "torch::autograd::CppNode<MyFunction>", as in libtorch.
template <class T>
struct CppNode : detail::CppNodeBase {};

// A custom differentiable function: T provides
//   static Tensor-or-variable_list forward(AutogradContext* ctx, args...);
//   static variable_list backward(AutogradContext* ctx, variable_list grad_outputs);
// and is called as T::apply(args...). As in libtorch, backward returns one gradient per argument
// of forward (undefined for arguments that are not tensors or need none; extra undefined
// gradients at the end are allowed); forward runs with grad mode off.
template <class T>
struct Function {
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args)
      -> std::enable_if_t<std::is_same_v<X, T>,
                          decltype(X::forward(static_cast<AutogradContext*>(nullptr), std::forward<Args>(args)...))> {
    using R = decltype(X::forward(static_cast<AutogradContext*>(nullptr), std::forward<Args>(args)...));
    variable_list inputs;
    auto proto = std::make_shared<CppNode<T>>();
    (detail::collect(inputs, proto->is_variable_input, args), ...);
    proto->name_ = c10::demangle(typeid(CppNode<T>).name());
    proto->backward_fn = [](AutogradContext* ctx, variable_list g) { return X::backward(ctx, std::move(g)); };
    std::shared_ptr<detail::CppNodeBase> node = detail::make_node(proto, inputs);
    AutogradContext* ctx = &proto->ctx;
    R out;
    {
      ember::autograd::AutoGradMode no_grad(false);
      out = X::forward(ctx, std::forward<Args>(args)...);
    }
    if constexpr (std::is_convertible_v<R, variable_list> && !std::is_convertible_v<R, at::Tensor>) {
      return R(detail_wrap_outputs(node.get(), ctx, inputs, variable_list(out)));
    } else {
      return R(detail_wrap_outputs(node.get(), ctx, inputs, variable_list{at::Tensor(out)})[0]);
    }
  }
};

}  // namespace torch::autograd
