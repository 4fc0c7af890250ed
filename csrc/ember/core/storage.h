// A refcounted block of bytes on one device. Views of a tensor share one Storage.
#pragma once
#include "ember/core/allocator.h"
#include "ember/core/intrusive_ptr.h"

namespace ember {

class StorageImpl : public RefCounted {
 public:
  // `resizable`: memory ember allocated (resize_ may grow it); memory borrowed from NumPy or
  // DLPack is not, as PyTorch's storages of from_numpy tensors.
  StorageImpl(DataPtr data, size_t nbytes, Device device, bool resizable = false)
      : data_(std::move(data)), nbytes_(nbytes), device_(device), resizable_(resizable) {}
  static IntrusivePtr<StorageImpl> allocate(size_t nbytes, Allocator* alloc) {
    return IntrusivePtr<StorageImpl>::make(alloc->allocate(nbytes), nbytes, alloc->device(), /*resizable=*/true);
  }

  void* data() const { return data_.ptr; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  const DataPtr& data_ptr() const { return data_; }

  // Moves the bytes to new memory of the same size (share_memory_). The old block stays alive
  // until the storage dies: a NumPy array or raw pointer taken earlier must not dangle.
  void replace_data(DataPtr data) {
    retired_ = std::move(data_);
    data_ = std::move(data);
  }
  bool resizable() const { return resizable_; }
  // Replaces the memory (keeping the old bytes that fit), so every tensor on this storage sees it.
  void set_data(DataPtr data, size_t nbytes) {
    data_ = std::move(data);
    nbytes_ = nbytes;
  }

 private:
  DataPtr data_;
  DataPtr retired_;
  size_t nbytes_;
  Device device_;
  bool resizable_;
};
using Storage = IntrusivePtr<StorageImpl>;

}  // namespace ember
