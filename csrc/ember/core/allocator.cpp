#include "ember/core/allocator.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "ember/core/error.h"

namespace ember {
namespace {

constexpr size_t kAlignment = 64;                // cache line; enough for AVX-512 loads
constexpr size_t kCacheMin = 256 * 1024;         // smaller blocks go straight to malloc
constexpr size_t kCacheLimit = size_t(4) << 30;  // most bytes kept in the cache

// Round large sizes to one of four steps per power of two, so reuse finds a match with at most
// 25% slack.
size_t round_size(size_t n) {
  if (n > (size_t(1) << 62)) return n;  // no machine has it; aligned_alloc fails without wrapping
  if (n < kCacheMin) return (n + kAlignment - 1) / kAlignment * kAlignment;
  size_t p = size_t(1) << (63 - __builtin_clzll(n));
  size_t step = p / 4;
  return (n + step - 1) / step * step;
}

class CpuCachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    size_t size = round_size(nbytes == 0 ? 1 : nbytes);
    stats_allocs_.fetch_add(1, std::memory_order_relaxed);
    void* p = nullptr;
    if (size >= kCacheMin) p = take_cached(size);
    if (!p) {
      p = std::aligned_alloc(kAlignment, size);
      if (!p) {
        empty_cache();
        p = std::aligned_alloc(kAlignment, size);
      }
      // RuntimeError, as PyTorch's allocator (not MemoryError).
      if (!p)
        throw Error(detail::str_cat("DefaultCPUAllocator: can't allocate memory: you tried to allocate ", nbytes,
                                    " bytes. Error code 12 (Cannot allocate memory)"));
    }
    add_allocated(static_cast<int64_t>(size));
    return DataPtr(p, reinterpret_cast<void*>(size), &CpuCachingAllocator::release);
  }
  Device device() const override { return Device(DeviceType::CPU); }

  MemoryStats stats() {
    MemoryStats s;
    s.allocated_bytes = allocated_.load();
    s.peak_allocated_bytes = peak_.load();
    std::lock_guard<std::mutex> g(mu_);
    s.cached_bytes = static_cast<int64_t>(cached_bytes_);
    s.num_allocs = stats_allocs_.load();
    s.num_cache_hits = hits_;
    return s;
  }
  void reset_peak() { peak_.store(allocated_.load()); }
  void empty_cache() {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [size, blocks] : free_)
      for (void* b : blocks) std::free(b);
    free_.clear();
    cached_bytes_ = 0;
  }

 private:
  static void release(void* ptr, void* ctx);

  void add_allocated(int64_t n) {
    int64_t now = allocated_.fetch_add(n, std::memory_order_relaxed) + n;
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void* take_cached(size_t size) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= size;
    ++hits_;
    return p;
  }
  void give_back(void* p, size_t size) {
    allocated_.fetch_sub(static_cast<int64_t>(size), std::memory_order_relaxed);
    if (size >= kCacheMin) {
      std::lock_guard<std::mutex> g(mu_);
      if (cached_bytes_ + size <= kCacheLimit) {
        free_[size].push_back(p);
        cached_bytes_ += size;
        return;
      }
    }
    std::free(p);
  }

  std::atomic<int64_t> allocated_{0}, peak_{0}, stats_allocs_{0};
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_bytes_ = 0;
  int64_t hits_ = 0;
};

CpuCachingAllocator& instance() {
  static auto* a = new CpuCachingAllocator();  // never destroyed: tensors may outlive statics
  return *a;
}

void CpuCachingAllocator::release(void* ptr, void* ctx) { instance().give_back(ptr, reinterpret_cast<size_t>(ctx)); }

}  // namespace

Allocator* cpu_allocator() { return &instance(); }
MemoryStats cpu_memory_stats() { return instance().stats(); }
void cpu_reset_peak_stats() { instance().reset_peak(); }
void cpu_empty_cache() { instance().empty_cache(); }

}  // namespace ember
