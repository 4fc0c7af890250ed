#include "ember/distributed/process_group.h"

#include <thread>

namespace ember::distributed {

namespace {
constexpr int kSpinMicros = 200;
}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "SUM";
    case ReduceOp::Avg:
      return "AVG";
    case ReduceOp::Product:
      return "PRODUCT";
    case ReduceOp::Min:
      return "MIN";
    case ReduceOp::Max:
      return "MAX";
    case ReduceOp::BAnd:
      return "BAND";
    case ReduceOp::BOr:
      return "BOR";
    case ReduceOp::BXor:
      return "BXOR";
  }
  return "?";
}

bool Work::is_completed() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_ && !error_;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

std::vector<Tensor> Work::result() {
  std::lock_guard<std::mutex> lock(mu_);
  return result_;
}

void Work::wait(Millis timeout) {
  // Note [Work wait spin]: a short collective is often done within ~100 us; spinning that long
  // first saves the wake-up of a sleeping thread, which on a loaded (virtual) machine can cost a
  // scheduler tick (4 ms measured) and dominated small all_reduces.
  auto spin_end = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  while (!done_flag_.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < spin_end)
    std::this_thread::yield();
  std::unique_lock<std::mutex> lock(mu_);
  if (timeout.count() > 0) {
    if (!cv_.wait_for(lock, timeout, [&] { return done_; }))
      throw DistBackendError(op_ + ": Work.wait timed out after " + std::to_string(timeout.count()) + "ms");
  } else {
    cv_.wait(lock, [&] { return done_; });
  }
  if (error_) std::rethrow_exception(error_);
}

void Work::on_complete(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void Work::finish(std::exception_ptr error) {
  std::vector<std::function<void()>> cbs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    done_flag_.store(true, std::memory_order_release);
    error_ = error;
    cbs.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& cb : cbs) cb();
}

void ProcessGroup::check_rank(int r, const char* op, const char* what) const {
  EMBER_CHECK_VALUE(r >= 0 && r < size_, op, ": invalid ", what, " rank ", r, " (the group has ", size_, " ranks)");
}

}  // namespace ember::distributed
