// Note [FileStore log]: the file is an append-only log of records (set key = value, delete key).
// Every operation takes an exclusive flock on the file, first replays the records the other
// processes appended since this store last looked (into an in-memory cache), then appends its
// own. Readers that wait for a key poll this way with a short sleep. The file is removed when
// world_size stores over it have been destroyed (counted in the log itself), as torch does.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "ember/distributed/store.h"

namespace ember::distributed {
namespace {
constexpr uint8_t kSet = 1, kDelete = 2;
const char* const kClosedKey = "__ember_file_store_closed";

[[noreturn]] void throw_errno(const std::string& what, const std::string& path) {
  throw DistStoreError("FileStore: " + what + " '" + path + "': " + std::strerror(errno));
}

void put_u64(std::string& buf, uint64_t v) { buf.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
}  // namespace

class FileStore::Lock {
 public:
  explicit Lock(FileStore& s) : s_(s), guard_(s.mu_) {
    while (flock(s_.fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw_errno("cannot lock", s_.path_);
  }
  ~Lock() { flock(s_.fd_, LOCK_UN); }

 private:
  FileStore& s_;
  std::lock_guard<std::mutex> guard_;
};

FileStore::FileStore(std::string path, int world_size, Millis timeout)
    : Store(timeout), path_(std::move(path)), world_size_(world_size) {
  EMBER_CHECK_VALUE(!path_.empty(), "FileStore: the file name is empty");
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno("cannot open", path_);
}

FileStore::~FileStore() {
  try {
    if (world_size_ > 0) {
      Lock lock(*this);
      sync_locked();
      int64_t closed = cache_.add(kClosedKey, 1);
      write_locked(kSet, kClosedKey, to_bytes(std::to_string(closed)));
      if (closed >= world_size_) ::unlink(path_.c_str());
    }
  } catch (...) {  // a destructor must not throw; the file is then left behind
  }
  ::close(fd_);
}

void FileStore::sync_locked() {
  struct stat st;
  if (fstat(fd_, &st) != 0) throw_errno("cannot stat", path_);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size <= read_pos_) return;
  std::string buf(size - read_pos_, '\0');
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::pread(fd_, buf.data() + got, buf.size() - got, static_cast<off_t>(read_pos_ + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot read", path_);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  size_t pos = 0;
  auto take_u64 = [&](uint64_t& v) {
    if (got - pos < sizeof(v)) return false;
    std::memcpy(&v, buf.data() + pos, sizeof(v));
    pos += sizeof(v);
    return true;
  };
  while (pos < got) {
    size_t start = pos;
    uint8_t kind = static_cast<uint8_t>(buf[pos++]);
    uint64_t klen = 0, vlen = 0;
    if (!take_u64(klen) || got - pos < klen) {
      pos = start;
      break;
    }
    std::string key(buf.data() + pos, klen);
    pos += klen;
    if (!take_u64(vlen) || got - pos < vlen) {
      pos = start;  // a record cut short (a writer died mid-write): ignore it
      break;
    }
    if (kind == kSet)
      cache_.set(key, Bytes(buf.begin() + static_cast<std::ptrdiff_t>(pos),
                            buf.begin() + static_cast<std::ptrdiff_t>(pos + vlen)));
    else if (kind == kDelete)
      cache_.erase(key);
    pos += vlen;
  }
  read_pos_ += pos;
}

void FileStore::write_locked(uint8_t kind, const std::string& key, const Bytes& value) {
  std::string rec;
  rec.push_back(static_cast<char>(kind));
  put_u64(rec, key.size());
  rec += key;
  put_u64(rec, value.size());
  rec.append(reinterpret_cast<const char*>(value.data()), value.size());
  size_t done = 0;
  while (done < rec.size()) {
    ssize_t n = ::write(fd_, rec.data() + done, rec.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot write", path_);
    done += static_cast<size_t>(n);
  }
  // Our own record is now in the cache; skip it when reading back.
  read_pos_ += rec.size();
}

void FileStore::set(const std::string& key, const Bytes& value) {
  Lock lock(*this);
  sync_locked();
  write_locked(kSet, key, value);
  cache_.set(key, value);
}

Bytes FileStore::get(const std::string& key) {
  wait({key}, timeout_);
  Lock lock(*this);
  sync_locked();
  Bytes out;
  if (!cache_.try_get(key, out)) throw DistStoreError(timeout_message(timeout_, {key}));  // deleted meanwhile
  return out;
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  Lock lock(*this);
  sync_locked();
  int64_t v = cache_.add(key, delta);
  write_locked(kSet, key, to_bytes(std::to_string(v)));
  return v;
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Lock lock(*this);
  sync_locked();
  Bytes before;
  bool had = cache_.try_get(key, before);
  bool swaps = had ? before == expected : expected.empty();
  Bytes now = cache_.compare_set(key, expected, desired);
  if (swaps) write_locked(kSet, key, desired);
  return now;
}

bool FileStore::delete_key(const std::string& key) {
  Lock lock(*this);
  sync_locked();
  if (!cache_.erase(key)) return false;
  write_locked(kDelete, key, {});
  return true;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  Lock lock(*this);
  sync_locked();
  return cache_.contains_all(keys);
}

int64_t FileStore::num_keys() {
  Lock lock(*this);
  sync_locked();
  return cache_.size();
}

void FileStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Millis nap{2};
  while (!check(keys)) {
    if (std::chrono::steady_clock::now() >= deadline) throw DistStoreError(timeout_message(timeout, keys));
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, Millis(50));
  }
}

void FileStore::append(const std::string& key, const Bytes& value) {
  Lock lock(*this);
  sync_locked();
  cache_.append(key, value);
  Bytes v;
  cache_.try_get(key, v);
  write_locked(kSet, key, v);
}

}  // namespace ember::distributed
