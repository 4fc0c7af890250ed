// The profiler's recorder and the allocator's counters and history, used from C++ alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>

#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/core/memory_stats.h"
#include "ember/ember.h"
#include "ember/profiler/profiler.h"

using namespace ember;

namespace {
const profiler::Event* find(const profiler::Result& r, const std::string& name) {
  for (const profiler::Event& e : r.events)
    if (e.name == name) return &e;
  return nullptr;
}
}  // namespace

TEST(Profiler, ScopesNestAndTimeIsOrdered) {
  EXPECT_FALSE(profiler::active());
  { profiler::Scope ignored("before"); }  // nothing observes: no event
  profiler::start({});
  EXPECT_TRUE(profiler::active());
  {
    profiler::Scope outer("outer");
    { profiler::Scope inner("inner"); }
    int64_t open = profiler::begin("left open");
    (void)open;  // closed by the end of `outer`
  }
  EXPECT_THROW(profiler::start({}), Error);  // one session at a time
  profiler::Result r = profiler::stop();
  EXPECT_FALSE(profiler::active());
  ASSERT_EQ(r.events.size(), 3u);
  const profiler::Event *outer = find(r, "outer"), *inner = find(r, "inner"), *left = find(r, "left open");
  ASSERT_TRUE(outer && inner && left);
  EXPECT_EQ(outer->parent, -1);
  EXPECT_EQ(inner->parent, outer->id);
  EXPECT_EQ(left->parent, outer->id);
  EXPECT_LE(outer->start_ns, inner->start_ns);
  EXPECT_LE(inner->end_ns, outer->end_ns);
  EXPECT_EQ(left->end_ns, outer->end_ns);
  EXPECT_EQ(outer->tid, profiler::thread_id());
  EXPECT_EQ(find(r, "before"), nullptr);
}

TEST(Profiler, BackwardNodesAreEventsLinkedToTheirForwardRange) {
  Tensor x = ones({3, 4});
  autograd::set_requires_grad(x, true);
  profiler::start({});
  Tensor loss;
  {
    profiler::Scope fwd("forward op", profiler::EventKind::Op);
    loss = sum(mul(x, x));
  }
  autograd::run_backward({loss}, {Tensor()}, {}, autograd::BackwardOptions{});
  profiler::Result r = profiler::stop();
  const profiler::Event* fwd = find(r, "forward op");
  const profiler::Event* acc = find(r, "AccumulateGrad");
  ASSERT_TRUE(fwd && acc);
  EXPECT_EQ(acc->kind, profiler::EventKind::Backward);
  ASSERT_GE(fwd->seq, 0);  // the first node recorded inside the range
  bool linked = false;
  for (const profiler::Event& e : r.events) linked |= e.kind == profiler::EventKind::Backward && e.seq == fwd->seq;
  EXPECT_TRUE(linked);
}

TEST(Profiler, MemoryIsAttributedToTheInnermostRange) {
  profiler::start({.profile_memory = true});
  {
    profiler::Scope s("alloc");
    Tensor t = empty({1 << 18});  // 1 MiB, freed inside the range too
    Tensor keep = empty({16});
    profiler::Scope inner("inner");
    t = Tensor();
  }
  profiler::Result r = profiler::stop();
  const profiler::Event *outer = find(r, "alloc"), *inner = find(r, "inner");
  ASSERT_TRUE(outer && inner);
  // `keep` (64 B) is freed after `inner` closes, while `alloc` is still open: alloc nets the 1 MiB.
  EXPECT_EQ(outer->self_bytes, 1 << 20);
  EXPECT_EQ(inner->self_bytes, -(1 << 20));
  int64_t allocated = 0;
  for (const profiler::MemoryEvent& m : r.memory) allocated += m.bytes;
  EXPECT_EQ(allocated, 0);
}

TEST(MemoryCounters, TrackLiveBlocksAndPeaks) {
  cpu_empty_cache();
  cpu_reset_peak_counters();
  cpu_reset_accumulated_counters();
  CpuMemoryCounters c0 = cpu_memory_counters();
  {
    Tensor a = empty({1000, 1000});  // 4,000,000 bytes: a 4 MiB block
    CpuMemoryCounters c1 = cpu_memory_counters();
    EXPECT_EQ(c1.allocated_bytes - c0.allocated_bytes, 4 << 20);
    EXPECT_EQ(c1.allocations - c0.allocations, 1);
    EXPECT_EQ(c1.allocations_total, 1);
    EXPECT_EQ(c1.reserved_bytes, c1.allocated_bytes + c1.cached_bytes);
  }
  CpuMemoryCounters c2 = cpu_memory_counters();
  EXPECT_EQ(c2.allocated_bytes, c0.allocated_bytes);
  EXPECT_EQ(c2.allocated_bytes_peak, c0.allocated_bytes + (4 << 20));
  EXPECT_EQ(c2.freed_bytes_total, 4 << 20);
  EXPECT_EQ(c2.frees_total, 1);
  cpu_empty_cache();
  EXPECT_EQ(cpu_memory_counters().reserved_bytes, cpu_memory_counters().allocated_bytes);
}

TEST(MemoryHistory, RecordsLiveBlocksWithTheirRange) {
  memory_history::enable(/*trace=*/true, 10);
  Tensor t;
  {
    profiler::Scope s("make it");
    t = empty({64});
  }
  auto blocks = memory_history::live_blocks();
  auto it = std::find_if(blocks.begin(), blocks.end(), [&](const memory_history::Block& b) {
    return b.addr == reinterpret_cast<uint64_t>(t.data_ptr());
  });
  ASSERT_NE(it, blocks.end());
  EXPECT_EQ(it->size, 256);
  EXPECT_EQ(it->op, "make it");
  EXPECT_TRUE(it->frames.empty());  // no Python here
  std::string summary = memory_history::largest_by_line(3);
  EXPECT_NE(summary.find("<no Python stack>"), std::string::npos);
  t = Tensor();
  auto trace = memory_history::trace();
  ASSERT_GE(trace.size(), 2u);
  EXPECT_EQ(trace.back().action, 'f');
  memory_history::disable();
  EXPECT_TRUE(memory_history::live_blocks().empty());
  EXPECT_FALSE(profiler::active());
}
