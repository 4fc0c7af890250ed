#include "ember/serialize/zip_archive.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ember/core/error.h"

namespace ember::serialize {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50, kDescriptorSig = 0x08074b50;
constexpr uint64_t kLocalHeader = 30, kCentralHeader = 46, kEndRecord = 22, kEnd64Record = 56, kLocator64 = 20;
constexpr uint32_t kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kMax16 = 0xFFFFu;
constexpr uint16_t kFlagEncrypted = 1, kFlagDescriptor = 1 << 3, kFlagUtf8 = 1 << 11;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, the earliest DOS date
constexpr uint64_t kDeflateMaxRatio = 1032;             // deflate never expands more than this
constexpr size_t kChunk = size_t{4} << 20;              // read and CRC in cache-sized pieces

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t le32(const uint8_t* p) { return static_cast<uint32_t>(le16(p)) | (static_cast<uint32_t>(le16(p + 2)) << 16); }
uint64_t le64(const uint8_t* p) { return static_cast<uint64_t>(le32(p)) | (static_cast<uint64_t>(le32(p + 4)) << 32); }

// Little-endian byte builder for headers.
struct Bytes {
  std::string s;
  Bytes& u16(uint16_t v) {
    s.push_back(static_cast<char>(v & 0xFF));
    s.push_back(static_cast<char>(v >> 8));
    return *this;
  }
  Bytes& u32(uint32_t v) { return u16(static_cast<uint16_t>(v & 0xFFFF)).u16(static_cast<uint16_t>(v >> 16)); }
  Bytes& u64(uint64_t v) { return u32(static_cast<uint32_t>(v & kMax32)).u32(static_cast<uint32_t>(v >> 32)); }
  Bytes& str(std::string_view v) {
    s.append(v);
    return *this;
  }
};

uint32_t clamp32(uint64_t v, bool zip64) { return zip64 ? kMax32 : static_cast<uint32_t>(v); }

std::string printable(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 200)) out.push_back(c >= 32 && c < 127 ? c : '?');
  return out;
}

}  // namespace

uint32_t crc32(uint32_t crc, const void* data, size_t n) { return libdeflate_crc32(crc, data, n); }

// ------------------------------------------------------------------------------------- reading
ZipReader::ZipReader(std::unique_ptr<ReadSource> source) : source_(std::move(source)) {
  size_ = source_->size();
  EMBER_CHECK(size_ >= kEndRecord, "not a zip archive: ", size_, " bytes is shorter than the end record");
  // The end record sits in the last 22 + 65535 (its longest comment) bytes.
  uint64_t tail_len = std::min<uint64_t>(size_, kEndRecord + kMax16);
  std::vector<uint8_t> tail(tail_len);
  source_->read_at(size_ - tail_len, tail.data(), tail_len);
  int64_t at = -1;
  for (int64_t i = static_cast<int64_t>(tail_len - kEndRecord); i >= 0; --i) {
    const uint8_t* p = tail.data() + i;
    if (le32(p) == kEndSig && static_cast<uint64_t>(i) + kEndRecord + le16(p + 20) <= tail_len) {
      at = i;
      break;
    }
  }
  EMBER_CHECK(at >= 0, "not a zip archive (no end of central directory record)");
  const uint8_t* end = tail.data() + at;
  uint64_t end_offset = size_ - tail_len + static_cast<uint64_t>(at);
  uint64_t count = le16(end + 10), cd_size = le32(end + 12), cd_offset = le32(end + 16);
  uint64_t cd_limit = end_offset;  // the central directory ends before the end records
  EMBER_CHECK((le16(end + 4) == 0 || le16(end + 4) == kMax16) && (le16(end + 6) == 0 || le16(end + 6) == kMax16),
              "corrupted zip archive: multi-disk archives are not supported");

  if (end_offset >= kLocator64) {
    uint8_t loc[kLocator64];
    source_->read_at(end_offset - kLocator64, loc, kLocator64);
    if (le32(loc) == kLocator64Sig) {
      uint64_t end64 = le64(loc + 8);
      EMBER_CHECK(end64 <= end_offset - kLocator64 && end_offset - kLocator64 - end64 >= kEnd64Record,
                  "corrupted zip archive: the ZIP64 end record offset ", end64, " lies outside the file");
      uint8_t rec[kEnd64Record];
      source_->read_at(end64, rec, kEnd64Record);
      EMBER_CHECK(le32(rec) == kEnd64Sig, "corrupted zip archive: bad ZIP64 end record signature");
      EMBER_CHECK(le32(rec + 16) == 0 && le32(rec + 20) == 0,
                  "corrupted zip archive: multi-disk archives are not supported");
      count = le64(rec + 32), cd_size = le64(rec + 40), cd_offset = le64(rec + 48);
      cd_limit = end64;
    }
  }
  EMBER_CHECK(cd_offset <= cd_limit && cd_size <= cd_limit - cd_offset,
              "corrupted zip archive: the central directory (", cd_size, " bytes at offset ", cd_offset,
              ") lies outside the file of ", size_, " bytes");
  EMBER_CHECK(count <= cd_size / kCentralHeader, "corrupted zip archive: ", count, " entries cannot fit in a ", cd_size,
              "-byte central directory");
  cd_offset_ = cd_offset;
  parse_central_directory(cd_offset, cd_size, count);
}

void ZipReader::parse_central_directory(uint64_t cd_offset, uint64_t cd_size, uint64_t count) {
  std::vector<uint8_t> cd(cd_size);
  source_->read_at(cd_offset, cd.data(), cd_size);
  entries_.reserve(count);
  uint64_t pos = 0;
  for (uint64_t i = 0; i < count; ++i) {
    EMBER_CHECK(cd_size - pos >= kCentralHeader && le32(cd.data() + pos) == kCentralSig,
                "corrupted zip archive: bad central directory entry ", i);
    const uint8_t* h = cd.data() + pos;
    uint64_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    EMBER_CHECK(cd_size - pos - kCentralHeader >= name_len + extra_len + comment_len,
                "corrupted zip archive: central directory entry ", i, " runs past the directory");
    ZipEntry e;
    e.flags = le16(h + 8);
    e.method = le16(h + 10);
    e.crc32 = le32(h + 16);
    e.compressed_size = le32(h + 20);
    e.size = le32(h + 24);
    e.header_offset = le32(h + 42);
    uint32_t disk = le16(h + 34);
    e.name.assign(reinterpret_cast<const char*>(h + kCentralHeader), name_len);
    // ZIP64 extended information: 8-byte values for exactly the fields saturated above, in order.
    const uint8_t* x = h + kCentralHeader + name_len;
    for (uint64_t k = 0; k + 4 <= extra_len;) {
      uint64_t id = le16(x + k), len = le16(x + k + 2);
      EMBER_CHECK(k + 4 + len <= extra_len, "corrupted zip archive: malformed extra field in ", printable(e.name));
      if (id == 1) {
        const uint8_t* f = x + k + 4;
        uint64_t left = len;
        auto take = [&](uint64_t& v) {
          EMBER_CHECK(left >= 8, "corrupted zip archive: short ZIP64 field in ", printable(e.name));
          v = le64(f);
          f += 8, left -= 8;
        };
        if (e.size == kMax32) take(e.size);
        if (e.compressed_size == kMax32) take(e.compressed_size);
        if (e.header_offset == kMax32) take(e.header_offset);
        if (disk == kMax16 && left >= 4) disk = le32(f);
      }
      k += 4 + len;
    }
    EMBER_CHECK(disk == 0, "corrupted zip archive: multi-disk archives are not supported");
    pos += kCentralHeader + name_len + extra_len + comment_len;
    // Note [Reading untrusted archives]
    EMBER_CHECK(e.header_offset <= cd_offset_ && cd_offset_ - e.header_offset >= kLocalHeader + name_len,
                "corrupted zip archive: record ", printable(e.name), " has its header at offset ", e.header_offset,
                ", outside the records before the central directory at ", cd_offset_);
    EMBER_CHECK(e.compressed_size <= cd_offset_ - e.header_offset, "corrupted zip archive: record ", printable(e.name),
                " claims ", e.compressed_size, " bytes, more than the file holds");
    if (e.method == 0) {
      EMBER_CHECK(e.size == e.compressed_size, "corrupted zip archive: stored record ", printable(e.name), " has size ",
                  e.size, " but ", e.compressed_size, " bytes in the file");
    } else if (e.method == 8) {
      EMBER_CHECK(e.size / kDeflateMaxRatio <= e.compressed_size, "corrupted zip archive: deflated record ",
                  printable(e.name), " claims ", e.size, " bytes from ", e.compressed_size, " compressed bytes");
    }
    EMBER_CHECK(index_.emplace(e.name, entries_.size()).second, "corrupted zip archive: the record ", printable(e.name),
                " appears twice");
    entries_.push_back(std::move(e));
  }
  data_offsets_.assign(entries_.size(), 0);
}

std::vector<std::string> ZipReader::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

const ZipEntry* ZipReader::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const ZipEntry& ZipReader::entry(std::string_view name) const {
  const ZipEntry* e = find(name);
  EMBER_CHECK(e != nullptr, "the archive has no record ", printable(name));
  return *e;
}

uint64_t ZipReader::data_offset(const ZipEntry& e) {
  size_t i = static_cast<size_t>(&e - entries_.data());
  EMBER_CHECK(i < entries_.size(), "data_offset: the entry does not belong to this archive");
  if (data_offsets_[i]) return data_offsets_[i];
  // Sizes are only bounded for stored and deflated records: refuse others before a caller sizes
  // a buffer by them.
  EMBER_CHECK(!(e.flags & kFlagEncrypted), "record ", printable(e.name), " is encrypted");
  if (e.method != 0 && e.method != 8)
    EMBER_NOT_IMPLEMENTED("record ", printable(e.name), " uses zip compression method ", e.method,
                          "; only stored and deflated records are supported");
  // The local header repeats the name; its extra field (alignment padding, ZIP64) may differ.
  std::vector<uint8_t> h(kLocalHeader + e.name.size());
  source_->read_at(e.header_offset, h.data(), h.size());  // inside the file: checked when parsed
  EMBER_CHECK(le32(h.data()) == kLocalSig, "corrupted zip archive: bad local header for ", printable(e.name));
  uint64_t name_len = le16(h.data() + 26), extra_len = le16(h.data() + 28);
  EMBER_CHECK(name_len == e.name.size() && std::memcmp(h.data() + kLocalHeader, e.name.data(), name_len) == 0,
              "corrupted zip archive: the local header of ", printable(e.name), " names another record");
  uint64_t data = e.header_offset + kLocalHeader + name_len + extra_len;
  EMBER_CHECK(data <= cd_offset_ && e.compressed_size <= cd_offset_ - data, "corrupted zip archive: the data of ",
              printable(e.name), " (", e.compressed_size, " bytes at offset ", data,
              ") runs into the central directory or past the end of the file");
  data_offsets_[i] = data;
  return data;
}

void ZipReader::read(const ZipEntry& e, void* dst, uint64_t n, bool check_crc) {
  uint64_t offset = data_offset(e);  // checks the record can be read before anything else
  EMBER_CHECK(n == e.size, "record ", printable(e.name), " holds ", e.size, " bytes, not ", n);
  auto* out = static_cast<uint8_t*>(dst);
  uint32_t crc = 0;
  if (e.method == 0) {
    for (uint64_t done = 0; done < n;) {
      size_t piece = static_cast<size_t>(std::min<uint64_t>(kChunk, n - done));
      source_->read_at(offset + done, out + done, piece);
      if (check_crc) crc = crc32(crc, out + done, piece);
      done += piece;
    }
  } else {
    // Whole-record inflate: the compressed bytes lie inside the file (checked by data_offset).
    std::vector<uint8_t> in(static_cast<size_t>(e.compressed_size));
    source_->read_at(offset, in.data(), in.size());
    std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(libdeflate_alloc_decompressor(),
                                                                                   &libdeflate_free_decompressor);
    EMBER_CHECK(d != nullptr, "cannot allocate a deflate decompressor");
    uint8_t spill = 0;  // a zero-size record still needs somewhere to point
    size_t got = 0;
    libdeflate_result rc = libdeflate_deflate_decompress(d.get(), in.data(), in.size(), n ? out : &spill, n, &got);
    EMBER_CHECK(rc != LIBDEFLATE_INSUFFICIENT_SPACE, "corrupted zip archive: deflated record ", printable(e.name),
                " is larger than its recorded size of ", n, " bytes");
    EMBER_CHECK(rc == LIBDEFLATE_SUCCESS, "corrupted zip archive: cannot inflate ", printable(e.name),
                " (bad deflate data)");
    EMBER_CHECK(got == n, "corrupted zip archive: deflated record ", printable(e.name), " holds ", got,
                " bytes, its header says ", n);
    if (check_crc) crc = crc32(0, out, n);
  }
  if (check_crc && e.crc32 != 0)
    EMBER_CHECK(crc == e.crc32, "corrupted zip archive: CRC-32 mismatch in record ", printable(e.name),
                " (the file is damaged)");
}

std::string ZipReader::read(std::string_view name) {
  const ZipEntry& e = entry(name);
  data_offset(e);  // validates the extent before anything is allocated
  std::string out(static_cast<size_t>(e.size), '\0');
  read(e, out.data(), e.size);
  return out;
}

// ------------------------------------------------------------------------------------- writing
ZipWriter::ZipWriter(std::unique_ptr<WriteSink> sink, ZipWriterOptions options)
    : sink_(std::move(sink)), options_(options) {
  uint64_t a = options_.alignment;
  EMBER_CHECK_VALUE(a >= 1 && a <= 4096 && (a & (a - 1)) == 0,
                    "ZipWriter: alignment must be a power of two up to 4096, got ", a);
}

void ZipWriter::abort() {
  if (finished_) return;
  broken_ = true;
  sink_.reset();
}

void ZipWriter::put(const void* data, size_t n) {
  EMBER_CHECK(sink_ != nullptr, "ZipWriter: the archive was aborted");
  try {
    sink_->write(data, n);
  } catch (...) {
    broken_ = true;  // the archive is incomplete: refuse further records
    throw;
  }
  offset_ += n;
}

void ZipWriter::write_record(std::string_view name, const void* data, uint64_t n) {
  begin_record(name, n);
  append(data, n);
  end_record();
}

void ZipWriter::begin_record(std::string_view name, uint64_t size) {
  EMBER_CHECK(!broken_, "ZipWriter: an earlier write failed");
  EMBER_CHECK(!finished_, "ZipWriter: the archive is already finished");
  EMBER_CHECK(!in_record_, "ZipWriter: record ", current_.name, " is still open");
  EMBER_CHECK_VALUE(!name.empty() && name.size() <= kMax16 && name.front() != '/', "ZipWriter: invalid record name '",
                    printable(name), "'");
  EMBER_CHECK_VALUE(!names_.count(std::string(name)), "ZipWriter: duplicate record ", printable(name));
  current_ = Written{std::string(name),
                     offset_,
                     size,
                     0,
                     static_cast<uint16_t>(kFlagUtf8 | (size ? kFlagDescriptor : 0)),
                     options_.force_zip64 || size >= kMax32,
                     options_.force_zip64 || offset_ >= kMax32};
  bool zip64 = current_.zip64_size || current_.zip64_offset;
  Bytes x;  // local extra: ZIP64 values, then the alignment padding field, as torch writes it
  if (zip64) {
    x.u16(1).u16(static_cast<uint16_t>((current_.zip64_size ? 16 : 0) + (current_.zip64_offset ? 8 : 0)));
    if (current_.zip64_size) x.u64(size).u64(size);
    if (current_.zip64_offset) x.u64(offset_);
  }
  uint64_t start = offset_ + kLocalHeader + name.size() + x.s.size() + 4;
  uint64_t pad = (options_.alignment - start % options_.alignment) % options_.alignment;
  x.str("FB").u16(static_cast<uint16_t>(pad)).str(std::string(pad, 'Z'));
  Bytes h;
  h.u32(kLocalSig).u16(zip64 ? 45 : 20).u16(current_.flags).u16(0).u16(0).u16(kDosDate);
  h.u32(0).u32(0).u32(0);  // CRC and sizes follow the data (the descriptor)
  h.u16(static_cast<uint16_t>(name.size())).u16(static_cast<uint16_t>(x.s.size())).str(name).str(x.s);
  put(h.s.data(), h.s.size());
  in_record_ = true;
  record_left_ = size;
  record_crc_ = 0;
}

void ZipWriter::append(const void* data, uint64_t n) {
  EMBER_CHECK(in_record_ && !broken_, "ZipWriter: append outside a record");
  EMBER_CHECK(n <= record_left_, "ZipWriter: record ", current_.name, " was declared ", current_.size,
              " bytes; appending ", n, " more overflows it");
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    size_t piece = static_cast<size_t>(std::min<uint64_t>(n, kChunk));
    record_crc_ = crc32(record_crc_, p, piece);
    put(p, piece);
    p += piece, n -= piece, record_left_ -= piece;
  }
}

void ZipWriter::end_record() {
  EMBER_CHECK(in_record_ && !broken_, "ZipWriter: end_record outside a record");
  EMBER_CHECK(record_left_ == 0, "ZipWriter: record ", current_.name, " is ", record_left_,
              " bytes short of its declared size ", current_.size);
  current_.crc = record_crc_;
  if (current_.size) {
    Bytes d;
    d.u32(kDescriptorSig).u32(record_crc_);
    if (current_.zip64_size || current_.zip64_offset)
      d.u64(current_.size).u64(current_.size);
    else
      d.u32(static_cast<uint32_t>(current_.size)).u32(static_cast<uint32_t>(current_.size));
    put(d.s.data(), d.s.size());
  }
  names_.emplace(current_.name, written_.size());
  written_.push_back(std::move(current_));
  in_record_ = false;
}

void ZipWriter::finish() {
  EMBER_CHECK(!broken_, "ZipWriter: an earlier write failed");
  EMBER_CHECK(!finished_, "ZipWriter: the archive is already finished");
  EMBER_CHECK(!in_record_, "ZipWriter: record ", current_.name, " is still open");
  uint64_t cd_offset = offset_;
  for (const Written& w : written_) {
    Bytes x;
    if (w.zip64_size || w.zip64_offset) {
      x.u16(1).u16(static_cast<uint16_t>((w.zip64_size ? 16 : 0) + (w.zip64_offset ? 8 : 0)));
      if (w.zip64_size) x.u64(w.size).u64(w.size);
      if (w.zip64_offset) x.u64(w.header_offset);
    }
    uint16_t version = x.s.empty() ? 20 : 45;
    Bytes h;
    h.u32(kCentralSig).u16(version).u16(version).u16(w.flags).u16(0).u16(0).u16(kDosDate).u32(w.crc);
    h.u32(clamp32(w.size, w.zip64_size)).u32(clamp32(w.size, w.zip64_size));
    h.u16(static_cast<uint16_t>(w.name.size())).u16(static_cast<uint16_t>(x.s.size())).u16(0).u16(0).u16(0).u32(0);
    h.u32(clamp32(w.header_offset, w.zip64_offset)).str(w.name).str(x.s);
    put(h.s.data(), h.s.size());
  }
  uint64_t cd_size = offset_ - cd_offset, end64 = offset_, n = written_.size();
  Bytes e;  // ZIP64 end record and locator always (as torch), then the classic end record
  e.u32(kEnd64Sig).u64(kEnd64Record - 12).u16(45).u16(45).u32(0).u32(0).u64(n).u64(n).u64(cd_size).u64(cd_offset);
  e.u32(kLocator64Sig).u32(0).u64(end64).u32(1);
  uint16_t n16 = static_cast<uint16_t>(std::min<uint64_t>(n, kMax16));
  e.u32(kEndSig).u16(0).u16(0).u16(n16).u16(n16);
  e.u32(static_cast<uint32_t>(std::min<uint64_t>(cd_size, kMax32)));
  e.u32(static_cast<uint32_t>(std::min<uint64_t>(cd_offset, kMax32))).u16(0);
  put(e.s.data(), e.s.size());
  try {
    sink_->commit();
  } catch (...) {
    broken_ = true;
    throw;
  }
  finished_ = true;
}

}  // namespace ember::serialize
