#include "ember/core/shared_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ember/core/error.h"

namespace ember {
namespace {

struct ShmSegment {
  int fd;
  size_t nbytes;
};

void shm_release(void* ptr, void* ctx) {
  auto* seg = static_cast<ShmSegment*>(ctx);
  if (ptr && seg->nbytes) munmap(ptr, seg->nbytes);
  close(seg->fd);
  delete seg;
}

DataPtr map_segment(int fd, size_t nbytes) {
  void* p = nullptr;
  if (nbytes > 0) {
    p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      close(fd);
      EMBER_CHECK(false, "share_memory_: mmap of ", nbytes, " bytes failed: ", std::strerror(err));
    }
  }
  return DataPtr(p, new ShmSegment{fd, nbytes}, &shm_release);
}

}  // namespace

DataPtr shm_allocate(size_t nbytes) {
  int fd = memfd_create("ember_shm", MFD_CLOEXEC);
  EMBER_CHECK(fd >= 0, "share_memory_: memfd_create failed: ", std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(nbytes)) != 0) {
    int err = errno;
    close(fd);
    EMBER_CHECK(false, "share_memory_: cannot reserve ", nbytes, " bytes of shared memory (", std::strerror(err),
                "); free memory or lower the batch size / number of workers");
  }
  return map_segment(fd, nbytes);
}

DataPtr shm_map_fd(int fd, size_t nbytes) {
  EMBER_CHECK(fd >= 0, "shared memory: invalid file descriptor ", fd);
  return map_segment(fd, nbytes);
}

int shm_fd(const StorageImpl& storage) {
  const DataPtr& d = storage.data_ptr();
  return d.deleter == &shm_release ? static_cast<ShmSegment*>(d.ctx)->fd : -1;
}

bool is_shared(const Tensor& t) { return shm_fd(*t.impl()->storage()) >= 0; }

Tensor& share_memory_(Tensor& t) {
  StorageImpl& st = *t.impl()->storage();
  EMBER_CHECK_TYPE(st.device().is_cpu(), NotImplementedError, "share_memory_: only CPU tensors are supported");
  if (shm_fd(st) >= 0) return t;
  DataPtr seg = shm_allocate(st.nbytes());
  if (st.nbytes()) std::memcpy(seg.ptr, st.data(), st.nbytes());
  st.replace_data(std::move(seg));
  return t;
}

Tensor empty_shared(IntArrayRef sizes, ScalarType dtype) {
  int64_t n = numel_of(sizes);
  size_t nbytes = static_cast<size_t>(n) * element_size(dtype);
  Storage st = IntrusivePtr<StorageImpl>::make(shm_allocate(nbytes), nbytes, Device());
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(st), dtype, Shape(sizes.begin(), sizes.end()),
                                               contiguous_strides(sizes), 0));
}

}  // namespace ember
