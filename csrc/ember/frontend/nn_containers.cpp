#include "ember/frontend/nn_containers.h"

namespace torch::nn {

std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  auto names = children_.keys();
  for (size_t i = 0; i < modules_.size(); ++i) copy->push_back(names[i], modules_[i].clone(device));
  copy->train(is_training());
  return copy;
}

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& m : modules_) copy->push_back(m->clone(device));
  copy->train(is_training());
  return copy;
}

void ModuleListImpl::insert(size_t index, std::shared_ptr<Module> module) {
  EMBER_CHECK_INDEX(index <= modules_.size(), "Index out of range");
  if (index == modules_.size()) {
    push_back(std::move(module));
    return;
  }
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
  // Children are named by position: re-register them all in order.
  children_.clear();
  for (size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& item : modules_) copy->insert(item.key(), item.value()->clone(device));
  copy->train(is_training());
  return copy;
}

void ModuleDictImpl::clear() {
  modules_.clear();
  children_.clear();
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> m = (*this)[key];
  modules_.erase(key);
  children_.erase(key);
  return m;
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const std::shared_ptr<Module>* m = modules_.find(key);
  EMBER_CHECK(m != nullptr, "Module '", key, "' is not defined");
  return *m;
}

void ModuleDictImpl::insert_one(const std::string& key, std::shared_ptr<Module> module) {
  if (modules_.contains(key)) {
    modules_[key] = module;
    replace_module(key, module);
  } else {
    modules_.insert(key, module);
    register_module(key, module);
  }
}

void ParameterListImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ParameterList(" << std::endl;
  for (const auto& p : parameters_)
    stream << "(" << p.key() << "): Parameter containing: [" << p.value().toString() << " of size " << p.value().sizes()
           << "]" << std::endl;
  stream << ")";
}

void ParameterDictImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ParameterDict(" << std::endl;
  for (const auto& p : parameters_)
    stream << "(" << p.key() << "): Parameter containing: [" << p.value().toString() << " of size " << p.value().sizes()
           << "]" << std::endl;
  stream << ")";
}

}  // namespace torch::nn
