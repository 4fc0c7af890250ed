// Note [Memory history] (core/memory_stats.h): live blocks and recent actions with their stacks.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

#include "ember/core/memory_stats.h"

namespace ember::memory_history {
namespace {

std::mutex g_mu;  // guards everything below
std::unordered_map<uint64_t, Block> g_live;
std::deque<TraceEntry> g_trace;
bool g_trace_on = false;
size_t g_max_entries = 0;

std::string format_bytes(int64_t n) {
  char buf[64];
  double v = static_cast<double>(n);
  if (n >= (int64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / double(int64_t(1) << 30));
  else if (n >= (int64_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%.2f MiB", v / double(int64_t(1) << 20));
  else if (n >= 1024)
    std::snprintf(buf, sizeof buf, "%.2f KiB", v / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(n));
  return buf;
}

// The user's line: the innermost frame outside the ember package (else the innermost one).
std::string source_line(const Block& b) {
  const profiler::Frame* f = nullptr;
  for (const profiler::Frame& fr : b.frames)
    if (!fr.internal) {
      f = &fr;
      break;
    }
  if (!f && !b.frames.empty()) f = &b.frames.front();
  if (!f) return b.op.empty() ? std::string("<no Python stack>") : "<no Python stack> (" + b.op + ")";
  return *f->file + ":" + std::to_string(f->line) + " in " + *f->name;
}

}  // namespace

void enable(bool trace, size_t max_entries) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_trace_on = trace;
    g_max_entries = max_entries;
    while (g_trace.size() > g_max_entries) g_trace.pop_front();
  }
  profiler::detail::g_state.fetch_or(profiler::kMemoryHistory);
}

void disable() {
  profiler::detail::g_state.fetch_and(~uint32_t(profiler::kMemoryHistory));
  std::lock_guard<std::mutex> lock(g_mu);
  g_live.clear();
  g_trace.clear();
  g_trace_on = false;
}

bool enabled() { return profiler::state() & profiler::kMemoryHistory; }

std::vector<Block> live_blocks() {
  std::vector<Block> out;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    out.reserve(g_live.size());
    for (auto& [addr, b] : g_live) out.push_back(b);
  }
  std::sort(out.begin(), out.end(), [](const Block& a, const Block& b) { return a.addr < b.addr; });
  return out;
}

std::vector<TraceEntry> trace() {
  std::lock_guard<std::mutex> lock(g_mu);
  return std::vector<TraceEntry>(g_trace.begin(), g_trace.end());
}

std::string largest_by_line(size_t n) {
  if (!enabled()) return "";
  std::map<std::string, std::pair<int64_t, int64_t>> by_line;  // line -> (bytes, blocks)
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto& [addr, b] : g_live) {
      auto& e = by_line[source_line(b)];
      e.first += b.size;
      e.second += 1;
    }
  }
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> rows(by_line.begin(), by_line.end());
  std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.first > b.second.first; });
  std::string s;
  for (size_t i = 0; i < rows.size() && i < n; ++i) {
    if (i) s += "; ";
    s += format_bytes(rows[i].second.first) + " at " + rows[i].first + " (" + std::to_string(rows[i].second.second) +
         (rows[i].second.second == 1 ? " block)" : " blocks)");
  }
  return s;
}

void on_alloc(void* ptr, int64_t size, int64_t requested) {
  if (!enabled()) return;
  Block b;
  b.addr = reinterpret_cast<uint64_t>(ptr);
  b.size = size;
  b.requested = requested;
  b.tid = profiler::thread_id();
  b.ts_ns = profiler::now_ns();
  if (const std::string* op = profiler::current_name()) b.op = *op;
  if (const std::vector<profiler::Frame>* f = profiler::current_frames())
    b.frames = *f;
  else
    b.frames = profiler::capture_stack();  // outside any binding call (empty without the GIL)
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_trace_on && g_max_entries > 0) {
    if (g_trace.size() >= g_max_entries) g_trace.pop_front();
    g_trace.push_back(TraceEntry{'a', b.addr, size, b.ts_ns, b.op, b.frames});
  }
  g_live[b.addr] = std::move(b);
}

void on_free(void* ptr, int64_t size) {
  if (!enabled()) return;
  uint64_t addr = reinterpret_cast<uint64_t>(ptr);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_live.erase(addr) == 0) return;  // made before the history was on
  if (g_trace_on && g_max_entries > 0) {
    if (g_trace.size() >= g_max_entries) g_trace.pop_front();
    const std::string* op = profiler::current_name();
    g_trace.push_back(TraceEntry{'f', addr, size, profiler::now_ns(), op ? *op : std::string(), {}});
  }
}

}  // namespace ember::memory_history
