#include "ember/frontend/serialize.h"

#include "ember/frontend/optim.h"

namespace torch {

void serialization_not_implemented(const char* what) {
  EMBER_NOT_IMPLEMENTED(what,
                        ": serialization is not implemented in Ember's C++ frontend yet (it needs the "
                        "checkpoint zip archive in C++, which is not in this build)");
}

namespace serialize {
OutputArchive::OutputArchive() = default;
void OutputArchive::write(const std::string&, const at::Tensor&, bool) {
  serialization_not_implemented("OutputArchive");
}
void OutputArchive::write(const std::string&, OutputArchive&) { serialization_not_implemented("OutputArchive"); }
void OutputArchive::save_to(const std::string&) { serialization_not_implemented("OutputArchive"); }
void OutputArchive::save_to(std::ostream&) { serialization_not_implemented("OutputArchive"); }
InputArchive::InputArchive() = default;
bool InputArchive::try_read(const std::string&, at::Tensor&, bool) { serialization_not_implemented("InputArchive"); }
void InputArchive::read(const std::string&, at::Tensor&, bool) { serialization_not_implemented("InputArchive"); }
bool InputArchive::try_read(const std::string&, InputArchive&) { serialization_not_implemented("InputArchive"); }
void InputArchive::read(const std::string&, InputArchive&) { serialization_not_implemented("InputArchive"); }
void InputArchive::load_from(const std::string&) { serialization_not_implemented("InputArchive"); }
void InputArchive::load_from(std::istream&) { serialization_not_implemented("InputArchive"); }
}  // namespace serialize

namespace nn {
void Module::save(serialize::OutputArchive&) const { serialization_not_implemented("Module::save"); }
void Module::load(serialize::InputArchive&) { serialization_not_implemented("Module::load"); }
}  // namespace nn

namespace optim {
void Optimizer::save(serialize::OutputArchive&) const { serialization_not_implemented("Optimizer::save"); }
void Optimizer::load(serialize::InputArchive&) { serialization_not_implemented("Optimizer::load"); }
}  // namespace optim

}  // namespace torch
