// The checkpoint archive (ember/serialize/zip_archive.h): round trips, torch's layout details,
// ZIP64, and hostile input (truncated, flipped, rewritten sizes) that must raise ember::Error.
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/serialize/io.h"
#include "ember/serialize/zip_archive.h"

using namespace ember;
using namespace ember::serialize;

namespace {

std::string pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 17 + (i >> 7)) & 0xFF);
  return s;
}

struct Rec {
  std::string name, data;
};

std::string make_archive(const std::vector<Rec>& recs, ZipWriterOptions o = {}) {
  std::string out;
  ZipWriter w(vector_sink(&out), o);
  for (const auto& r : recs) w.write_record(r.name, r.data.data(), r.data.size());
  w.finish();
  return out;
}

std::vector<Rec> sample() {
  return {{"archive/data.pkl", pattern(157, 1)},
          {"archive/byteorder", "little"},
          {"archive/data/0", pattern(4000, 2)},
          {"archive/data/1", ""},
          {"archive/version", "3\n"}};
}

// Opens the archive and reads every record; any failure must be an ember::Error.
void read_all(const std::string& bytes) {
  ZipReader r(memory_source(bytes.data(), bytes.size()));
  for (const auto& e : r.entries()) {
    r.data_offset(e);
    std::vector<uint8_t> buf(e.size);
    r.read(e, buf.data(), e.size);
  }
}

void put32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put64(std::string& s, size_t at, uint64_t v) {
  put32(s, at, static_cast<uint32_t>(v));
  put32(s, at + 4, static_cast<uint32_t>(v >> 32));
}
uint32_t get32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}
size_t find_sig(const std::string& s, const char* sig, size_t from = 0) { return s.find(std::string(sig, 4), from); }

// The zip CRC-32 bit by bit (polynomial 0xEDB88320): an independent reference for the fast one.
uint32_t reference_crc(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

}  // namespace

TEST(ZipArchive, RoundTripKeepsOrderContentsAndAlignment) {
  auto recs = sample();
  std::string bytes = make_archive(recs);
  ZipReader r(memory_source(bytes.data(), bytes.size()));
  ASSERT_EQ(r.entries().size(), recs.size());
  EXPECT_EQ(r.archive_size(), bytes.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    const ZipEntry& e = r.entries()[i];
    EXPECT_EQ(e.name, recs[i].name);
    EXPECT_EQ(e.size, recs[i].data.size());
    EXPECT_EQ(e.method, 0);
    EXPECT_EQ(e.crc32, reference_crc(recs[i].data));
    EXPECT_EQ(crc32(0, recs[i].data.data(), recs[i].data.size()), e.crc32);
    uint64_t off = r.data_offset(e);
    EXPECT_EQ(off % 64, 0u) << e.name;
    EXPECT_EQ(bytes.substr(off, e.size), recs[i].data);  // the data sits in place: mappable
    EXPECT_EQ(r.read(e.name), recs[i].data);
  }
  EXPECT_TRUE(r.has_record("archive/version"));
  EXPECT_FALSE(r.has_record("archive/missing"));
  EXPECT_THROW(r.entry("archive/missing"), Error);
}

TEST(ZipArchive, LayoutFollowsTorchWriter) {
  std::string bytes = make_archive(sample());
  // Local headers use data descriptors (CRC and sizes after the data) and the "FB" padding field.
  EXPECT_EQ(get32(bytes, 0), 0x04034b50u);
  EXPECT_EQ(static_cast<uint8_t>(bytes[6]) | (static_cast<uint8_t>(bytes[7]) << 8), 0x0808);
  EXPECT_EQ(bytes.substr(30 + 16, 2), "FB");
  EXPECT_NE(find_sig(bytes, "PK\x07\x08"), std::string::npos);
  // ZIP64 end record and locator always precede the classic end record, as torch writes them.
  size_t end = bytes.size() - 22;
  EXPECT_EQ(get32(bytes, end), 0x06054b50u);
  EXPECT_EQ(get32(bytes, end - 20), 0x07064b50u);
  EXPECT_EQ(get32(bytes, end - 20 - 56), 0x06064b50u);
}

TEST(ZipArchive, StreamedRecordMustMatchItsDeclaredSize) {
  std::string out;
  ZipWriter w(vector_sink(&out));
  std::string data = pattern(10000, 3);
  w.begin_record("a/data/0", data.size());
  for (size_t i = 0; i < data.size(); i += 999) w.append(data.data() + i, std::min<size_t>(999, data.size() - i));
  w.end_record();
  w.begin_record("a/data/1", 10);
  EXPECT_THROW(w.append(data.data(), 11), Error);
  w.append(data.data(), 4);
  EXPECT_THROW(w.end_record(), Error);
  w.append(data.data() + 4, 6);
  w.end_record();
  EXPECT_THROW(w.write_record("a/data/0", "x", 1), ValueError);  // duplicate name
  EXPECT_THROW(w.write_record("", "x", 1), ValueError);
  w.finish();
  EXPECT_THROW(w.write_record("a/late", "x", 1), Error);
  ZipReader r(memory_source(out.data(), out.size()));
  EXPECT_EQ(r.read("a/data/0"), data);
  EXPECT_EQ(r.read("a/data/1"), data.substr(0, 10));
}

TEST(ZipArchive, Zip64FieldsRoundTrip) {
  ZipWriterOptions o;
  o.force_zip64 = true;
  auto recs = sample();
  std::string bytes = make_archive(recs, o);
  // Every central entry saturates its 32-bit sizes and offset and carries the ZIP64 extra field.
  size_t c = find_sig(bytes, "PK\x01\x02");
  ASSERT_NE(c, std::string::npos);
  EXPECT_EQ(get32(bytes, c + 20), 0xFFFFFFFFu);
  EXPECT_EQ(get32(bytes, c + 42), 0xFFFFFFFFu);
  ZipReader r(memory_source(bytes.data(), bytes.size()));
  ASSERT_EQ(r.entries().size(), recs.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(r.entries()[i].size, recs[i].data.size());
    EXPECT_EQ(r.data_offset(r.entries()[i]) % 64, 0u);
    EXPECT_EQ(r.read(recs[i].name), recs[i].data);
  }
  EXPECT_EQ(r.entries()[2].header_offset, make_archive({recs[0], recs[1]}, o).find("PK\x01\x02"));
}

TEST(ZipArchive, TruncationAnywhereRaises) {
  std::string bytes = make_archive(sample());
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(read_all(bytes.substr(0, n)), Error) << "cut at " << n;
}

TEST(ZipArchive, FlippedBytesRaiseOrReadCleanly) {
  std::string good = make_archive(sample());
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t v : {0x00, 0xFF, 0x41}) {
      std::string bad = good;
      bad[i] = static_cast<char>(v != static_cast<uint8_t>(good[i]) ? v : v ^ 1);  // always a change
      try {
        read_all(bad);  // padding bytes, for example, may change harmlessly
      } catch (const Error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << ": not an ember::Error: " << e.what();
      }
    }
  }
}

TEST(ZipArchive, CorruptedDataFailsItsCrc) {
  std::string bytes = make_archive(sample());
  ZipReader r0(memory_source(bytes.data(), bytes.size()));
  uint64_t off = r0.data_offset(r0.entry("archive/data/0"));
  bytes[off + 100] ^= 0x10;
  ZipReader r(memory_source(bytes.data(), bytes.size()));
  const ZipEntry& e = r.entry("archive/data/0");
  std::vector<uint8_t> buf(e.size);
  try {
    r.read(e, buf.data(), e.size);
    FAIL() << "no CRC error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("CRC-32 mismatch in record archive/data/0"), std::string::npos);
  }
  r.read(e, buf.data(), e.size, /*check_crc=*/false);      // mmap-style readers skip it
  EXPECT_THROW(r.read(e, buf.data(), e.size - 1), Error);  // the caller's size must match
}

TEST(ZipArchive, HostileSizesAndOffsetsRaiseBeforeAllocating) {
  const std::string good = make_archive(sample());
  size_t c = find_sig(good, "PK\x01\x02");
  size_t end = good.size() - 22, end64 = end - 20 - 56;
  struct Patch {
    size_t at;
    uint64_t value;
    int width;
    const char* expect;
  };
  const uint64_t huge = uint64_t{1} << 62;
  std::vector<Patch> patches = {
      {c + 20, 0xFFFFFFF0u, 4, "claims"},                 // compressed size beyond the file
      {c + 24, 0xFFFFFFF0u, 4, "stored record"},          // size != compressed size
      {c + 42, 0x7FFFFFF0u, 4, "outside the records"},    // local header offset beyond the file
      {c + 28, 0xFFFFu, 2, "runs past the directory"},    // name length
      {end64 + 32, huge, 8, "cannot fit"},                // entry count
      {end64 + 40, huge, 8, "lies outside the file"},     // central directory size
      {end64 + 48, huge, 8, "lies outside the file"},     // central directory offset
      {end - 20 + 8, huge, 8, "ZIP64 end record offset"}  // locator
  };
  for (const auto& p : patches) {
    std::string bad = good;
    if (p.width == 2) {
      bad[p.at] = static_cast<char>(p.value & 0xFF);
      bad[p.at + 1] = static_cast<char>(p.value >> 8);
    } else if (p.width == 4) {
      put32(bad, p.at, static_cast<uint32_t>(p.value));
    } else {
      put64(bad, p.at, p.value);
    }
    try {
      read_all(bad);
      ADD_FAILURE() << "no error for patch at " << p.at;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p.expect), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_all("PK\x03\x04 not really a zip archive"), Error);
  EXPECT_THROW(read_all(""), Error);
}

TEST(ZipArchive, UnsupportedMethodsAreRefusedBeforeTheirSizeIsTrusted) {
  std::string bytes = make_archive(sample());
  size_t c = find_sig(bytes, "PK\x01\x02");
  bytes[c + 10] = 12;  // bzip2: its sizes are not bounded by anything we check
  put32(bytes, c + 20, 4);
  put32(bytes, c + 24, 0xFFFFFF00u);  // a 4 GiB claim
  ZipReader r(memory_source(bytes.data(), bytes.size()));
  EXPECT_THROW(r.data_offset(r.entries()[0]), NotImplementedError);  // before any buffer is sized
  EXPECT_THROW(r.read(r.entries()[0].name), NotImplementedError);
  bytes[c + 10] = 0, bytes[c + 8] |= 1;  // stored but encrypted
  put32(bytes, c + 20, 157);
  put32(bytes, c + 24, 157);
  ZipReader r2(memory_source(bytes.data(), bytes.size()));
  EXPECT_THROW(r2.data_offset(r2.entries()[0]), Error);
}

TEST(ZipArchive, DuplicateNamesAreRefused) {
  std::string bytes = make_archive({{"a/x", "1"}, {"a/y", "2"}});
  for (size_t at = bytes.find("a/y"); at != std::string::npos; at = bytes.find("a/y", at + 1)) bytes[at + 2] = 'x';
  try {
    read_all(bytes);
    FAIL() << "duplicate accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("appears twice"), std::string::npos);
  }
}

// A one-record archive with a deflated record, assembled by hand (ember never writes one; zip
// tools that repack a checkpoint may).
std::string deflated_archive(const std::string& data, uint64_t claimed_size) {
  libdeflate_compressor* c9 = libdeflate_alloc_compressor(9);
  std::string comp(libdeflate_deflate_compress_bound(c9, data.size()), '\0');
  comp.resize(libdeflate_deflate_compress(c9, data.data(), data.size(), comp.data(), comp.size()));
  libdeflate_free_compressor(c9);
  uint32_t crc = reference_crc(data);
  std::string name = "a/data.pkl", out(30, '\0');
  put32(out, 0, 0x04034b50);
  out[4] = 20, out[8] = 8;
  put32(out, 14, crc);
  put32(out, 18, static_cast<uint32_t>(comp.size()));
  put32(out, 22, static_cast<uint32_t>(claimed_size));
  out[26] = static_cast<char>(name.size());
  out += name + comp;
  size_t cd = out.size();
  std::string c(46, '\0');
  put32(c, 0, 0x02014b50);
  c[4] = 20, c[6] = 20, c[10] = 8;
  put32(c, 16, crc);
  put32(c, 20, static_cast<uint32_t>(comp.size()));
  put32(c, 24, static_cast<uint32_t>(claimed_size));
  c[28] = static_cast<char>(name.size());
  out += c + name;
  std::string e(22, '\0');
  put32(e, 0, 0x06054b50);
  e[8] = e[10] = 1;
  put32(e, 12, static_cast<uint32_t>(out.size() - cd));
  put32(e, 16, static_cast<uint32_t>(cd));
  return out + e;
}

TEST(ZipArchive, DeflatedRecordsInflateWithinTheirClaim) {
  std::string data = std::string(5000, 'a') + pattern(3000, 4);
  std::string ok = deflated_archive(data, data.size());
  ZipReader r(memory_source(ok.data(), ok.size()));
  EXPECT_EQ(r.entry("a/data.pkl").method, 8);
  EXPECT_EQ(r.read("a/data.pkl"), data);
  EXPECT_THROW(read_all(deflated_archive(data, data.size() - 1)), Error);  // more data than claimed
  EXPECT_THROW(read_all(deflated_archive(data, data.size() + 1)), Error);  // less
  // A zip bomb's claim (far beyond deflate's 1032:1 limit) fails when the archive is opened.
  std::string small = std::string(100, 'z');
  try {
    read_all(deflated_archive(small, 0xFFFFFF00u));
    FAIL() << "bomb accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compressed bytes"), std::string::npos) << e.what();
  }
}

TEST(ZipArchive, AtomicFileAppearsOnlyWhenFinished) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("ember_zip_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "ckpt.pt").string();
  {
    ZipWriter w = ZipWriter::to_file(path);
    w.write_record("ckpt/data.pkl", "old", 3);
    EXPECT_FALSE(fs::exists(path));  // only the temporary file exists so far
    w.finish();
  }
  {
    ZipWriter w = ZipWriter::to_file(path);
    w.write_record("ckpt/data.pkl", "new", 3);
    w.abort();  // e.g. an exception mid-save: the old checkpoint stays
  }
  {
    ZipWriter w = ZipWriter::to_file(path);
    w.write_record("ckpt/data.pkl", "newer", 5);
  }  // destroyed unfinished: same
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  ZipReader r = ZipReader::open(path);
  EXPECT_EQ(r.read("ckpt/data.pkl"), "old");
  EXPECT_THROW(ZipReader::open((dir / "missing.pt").string()), Error);
  fs::remove_all(dir);
}

TEST(ZipArchive, MappedRecordsAliasTheFileCopyOnWrite) {
  namespace fs = std::filesystem;
  std::string path = (fs::temp_directory_path() / ("ember_map_test_" + std::to_string(::getpid()) + ".pt")).string();
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  {
    ZipWriter w = ZipWriter::to_file(path);
    w.write_record("m/data/0", values.data(), values.size() * sizeof(float));
    w.finish();
  }
  Storage st;
  {
    auto mf = MappedFile::open(path);
    ZipReader r(mf->source());
    uint64_t off = r.data_offset(r.entry("m/data/0"));
    st = mf->storage(off, values.size() * sizeof(float));
    EXPECT_EQ(st->data(), mf->data() + off);  // no copy
    EXPECT_THROW(mf->storage(off, mf->size()), Error);
  }  // the storage keeps the mapping alive
  Tensor t(IntrusivePtr<TensorImpl>::make(st, ScalarType::Float32, Shape{1000}, Shape{1}, 0));
  EXPECT_EQ(t.data<float>()[10], 5.0f);
  t.data<float>()[10] = -1.0f;  // private mapping: the file keeps its bytes
  ZipReader again = ZipReader::open(path);
  std::string raw = again.read("m/data/0");
  float v;
  std::memcpy(&v, raw.data() + 40, 4);
  EXPECT_EQ(v, 5.0f);
  std::remove(path.c_str());
}
