#include "ember/profiler/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "ember/core/error.h"

namespace ember::profiler {
namespace detail {
std::atomic<uint32_t> g_state{0};
}
namespace {

// Events are appended to a buffer per thread and session; the owning thread is the only writer
// while the session runs, so its mutex is uncontended except when stop() collects.
struct ThreadBuffer {
  std::mutex mu;
  uint64_t gen = 0;
  uint64_t tid = 0;
  std::vector<Event> events;
  std::vector<MemoryEvent> memory;
};

// A range open on this thread.
struct Open {
  int64_t token = -1;
  std::string name;
  std::vector<Frame> frames;          // kept for memory history
  std::shared_ptr<ThreadBuffer> buf;  // null when the range is not recorded as an event
  size_t index = 0;                   // into buf->events
};

std::mutex g_mu;  // guards the session: g_buffers, g_start_ns, start/stop
std::vector<std::shared_ptr<ThreadBuffer>> g_buffers;
std::atomic<uint64_t> g_gen{0};  // bumped by start and stop: a buffer of an older generation is stale
int64_t g_start_ns = 0;
std::atomic<int64_t> g_next_token{0};
std::atomic<StackHook> g_stack_hook{nullptr};

thread_local std::vector<Open> t_open;

std::shared_ptr<ThreadBuffer> thread_buffer() {
  thread_local std::shared_ptr<ThreadBuffer> t_buf;
  uint64_t gen = g_gen.load(std::memory_order_acquire);
  if (t_buf && t_buf->gen == gen) return t_buf;
  auto b = std::make_shared<ThreadBuffer>();
  b->gen = gen;
  b->tid = thread_id();
  std::lock_guard<std::mutex> lock(g_mu);
  if (gen != g_gen.load(std::memory_order_relaxed) || !(state() & kProfiling)) return nullptr;
  g_buffers.push_back(b);
  t_buf = b;
  return b;
}

bool current(const std::shared_ptr<ThreadBuffer>& b) { return b && b->gen == g_gen.load(std::memory_order_relaxed); }

void close(Open& o, int64_t t) {
  if (!o.buf) return;
  std::lock_guard<std::mutex> lock(o.buf->mu);
  if (current(o.buf) && o.index < o.buf->events.size()) o.buf->events[o.index].end_ns = t;
}

Open* find_open(int64_t token) {
  for (size_t i = t_open.size(); i-- > 0;)
    if (t_open[i].token == token) return &t_open[i];
  return nullptr;
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t thread_id() {
  thread_local uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  return tid;
}

const std::string* intern(std::string_view s) {
  static std::mutex mu;
  static auto* table = new std::unordered_set<std::string>();  // never destroyed: frames may outlive statics
  std::lock_guard<std::mutex> lock(mu);
  return &*table->emplace(s).first;
}

void set_stack_hook(StackHook hook) { g_stack_hook.store(hook); }
std::vector<Frame> capture_stack() {
  StackHook h = g_stack_hook.load(std::memory_order_relaxed);
  return h ? h() : std::vector<Frame>();
}

void start(const Config& config) {
  std::lock_guard<std::mutex> lock(g_mu);
  EMBER_CHECK(!(state() & kProfiling),
              "Profiler is already enabled on this process: only one profiler session can run at a time");
  g_buffers.clear();
  g_gen.fetch_add(1, std::memory_order_acq_rel);
  g_start_ns = now_ns();
  uint32_t bits = kProfiling;
  if (config.profile_memory) bits |= kProfileMemory;
  if (config.record_shapes) bits |= kRecordShapes;
  if (config.with_stack) bits |= kWithStack;
  detail::g_state.fetch_or(bits);
}

Result stop() {
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  Result r;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    EMBER_CHECK(state() & kProfiling, "Profiler is not enabled");
    detail::g_state.fetch_and(~uint32_t(kProfiling | kProfileMemory | kRecordShapes | kWithStack));
    r.start_ns = g_start_ns;
    r.end_ns = now_ns();
    buffers.swap(g_buffers);
    g_gen.fetch_add(1, std::memory_order_acq_rel);  // ranges still open stop writing into these buffers
  }
  for (auto& b : buffers) {
    std::lock_guard<std::mutex> lock(b->mu);
    for (Event& e : b->events) {
      if (e.end_ns == 0) e.end_ns = r.end_ns;  // still open when the session ended
      r.events.push_back(std::move(e));
    }
    r.memory.insert(r.memory.end(), b->memory.begin(), b->memory.end());
    b->events.clear();
    b->memory.clear();
  }
  return r;
}

bool is_profiling() { return state() & kProfiling; }

Config config() {
  uint32_t s = state();
  return Config{(s & kRecordShapes) != 0, (s & kProfileMemory) != 0, (s & kWithStack) != 0};
}

int64_t begin(std::string name, EventKind kind, std::vector<Frame> frames, int64_t seq) {
  uint32_t st = state() & ~uint32_t(kFunctionMode);  // function mode observes nothing here
  if (!st) return -1;
  Open o;
  o.token = g_next_token.fetch_add(1, std::memory_order_relaxed);
  if ((st & kProfiling) && !name.empty()) {
    if (auto buf = thread_buffer()) {
      Event e;
      e.name = name;
      e.kind = kind;
      e.id = o.token;
      e.tid = buf->tid;
      e.seq = seq;
      for (size_t i = t_open.size(); i-- > 0;)  // the innermost recorded range (nameless ones are not)
        if (t_open[i].buf) {
          if (t_open[i].buf == buf) e.parent = t_open[i].token;
          break;
        }
      if (st & kWithStack) e.stack = frames;
      e.start_ns = now_ns();
      std::lock_guard<std::mutex> lock(buf->mu);
      o.index = buf->events.size();
      buf->events.push_back(std::move(e));
      o.buf = std::move(buf);
    }
  }
  o.name = std::move(name);
  if (st & kMemoryHistory) o.frames = std::move(frames);
  t_open.push_back(std::move(o));
  return t_open.back().token;
}

void end(int64_t token) {
  if (token < 0) return;
  int64_t t = now_ns();
  for (size_t i = t_open.size(); i-- > 0;) {
    if (t_open[i].token != token) continue;
    for (size_t j = t_open.size(); j-- > i;) close(t_open[j], t);  // and any left open inside it
    t_open.resize(i);
    return;
  }
}

void set_shapes(int64_t token, std::string input_shapes, std::string input_types) {
  Open* o = find_open(token);
  if (!o || !o->buf) return;
  std::lock_guard<std::mutex> lock(o->buf->mu);
  if (!current(o->buf)) return;
  Event& e = o->buf->events[o->index];
  e.input_shapes = std::move(input_shapes);
  e.input_types = std::move(input_types);
}

void set_output_shapes(int64_t token, std::string output_shapes) {
  Open* o = find_open(token);
  if (!o || !o->buf) return;
  std::lock_guard<std::mutex> lock(o->buf->mu);
  if (current(o->buf)) o->buf->events[o->index].output_shapes = std::move(output_shapes);
}

void note_sequence(uint64_t seq) {
  if (t_open.empty() || !t_open.back().buf) return;  // the op in progress is the innermost range
  Open& o = t_open.back();
  std::lock_guard<std::mutex> lock(o.buf->mu);
  if (!current(o.buf)) return;
  Event& e = o.buf->events[o.index];
  if (e.seq < 0) e.seq = static_cast<int64_t>(seq);
}

const std::string* current_name() {
  for (size_t i = t_open.size(); i-- > 0;)
    if (!t_open[i].name.empty()) return &t_open[i].name;
  return nullptr;
}
const std::vector<Frame>* current_frames() {
  for (size_t i = t_open.size(); i-- > 0;)
    if (!t_open[i].frames.empty()) return &t_open[i].frames;
  return nullptr;
}

void on_memory(void* ptr, int64_t bytes, int64_t total_allocated, int64_t total_reserved) {
  uint32_t st = state();
  if ((st & (kProfiling | kProfileMemory)) != (kProfiling | kProfileMemory)) return;
  auto buf = thread_buffer();
  if (!buf) return;
  MemoryEvent m{now_ns(), buf->tid, bytes, reinterpret_cast<uint64_t>(ptr), total_allocated, total_reserved};
  {
    std::lock_guard<std::mutex> lock(buf->mu);
    buf->memory.push_back(m);
  }
  // The innermost range recorded in this session takes the bytes.
  for (size_t i = t_open.size(); i-- > 0;) {
    Open& o = t_open[i];
    if (!o.buf) continue;
    std::lock_guard<std::mutex> lock(o.buf->mu);
    if (current(o.buf)) o.buf->events[o.index].self_bytes += bytes;
    return;
  }
}

}  // namespace ember::profiler
