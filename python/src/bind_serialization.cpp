// ember._C._serialization: the checkpoint archive (ember/serialize/zip_archive.h), mapped files
// and storage access for ember.save / ember.load (python/ember/serialization.py) and
// ember.utils.safetensors.
#include <optional>

#include "common.h"
#include "ember/serialize/io.h"
#include "ember/serialize/zip_archive.h"

namespace ember::py {
namespace {

using serialize::MappedFile;
using serialize::ReadSource;
using serialize::WriteSink;
using serialize::ZipReader;
using serialize::ZipWriter;

// A Python binary file object read through seek + readinto (the GIL stays held).
class PyFileSource final : public ReadSource {
 public:
  explicit PyFileSource(nb::object f) : f_(std::move(f)) {
    base_ = nb::cast<uint64_t>(f_.attr("tell")());
    f_.attr("seek")(0, 2);
    uint64_t end = nb::cast<uint64_t>(f_.attr("tell")());
    EMBER_CHECK(end >= base_, "the file object's end lies before its current position");
    size_ = end - base_;
    f_.attr("seek")(base_);
  }
  uint64_t size() const override { return size_; }
  bool thread_safe() const override { return false; }
  void read_at(uint64_t offset, void* dst, size_t n) override {
    EMBER_CHECK(offset <= size_ && n <= size_ - offset, "read of ", n, " bytes at offset ", offset,
                " runs past the end of the file (", size_, " bytes)");
    f_.attr("seek")(base_ + offset);
    auto* p = static_cast<char*>(dst);
    bool has_readinto = nb::hasattr(f_, "readinto");
    while (n > 0) {
      size_t got;
      if (has_readinto) {
        nb::object mv = nb::steal(PyMemoryView_FromMemory(p, static_cast<Py_ssize_t>(n), PyBUF_WRITE));
        if (!mv.is_valid()) throw nb::python_error();
        nb::object r = f_.attr("readinto")(mv);
        mv.attr("release")();  // the file must not keep a view of memory it does not own
        got = r.is_none() ? 0 : nb::cast<size_t>(r);
      } else {
        nb::object r = f_.attr("read")(n);
        nb::bytes b = nb::cast<nb::bytes>(r);
        got = b.size();
        EMBER_CHECK(got <= n, "the file object's read() returned more bytes than asked for");
        std::memcpy(p, b.c_str(), got);
      }
      EMBER_CHECK(got > 0 && got <= n, "unexpected end of file (was it truncated?)");
      p += got, n -= got;
    }
  }

 private:
  nb::object f_;
  uint64_t base_ = 0, size_ = 0;
};

// A Python binary file object written with write() (the GIL stays held).
class PyFileSink final : public WriteSink {
 public:
  explicit PyFileSink(nb::object f) : f_(std::move(f)) {}
  bool thread_safe() const override { return false; }
  void write(const void* data, size_t n) override {
    auto* p = static_cast<char*>(const_cast<void*>(data));
    while (n > 0) {
      nb::object mv = nb::steal(PyMemoryView_FromMemory(p, static_cast<Py_ssize_t>(n), PyBUF_READ));
      if (!mv.is_valid()) throw nb::python_error();
      nb::object r = f_.attr("write")(mv);
      mv.attr("release")();
      size_t put = r.is_none() ? n : nb::cast<size_t>(r);  // None: a writer that takes everything
      EMBER_CHECK(put > 0 && put <= n, "the file object's write() accepted ", put, " of ", n, " bytes");
      p += put, n -= put;
    }
  }
  void commit() override {
    if (nb::hasattr(f_, "flush")) f_.attr("flush")();
  }

 private:
  nb::object f_;
};

bool is_path(nb::handle h) { return PyUnicode_Check(h.ptr()) || nb::hasattr(h, "__fspath__"); }
std::string path_of(nb::handle h) {
  nb::object p = nb::module_::import_("os").attr("fspath")(h);
  EMBER_CHECK_TYPE(PyUnicode_Check(p.ptr()), TypeError, "expected a str path, got bytes");
  return nb::cast<std::string>(p);
}

struct PyMappedFile {
  IntrusivePtr<MappedFile> file;
};

Tensor bytes_tensor(Storage s) {
  int64_t n = static_cast<int64_t>(s->nbytes());
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(s), ScalarType::UInt8, Shape{n}, Shape{1}, 0));
}

// Runs f without the GIL when the archive's I/O never calls into Python.
template <typename F>
auto maybe_without_gil(bool release, F&& f) {
  std::optional<nb::gil_scoped_release> no_gil;
  if (release) no_gil.emplace();
  return f();
}

nb::str decode_name(const std::string& s) {
  // Hostile archives may hold names that are not UTF-8: shown with replacement characters.
  return nb::steal<nb::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

}  // namespace

void bind_serialization(nb::module_& root) {
  nb::module_ m = root.def_submodule("_serialization", "Checkpoint archives and storage access for ember.save/load");
  m.def("storage_nbytes", [](const Tensor& t) { return static_cast<int64_t>(t.impl()->storage()->nbytes()); });
  // The whole storage of t as a 1-d uint8 tensor (shares the memory; for reading its bytes).
  m.def("storage_bytes", [](const Tensor& t) { return bytes_tensor(t.impl()->storage()); });
  m.def(
      "crc32", [](nb::bytes b, uint32_t start) { return serialize::crc32(start, b.c_str(), b.size()); },
      nb::arg("data"), nb::arg("start") = 0);

  nb::class_<PyMappedFile>(m, "MappedFile", "A file mapped copy-on-write; tensors made from it alias the mapping")
      .def("__init__",
           [](PyMappedFile* self, nb::handle path) {
             std::string p = path_of(path);
             new (self) PyMappedFile{MappedFile::open(p)};
           })
      .def_prop_ro("size", [](const PyMappedFile& f) { return f.file->size(); })
      .def_prop_ro("path", [](const PyMappedFile& f) { return f.file->path(); })
      .def(
          "tensor",
          [](PyMappedFile& f, uint64_t offset, uint64_t nbytes) {
            return bytes_tensor(f.file->storage(offset, nbytes));
          },
          nb::arg("offset"), nb::arg("nbytes"), "bytes [offset, offset + nbytes) as a uint8 tensor aliasing the file")
      .def(
          "read",
          [](PyMappedFile& f, uint64_t offset, uint64_t nbytes) {
            EMBER_CHECK(offset <= f.file->size() && nbytes <= f.file->size() - offset, "bytes [", offset, ", ", offset,
                        " + ", nbytes, ") lie outside the file of ", f.file->size(), " bytes");
            return nb::bytes(reinterpret_cast<const char*>(f.file->data() + offset), nbytes);
          },
          nb::arg("offset"), nb::arg("nbytes"));

  nb::class_<ZipReader>(m, "ZipReader", "Reads torch's checkpoint archive (a path, a MappedFile or a binary file)")
      .def("__init__",
           [](ZipReader* self, nb::handle src) {
             if (nb::isinstance<PyMappedFile>(src)) {
               new (self) ZipReader(nb::cast<PyMappedFile&>(src).file->source());
             } else if (is_path(src)) {
               std::string p = path_of(src);
               nb::gil_scoped_release no_gil;
               new (self) ZipReader(serialize::file_source(p));
             } else {
               new (self) ZipReader(std::make_unique<PyFileSource>(nb::borrow(src)));
             }
           })
      .def_prop_ro("archive_size", &ZipReader::archive_size)
      .def("names",
           [](const ZipReader& r) {
             nb::list out;
             for (const auto& e : r.entries()) out.append(decode_name(e.name));
             return out;
           })
      .def("has_record", [](const ZipReader& r, const std::string& name) { return r.has_record(name); })
      .def(
          "size",
          [](ZipReader& r, const std::string& name) {
            const auto& e = r.entry(name);
            r.data_offset(e);  // a size safe to allocate: the record is readable and inside the file
            return e.size;
          },
          "a record's size once read (checked against the file first)")
      .def("is_stored", [](const ZipReader& r, const std::string& name) { return r.entry(name).method == 0; })
      .def("data_offset", [](ZipReader& r, const std::string& name) { return r.data_offset(r.entry(name)); })
      .def(
          "read",
          [](ZipReader& r, const std::string& name) {
            const auto& e = r.entry(name);
            r.data_offset(e);  // the extent is checked before anything is allocated
            nb::object out = nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(e.size)));
            if (!out.is_valid()) throw nb::python_error();
            char* dst = PyBytes_AS_STRING(out.ptr());
            maybe_without_gil(r.source().thread_safe(), [&] { r.read(e, dst, e.size); });
            return out;
          },
          "a record's bytes (CRC-32 checked)")
      .def(
          "read_into",
          [](ZipReader& r, const std::string& name, const Tensor& t, bool check_crc) {
            const auto& e = r.entry(name);
            EMBER_CHECK(t.device().is_cpu() && t.is_contiguous(), "read_into: needs a contiguous CPU tensor");
            uint64_t nbytes = static_cast<uint64_t>(t.numel()) * t.element_size();
            EMBER_CHECK(nbytes == e.size, "record ", name, " holds ", e.size, " bytes, the tensor ", nbytes);
            void* dst = t.data_ptr();
            maybe_without_gil(r.source().thread_safe(), [&] { r.read(e, dst, nbytes, check_crc); });
          },
          nb::arg("name"), nb::arg("out"), nb::arg("check_crc") = true,
          "reads a record straight into a tensor's memory (CRC-32 checked)");

  nb::class_<ZipWriter>(m, "ZipWriter",
                        "Writes torch's checkpoint archive to a path (atomically) or a binary file object")
      .def(
          "__init__",
          [](ZipWriter* self, nb::handle dst, uint64_t alignment, bool force_zip64) {
            serialize::ZipWriterOptions o;
            o.alignment = alignment;
            o.force_zip64 = force_zip64;
            if (is_path(dst))
              new (self) ZipWriter(serialize::atomic_file_sink(path_of(dst)), o);
            else
              new (self) ZipWriter(std::make_unique<PyFileSink>(nb::borrow(dst)), o);
          },
          nb::arg("target"), nb::arg("alignment") = 64, nb::arg("force_zip64") = false)
      .def_prop_ro("offset", &ZipWriter::offset)
      .def(
          "write_record",
          [](ZipWriter& w, const std::string& name, nb::handle data) {
            bool free_threaded = w.sink_thread_safe();
            if (nb::isinstance<Tensor>(data)) {
              const Tensor& t = nb::cast<const Tensor&>(data);
              EMBER_CHECK(t.device().is_cpu() && t.is_contiguous(), "write_record: needs a contiguous CPU tensor");
              uint64_t n = static_cast<uint64_t>(t.numel()) * t.element_size();
              const void* p = t.data_ptr();
              maybe_without_gil(free_threaded, [&] { w.write_record(name, p, n); });
              return;
            }
            Py_buffer view;
            if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
            try {
              maybe_without_gil(free_threaded,
                                [&] { w.write_record(name, view.buf, static_cast<uint64_t>(view.len)); });
            } catch (...) {
              PyBuffer_Release(&view);
              throw;
            }
            PyBuffer_Release(&view);
          },
          nb::arg("name"), nb::arg("data"), "one stored record from bytes-like data or a contiguous tensor")
      .def("finish", &ZipWriter::finish, "central directory and end records; a path is renamed into place")
      .def("abort", &ZipWriter::abort, "drops the output (a path's temporary file is removed)");
}

}  // namespace ember::py
