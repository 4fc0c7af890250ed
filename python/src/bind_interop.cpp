// ember.tensor and friends: Python data (nested sequences, scalars, ndarrays, tensors) -> Tensor,
// plus as_tensor, asarray, Tensor.new_*, *_like and the registration of the NumPy/DLPack bindings.
#include <cmath>
#include <limits>

#include "interop.h"

namespace ember::py {
namespace {

constexpr size_t kMaxDims = 64;

PyTypeObject* tensor_type() {
  static auto* t = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr());
  return t;
}
bool is_tensor(PyObject* o) { return PyObject_TypeCheck(o, tensor_type()); }
const Tensor& as_tensor_ref(PyObject* o) { return *nb::inst_ptr<Tensor>(o); }

[[noreturn]] void throw_python() { throw nb::python_error(); }

// Note [Nested data]: ember.tensor walks the data at most three times, as PyTorch defines it:
//  1. shape: follow the first element down while it is a sequence (tensors and NumPy scalars are
//     leaves here), so ragged data is caught by the length checks of step 3;
//  2. dtype (only without dtype=): promote over every leaf (bool < int64 < default float; NumPy
//     scalars, arrays and tensors bring their own dtype; an empty sequence counts as a float);
//  3. fill: check each sequence's length against the shape and convert each leaf straight into
//     the output buffer, with specialised loops for exact floats/ints in lists and tuples.

// Whether step 1 descends into `o`.
bool is_nested_sequence(PyObject* o) {
  if (PyList_Check(o) || PyTuple_Check(o)) return true;
  if (PyFloat_Check(o) || PyLong_Check(o) || is_tensor(o) || is_numpy_scalar(o)) return false;
  return PySequence_Check(o);
}

Shape infer_shape(PyObject* data) {
  Shape sizes;
  nb::object hold = nb::borrow(data);
  while (is_nested_sequence(hold.ptr())) {
    if (PyUnicode_Check(hold.ptr()))  // 'a'[0] == 'a': PyTorch reports the endless nesting
      throw ember::ValueError(detail::str_cat("too many dimensions '", Py_TYPE(hold.ptr())->tp_name, "'"));
    Py_ssize_t n = PySequence_Size(hold.ptr());
    if (n < 0) throw_python();
    sizes.push_back(n);
    EMBER_CHECK_VALUE(sizes.size() <= kMaxDims, "too many dimensions '", Py_TYPE(hold.ptr())->tp_name, "'");
    if (n == 0) break;
    PyObject* first = PySequence_GetItem(hold.ptr(), 0);
    if (!first) throw_python();
    hold = nb::steal(first);
  }
  return sizes;
}

// Step 2. Exact Python numbers set flags; everything else promotes `other`.
struct DtypeAcc {
  bool any_bool = false, any_int = false, any_float = false, any_complex = false;
  ScalarType other = ScalarType::Undefined;
  ScalarType result() const {
    ScalarType r = other;
    if (any_bool) r = promote_types(r, ScalarType::Bool);
    if (any_int) r = promote_types(r, ScalarType::Int64);
    if (any_float) r = promote_types(r, default_dtype());
    if (any_complex) r = promote_types(r, complex_for(default_dtype()));
    return r;
  }
};

void infer_dtype(PyObject* o, DtypeAcc& acc);

void infer_leaf_or_sequence(PyObject* o, DtypeAcc& acc) {
  if (PyBool_Check(o)) {
    acc.any_bool = true;
  } else if (is_tensor(o)) {
    acc.other = promote_types(acc.other, as_tensor_ref(o).dtype());
  } else if (is_numpy_scalar(o)) {
    acc.other = promote_types(acc.other, numpy_scalar_dtype(o));
  } else if (PyFloat_Check(o)) {
    acc.any_float = true;
  } else if (PyLong_Check(o)) {
    acc.any_int = true;
  } else if (is_ndarray(o)) {
    acc.other = promote_types(acc.other, from_numpy(nb::handle(o), false).dtype());
  } else if (PyComplex_Check(o)) {
    acc.any_complex = true;
  } else if (PyUnicode_Check(o) || PyBytes_Check(o)) {
    throw ember::TypeError(detail::str_cat("new(): invalid data type '", Py_TYPE(o)->tp_name, "'"));
  } else if (PySequence_Check(o)) {
    nb::object fast = nb::steal(PySequence_Fast(o, "not a sequence"));
    if (!fast) throw_python();
    infer_dtype(fast.ptr(), acc);
  } else {
    throw ember::Error(detail::str_cat("Could not infer dtype of ", Py_TYPE(o)->tp_name));
  }
}

// `seq` is a list or tuple.
void infer_dtype(PyObject* seq, DtypeAcc& acc) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n == 0) acc.any_float = true;  // PyTorch: an empty sequence has the default dtype
  PyObject** items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = items[i];
    if (PyFloat_CheckExact(o)) {
      acc.any_float = true;
    } else if (PyLong_CheckExact(o)) {
      acc.any_int = true;
    } else if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
      infer_dtype(o, acc);
    } else {
      infer_leaf_or_sequence(o, acc);
    }
  }
}

ScalarType infer_dtype_of(PyObject* data) {
  DtypeAcc acc;
  if (PyList_Check(data) || PyTuple_Check(data))
    infer_dtype(data, acc);
  else
    infer_leaf_or_sequence(data, acc);
  return acc.result();
}

// ---- step 3: leaf conversion with PyTorch's range checks ----
template <typename T>
constexpr bool is_float_like = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

[[noreturn]] void throw_overflow(ScalarType t) {
  throw ember::Error(detail::str_cat("value cannot be converted to type ", dtype_name(t), " without overflow"));
}
[[noreturn]] void throw_long_overflow() { throw ember::ValueError("Overflow when unpacking long long"); }

template <typename T>
T int_from_int64(int64_t v) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    if (v > 255 || v < -255) throw_overflow(ScalarType::UInt8);  // PyTorch wraps small negatives
  } else if constexpr (!std::is_same_v<T, int64_t>) {
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
      throw_overflow(CppTypeToScalar<T>::value);
  }
  return static_cast<T>(v);
}

template <typename T>
T int_from_double(double v) {
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  if constexpr (std::is_same_v<T, int64_t>) {
    if (!(v >= lo && v < 9223372036854775808.0)) throw_overflow(ScalarType::Int64);  // also NaN
  } else {
    if (!(v >= lo && v <= static_cast<double>(std::numeric_limits<T>::max())))
      throw_overflow(CppTypeToScalar<T>::value);
  }
  return static_cast<T>(static_cast<int64_t>(v));
}

int64_t unpack_int64(PyObject* o) {
  // Small ints (one internal digit) are read directly; the general call below costs more.
#if PY_VERSION_HEX >= 0x030C0000
  if (PyLong_CheckExact(o) && PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(o)))
    return PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(o));
#else
  if (PyLong_CheckExact(o)) {
    Py_ssize_t size = Py_SIZE(o);  // signed digit count
    if (size >= -1 && size <= 1) return size * static_cast<int64_t>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]);
  }
#endif
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) throw_long_overflow();
  if (v == -1 && PyErr_Occurred()) throw_python();
  return v;
}

double unpack_double(PyObject* o) {
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) throw_python();
  return v;
}

// One element tensor inside the data -> Scalar (PyTorch reads it as int via __index__ for
// integer outputs and via __float__ otherwise, hence the two messages).
Scalar tensor_leaf(PyObject* o, bool integer_target) {
  const Tensor& t = as_tensor_ref(o);
  if (integer_target) {
    EMBER_CHECK_TYPEERR(t.numel() == 1 && is_integral(t.dtype(), true),
                        "only integer tensors of a single element can be converted to an index");
  } else {
    EMBER_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
  }
  return item(t);
}

template <typename T>
T convert_scalar(const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return s.to_bool();
  } else if constexpr (is_float_like<T>) {
    return T(static_cast<opmath_t<T>>(s.to_double()));
  } else {
    if (s.is_floating()) return int_from_double<T>(s.to_double());
    return int_from_int64<T>(s.to_int());
  }
}

template <typename T>
T leaf_value(PyObject* o) {
  if constexpr (is_complex_v<T>) {
    if (is_tensor(o)) return T(tensor_leaf(o, false).to_complex());
    if (PyBool_Check(o)) return T(o == Py_True ? 1 : 0);
    if (PyLong_Check(o)) {
      double v = PyLong_AsDouble(o);
      if (v == -1.0 && PyErr_Occurred()) throw_python();
      return T(static_cast<real_t<T>>(v));
    }
    Py_complex c = PyComplex_AsCComplex(o);  // floats and anything with __complex__/__float__
    if (c.real == -1.0 && PyErr_Occurred()) throw_python();
    return T(static_cast<real_t<T>>(c.real), static_cast<real_t<T>>(c.imag));
  } else if constexpr (std::is_same_v<T, bool>) {
    if (PyBool_Check(o)) return o == Py_True;
    if (is_tensor(o)) return tensor_leaf(o, false).to_bool();
    if (PyLong_Check(o)) {
      int r = PyObject_IsTrue(o);
      if (r < 0) throw_python();
      return r != 0;
    }
    return unpack_double(o) != 0.0;
  } else if constexpr (is_float_like<T>) {
    if (PyFloat_CheckExact(o)) return T(static_cast<opmath_t<T>>(PyFloat_AS_DOUBLE(o)));
    if (is_tensor(o)) return convert_scalar<T>(tensor_leaf(o, false));
    if (PyBool_Check(o)) return T(static_cast<opmath_t<T>>(o == Py_True ? 1.0 : 0.0));
    if (PyComplex_Check(o))  // PyTorch: a complex number does not convert to a real type
      throw ember::TypeError("must be real number, not complex");
    double v = PyLong_Check(o) ? PyLong_AsDouble(o) : PyFloat_AsDouble(o);  // big ints are fine here
    if (v == -1.0 && PyErr_Occurred()) throw_python();
    return T(static_cast<opmath_t<T>>(v));
  } else {
    if (PyLong_CheckExact(o)) return int_from_int64<T>(unpack_int64(o));
    if (PyFloat_Check(o)) return int_from_double<T>(PyFloat_AS_DOUBLE(o));
    if (PyBool_Check(o)) return static_cast<T>(o == Py_True);
    if (is_tensor(o)) return convert_scalar<T>(tensor_leaf(o, true));
    if (PyLong_Check(o)) return int_from_int64<T>(unpack_int64(o));
    // NumPy integers and other objects with __index__; anything else raises PyTorch's TypeError
    // ("'list' object cannot be interpreted as an integer").
    nb::object idx = nb::steal(PyNumber_Index(o));
    if (!idx) throw_python();
    return int_from_int64<T>(unpack_int64(idx.ptr()));
  }
}

template <typename T>
void fill(PyObject* seq, const Shape& sizes, size_t dim, T*& out) {
  nb::object fast;
  if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
    fast = nb::steal(PySequence_Fast(seq, "not a sequence"));
    if (!fast) throw_python();
    seq = fast.ptr();
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n != sizes[dim])
    throw ember::ValueError(
        detail::str_cat("expected sequence of length ", sizes[dim], " at dim ", dim, " (got ", n, ")"));
  PyObject** items = PySequence_Fast_ITEMS(seq);
  if (dim + 1 == sizes.size()) {
    T* p = out;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* o = items[i];
      if constexpr (is_float_like<T>) {
        if (PyFloat_CheckExact(o)) {  // the common case, kept free of calls
          p[i] = T(static_cast<opmath_t<T>>(PyFloat_AS_DOUBLE(o)));
          continue;
        }
      } else if constexpr (!std::is_same_v<T, bool> && !is_complex_v<T>) {
        if (PyLong_CheckExact(o)) {
          p[i] = int_from_int64<T>(unpack_int64(o));
          continue;
        }
      }
      p[i] = leaf_value<T>(o);
    }
    out += n;
    return;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = items[i];
    if (!(PyList_Check(o) || PyTuple_Check(o)) && (is_numpy_scalar(o) || !PySequence_Check(o)))
      throw ember::TypeError("not a sequence");
    fill<T>(o, sizes, dim + 1, out);
  }
}

void check_device(nb::handle device, const char* op) {
  if (device.is_none()) return;
  Device d = nb::cast<Device>(device);
  if (!d.is_cpu()) EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; ", op, "() cannot use ", d.str());
}

std::optional<ScalarType> opt_dtype(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<ScalarType>(h);
}

// Copy of `src` (a tensor or a wrapped ndarray) laid out like it, as PyTorch's clone does.
Tensor copy_like(const Tensor& src, ScalarType dtype) {
  Tensor out = empty_like(src, dtype);
  copy_(out, src);
  return out;
}

void warn_tensor_copy() {
  if (PyErr_WarnEx(PyExc_UserWarning,
                   "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                   "sourceTensor.detach().clone().requires_grad_(True), rather than ember.tensor(sourceTensor).",
                   1) != 0)
    throw_python();
}

// requires_grad=True: PyTorch's dtype check, then the autograd attribute when the build has it.
nb::object finish(Tensor t, bool requires_grad) {
  nb::object obj = nb::cast(std::move(t));
  if (requires_grad) {
    ScalarType dt = nb::cast<const Tensor&>(obj).dtype();
    EMBER_CHECK(is_floating_point(dt) || is_complex(dt),
                "Only Tensors of floating point and complex dtype can require gradients");
    if (!nb::hasattr(obj, "requires_grad_")) EMBER_NOT_IMPLEMENTED("requires_grad=True needs autograd");
    obj.attr("requires_grad_")(true);
  }
  return obj;
}

// PyTorch's C++ names in aliasing errors ("can't alias tensor with dtype 'Float' ...").
const char* c10_name(ScalarType t) {
  static const char* names[] = {"Bool", "Byte",     "Char",  "Short",  "Int",          "Long",
                                "Half", "BFloat16", "Float", "Double", "ComplexFloat", "ComplexDouble"};
  return t == ScalarType::Undefined ? "Undefined" : names[static_cast<int>(t)];
}

// memory_format: None/preserve_format keep the layout; contiguous_format asks for row-major.
bool preserve_layout(nb::handle memory_format) {
  if (memory_format.is_none()) return true;
  std::string s = nb::cast<std::string>(nb::str(memory_format));
  if (s.ends_with("preserve_format")) return true;
  if (s.ends_with("contiguous_format")) return false;
  EMBER_NOT_IMPLEMENTED("memory_format ", s, " is not supported");
}

Tensor like(const Tensor& t, nb::handle dtype, nb::handle device, nb::handle memory_format, const char* op) {
  check_device(device, op);
  return empty_like(t, opt_dtype(dtype), preserve_layout(memory_format));
}

}  // namespace

Tensor tensor_from_data(nb::handle data, std::optional<ScalarType> dtype) {
  PyObject* o = data.ptr();
  if (is_tensor(o)) {
    warn_tensor_copy();
    const Tensor& src = as_tensor_ref(o);
    return copy_like(src, dtype.value_or(src.dtype()));
  }
  if (is_ndarray(o)) {
    Tensor src = from_numpy(data, false);
    return copy_like(src, dtype.value_or(src.dtype()));
  }
  if (PyUnicode_Check(o) || PyBytes_Check(o))
    throw ember::TypeError(detail::str_cat("new(): invalid data type '", Py_TYPE(o)->tp_name, "'"));

  Shape sizes = infer_shape(o);
  ScalarType dt = dtype ? *dtype : infer_dtype_of(o);
  Tensor out = empty(sizes, dt);
  if (out.numel() == 0) return out;
  EMBER_DISPATCH_ALL_AND_COMPLEX(dt, "tensor", [&] {
    scalar_t* p = out.data<scalar_t>();
    if (sizes.empty())
      *p = leaf_value<scalar_t>(o);
    else
      fill<scalar_t>(o, sizes, 0, p);
  });
  return out;
}

void bind_interop(nb::module_& m) {
  bind_numpy(m);
  bind_dlpack(m);
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));

  m.def(
      "tensor",
      [](nb::handle data, nb::handle dtype, nb::handle device, bool requires_grad, bool pin_memory) {
        check_device(device, "tensor");
        EMBER_CHECK(!pin_memory,
                    "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is "
                    "available on this system.");
        return finish(tensor_from_data(data, opt_dtype(dtype)), requires_grad);
      },
      nb::arg("data").none(), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false, nb::arg("pin_memory") = false);

  m.def(
      "as_tensor",
      [](nb::handle data, nb::handle dtype, nb::handle device) -> nb::object {
        check_device(device, "as_tensor");
        std::optional<ScalarType> dt = opt_dtype(dtype);
        if (is_tensor(data.ptr())) {
          const Tensor& t = as_tensor_ref(data.ptr());
          if (!dt || *dt == t.dtype()) return nb::borrow(data);  // the very same object, as PyTorch
          return nb::cast(to_dtype(t, *dt));
        }
        if (is_ndarray(data.ptr())) {
          Tensor t = from_numpy(data);
          return nb::cast(dt && *dt != t.dtype() ? to_dtype(t, *dt) : t);
        }
        return nb::cast(tensor_from_data(data, dt));
      },
      nb::arg("data").none(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());

  m.def(
      "asarray",
      [](nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy, bool requires_grad) -> nb::object {
        check_device(device, "asarray");
        std::optional<ScalarType> dt = opt_dtype(dtype);
        bool force_copy = !copy.is_none() && nb::cast<bool>(copy);
        bool no_copy = !copy.is_none() && !nb::cast<bool>(copy);
        PyObject* o = obj.ptr();
        Tensor shared;  // memory shared with obj, when obj offers it
        bool have = false;
        if (is_tensor(o)) {
          shared = as_tensor_ref(o), have = true;
        } else if (is_ndarray(o)) {
          shared = from_numpy(obj), have = true;
        } else if (nb::hasattr(obj, "__dlpack__")) {
          shared = from_dlpack(obj), have = true;
        } else if (PyObject_CheckBuffer(o) && !is_numpy_scalar(o)) {
          shared = from_buffer(obj, dt.value_or(default_dtype())), have = true;
        }
        if (have) {
          if (dt && *dt != shared.dtype()) {
            if (no_copy)
              throw ember::ValueError(detail::str_cat("can't alias tensor with dtype '", c10_name(shared.dtype()),
                                                      "' into dtype '", c10_name(*dt), "'."));
            return finish(copy_like(shared, *dt), requires_grad);
          }
          if (force_copy) return finish(copy_like(shared, shared.dtype()), requires_grad);
          if (is_tensor(o) && !requires_grad) return nb::borrow(obj);
          return finish(shared, requires_grad);
        }
        EMBER_CHECK_VALUE(!no_copy, "asarray(): can't alias a Python ", Py_TYPE(o)->tp_name,
                          " (copy=False requires an object that shares memory)");
        return finish(tensor_from_data(obj, dt), requires_grad);
      },
      nb::arg("obj").none(), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("copy") = nb::none(), nb::arg("requires_grad") = false);

  // ---- Tensor.new_* : dtype and device default to self's ----
  cls.def(
      "new_tensor",
      [](const Tensor& self, nb::handle data, nb::handle dtype, nb::handle device, bool requires_grad) {
        check_device(device, "new_tensor");
        return finish(tensor_from_data(data, opt_dtype(dtype).value_or(self.dtype())), requires_grad);
      },
      nb::arg("data").none(), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
  auto new_sized = [&](const char* name, bool filled, int64_t value) {
    cls.def(
        name,
        [name, filled, value](const Tensor& self, nb::args size, nb::handle dtype, nb::handle device,
                              bool requires_grad, nb::handle layout, bool pin_memory) {
          (void)layout;
          (void)pin_memory;
          check_device(device, name);
          ScalarType dt = opt_dtype(dtype).value_or(self.dtype());
          Tensor t = empty(sizes_from_args(size, name), dt);
          if (filled) fill_(t, value);
          return finish(t, requires_grad);
        },
        nb::arg("size"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
        nb::arg("requires_grad") = false, nb::arg("layout") = nb::none(), nb::arg("pin_memory") = false);
  };
  new_sized("new_empty", false, 0);
  new_sized("new_zeros", true, 0);
  new_sized("new_ones", true, 1);
  cls.def(
      "new_full",
      [](const Tensor& self, nb::handle size, nb::handle fill_value, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        check_device(device, "new_full");
        Scalar v;
        EMBER_CHECK_TYPEERR(to_scalar(fill_value, v), "new_full(): argument 'fill_value' must be Number, not ",
                            Py_TYPE(fill_value.ptr())->tp_name);
        Tensor t = empty(sizes_from_handle(size, "new_full"), opt_dtype(dtype).value_or(self.dtype()));
        fill_(t, v);
        return finish(t, requires_grad);
      },
      nb::arg("size"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false);

  // ---- *_like: the input's shape, dtype and (dense) layout ----
  auto def_like = [&](const char* name, bool filled, int64_t value) {
    m.def(
        name,
        [name, filled, value](const Tensor& t, nb::handle dtype, nb::handle layout, nb::handle device,
                              bool requires_grad, nb::handle memory_format) {
          (void)layout;
          Tensor out = like(t, dtype, device, memory_format, name);
          if (filled) fill_(out, value);
          return finish(out, requires_grad);
        },
        nb::arg("input"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(),
        nb::arg("device") = nb::none(), nb::arg("requires_grad") = false, nb::arg("memory_format") = nb::none());
  };
  def_like("empty_like", false, 0);
  def_like("zeros_like", true, 0);
  def_like("ones_like", true, 1);
  m.def(
      "full_like",
      [](const Tensor& t, nb::handle fill_value, nb::handle dtype, nb::handle layout, nb::handle device,
         bool requires_grad, nb::handle memory_format) {
        (void)layout;
        Scalar v;
        EMBER_CHECK_TYPEERR(to_scalar(fill_value, v), "full_like(): argument 'fill_value' must be Number, not ",
                            Py_TYPE(fill_value.ptr())->tp_name);
        Tensor out = like(t, dtype, device, memory_format, "full_like");
        fill_(out, v);
        return finish(out, requires_grad);
      },
      nb::arg("input"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      nb::arg("memory_format") = nb::none());

  // ---- NumPy protocol on Tensor ----
  cls.attr("__array_priority__") = 1000;  // ndarray (op) tensor defers to the tensor, as in PyTorch
  cls.def(
      "numpy",
      [](nb::handle self, bool force) {
        nb::object rg = nb::getattr(self, "requires_grad", nb::none());
        if (!rg.is_none() && nb::cast<bool>(rg)) {
          EMBER_CHECK(force, "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
          return to_numpy(nb::cast<const Tensor&>(self.attr("detach")()));
        }
        return to_numpy(nb::cast<const Tensor&>(self));
      },
      nb::kw_only(), nb::arg("force") = false);
  // NumPy computes `tensor (op) ndarray` and ufuncs on tensors; this turns the result back into
  // a tensor (bool results become uint8, as in PyTorch).
  cls.def(
      "__array_wrap__",
      [](nb::handle, nb::handle array, nb::handle, nb::handle) {
        nb::object arr = nb::borrow(array);
        if (nb::cast<std::string>(arr.attr("dtype").attr("kind")) == "b") arr = arr.attr("astype")("uint8");
        return from_numpy(arr);
      },
      nb::arg("array"), nb::arg("context") = nb::none(), nb::arg("return_scalar") = false);
  cls.def(
      "__array__",
      [](const Tensor& t, nb::handle dtype, nb::handle copy) {
        nb::object arr = to_numpy(t);
        bool force_copy = !copy.is_none() && nb::cast<bool>(copy);
        bool no_copy = !copy.is_none() && !nb::cast<bool>(copy);
        if (!dtype.is_none()) {
          nb::object want = nb::module_::import_("numpy").attr("dtype")(dtype);
          if (!want.equal(arr.attr("dtype"))) {
            EMBER_CHECK_VALUE(!no_copy, "Unable to avoid copy while creating an array as requested.");
            return arr.attr("astype")(want);
          }
        }
        return force_copy ? arr.attr("copy")() : arr;
      },
      nb::arg("dtype") = nb::none(), nb::kw_only(), nb::arg("copy") = nb::none());
}

}  // namespace ember::py
