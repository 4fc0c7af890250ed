#include "ember/frontend/nn_module.h"

#include <typeinfo>

namespace torch::nn {

Module::Module(std::string name) : name_(std::move(name)) {}
Module::Module() = default;

const std::string& Module::name() const noexcept {
  // Computed lazily: typeid(*this) names the most derived class only after construction.
  if (!name_) name_ = c10::demangle(typeid(*this).name());
  return *name_;
}

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  throw ember::Error("clone() has not been implemented for " + name() + ". Subclass torch::nn::Cloneable<" + name() +
                     "> instead of torch::nn::Module to inherit the ability to clone.");
}

void Module::copy_state(Module& dst, const Module& src, const std::optional<Device>& device) {
  NoGradGuard no_grad;
  auto same = [](size_t a, size_t b, const char* what) {
    EMBER_CHECK(a == b, "The cloned module does not have the same number of ", what,
                " as the original module after calling reset(). Are you sure you called register_", what,
                "() inside reset() and not the constructor?");
  };
  same(dst.parameters_.size(), src.parameters_.size(), "parameters");
  for (const auto& p : src.parameters_) {
    const Tensor& d = dst.parameters_[p.key()];
    Tensor v = p.value().clone();
    d.set_data(device ? v.to(*device) : v);
    d.requires_grad_(p.value().requires_grad());
  }
  same(dst.buffers_.size(), src.buffers_.size(), "buffers");
  for (const auto& b : src.buffers_) {
    const Tensor& d = dst.buffers_[b.key()];
    if (!b.value().defined()) continue;
    Tensor v = b.value().clone();
    d.set_data(device ? v.to(*device) : v);
  }
  same(dst.children_.size(), src.children_.size(), "modules");
  for (const auto& c : src.children_) copy_state(*dst.children_[c.key()], *c.value(), device);
}

void Module::apply(const ModuleApplyFunction& fn) {
  fn(*this);
  apply_to_submodules([&fn](const std::string&, const std::shared_ptr<Module>& m) { fn(*m); }, "");
}

void Module::apply(const ConstModuleApplyFunction& fn) const {
  fn(*this);
  apply_to_submodules([&fn](const std::string&, const std::shared_ptr<Module>& m) { fn(*m); }, "");
}

void Module::apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix) {
  fn(name_prefix, *this);
  apply_to_submodules([&fn](const std::string& n, const std::shared_ptr<Module>& m) { fn(n, *m); }, name_prefix);
}

void Module::apply(const ModulePointerApplyFunction& fn) const {
  fn(shared_from_this_checked());
  apply_to_submodules([&fn](const std::string&, const std::shared_ptr<Module>& m) { fn(m); }, "");
}

void Module::apply(const NamedModulePointerApplyFunction& fn, const std::string& name_prefix) const {
  fn(name_prefix, shared_from_this_checked());
  apply_to_submodules(fn, name_prefix);
}

void Module::apply_to_submodules(const NamedModulePointerApplyFunction& fn, const std::string& name_prefix) const {
  for (const auto& child : children_) {
    std::string qualified = name_prefix.empty() ? child.key() : name_prefix + "." + child.key();
    fn(qualified, child.value());
    child.value()->apply_to_submodules(fn, qualified);
  }
}

std::shared_ptr<Module> Module::shared_from_this_checked() const {
  std::shared_ptr<const Module> p;
  try {
    p = shared_from_this();
  } catch (const std::bad_weak_ptr&) {
    throw ember::Error(
        "It looks like you attempted to retrieve your top-level module as a shared_ptr, but it is not stored in a "
        "shared_ptr. Use std::make_shared<" +
        name() +
        "> instead of creating your module on the stack, or alternatively do not try to access your "
        "top-level module at all by passing /*include_self=*/false to modules() or named_modules()");
  }
  return std::const_pointer_cast<Module>(p);
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> result;
  if (!recurse) {
    for (const auto& p : parameters_)
      if (p.value().defined()) result.insert(p.key(), p.value());
    return result;
  }
  auto add = [&result](const std::string& prefix, const Module& m) {
    for (const auto& p : m.parameters_)
      if (p.value().defined()) result.insert(prefix.empty() ? p.key() : prefix + "." + p.key(), p.value());
  };
  add("", *this);
  apply_to_submodules([&add](const std::string& n, const std::shared_ptr<Module>& m) { add(n, *m); }, "");
  return result;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> result;
  auto add = [&result](const std::string& prefix, const Module& m) {
    for (const auto& b : m.buffers_)
      if (b.value().defined()) result.insert(prefix.empty() ? b.key() : prefix + "." + b.key(), b.value());
  };
  add("", *this);
  if (recurse) apply_to_submodules([&add](const std::string& n, const std::shared_ptr<Module>& m) { add(n, *m); }, "");
  return result;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& name_prefix,
                                                                        bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> result;
  if (include_self) result.insert(name_prefix, shared_from_this_checked());
  apply_to_submodules([&result](const std::string& n, const std::shared_ptr<Module>& m) { result.insert(n, m); },
                      name_prefix);
  return result;
}

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

void Module::train(bool on) {
  for (auto& child : children_) child.value()->train(on);
  is_training_ = on;
}

void Module::convert(const std::function<Tensor(const Tensor&)>& fn) {
  for (auto& child : children_) child.value()->convert(fn);
  NoGradGuard no_grad;
  for (auto& p : parameters_) {
    const Tensor& t = p.value();
    if (!t.defined()) continue;
    t.set_data(fn(t));
    Tensor g = t.grad();
    if (g.defined()) g.set_data(fn(g));
  }
  for (auto& b : buffers_)
    if (b.value().defined()) b.value().set_data(fn(b.value()));
}

void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  convert([&](const Tensor& t) {
    return t.is_floating_point() ? t.to(device, dtype, non_blocking) : t.to(TensorOptions(device), non_blocking);
  });
}

void Module::to(ScalarType dtype, bool non_blocking) {
  convert([&](const Tensor& t) { return t.is_floating_point() ? t.to(dtype, non_blocking) : t; });
}

void Module::to(Device device, bool non_blocking) {
  convert([&](const Tensor& t) { return t.to(TensorOptions(device), non_blocking); });
}

void Module::zero_grad(bool set_to_none) {
  for (auto& child : children_) child.value()->zero_grad(set_to_none);
  for (auto& p : parameters_) {
    if (!p.value().defined()) continue;
    Tensor g = p.value().grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.value().set_grad(Tensor());
    } else {
      if (g.grad_fn())
        p.value().set_grad(g.detach().zero_());
      else
        g.zero_();
    }
  }
}

void Module::pretty_print(std::ostream& stream) const { stream << name(); }

void Module::pretty_print_recursive(std::ostream& stream, const std::string& indentation) const {
  pretty_print(stream);
  if (!children_.is_empty()) {
    stream << "(\n";
    const std::string next = indentation + "  ";
    for (const auto& child : children_) {
      stream << next << "(" << child.key() << "): ";
      child.value()->pretty_print_recursive(stream, next);
      stream << '\n';
    }
    stream << indentation << ")";
  }
}

std::ostream& operator<<(std::ostream& stream, const Module& module) {
  module.pretty_print_recursive(stream, "");
  return stream;
}

void Module::check_module_name(const std::string& name, const char* what) {
  EMBER_CHECK(!name.empty(), what, " name must not be empty");
  EMBER_CHECK(name.find('.') == std::string::npos, what, " name must not contain a dot (got '", name, "')");
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_module_name(name, "Parameter");
  if (tensor.defined()) tensor.set_requires_grad(requires_grad);
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_module_name(name, "Buffer");
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::unregister_module(const std::string& name) {
  EMBER_CHECK(children_.contains(name), "No Module with name `", name, "` is registered");
  children_.erase(name);
}

}  // namespace torch::nn
