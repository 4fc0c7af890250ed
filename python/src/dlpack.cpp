// DLPack exchange (https://dmlc.github.io/dlpack/latest/): Tensor.__dlpack__, __dlpack_device__
// and ember.from_dlpack. The ABI structs are written out here from the specification.
#include "interop.h"

namespace ember::py {
namespace {

// ---- the DLPack ABI (v1.1) ----
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; may be null for a compact row-major tensor
  uint64_t byte_offset;
};
struct DLManagedTensor {  // the unversioned ("dltensor") form
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
constexpr uint64_t kDLFlagReadOnly = 1ull << 0;
constexpr uint64_t kDLFlagIsCopied = 1ull << 1;
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint32_t kDLPackMajor = 1, kDLPackMinor = 1;

DLDataType to_dl_dtype(ScalarType t) {
  auto bits = static_cast<uint8_t>(element_size(t) * 8);
  switch (t) {
    case ScalarType::Bool:
      return {kDLBool, 8, 1};
    case ScalarType::UInt8:
      return {kDLUInt, 8, 1};
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64:
      return {kDLInt, bits, 1};
    case ScalarType::Float16:
    case ScalarType::Float32:
    case ScalarType::Float64:
      return {kDLFloat, bits, 1};
    case ScalarType::BFloat16:
      return {kDLBfloat, 16, 1};
    case ScalarType::Complex64:
    case ScalarType::Complex128:
      return {kDLComplex, bits, 1};
    default:
      throw ember::TypeError(detail::str_cat("__dlpack__: cannot export dtype ", dtype_name(t)));
  }
}

ScalarType from_dl_dtype(DLDataType d) {
  EMBER_CHECK_TYPEERR(d.lanes == 1, "from_dlpack: vector dtypes (lanes=", d.lanes, ") are not supported");
  switch (d.code) {
    case kDLBool:
      if (d.bits == 8) return ScalarType::Bool;
      break;
    case kDLUInt:
      if (d.bits == 8) return ScalarType::UInt8;
      if (d.bits == 1) return ScalarType::Bool;
      break;
    case kDLInt:
      if (d.bits == 8) return ScalarType::Int8;
      if (d.bits == 16) return ScalarType::Int16;
      if (d.bits == 32) return ScalarType::Int32;
      if (d.bits == 64) return ScalarType::Int64;
      break;
    case kDLFloat:
      if (d.bits == 16) return ScalarType::Float16;
      if (d.bits == 32) return ScalarType::Float32;
      if (d.bits == 64) return ScalarType::Float64;
      break;
    case kDLBfloat:
      if (d.bits == 16) return ScalarType::BFloat16;
      break;
    case kDLComplex:
      if (d.bits == 64) return ScalarType::Complex64;
      if (d.bits == 128) return ScalarType::Complex128;
      break;
  }
  throw ember::TypeError(
      detail::str_cat("from_dlpack: unsupported DLPack dtype (code ", int(d.code), ", bits ", int(d.bits), ")"));
}

// manager_ctx of an exported tensor: owns a reference to the tensor plus the shape arrays the
// DLTensor points into.
template <typename Managed>
struct Export {
  Managed managed{};
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  static void deleter(Managed* m) { delete static_cast<Export*>(m->manager_ctx); }
};

template <typename Managed>
Managed* make_export(const Tensor& t) {
  auto* e = new Export<Managed>();
  e->tensor = t;
  e->shape = t.sizes();
  e->strides = t.strides();
  DLTensor& dl = e->managed.dl_tensor;
  dl.data = t.data_ptr();
  dl.device = {kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &Export<Managed>::deleter;
  return &e->managed;
}

// Capsule destructors: a capsule that nobody consumed still owns its tensor.
void legacy_capsule_destructor(PyObject* cap) {
  if (!PyCapsule_IsValid(cap, "dltensor")) return;  // renamed "used_dltensor" by a consumer
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
  if (m && m->deleter) m->deleter(m);
}
void versioned_capsule_destructor(PyObject* cap) {
  if (!PyCapsule_IsValid(cap, "dltensor_versioned")) return;
  auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
  if (m && m->deleter) m->deleter(m);
}

// DataPtr deleters for imported memory: hand it back to the producer, whose deleter may touch
// Python objects (see Note [Foreign memory]).
template <typename Managed>
void release_managed(void*, void* ctx) {
  auto* m = static_cast<Managed*>(ctx);
  if (m->deleter) with_gil([m] { m->deleter(m); });
}

Tensor wrap_dltensor(const DLTensor& dl, DataPtr owner) {
  // `owner` frees the producer's tensor if anything below throws.
  EMBER_CHECK(dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost,
              "from_dlpack: only CPU tensors can be imported (got DLPack device type ", dl.device.device_type, ")");
  ScalarType dtype = from_dl_dtype(dl.dtype);
  EMBER_CHECK(dl.ndim >= 0, "from_dlpack: negative ndim");
  Shape sizes(dl.shape, dl.shape + dl.ndim);
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(sizes);
  int64_t last = 0;
  bool empty_tensor = false;
  for (int32_t d = 0; d < dl.ndim; ++d) {
    EMBER_CHECK(sizes[d] >= 0, "from_dlpack: negative size ", sizes[d]);
    if (sizes[d] == 0) empty_tensor = true;
    EMBER_CHECK(strides[d] >= 0 || sizes[d] <= 1, "from_dlpack: negative strides are not supported");
    if (sizes[d] <= 1) strides[d] = std::max<int64_t>(strides[d], 0);
    last += (sizes[d] - 1) * strides[d];
  }
  size_t nbytes = empty_tensor ? 0 : static_cast<size_t>(last + 1) * element_size(dtype);
  owner.ptr = static_cast<char*>(dl.data) + dl.byte_offset;
  Storage st = IntrusivePtr<StorageImpl>::make(std::move(owner), nbytes, Device());
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(st), dtype, std::move(sizes), std::move(strides), 0));
}

bool is_capsule(nb::handle h) { return PyCapsule_CheckExact(h.ptr()); }

}  // namespace

nb::object to_dlpack(const Tensor& t, bool versioned, bool copy) {
  Tensor src = copy ? clone(t) : t;
  if (!versioned) {
    DLManagedTensor* m = make_export<DLManagedTensor>(src);
    PyObject* cap = PyCapsule_New(m, "dltensor", legacy_capsule_destructor);
    if (!cap) {
      m->deleter(m);
      throw nb::python_error();
    }
    return nb::steal(cap);
  }
  DLManagedTensorVersioned* m = make_export<DLManagedTensorVersioned>(src);
  m->version = {kDLPackMajor, kDLPackMinor};
  m->flags = copy ? kDLFlagIsCopied : 0;
  PyObject* cap = PyCapsule_New(m, "dltensor_versioned", versioned_capsule_destructor);
  if (!cap) {
    m->deleter(m);
    throw nb::python_error();
  }
  return nb::steal(cap);
}

Tensor from_dlpack_capsule(nb::handle capsule) {
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    if (m->version.major > kDLPackMajor) {
      throw ember::Error(detail::str_cat("from_dlpack: DLPack version ", m->version.major, ".", m->version.minor,
                                         " is newer than the supported ", kDLPackMajor, ".", kDLPackMinor));
    }
    if (PyCapsule_SetName(cap, "used_dltensor_versioned") != 0) throw nb::python_error();
    return wrap_dltensor(m->dl_tensor, DataPtr(nullptr, m, &release_managed<DLManagedTensorVersioned>));
  }
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (PyCapsule_SetName(cap, "used_dltensor") != 0) throw nb::python_error();
    return wrap_dltensor(m->dl_tensor, DataPtr(nullptr, m, &release_managed<DLManagedTensor>));
  }
  throw ember::Error(
      "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you might "
      "have already constructed a tensor from it once.");
}

Tensor from_dlpack(nb::handle obj) {
  if (is_capsule(obj)) return from_dlpack_capsule(obj);
  EMBER_CHECK_TYPEERR(nb::hasattr(obj, "__dlpack__"), "from_dlpack: expected an object with __dlpack__ or a ",
                      "DLPack capsule (got ", Py_TYPE(obj.ptr())->tp_name, ")");
  if (nb::hasattr(obj, "__dlpack_device__")) {
    nb::tuple dev = nb::cast<nb::tuple>(obj.attr("__dlpack_device__")());
    int dev_type = nb::cast<int>(dev[0]);
    EMBER_CHECK(dev_type == kDLCPU || dev_type == kDLCUDAHost,
                "from_dlpack: only CPU tensors can be imported (the producer is on DLPack device type ", dev_type, ")");
  }
  nb::object cap;
  try {  // producers before DLPack 1.0 do not take max_version
    cap = obj.attr("__dlpack__")(nb::arg("max_version") = nb::make_tuple(kDLPackMajor, kDLPackMinor));
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    cap = obj.attr("__dlpack__")();
  }
  return from_dlpack_capsule(cap);
}

void bind_dlpack(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "__dlpack__",
      [](const Tensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
        if (!stream.is_none() && !(PyLong_Check(stream.ptr()) && nb::cast<int64_t>(stream) == -1))
          throw ember::ValueError("__dlpack__: stream should be None on cpu");
        bool versioned = false;
        if (!max_version.is_none()) {
          nb::tuple mv = nb::cast<nb::tuple>(max_version);
          versioned = nb::cast<int64_t>(mv[0]) >= 1;
        }
        if (!dl_device.is_none()) {
          nb::tuple dev = nb::cast<nb::tuple>(dl_device);
          int dev_type = nb::cast<int>(dev[0]);
          if (dev_type != kDLCPU) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: cannot export a CPU tensor to DLPack device type %d",
                         dev_type);
            throw nb::python_error();
          }
        }
        bool do_copy = !copy.is_none() && nb::cast<bool>(copy);
        return to_dlpack(t, versioned, do_copy);
      },
      nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
      nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none());
  cls.def("__dlpack_device__", [](const Tensor&) { return nb::make_tuple(int(kDLCPU), 0); });

  m.def(
      "from_dlpack",
      [](nb::handle ext, nb::handle device, nb::handle copy) {
        if (!device.is_none()) {
          Device d = nb::cast<Device>(device);
          if (!d.is_cpu()) EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot import to ", d.str());
        }
        Tensor t = from_dlpack(ext);
        return (!copy.is_none() && nb::cast<bool>(copy)) ? clone(t) : t;
      },
      nb::arg("ext_tensor"), nb::kw_only(), nb::arg("device") = nb::none(), nb::arg("copy") = nb::none());
  m.def(
      "_to_dlpack", [](const Tensor& t) { return to_dlpack(t, false, false); }, nb::arg("tensor"));
}

}  // namespace ember::py
