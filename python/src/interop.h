// NumPy, DLPack and Python-data conversions shared by the interop binding files.
#pragma once
#include "common.h"

namespace ember::py {

// ---- NumPy (numpy_interop.cpp) ----
// Note [Lazy NumPy]: `import ember` never imports NumPy. An object can only be an ndarray or a
// NumPy scalar once NumPy has been imported by someone, so these checks look NumPy up in
// sys.modules and answer false while it is absent; functions that must produce NumPy objects
// import it on first use.
bool is_numpy_scalar(PyObject* o);
// The dtype of a NumPy scalar (np.float32(1) -> Float32); TypeError for types ember lacks.
ScalarType numpy_scalar_dtype(PyObject* o);
// Zero-copy view of an ndarray: the storage holds a reference to the array. Raises PyTorch's
// errors for non-arrays, unsupported dtypes, negative or misaligned strides, foreign byte order.
Tensor from_numpy(nb::handle array, bool warn_if_readonly = true);
// Zero-copy ndarray viewing t's memory; it keeps t's storage alive.
nb::object to_numpy(const Tensor& t);
// Python object (e.g. bytes, bytearray) exposing the buffer protocol -> 1-d tensor sharing its bytes.
Tensor from_buffer(nb::handle obj, ScalarType dtype);
// Drops a Python reference from any thread (the DataPtr deleter of foreign memory).
void decref_with_gil(void* ptr, void* obj);

// Note [Foreign memory]: a tensor can die on any thread (a DLPack consumer's, a worker's), and
// memory owned by Python objects must then be released with the GIL held. Once the interpreter
// is shutting down, a thread without the GIL must not take it: the release is skipped (leaked).
template <typename F>
void with_gil(F&& f) {
  if (PyGILState_Check()) {
    f();
    return;
  }
  if (interpreter_gone()) return;
  PyGILState_STATE s = PyGILState_Ensure();
  f();
  PyGILState_Release(s);
}

// ---- DLPack (dlpack.cpp) ----
// A "dltensor" capsule, or a "dltensor_versioned" one when `versioned`; `copy` exports a copy.
nb::object to_dlpack(const Tensor& t, bool versioned, bool copy);
// Takes ownership of a capsule's DLPack tensor (renaming it "used_...") without copying.
Tensor from_dlpack_capsule(nb::handle capsule);
// ember.from_dlpack: any object with __dlpack__, or a capsule.
Tensor from_dlpack(nb::handle obj);

// ---- Python data -> tensor (bind_interop.cpp) ----
// ember.tensor's core: nested sequences, scalars, ndarrays, tensors; always a new tensor.
Tensor tensor_from_data(nb::handle data, std::optional<ScalarType> dtype);

void bind_numpy(nb::module_& m);
void bind_dlpack(nb::module_& m);

}  // namespace ember::py
