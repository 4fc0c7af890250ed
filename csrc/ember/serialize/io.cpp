#include "ember/serialize/io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ember/core/allocator.h"
#include "ember/core/error.h"

namespace ember::serialize {
namespace {

std::string errno_text() { return std::strerror(errno); }

class FileSource final : public ReadSource {
 public:
  explicit FileSource(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EMBER_CHECK(fd_ >= 0, "cannot open ", path, ": ", errno_text());
    struct stat st {};
    if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      EMBER_CHECK(false, path, " is not a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~FileSource() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  void read_at(uint64_t offset, void* dst, size_t n) override {
    EMBER_CHECK(offset <= size_ && n <= size_ - offset, "read of ", n, " bytes at offset ", offset,
                " runs past the end of ", path_, " (", size_, " bytes)");
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      EMBER_CHECK(got >= 0, "reading ", path_, " failed: ", errno_text());
      EMBER_CHECK(got > 0, "unexpected end of file in ", path_, " (was it truncated while being read?)");
      p += got, offset += static_cast<uint64_t>(got), n -= static_cast<size_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

class MemorySource final : public ReadSource {
 public:
  MemorySource(const void* data, size_t n, IntrusivePtr<MappedFile> keep = {})
      : data_(static_cast<const uint8_t*>(data)), size_(n), keep_(std::move(keep)) {}
  uint64_t size() const override { return size_; }
  void read_at(uint64_t offset, void* dst, size_t n) override {
    EMBER_CHECK(offset <= size_ && n <= size_ - offset, "read of ", n, " bytes at offset ", offset,
                " runs past the end of the data (", size_, " bytes)");
    if (n) std::memcpy(dst, data_ + offset, n);
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  IntrusivePtr<MappedFile> keep_;
};

class AtomicFileSink final : public WriteSink {
 public:
  explicit AtomicFileSink(const std::string& target) : path_(target) {
    // A symlink is written through, as open() would: its target file is the one replaced.
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      if (char* real = ::realpath(target.c_str(), nullptr)) {
        path_ = real;
        std::free(real);
      }
    }
    const std::string& path = path_;
    auto slash = path.find_last_of('/');
    dir_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    EMBER_CHECK(!base.empty(), "cannot save to ", path, ": it names a directory");
    std::random_device rd;
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      char suffix[17];
      std::snprintf(suffix, sizeof suffix, "%08x%08x", rd(), rd());
      tmp_ = dir_ + "/." + base + "." + suffix + ".tmp";
      // 0666 before the umask, as a plain open() of the target would give.
      fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    EMBER_CHECK(fd_ >= 0, "cannot create a temporary file next to ", path, ": ", errno_text());
    // Replacing a file keeps its permission bits, as writing it in place would.
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(fd_, st.st_mode & 07777);
    buf_.reserve(kBuffer);
  }
  ~AtomicFileSink() override {
    if (fd_ >= 0) {
      ::close(fd_);
      ::unlink(tmp_.c_str());
    }
  }
  void write(const void* data, size_t n) override {
    EMBER_CHECK(fd_ >= 0, "write to a finished file");
    if (buf_.size() + n <= kBuffer) {
      buf_.insert(buf_.end(), static_cast<const char*>(data), static_cast<const char*>(data) + n);
      return;
    }
    flush();
    if (n < kBuffer)
      buf_.insert(buf_.end(), static_cast<const char*>(data), static_cast<const char*>(data) + n);
    else
      write_all(data, n);
  }
  void commit() override {
    flush();
    if (::fsync(fd_) != 0) fail("fsync");
    int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
      ::unlink(tmp_.c_str());
      EMBER_CHECK(false, "writing ", path_, " failed: ", errno_text());
    }
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
      std::string err = errno_text();
      ::unlink(tmp_.c_str());
      EMBER_CHECK(false, "cannot rename the temporary file to ", path_, ": ", err);
    }
    // The rename itself is durable only once the directory is synced.
    int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  static constexpr size_t kBuffer = 1 << 16;  // headers are small: one write() per 64 KiB of them
  void fail(const char* what) { EMBER_CHECK(false, "writing ", path_, " failed (", what, "): ", errno_text()); }
  void flush() {
    if (!buf_.empty()) write_all(buf_.data(), buf_.size());
    buf_.clear();
  }
  void write_all(const void* data, size_t n) {
    auto* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t put = ::write(fd_, p, n);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) fail("write");
      p += put, n -= static_cast<size_t>(put);
    }
  }
  std::string path_, dir_, tmp_;
  int fd_ = -1;
  std::vector<char> buf_;
};

class VectorSink final : public WriteSink {
 public:
  explicit VectorSink(std::string* out) : out_(out) {}
  void write(const void* data, size_t n) override { out_->append(static_cast<const char*>(data), n); }

 private:
  std::string* out_;
};

void release_mapping(void*, void* ctx) { IntrusivePtr<MappedFile>::adopt(static_cast<MappedFile*>(ctx)); }

}  // namespace

std::unique_ptr<ReadSource> file_source(const std::string& path) { return std::make_unique<FileSource>(path); }
std::unique_ptr<ReadSource> memory_source(const void* data, size_t n) {
  return std::make_unique<MemorySource>(data, n);
}
std::unique_ptr<WriteSink> atomic_file_sink(const std::string& path) { return std::make_unique<AtomicFileSink>(path); }
std::unique_ptr<WriteSink> vector_sink(std::string* out) { return std::make_unique<VectorSink>(out); }

IntrusivePtr<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMBER_CHECK(fd >= 0, "cannot open ", path, ": ", errno_text());
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    EMBER_CHECK(false, path, " is not a regular file");
  }
  auto size = static_cast<uint64_t>(st.st_size);
  void* p = nullptr;
  if (size > 0) {
    p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      std::string err = errno_text();
      ::close(fd);
      EMBER_CHECK(false, "cannot map ", path, " (", size, " bytes): ", err);
    }
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  return IntrusivePtr<MappedFile>(new MappedFile(path, static_cast<uint8_t*>(p), size));
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

Storage MappedFile::storage(uint64_t offset, uint64_t nbytes) {
  EMBER_CHECK(offset <= size_ && nbytes <= size_ - offset, "bytes [", offset, ", ", offset, " + ", nbytes,
              ") lie outside the mapped file ", path_, " of ", size_, " bytes");
  if (nbytes == 0) return StorageImpl::allocate(0, cpu_allocator());
  IntrusivePtr<MappedFile> self(this);
  DataPtr ptr(data_ + offset, self.release(), &release_mapping);
  return IntrusivePtr<StorageImpl>::make(std::move(ptr), static_cast<size_t>(nbytes), Device());
}

std::unique_ptr<ReadSource> MappedFile::source() {
  return std::make_unique<MemorySource>(data_, static_cast<size_t>(size_), IntrusivePtr<MappedFile>(this));
}

}  // namespace ember::serialize
