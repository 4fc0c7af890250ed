// The profiler's event recorder and the one flag every instrumented path checks first.
//
// Note [Profiler cost]: the places that can report something (the Python bindings' call path,
// python/src/bind_profiler.cpp; the autograd engine; set_history; the CPU allocator) first read
// one global word with a relaxed load. With no profiler session and no memory history it is
// zero and the branch is predicted, so an op pays one load and one not-taken jump; everything
// else (clock reads, names, shapes, stacks) happens only behind it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::profiler {

namespace detail {
extern std::atomic<uint32_t> g_state;
}
// Bits of the state word.
enum : uint32_t {
  kProfiling = 1,      // a profiler session records events
  kProfileMemory = 2,  // ... and attributes allocations to them
  kMemoryHistory = 4,  // the allocator remembers live blocks with their stacks (core/memory_stats.h)
  kRecordShapes = 8,   // session options, kept here so the hot path reads one word
  kWithStack = 16,
  kFunctionMode = 32,  // vmap is active: bound ops with a BatchedTensor argument go to a Python handler
                       // (python/src/bind_profiler.cpp, Note [Function mode]); records nothing here
};
// always_inline: the bindings are built for size (-Os), where GCC would make these calls.
[[gnu::always_inline]] inline uint32_t state() { return detail::g_state.load(std::memory_order_relaxed); }
[[gnu::always_inline]] inline bool active() { return __builtin_expect(state() != 0, 0); }

// One frame of the caller's (Python) stack. `internal`: inside the ember package. Frames are
// copied into every event and memory block, so their strings are interned (never freed).
struct Frame {
  const std::string* file = nullptr;
  const std::string* name = nullptr;
  int line = 0;
  bool internal = false;
};
const std::string* intern(std::string_view s);  // one pointer per distinct string
using StackHook = std::vector<Frame> (*)();     // innermost frame first; installed by the bindings
void set_stack_hook(StackHook hook);
std::vector<Frame> capture_stack();  // empty without a hook

enum class EventKind : uint8_t { Op, Backward, User };

struct Event {
  std::string name;
  EventKind kind = EventKind::Op;
  int64_t id = 0;
  int64_t parent = -1;  // id of the enclosing event on the same thread, -1 at top level
  int64_t start_ns = 0, end_ns = 0;
  uint64_t tid = 0;
  int64_t seq = -1;           // autograd sequence number: of the node a forward op made, or of the node run
  int64_t self_bytes = 0;     // profile_memory: allocated minus freed while this was the innermost event
  std::string input_shapes;   // record_shapes: "[[2, 3], [], [[2], [2]]]" (one entry per argument)
  std::string input_types;    // record_shapes: "['float', 'Scalar']"
  std::string output_shapes;  // record_shapes: shapes of the Tensor result(s)
  std::vector<Frame> stack;   // with_stack: the caller's stack, innermost first
};

struct MemoryEvent {
  int64_t ts_ns = 0;
  uint64_t tid = 0;
  int64_t bytes = 0;  // > 0 allocated, < 0 freed
  uint64_t addr = 0;
  int64_t total_allocated = 0, total_reserved = 0;
};

struct Config {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
};

struct Result {
  std::vector<Event> events;  // every thread's, in start order within each thread
  std::vector<MemoryEvent> memory;
  int64_t start_ns = 0, end_ns = 0;
};

// One session at a time: start throws if one is running. stop() closes events still open.
void start(const Config& config);
Result stop();
bool is_profiling();
Config config();

// A range on the calling thread. begin returns a token (-1 when nothing observes, and then
// end(-1) does nothing). Ranges nest; end closes the given one and any left open inside it.
// `frames` is the caller's stack when it was captured (with_stack, memory history). A range with
// an empty name records no event; it only lends its frames to the memory history.
int64_t begin(std::string name, EventKind kind = EventKind::User, std::vector<Frame> frames = {}, int64_t seq = -1);
void end(int64_t token);
void set_shapes(int64_t token, std::string input_shapes, std::string input_types);
void set_output_shapes(int64_t token, std::string output_shapes);
// The forward op in progress recorded autograd node `seq` (called by set_history).
void note_sequence(uint64_t seq);

class Scope {
 public:
  explicit Scope(std::string name, EventKind kind = EventKind::User, int64_t seq = -1)
      : token_(active() ? begin(std::move(name), kind, {}, seq) : -1) {}
  ~Scope() { end(token_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  int64_t token_;
};

// The innermost range on this thread: its name and the nearest captured stack (memory history).
const std::string* current_name();
const std::vector<Frame>* current_frames();

// Allocator hooks, called only when active(): attribute to the current event (profile_memory).
void on_memory(void* ptr, int64_t bytes, int64_t total_allocated, int64_t total_reserved);

int64_t now_ns();      // steady clock
uint64_t thread_id();  // the OS thread id (as in traces)

}  // namespace ember::profiler
