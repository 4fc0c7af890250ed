// torch.distributed.TCPStore: the master process runs the server on a thread of its own (Note
// [TCPStore protocol] in tcp_store.cpp); every TCPStore, the master's included, is a client
// with one connection to it.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "ember/distributed/socket.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

struct TCPStoreOptions {
  int port = 0;  // 0 on the master: any free port (see TCPStore::port())
  bool is_master = false;
  int world_size = -1;  // > 0 with wait_for_workers: the master waits for that many stores
  bool wait_for_workers = true;
  Millis timeout = kDefaultStoreTimeout;
};

class TCPStore : public Store {
 public:
  TCPStore(std::string host, const TCPStoreOptions& opts);
  ~TCPStore() override;
  using Store::wait;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  void append(const std::string& key, const Bytes& value) override;

  const std::string& host() const { return host_; }
  int port() const { return port_; }

  class Server;

 private:
  // Sends one request and returns the reply's payload; a reply that does not come within
  // `timeout` drops the connection (reopened by the next request) and throws.
  std::string request(const std::string& payload, Millis timeout, const std::vector<std::string>& keys);
  std::string host_;
  int port_;
  std::unique_ptr<Server> server_;
  std::mutex mu_;  // one request at a time on sock_
  net::Socket sock_;
};

}  // namespace ember::distributed
