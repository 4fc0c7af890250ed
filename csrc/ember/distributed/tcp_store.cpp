// Note [TCPStore protocol]: every message is a frame, a u64 length then the payload. A request
// payload is a command byte then its fields (a string is a u64 length and its bytes, an integer 8
// bytes); a reply is a status byte (0 ok, 1 ValueError, 2 other error) then the result. The
// server is one thread polling non-blocking sockets; a GET or WAIT whose keys are missing parks
// that client until a write supplies them, so waiting costs no polling. A client whose wait
// times out closes its connection (which unparks it on the server) and reconnects on its next
// request, so a late reply can never be read as the answer to another request.
#include "ember/distributed/tcp_store.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <thread>

namespace ember::distributed {
namespace {

enum Cmd : uint8_t { kSet = 1, kGet, kAdd, kCompareSet, kDelete, kCheck, kNumKeys, kWait, kAppend };
enum Status : uint8_t { kOk = 0, kValueError = 1, kOtherError = 2 };
const char* const kInitKey = "__ember_tcp_store_init";

void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
void put_str(std::string& s, const std::string& v) {
  put_u64(s, v.size());
  s += v;
}
void put_bytes(std::string& s, const Bytes& v) {
  put_u64(s, v.size());
  s.append(reinterpret_cast<const char*>(v.data()), v.size());
}

// Reads fields of a payload; a malformed one throws (the server then drops that client).
struct Reader {
  const std::string& s;
  size_t pos = 0;
  uint64_t u64() {
    uint64_t v;
    EMBER_CHECK(s.size() - pos >= sizeof(v), "TCPStore: malformed message");
    std::memcpy(&v, s.data() + pos, sizeof(v));
    pos += sizeof(v);
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    EMBER_CHECK(s.size() - pos >= n, "TCPStore: malformed message");
    std::string v = s.substr(pos, n);
    pos += n;
    return v;
  }
  Bytes bytes() { return to_bytes(str()); }
};

std::string frame(const std::string& payload) {
  std::string f;
  put_u64(f, payload.size());
  return f + payload;
}

}  // namespace

// ---- server ----

class TCPStore::Server {
 public:
  explicit Server(int port) : listener_(net::listen_any(port)) {
    port_ = net::local_port(listener_.fd());
    net::set_nonblocking(listener_.fd(), true);
    int p[2];
    EMBER_CHECK(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0, "TCPStore: pipe failed: ", std::strerror(errno));
    wake_read_ = net::Socket(p[0]);
    wake_write_ = net::Socket(p[1]);
    thread_ = std::thread([this] { loop(); });
  }
  ~Server() {
    char c = 0;
    (void)!::write(wake_write_.fd(), &c, 1);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  struct Client {
    net::Socket sock;
    std::string in, out;
    bool parked = false;
    uint8_t parked_cmd = 0;
    std::vector<std::string> parked_keys;
  };

  void loop() {
    std::vector<pollfd> fds;
    for (;;) {
      fds.clear();
      fds.push_back({listener_.fd(), POLLIN, 0});
      fds.push_back({wake_read_.fd(), POLLIN, 0});
      for (auto& [fd, c] : clients_) fds.push_back({fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
      int r = ::poll(fds.data(), fds.size(), -1);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return;
      if (fds[1].revents) return;  // shutdown
      if (fds[0].revents & POLLIN) accept_clients();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto it = clients_.find(fds[i].fd);
        if (it == clients_.end()) continue;
        bool alive = true;
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) alive = read_from(it->second);
        if (alive && (fds[i].revents & POLLOUT)) alive = flush(it->second);
        if (!alive) drop(fds[i].fd);
        serve_unparked();
      }
    }
  }

  void accept_clients() {
    for (;;) {
      int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      clients_[fd].sock = net::Socket(fd);
    }
  }

  void drop(int fd) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    unpark(fd, it->second);
    clients_.erase(it);
  }

  void unpark(int fd, Client& c) {
    if (!c.parked) return;
    for (const auto& k : c.parked_keys) {
      auto w = waiters_.find(k);
      if (w == waiters_.end()) continue;
      w->second.erase(fd);
      if (w->second.empty()) waiters_.erase(w);
    }
    c.parked = false;
    c.parked_keys.clear();
  }

  // False when the client is gone or broke the protocol.
  bool read_from(Client& c) {
    char buf[65536];
    for (;;) {
      ssize_t n = ::recv(c.sock.fd(), buf, sizeof(buf), 0);
      if (n > 0) {
        c.in.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    return process(c);
  }

  bool process(Client& c) {
    try {
      while (!c.parked && c.in.size() >= 8) {
        uint64_t len;
        std::memcpy(&len, c.in.data(), 8);
        if (c.in.size() - 8 < len) break;
        std::string payload = c.in.substr(8, len);
        c.in.erase(0, 8 + len);
        handle(c, payload);
      }
    } catch (const std::exception&) {
      return false;
    }
    return flush(c);
  }

  bool flush(Client& c) {
    while (!c.out.empty()) {
      ssize_t n = ::send(c.sock.fd(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;
    }
    return true;
  }

  void reply(Client& c, Status st, const std::string& body = "") {
    std::string p(1, static_cast<char>(st));
    c.out += frame(p + body);
  }

  void handle(Client& c, const std::string& payload) {
    EMBER_CHECK(!payload.empty(), "TCPStore: empty message");
    Reader rd{payload, 1};
    std::string body;
    switch (static_cast<uint8_t>(payload[0])) {
      case kSet: {
        std::string k = rd.str();
        kv_.set(k, rd.bytes());
        reply(c, kOk);
        written(k);
        return;
      }
      case kGet:
      case kWait: {
        uint8_t cmd = static_cast<uint8_t>(payload[0]);
        uint64_t n = cmd == kGet ? 1 : rd.u64();
        std::vector<std::string> keys;
        for (uint64_t i = 0; i < n; ++i) keys.push_back(rd.str());
        if (kv_.contains_all(keys)) return answer(c, cmd, keys);
        int fd = c.sock.fd();
        c.parked = true;
        c.parked_cmd = cmd;
        c.parked_keys = keys;
        for (const auto& k : keys) waiters_[k].insert(fd);
        return;
      }
      case kAdd: {
        std::string k = rd.str();
        int64_t delta = static_cast<int64_t>(rd.u64());
        int64_t v;
        try {
          v = kv_.add(k, delta);
        } catch (const ValueError& e) {
          return reply(c, kValueError, e.what());
        }
        put_u64(body, static_cast<uint64_t>(v));
        reply(c, kOk, body);
        written(k);
        return;
      }
      case kCompareSet: {
        std::string k = rd.str();
        Bytes expected = rd.bytes(), desired = rd.bytes();
        put_bytes(body, kv_.compare_set(k, expected, desired));
        reply(c, kOk, body);
        written(k);
        return;
      }
      case kDelete:
        body.push_back(kv_.erase(rd.str()) ? 1 : 0);
        return reply(c, kOk, body);
      case kCheck: {
        uint64_t n = rd.u64();
        std::vector<std::string> keys;
        for (uint64_t i = 0; i < n; ++i) keys.push_back(rd.str());
        body.push_back(kv_.contains_all(keys) ? 1 : 0);
        return reply(c, kOk, body);
      }
      case kNumKeys:
        put_u64(body, static_cast<uint64_t>(kv_.size()));
        return reply(c, kOk, body);
      case kAppend: {
        std::string k = rd.str();
        kv_.append(k, rd.bytes());
        reply(c, kOk);
        written(k);
        return;
      }
      default:
        throw Error("TCPStore: unknown command");
    }
  }

  void answer(Client& c, uint8_t cmd, const std::vector<std::string>& keys) {
    std::string body;
    if (cmd == kGet) {
      Bytes v;
      kv_.try_get(keys[0], v);
      put_bytes(body, v);
    }
    reply(c, kOk, body);
  }

  // A key was written: answer the parked clients whose keys are now all there.
  void written(const std::string& key) {
    auto w = waiters_.find(key);
    if (w == waiters_.end()) return;
    std::vector<int> ready;
    for (int fd : w->second) {
      auto it = clients_.find(fd);
      if (it != clients_.end() && kv_.contains_all(it->second.parked_keys)) ready.push_back(fd);
    }
    for (int fd : ready) {
      Client& c = clients_.at(fd);
      std::vector<std::string> keys = c.parked_keys;
      uint8_t cmd = c.parked_cmd;
      unpark(fd, c);
      answer(c, cmd, keys);
      unparked_.push_back(fd);  // its next requests may already be buffered: see loop()
    }
  }

  // Serves the clients answered by written() (which may answer further ones).
  void serve_unparked() {
    while (!unparked_.empty()) {
      int fd = unparked_.back();
      unparked_.pop_back();
      auto it = clients_.find(fd);
      if (it != clients_.end() && !process(it->second)) drop(fd);
    }
  }

  net::Socket listener_, wake_read_, wake_write_;
  int port_ = 0;
  std::thread thread_;
  std::map<int, Client> clients_;
  std::map<std::string, std::set<int>> waiters_;
  std::vector<int> unparked_;
  KeyValueMap kv_;
};

// ---- client ----

TCPStore::TCPStore(std::string host, const TCPStoreOptions& opts)
    : Store(opts.timeout), host_(std::move(host)), port_(opts.port) {
  if (opts.is_master) {
    server_ = std::make_unique<Server>(opts.port);
    port_ = server_->port();
  }
  sock_ = net::connect_to(host_, port_, timeout_);
  int64_t joined = add(kInitKey, 1);
  if (opts.is_master && opts.wait_for_workers && opts.world_size > 0) {
    auto deadline = net::Clock::now() + timeout_;
    while (joined < opts.world_size) {
      if (net::Clock::now() >= deadline)
        throw DistStoreError("TCPStore: timed out after " + std::to_string(timeout_.count()) +
                             "ms waiting for clients: " + std::to_string(joined) + "/" +
                             std::to_string(opts.world_size) + " clients joined");
      std::this_thread::sleep_for(Millis(5));
      joined = add(kInitKey, 0);
    }
  }
}

TCPStore::~TCPStore() {
  sock_.close();
  server_.reset();
}

std::string TCPStore::request(const std::string& payload, Millis timeout, const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sock_.valid()) sock_ = net::connect_to(host_, port_, timeout_);
  auto deadline = net::Clock::now() + timeout;
  std::string body;
  try {
    std::string f = frame(payload);
    net::send_all(sock_.fd(), f.data(), f.size(), deadline);
    uint64_t len;
    net::recv_all(sock_.fd(), &len, sizeof(len), deadline);
    body.resize(len);
    net::recv_all(sock_.fd(), body.data(), len, deadline);
  } catch (const net::Timeout&) {
    sock_.close();
    throw DistStoreError(timeout_message(timeout, keys));
  } catch (const DistNetworkError& e) {
    sock_.close();
    throw DistNetworkError("TCPStore: lost the connection to the server at " + host_ + ":" + std::to_string(port_) +
                           " (" + e.what() + ")");
  }
  EMBER_CHECK(!body.empty(), "TCPStore: empty reply");
  uint8_t st = static_cast<uint8_t>(body[0]);
  if (st == kValueError) throw ValueError(body.substr(1));
  if (st != kOk) throw DistStoreError(body.substr(1));
  return body.substr(1);
}

void TCPStore::set(const std::string& key, const Bytes& value) {
  std::string p(1, static_cast<char>(kSet));
  put_str(p, key);
  put_bytes(p, value);
  request(p, timeout_, {key});
}

Bytes TCPStore::get(const std::string& key) {
  std::string p(1, static_cast<char>(kGet));
  put_str(p, key);
  std::string r = request(p, timeout_, {key});
  Reader rd{r};
  return rd.bytes();
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  std::string p(1, static_cast<char>(kAdd));
  put_str(p, key);
  put_u64(p, static_cast<uint64_t>(delta));
  std::string r = request(p, timeout_, {key});
  Reader rd{r};
  return static_cast<int64_t>(rd.u64());
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::string p(1, static_cast<char>(kCompareSet));
  put_str(p, key);
  put_bytes(p, expected);
  put_bytes(p, desired);
  std::string r = request(p, timeout_, {key});
  Reader rd{r};
  return rd.bytes();
}

bool TCPStore::delete_key(const std::string& key) {
  std::string p(1, static_cast<char>(kDelete));
  put_str(p, key);
  return request(p, timeout_, {key}).at(0) != 0;
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::string p(1, static_cast<char>(kCheck));
  put_u64(p, keys.size());
  for (const auto& k : keys) put_str(p, k);
  return request(p, timeout_, keys).at(0) != 0;
}

int64_t TCPStore::num_keys() {
  std::string p(1, static_cast<char>(kNumKeys));
  std::string r = request(p, timeout_, {});
  Reader rd{r};
  return static_cast<int64_t>(rd.u64());
}

void TCPStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  std::string p(1, static_cast<char>(kWait));
  put_u64(p, keys.size());
  for (const auto& k : keys) put_str(p, k);
  request(p, timeout, keys);
}

void TCPStore::append(const std::string& key, const Bytes& value) {
  std::string p(1, static_cast<char>(kAppend));
  put_str(p, key);
  put_bytes(p, value);
  request(p, timeout_, {key});
}

}  // namespace ember::distributed
