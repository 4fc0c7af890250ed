// Shared-memory tensors for ember.multiprocessing and DataLoader workers
// (Note [Shared memory by memfd], core/shared_memory.h).
#include <unistd.h>

#include "common.h"
#include "ember/core/shared_memory.h"

namespace ember::py {

void bind_multiprocessing(nb::module_& m) {
  m.def(
      "_share_memory_",
      [](nb::handle self) {
        Tensor& t = nb::cast<Tensor&>(self);
        share_memory_(t);
        return nb::borrow(self);
      },
      nb::arg("self"));
  m.def("_is_shared", [](const Tensor& t) { return is_shared(t); });
  // (fd, storage nbytes) of a shared tensor's segment; the fd stays owned by the storage.
  m.def("_shm_handle", [](const Tensor& t) {
    const StorageImpl& st = *t.impl()->storage();
    int fd = shm_fd(st);
    EMBER_CHECK(fd >= 0, "tensor is not in shared memory (call share_memory_() first)");
    return nb::make_tuple(fd, st.nbytes());
  });
  // Rebuilds a tensor over a received segment; takes ownership of fd.
  m.def(
      "_tensor_from_shm",
      [](int fd, size_t nbytes, const DType& dtype, Shape sizes, Shape strides, int64_t offset) {
        Storage st = IntrusivePtr<StorageImpl>::make(shm_map_fd(fd, nbytes), nbytes, Device());
        return Tensor(
            IntrusivePtr<TensorImpl>::make(std::move(st), dtype.type, std::move(sizes), std::move(strides), offset));
      },
      nb::arg("fd"), nb::arg("nbytes"), nb::arg("dtype"), nb::arg("sizes"), nb::arg("strides"), nb::arg("offset"));
  m.def(
      "_empty_shared", [](Shape sizes, const DType& dtype) { return empty_shared(sizes, dtype.type); },
      nb::arg("sizes"), nb::arg("dtype"));
}

}  // namespace ember::py
