// The Tensor class: properties, views, conversion, indexing.
#include "common.h"

namespace ember::py {
namespace {

nb::object size_object(IntArrayRef sizes) {
  static nb::object size_cls = nb::module_::import_("ember._size").attr("Size");
  nb::list l;
  for (int64_t s : sizes) l.append(s);
  return size_cls(nb::tuple(l));
}

nb::object scalar_to_py(const Scalar& s) {
  if (s.is_bool()) return nb::bool_(s.to_bool());
  if (s.is_integral()) return nb::int_(s.to_int());
  return nb::float_(s.to_double());
}

nb::object tolist_rec(const Tensor& t, const char* p, int64_t d) {
  if (d == t.dim()) {
    return EMBER_DISPATCH_ALL(t.dtype(), "tolist", [&]() -> nb::object {
      scalar_t v = *reinterpret_cast<const scalar_t*>(p);
      if constexpr (std::is_same_v<scalar_t, bool>)
        return nb::bool_(v);
      else if constexpr (std::is_integral_v<scalar_t>)
        return nb::int_(static_cast<int64_t>(v));
      else
        return nb::float_(static_cast<double>(static_cast<opmath_t<scalar_t>>(v)));
    });
  }
  nb::list l;
  int64_t step = t.strides()[d] * static_cast<int64_t>(t.element_size());
  for (int64_t i = 0; i < t.sizes()[d]; ++i) l.append(tolist_rec(t, p + i * step, d + 1));
  return l;
}

// Basic indexing: ints, slices, None, Ellipsis (advanced indexing comes with the operator library).
Tensor index_basic(const Tensor& self, nb::handle index) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(index.ptr())) {
    for (nb::handle h : index) items.push_back(h);
  } else {
    items.push_back(index);
  }
  int64_t consumed = 0;  // dims of self the index addresses
  bool has_ellipsis = false;
  for (nb::handle h : items) {
    if (h.is_none()) continue;
    if (h.ptr() == Py_Ellipsis) {
      EMBER_CHECK_INDEX(!has_ellipsis, "an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
      continue;
    }
    if (PySlice_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr())) {
      ++consumed;
      continue;
    }
    if (PyBool_Check(h.ptr()) || nb::isinstance<Tensor>(h) || PySequence_Check(h.ptr()))
      EMBER_NOT_IMPLEMENTED(
          "advanced indexing (boolean masks, integer tensors or lists) is not implemented yet; "
          "only ints, slices, None and ... are supported");
    throw ember::IndexError(detail::str_cat(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got ",
        Py_TYPE(h.ptr())->tp_name, ")"));
  }
  EMBER_CHECK_INDEX(consumed <= self.dim(), "too many indices for tensor of dimension ", self.dim());
  Tensor t = self;
  int64_t dim = 0;
  for (nb::handle h : items) {
    if (h.is_none()) {
      t = unsqueeze(t, dim++);
    } else if (h.ptr() == Py_Ellipsis) {
      dim += self.dim() - consumed;
    } else if (PySlice_Check(h.ptr())) {
      auto* s = reinterpret_cast<PySliceObject*>(h.ptr());
      auto get = [](PyObject* o) -> std::optional<int64_t> {
        if (o == Py_None) return std::nullopt;
        return static_cast<int64_t>(PyNumber_AsSsize_t(o, PyExc_OverflowError));
      };
      auto step = get(s->step).value_or(1);
      t = slice(t, dim++, get(s->start), get(s->stop), step);
    } else {
      int64_t i = static_cast<int64_t>(PyNumber_AsSsize_t(h.ptr(), PyExc_OverflowError));
      t = select(t, dim, i);
    }
  }
  return t.is_same(self) ? alias(self) : t;
}

Tensor to_impl(const Tensor& t, std::optional<ScalarType> dtype, std::optional<Device> device, bool copy) {
  if (device && !device->is_cpu())
    EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot move to ", device->str());
  return to_dtype(t, dtype.value_or(t.dtype()), copy);
}

}  // namespace

void bind_tensor(nb::module_& m) {
  auto cls = nb::class_<Tensor>(m, "Tensor", nb::dynamic_attr());
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
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("untyped_storage_ptr",
           [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()->storage()->data()); })
      .def("is_contiguous", [](const Tensor& t) { return t.is_contiguous(); })
      .def("is_floating_point", [](const Tensor& t) { return is_floating_point(t.dtype()); })
      .def("is_complex", [](const Tensor& t) { return is_complex(t.dtype()); })
      .def("contiguous", [](const Tensor& t) { return contiguous(t); })
      .def("clone", [](const Tensor& t) { return clone(t); })
      .def("item", [](const Tensor& t) { return scalar_to_py(item(t)); })
      .def("tolist", [](const Tensor& t) { return tolist_rec(t, static_cast<const char*>(t.data_ptr()), 0); })
      .def("__len__",
           [](const Tensor& t) {
             EMBER_CHECK_TYPEERR(t.dim() > 0, "len() of a 0-d tensor");
             return t.sizes()[0];
           })
      .def("__bool__",
           [](const Tensor& t) {
             EMBER_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
             return item(t).to_bool();
           })
      .def("__float__", [](const Tensor& t) { return item(t).to_double(); })
      .def("__int__", [](const Tensor& t) { return item(t).to_int(); })
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
             bool /*non_blocking*/) {
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
            return to_impl(t, dtype, device, copy);
          },
          nb::arg("a") = nb::none(), nb::arg("b") = nb::none(), nb::arg("copy") = false, nb::arg("dtype") = nb::none(),
          nb::arg("device") = nb::none(), nb::arg("non_blocking") = false)
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
      // views
      .def("view",
           [](const Tensor& t, nb::args args) {
             ScalarType st;
             if (args.size() == 1 && nb::try_cast<ScalarType>(args[0], st)) return view_dtype(t, st);
             return view(t, sizes_from_args(args, "view"));
           })
      .def("view_as", [](const Tensor& t, const Tensor& o) { return view(t, o.sizes()); })
      .def("reshape", [](const Tensor& t, nb::args args) { return reshape(t, sizes_from_args(args, "reshape")); })
      .def("reshape_as", [](const Tensor& t, const Tensor& o) { return reshape(t, o.sizes()); })
      .def("permute", [](const Tensor& t, nb::args args) { return permute(t, sizes_from_args(args, "permute")); })
      .def("transpose", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); })
      .def("swapaxes", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); })
      .def("swapdims", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); })
      .def("t", [](const Tensor& t) { return t_(t); })
      .def_prop_ro("T",
                   [](const Tensor& t) {
                     Shape p(t.dim());
                     for (int64_t i = 0; i < t.dim(); ++i) p[i] = t.dim() - 1 - i;
                     return permute(t, p);
                   })
      .def_prop_ro("mT",
                   [](const Tensor& t) {
                     EMBER_CHECK(t.dim() >= 2, "tensor.mT is only supported on matrices or batches of matrices. Got ",
                                 t.dim(), "-D tensor.");
                     return transpose(t, -2, -1);
                   })
      .def("expand", [](const Tensor& t, nb::args args) { return expand(t, sizes_from_args(args, "expand")); })
      .def("expand_as", [](const Tensor& t, const Tensor& o) { return expand(t, o.sizes()); })
      .def(
          "squeeze", [](const Tensor& t, nb::handle dim) { return squeeze(t, dims_arg(dim)); },
          nb::arg("dim") = nb::none())
      .def(
          "unsqueeze", [](const Tensor& t, int64_t d) { return unsqueeze(t, d); }, nb::arg("dim"))
      .def(
          "flatten", [](const Tensor& t, int64_t s, int64_t e) { return flatten(t, s, e); }, nb::arg("start_dim") = 0,
          nb::arg("end_dim") = -1)
      .def(
          "unflatten",
          [](const Tensor& t, int64_t d, nb::handle sizes) {
            return unflatten(t, d, sizes_from_handle(sizes, "unflatten"));
          },
          nb::arg("dim"), nb::arg("sizes"))
      .def(
          "narrow", [](const Tensor& t, int64_t d, int64_t s, int64_t l) { return narrow(t, d, s, l); }, nb::arg("dim"),
          nb::arg("start"), nb::arg("length"))
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
      // in-place mutation
      .def(
          "copy_", [](Tensor& t, const Tensor& src, bool) -> Tensor { return copy_(t, src); }, nb::arg("src"),
          nb::arg("non_blocking") = false)
      .def("fill_",
           [](Tensor& t, nb::handle v) -> Tensor {
             Scalar s;
             EMBER_CHECK_TYPEERR(to_scalar(v, s), "fill_(): argument 'value' must be Number");
             return fill_(t, s);
           })
      .def("zero_", [](Tensor& t) -> Tensor { return fill_(t, 0); })
      .def("resize_", [](Tensor& t, nb::args args) -> Tensor { return resize_(t, sizes_from_args(args, "resize_")); })
      .def("__getitem__", [](const Tensor& t, nb::handle idx) { return index_basic(t, idx); })
      .def("__setitem__", [](Tensor& t, nb::handle idx, nb::handle value) {
        Tensor dst = index_basic(t, idx);
        Scalar s;
        if (to_scalar(value, s) && !nb::isinstance<Tensor>(value))
          fill_(dst, s);
        else
          copy_(dst, nb::cast<const Tensor&>(value));  // bumps the version shared with t
      });
}

}  // namespace ember::py
