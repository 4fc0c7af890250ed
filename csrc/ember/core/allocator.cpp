#include "ember/core/allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/memory_stats.h"
#include "ember/profiler/profiler.h"

namespace ember {
namespace {

constexpr size_t kAlignment = 64;         // cache line; enough for AVX-512 loads
constexpr size_t kCacheMin = 256 * 1024;  // smaller blocks go straight to malloc
// Note [CPU cache limit]: freed blocks are kept for reuse up to a limit (default 4 GiB; the
// environment variable EMBER_CPU_CACHE_LIMIT_MB or ember.cpu.memory.set_cache_limit change it);
// a block freed past it goes back to the system at once, and lowering the limit trims the cache.
size_t initial_cache_limit() {
  if (const char* v = std::getenv("EMBER_CPU_CACHE_LIMIT_MB")) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0') return static_cast<size_t>(mb) << 20;
  }
  return size_t(4) << 30;
}

// Round large sizes to one of four steps per power of two, so reuse finds a match with at most
// 25% slack.
size_t round_size(size_t n) {
  if (n > (size_t(1) << 62)) return n;  // no machine has it; aligned_alloc fails without wrapping
  if (n < kCacheMin) return (n + kAlignment - 1) / kAlignment * kAlignment;
  size_t p = size_t(1) << (63 - __builtin_clzll(n));
  size_t step = p / 4;
  return (n + step - 1) / step * step;
}

class CpuCachingAllocator;
CpuCachingAllocator& instance();

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
      if (!p) throw_oom(nbytes);
      update_peak(reserved_, reserved_peak_, static_cast<int64_t>(size));
    }
    add_allocated(static_cast<int64_t>(size));
    // Note [Profiler cost]: one flag check; the profiler and the memory history look only behind it.
    if (profiler::active()) observe(p, static_cast<int64_t>(size), static_cast<int64_t>(nbytes));
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
  CpuMemoryCounters counters() {
    CpuMemoryCounters c;
    c.allocated_bytes = allocated_.load();
    c.allocated_bytes_peak = peak_.load();
    c.allocated_bytes_total = allocated_total_.load() - allocated_total_base_.load();
    c.freed_bytes_total = c.allocated_bytes_total - (c.allocated_bytes - allocated_base_.load());
    c.reserved_bytes = reserved_.load();
    c.reserved_bytes_peak = reserved_peak_.load();
    int64_t allocs = stats_allocs_.load(), frees = frees_.load();
    c.allocations = allocs - frees;
    c.allocations_peak = std::max(count_peak_.load(), c.allocations);
    c.allocations_total = allocs - allocs_base_.load();
    c.frees_total = frees - frees_base_.load();
    c.num_ooms = ooms_.load();
    std::lock_guard<std::mutex> g(mu_);
    c.cached_bytes = static_cast<int64_t>(cached_bytes_);
    c.cache_hits = hits_ - hits_base_;
    return c;
  }
  void reset_peak() {
    peak_.store(allocated_.load());
    reserved_peak_.store(reserved_.load());
    count_peak_.store(stats_allocs_.load() - frees_.load());
  }
  void reset_accumulated() {
    allocated_total_base_.store(allocated_total_.load());
    allocated_base_.store(allocated_.load());
    allocs_base_.store(stats_allocs_.load());
    frees_base_.store(frees_.load());
    ooms_.store(0);
    std::lock_guard<std::mutex> g(mu_);
    hits_base_ = hits_;
  }
  size_t cache_limit() {
    std::lock_guard<std::mutex> g(mu_);
    return cache_limit_;
  }
  void set_cache_limit(size_t bytes) {
    std::lock_guard<std::mutex> g(mu_);
    cache_limit_ = bytes;
    // trim: largest blocks first, until the cache fits
    while (cached_bytes_ > cache_limit_ && !free_.empty()) {
      auto it = std::prev(free_.end());
      std::free(it->second.back());
      it->second.pop_back();
      cached_bytes_ -= it->first;
      reserved_.fetch_sub(static_cast<int64_t>(it->first), std::memory_order_relaxed);
      if (it->second.empty()) free_.erase(it);
    }
  }
  void empty_cache() {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [size, blocks] : free_)
      for (void* b : blocks) std::free(b);
    free_.clear();
    reserved_.fetch_sub(static_cast<int64_t>(cached_bytes_), std::memory_order_relaxed);
    cached_bytes_ = 0;
  }

 private:
  static void release(void* ptr, void* ctx);

  static void update_peak(std::atomic<int64_t>& value, std::atomic<int64_t>& peak, int64_t delta) {
    int64_t now = value.fetch_add(delta, std::memory_order_relaxed) + delta;
    int64_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
  }
  void add_allocated(int64_t n) {
    update_peak(allocated_, peak_, n);
    allocated_total_.fetch_add(n, std::memory_order_relaxed);
    int64_t live = stats_allocs_.load(std::memory_order_relaxed) - frees_.load(std::memory_order_relaxed);
    if (live > count_peak_.load(std::memory_order_relaxed)) count_peak_.store(live, std::memory_order_relaxed);
  }
  [[noreturn]] void throw_oom(size_t nbytes) {
    ooms_.fetch_add(1, std::memory_order_relaxed);
    stats_allocs_.fetch_sub(1, std::memory_order_relaxed);  // counted on entry; nothing was handed out
    // RuntimeError, as PyTorch's allocator (not MemoryError).
    std::string msg = detail::str_cat("DefaultCPUAllocator: can't allocate memory: you tried to allocate ", nbytes,
                                      " bytes. Error code 12 (Cannot allocate memory)");
    std::string largest = memory_history::largest_by_line(5);
    if (!largest.empty()) msg += ". Largest live allocations by source line (memory history): " + largest;
    throw Error(msg);
  }
  static void observe(void* p, int64_t size, int64_t requested) {
    memory_history::on_alloc(p, size, requested);
    auto& a = instance();
    profiler::on_memory(p, size, a.allocated_.load(std::memory_order_relaxed),
                        a.reserved_.load(std::memory_order_relaxed));
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
    if (profiler::active()) {
      memory_history::on_free(p, static_cast<int64_t>(size));
      profiler::on_memory(p, -static_cast<int64_t>(size),
                          allocated_.load(std::memory_order_relaxed) - static_cast<int64_t>(size),
                          reserved_.load(std::memory_order_relaxed));
    }
    allocated_.fetch_sub(static_cast<int64_t>(size), std::memory_order_relaxed);
    frees_.fetch_add(1, std::memory_order_relaxed);
    if (size >= kCacheMin) {
      std::lock_guard<std::mutex> g(mu_);
      if (cached_bytes_ + size <= cache_limit_) {
        free_[size].push_back(p);
        cached_bytes_ += size;
        return;
      }
    }
    reserved_.fetch_sub(static_cast<int64_t>(size), std::memory_order_relaxed);
    std::free(p);
  }

  std::atomic<int64_t> allocated_{0}, peak_{0}, stats_allocs_{0}, frees_{0}, count_peak_{0};
  std::atomic<int64_t> reserved_{0}, reserved_peak_{0}, allocated_total_{0}, ooms_{0};
  // Values at the last reset_accumulated (the totals report differences).
  std::atomic<int64_t> allocated_total_base_{0}, allocated_base_{0}, allocs_base_{0}, frees_base_{0};
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_bytes_ = 0;
  size_t cache_limit_ = initial_cache_limit();  // guarded by mu_
  int64_t hits_ = 0, hits_base_ = 0;
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
size_t cpu_cache_limit() { return instance().cache_limit(); }
void cpu_set_cache_limit(size_t bytes) { instance().set_cache_limit(bytes); }
CpuMemoryCounters cpu_memory_counters() { return instance().counters(); }
void cpu_reset_peak_counters() { instance().reset_peak(); }
void cpu_reset_accumulated_counters() { instance().reset_accumulated(); }

}  // namespace ember
