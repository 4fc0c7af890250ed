// NumPy interop without NumPy's C API: arrays are read through the buffer protocol (PEP 3118)
// and tensors are handed to NumPy as buffer exporters, so neither side copies.
#include <algorithm>
#include <bit>
#include <string_view>

#include "interop.h"

namespace ember::py {
namespace {

// Strong references to NumPy's types, filled the first time NumPy is found in sys.modules.
PyObject* g_ndarray_type = nullptr;
PyObject* g_generic_type = nullptr;
PyObject* g_asarray = nullptr;

bool numpy_loaded() {
  if (g_ndarray_type) return true;
  static PyObject* name = PyUnicode_InternFromString("numpy");
  PyObject* np = PyImport_GetModule(name);  // no import: see Note [Lazy NumPy]
  if (!np) {
    PyErr_Clear();
    return false;
  }
  PyObject* nd = PyObject_GetAttrString(np, "ndarray");
  PyObject* gen = PyObject_GetAttrString(np, "generic");
  Py_DECREF(np);
  if (!nd || !gen || !PyType_Check(nd) || !PyType_Check(gen)) {  // NumPy still half-initialised
    PyErr_Clear();
    Py_XDECREF(nd);
    Py_XDECREF(gen);
    return false;
  }
  g_ndarray_type = nd;
  g_generic_type = gen;
  return true;
}

constexpr const char* kSupportedNumpyTypes =
    "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.";

std::string numpy_type_name(nb::handle array_or_scalar) {
  try {
    nb::object t = array_or_scalar.attr("dtype").attr("type");
    return nb::cast<std::string>(t.attr("__module__")) + "." + nb::cast<std::string>(t.attr("__name__"));
  } catch (const nb::python_error&) {
    return Py_TYPE(array_or_scalar.ptr())->tp_name;
  }
}

[[noreturn]] void throw_unsupported(nb::handle obj) {
  throw ember::TypeError(detail::str_cat("can't convert np.ndarray of type ", numpy_type_name(obj),
                                         ". The only supported types are: ", kSupportedNumpyTypes));
}

// PEP 3118 format (as NumPy writes it) + item size -> dtype; Undefined when ember has none.
// `foreign_order` is set for explicitly non-native byte order.
ScalarType dtype_from_format(const char* fmt, Py_ssize_t itemsize, bool& foreign_order) {
  foreign_order = false;
  std::string_view f = fmt ? fmt : "B";
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<' || f[0] == '>' || f[0] == '!')) {
    constexpr bool little = std::endian::native == std::endian::little;
    foreign_order = little ? (f[0] == '>' || f[0] == '!') : f[0] == '<';
    f.remove_prefix(1);
  }
  if (f.size() == 2 && f[0] == 'Z') {
    if (f[1] == 'f' && itemsize == 8) return ScalarType::Complex64;
    if (f[1] == 'd' && itemsize == 16) return ScalarType::Complex128;
    return ScalarType::Undefined;
  }
  if (f.size() != 1) return ScalarType::Undefined;
  switch (f[0]) {
    case '?':
      return ScalarType::Bool;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      switch (itemsize) {
        case 1:
          return ScalarType::Int8;
        case 2:
          return ScalarType::Int16;
        case 4:
          return ScalarType::Int32;
        case 8:
          return ScalarType::Int64;
      }
      return ScalarType::Undefined;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
      return itemsize == 1 ? ScalarType::UInt8 : ScalarType::Undefined;
    case 'e':
      return ScalarType::Float16;
    case 'f':
      return itemsize == 4 ? ScalarType::Float32 : ScalarType::Undefined;
    case 'd':
      return itemsize == 8 ? ScalarType::Float64 : ScalarType::Undefined;
  }
  return ScalarType::Undefined;
}

const char* format_of(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "?";
    case ScalarType::UInt8:
      return "B";
    case ScalarType::Int8:
      return "b";
    case ScalarType::Int16:
      return "h";
    case ScalarType::Int32:
      return "i";
    case ScalarType::Int64:
      return "q";
    case ScalarType::Float16:
      return "e";
    case ScalarType::Float32:
      return "f";
    case ScalarType::Float64:
      return "d";
    case ScalarType::Complex64:
      return "Zf";
    case ScalarType::Complex128:
      return "Zd";
    default:  // PyTorch's spelling of the type NumPy lacks
      throw ember::TypeError(
          detail::str_cat("Got unsupported ScalarType ", t == ScalarType::BFloat16 ? "BFloat16" : dtype_name(t)));
  }
}

// Bytes a strided layout touches, from the first element (strides in elements, all >= 0).
size_t extent_bytes(IntArrayRef sizes, IntArrayRef strides, size_t itemsize) {
  int64_t last = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return static_cast<size_t>(last + 1) * itemsize;
}

// What Tensor.numpy() hands to NumPy: a buffer exporter that owns a reference to the tensor.
struct ArrayOwner {
  Tensor tensor;
  std::vector<Py_ssize_t> shape, strides;  // strides in bytes
  const char* format;
};

int owner_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  ArrayOwner* o = nb::inst_ptr<ArrayOwner>(self);
  const Tensor& t = o->tensor;
  if (!(flags & PyBUF_STRIDES) && !t.is_contiguous()) {
    PyErr_SetString(PyExc_BufferError, "ember: tensor is not contiguous; a strided buffer request is needed");
    return -1;
  }
  view->buf = t.data_ptr();
  view->obj = Py_NewRef(self);
  view->len = static_cast<Py_ssize_t>(t.numel() * static_cast<int64_t>(t.element_size()));
  view->readonly = 0;
  view->itemsize = static_cast<Py_ssize_t>(t.element_size());
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(o->format) : nullptr;
  view->ndim = static_cast<int>(t.dim());
  view->shape = (flags & PyBUF_ND) ? o->shape.data() : nullptr;
  view->strides = (flags & PyBUF_STRIDES) ? o->strides.data() : nullptr;
  view->suboffsets = nullptr;
  view->internal = nullptr;
  return 0;
}

PyType_Slot g_owner_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(owner_getbuffer)}, {0, nullptr}};

// Keeps a buffer export (e.g. of a bytearray) open for as long as a tensor uses its memory.
void release_buffer_with_gil(void*, void* ctx) {
  auto* view = static_cast<Py_buffer*>(ctx);
  with_gil([view] { PyBuffer_Release(view); });
  delete view;
}

Tensor wrap_foreign(size_t nbytes, DataPtr owner, ScalarType dtype, Shape sizes, Shape strides) {
  Storage st = IntrusivePtr<StorageImpl>::make(std::move(owner), nbytes, Device());
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(st), dtype, std::move(sizes), std::move(strides), 0));
}

}  // namespace

void decref_with_gil(void*, void* obj) {
  with_gil([obj] { Py_DECREF(static_cast<PyObject*>(obj)); });
}

bool is_ndarray(PyObject* o) {
  if (PyFloat_Check(o) || PyLong_Check(o)) return false;  // `t + 1`: skip the sys.modules lookup
  return numpy_loaded() && PyObject_TypeCheck(o, (PyTypeObject*)g_ndarray_type);
}
bool is_numpy_scalar(PyObject* o) { return numpy_loaded() && PyObject_TypeCheck(o, (PyTypeObject*)g_generic_type); }

ScalarType numpy_scalar_dtype(PyObject* o) {
  // NumPy's scalar types are few and immortal: remember each one's dtype by type object.
  static std::vector<std::pair<PyTypeObject*, ScalarType>> cache;
  for (auto& [type, st] : cache)
    if (type == Py_TYPE(o)) return st;
  nb::handle h(o);
  nb::object dt = h.attr("dtype");
  std::string kind = nb::cast<std::string>(dt.attr("kind"));
  auto size = nb::cast<int64_t>(dt.attr("itemsize"));
  ScalarType st = ScalarType::Undefined;
  if (kind == "b") {
    st = ScalarType::Bool;
  } else if (kind == "i") {
    st = size == 1   ? ScalarType::Int8
         : size == 2 ? ScalarType::Int16
         : size == 4 ? ScalarType::Int32
                     : ScalarType::Int64;
  } else if (kind == "u" && size == 1) {
    st = ScalarType::UInt8;
  } else if (kind == "f" && size <= 8) {
    st = size == 2 ? ScalarType::Float16 : size == 4 ? ScalarType::Float32 : ScalarType::Float64;
  } else if (kind == "c" && size <= 16) {
    st = size == 8 ? ScalarType::Complex64 : ScalarType::Complex128;
  }
  if (st == ScalarType::Undefined) throw_unsupported(h);
  Py_INCREF(Py_TYPE(o));
  cache.emplace_back(Py_TYPE(o), st);
  return st;
}

Tensor from_numpy(nb::handle array, bool warn_if_readonly) {
  PyObject* o = array.ptr();
  if (!is_ndarray(o)) throw ember::TypeError(detail::str_cat("expected np.ndarray (got ", Py_TYPE(o)->tp_name, ")"));
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) != 0) {  // datetime, strings of some kinds, ...
    PyErr_Clear();
    throw_unsupported(array);
  }
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};  // the array itself (referenced below) keeps the memory alive

  bool foreign_order = false;
  ScalarType dtype = dtype_from_format(view.format, view.itemsize, foreign_order);
  if (dtype == ScalarType::Undefined) throw_unsupported(array);
  EMBER_CHECK_VALUE(!foreign_order,
                    "given numpy array has byte order different from the native byte order. Conversion between byte "
                    "orders is currently not supported.");
  const int64_t item = view.itemsize;
  Shape sizes(view.shape, view.shape + view.ndim), strides(view.strides, view.strides + view.ndim);
  // NumPy's buffer export rewrites the strides of contiguous arrays into canonical ones, which
  // only differ from the array's own where a dim has size 0 or 1: read those from the array.
  if (std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s <= 1; })) {
    nb::tuple own = nb::cast<nb::tuple>(array.attr("strides"));
    for (int d = 0; d < view.ndim; ++d) strides[d] = nb::cast<int64_t>(own[d]);
  }
  for (int d = 0; d < view.ndim; ++d) {
    int64_t s = strides[d];
    EMBER_CHECK_VALUE(s >= 0,
                      "At least one stride in the given numpy array is negative, and tensors with negative strides are "
                      "not currently supported. (You can probably work around this by making a copy of your array  "
                      "with array.copy().) ");
    EMBER_CHECK_VALUE(s % item == 0,
                      "given numpy array strides not a multiple of the element byte size. Copy the numpy array to "
                      "reallocate the memory.");
    strides[d] = s / item;
  }
  if (view.readonly && warn_if_readonly) {
    static bool warned = false;  // once per process, as PyTorch does
    if (!warned) {
      warned = true;
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "The given NumPy array is not writable, and ember does not support non-writable tensors. "
                       "Writing to this tensor will result in undefined behavior. You may want to copy the array to "
                       "protect its data or make it writable before converting it to a tensor. This type of warning "
                       "will be suppressed for the rest of this program.",
                       1) != 0)
        throw nb::python_error();
    }
  }
  size_t nbytes = extent_bytes(sizes, strides, static_cast<size_t>(item));
  Py_INCREF(o);
  return wrap_foreign(nbytes, DataPtr(view.buf, o, &decref_with_gil), dtype, std::move(sizes), std::move(strides));
}

Tensor from_buffer(nb::handle obj, ScalarType dtype) {
  auto* view = new Py_buffer;
  if (PyObject_GetBuffer(obj.ptr(), view, PyBUF_SIMPLE) != 0) {
    delete view;
    throw nb::python_error();
  }
  DataPtr owner(view->buf, view, &release_buffer_with_gil);
  auto item = static_cast<Py_ssize_t>(element_size(dtype));
  EMBER_CHECK_VALUE(view->len % item == 0, "buffer length (", view->len,
                    " bytes) after offset (0 bytes) must be a multiple of element size (", item, ")");
  int64_t n = view->len / item;
  return wrap_foreign(static_cast<size_t>(view->len), std::move(owner), dtype, Shape{n}, Shape{1});
}

nb::object to_numpy(const Tensor& t) {
  EMBER_CHECK_TYPEERR(t.device().is_cpu(), "can't convert ", t.device().str(),
                      " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.");
  const char* fmt = format_of(t.dtype());
  if (!g_asarray) {
    nb::module_ np = nb::module_::import_("numpy");  // first use: see Note [Lazy NumPy]
    g_asarray = nb::object(np.attr("asarray")).release().ptr();
  }
  ArrayOwner owner{t, {}, {}, fmt};
  auto item = static_cast<Py_ssize_t>(t.element_size());
  owner.shape.assign(t.sizes().begin(), t.sizes().end());
  for (int64_t s : t.strides()) owner.strides.push_back(static_cast<Py_ssize_t>(s) * item);
  nb::object holder = nb::cast(std::move(owner));
  PyObject* arr = PyObject_CallOneArg(g_asarray, holder.ptr());
  if (!arr) throw nb::python_error();
  return nb::steal(arr);
}

void bind_numpy(nb::module_& m) {
  nb::class_<ArrayOwner>(m, "_NumpyBufferOwner", nb::type_slots(g_owner_slots));
  m.def(
      "from_numpy", [](nb::handle a) { return from_numpy(a); }, nb::arg("ndarray"));
}

}  // namespace ember::py
