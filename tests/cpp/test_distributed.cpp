// ember::distributed from C++: the stores (HashStore, FileStore, TCPStore) and ProcessGroupGloo
// between two threads and between two processes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "ember/distributed/process_group_gloo.h"
#include "ember/distributed/tcp_store.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::distributed;
using std::chrono::steady_clock;

namespace {

Bytes b(const std::string& s) { return to_bytes(s); }

// The operations every store must get right, on one store object.
void check_basic_ops(Store& s) {
  s.set("a", b("hello"));
  EXPECT_EQ(to_string(s.get("a")), "hello");
  EXPECT_EQ(s.add("n", 5), 5);
  EXPECT_EQ(s.add("n", -2), 3);
  EXPECT_EQ(to_string(s.get("n")), "3");
  EXPECT_THROW(s.add("a", 1), ValueError);
  // compare_set: absent key with empty expected sets; absent with non-empty returns expected.
  EXPECT_EQ(to_string(s.compare_set("x", {}, b("v"))), "v");
  EXPECT_EQ(to_string(s.compare_set("y", b("e"), b("v"))), "e");
  EXPECT_FALSE(s.check({"y"}));
  EXPECT_EQ(to_string(s.compare_set("x", b("v"), b("w"))), "w");
  EXPECT_EQ(to_string(s.compare_set("x", b("zz"), b("q"))), "w");
  EXPECT_TRUE(s.check({"a", "n", "x"}));
  EXPECT_TRUE(s.delete_key("x"));
  EXPECT_FALSE(s.delete_key("x"));
  EXPECT_FALSE(s.check({"a", "x"}));
  s.append("ap", b("x"));
  s.append("ap", b("yz"));
  EXPECT_EQ(to_string(s.get("ap")), "xyz");
  // A missing key: get and wait give up after their timeouts, with DistStoreError.
  s.set_timeout(Millis(100));
  auto t0 = steady_clock::now();
  EXPECT_THROW(s.get("missing"), DistStoreError);
  EXPECT_THROW(s.wait({"a", "missing"}, Millis(50)), DistStoreError);
  double secs = std::chrono::duration<double>(steady_clock::now() - t0).count();
  EXPECT_GE(secs, 0.14);
  EXPECT_LT(secs, 5.0);
  // The store still works after a timeout.
  EXPECT_EQ(to_string(s.get("a")), "hello");
}

// A waiter in another thread is woken by a later set.
void check_wait_wakes(Store& writer, Store& reader) {
  std::thread t([&] {
    std::this_thread::sleep_for(Millis(50));
    writer.set("late", b("1"));
  });
  reader.wait({"late"}, Millis(5000));
  EXPECT_EQ(to_string(reader.get("late")), "1");
  t.join();
}

std::string temp_path(const char* tag) {
  return (std::filesystem::temp_directory_path() / (std::string("ember_test_") + tag + "_" + std::to_string(getpid())))
      .string();
}

}  // namespace

TEST(DistStore, HashStore) {
  HashStore s;
  check_basic_ops(s);
  EXPECT_EQ(s.num_keys(), 3);  // a, n, ap
  HashStore s2;
  check_wait_wakes(s2, s2);
}

TEST(DistStore, FileStoreSharedBetweenObjectsAndRemovedAtTheEnd) {
  std::string path = temp_path("fs");
  std::filesystem::remove(path);
  {
    FileStore s(path, 2);
    check_basic_ops(s);
    FileStore other(path, 2);  // as a second process would: sees the same keys through the file
    EXPECT_EQ(to_string(other.get("a")), "hello");
    EXPECT_EQ(other.add("n", 10), 13);
    EXPECT_EQ(to_string(s.get("n")), "13");
    EXPECT_FALSE(other.check({"x"}));
    check_wait_wakes(s, other);
    EXPECT_TRUE(std::filesystem::exists(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // both of the world_size stores are gone
}

TEST(DistStore, PrefixStoreKeepsNamespacesApart) {
  auto base = std::make_shared<HashStore>();
  PrefixStore p1("g1", base), p2("g2", base);
  p1.set("k", b("one"));
  p2.set("k", b("two"));
  EXPECT_EQ(to_string(p1.get("k")), "one");
  EXPECT_EQ(to_string(p2.get("k")), "two");
  EXPECT_EQ(to_string(base->get("g1/k")), "one");
}

TEST(DistStore, TCPStoreServerAndClients) {
  TCPStoreOptions mo;
  mo.is_master = true;
  mo.timeout = Millis(5000);
  TCPStore master("127.0.0.1", mo);
  ASSERT_GT(master.port(), 0);
  TCPStoreOptions co;
  co.port = master.port();
  co.timeout = Millis(5000);
  TCPStore client("127.0.0.1", co);
  check_basic_ops(client);
  EXPECT_EQ(to_string(master.get("a")), "hello");
  check_wait_wakes(master, client);
  // Many clients adding at once: no update lost.
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&] {
      TCPStore c("127.0.0.1", co);
      for (int k = 0; k < 50; ++k) c.add("counter", 1);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(master.add("counter", 0), 200);
}

TEST(DistStore, TCPStoreErrors) {
  // Nobody listens on this port: connecting fails after the timeout with DistNetworkError.
  TCPStoreOptions mo;
  mo.is_master = true;
  int free_port;
  {
    TCPStore probe("127.0.0.1", mo);
    free_port = probe.port();
  }
  TCPStoreOptions co;
  co.port = free_port;
  co.timeout = Millis(200);
  EXPECT_THROW(TCPStore("127.0.0.1", co), DistNetworkError);
  // A master waiting for 2 workers while only itself joins.
  TCPStoreOptions wo;
  wo.is_master = true;
  wo.world_size = 2;
  wo.timeout = Millis(200);
  EXPECT_THROW(TCPStore("127.0.0.1", wo), DistStoreError);
}

TEST(DistGloo, TwoThreadsAllreduceAndBroadcast) {
  auto store = std::make_shared<HashStore>();
  GlooOptions o;
  o.timeout = Millis(10000);
  std::vector<Tensor> results(2), bcast(2);
  auto run = [&](int rank) {
    ProcessGroupGloo pg(std::make_shared<PrefixStore>("pg", store), rank, 2, o);
    Tensor t = mul(arange(0, 1000, 1, ScalarType::Float32), scalar_tensor(Scalar(static_cast<double>(rank + 1))));
    pg.allreduce(t, ReduceOp::Sum)->wait();
    results[rank] = t;
    Tensor x = full({3}, Scalar(static_cast<int64_t>(rank * 10)), ScalarType::Int64);
    pg.broadcast(x, 1)->wait();
    bcast[rank] = x;
    pg.barrier()->wait();
  };
  std::thread t1(run, 1);
  run(0);
  t1.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(results[r].numel(), 1000);
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(results[r].data<float>()[i], 3.0f * static_cast<float>(i));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(bcast[r].data<int64_t>()[i], 10);
  }
}

TEST(DistGloo, TwoProcessesAllreduceOverTCPStore) {
  TCPStoreOptions mo;
  mo.is_master = true;
  mo.timeout = Millis(10000);
  auto master = std::make_shared<TCPStore>("127.0.0.1", mo);
  int port = master->port();
  fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  GlooOptions o;
  o.timeout = Millis(10000);
  if (pid == 0) {  // rank 1: its own client store; reports through the exit status
    int ok = 0;
    try {
      TCPStoreOptions co;
      co.port = port;
      co.timeout = Millis(10000);
      auto store = std::make_shared<TCPStore>("127.0.0.1", co);
      ProcessGroupGloo pg(std::make_shared<PrefixStore>("pg", store), 1, 2, o);
      Tensor t = full({5}, Scalar(2.0), ScalarType::Float64);
      pg.allreduce(t, ReduceOp::Max)->wait();
      ok = t.data<double>()[4] == 7.0;
    } catch (...) {
    }
    _exit(ok ? 0 : 3);
  }
  ProcessGroupGloo pg(std::make_shared<PrefixStore>("pg", master), 0, 2, o);
  Tensor t = full({5}, Scalar(7.0), ScalarType::Float64);
  pg.allreduce(t, ReduceOp::Max)->wait();
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(t.data<double>()[0], 7.0);
}

TEST(DistGloo, PeerThatNeverJoinsIsATimeoutNotAHang) {
  auto store = std::make_shared<HashStore>();
  GlooOptions o;
  o.timeout = Millis(300);
  auto t0 = steady_clock::now();
  EXPECT_THROW(ProcessGroupGloo(std::make_shared<PrefixStore>("pg", store), 0, 2, o), DistError);
  EXPECT_LT(std::chrono::duration<double>(steady_clock::now() - t0).count(), 10.0);
}
