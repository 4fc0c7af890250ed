// ProcessGroupGloo: collectives on CPU tensors with Gloo's algorithms over its TCP transport.
// The group's ranks meet through a Store (Gloo's rendezvous runs on it, Note [Gloo rendezvous]
// in process_group_gloo.cpp). Collectives run in order on one worker thread of their own, so
// Python's thread returns at once (async_op) or waits without the GIL; point-to-point ops are
// posted by the caller at once and completed on a second thread. Every operation is bounded by
// the group's timeout, and a peer that dies makes the pending operations fail with
// DistBackendError.
#pragma once
#include <memory>
#include <string>

#include "ember/distributed/process_group.h"

namespace ember::distributed {

struct GlooOptions {
  Millis timeout = kDefaultStoreTimeout;
  // The local address to listen on and be reached at (an IP or host name), or the network
  // interface (GLOO_SOCKET_IFNAME); the iface wins when both are set.
  std::string hostname = "127.0.0.1";
  std::string iface;
};

class ProcessGroupGloo : public ProcessGroup {
 public:
  // Connects to every other rank (a full mesh of TCP pairs); blocks until all ranks have joined
  // or opts.timeout passed.
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, GlooOptions opts = {});
  ~ProcessGroupGloo() override;
  std::string backend_name() const override { return "gloo"; }
  Millis timeout() const { return opts_.timeout; }

  WorkPtr allreduce(Tensor t, ReduceOp op) override;
  WorkPtr broadcast(Tensor t, int root) override;
  WorkPtr reduce(Tensor t, int root, ReduceOp op) override;
  WorkPtr allgather(std::vector<Tensor> outputs, Tensor input) override;
  WorkPtr allgather_into_tensor(Tensor output, Tensor input) override;
  WorkPtr gather(std::vector<Tensor> outputs, Tensor input, int root) override;
  WorkPtr scatter(Tensor output, std::vector<Tensor> inputs, int root) override;
  WorkPtr reduce_scatter(Tensor output, std::vector<Tensor> inputs, ReduceOp op) override;
  WorkPtr alltoall_base(Tensor output, Tensor input, std::vector<int64_t> output_splits,
                        std::vector<int64_t> input_splits) override;
  WorkPtr alltoall(std::vector<Tensor> outputs, std::vector<Tensor> inputs) override;
  WorkPtr barrier() override;
  WorkPtr send(Tensor t, int dst, int tag) override;
  WorkPtr recv(Tensor t, int src, int tag) override;
  void shutdown() override;

  struct Impl;

 private:
  GlooOptions opts_;
  std::unique_ptr<Impl> impl_;
};

// Checks that a reduction `op` is defined for dtype (torch's rules: no bitwise ops on floats, only
// SUM and AVG on complex); throws the error torch raises otherwise.
void check_reduce_dtype(ReduceOp op, ScalarType dtype, const char* collective);

}  // namespace ember::distributed
