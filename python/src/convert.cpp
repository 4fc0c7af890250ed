// dtype/device objects and argument conversions.
#include <nanobind/operators.h>

#include "common.h"
#include "ember/core/autocast.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/mkl_blas.h"
#include "ember/cpu/onednn.h"

namespace ember::py {
namespace {
nb::handle g_dtypes[kNumScalarTypes];  // released (Note [Process-lifetime Python objects], common.h)
}

nb::object dtype_object(ScalarType t) { return nb::borrow(g_dtypes[static_cast<int>(t)]); }

bool to_scalar(nb::handle h, Scalar& out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) {
    out = Scalar(o == Py_True);
    return true;
  }
  if (PyLong_CheckExact(o) || PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      // torch: beyond 64 bits is an OverflowError; [2^63, 2^64) it takes as uint64, which ember's
      // Scalar cannot hold (RuntimeError).
      PyLong_AsUnsignedLongLong(o);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_OverflowError, "int too big to convert");
        throw nb::python_error();
      }
      throw ember::Error("value cannot be converted to type int64 without overflow");
    }
    out = Scalar(static_cast<int64_t>(v));
    return true;
  }
  if (PyFloat_Check(o)) {
    out = Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (PyComplex_Check(o)) {  // also numpy.complex128, a complex subclass
    Py_complex c = PyComplex_AsCComplex(o);
    out = Scalar(std::complex<double>(c.real, c.imag));
    return true;
  }
  if (nb::isinstance<Tensor>(h)) {
    const Tensor& t = nb::cast<const Tensor&>(h);
    if (t.numel() != 1 || t.dim() != 0) return false;
    out = item(t);
    return true;
  }
  // NumPy scalars and other number-likes.
  std::string_view tname = Py_TYPE(o)->tp_name;
  if (tname == "numpy.bool" || tname == "numpy.bool_") {
    out = Scalar(PyObject_IsTrue(o) == 1);
    return true;
  }
  if (PyIndex_Check(o)) {
    out = Scalar(index_to_int64(o));
    return true;
  }
  if (tname == "numpy.complex64" || tname == "numpy.complex128" || tname == "numpy.clongdouble") {
    Py_complex c = PyComplex_AsCComplex(o);  // through __complex__
    if (c.real == -1.0 && PyErr_Occurred()) throw nb::python_error();
    out = Scalar(std::complex<double>(c.real, c.imag));
    return true;
  }
  if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    out = Scalar(v);
    return true;
  }
  return false;
}

void warn_if_out_resized(IntArrayRef from, int64_t numel_from, IntArrayRef to) {
  if (numel_from == 0 || from == to) return;
  std::string msg = detail::str_cat(
      "An output with one or more elements was resized since it had shape ", shape_str(from),
      ", which does not match the required output shape ", shape_str(to),
      ". This behavior is deprecated, and in a future PyTorch release outputs will not be resized unless they have "
      "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
      "t.resize_(0).");
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) != 0) throw nb::python_error();
}

Tensor tensor_arg(nb::handle h, const char* op_name) {
  Tensor* t = nullptr;
  if (nb::try_cast<Tensor*>(h, t) && t) return *t;
  Scalar s;
  if (to_scalar(h, s)) return scalar_tensor(s, std::nullopt, /*wrapped=*/true);
  throw ember::TypeError(
      detail::str_cat(op_name, "(): argument 'other' must be Tensor or Number, not ", Py_TYPE(h.ptr())->tp_name));
}

PyObject* g_int_overflow_arg = nullptr;  // Note [Int overflow is ValueError] (common.h)

int64_t index_to_int64(PyObject* o) {
  Py_ssize_t v = PyNumber_AsSsize_t(o, PyExc_OverflowError);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();  // OverflowError, as torch's parser
  return static_cast<int64_t>(v);
}

Shape sizes_from_handle(nb::handle h, const char* op_name) {
  Shape s;
  if (PyBool_Check(h.ptr()))  // Note [No bool for int]
    throw ember::TypeError(detail::str_cat(op_name, "(): argument 'size' must be tuple of ints, not bool"));
  // An int beyond int64 is torch's TypeError (its parser fails to unpack the size).
  auto size_item = [op_name](PyObject* o, size_t pos) -> int64_t {
    Py_ssize_t v = PyNumber_AsSsize_t(o, PyExc_OverflowError);
    if (v == -1 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw nb::python_error();
      PyErr_Clear();
      throw ember::TypeError(detail::str_cat(op_name, "(): argument 'size' failed to unpack the object at pos ", pos,
                                             " with error \"Overflow when unpacking long long\""));
    }
    return static_cast<int64_t>(v);
  };
  if (PyLong_Check(h.ptr())) {
    s.push_back(size_item(h.ptr(), 1));
    return s;
  }
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr()) || nb::isinstance<Tensor>(h))
    throw ember::TypeError(detail::str_cat(
        op_name, "(): argument 'size' must be tuple of ints, but found element of type ", Py_TYPE(h.ptr())->tp_name));
  for (nb::handle item : h) {
    if (!PyLong_Check(item.ptr()) && !PyIndex_Check(item.ptr()))
      throw ember::TypeError(detail::str_cat(op_name,
                                             "(): argument 'size' must be tuple of ints, but found element of type ",
                                             Py_TYPE(item.ptr())->tp_name));
    s.push_back(size_item(item.ptr(), s.size() + 1));
  }
  return s;
}

Shape sizes_from_args(nb::args args, const char* op_name) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return sizes_from_handle(args[0], op_name);
  return sizes_from_handle(args, op_name);
}

Scalar number_arg(nb::handle h, const char* op, const char* name) {
  Scalar s;
  if (!to_scalar(h, s))
    throw ember::TypeError(
        detail::str_cat(op, "(): argument '", name, "' must be Number, not ", Py_TYPE(h.ptr())->tp_name));
  return s;
}

OptDims dims_arg(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (PyBool_Check(h.ptr()))  // Note [No bool for int]
    throw ember::TypeError("argument 'dim' must be tuple of ints, not bool");
  if (PyLong_Check(h.ptr())) return std::vector<int64_t>{nb::cast<int64_t>(h)};
  if (nb::isinstance<Tensor>(h)) {  // a 0-d integer tensor is one dim, as an int would be
    const Tensor& t = nb::cast<const Tensor&>(h);
    if (t.dim() == 0 && is_integral(t.dtype(), false)) return std::vector<int64_t>{item(t).to_int()};
  }
  return sizes_from_handle(h, "dim");
}

void bind_dtype_device(nb::module_& m) {
  nb::class_<DType>(m, "dtype")
      .def_prop_ro("is_floating_point", [](const DType& d) { return is_floating_point(d.type); })
      .def_prop_ro("is_complex", [](const DType& d) { return is_complex(d.type); })
      .def_prop_ro("is_signed", [](const DType& d) { return is_signed(d.type); })
      .def_prop_ro("itemsize", [](const DType& d) { return element_size(d.type); })
      .def("__repr__", [](const DType& d) { return "ember." + std::string(dtype_name(d.type)); })
      .def("__reduce__", [](const DType& d) { return std::string(dtype_name(d.type)); })
      .def("__hash__", [](const DType& d) { return static_cast<int>(d.type); });
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto t = static_cast<ScalarType>(i);
    g_dtypes[i] = nb::cast(DType{t}).release();
    m.attr(std::string(dtype_name(t)).c_str()) = g_dtypes[i];
  }

  nb::class_<Device>(m, "device")
      .def(nb::init<const std::string&>())
      .def("__init__",
           [](Device* d, const std::string& type, int index) {
             new (d) Device(type);
             d->index = static_cast<int8_t>(index);
           })
      .def("__init__", [](Device* d, int index) { new (d) Device(DeviceType::CUDA, index); })
      .def("__init__", [](Device* d, const Device& other) { new (d) Device(other); })  // torch.device(a_device)
      .def_prop_ro("type", &Device::type_name)
      .def_prop_ro(
          "index",
          [](const Device& d) -> nb::object { return d.index < 0 ? nb::none() : nb::cast(static_cast<int>(d.index)); })
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__eq__", [](const Device&, nb::handle) { return false; })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) {
        std::string s = "device(type='" + d.type_name() + "'";
        if (d.index >= 0) s += ", index=" + std::to_string(d.index);
        return s + ")";
      });
  nb::implicitly_convertible<std::string, Device>();

  m.def("get_default_dtype", [] { return default_dtype(); });
  m.def("set_default_dtype", [](ScalarType t) { set_default_dtype(t); });
  m.def("promote_types", &promote_types);
  m.def("can_cast", &can_cast);
  m.def("get_num_threads", &get_num_threads);
  m.def("set_num_threads", &set_num_threads);
  // Note [Default thread count]: exposed for tests (a directory of fake cgroup files) and ember.__config__.
  m.def("_cgroup_cpu_limit", [](const std::string& dir) { return cgroup_cpu_limit(dir.c_str()); });
  m.def("_process_cpu_limit", &process_cpu_limit);
  // ember.backends.cpu: the kernels' instruction set (Note [Multi-ISA kernels] in cpu/isa.h).
  m.def("_get_cpu_capability", [] { return std::string(cpu::cpu_capability_name(cpu::cpu_capability())); });
  m.def("_get_cpu_capability_supported",
        [] { return std::string(cpu::cpu_capability_name(cpu::cpu_capability_supported())); });
  // Autocast state (Note [Autocast] in core/autocast.h); ember.amp.autocast drives it.
  auto device_of = [](const std::string& d) {
    if (d == "cpu") return DeviceType::CPU;
    if (d == "cuda") return DeviceType::CUDA;
    throw nb::value_error(("unsupported autocast device_type '" + d + "'").c_str());
  };
  m.def("_is_autocast_enabled", [device_of](const std::string& d) { return autocast::is_enabled(device_of(d)); });
  m.def("_set_autocast_enabled",
        [device_of](const std::string& d, bool on) { autocast::set_enabled(device_of(d), on); });
  m.def("_get_autocast_dtype", [device_of](const std::string& d) { return autocast::get_dtype(device_of(d)); });
  m.def("_set_autocast_dtype",
        [device_of](const std::string& d, ScalarType t) { autocast::set_dtype(device_of(d), t); });
  m.def("_is_autocast_cache_enabled", &autocast::is_cache_enabled);
  m.def("_set_autocast_cache_enabled", &autocast::set_cache_enabled);
  m.def("_autocast_increment_nesting", &autocast::increment_nesting);
  m.def("_autocast_decrement_nesting", &autocast::decrement_nesting);
  m.def("_clear_autocast_cache", &autocast::clear_cache);
  // ember.backends.mkldnn: float32 convolutions on oneDNN (Note [oneDNN convolution]).
  m.def("_get_mkldnn_enabled", &cpu::onednn_enabled);
  m.def("_set_mkldnn_enabled", &cpu::set_onednn_enabled);
  // ember.backends.mkl: float32/float64 GEMM on MKL where installed (Note [MKL GEMM]).
  m.def("_set_mkl_library_path", &cpu::set_mkl_library_path);
  m.def("_get_mkl_enabled", &cpu::mkl_enabled);
  m.def("_set_mkl_enabled", &cpu::set_mkl_enabled);
  m.def("_mkl_gemm_available", &cpu::mkl_gemm_available);
  m.def("_mkl_version", &cpu::mkl_version);
  m.def("_cpu_memory_stats", [] {
    MemoryStats s = cpu_memory_stats();
    nb::dict d;
    d["allocated_bytes"] = s.allocated_bytes;
    d["peak_allocated_bytes"] = s.peak_allocated_bytes;
    d["cached_bytes"] = s.cached_bytes;
    d["num_allocs"] = s.num_allocs;
    d["num_cache_hits"] = s.num_cache_hits;
    return d;
  });
  m.def("_cpu_reset_peak_stats", &cpu_reset_peak_stats);
  m.def("_cpu_empty_cache", &cpu_empty_cache);
  m.def("_cpu_cache_limit", &cpu_cache_limit);
  m.def("_cpu_set_cache_limit", [](int64_t bytes) {
    EMBER_CHECK(bytes >= 0, "set_cache_limit: expected a non-negative number of bytes, got ", bytes);
    cpu_set_cache_limit(static_cast<size_t>(bytes));
  });
}

}  // namespace ember::py

bool nanobind::detail::type_caster<ember::ScalarType>::from_python(handle src, uint8_t, cleanup_list*) noexcept {
  ember::py::DType* d = nullptr;
  if (!nb::try_cast<ember::py::DType*>(src, d) || !d) return false;
  value = d->type;
  return true;
}
