// ember._C._serialization: storage access for ember.save / ember.load (python/ember/serialization.py).
#include "common.h"

namespace ember::py {

void bind_serialization(nb::module_& root) {
  nb::module_ m = root.def_submodule("_serialization", "Storage access for ember.save / ember.load");
  m.def("storage_nbytes", [](const Tensor& t) { return static_cast<int64_t>(t.impl()->storage()->nbytes()); });
  // The whole storage of t as a 1-d uint8 tensor (shares the memory; for reading its bytes).
  m.def("storage_bytes", [](const Tensor& t) {
    const Storage& s = t.impl()->storage();
    int64_t n = static_cast<int64_t>(s->nbytes());
    return Tensor(IntrusivePtr<TensorImpl>::make(s, ScalarType::UInt8, Shape{n}, Shape{1}, 0));
  });
}

}  // namespace ember::py
