#include "ember/distributed/process_group_gloo.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <complex>
#include <cstring>
#include <deque>
#include <thread>
#include <type_traits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/half.h"
#include "ember/ops/ops.h"

namespace ember::distributed {
namespace {

// Note [Gloo rendezvous]: Gloo's full-mesh setup publishes each rank's pair addresses under
// keys of a gloo::rendezvous::Store and waits for the others'. This adapter lets it run on any
// ember Store (TCPStore, FileStore, HashStore, PrefixStore), so one store serves both the user
// and Gloo, and Gloo's waits inherit the store's timeout errors.
class GlooStoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit GlooStoreAdapter(std::shared_ptr<distributed::Store> s) : s_(std::move(s)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    s_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    Bytes b = s_->get(key);
    return std::vector<char>(b.begin(), b.end());
  }
  void wait(const std::vector<std::string>& keys) override { s_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    s_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> s_;
};

// ---- reduction functions (Gloo calls fn(out, a, b, n); out may alias a) ----

template <typename T>
using Wide = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Integer arithmetic wraps (as torch's): done in unsigned 64-bit, so there is no signed overflow.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
}
template <typename T>
T min_of(T a, T b) {
  Wide<T> x = a, y = b;
  if constexpr (!std::is_integral_v<T>)
    if (x != x) return a;  // NaN propagates
  return y < x ? b : a;
}
template <typename T>
T max_of(T a, T b) {
  Wide<T> x = a, y = b;
  if constexpr (!std::is_integral_v<T>)
    if (x != x) return a;
  return y > x ? b : a;
}

template <typename T, ReduceOp Op>
void reduce_elems(void* out, const void* a, const void* b, size_t n) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    T u = x[i], v = y[i];
    if constexpr (std::is_same_v<T, bool>) {
      if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Avg || Op == ReduceOp::Max || Op == ReduceOp::BOr)
        o[i] = u || v;
      else if constexpr (Op == ReduceOp::BXor)
        o[i] = u != v;
      else
        o[i] = u && v;  // Product, Min, BAnd
    } else if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Avg) {
      o[i] = wrap_add(u, v);
    } else if constexpr (Op == ReduceOp::Product) {
      o[i] = wrap_mul(u, v);
    } else if constexpr (Op == ReduceOp::Min) {
      o[i] = min_of(u, v);
    } else if constexpr (Op == ReduceOp::Max) {
      o[i] = max_of(u, v);
    } else if constexpr (std::is_integral_v<T>) {
      if constexpr (Op == ReduceOp::BAnd) o[i] = static_cast<T>(u & v);
      if constexpr (Op == ReduceOp::BOr) o[i] = static_cast<T>(u | v);
      if constexpr (Op == ReduceOp::BXor) o[i] = static_cast<T>(u ^ v);
    }
  }
}

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <typename T>
ReduceFn reduce_fn_for(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return &reduce_elems<T, ReduceOp::Sum>;
    case ReduceOp::Product:
      return &reduce_elems<T, ReduceOp::Product>;
    case ReduceOp::Min:
      return &reduce_elems<T, ReduceOp::Min>;
    case ReduceOp::Max:
      return &reduce_elems<T, ReduceOp::Max>;
    case ReduceOp::BAnd:
      return &reduce_elems<T, ReduceOp::BAnd>;
    case ReduceOp::BOr:
      return &reduce_elems<T, ReduceOp::BOr>;
    case ReduceOp::BXor:
      return &reduce_elems<T, ReduceOp::BXor>;
  }
  return nullptr;
}

// The function and element size for dtype; complex numbers are reduced as pairs of reals (only
// SUM and AVG are allowed on them, see check_reduce_dtype).
std::pair<ReduceFn, size_t> reduce_fn(ReduceOp op, ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Bool:
      return {reduce_fn_for<bool>(op), 1};
    case ScalarType::UInt8:
      return {reduce_fn_for<uint8_t>(op), 1};
    case ScalarType::Int8:
      return {reduce_fn_for<int8_t>(op), 1};
    case ScalarType::Int16:
      return {reduce_fn_for<int16_t>(op), 2};
    case ScalarType::Int32:
      return {reduce_fn_for<int32_t>(op), 4};
    case ScalarType::Int64:
      return {reduce_fn_for<int64_t>(op), 8};
    case ScalarType::Float16:
      return {reduce_fn_for<Half>(op), 2};
    case ScalarType::BFloat16:
      return {reduce_fn_for<BFloat16>(op), 2};
    case ScalarType::Float32:
    case ScalarType::Complex64:
      return {reduce_fn_for<float>(op), 4};
    case ScalarType::Float64:
    case ScalarType::Complex128:
      return {reduce_fn_for<double>(op), 8};
    default:
      EMBER_NOT_IMPLEMENTED("gloo: reductions on ", dtype_name(dtype), " tensors are not supported");
  }
}

// Gloo's typed option setters only record sizeof(T); every buffer is described by its bytes or
// elements of this size.
template <size_t N>
struct Elem {
  char b[N];
};

template <typename F>
void with_elem_size(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(Elem<1>{});
    case 2:
      return f(Elem<2>{});
    case 4:
      return f(Elem<4>{});
    case 8:
      return f(Elem<8>{});
    default:
      throw Error("gloo: unexpected element size " + std::to_string(size));
  }
}

// A contiguous buffer for a tensor argument: the tensor itself, or a contiguous copy whose result
// is copied back after the collective.
struct Staged {
  Tensor user, buf;
};
Tensor stage(const Tensor& t, std::vector<Staged>& back, bool write_back) {
  if (t.is_contiguous()) return t;
  Tensor c = contiguous(t);
  if (write_back) back.push_back({t, c});
  return c;
}

void check_cpu(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), op, ": got an undefined tensor");
  EMBER_CHECK(t.device().is_cpu(), op, ": ProcessGroupGloo handles CPU tensors only, got a tensor on ",
              t.device().str());
}

void check_same(const Tensor& t, const Tensor& ref, const char* op, size_t index) {
  check_cpu(t, op);
  EMBER_CHECK_VALUE(t.dtype() == ref.dtype(), op, ": tensors of different dtypes: ", dtype_name(t.dtype()),
                    " at index ", index, " and ", dtype_name(ref.dtype()));
  EMBER_CHECK(t.numel() == ref.numel(), op, ": invalid tensor size at index ", index, " (expected ", ref.shape_str(),
              ", got ", t.shape_str(), ")");
}

char* bytes_of(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }
size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// Gloo refuses null buffers; empty tensors may have no storage.
char* nonnull(char* p) {
  static char dummy[8];
  return p ? p : dummy;
}

}  // namespace

void check_reduce_dtype(ReduceOp op, ScalarType dtype, const char* collective) {
  bool bitwise = op == ReduceOp::BAnd || op == ReduceOp::BOr || op == ReduceOp::BXor;
  if (is_complex(dtype))
    EMBER_CHECK_VALUE(op == ReduceOp::Sum || op == ReduceOp::Avg, collective, " does not support RedOpType.",
                      reduce_op_name(op), " on complex tensors");
  EMBER_CHECK(!bitwise || is_integral(dtype, /*include_bool=*/true), "Cannot use ReduceOp.", reduce_op_name(op),
              " with non-integral dtype");
  // torch averages after a SUM with an in-place division, which integer tensors cannot hold.
  EMBER_CHECK(op != ReduceOp::Avg || !is_integral(dtype, true), "result type Float can't be cast to the desired ",
              "output type ", dtype_name(dtype), " (ReduceOp.AVG on an integer tensor)");
  (void)reduce_fn(op, dtype);  // unsupported dtypes raise here, on the caller's thread
}

// ---- the back end ----

struct ProcessGroupGloo::Impl {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::Context> context;
  int rank, size;
  Millis timeout;

  struct Task {
    WorkPtr work;
    std::function<void(uint32_t tag)> run;
    std::vector<Staged> back;
  };
  struct Queue {
    std::deque<Task> tasks;
    std::condition_variable cv;  // one per queue: a post wakes only the thread that serves it
  };
  std::mutex mu;
  Queue collectives, p2p;
  bool stopping = false;
  std::thread worker, p2p_waiter;
  uint32_t next_tag = 0;  // worker thread only: the same sequence on every rank

  void loop(Queue& queue, bool tagged) {
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mu);
        queue.cv.wait(lock, [&] { return stopping || !queue.tasks.empty(); });
        if (queue.tasks.empty()) return;
        task = std::move(queue.tasks.front());
        queue.tasks.pop_front();
      }
      std::exception_ptr err;
      try {
        task.run(tagged ? next_tag++ : 0);
        if (!task.back.empty()) {
          autograd::NoGradGuard no_grad;
          for (auto& s : task.back) copy_(s.user, s.buf);
        }
      } catch (const Error&) {
        err = std::current_exception();
      } catch (const std::exception& e) {
        // Gloo's own errors (peer gone, timeout) become DistBackendError.
        err = std::make_exception_ptr(
            DistBackendError("[rank " + std::to_string(rank) + "] gloo " + task.work->op() + " failed: " + e.what()));
      }
      task.work->finish(err);
    }
  }

  WorkPtr post(Queue& queue, WorkPtr work, std::function<void(uint32_t)> run, std::vector<Staged> back = {}) {
    {
      std::lock_guard<std::mutex> lock(mu);
      EMBER_CHECK(!stopping, work->op(), ": the process group has been destroyed");
      queue.tasks.push_back({work, std::move(run), std::move(back)});
    }
    queue.cv.notify_one();
    return work;
  }
  WorkPtr enqueue(const char* op, std::vector<Tensor> result, std::function<void(uint32_t)> run,
                  std::vector<Staged> back = {}) {
    auto work = std::make_shared<Work>(op);
    work->set_result(std::move(result));
    return post(collectives, std::move(work), std::move(run), std::move(back));
  }

  // Allreduce of a contiguous buffer in place (AVG divides after the sum).
  void allreduce_buffer(const Tensor& buf, ReduceOp op, uint32_t tag) {
    if (buf.numel() == 0) return;
    auto [fn, esize] = reduce_fn(op, buf.dtype());
    size_t n = nbytes(buf) / esize;
    gloo::AllreduceOptions o(context);
    with_elem_size(esize, [&](auto e) {
      using E = decltype(e);
      o.setOutput(reinterpret_cast<E*>(bytes_of(buf)), n);
    });
    o.setReduceFunction(fn);
    o.setTag(tag);
    o.setTimeout(timeout);
    gloo::allreduce(o);
    if (op == ReduceOp::Avg) divide(buf);
  }

  void divide(const Tensor& buf) {
    autograd::NoGradGuard no_grad;
    Tensor n = scalar_tensor(Scalar(static_cast<int64_t>(size)), std::nullopt, /*wrapped=*/true);
    binary_op(BinaryOp::Div, buf, n, buf, /*inplace=*/true);
  }
};

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, GlooOptions opts)
    : ProcessGroup(rank, size), opts_(std::move(opts)), impl_(std::make_unique<Impl>()) {
  EMBER_CHECK_VALUE(store != nullptr, "ProcessGroupGloo: store is None");
  EMBER_CHECK_VALUE(size >= 1, "ProcessGroupGloo: world_size must be positive, got ", size);
  EMBER_CHECK_VALUE(rank >= 0 && rank < size, "ProcessGroupGloo: rank ", rank, " is not in [0, ", size, ")");
  EMBER_CHECK_VALUE(opts_.timeout.count() > 0, "ProcessGroupGloo: the timeout must be positive");
  Impl& m = *impl_;
  m.rank = rank;
  m.size = size;
  m.timeout = opts_.timeout;
  gloo::transport::tcp::attr attr;
  if (!opts_.iface.empty())
    attr.iface = opts_.iface;
  else
    attr.hostname = opts_.hostname;
  try {
    m.device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    throw DistBackendError(std::string("ProcessGroupGloo: cannot create a TCP device on ") +
                           (opts_.iface.empty() ? "address " + opts_.hostname : "interface " + opts_.iface) + ": " +
                           e.what());
  }
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
  ctx->setTimeout(opts_.timeout);
  GlooStoreAdapter adapter(std::move(store));
  try {
    ctx->connectFullMesh(adapter, m.device);
  } catch (const Error&) {
    throw;  // the store's own errors (a rank that never joined: DistStoreError)
  } catch (const std::exception& e) {
    throw DistBackendError("[rank " + std::to_string(rank) +
                           "] ProcessGroupGloo: connecting to the other ranks failed: " + e.what());
  }
  m.context = ctx;
  m.worker = std::thread([&m] { m.loop(m.collectives, true); });
  m.p2p_waiter = std::thread([&m] { m.loop(m.p2p, false); });
}

ProcessGroupGloo::~ProcessGroupGloo() { shutdown(); }

void ProcessGroupGloo::shutdown() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.stopping = true;
  }
  m.collectives.cv.notify_all();
  m.p2p.cv.notify_all();
  if (m.worker.joinable()) m.worker.join();
  if (m.p2p_waiter.joinable()) m.p2p_waiter.join();
}

WorkPtr ProcessGroupGloo::allreduce(Tensor t, ReduceOp op) {
  check_cpu(t, "all_reduce");
  check_reduce_dtype(op, t.dtype(), "all_reduce");
  std::vector<Staged> back;
  Tensor buf = stage(t, back, true);
  Impl* m = impl_.get();
  return m->enqueue(
      "all_reduce", {t}, [m, buf, op](uint32_t tag) { m->allreduce_buffer(buf, op, tag); }, std::move(back));
}

WorkPtr ProcessGroupGloo::broadcast(Tensor t, int root) {
  check_cpu(t, "broadcast");
  check_rank(root, "broadcast", "root");
  std::vector<Staged> back;
  Tensor buf = stage(t, back, rank_ != root);
  Impl* m = impl_.get();
  return m->enqueue(
      "broadcast", {t},
      [m, buf, root](uint32_t tag) {
        if (buf.numel() == 0) return;
        gloo::BroadcastOptions o(m->context);
        o.setOutput(nonnull(bytes_of(buf)), nbytes(buf));
        o.setRoot(root);
        o.setTag(tag);
        o.setTimeout(m->timeout);
        gloo::broadcast(o);
      },
      std::move(back));
}

WorkPtr ProcessGroupGloo::reduce(Tensor t, int root, ReduceOp op) {
  check_cpu(t, "reduce");
  check_rank(root, "reduce", "root");
  check_reduce_dtype(op, t.dtype(), "reduce");
  std::vector<Staged> back;
  bool is_root = rank_ == root;
  Tensor buf = stage(t, back, is_root);
  // Gloo uses the output as scratch on every rank: other ranks keep their input unchanged.
  Tensor out = is_root ? buf : empty(buf.sizes(), buf.dtype());
  Impl* m = impl_.get();
  return m->enqueue(
      "reduce", {t},
      [m, buf, out, root, op, is_root](uint32_t tag) {
        if (buf.numel() == 0) return;
        auto [fn, esize] = reduce_fn(op, buf.dtype());
        size_t n = nbytes(buf) / esize;
        gloo::ReduceOptions o(m->context);
        with_elem_size(esize, [&](auto e) {
          using E = decltype(e);
          if (!is_root) o.setInput(reinterpret_cast<E*>(bytes_of(buf)), n);
          o.setOutput(reinterpret_cast<E*>(bytes_of(out)), n);
        });
        o.setRoot(root);
        o.setReduceFunction(fn);
        o.setTag(tag);
        o.setTimeout(m->timeout);
        gloo::reduce(o);
        if (is_root && op == ReduceOp::Avg) m->divide(buf);
      },
      std::move(back));
}

WorkPtr ProcessGroupGloo::allgather_into_tensor(Tensor output, Tensor input) {
  check_cpu(input, "all_gather_into_tensor");
  check_cpu(output, "all_gather_into_tensor");
  EMBER_CHECK_VALUE(output.dtype() == input.dtype(), "all_gather_into_tensor: output dtype ",
                    dtype_name(output.dtype()), " differs from the input's ", dtype_name(input.dtype()));
  EMBER_CHECK_VALUE(output.numel() == input.numel() * size_, "all_gather_into_tensor: the output has ", output.numel(),
                    " elements, expected world_size (", size_, ") times the input's ", input.numel());
  std::vector<Staged> back;
  Tensor in = stage(input, back, false);
  Tensor out = stage(output, back, true);
  Impl* m = impl_.get();
  return m->enqueue(
      "all_gather_into_tensor", {output},
      [m, in, out](uint32_t tag) {
        if (in.numel() == 0) return;
        gloo::AllgatherOptions o(m->context);
        o.setInput(bytes_of(in), nbytes(in));
        o.setOutput(bytes_of(out), nbytes(out));
        o.setTag(tag);
        o.setTimeout(m->timeout);
        gloo::allgather(o);
      },
      std::move(back));
}

WorkPtr ProcessGroupGloo::allgather(std::vector<Tensor> outputs, Tensor input) {
  check_cpu(input, "all_gather");
  EMBER_CHECK_VALUE(static_cast<int>(outputs.size()) == size_, "all_gather: the output list has ", outputs.size(),
                    " tensors, expected world_size (", size_, ")");
  for (size_t i = 0; i < outputs.size(); ++i) check_same(outputs[i], input, "all_gather", i);
  std::vector<Staged> back;
  Tensor in = stage(input, back, false);
  Tensor flat = empty({input.numel() * size_}, input.dtype());
  Impl* m = impl_.get();
  return m->enqueue("all_gather", outputs, [m, in, flat, outputs](uint32_t tag) {
    if (in.numel() == 0) return;
    gloo::AllgatherOptions o(m->context);
    o.setInput(bytes_of(in), nbytes(in));
    o.setOutput(bytes_of(flat), nbytes(flat));
    o.setTag(tag);
    o.setTimeout(m->timeout);
    gloo::allgather(o);
    autograd::NoGradGuard no_grad;
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor dst = outputs[i];
      Tensor part = view(narrow(flat, 0, static_cast<int64_t>(i) * in.numel(), in.numel()), dst.sizes());
      copy_(dst, part);
    }
  });
}

WorkPtr ProcessGroupGloo::gather(std::vector<Tensor> outputs, Tensor input, int root) {
  check_cpu(input, "gather");
  check_rank(root, "gather", "root");
  bool is_root = rank_ == root;
  if (is_root) {
    EMBER_CHECK_VALUE(static_cast<int>(outputs.size()) == size_, "gather: the gather list on the destination rank has ",
                      outputs.size(), " tensors, expected world_size (", size_, ")");
    for (size_t i = 0; i < outputs.size(); ++i) check_same(outputs[i], input, "gather", i);
  } else {
    EMBER_CHECK_VALUE(outputs.empty(), "gather: the gather list must be empty (None) on non-destination ranks");
  }
  std::vector<Staged> back;
  Tensor in = stage(input, back, false);
  Tensor flat = is_root ? empty({input.numel() * size_}, input.dtype()) : Tensor();
  Impl* m = impl_.get();
  return m->enqueue("gather", outputs, [m, in, flat, outputs, root, is_root](uint32_t tag) {
    if (in.numel() == 0) return;
    gloo::GatherOptions o(m->context);
    o.setInput(bytes_of(in), nbytes(in));
    if (is_root) o.setOutput(bytes_of(flat), nbytes(flat));
    o.setRoot(root);
    o.setTag(tag);
    o.setTimeout(m->timeout);
    gloo::gather(o);
    if (!is_root) return;
    autograd::NoGradGuard no_grad;
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor dst = outputs[i];
      copy_(dst, view(narrow(flat, 0, static_cast<int64_t>(i) * in.numel(), in.numel()), dst.sizes()));
    }
  });
}

WorkPtr ProcessGroupGloo::scatter(Tensor output, std::vector<Tensor> inputs, int root) {
  check_cpu(output, "scatter");
  check_rank(root, "scatter", "root");
  bool is_root = rank_ == root;
  if (is_root) {
    EMBER_CHECK_VALUE(static_cast<int>(inputs.size()) == size_, "scatter: the scatter list on the source rank has ",
                      inputs.size(), " tensors, expected world_size (", size_, ")");
    for (size_t i = 0; i < inputs.size(); ++i) check_same(inputs[i], output, "scatter", i);
  } else {
    EMBER_CHECK_VALUE(inputs.empty(), "scatter: the scatter list must be empty (None) on non-source ranks");
  }
  std::vector<Staged> back;
  std::vector<Tensor> ins;
  for (auto& t : inputs) ins.push_back(stage(t, back, false));
  Tensor out = stage(output, back, true);
  Impl* m = impl_.get();
  return m->enqueue(
      "scatter", {output},
      [m, ins, out, root, is_root](uint32_t tag) {
        if (out.numel() == 0) return;
        gloo::ScatterOptions o(m->context);
        if (is_root) {
          std::vector<char*> ptrs;
          for (auto& t : ins) ptrs.push_back(bytes_of(t));
          o.setInputs(ptrs, nbytes(out));
        }
        o.setOutput(bytes_of(out), nbytes(out));
        o.setRoot(root);
        o.setTag(tag);
        o.setTimeout(m->timeout);
        gloo::scatter(o);
      },
      std::move(back));
}

WorkPtr ProcessGroupGloo::reduce_scatter(Tensor output, std::vector<Tensor> inputs, ReduceOp op) {
  check_cpu(output, "reduce_scatter");
  check_reduce_dtype(op, output.dtype(), "reduce_scatter");
  EMBER_CHECK_VALUE(static_cast<int>(inputs.size()) == size_, "reduce_scatter: the input list has ", inputs.size(),
                    " tensors, expected world_size (", size_, ")");
  for (size_t i = 0; i < inputs.size(); ++i) check_same(inputs[i], output, "reduce_scatter", i);
  // One allreduce over the inputs packed back to back; this rank keeps its part.
  Tensor flat;
  {
    autograd::NoGradGuard no_grad;
    std::vector<Tensor> parts;
    for (auto& t : inputs) parts.push_back(reshape(t, {-1}));
    flat = parts.empty() ? Tensor() : cat(parts, 0);
  }
  int r = rank_;
  Impl* m = impl_.get();
  return m->enqueue("reduce_scatter", {output}, [m, flat, output, op, r](uint32_t tag) {
    m->allreduce_buffer(flat, op, tag);
    autograd::NoGradGuard no_grad;
    Tensor dst = output;
    copy_(dst, view(narrow(flat, 0, r * output.numel(), output.numel()), output.sizes()));
  });
}

WorkPtr ProcessGroupGloo::alltoall_base(Tensor output, Tensor input, std::vector<int64_t> output_splits,
                                        std::vector<int64_t> input_splits) {
  const char* op = "all_to_all_single";
  check_cpu(input, op);
  check_cpu(output, op);
  EMBER_CHECK_VALUE(output.dtype() == input.dtype(), op, ": output dtype ", dtype_name(output.dtype()),
                    " differs from the input's ", dtype_name(input.dtype()));
  // Per-rank byte counts from the splits of dim 0 (equal parts when no splits are given).
  auto counts = [&](const Tensor& t, const std::vector<int64_t>& splits, const char* what) {
    int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    size_t row_bytes = rows == 0 ? 0 : nbytes(t) / static_cast<size_t>(rows);
    std::vector<int64_t> c(static_cast<size_t>(size_));
    if (splits.empty()) {
      EMBER_CHECK_VALUE(rows % size_ == 0, op, ": the ", what, "'s dim 0 (", rows, ") is not divisible by world_size (",
                        size_, ")");
      for (auto& x : c) x = static_cast<int64_t>(row_bytes) * (rows / size_);
    } else {
      EMBER_CHECK_VALUE(static_cast<int>(splits.size()) == size_, op, ": ", what, "_split_sizes has ", splits.size(),
                        " entries, expected world_size (", size_, ")");
      int64_t total = 0;
      for (size_t i = 0; i < splits.size(); ++i) {
        EMBER_CHECK_VALUE(splits[i] >= 0, op, ": negative split size ", splits[i]);
        total += splits[i];
        c[i] = splits[i] * static_cast<int64_t>(row_bytes);
      }
      EMBER_CHECK_VALUE(total == rows, op, ": ", what, "_split_sizes sum to ", total, " but dim 0 has ", rows, " rows");
    }
    return c;
  };
  std::vector<int64_t> in_counts = counts(input, input_splits, "input");
  std::vector<int64_t> out_counts = counts(output, output_splits, "output");
  std::vector<Staged> back;
  Tensor in = stage(input, back, false);
  Tensor out = stage(output, back, true);
  Impl* m = impl_.get();
  return m->enqueue(
      op, {output},
      [m, in, out, in_counts, out_counts](uint32_t tag) {
        gloo::AlltoallvOptions o(m->context);
        o.setInput(nonnull(bytes_of(in)), in_counts);
        o.setOutput(nonnull(bytes_of(out)), out_counts);
        o.setTag(tag);
        o.setTimeout(m->timeout);
        gloo::alltoallv(o);
      },
      std::move(back));
}

WorkPtr ProcessGroupGloo::alltoall(std::vector<Tensor> outputs, std::vector<Tensor> inputs) {
  const char* op = "all_to_all";
  EMBER_CHECK_VALUE(static_cast<int>(inputs.size()) == size_ && static_cast<int>(outputs.size()) == size_, op,
                    ": the input and output lists need world_size (", size_, ") tensors each, got ", inputs.size(),
                    " and ", outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_cpu(inputs[i], op);
    check_cpu(outputs[i], op);
    EMBER_CHECK_VALUE(inputs[i].dtype() == inputs[0].dtype() && outputs[i].dtype() == inputs[0].dtype(), op,
                      ": all tensors must have the same dtype");
  }
  std::vector<int64_t> in_counts, out_counts;
  Tensor in, out;
  {
    autograd::NoGradGuard no_grad;
    std::vector<Tensor> parts;
    for (auto& t : inputs) {
      parts.push_back(reshape(t, {-1}));
      in_counts.push_back(static_cast<int64_t>(nbytes(t)));
    }
    in = cat(parts, 0);
    int64_t total = 0;
    for (auto& t : outputs) {
      out_counts.push_back(static_cast<int64_t>(nbytes(t)));
      total += t.numel();
    }
    out = empty({total}, inputs[0].dtype());
  }
  Impl* m = impl_.get();
  return m->enqueue(op, outputs, [m, in, out, in_counts, out_counts, outputs](uint32_t tag) {
    gloo::AlltoallvOptions o(m->context);
    o.setInput(nonnull(bytes_of(in)), in_counts);
    o.setOutput(nonnull(bytes_of(out)), out_counts);
    o.setTag(tag);
    o.setTimeout(m->timeout);
    gloo::alltoallv(o);
    autograd::NoGradGuard no_grad;
    int64_t pos = 0;
    for (auto dst : outputs) {
      copy_(dst, view(narrow(out, 0, pos, dst.numel()), dst.sizes()));
      pos += dst.numel();
    }
  });
}

WorkPtr ProcessGroupGloo::barrier() {
  Impl* m = impl_.get();
  return m->enqueue("barrier", {}, [m](uint32_t tag) {
    gloo::BarrierOptions o(m->context);
    o.setTag(tag);
    o.setTimeout(m->timeout);
    gloo::barrier(o);
  });
}

// Point-to-point: posted on the caller's thread right away (so isend/irecv pairs in any order
// cannot deadlock), completed on the p2p thread. Slots below 2^56 never meet a collective's.
WorkPtr ProcessGroupGloo::send(Tensor t, int dst, int tag) {
  check_cpu(t, "send");
  check_rank(dst, "send", "destination");
  EMBER_CHECK_VALUE(dst != rank_, "Invalid destination rank: destination rank should not be the same as the rank of ",
                    "the current process.");
  EMBER_CHECK_VALUE(tag >= 0, "send: the tag must be non-negative, got ", tag);
  Impl* m = impl_.get();
  Tensor buf = t.is_contiguous() ? t : contiguous(t);
  std::shared_ptr<gloo::transport::UnboundBuffer> ub =
      m->context->createUnboundBuffer(nonnull(bytes_of(buf)), nbytes(buf));
  ub->send(dst, static_cast<uint64_t>(tag));
  auto work = std::make_shared<Work>("send");
  work->set_result({t});
  return m->post(m->p2p, work, [m, ub, buf](uint32_t) { ub->waitSend(m->timeout); });
}

WorkPtr ProcessGroupGloo::recv(Tensor t, int src, int tag) {
  check_cpu(t, "recv");
  if (src >= 0) {
    check_rank(src, "recv", "source");
    EMBER_CHECK_VALUE(src != rank_, "Invalid source rank: source rank should not be the same as the rank of the ",
                      "current process.");
  }
  EMBER_CHECK_VALUE(tag >= 0, "recv: the tag must be non-negative, got ", tag);
  Impl* m = impl_.get();
  std::vector<Staged> back;
  Tensor buf = stage(t, back, true);
  std::shared_ptr<gloo::transport::UnboundBuffer> ub =
      m->context->createUnboundBuffer(nonnull(bytes_of(buf)), nbytes(buf));
  if (src >= 0) {
    ub->recv(src, static_cast<uint64_t>(tag));
  } else {
    std::vector<int> others;
    for (int r = 0; r < size_; ++r)
      if (r != rank_) others.push_back(r);
    ub->recv(others, static_cast<uint64_t>(tag));
  }
  auto work = std::make_shared<Work>("recv");
  work->set_result({t});
  Work* w = work.get();  // the queued task holds the work while it runs
  return m->post(
      m->p2p, work,
      [m, ub, buf, w](uint32_t) {
        int from = -1;
        ub->waitRecv(&from, m->timeout);
        w->set_source_rank(from);
      },
      std::move(back));
}

}  // namespace ember::distributed
