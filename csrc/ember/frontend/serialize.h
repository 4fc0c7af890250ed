// torch::save / torch::load and the archives modules write themselves to, in torch.save's file
// format (Note [C++ checkpoint pickles] in frontend/pickle.h): a module is saved as its
// state_dict (an OrderedDict of "fc.weight" -> tensor), so torch.load / ember.load read files
// saved from C++ and torch::load(module, path) reads state_dicts saved from Python.
//
//   torch::save(model, "model.pt");        torch::load(model, "model.pt");
//   torch::save(tensor, "t.pt");           torch::load(tensor, "t.pt");
//   torch::save(std::vector<Tensor>{...}, "ts.pt");   torch::load(vector, "ts.pt");
//
// Optimizers' state is not saved yet (torch::save(optimizer, ...) raises NotImplementedError).
#pragma once
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "ember/frontend/nn_module.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace torch::serialize {

// Named tensors on their way to a file; nested archives add "name." prefixes (a module's
// children), so the file holds one flat state_dict.
class OutputArchive {
 public:
  OutputArchive() = default;
  void write(const std::string& key, const at::Tensor& tensor, bool is_buffer = false);
  void write(const std::string& key, OutputArchive& nested_archive);
  void save_to(const std::string& filename);
  void save_to(std::ostream& stream);
  const std::vector<std::pair<std::string, at::Tensor>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, at::Tensor>> items_;
};

// The named tensors of a checkpoint (a state_dict, a single tensor under "", or a list under
// "0", "1", ...).
class InputArchive {
 public:
  InputArchive() = default;
  bool try_read(const std::string& key, at::Tensor& tensor, bool is_buffer = false);
  void read(const std::string& key, at::Tensor& tensor, bool is_buffer = false);
  bool try_read(const std::string& key, InputArchive& archive);
  void read(const std::string& key, InputArchive& archive);
  void load_from(const std::string& filename);
  void load_from(std::istream& stream);
  std::vector<std::string> keys() const;

 private:
  void set(const std::vector<std::pair<std::string, at::Tensor>>& items, const std::string& prefix);
  std::vector<std::pair<std::string, at::Tensor>> items_;
  std::string prefix_;  // of a nested archive
};

// A module's state_dict in torch's order: each module's parameters, then its buffers, then its
// children's, depth first (undefined ones left out); the tensors are detached aliases.
std::vector<std::pair<std::string, at::Tensor>> state_dict(const nn::Module& module);
// Copies a state_dict into the module's parameters and buffers (no history recorded); every key
// must match in name and shape (strict, as load_state_dict).
void load_state_dict(nn::Module& module, const std::vector<std::pair<std::string, at::Tensor>>& state);

}  // namespace torch::serialize

namespace torch {

void save(const at::Tensor& tensor, const std::string& path);
void save(const std::vector<at::Tensor>& tensors, const std::string& path);
void save(const nn::Module& module, const std::string& path);
void save(const at::Tensor& tensor, std::ostream& stream);
void save(const nn::Module& module, std::ostream& stream);
void save(const optim::Optimizer& optimizer, const std::string& path);
template <typename M>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <typename M>
void save(const nn::ModuleHolder<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}

void load(at::Tensor& tensor, const std::string& path);
void load(std::vector<at::Tensor>& tensors, const std::string& path);
void load(nn::Module& module, const std::string& path);
void load(at::Tensor& tensor, std::istream& stream);
void load(nn::Module& module, std::istream& stream);
void load(optim::Optimizer& optimizer, const std::string& path);
template <typename M>
void load(std::shared_ptr<M>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}
template <typename M>
void load(nn::ModuleHolder<M>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}

}  // namespace torch
