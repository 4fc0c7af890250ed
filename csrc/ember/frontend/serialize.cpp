#include "ember/frontend/serialize.h"

#include <sstream>

#include "ember/frontend/optim.h"
#include "ember/frontend/pickle.h"

namespace torch {

namespace serialize {

namespace {
using Items = std::vector<std::pair<std::string, at::Tensor>>;
using detail::PickleValue;

PickleValue dict_of(const Items& items) {
  PickleValue d = PickleValue::new_dict();
  for (const auto& [k, t] : items) d.items->emplace_back(PickleValue::string(k), PickleValue::of(t));
  return d;
}

// The named tensors of a loaded checkpoint: a dict of str -> tensor, one tensor, or a list.
Items items_of(const PickleValue& v) {
  using K = PickleValue::Kind;
  Items items;
  if (v.kind == K::Tensor) {
    items.emplace_back("", v.tensor);
  } else if (v.kind == K::Dict) {
    for (const auto& [k, t] : *v.items) {
      EMBER_CHECK(k.kind == K::String, "torch::load: expected a dict of str -> tensor, found a key of type ",
                  k.describe());
      EMBER_CHECK(t.kind == K::Tensor, "torch::load: expected a tensor under '", k.s, "', found ", t.describe());
      items.emplace_back(k.s, t.tensor);
    }
  } else if (v.kind == K::List || v.kind == K::Tuple) {
    for (size_t i = 0; i < v.list->size(); ++i) {
      const PickleValue& t = (*v.list)[i];
      EMBER_CHECK(t.kind == K::Tensor, "torch::load: expected a list of tensors, found ", t.describe());
      items.emplace_back(std::to_string(i), t.tensor);
    }
  } else {
    throw ember::Error("torch::load: the checkpoint holds a " + v.describe() +
                       ", not a tensor, a list of tensors or a state_dict");
  }
  return items;
}

// Detached, as Module.state_dict() gives them (writes through them reach the parameters).
void collect_state(const nn::Module& m, const std::string& prefix, Items& out) {
  for (const auto& p : m.named_parameters(/*recurse=*/false)) out.emplace_back(prefix + p.key(), p.value().detach());
  for (const auto& b : m.named_buffers(/*recurse=*/false)) out.emplace_back(prefix + b.key(), b.value().detach());
  for (const auto& c : m.named_children()) collect_state(*c.value(), prefix + c.key() + ".", out);
}
}  // namespace

void OutputArchive::write(const std::string& key, const at::Tensor& tensor, bool) {
  if (tensor.defined()) items_.emplace_back(key, tensor);
}

void OutputArchive::write(const std::string& key, OutputArchive& nested) {
  for (const auto& [k, t] : nested.items_) items_.emplace_back(key + "." + k, t);
}

void OutputArchive::save_to(const std::string& filename) { detail::save_archive(dict_of(items_), filename); }
void OutputArchive::save_to(std::ostream& stream) { detail::save_archive(dict_of(items_), stream); }

void InputArchive::set(const Items& items, const std::string& prefix) {
  items_ = items;
  prefix_ = prefix;
}

bool InputArchive::try_read(const std::string& key, at::Tensor& tensor, bool) {
  for (const auto& [k, t] : items_) {
    if (k != key) continue;
    if (!tensor.defined()) {
      tensor = t;
      return true;
    }
    EMBER_CHECK(tensor.sizes() == t.sizes(), "size mismatch for ", prefix_, key, ": copying a param with shape ",
                t.sizes(), " from checkpoint, the shape in current model is ", tensor.sizes(), ".");
    NoGradGuard no_grad;
    tensor.copy_(t);
    return true;
  }
  return false;
}

void InputArchive::read(const std::string& key, at::Tensor& tensor, bool is_buffer) {
  EMBER_CHECK(try_read(key, tensor, is_buffer), "No such serialized tensor '", prefix_, key, "'");
}

bool InputArchive::try_read(const std::string& key, InputArchive& archive) {
  Items sub;
  std::string p = key + ".";
  for (const auto& [k, t] : items_)
    if (k.compare(0, p.size(), p) == 0) sub.emplace_back(k.substr(p.size()), t);
  if (sub.empty()) return false;
  archive.set(sub, prefix_ + p);
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& archive) {
  EMBER_CHECK(try_read(key, archive), "No such serialized submodule: '", prefix_, key, "'");
}

void InputArchive::load_from(const std::string& filename) { set(items_of(detail::load_archive(filename)), ""); }
void InputArchive::load_from(std::istream& stream) { set(items_of(detail::load_archive(stream)), ""); }

std::vector<std::string> InputArchive::keys() const {
  std::vector<std::string> k;
  for (const auto& item : items_) k.push_back(item.first);
  return k;
}

Items state_dict(const nn::Module& module) {
  Items out;
  collect_state(module, "", out);
  return out;
}

void load_state_dict(nn::Module& module, const Items& state) {
  Items mine = state_dict(module);
  std::vector<std::string> missing, unexpected;
  for (const auto& [k, t] : mine) {
    bool found = false;
    for (const auto& s : state) found = found || s.first == k;
    if (!found) missing.push_back(k);
  }
  for (const auto& [k, t] : state) {
    bool found = false;
    for (const auto& m : mine) found = found || m.first == k;
    if (!found) unexpected.push_back(k);
  }
  if (!missing.empty() || !unexpected.empty()) {
    std::ostringstream msg;
    msg << "Error(s) in loading state_dict for " << module.name() << ":";
    auto list = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      msg << "\n\t" << what << " key(s) in state_dict: ";
      for (size_t i = 0; i < keys.size(); ++i) msg << (i ? ", " : "") << '"' << keys[i] << '"';
      msg << ". ";
    };
    list("Unexpected", unexpected);
    list("Missing", missing);
    throw ember::Error(msg.str());
  }
  InputArchive archive;
  for (const auto& [k, t] : mine) {
    at::Tensor target = t;
    for (const auto& s : state)
      if (s.first == k) {
        EMBER_CHECK(target.sizes() == s.second.sizes(), "Error(s) in loading state_dict for ", module.name(),
                    ":\n\tsize mismatch for ", k, ": copying a param with shape ", s.second.sizes(),
                    " from checkpoint, the shape in current model is ", target.sizes(), ".");
        NoGradGuard no_grad;
        target.copy_(s.second);
      }
  }
}

}  // namespace serialize

namespace nn {
void Module::save(serialize::OutputArchive& archive) const {
  for (const auto& p : named_parameters(/*recurse=*/false)) archive.write(p.key(), p.value());
  for (const auto& b : named_buffers(/*recurse=*/false)) archive.write(b.key(), b.value(), /*is_buffer=*/true);
  for (const auto& c : named_children()) {
    serialize::OutputArchive child;
    c.value()->save(child);
    archive.write(c.key(), child);
  }
}

void Module::load(serialize::InputArchive& archive) {
  for (auto& p : named_parameters(/*recurse=*/false)) archive.read(p.key(), p.value());
  for (auto& b : named_buffers(/*recurse=*/false)) archive.read(b.key(), b.value(), /*is_buffer=*/true);
  for (const auto& c : named_children()) {
    serialize::InputArchive child;
    if (archive.try_read(c.key(), child)) c.value()->load(child);
  }
}
}  // namespace nn

namespace optim {
void Optimizer::save(serialize::OutputArchive&) const {
  EMBER_NOT_IMPLEMENTED("saving an optimizer's state is not implemented in Ember's C++ frontend yet");
}
void Optimizer::load(serialize::InputArchive&) {
  EMBER_NOT_IMPLEMENTED("loading an optimizer's state is not implemented in Ember's C++ frontend yet");
}
}  // namespace optim

void save(const at::Tensor& tensor, const std::string& path) {
  serialize::detail::save_archive(serialize::detail::PickleValue::of(tensor), path);
}

void save(const at::Tensor& tensor, std::ostream& stream) {
  serialize::detail::save_archive(serialize::detail::PickleValue::of(tensor), stream);
}

void save(const std::vector<at::Tensor>& tensors, const std::string& path) {
  serialize::detail::PickleList l;
  for (const auto& t : tensors) l.push_back(serialize::detail::PickleValue::of(t));
  serialize::detail::save_archive(serialize::detail::PickleValue::new_list(std::move(l)), path);
}

void save(const nn::Module& module, const std::string& path) {
  serialize::detail::save_archive(serialize::dict_of(serialize::state_dict(module)), path);
}

void save(const nn::Module& module, std::ostream& stream) {
  serialize::detail::save_archive(serialize::dict_of(serialize::state_dict(module)), stream);
}

void save(const optim::Optimizer&, const std::string&) {
  EMBER_NOT_IMPLEMENTED("torch::save of an optimizer is not implemented in Ember's C++ frontend yet");
}

void load(at::Tensor& tensor, const std::string& path) {
  auto v = serialize::detail::load_archive(path);
  EMBER_CHECK(v.kind == serialize::detail::PickleValue::Kind::Tensor, "torch::load: ", path, " holds a ", v.describe(),
              ", not a tensor");
  tensor = v.tensor;
}

void load(at::Tensor& tensor, std::istream& stream) {
  auto v = serialize::detail::load_archive(stream);
  EMBER_CHECK(v.kind == serialize::detail::PickleValue::Kind::Tensor, "torch::load: the stream holds a ", v.describe(),
              ", not a tensor");
  tensor = v.tensor;
}

void load(std::vector<at::Tensor>& tensors, const std::string& path) {
  auto v = serialize::detail::load_archive(path);
  EMBER_CHECK(
      v.kind == serialize::detail::PickleValue::Kind::List || v.kind == serialize::detail::PickleValue::Kind::Tuple,
      "torch::load: ", path, " holds a ", v.describe(), ", not a list of tensors");
  tensors.clear();
  for (const auto& [k, t] : serialize::items_of(v)) tensors.push_back(t);
}

void load(nn::Module& module, const std::string& path) {
  serialize::load_state_dict(module, serialize::items_of(serialize::detail::load_archive(path)));
}

void load(nn::Module& module, std::istream& stream) {
  serialize::load_state_dict(module, serialize::items_of(serialize::detail::load_archive(stream)));
}

void load(optim::Optimizer&, const std::string&) {
  EMBER_NOT_IMPLEMENTED("torch::load of an optimizer is not implemented in Ember's C++ frontend yet");
}

}  // namespace torch
