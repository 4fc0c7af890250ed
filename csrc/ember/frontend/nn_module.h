// torch::nn::Module (parameters, buffers, submodules, train/eval, to(dtype), printing) and the
// module holders (torch::nn::Linear wraps a shared_ptr<LinearImpl>; TORCH_MODULE(Name) declares
// one for NameImpl), with libtorch's names and behaviour.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/frontend/functions.h"

namespace torch {
template <typename Key, typename Value>
using OrderedDict = c10::OrderedDict<Key, Value>;
}  // namespace torch

namespace torch::serialize {
class OutputArchive;
class InputArchive;
}  // namespace torch::serialize

namespace torch::nn {

using at::Tensor;
template <typename Contained>
class ModuleHolder;

class Module : public std::enable_shared_from_this<Module> {
 public:
  using ModuleApplyFunction = std::function<void(Module&)>;
  using ConstModuleApplyFunction = std::function<void(const Module&)>;
  using NamedModuleApplyFunction = std::function<void(const std::string&, Module&)>;
  using ModulePointerApplyFunction = std::function<void(const std::shared_ptr<Module>&)>;
  using NamedModulePointerApplyFunction = std::function<void(const std::string&, const std::shared_ptr<Module>&)>;

  explicit Module(std::string name);
  Module();
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  Module(Module&&) noexcept = default;
  Module& operator=(Module&&) noexcept = default;
  virtual ~Module() = default;

  // The demangled class name unless one was given ("Net", "torch::nn::LinearImpl").
  const std::string& name() const noexcept;
  // A deep copy; modules derived from Cloneable<T> implement it.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  void apply(const ModuleApplyFunction& fn);
  void apply(const ConstModuleApplyFunction& fn) const;
  void apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix = std::string());
  void apply(const ModulePointerApplyFunction& fn) const;
  void apply(const NamedModulePointerApplyFunction& fn, const std::string& name_prefix = std::string()) const;

  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& name_prefix = std::string(),
                                                                  bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;

  virtual void train(bool on = true);
  void eval() { train(false); }
  virtual bool is_training() const noexcept { return is_training_; }

  // Converts floating-point parameters and buffers in place (every handle to them sees it).
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void to(Device device, bool non_blocking = false);

  virtual void zero_grad(bool set_to_none = true);

  template <typename ModuleType>
  typename ModuleType::ContainedType* as() noexcept {
    return as<typename ModuleType::ContainedType>();
  }
  template <typename ModuleType>
  const typename ModuleType::ContainedType* as() const noexcept {
    return as<typename ModuleType::ContainedType>();
  }
  template <typename ModuleType, typename = std::enable_if_t<std::is_base_of_v<Module, ModuleType>>>
  ModuleType* as() noexcept {
    return dynamic_cast<ModuleType*>(this);
  }
  template <typename ModuleType, typename = std::enable_if_t<std::is_base_of_v<Module, ModuleType>>>
  const ModuleType* as() const noexcept {
    return dynamic_cast<const ModuleType*>(this);
  }

  virtual void save(serialize::OutputArchive& archive) const;
  virtual void load(serialize::InputArchive& archive);

  // One line describing this module (without its children); printing a module adds those.
  virtual void pretty_print(std::ostream& stream) const;
  virtual bool is_serializable() const { return true; }

  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <typename ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string name, std::shared_ptr<ModuleType> module) {
    check_module_name(name, "Submodule");
    EMBER_CHECK(module != nullptr, "Submodule '", name, "' is null");
    children_.insert(std::move(name), std::static_pointer_cast<Module>(module));
    return module;
  }
  template <typename ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string name, ModuleHolder<ModuleType> module_holder) {
    return register_module(std::move(name), module_holder.ptr());
  }
  template <typename ModuleType>
  std::shared_ptr<ModuleType> replace_module(const std::string& name, std::shared_ptr<ModuleType> module) {
    auto& slot = children_[name];
    slot = std::static_pointer_cast<Module>(module);
    return module;
  }
  template <typename ModuleType>
  std::shared_ptr<ModuleType> replace_module(const std::string& name, ModuleHolder<ModuleType> module_holder) {
    return replace_module(name, module_holder.ptr());
  }
  void unregister_module(const std::string& name);

 protected:
  // The parameters/buffers/children of this module only (torch's _parameters etc.).
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  // Used by Cloneable::clone to rebuild a copy's registrations.
  void clear_registrations() {
    parameters_.clear();
    buffers_.clear();
    children_.clear();
  }

 private:
  template <typename T>
  friend class Cloneable;
  friend std::ostream& operator<<(std::ostream&, const Module&);
  static void check_module_name(const std::string& name, const char* what);
  std::shared_ptr<Module> shared_from_this_checked() const;
  void pretty_print_recursive(std::ostream& stream, const std::string& indentation) const;
  void apply_to_submodules(const NamedModulePointerApplyFunction& fn, const std::string& name_prefix) const;
  void convert(const std::function<Tensor(const Tensor&)>& fn);
  // Copies the values of src's parameters and buffers into dst's (same structure), recursively.
  static void copy_state(Module& dst, const Module& src, const std::optional<Device>& device);

  mutable std::optional<std::string> name_;
  bool is_training_ = true;
};

std::ostream& operator<<(std::ostream& stream, const Module& module);

// A shared_ptr to a module implementation, used like a pointer: fc->weight, fc->forward(x), or
// called: fc(x). Default construction constructs the module (when it has a default constructor);
// `Linear fc{nullptr}` leaves it empty until assigned.
template <typename Contained>
class ModuleHolder {
 protected:
  std::shared_ptr<Contained> impl_;

 public:
  using ContainedType = Contained;

  ModuleHolder() : impl_(default_construct()) {}
  ModuleHolder(std::nullptr_t) : impl_(nullptr) {}  // NOLINT
  template <
      typename Head, typename... Tail,
      typename = std::enable_if_t<!(sizeof...(Tail) == 0 && (std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                                                             std::is_convertible_v<Head, std::shared_ptr<Contained>> ||
                                                             std::is_base_of_v<ModuleHolder, std::decay_t<Head>>))>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT

  explicit operator bool() const noexcept { return !is_empty(); }
  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }
  Contained* get() {
    check_not_empty();
    return impl_.get();
  }
  const Contained* get() const {
    check_not_empty();
    return impl_.get();
  }
  template <typename... Args, typename C = Contained>
  auto operator()(Args&&... args) -> decltype(std::declval<C&>().forward(std::forward<Args>(args)...)) {
    return get()->forward(std::forward<Args>(args)...);
  }
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*get())[std::forward<Arg>(arg)];
  }
  bool is_empty() const noexcept { return impl_ == nullptr; }

 private:
  static std::shared_ptr<Contained> default_construct() {
    if constexpr (std::is_default_constructible_v<Contained>)
      return std::make_shared<Contained>();
    else
      return nullptr;  // as libtorch: such holders must be given a module (or nullptr)
  }
  void check_not_empty() const { EMBER_CHECK(!is_empty(), "Accessing empty ModuleHolder"); }
};

template <typename ModuleType>
std::ostream& operator<<(std::ostream& stream, const ModuleHolder<ModuleType>& module) {
  return stream << *module;
}

// Modules that can be deep-copied: reset() (re)creates the parameters, clone() copies their values.
template <typename Derived>
class Cloneable : public Module {
 public:
  using Module::Module;
  virtual void reset() = 0;
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->clear_registrations();
    copy->reset();
    copy_state(*copy, *this, device);
    return copy;
  }
};

}  // namespace torch::nn

// Declares `Name`, a ModuleHolder of NameImpl (libtorch's TORCH_MODULE).
#define TORCH_MODULE_IMPL(Name, ImplType)                  \
  class Name : public torch::nn::ModuleHolder<ImplType> {  \
   public:                                                 \
    using torch::nn::ModuleHolder<ImplType>::ModuleHolder; \
    using Impl = ImplType;                                 \
  }
#define TORCH_MODULE(Name) TORCH_MODULE_IMPL(Name, Name##Impl)
