// Key-value stores for process-group rendezvous (torch.distributed's Store family): processes
// publish their addresses and counters here before any collective runs. Every blocking call
// takes a timeout and throws DistStoreError when it passes, so a missing peer is an error, never
// a hang.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/error.h"

namespace ember::distributed {

using Millis = std::chrono::milliseconds;
using Bytes = std::vector<uint8_t>;

// torch.distributed's error classes (all RuntimeErrors in Python).
class DistError : public Error {
 public:
  using Error::Error;
};
class DistStoreError : public DistError {  // store timeouts and misuse
 public:
  using DistError::DistError;
};
class DistNetworkError : public DistError {  // sockets: connect, listen, lost connections
 public:
  using DistError::DistError;
};
class DistBackendError : public DistError {  // a collective failed (peer died, timed out)
 public:
  using DistError::DistError;
};

constexpr Millis kDefaultStoreTimeout{300000};  // torch's default_pg_timeout, 5 minutes

Bytes to_bytes(const std::string& s);
std::string to_string(const Bytes& b);

class Store {
 public:
  explicit Store(Millis timeout = kDefaultStoreTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits up to timeout() for the key to appear.
  virtual Bytes get(const std::string& key) = 0;
  // Adds delta to the integer stored (as decimal text) under key, 0 if absent; the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Sets desired if the current value equals expected (or the key is absent and expected is
  // empty); returns the value now stored, or expected when the key is absent (torch's rule).
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  virtual int64_t num_keys() = 0;
  virtual void wait(const std::vector<std::string>& keys, Millis timeout) = 0;
  // Appends to the value (creating it); not atomic with respect to readers of the whole store.
  virtual void append(const std::string& key, const Bytes& value);

  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  Millis timeout() const { return timeout_; }
  void set_timeout(Millis t) { timeout_ = t; }

 protected:
  Millis timeout_;
};

// The in-memory map shared by the stores that hold their data in this process (HashStore and
// the TCPStore server): the operations, with waits on a condition variable.
class KeyValueMap {
 public:
  void set(const std::string& key, const Bytes& value);
  bool try_get(const std::string& key, Bytes& out) const;
  int64_t add(const std::string& key, int64_t delta);
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired);
  bool erase(const std::string& key);
  bool contains_all(const std::vector<std::string>& keys) const;
  void append(const std::string& key, const Bytes& value);
  int64_t size() const { return static_cast<int64_t>(map_.size()); }

 private:
  std::map<std::string, Bytes> map_;
};

// Parses a store value as a decimal integer (add's format); DistStoreError if it is not one.
int64_t parse_counter(const Bytes& value, const std::string& key);
// "wait timeout after 300ms, keys: a, b"
std::string timeout_message(Millis timeout, const std::vector<std::string>& keys);

// torch.distributed.HashStore: one process, many threads.
class HashStore : public Store {
 public:
  using Store::Store;
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

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  KeyValueMap kv_;
};

// torch.distributed.PrefixStore: every key of `base` is prefixed with "prefix/".
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base);
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
  const std::shared_ptr<Store>& underlying_store() const { return base_; }

 private:
  std::string key(const std::string& k) const { return prefix_ + "/" + k; }
  std::vector<std::string> keys(const std::vector<std::string>& ks) const;
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

// torch.distributed.FileStore: processes sharing a file system share an append-only log file
// (Note [FileStore log] in file_store.cpp).
class FileStore : public Store {
 public:
  // world_size > 0: the file is removed when that many stores over it have been destroyed.
  FileStore(std::string path, int world_size, Millis timeout = kDefaultStoreTimeout);
  ~FileStore() override;
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
  const std::string& path() const { return path_; }

 private:
  class Lock;
  void sync_locked();  // reads records appended by others since the last read
  void write_locked(uint8_t kind, const std::string& key, const Bytes& value);
  std::string path_;
  int world_size_;
  int fd_ = -1;
  uint64_t read_pos_ = 0;
  std::mutex mu_;  // threads of this process: one at a time on fd_ and the cache
  KeyValueMap cache_;
};

}  // namespace ember::distributed
