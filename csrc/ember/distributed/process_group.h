// The process-group seam (torch's c10d Backend): collectives on tensors, each returning a Work
// handle. ProcessGroupGloo implements it for CPU tensors over Gloo; a NCCL back end for CUDA
// tensors implements the same interface. Rank arguments are ranks within the group.
#pragma once
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

enum class ReduceOp { Sum, Avg, Product, Min, Max, BAnd, BOr, BXor };
const char* reduce_op_name(ReduceOp op);

// A collective in flight. Completes once, from the back end's thread; wait() rethrows its error.
class Work {
 public:
  explicit Work(std::string op) : op_(std::move(op)) {}
  virtual ~Work() = default;
  const std::string& op() const { return op_; }
  bool is_completed();
  bool is_success();
  // Blocks until done (at most `timeout` when it is positive: then DistBackendError) and
  // rethrows the operation's error.
  void wait(Millis timeout = Millis(0));
  std::exception_ptr exception();
  // The tensors the operation wrote (torch's Work.result()).
  std::vector<Tensor> result();
  // Runs fn once the work completes: right away on this thread if it already has, else on the
  // thread that completes it.
  void on_complete(std::function<void()> fn);
  int source_rank() const { return source_rank_; }  // recv from any source: the sender

  // For back ends.
  void finish(std::exception_ptr error = nullptr);
  void set_result(std::vector<Tensor> r) { result_ = std::move(r); }
  void set_source_rank(int r) { source_rank_ = r; }

 private:
  std::string op_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> done_flag_{false};  // done_, readable without the lock (wait's spin)
  std::exception_ptr error_;
  std::vector<Tensor> result_;
  std::vector<std::function<void()>> callbacks_;
  int source_rank_ = -1;
};
using WorkPtr = std::shared_ptr<Work>;

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend_name() const = 0;

  virtual WorkPtr allreduce(Tensor t, ReduceOp op) = 0;
  virtual WorkPtr broadcast(Tensor t, int root) = 0;
  virtual WorkPtr reduce(Tensor t, int root, ReduceOp op) = 0;
  // outputs[i] receives rank i's input.
  virtual WorkPtr allgather(std::vector<Tensor> outputs, Tensor input) = 0;
  // output holds size() inputs back to back.
  virtual WorkPtr allgather_into_tensor(Tensor output, Tensor input) = 0;
  virtual WorkPtr gather(std::vector<Tensor> outputs, Tensor input, int root) = 0;   // outputs on root only
  virtual WorkPtr scatter(Tensor output, std::vector<Tensor> inputs, int root) = 0;  // inputs on root only
  // output = reduction over ranks of their inputs[rank()].
  virtual WorkPtr reduce_scatter(Tensor output, std::vector<Tensor> inputs, ReduceOp op) = 0;
  // Dim 0 of input is split by input_splits (equal parts when empty) and part i goes to rank i;
  // output receives the parts back to back, sized by output_splits.
  virtual WorkPtr alltoall_base(Tensor output, Tensor input, std::vector<int64_t> output_splits,
                                std::vector<int64_t> input_splits) = 0;
  virtual WorkPtr alltoall(std::vector<Tensor> outputs, std::vector<Tensor> inputs) = 0;
  virtual WorkPtr barrier() = 0;
  virtual WorkPtr send(Tensor t, int dst, int tag) = 0;
  virtual WorkPtr recv(Tensor t, int src, int tag) = 0;  // src -1: from any rank
  // Blocks until the ops already queued have run, then stops the back end's threads.
  virtual void shutdown() {}

 protected:
  void check_rank(int r, const char* op, const char* what) const;
  int rank_, size_;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

}  // namespace ember::distributed
