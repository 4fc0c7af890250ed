// Allocators hand out raw memory; Storage owns it through a DataPtr.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ember/core/device.h"

namespace ember {

// Memory plus how to give it back. `ctx` is whatever the deleter needs (a size, a NumPy array).
struct DataPtr {
  void* ptr = nullptr;
  void* ctx = nullptr;
  void (*deleter)(void* ptr, void* ctx) = nullptr;

  DataPtr() = default;
  DataPtr(void* p, void* c, void (*d)(void*, void*)) : ptr(p), ctx(c), deleter(d) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept : ptr(o.ptr), ctx(o.ctx), deleter(o.deleter) { o.deleter = nullptr; }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      free();
      ptr = o.ptr, ctx = o.ctx, deleter = o.deleter;
      o.deleter = nullptr;
    }
    return *this;
  }
  ~DataPtr() { free(); }
  void free() {
    if (deleter) deleter(ptr, ctx);
    deleter = nullptr;
  }
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
  virtual Device device() const = 0;
};

struct MemoryStats {
  int64_t allocated_bytes = 0;       // live, handed out to tensors
  int64_t peak_allocated_bytes = 0;  // high-water mark of allocated_bytes since reset
  int64_t cached_bytes = 0;          // freed but kept for reuse
  int64_t num_allocs = 0;            // allocate() calls since start
  int64_t num_cache_hits = 0;        // of which were served from the cache
};

// The CPU allocator. Note [CPU caching]: large blocks are kept after free and reused, so a fresh
// output does not pay one page fault per 4 KiB (glibc returns big blocks to the OS with munmap).
Allocator* cpu_allocator();
MemoryStats cpu_memory_stats();
void cpu_reset_peak_stats();
void cpu_empty_cache();  // return every cached block to the system
// The most bytes of freed blocks kept for reuse (Note [CPU cache limit] in allocator.cpp).
size_t cpu_cache_limit();
void cpu_set_cache_limit(size_t bytes);

}  // namespace ember
