// Byte sources and sinks for the archive code (zip_archive.h, safetensors in Python): files read
// with pread, memory, files written atomically, and read-only files mapped copy-on-write.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ember/core/intrusive_ptr.h"
#include "ember/core/storage.h"

namespace ember::serialize {

// Random-access bytes of a known size. read_at reads exactly n bytes or throws ember::Error.
class ReadSource {
 public:
  virtual ~ReadSource() = default;
  virtual uint64_t size() const = 0;
  virtual void read_at(uint64_t offset, void* dst, size_t n) = 0;
  // True when reads never call back into Python (the bindings release the GIL around them).
  virtual bool thread_safe() const { return true; }
};

// A file opened read-only, read with pread (no shared file position).
std::unique_ptr<ReadSource> file_source(const std::string& path);
// Borrowed memory; the caller keeps it alive while the source is used.
std::unique_ptr<ReadSource> memory_source(const void* data, size_t n);

// Sequential bytes out. write writes all n bytes or throws; commit finishes the output (an
// atomic file is renamed into place); a sink destroyed without commit discards what it wrote
// where it can (an atomic file removes its temporary file).
class WriteSink {
 public:
  virtual ~WriteSink() = default;
  virtual void write(const void* data, size_t n) = 0;
  virtual void commit() {}
  virtual bool thread_safe() const { return true; }
};

// Note [Atomic file writes]: bytes go to a new temporary file in the target's directory; commit
// fsyncs it, renames it over the target and fsyncs the directory, so a crash or an exception at
// any point leaves either the old file or the complete new one, never a torn checkpoint.
std::unique_ptr<WriteSink> atomic_file_sink(const std::string& path);
// Appends to a growing buffer (tests, in-memory archives).
std::unique_ptr<WriteSink> vector_sink(std::string* out);

// A whole file mapped privately (copy-on-write: writes through a tensor never reach the file).
// Storages made from it alias the mapping and keep it alive.
class MappedFile : public RefCounted {
 public:
  static IntrusivePtr<MappedFile> open(const std::string& path);
  ~MappedFile() override;
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Bytes [offset, offset + nbytes) as a CPU storage aliasing the mapping (bounds checked).
  Storage storage(uint64_t offset, uint64_t nbytes);
  // A source reading from the mapping (keeps it alive).
  std::unique_ptr<ReadSource> source();

 private:
  MappedFile(std::string path, uint8_t* data, uint64_t size) : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  uint8_t* data_;
  uint64_t size_;
};

}  // namespace ember::serialize
