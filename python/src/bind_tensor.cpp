// The Tensor class: properties, views, conversion, indexing.
#include <algorithm>

#include "common.h"
#include "interop.h"

namespace ember::py {
namespace {

nb::object size_object(IntArrayRef sizes) {
  // tuple.__new__(Size, ints): skips Size.__new__'s per-item checks, the ints are known good.
  // Released handles (Note [Process-lifetime Python objects], common.h).
  static nb::handle size_cls = nb::object(nb::module_::import_("ember._size").attr("Size")).release();
  static nb::handle tuple_new =
      nb::object(nb::borrow(reinterpret_cast<PyObject*>(&PyTuple_Type)).attr("__new__")).release();
  nb::list l;
  for (int64_t s : sizes) l.append(s);
  return tuple_new(size_cls, l);
}

nb::object scalar_to_py(const Scalar& s) {
  if (s.is_bool()) return nb::bool_(s.to_bool());
  if (s.is_integral()) return nb::int_(s.to_int());
  if (s.is_complex()) {
    std::complex<double> c = s.to_complex();
    return nb::steal(PyComplex_FromDoubles(c.real(), c.imag()));
  }
  return nb::float_(s.to_double());
}

template <typename T>
nb::object py_value(T v) {
  if constexpr (is_complex_v<T>)
    return nb::steal(PyComplex_FromDoubles(v.real(), v.imag()));
  else if constexpr (std::is_same_v<T, bool>)
    return nb::bool_(v);
  else if constexpr (std::is_integral_v<T>)
    return nb::int_(static_cast<int64_t>(v));
  else
    return nb::float_(static_cast<double>(static_cast<opmath_t<T>>(v)));
}

// Lists are made at their final length and filled in place; the last dim's values with one dtype
// dispatch per row (one per element and growing appends: 2-2.7x torch's time).
nb::object tolist_rec(const Tensor& t, const char* p, int64_t d) {
  if (d == t.dim()) {
    return EMBER_DISPATCH_ALL_AND_COMPLEX(t.dtype(), "tolist",
                                          [&] { return py_value(*reinterpret_cast<const scalar_t*>(p)); });
  }
  const int64_t n = t.sizes()[d];
  // A size-1 dim may carry any stride (unfold with a huge step): never step along it.
  const int64_t step = n > 1 ? t.strides()[d] * static_cast<int64_t>(t.element_size()) : 0;
  nb::object l = nb::steal(PyList_New(static_cast<Py_ssize_t>(n)));
  if (!l.is_valid()) throw nb::python_error();
  if (d + 1 == t.dim()) {
    EMBER_DISPATCH_ALL_AND_COMPLEX(t.dtype(), "tolist", [&] {
      for (int64_t i = 0; i < n; ++i)
        PyList_SET_ITEM(l.ptr(), i, py_value(*reinterpret_cast<const scalar_t*>(p + i * step)).release().ptr());
    });
  } else {
    for (int64_t i = 0; i < n; ++i) PyList_SET_ITEM(l.ptr(), i, tolist_rec(t, p + i * step, d + 1).release().ptr());
  }
  return l;
}

// ---- indexing ----
// Note [Basic indexing]
// t[idx] with ints, slices (step > 0), None and Ellipsis is a view built from select / slice /
// unsqueeze, exactly as PyTorch; integer-like objects (NumPy ints, 0-d integer tensors and
// arrays) count as ints. Like PyTorch (unlike NumPy) several Ellipses are allowed, each skipping
// every dim the other items leave unindexed; where that runs past the last dim ember raises
// IndexError (PyTorch sometimes lets a full slice through there). Advanced indices (bools,
// tensors with dims, lists of ints, arrays) are collected per dim of that view and applied by
// ember::index / index_put_ (ops/index.cpp); ints stay selects, as in PyTorch.
struct IndexItem {
  enum Kind { Int, Slice, NewAxis, Ellipsis, Advanced } kind;
  int64_t value = 0;                         // Int
  Py_ssize_t start = 0, stop = 0, step = 1;  // Slice (PySlice_Unpack bounds)
  Tensor tensor = Tensor();                  // Advanced
};

int64_t index_int(PyObject* o) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) throw ember::ValueError("Overflow when unpacking long long");
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return static_cast<int64_t>(v);
}

// Integer value of an index-like object that is not a Python int, if it is one.
std::optional<int64_t> index_like(nb::handle h) {
  if (!PyIndex_Check(h.ptr())) return std::nullopt;
  PyObject* r = PyNumber_Index(h.ptr());
  if (!r) {  // e.g. a NumPy array with dims or a NumPy bool: not an integer
    PyErr_Clear();
    return std::nullopt;
  }
  nb::object owned = nb::steal(r);
  return index_int(owned.ptr());
}

IndexItem advanced_item(Tensor t) {
  EMBER_CHECK_INDEX(is_integral(t.dtype(), /*include_bool=*/true),
                    "tensors used as indices must be long, int, byte or bool tensors");
  return {IndexItem::Advanced, 0, 0, 0, 1, std::move(t)};
}

IndexItem parse_index_item(nb::handle h) {
  PyObject* o = h.ptr();
  if (h.is_none()) return {IndexItem::NewAxis};
  if (o == Py_Ellipsis) return {IndexItem::Ellipsis};
  if (PyBool_Check(o)) return advanced_item(full({}, Scalar(o == Py_True), ScalarType::Bool));
  if (PyLong_Check(o)) return {IndexItem::Int, index_int(o)};
  if (PySlice_Check(o)) {
    IndexItem it{IndexItem::Slice};
    if (PySlice_Unpack(o, &it.start, &it.stop, &it.step) < 0) throw nb::python_error();
    EMBER_CHECK_VALUE(it.step > 0, "step must be greater than zero");
    return it;
  }
  if (nb::isinstance<Tensor>(h)) {
    const Tensor& t = nb::cast<const Tensor&>(h);
    EMBER_CHECK_INDEX(is_integral(t.dtype(), /*include_bool=*/true),
                      "tensors used as indices must be long, int, byte or bool tensors");
    if (t.dim() == 0 && t.dtype() != ScalarType::Bool) return {IndexItem::Int, item(t).to_int()};
    return advanced_item(t);
  }
  if (PyUnicode_Check(o) || PyBytes_Check(o))
    throw ember::TypeError(detail::str_cat("invalid index of type ", Py_TYPE(o)->tp_name));
  if (auto v = index_like(h)) return {IndexItem::Int, *v};
  if (PySequence_Check(o) || is_ndarray(o)) {
    Tensor t = tensor_from_data(h, std::nullopt);
    if (t.numel() == 0 && !is_integral(t.dtype(), true)) t = to_dtype(t, ScalarType::Int64);  // x[[]]
    return advanced_item(t);
  }
  throw ember::IndexError(detail::str_cat(
      "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got ",
      Py_TYPE(o)->tp_name, ")"));
}

// NumPy's legacy rule, which PyTorch still follows (with a warning): a short list holding a
// slice, None, Ellipsis or another sequence is read as a tuple of indices.
bool treat_list_as_tuple(nb::handle list) {
  if (PyList_GET_SIZE(list.ptr()) >= 32) return false;
  for (nb::handle h : list) {
    PyObject* o = h.ptr();
    if (o == Py_None || o == Py_Ellipsis || PySlice_Check(o) || nb::isinstance<Tensor>(h)) return true;
    if (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o)) return true;
  }
  return false;
}

// The view the basic items select, plus the advanced indices (ember::index's format) to apply to it.
struct Indexed {
  Tensor view;
  TensorVec indices;
  bool advanced = false;
};

Indexed apply_index(const Tensor& self, nb::handle index) {
  std::vector<IndexItem> items;
  if (PyTuple_Check(index.ptr())) {
    for (nb::handle h : index) items.push_back(parse_index_item(h));
  } else if (PyList_Check(index.ptr()) && treat_list_as_tuple(index)) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "Using a non-tuple sequence for multidimensional indexing is deprecated; use x[tuple(seq)] "
                     "instead of x[seq]. In a future release it will be interpreted as a tensor index.",
                     1) < 0)
      throw nb::python_error();
    for (nb::handle h : index) items.push_back(parse_index_item(h));
  } else {
    items.push_back(parse_index_item(index));
    EMBER_CHECK_INDEX(!(self.dim() == 0 && items[0].kind == IndexItem::Int && !nb::isinstance<Tensor>(index)),
                      "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                      "to convert a 0-dim tensor to a number");
  }
  int64_t consumed = 0;  // dims of self the index addresses
  for (const IndexItem& it : items) {
    if (it.kind == IndexItem::Int || it.kind == IndexItem::Slice) ++consumed;
    if (it.kind == IndexItem::Advanced) consumed += it.tensor.dtype() == ScalarType::Bool ? it.tensor.dim() : 1;
  }
  EMBER_CHECK_INDEX(consumed <= self.dim(), "too many indices for tensor of dimension ", self.dim());
  Indexed r;
  Tensor t = self;
  int64_t dim = 0;         // where the next item applies in t
  int64_t report_dim = 0;  // PyTorch's dim number in error messages (selected dims still count)
  auto skip = [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) r.indices.push_back(Tensor());
    dim += n;
    report_dim += n;
  };
  for (const IndexItem& it : items) {
    switch (it.kind) {
      case IndexItem::NewAxis:
        t = unsqueeze(t, dim);
        skip(1);
        break;
      case IndexItem::Ellipsis:
        skip(self.dim() - consumed);
        break;
      case IndexItem::Slice:
        t = slice(t, dim, it.start, it.stop, it.step);
        skip(1);
        break;
      case IndexItem::Int: {
        // Past the last dim only after several Ellipses (each skips the unindexed dims, as PyTorch).
        int64_t size = dim < t.dim() ? t.sizes()[dim] : 0;
        EMBER_CHECK_INDEX(it.value >= -size && it.value < size, "index ", it.value, " is out of bounds for dimension ",
                          report_dim, " with size ", size);
        t = select(t, dim, it.value);
        ++report_dim;
        break;
      }
      case IndexItem::Advanced: {
        r.advanced = true;
        Tensor ix = it.tensor;
        if (ix.dtype() == ScalarType::Bool && ix.dim() == 0) {  // x[True]: a new dim of size 1, masked
          t = unsqueeze(t, dim);
          ix = reshape(ix, {1});
        }
        r.indices.push_back(ix);
        int64_t n = ix.dtype() == ScalarType::Bool ? ix.dim() : 1;
        dim += n;
        report_dim += n;
        break;
      }
    }
  }
  r.view = t;
  return r;
}

Tensor index_basic(const Tensor& self, nb::handle index) {
  Indexed ix = apply_index(self, index);
  if (ix.advanced) return ember::index(ix.view, ix.indices);
  return ix.view.is_same(self) ? alias(self) : ix.view;
}

}  // namespace

// PyTorch's legacy type name, used in its "can't assign" message.
std::string legacy_type_name(ScalarType t) {
  const char* n = "Tensor";
  switch (t) {
    case ScalarType::Bool:
      n = "BoolTensor";
      break;
    case ScalarType::UInt8:
      n = "ByteTensor";
      break;
    case ScalarType::Int8:
      n = "CharTensor";
      break;
    case ScalarType::Int16:
      n = "ShortTensor";
      break;
    case ScalarType::Int32:
      n = "IntTensor";
      break;
    case ScalarType::Int64:
      n = "LongTensor";
      break;
    case ScalarType::Float16:
      n = "HalfTensor";
      break;
    case ScalarType::BFloat16:
      n = "BFloat16Tensor";
      break;
    case ScalarType::Float32:
      n = "FloatTensor";
      break;
    case ScalarType::Float64:
      n = "DoubleTensor";
      break;
    default:
      break;
  }
  return std::string("ember.") + n;
}

namespace {

// t[index] = value: one fill_ or copy_ into the view, so the shared version goes up by one.
// As PyTorch, the value is made a tensor of self's dtype first (a number that does not fit
// raises before the index is looked at), and writing it checks the target for overlap.
void index_assign(Tensor& self, nb::handle index, nb::handle value) {
  Tensor v;
  if (nb::isinstance<Tensor>(value)) {
    v = nb::cast<const Tensor&>(value);
  } else {
    PyObject* o = value.ptr();
    Scalar s;
    if (PyLong_Check(o) && !PyBool_Check(o))
      s = Scalar(index_int(o));
    else if (PyUnicode_Check(o) || PySequence_Check(o) || !to_scalar(value, s))
      throw ember::TypeError(
          detail::str_cat("can't assign a ", Py_TYPE(o)->tp_name, " to a ", legacy_type_name(self.dtype())));
    ScalarType dt = self.dtype();
    if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)  // unchecked: too big becomes inf, as PyTorch
      v = to_dtype(full({}, s, s.is_floating() ? ScalarType::Float64 : s.natural_dtype()), dt);
    else
      v = full({}, s, dt);
  }
  Indexed ix = apply_index(self, index);
  if (ix.advanced) {
    int64_t lead = 0;  // leading size-1 dims of the value are dropped, as below
    while (lead < v.dim() && v.sizes()[lead] == 1) ++lead;
    Tensor src = lead > 0 ? reshape(v, Shape(v.sizes().begin() + lead, v.sizes().end())) : v;
    Tensor target = ix.view;
    index_put_(target, ix.indices, src);
    return;
  }
  Tensor dst = ix.view.is_same(self) ? alias(self) : ix.view;
  if (v.dim() == 0 && dst.sizes() != v.sizes()) {
    fill_(dst, v);
    return;
  }
  // Leading size-1 dims of the value are dropped, then it must broadcast to the target.
  int64_t lead = 0;
  while (lead < v.dim() && v.sizes()[lead] == 1) ++lead;
  Tensor src = lead > 0 ? view(v, Shape(v.sizes().begin() + lead, v.sizes().end())) : v;
  if (src.sizes() != dst.sizes()) src = expand(src, dst.sizes());
  copy_(dst, src);
}

// ---- argument helpers for the view methods ----

// memory_format objects: ember.contiguous_format etc.
struct MemoryFormatObj {
  MemoryFormat format;
};
nb::handle g_memory_formats[4];  // released (Note [Process-lifetime Python objects], common.h)

}  // namespace

MemoryFormat memory_format_arg(nb::handle h, MemoryFormat dflt, const char* op) {
  if (h.is_none()) return dflt;
  MemoryFormatObj* f = nullptr;
  if (!nb::try_cast<MemoryFormatObj*>(h, f) || !f)
    throw ember::TypeError(detail::str_cat(op, "(): argument 'memory_format' must be ember.memory_format, not ",
                                           Py_TYPE(h.ptr())->tp_name));
  return f->format;
}

// `*sizes` positionally or `kw=` by keyword (view(2, 3), view((2, 3)), view(size=(2, 3))).
Shape sizes_args_or_kw(nb::args args, nb::kwargs kw, const char* kw_name, const char* op) {
  if (kw.contains(kw_name)) {
    EMBER_CHECK_TYPEERR(args.size() == 0 && kw.size() == 1, op, "() got an unexpected combination of arguments");
    return sizes_from_handle(kw[kw_name], op);
  }
  if (kw.size() != 0)
    throw ember::TypeError(detail::str_cat(op, "() got an unexpected keyword argument '",
                                           nb::cast<std::string>(nb::str((*kw.begin()).first)), "'"));
  if (args.size() == 0)
    throw ember::TypeError(detail::str_cat(op, "() missing 1 required positional arguments: \"", kw_name, "\""));
  return sizes_from_args(args, op);
}

// One int of an int-list argument: beyond int64 it is torch's TypeError for the list, not the
// ValueError of a plain int slot (Note [Int overflow is ValueError] in common.h).
int64_t list_element(nb::handle h, const char* op, const char* arg, size_t pos) {
  int64_t v;
  if (nb::try_cast<int64_t>(h, v)) return v;
  if (PyLong_Check(h.ptr())) {
    g_int_overflow_arg = nullptr;
    throw ember::TypeError(detail::str_cat(op, "(): argument '", arg, "' failed to unpack the object at pos ", pos,
                                           " with error \"Overflow when unpacking long long\""));
  }
  return nb::cast<int64_t>(h);  // nanobind's TypeError for a non-int
}

// An int or a sequence of ints (movedim's source/destination).
Shape int_or_ints(nb::handle h, const char* op) {
  if (PyLong_Check(h.ptr())) return Shape{nb::cast<int64_t>(h)};
  return sizes_from_handle(h, op);
}

// narrow's start: an int or a 0-d integer tensor.
int64_t narrow_start(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) {
    const Tensor& s = nb::cast<const Tensor&>(h);
    EMBER_CHECK(s.dim() == 0 && is_integral(s.dtype(), /*include_bool=*/false),
                "start must be an 0-dim integral Tensor.");
    return item(s).to_int();
  }
  return nb::cast<int64_t>(h);
}

// A UserWarning given the first time each message comes up in the process (PyTorch's WARN_ONCE).
void warn_once(const std::string& msg) {
  static std::vector<std::string> given;  // guarded by the GIL
  if (std::find(given.begin(), given.end(), msg) != given.end()) return;
  given.push_back(msg);
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw nb::python_error();
}

// Core warnings (ember::warn_once) as UserWarnings; may run on an engine thread without the GIL.
void core_warning(const std::string& msg) {
  nb::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw nb::python_error();
}

// x.T, x.mT, x.H, x.mH, x.adjoint() (the H forms conjugate complex tensors).
Tensor reverse_dims(const Tensor& t) {
  if (t.dim() == 0)
    warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.");
  else if (t.dim() != 2)
    warn_once(
        "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
        "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
        "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.");
  Shape p(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) p[i] = t.dim() - 1 - i;
  return permute(t, p);
}
// `name` is "mT", "mH" or "adjoint()"; conjugating ones point at conj() for 0-d inputs.
Tensor matrix_transpose(const Tensor& t, const char* name) {
  std::string_view n(name);
  if (t.dim() == 0) {
    std::string msg = n == "mT"
                          ? "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases."
                      : n == "mH" ? "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj()."
                                  : "adjoint() is deprecated on 0-D tensors. Consider using x.conj().";
    warn_once(msg);
    return n == "mT" || !is_complex(t.dtype()) ? alias(t) : conj(t);
  }
  EMBER_CHECK(t.dim() >= 2, "tensor.", name, " is only supported on matrices or batches of matrices. Got ", t.dim(),
              "-D tensor.");
  return n == "mT" ? transpose(t, -2, -1) : conj(transpose(t, -2, -1));
}

// x.H: the conjugate transpose of a matrix.
Tensor matrix_h(const Tensor& t) {
  if (t.dim() == 0) {
    warn_once("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().");
    return is_complex(t.dtype()) ? conj(t) : alias(t);
  }
  EMBER_CHECK(t.dim() == 2, "tensor.H is only supported on matrices (2-D tensors). Got ", t.dim(), "-D tensor.",
              t.dim() > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  return conj(transpose(t, 0, 1));
}

namespace {
// The layout torch's suggest_memory_format names: channels-last only where t is dense in it and not
// also row-major (a tensor with size-1 dims can be both).
MemoryFormat suggested_format(const Tensor& t) {
  if (t.dim() == 4 && is_contiguous(t, MemoryFormat::ChannelsLast) && !t.is_contiguous())
    return MemoryFormat::ChannelsLast;
  if (t.dim() == 5 && is_contiguous(t, MemoryFormat::ChannelsLast3d) && !t.is_contiguous())
    return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

Tensor to_impl(const Tensor& t, std::optional<ScalarType> dtype, std::optional<Device> device, bool copy,
               MemoryFormat format) {
  if (device && !device->is_cpu())
    EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot move to ", device->str());
  const ScalarType dt = dtype.value_or(t.dtype());
  // As torch: t itself when nothing changes and its layout already is the one asked for.
  if (format == MemoryFormat::Preserve || (!copy && dt == t.dtype() && suggested_format(t) == format))
    return to_dtype(t, dt, copy);
  Tensor laid_out = clone(t, format);
  return dt == t.dtype() ? laid_out : to_dtype(laid_out, dt);
}

}  // namespace

void bind_tensor(nb::module_& m) {
  set_warn_hook(&core_warning);
  auto cls = nb::class_<Tensor>(m, "Tensor", nb::dynamic_attr(), nb::is_weak_referenceable());
  cls.def_prop_ro("shape", [](const Tensor& t) { return size_object(t.sizes()); })
      .def(
          "size",
          [](const Tensor& t, nb::handle dim) -> nb::object {
            if (dim.is_none()) return size_object(t.sizes());
            return nb::int_(t.size(nb::cast<int64_t>(dim)));
          },
          nb::arg("dim") = nb::none())
      .def_prop_ro("dtype", [](const Tensor& t) { return t.dtype(); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device(); })
      .def_prop_ro("ndim", &Tensor::dim)
      .def_prop_ro("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def_prop_ro("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def_prop_ro("_version", &Tensor::version)
      .def("dim", &Tensor::dim)
      .def("ndimension", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def(
          "stride",
          [](const Tensor& t, nb::handle dim) -> nb::object {
            if (dim.is_none()) return nb::tuple(nb::cast(t.strides()));
            return nb::int_(t.stride(nb::cast<int64_t>(dim)));
          },
          nb::arg("dim") = nb::none())
      .def("storage_offset", &Tensor::storage_offset)
      .def("data_ptr",  // 0 for a tensor with no elements, as PyTorch
           [](const Tensor& t) { return t.numel() == 0 ? uintptr_t(0) : reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("untyped_storage_ptr",
           [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()->storage()->data()); })
      .def("_storage_id", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()->storage().get()); })
      // t.untyped_storage() (python/ember/_storage.py): all the bytes of t's storage as a uint8 tensor
      // that shares them (offset 0, whatever t's own offset and shape).
      .def("_storage_bytes",
           [](const Tensor& t) {
             const Storage& s = t.impl()->storage();
             auto n = static_cast<int64_t>(s->nbytes());
             return Tensor(IntrusivePtr<TensorImpl>::make(s, ScalarType::UInt8, Shape{n}, Shape{1}, 0));
           })
      .def(
          "is_contiguous",
          [](const Tensor& t, nb::handle fmt) {
            return is_contiguous(t, memory_format_arg(fmt, MemoryFormat::Contiguous, "is_contiguous"));
          },
          nb::kw_only(), nb::arg("memory_format") = nb::none())
      .def("is_floating_point", [](const Tensor& t) { return is_floating_point(t.dtype()); })
      .def("is_complex", [](const Tensor& t) { return is_complex(t.dtype()); })
      .def(
          "contiguous",
          [](nb::handle self, nb::handle fmt) -> nb::object {
            const Tensor& t = nb::cast<const Tensor&>(self);
            Tensor r = contiguous(t, memory_format_arg(fmt, MemoryFormat::Contiguous, "contiguous"));
            return r.is_same(t) ? nb::borrow(self) : nb::cast(r);  // the same object, as PyTorch
          },
          nb::kw_only(), nb::arg("memory_format") = nb::none())
      .def(
          "clone",
          [](const Tensor& t, nb::handle fmt) {
            return clone(t, memory_format_arg(fmt, MemoryFormat::Preserve, "clone"));
          },
          nb::kw_only(), nb::arg("memory_format") = nb::none())
      .def("item", [](const Tensor& t) { return scalar_to_py(item(t)); })
      .def("tolist", [](const Tensor& t) { return tolist_rec(t, static_cast<const char*>(t.data_ptr()), 0); })
      .def("__len__",
           [](const Tensor& t) {
             EMBER_CHECK_TYPEERR(t.dim() > 0, "len() of a 0-d tensor");
             return t.sizes()[0];
           })
      .def("__iter__",  // over unbind(0), as torch; without it Python would iterate a 0-d tensor as empty
           [](const Tensor& t) {
             EMBER_CHECK_TYPEERR(t.dim() > 0, "iteration over a 0-d tensor");
             return nb::iter(nb::cast(unbind(t, 0)));
           })
      .def("__bool__",
           [](const Tensor& t) {
             EMBER_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
             return item(t).to_bool();
           })
      .def("__float__",
           [](const Tensor& t) {
             Scalar s = item(t);
             EMBER_CHECK(!s.is_complex() || s.to_complex().imag() == 0,
                         "value cannot be converted to type double without overflow");
             return s.to_double();
           })
      .def("__int__",
           [](const Tensor& t) {
             Scalar s = item(t);
             EMBER_CHECK(!s.is_complex() || s.to_complex().imag() == 0,
                         "value cannot be converted to type int64_t without overflow");
             if (s.is_integral() || s.is_bool()) return nb::steal(PyLong_FromLongLong(s.to_int()));
             // A float converts as Python's int(float): NaN raises ValueError, inf OverflowError, and
             // values beyond int64 stay exact (torch goes through a Python float too).
             PyObject* r = PyLong_FromDouble(s.to_double());
             if (!r) throw nb::python_error();
             return nb::steal(r);
           })
      .def("__complex__",
           [](const Tensor& t) {
             std::complex<double> c = item(t).to_complex();
             return nb::steal(PyComplex_FromDoubles(c.real(), c.imag()));
           })
      .def("__index__",
           [](const Tensor& t) {
             EMBER_CHECK_TYPEERR(is_integral(t.dtype(), true) && t.numel() == 1,
                                 "only integer tensors of a single element can be converted to an index");
             return item(t).to_int();
           })
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      // conversion
      .def(
          "to",
          [](const Tensor& t, nb::handle a, nb::handle b, bool copy, nb::handle dtype_kw, nb::handle device_kw,
             bool /*non_blocking*/, nb::handle format) {
            std::optional<ScalarType> dtype;
            std::optional<Device> device;
            for (nb::handle h : {a, b, dtype_kw, device_kw}) {
              if (h.is_none()) continue;
              ScalarType st;
              if (nb::try_cast<ScalarType>(h, st))
                dtype = st;
              else if (nb::isinstance<Tensor>(h))
                dtype = nb::cast<const Tensor&>(h).dtype(), device = nb::cast<const Tensor&>(h).device();
              else
                device = nb::cast<Device>(h);
            }
            return to_impl(t, dtype, device, copy, memory_format_arg(format, MemoryFormat::Preserve, "to"));
          },
          nb::arg("a") = nb::none(), nb::arg("b") = nb::none(), nb::arg("copy") = false, nb::arg("dtype") = nb::none(),
          nb::arg("device") = nb::none(), nb::arg("non_blocking") = false, nb::arg("memory_format") = nb::none())
      .def("type_as", [](const Tensor& t, const Tensor& o) { return to_dtype(t, o.dtype()); })
      .def("float", [](const Tensor& t) { return to_dtype(t, ScalarType::Float32); })
      .def("double", [](const Tensor& t) { return to_dtype(t, ScalarType::Float64); })
      .def("half", [](const Tensor& t) { return to_dtype(t, ScalarType::Float16); })
      .def("bfloat16", [](const Tensor& t) { return to_dtype(t, ScalarType::BFloat16); })
      .def("int", [](const Tensor& t) { return to_dtype(t, ScalarType::Int32); })
      .def("long", [](const Tensor& t) { return to_dtype(t, ScalarType::Int64); })
      .def("short", [](const Tensor& t) { return to_dtype(t, ScalarType::Int16); })
      .def("char", [](const Tensor& t) { return to_dtype(t, ScalarType::Int8); })
      .def("byte", [](const Tensor& t) { return to_dtype(t, ScalarType::UInt8); })
      .def("bool", [](const Tensor& t) { return to_dtype(t, ScalarType::Bool); })
      .def("cpu", [](const Tensor& t) { return t; })
      // views (ops/view.cpp); each shares storage and version counter with self
      .def("view",
           [](const Tensor& t, nb::args args, nb::kwargs kw) {
             ScalarType st;
             if (kw.contains("dtype") && args.size() == 0 && kw.size() == 1)
               return view_dtype(t, nb::cast<ScalarType>(kw["dtype"]));
             if (args.size() == 1 && kw.size() == 0 && nb::try_cast<ScalarType>(args[0], st)) return view_dtype(t, st);
             return view(t, sizes_args_or_kw(args, kw, "size", "view"));
           })
      .def(
          "view_as", [](const Tensor& t, const Tensor& o) { return view(t, o.sizes()); }, nb::arg("other"))
      .def("reshape", [](const Tensor& t, nb::args args,
                         nb::kwargs kw) { return reshape(t, sizes_args_or_kw(args, kw, "shape", "reshape")); })
      .def(
          "reshape_as", [](const Tensor& t, const Tensor& o) { return reshape(t, o.sizes()); }, nb::arg("other"))
      .def("ravel", [](const Tensor& t) { return view(contiguous(t), Shape{-1}); })
      .def("permute", [](const Tensor& t, nb::args args,
                         nb::kwargs kw) { return permute(t, sizes_args_or_kw(args, kw, "dims", "permute")); })
      .def(
          "transpose", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, nb::arg("dim0"),
          nb::arg("dim1"))
      .def(
          "swapaxes", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, nb::arg("axis0"),
          nb::arg("axis1"))
      .def(
          "swapdims", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, nb::arg("dim0"),
          nb::arg("dim1"))
      .def("t", [](const Tensor& t) { return t_(t); })
      .def_prop_ro("T", [](const Tensor& t) { return reverse_dims(t); })
      .def_prop_ro("mT", [](const Tensor& t) { return matrix_transpose(t, "mT"); })
      .def_prop_ro("mH", [](const Tensor& t) { return matrix_transpose(t, "mH"); })
      .def_prop_ro("H", [](const Tensor& t) { return matrix_h(t); })
      .def("adjoint", [](const Tensor& t) { return matrix_transpose(t, "adjoint()"); })
      .def(
          "movedim",
          [](const Tensor& t, nb::handle src, nb::handle dst) {
            return movedim(t, int_or_ints(src, "movedim"), int_or_ints(dst, "movedim"));
          },
          nb::arg("source"), nb::arg("destination"))
      .def(
          "moveaxis",
          [](const Tensor& t, nb::handle src, nb::handle dst) {
            return movedim(t, int_or_ints(src, "moveaxis"), int_or_ints(dst, "moveaxis"));
          },
          nb::arg("source"), nb::arg("destination"))
      .def("expand", [](const Tensor& t, nb::args args,
                        nb::kwargs kw) { return expand(t, sizes_args_or_kw(args, kw, "size", "expand")); })
      .def(
          "expand_as", [](const Tensor& t, const Tensor& o) { return expand(t, o.sizes()); }, nb::arg("other"))
      .def(
          "broadcast_to",
          [](const Tensor& t, nb::handle size) { return expand(t, sizes_from_handle(size, "broadcast_to")); },
          nb::arg("size"))
      .def(
          "squeeze", [](const Tensor& t, nb::handle dim) { return squeeze(t, dims_arg(dim)); },
          nb::arg("dim") = nb::none())
      .def(
          "unsqueeze", [](const Tensor& t, int64_t d) { return unsqueeze(t, d); }, nb::arg("dim"))
      .def(
          "flatten",
          [](nb::handle self, int64_t s, int64_t e) -> nb::object {
            const Tensor& t = nb::cast<const Tensor&>(self);
            Tensor r = flatten(t, s, e);
            return r.is_same(t) ? nb::borrow(self) : nb::cast(r);  // flatten(d, d) is self, as PyTorch
          },
          nb::arg("start_dim") = 0, nb::arg("end_dim") = -1)
      .def(
          "unflatten",
          [](const Tensor& t, int64_t d, nb::handle sizes) {
            return unflatten(t, d, sizes_from_handle(sizes, "unflatten"));
          },
          nb::arg("dim"), nb::arg("sizes"))
      .def(
          "narrow",
          [](const Tensor& t, int64_t d, nb::handle start, int64_t l) { return narrow(t, d, narrow_start(start), l); },
          nb::arg("dim"), nb::arg("start"), nb::arg("length"))
      .def(
          "select", [](const Tensor& t, int64_t d, int64_t i) { return select(t, d, i); }, nb::arg("dim"),
          nb::arg("index"))
      .def(
          "unfold", [](const Tensor& t, int64_t d, int64_t s, int64_t st) { return unfold(t, d, s, st); },
          nb::arg("dimension"), nb::arg("size"), nb::arg("step"))
      .def(
          "as_strided",
          [](const Tensor& t, nb::handle size, nb::handle stride, std::optional<int64_t> off) {
            return as_strided(t, sizes_from_handle(size, "as_strided"), sizes_from_handle(stride, "as_strided"), off);
          },
          nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none())
      // in-place mutation: each bumps the version counter (shared with every view) once
      // in-place mutation: each bumps the version counter (shared with every view) once and
      // returns self (the same Python object, as PyTorch)
      .def(
          "copy_",
          [](nb::handle self, const Tensor& src, bool) {
            copy_(nb::cast<Tensor&>(self), src);
            return nb::borrow(self);
          },
          nb::arg("src"), nb::arg("non_blocking") = false)
      .def(
          "fill_",
          [](nb::handle self, nb::handle v) {
            Tensor& t = nb::cast<Tensor&>(self);
            if (nb::isinstance<Tensor>(v)) {
              fill_(t, nb::cast<const Tensor&>(v));
            } else {
              Scalar s;
              EMBER_CHECK_TYPEERR(to_scalar(v, s), "fill_(): argument 'value' must be Number, not ",
                                  Py_TYPE(v.ptr())->tp_name);
              fill_(t, s);
            }
            return nb::borrow(self);
          },
          nb::arg("value"))
      .def("zero_",
           [](nb::handle self) {
             fill_(nb::cast<Tensor&>(self), 0);
             return nb::borrow(self);
           })
      .def("resize_",
           [](nb::handle self, nb::args args) {
             Tensor& t = nb::cast<Tensor&>(self);
             Shape sizes = sizes_args_or_kw(args, nb::kwargs(), "size", "resize_");
             if (sizes != t.sizes()) {  // resizing to the current shape changes nothing, as PyTorch
               resize_(t, sizes);
               t.bump_version();
             }
             return nb::borrow(self);
           })
      .def(
          "__getitem__", [](const Tensor& t, nb::handle idx) { return index_basic(t, idx); }, nb::arg("index").none())
      .def(
          "__setitem__", [](Tensor& t, nb::handle idx, nb::handle value) { index_assign(t, idx, value); },
          nb::arg("index").none(), nb::arg("value").none());

  // torch.memory_format and its four values.
  nb::class_<MemoryFormatObj>(m, "memory_format")
      .def("__repr__", [](const MemoryFormatObj& f) { return "ember." + std::string(memory_format_name(f.format)); })
      .def("__reduce__", [](const MemoryFormatObj& f) { return std::string(memory_format_name(f.format)); })
      .def("__eq__",
           [](const MemoryFormatObj& a, nb::handle b) {
             MemoryFormatObj* o = nullptr;
             return nb::try_cast<MemoryFormatObj*>(b, o) && o && o->format == a.format;
           })
      .def("__hash__", [](const MemoryFormatObj& f) { return static_cast<int>(f.format); });
  for (MemoryFormat f :
       {MemoryFormat::Contiguous, MemoryFormat::Preserve, MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d}) {
    g_memory_formats[static_cast<int>(f)] = nb::cast(MemoryFormatObj{f}).release();
    m.attr(std::string(memory_format_name(f)).c_str()) = g_memory_formats[static_cast<int>(f)];
  }
  // torch keeps this name for old code; it is the contiguous_format object itself.
  m.attr("legacy_contiguous_format") = g_memory_formats[static_cast<int>(MemoryFormat::Contiguous)];
}

}  // namespace ember::py
