// Small TCP helpers for the TCPStore: blocking I/O bounded by a deadline, connect with retries
// (the server may not be listening yet), a dual-stack listener. Errors are DistNetworkError.
#pragma once
#include <chrono>
#include <string>

#include "ember/distributed/store.h"

namespace ember::distributed::net {

using Clock = std::chrono::steady_clock;

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  ~Socket() { close(); }
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void close();

 private:
  int fd_ = -1;
};

// Listens on every local address (IPv6 dual-stack, else IPv4); port 0 picks a free port.
Socket listen_any(int port);
int local_port(int fd);
// Connects to host:port, retrying refused connections until `timeout` has passed.
Socket connect_to(const std::string& host, int port, Millis timeout);
// Thrown by send_all/recv_all when the deadline passes (the stream is then out of step).
struct Timeout : DistError {
  using DistError::DistError;
};
void send_all(int fd, const void* data, size_t n, Clock::time_point deadline);
void recv_all(int fd, void* data, size_t n, Clock::time_point deadline);
void set_nonblocking(int fd, bool on);
// The local IP address (text) the kernel would use to reach host, or "" if it cannot tell.
std::string local_address_towards(const std::string& host);

}  // namespace ember::distributed::net
