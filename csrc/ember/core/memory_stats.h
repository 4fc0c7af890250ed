// CPU allocator introspection: counters, and a history of live allocations with the stack that
// made each (Note [Memory history]). The allocator itself is core/allocator.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/profiler/profiler.h"

namespace ember {

// Byte counts are the allocator's rounded block sizes. "reserved" = allocated + cached.
struct CpuMemoryCounters {
  int64_t allocated_bytes = 0, allocated_bytes_peak = 0;
  int64_t allocated_bytes_total = 0, freed_bytes_total = 0;  // accumulated since start (or reset)
  int64_t reserved_bytes = 0, reserved_bytes_peak = 0;
  int64_t allocations = 0, allocations_peak = 0;   // live blocks
  int64_t allocations_total = 0, frees_total = 0;  // accumulated
  int64_t cached_bytes = 0, cache_hits = 0, num_ooms = 0;
};
CpuMemoryCounters cpu_memory_counters();
void cpu_reset_peak_counters();         // peaks := current values
void cpu_reset_accumulated_counters();  // totals, cache hits and OOM count := 0

// Note [Memory history]: while enabled, the allocator records each live block with the stack
// captured by the binding call that made it (profiler::begin's frames) and the innermost range
// (op or backward node). Off, it costs nothing beyond the profiler's one flag check; on, every op
// call captures its Python stack (microseconds). With it on, an allocation that fails names the
// largest live allocations by source line.
namespace memory_history {

struct Block {
  uint64_t addr = 0;
  int64_t size = 0;       // rounded block size
  int64_t requested = 0;  // what the caller asked for
  uint64_t tid = 0;
  int64_t ts_ns = 0;
  std::string op;  // innermost range (op or backward node), may be empty
  std::vector<profiler::Frame> frames;
};
struct TraceEntry {
  char action = 'a';  // 'a' alloc, 'f' free
  uint64_t addr = 0;
  int64_t size = 0;
  int64_t ts_ns = 0;
  std::string op;
  std::vector<profiler::Frame> frames;  // alloc only
};

// trace: also keep the last max_entries alloc/free actions.
void enable(bool trace, size_t max_entries);
void disable();  // forgets everything recorded
bool enabled();
std::vector<Block> live_blocks();  // by address
std::vector<TraceEntry> trace();   // oldest first
// "512.00 MiB at train.py:12 in step (2 blocks); ..." for the n largest source lines; "" when off.
std::string largest_by_line(size_t n);

// Allocator hooks (called only when profiler::active()).
void on_alloc(void* ptr, int64_t size, int64_t requested);
void on_free(void* ptr, int64_t size);

}  // namespace memory_history
}  // namespace ember
