#include "ember/distributed/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

namespace ember::distributed::net {
namespace {

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

std::string errno_text(int err) { return std::strerror(err); }

struct AddrInfo {
  addrinfo* head = nullptr;
  ~AddrInfo() {
    if (head) freeaddrinfo(head);
  }
};

// Waits until fd is ready for `events`; false on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) throw DistNetworkError("poll failed: " + errno_text(errno));
  }
}

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void set_nonblocking(int fd, bool on) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

int local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return -1;
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

Socket listen_any(int port) {
  EMBER_CHECK_VALUE(port >= 0 && port <= 65535, "TCPStore: port ", port, " is out of range [0, 65535]");
  int last_err = 0;
  for (int family : {AF_INET6, AF_INET}) {
    Socket s(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) {
      last_err = errno;
      continue;
    }
    int one = 1, zero = 0;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (family == AF_INET6) {
      setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));  // IPv4 clients too
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
    if (rc != 0 || ::listen(s.fd(), 1024) != 0) {
      last_err = errno;
      if (last_err == EADDRINUSE) break;  // the IPv4 attempt would fail the same way
      continue;
    }
    return s;
  }
  throw DistNetworkError("TCPStore: the server socket could not listen on port " + std::to_string(port) + ": " +
                         errno_text(last_err) + (last_err == EADDRINUSE ? " (address already in use)" : ""));
}

Socket connect_to(const std::string& host, int port, Millis timeout) {
  EMBER_CHECK_VALUE(port > 0 && port <= 65535, "TCPStore: port ", port, " is out of range [1, 65535]");
  auto deadline = Clock::now() + timeout;
  std::string last = "no attempt";
  Millis nap{5};
  for (;;) {
    AddrInfo ai;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    std::string service = std::to_string(port);
    int gai = getaddrinfo(host.c_str(), service.c_str(), &hints, &ai.head);
    if (gai != 0) {
      last = std::string("cannot resolve host: ") + gai_strerror(gai);
    } else {
      for (addrinfo* a = ai.head; a; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (!s.valid()) continue;
        set_nonblocking(s.fd(), true);
        int rc = ::connect(s.fd(), a->ai_addr, a->ai_addrlen);
        int err = rc == 0 ? 0 : errno;
        if (err == EINPROGRESS) {
          if (!wait_fd(s.fd(), POLLOUT, deadline)) {
            err = ETIMEDOUT;
          } else {
            socklen_t len = sizeof(err);
            getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
          }
        }
        if (err == 0) {
          set_nonblocking(s.fd(), false);
          int one = 1;
          setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          return s;
        }
        last = errno_text(err);
      }
    }
    if (Clock::now() + nap >= deadline)
      throw DistNetworkError("TCPStore: could not connect to " + host + ":" + std::to_string(port) + " within " +
                             std::to_string(timeout.count()) + "ms (" + last + ")");
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, Millis(200));
  }
}

void send_all(int fd, const void* data, size_t n, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    if (!wait_fd(fd, POLLOUT, deadline)) throw Timeout("send timed out");
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      throw DistNetworkError("connection lost while sending: " + errno_text(errno));
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void recv_all(int fd, void* data, size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (!wait_fd(fd, POLLIN, deadline)) throw Timeout("receive timed out");
    ssize_t r = ::recv(fd, p, n, MSG_DONTWAIT);
    if (r == 0) throw DistNetworkError("connection closed by the other side");
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      throw DistNetworkError("connection lost while receiving: " + errno_text(errno));
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
}

std::string local_address_towards(const std::string& host) {
  AddrInfo ai;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo(host.c_str(), "9", &hints, &ai.head) != 0) return "";
  for (addrinfo* a = ai.head; a; a = a->ai_next) {
    // connect() on a UDP socket sends nothing; it only picks the route and source address.
    Socket s(::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!s.valid() || ::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) continue;
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    const void* src = ss.ss_family == AF_INET6
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr);
    if (inet_ntop(ss.ss_family, src, buf, sizeof(buf))) return buf;
  }
  return "";
}

}  // namespace ember::distributed::net
