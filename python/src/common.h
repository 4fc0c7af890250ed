// Shared conversions between Python objects and ember types for the binding files.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ember/core/dispatch.h"
#include "ember/ember.h"

namespace nb = nanobind;

// Note [Process-lifetime Python objects]: a Python object cached for the life of the process
// (a function-local static, a global) is held as a released nb::handle, never as an nb::object:
// static destructors run after Py_Finalize, and on Python 3.12+ a decref then frees into the
// interpreter's torn-down allocator (a segfault at every exit; 3.11 happened not to crash).
// scripts/other_pythons.sh builds the module for each other installed Python and checks that
// tests/python/exit_check.py exits 0.

// The interpreter is finalizing or gone: a thread without the GIL must not take it then.
inline bool interpreter_gone() {
#if PY_VERSION_HEX >= 0x030D0000  // public from 3.13, which removed the underscored name
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// Note [No bool for int]: torch's parser rejects True/False where an int (a dim, k, a size) is
// expected, so `x.sum(True)` is a TypeError rather than a reduction over dim 1. nanobind accepts
// any int subclass, so every binding file sees this stricter int64_t caster (all of them include
// this header before binding anything). Tensors other than 0-d ones are refused likewise.
//
// Note [Int overflow is ValueError]: an int beyond int64 in an int slot is torch's ValueError
// ("Overflow when unpacking long long"), but a caster can only fail, and nanobind then raises its
// TypeError. The caster records the int that did not fit; the op trampolines (bind_profiler.cpp)
// turn a TypeError from a call given that very int into torch's ValueError.
namespace ember::py {
extern PyObject* g_int_overflow_arg;  // borrowed, only compared; written and read under the GIL
}
NAMESPACE_BEGIN(NB_NAMESPACE)
NAMESPACE_BEGIN(detail)
template <>
struct type_caster<int64_t> {
  NB_TYPE_CASTER(int64_t, const_name("int"))
  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept {
    if (PyBool_Check(src.ptr())) return false;
    // Of tensors, only 0-d ones are ints to torch's parser (their __index__ takes any one-element tensor).
    if (nb::isinstance<ember::Tensor>(src) && nb::cast<const ember::Tensor&>(src).dim() != 0) return false;
    if (NB_CALL(load_i64)(NB_CTX_C(cleanup), src.ptr(), flags, &value)) return true;
    if (PyLong_Check(src.ptr())) ember::py::g_int_overflow_arg = src.ptr();  // Note [Int overflow is ValueError]
    return false;
  }
  static handle from_cpp(int64_t v, rv_policy, cleanup_list*) noexcept { return PyLong_FromLongLong(v); }
};
NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)

namespace ember::py {

// dtype singletons: ember.float32 etc. are instances of this class.
struct DType {
  ScalarType type;
};
nb::object dtype_object(ScalarType t);

// Python number (bool/int/float/NumPy scalar/0-d Tensor) -> Scalar; false if it is not one.
bool to_scalar(nb::handle h, Scalar& out);
// A Number argument such as alpha=, beta=, value=: TypeError for anything else, None included.
Scalar number_arg(nb::handle h, const char* op, const char* name);
// A Tensor, or a Python number wrapped as a 0-d tensor (type promotion treats it as a scalar).
Tensor tensor_arg(nb::handle h, const char* op_name);
// The factories' keywords: layout (strided only), pin_memory (refused: no accelerator), and
// requires_grad (floating/complex dtypes only); out= resized (its dtype must match dtype when
// given); requires_grad=True making a fresh result a leaf; a result copied into out when given.
void check_factory_options(nb::handle layout, bool pin_memory, bool requires_grad, ScalarType dtype);
Tensor grad_if(Tensor t, bool requires_grad);
Tensor factory_out(nb::handle out, IntArrayRef sizes, std::optional<ScalarType> dtype, const char* op);
nb::object into_out(Tensor result, nb::handle out);
// torch's UserWarning when an out= tensor that had elements (numel_from) is resized from `from` to `to`.
void warn_if_out_resized(IntArrayRef from, int64_t numel_from, IntArrayRef to);
// Sizes given as f(2, 3), f((2, 3)), f([2, 3]) or f(torch.Size): `args` is the *args tuple.
Shape sizes_from_args(nb::args args, const char* op_name);
Shape sizes_from_handle(nb::handle h, const char* op_name);
// Optional dims argument: None, int, or sequence of ints.
OptDims dims_arg(nb::handle h);
int64_t index_to_int64(PyObject* o);  // an int or __index__ object; OverflowError when it does not fit

// View-op argument helpers shared by the Tensor methods and the ember.* functions (bind_tensor.cpp).
MemoryFormat memory_format_arg(nb::handle h, MemoryFormat dflt, const char* op);  // None -> dflt
Shape sizes_args_or_kw(nb::args args, nb::kwargs kw, const char* kw_name, const char* op);
Shape int_or_ints(nb::handle h, const char* op);
int64_t list_element(nb::handle h, const char* op, const char* arg, size_t pos);
int64_t narrow_start(nb::handle h);                          // int or 0-d integer tensor
Tensor reverse_dims(const Tensor& t);                        // x.T
Tensor matrix_transpose(const Tensor& t, const char* name);  // x.mT, x.mH, x.adjoint()
Tensor matrix_h(const Tensor& t);                            // x.H

void bind_dtype_device(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_ops(nb::module_& m);
void bind_interop(nb::module_& m);  // tensor(), NumPy, DLPack (bind_interop.cpp)
bool is_ndarray(PyObject* o);       // without importing NumPy (numpy_interop.cpp)
void bind_autograd(nb::module_& m);
void bind_random(nb::module_& m);
void bind_index(nb::module_& m);   // indexing, assembly and shape ops (bind_index.cpp)
void bind_linalg(nb::module_& m);  // bind_linalg.cpp
void bind_unary(nb::module_& m);
void bind_reduce(nb::module_& m);           // reductions, scans, sorting (bind_reduce.cpp)
void bind_complex(nb::module_& m);          // complex-number ops (bind_complex.cpp)
void bind_multiprocessing(nb::module_& m);  // shared-memory tensors (bind_multiprocessing.cpp)
void bind_pyobj(nb::module_& m);            // Note [PyObject preservation] (pyobj.cpp); after bind_tensor
// ---- nn ----
void bind_nn_linear(nb::module_& m);  // nn.functional.linear / bilinear (bind_nn_linear.cpp)
void bind_nn_conv(nb::module_& m);    // convolution, pooling, fold/unfold (bind_nn_conv.cpp)
// ---- optim (bind_optim.cpp): fused optimizer steps as ember._C._optim ----
void bind_optim(nb::module_& m);
void bind_serialization(nb::module_& m);  // bind_serialization.cpp
void bind_nn_norm(nb::module_& m);        // nn losses, norms, dropout, embedding (bind_nn_norm.cpp)
void bind_fft(nb::module_& m);            // FFT primitives (bind_fft.cpp)
void bind_distributed(nb::module_& m);    // ember._C._distributed (bind_distributed.cpp)

// The Python object already wrapping impl (a new reference), or null.
PyObject* preserved_pyobj(TensorImpl* impl);
std::string legacy_type_name(ScalarType t);  // "ember.FloatTensor" (bind_tensor.cpp)
// Records a freshly made ember.Tensor object as its impl's Python object.
void register_pyobj(PyObject* o);

}  // namespace ember::py

namespace nanobind::detail {
// Tensor -> Python: the impl's existing object if it has one (Note [PyObject preservation]);
// otherwise a new object owning a copy of the handle, whatever the return value policy.
template <>
struct type_caster<ember::Tensor> : type_caster_base<ember::Tensor> {
  template <typename T>
  static handle from_cpp(T&& value, rv_policy, cleanup_list* cleanup) noexcept {
    const ember::Tensor* p;
    if constexpr (std::is_pointer_v<std::remove_reference_t<T>>)
      p = value;
    else
      p = &value;
    if (!p) return none().release();
    ember::TensorImpl* impl = p->impl();
    if (impl && impl->pyobj) return ember::py::preserved_pyobj(impl);
    constexpr bool by_copy = std::is_pointer_v<std::remove_reference_t<T>> || std::is_lvalue_reference_v<T>;
    rv_policy policy = rv_policy::move;
    if (by_copy) policy = rv_policy::copy;
    handle h = type_caster_base<ember::Tensor>::from_cpp(std::forward<T>(value), policy, cleanup);
    if (impl && h.is_valid()) impl->pyobj = h.ptr();  // the new object's payload holds this same impl
    return h;
  }
};
}  // namespace nanobind::detail

// ScalarType <-> ember.dtype singleton objects.
namespace nanobind::detail {
template <>
struct type_caster<ember::ScalarType> {
  NB_TYPE_CASTER(ember::ScalarType, const_name("dtype"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept;
  static handle from_cpp(ember::ScalarType t, rv_policy, cleanup_list*) noexcept {
    return ember::py::dtype_object(t).release();
  }
};
}  // namespace nanobind::detail
