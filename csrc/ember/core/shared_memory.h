// Shared-memory storages for multiprocessing (paper §5.4): tensors sent to another process alias
// the same memory. Note [Shared memory by memfd]: a segment is an anonymous memfd mapped
// MAP_SHARED; other processes receive a duplicate of its file descriptor (Python's
// multiprocessing passes it over a Unix socket), so nothing is ever named in /dev/shm and the
// memory goes back to the system when the last mapping and descriptor close, even if a process
// dies.
#pragma once
#include <cstddef>

#include "ember/core/tensor.h"

namespace ember {

// A fresh shared segment of nbytes (zero-filled by the kernel).
DataPtr shm_allocate(size_t nbytes);
// Maps a segment received from another process; takes ownership of fd.
DataPtr shm_map_fd(int fd, size_t nbytes);
// The segment's descriptor if the storage lives in shared memory, else -1.
int shm_fd(const StorageImpl& storage);
bool is_shared(const Tensor& t);

// Moves the tensor's storage (and so every view of it) into shared memory; no-op if it is there.
Tensor& share_memory_(Tensor& t);
// An uninitialised contiguous tensor in shared memory (DataLoader workers collate into these).
Tensor empty_shared(IntArrayRef sizes, ScalarType dtype);

}  // namespace ember
