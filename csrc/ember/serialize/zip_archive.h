// The zip container of PyTorch's checkpoint format (torch.save / ember.save), read and written
// in C++ so the Python and C++ APIs share one implementation; the pickle layer stays in Python.
//
// Note [Checkpoint archive layout]: records are stored (never compressed) under one prefix:
// `<prefix>/data.pkl`, `<prefix>/byteorder`, `<prefix>/data/<key>` (a storage's raw bytes),
// `<prefix>/version`, ... The data of every record starts at a multiple of 64 bytes in the file
// (a padding extra field "FB" in the local header), so storages can be mapped in place. Records
// use data descriptors (CRC and sizes after the data, so a record streams out without seeking),
// and the archive always ends with ZIP64 end records, as torch's writer does; an entry whose
// size or header offset does not fit 32 bits carries a ZIP64 extra field.
//
// Note [Reading untrusted archives]: every size and offset read from the file is checked against
// the file's size before it is used or allocated: the central directory must lie inside the
// file, each record's data before the central directory, a stored record's size equals its
// compressed size, a deflated record claims at most 1032 bytes per compressed byte (deflate's
// limit). Bad input raises ember::Error naming the record; nothing allocates more than the file
// size (a deflated record: its bounded claim).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ember/serialize/io.h"

namespace ember::serialize {

// CRC-32 of the zip format (libdeflate's: PCLMUL where the CPU has it), continued from crc (0 to start).
uint32_t crc32(uint32_t crc, const void* data, size_t n);

struct ZipEntry {
  std::string name;
  uint64_t header_offset = 0;    // local header
  uint64_t compressed_size = 0;  // bytes in the file
  uint64_t size = 0;             // bytes once read (bounded once data_offset accepted the entry)
  uint32_t crc32 = 0;            // 0: not recorded (torch's compute_crc32=False), not checked
  uint16_t method = 0;           // 0 stored, 8 deflated
  uint16_t flags = 0;
};

class ZipReader {
 public:
  // Parses the end records and the central directory; throws ember::Error if they are malformed.
  explicit ZipReader(std::unique_ptr<ReadSource> source);
  static ZipReader open(const std::string& path) { return ZipReader(file_source(path)); }

  uint64_t archive_size() const { return size_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  std::vector<std::string> names() const;
  bool has_record(std::string_view name) const { return find(name) != nullptr; }
  const ZipEntry* find(std::string_view name) const;
  const ZipEntry& entry(std::string_view name) const;  // throws if missing

  // Offset in the file of a record's first data byte, for mapping stored records without
  // copying. Also the check to make before sizing a buffer by e.size: the record is stored or
  // deflated (NotImplementedError otherwise), not encrypted, and its data lies inside the file
  // before the central directory, so e.size is bounded (Note [Reading untrusted archives]).
  uint64_t data_offset(const ZipEntry& e);
  // Reads the record into dst (n must be its size), checking its CRC-32 when one is recorded.
  void read(const ZipEntry& e, void* dst, uint64_t n, bool check_crc = true);
  std::string read(std::string_view name);  // a small record (data.pkl, byteorder, ...)
  ReadSource& source() { return *source_; }

 private:
  void parse_central_directory(uint64_t cd_offset, uint64_t cd_size, uint64_t count);
  std::unique_ptr<ReadSource> source_;
  uint64_t size_ = 0;
  uint64_t cd_offset_ = 0;  // records' data must end before it
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<uint64_t> data_offsets_;  // per entry, 0 until its local header was read
};

struct ZipWriterOptions {
  uint64_t alignment = 64;   // records' data start at a multiple of this (a power of two, <= 4096)
  bool force_zip64 = false;  // ZIP64 extra fields on every entry (tests of the ZIP64 paths)
};

class ZipWriter {
 public:
  explicit ZipWriter(std::unique_ptr<WriteSink> sink, ZipWriterOptions options = {});
  // Writes to path atomically (Note [Atomic file writes]): the file appears when finish() returns.
  static ZipWriter to_file(const std::string& path, ZipWriterOptions options = {}) {
    return ZipWriter(atomic_file_sink(path), options);
  }
  ZipWriter(ZipWriter&&) = default;
  ~ZipWriter() = default;  // without finish(), the sink discards the output

  void write_record(std::string_view name, const void* data, uint64_t n);
  // Streams one record of exactly `size` bytes: begin_record, append..., end_record.
  void begin_record(std::string_view name, uint64_t size);
  void append(const void* data, uint64_t n);
  void end_record();
  // Central directory and end records, then commits the sink. No records can follow.
  void finish();
  // Gives up: drops the sink now (an atomic file removes its temporary file). Idempotent.
  void abort();
  bool finished() const { return finished_; }

  uint64_t offset() const { return offset_; }
  // False when writes call back into Python (the bindings keep the GIL then).
  bool sink_thread_safe() const { return sink_ && sink_->thread_safe(); }

 private:
  struct Written {
    std::string name;
    uint64_t header_offset, size;
    uint32_t crc;
    uint16_t flags;
    bool zip64_size, zip64_offset;
  };
  void put(const void* data, size_t n);
  std::unique_ptr<WriteSink> sink_;
  ZipWriterOptions options_;
  uint64_t offset_ = 0;
  std::vector<Written> written_;
  std::unordered_map<std::string, size_t> names_;
  bool in_record_ = false, finished_ = false, broken_ = false;
  uint64_t record_left_ = 0;
  Written current_{};
  uint32_t record_crc_ = 0;
};

}  // namespace ember::serialize
