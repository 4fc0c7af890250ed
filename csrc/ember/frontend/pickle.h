// The pickle layer of torch's checkpoint format for the C++ frontend (the zip container is
// ember/serialize/zip_archive.h, shared with Python's ember.save/ember.load).
//
// Note [C++ checkpoint pickles]: torch::save writes what torch.save writes for the same data
// (protocol 2; tensors as torch._utils._rebuild_tensor_v2 over persistent storage ids
// ('storage', torch.FloatStorage, key, 'cpu', numel); dicts as collections.OrderedDict), so
// torch.load and ember.load read it (weights_only included). torch::load runs a small unpickler
// that knows exactly those globals: it reads state dicts, tensors, lists, tuples, numbers and
// strings saved by torch.save or ember.save, and rejects any other global (no code runs). Every
// size, offset and stride from the file is checked against the storage it addresses.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ember/frontend/tensor.h"

namespace torch::serialize::detail {

struct PickleValue;
using PickleList = std::vector<PickleValue>;
using PickleItems = std::vector<std::pair<PickleValue, PickleValue>>;

// A value of the pickle subset: None, bool, int, float, str, tensor, list, tuple or dict.
struct PickleValue {
  enum class Kind { None, Bool, Int, Double, String, Tensor, List, Tuple, Dict, Global, Storage, Mark };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;  // String; Global: "module.name"
  at::Tensor tensor;
  std::shared_ptr<PickleList> list;                  // List, Tuple (lists are shared so appends after memoizing land)
  std::shared_ptr<PickleItems> items;                // Dict
  ScalarType storage_dtype = ScalarType::Undefined;  // Global of a storage class, Storage
  ember::Storage storage;                            // Storage (persistent id)
  int64_t storage_numel = 0;

  static PickleValue string(std::string v);
  static PickleValue integer(int64_t v);
  static PickleValue real(double v);
  static PickleValue boolean(bool v);
  static PickleValue of(at::Tensor t);
  static PickleValue new_list(PickleList v = {});
  static PickleValue new_tuple(PickleList v = {});
  static PickleValue new_dict(PickleItems v = {});
  bool is_dict() const { return kind == Kind::Dict; }
  std::string describe() const;  // for error messages
};

// Pickles `value` (protocol 2) and writes a checkpoint archive at path in torch's layout.
void save_archive(const PickleValue& value, const std::string& path);
void save_archive(const PickleValue& value, std::ostream& out);
// Reads a checkpoint archive (torch.save / ember.save / torch::save) into a PickleValue.
PickleValue load_archive(const std::string& path);
PickleValue load_archive(std::istream& in);

}  // namespace torch::serialize::detail
