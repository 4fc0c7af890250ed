// torch::save / torch::load and the archives modules and optimizers write themselves to.
//
// Not implemented yet: they need the checkpoint zip archive in C++ (csrc/ember/serialize, being
// moved there from Python on another branch), and the C++ frontend must not carry a second
// archive implementation. Until then every call throws ember::NotImplementedError.
#pragma once
#include <iosfwd>
#include <string>

#include "ember/frontend/nn_module.h"

namespace torch::serialize {

class OutputArchive {
 public:
  OutputArchive();
  void write(const std::string& key, const at::Tensor& tensor, bool is_buffer = false);
  void write(const std::string& key, OutputArchive& nested_archive);
  void save_to(const std::string& filename);
  void save_to(std::ostream& stream);
};

class InputArchive {
 public:
  InputArchive();
  bool try_read(const std::string& key, at::Tensor& tensor, bool is_buffer = false);
  void read(const std::string& key, at::Tensor& tensor, bool is_buffer = false);
  bool try_read(const std::string& key, InputArchive& archive);
  void read(const std::string& key, InputArchive& archive);
  void load_from(const std::string& filename);
  void load_from(std::istream& stream);
};

}  // namespace torch::serialize

namespace torch {

[[noreturn]] void serialization_not_implemented(const char* what);

// torch::save(value, "file.pt") / torch::load(value, "file.pt") of a tensor, a module (holder or
// shared_ptr) or an optimizer: not implemented yet (see above).
template <typename Value, typename... SaveToArgs>
void save(const Value&, SaveToArgs&&...) {
  serialization_not_implemented("torch::save");
}
template <typename Value, typename... LoadFromArgs>
void load(Value&, LoadFromArgs&&...) {
  serialization_not_implemented("torch::load");
}

}  // namespace torch
