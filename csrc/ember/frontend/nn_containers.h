// Module containers: Sequential (forward chains its modules), ModuleList, ModuleDict,
// ParameterList, ParameterDict, and Functional (a function as a module). AnyModule holds any
// module with a single, non-template forward() and calls it with type-erased arguments.
#pragma once
#include <any>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ember/frontend/nn_module.h"

namespace torch::nn {

// A value of any copyable type (a module's argument or result), checked on access.
class AnyValue {
 public:
  template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, AnyValue>>>
  explicit AnyValue(T&& value) : value_(std::decay_t<T>(std::forward<T>(value))) {}
  template <typename T>
  T* try_get() {
    return std::any_cast<T>(&value_);
  }
  template <typename T>
  T get() {
    if (T* p = try_get<T>()) return *p;
    throw ember::Error("Attempted to cast AnyValue to " + c10::demangle(typeid(T).name()) +
                       ", but its actual type is " + c10::demangle(value_.type().name()));
  }
  const std::type_info& type_info() const noexcept { return value_.type(); }

 private:
  std::any value_;
};

namespace detail {
template <typename T>
T take_arg(std::vector<AnyValue>& args, size_t i, size_t forward_arity, const std::string& name) {
  if (i < args.size()) {
    if (T* p = args[i].try_get<T>()) return *p;
    // Numbers convert, as they would in a direct call.
    if constexpr (std::is_arithmetic_v<T>) {
      if (auto* v = args[i].try_get<int>()) return static_cast<T>(*v);
      if (auto* v = args[i].try_get<int64_t>()) return static_cast<T>(*v);
      if (auto* v = args[i].try_get<double>()) return static_cast<T>(*v);
      if (auto* v = args[i].try_get<bool>()) return static_cast<T>(*v);
    }
    if constexpr (std::is_same_v<T, at::Tensor>)
      if (auto* v = args[i].try_get<ember::Tensor>()) return at::Tensor(*v);
    throw ember::Error("Expected argument #" + std::to_string(i) + " to be of type " + c10::demangle(typeid(T).name()) +
                       ", but received value of type " + c10::demangle(args[i].type_info().name()));
  }
  // Trailing tensor and optional arguments may be left out (their default is empty).
  if constexpr (std::is_same_v<T, at::Tensor> || std::is_default_constructible_v<T>)
    return T{};
  else
    throw ember::Error(name + "'s forward() expects " + std::to_string(forward_arity) + " argument(s)");
}
}  // namespace detail

class SequentialImpl;

class AnyModule {
 public:
  AnyModule() = default;
  template <typename M>
  explicit AnyModule(std::shared_ptr<M> module) {
    bind(std::move(module));
  }
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  explicit AnyModule(M&& module) : AnyModule(std::make_shared<std::decay_t<M>>(std::forward<M>(module))) {}
  template <typename M>
  explicit AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}

  template <typename... Args>
  AnyValue any_forward(Args&&... args) {
    check_not_empty();
    std::vector<AnyValue> values;
    (values.emplace_back(std::forward<Args>(args)), ...);
    return forward_(values);
  }
  AnyValue any_forward(std::vector<AnyValue>& values) {
    check_not_empty();
    return forward_(values);
  }
  template <typename Return = at::Tensor, typename... Args>
  Return forward(Args&&... args) {
    return any_forward(std::forward<Args>(args)...).template get<Return>();
  }
  const std::shared_ptr<Module>& ptr() const { return module_; }
  template <typename T>
  std::shared_ptr<T> ptr() const {
    check_not_empty();
    auto p = std::dynamic_pointer_cast<T>(module_);
    EMBER_CHECK(p != nullptr, "Attempted to cast module of type ", module_->name(), " to type ",
                c10::demangle(typeid(T).name()));
    return p;
  }
  template <typename T>
  T& get() const {
    return *ptr<T>();
  }
  bool is_empty() const noexcept { return module_ == nullptr; }
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const {
    check_not_empty();
    return rebind_(module_->clone(device));
  }

 private:
  template <typename M>
  void bind(std::shared_ptr<M> module) {
    EMBER_CHECK(module != nullptr, "AnyModule: cannot hold a null module");
    module_ = module;
    rebind_ = [](std::shared_ptr<Module> m) { return AnyModule(std::dynamic_pointer_cast<M>(m)); };
    if constexpr (std::is_base_of_v<SequentialImpl, M>) {
      M* raw = module.get();
      forward_ = [raw](std::vector<AnyValue>& args) { return sequential_forward(*raw, args); };
    } else {
      forward_ = make_forward(module, &M::forward);
    }
  }
  static AnyValue sequential_forward(SequentialImpl& seq, std::vector<AnyValue>& args);
  template <typename M, typename C, typename R, typename... A>
  static std::function<AnyValue(std::vector<AnyValue>&)> make_forward(const std::shared_ptr<M>& m, R (C::*fn)(A...)) {
    M* raw = m.get();  // the module owns itself through module_; no cycle
    return [raw, fn](std::vector<AnyValue>& args) { return call(raw, fn, args, std::index_sequence_for<A...>{}); };
  }
  template <typename M, typename C, typename R, typename... A>
  static std::function<AnyValue(std::vector<AnyValue>&)> make_forward(const std::shared_ptr<M>& m,
                                                                      R (C::*fn)(A...) const) {
    M* raw = m.get();
    return [raw, fn](std::vector<AnyValue>& args) { return call(raw, fn, args, std::index_sequence_for<A...>{}); };
  }
  template <typename M, typename F, size_t... I>
  static AnyValue call(M* m, F fn, std::vector<AnyValue>& args, std::index_sequence<I...>) {
    using Traits = ArgTypes<F>;
    constexpr size_t n = sizeof...(I);
    EMBER_CHECK(args.size() <= n, m->name(), "'s forward() expects ", n, " argument(s), got ", args.size());
    return AnyValue((m->*fn)(
        detail::take_arg<std::decay_t<std::tuple_element_t<I, typename Traits::type>>>(args, I, n, m->name())...));
  }
  template <typename F>
  struct ArgTypes;
  template <typename C, typename R, typename... A>
  struct ArgTypes<R (C::*)(A...)> {
    using type = std::tuple<A...>;
  };
  template <typename C, typename R, typename... A>
  struct ArgTypes<R (C::*)(A...) const> {
    using type = std::tuple<A...>;
  };
  void check_not_empty() const { EMBER_CHECK(module_ != nullptr, "Cannot call forward() on an empty AnyModule"); }

  std::shared_ptr<Module> module_;
  std::function<AnyValue(std::vector<AnyValue>&)> forward_;
  std::function<AnyModule(std::shared_ptr<Module>)> rebind_;
};

// A name and a module, for Sequential({{"conv", Conv2d(...)}, {"relu", ReLU()}}).
class NamedAnyModule {
 public:
  template <typename M>
  NamedAnyModule(std::string name, std::shared_ptr<M> module) : name_(std::move(name)), module_(std::move(module)) {}
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  NamedAnyModule(std::string name, M&& module) : name_(std::move(name)), module_(std::forward<M>(module)) {}
  template <typename M>
  NamedAnyModule(std::string name, const ModuleHolder<M>& holder) : name_(std::move(name)), module_(holder) {}
  NamedAnyModule(std::string name, AnyModule module) : name_(std::move(name)), module_(std::move(module)) {}
  const std::string& name() const noexcept { return name_; }
  const AnyModule& module() const noexcept { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

class SequentialImpl : public Cloneable<SequentialImpl> {
 public:
  using Iterator = std::vector<AnyModule>::iterator;
  using ConstIterator = std::vector<AnyModule>::const_iterator;

  SequentialImpl() = default;
  template <typename... Modules>
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  explicit SequentialImpl(OrderedDict<std::string, AnyModule>&& ordered_dict) {
    for (auto& item : ordered_dict) push_back(item.key(), item.value());
  }
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named_modules) {
    for (const auto& m : named_modules) push_back(m.name(), m.module());
  }

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::Sequential"; }

  // Calls the first module with `inputs`, each next one with its predecessor's output.
  template <typename ReturnType = at::Tensor, typename... InputTypes>
  ReturnType forward(InputTypes&&... inputs) {
    EMBER_CHECK(!is_empty(), "Cannot call forward() on an empty Sequential");
    auto it = modules_.begin();
    AnyValue value = it->any_forward(std::forward<InputTypes>(inputs)...);
    for (++it; it != modules_.end(); ++it) {
      std::vector<AnyValue> args{std::move(value)};
      value = it->any_forward(args);
    }
    if (auto* r = value.template try_get<ReturnType>()) return *r;
    throw ember::Error("The type of the return value is " + c10::demangle(value.type_info().name()) +
                       ", but you asked for type " + c10::demangle(typeid(ReturnType).name()));
  }

  void push_back(AnyModule module) { push_back(std::to_string(modules_.size()), std::move(module)); }
  void push_back(std::string name, AnyModule module) {
    register_module(std::move(name), module.ptr());
    modules_.push_back(std::move(module));
  }
  template <typename M>
  void push_back(std::shared_ptr<M> module) {
    push_back(AnyModule(std::move(module)));
  }
  template <typename M>
  void push_back(std::string name, std::shared_ptr<M> module) {
    push_back(std::move(name), AnyModule(std::move(module)));
  }
  template <typename M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(AnyModule(holder.ptr()));
  }
  template <typename M>
  void push_back(std::string name, const ModuleHolder<M>& holder) {
    push_back(std::move(name), AnyModule(holder.ptr()));
  }
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  void push_back(M&& module) {
    push_back(AnyModule(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }
  template <typename Container>
  void extend(const Container& container) {
    for (const auto& m : container) push_back(m);
  }

  Iterator begin() { return modules_.begin(); }
  ConstIterator begin() const { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator end() const { return modules_.end(); }
  template <typename T>
  T& at(size_t index) {
    check_index(index);
    return modules_[index].get<T>();
  }
  template <typename T>
  std::shared_ptr<T> ptr(size_t index) const {
    check_index(index);
    return modules_[index].ptr<T>();
  }
  std::shared_ptr<Module> ptr(size_t index) const {
    check_index(index);
    return modules_[index].ptr();
  }
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }

 private:
  void check_index(size_t index) const {
    EMBER_CHECK_INDEX(index < modules_.size(), "Index out of range (expected at most ", modules_.size(), ", got ",
                      index, ")");
  }
  std::vector<AnyModule> modules_;
};

class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  using Impl = SequentialImpl;
  Sequential() : ModuleHolder() {}
  Sequential(std::initializer_list<NamedAnyModule> named_modules)  // NOLINT
      : ModuleHolder(std::make_shared<SequentialImpl>(named_modules)) {}
};

inline AnyValue AnyModule::sequential_forward(SequentialImpl& seq, std::vector<AnyValue>& args) {
  EMBER_CHECK(args.size() == 1, "A nested Sequential takes one argument (got ", args.size(), ")");
  return AnyValue(seq.forward(args[0].get<at::Tensor>()));
}

class ModuleListImpl : public Cloneable<ModuleListImpl> {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
  using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;

  ModuleListImpl() = default;
  template <typename... Modules>
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::ModuleList"; }

  void push_back(std::shared_ptr<Module> module) {
    modules_.push_back(std::move(module));
    register_module(std::to_string(modules_.size() - 1), modules_.back());
  }
  template <typename M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <typename M>
  void push_back(std::shared_ptr<M> module) {
    push_back(std::static_pointer_cast<Module>(std::move(module)));
  }
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  void push_back(M&& module) {
    push_back(std::static_pointer_cast<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }
  template <typename Container>
  void extend(const Container& container) {
    for (const auto& m : container) push_back(m);
  }
  void insert(size_t index, std::shared_ptr<Module> module);
  template <typename M>
  void insert(size_t index, const ModuleHolder<M>& holder) {
    insert(index, std::static_pointer_cast<Module>(holder.ptr()));
  }

  Iterator begin() { return modules_.begin(); }
  ConstIterator begin() const { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator end() const { return modules_.end(); }
  template <typename T>
  T& at(size_t index) {
    return *ptr<T>(index);
  }
  template <typename T>
  std::shared_ptr<T> ptr(size_t index) const {
    auto p = std::dynamic_pointer_cast<T>(ptr(index));
    EMBER_CHECK(p != nullptr, "Unable to cast module");
    return p;
  }
  std::shared_ptr<Module> ptr(size_t index) const {
    EMBER_CHECK_INDEX(index < modules_.size(), "Index out of range");
    return modules_[index];
  }
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
TORCH_MODULE(ModuleList);

class ModuleDictImpl : public Cloneable<ModuleDictImpl> {
 public:
  ModuleDictImpl() = default;
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
    update(modules);
  }
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules) { update(modules); }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::ModuleDict"; }

  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const { return modules_.pairs(); }
  std::vector<std::string> keys() const { return modules_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return modules_.values(); }
  auto begin() { return modules_.begin(); }
  auto begin() const { return modules_.begin(); }
  auto end() { return modules_.end(); }
  auto end() const { return modules_.end(); }
  size_t size() const noexcept { return modules_.size(); }
  bool empty() const noexcept { return modules_.is_empty(); }
  bool contains(const std::string& key) const noexcept { return modules_.contains(key); }
  void clear();
  std::shared_ptr<Module> pop(const std::string& key);
  template <typename Container>
  void update(const Container& container) {
    for (const auto& item : container) insert_one(key_of(item), value_of(item));
  }
  template <typename M>
  std::shared_ptr<M> insert(const std::string& key, std::shared_ptr<M> module) {
    insert_one(key, module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> insert(const std::string& key, const ModuleHolder<M>& holder) {
    return insert(key, holder.ptr());
  }
  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <typename T>
  T& at(const std::string& key) {
    auto p = std::dynamic_pointer_cast<T>((*this)[key]);
    EMBER_CHECK(p != nullptr, "Unable to cast module[", key, "] to ", c10::demangle(typeid(T).name()));
    return *p;
  }

 private:
  template <typename Item>
  static const std::string& key_of(const Item& i) {
    if constexpr (requires { i.key(); })
      return i.key();
    else
      return i.first;
  }
  template <typename Item>
  static std::shared_ptr<Module> value_of(const Item& i) {
    if constexpr (requires { i.value(); })
      return i.value();
    else
      return i.second;
  }
  void insert_one(const std::string& key, std::shared_ptr<Module> module);
  OrderedDict<std::string, std::shared_ptr<Module>> modules_{"Module"};
};
TORCH_MODULE(ModuleDict);

class ParameterListImpl : public Cloneable<ParameterListImpl> {
 public:
  ParameterListImpl() = default;
  template <typename... Tensors>
  explicit ParameterListImpl(Tensors&&... params) {
    (append(std::forward<Tensors>(params)), ...);
  }
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  void append(const at::Tensor& param) { register_parameter(std::to_string(parameters_.size()), param); }
  template <typename Container>
  void extend(const Container& container) {
    for (const auto& p : container) append(p);
  }
  at::Tensor& operator[](size_t index) { return parameters_[index].value(); }
  size_t size() const noexcept { return parameters_.size(); }
  bool is_empty() const noexcept { return parameters_.is_empty(); }
  auto begin() { return parameters_.begin(); }
  auto end() { return parameters_.end(); }
};
TORCH_MODULE(ParameterList);

class ParameterDictImpl : public Cloneable<ParameterDictImpl> {
 public:
  ParameterDictImpl() = default;
  explicit ParameterDictImpl(const OrderedDict<std::string, at::Tensor>& params) {
    for (const auto& p : params) insert(p.key(), p.value());
  }
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  at::Tensor& insert(std::string key, at::Tensor param) { return register_parameter(std::move(key), std::move(param)); }
  at::Tensor& operator[](const std::string& key) { return parameters_[key]; }
  at::Tensor get(const std::string& key) const { return parameters_[key]; }
  bool contains(const std::string& key) const { return parameters_.contains(key); }
  std::vector<std::string> keys() const { return parameters_.keys(); }
  std::vector<at::Tensor> values() const { return parameters_.values(); }
  size_t size() const noexcept { return parameters_.size(); }
  bool empty() const noexcept { return parameters_.is_empty(); }
  auto begin() { return parameters_.begin(); }
  auto end() { return parameters_.end(); }
};
TORCH_MODULE(ParameterDict);

// A function (Tensor -> Tensor, or with extra arguments bound after the input) as a module.
class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  using Function = std::function<at::Tensor(at::Tensor)>;
  explicit FunctionalImpl(Function function) : function_(std::move(function)) {}
  template <typename SomeFunction, typename... Args, typename = std::enable_if_t<(sizeof...(Args) > 0)>>
  explicit FunctionalImpl(SomeFunction original_function, Args&&... args)
      : function_([f = std::move(original_function), ... a = std::forward<Args>(args)](at::Tensor x) {
          return at::Tensor(f(x, a...));
        }) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::Functional()"; }
  at::Tensor forward(at::Tensor input) { return function_(std::move(input)); }
  at::Tensor operator()(at::Tensor input) { return forward(std::move(input)); }
  bool is_serializable() const override { return false; }

 private:
  Function function_;
};
TORCH_MODULE(Functional);

}  // namespace torch::nn
