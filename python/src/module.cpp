#include "common.h"

namespace ember::py {
namespace {
PyObject* linalg_error = nullptr;  // ember._C.LinAlgError, a RuntimeError as torch.linalg.LinAlgError

void register_exceptions(nb::module_& m) {
  linalg_error = PyErr_NewException("ember._C.LinAlgError", PyExc_RuntimeError, nullptr);
  m.attr("LinAlgError") = nb::handle(linalg_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ember::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ember::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ember::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ember::LinAlgError& e) {
      PyErr_SetString(linalg_error, e.what());
    } catch (const ember::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const ember::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::length_error& e) {  // a std::vector asked for more than max_size(): torch's RuntimeError
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::bad_cast&) {  // nb::cast of an argument, e.g. a bool where an int is expected
      PyErr_SetString(PyExc_TypeError, "an argument has an incompatible type (e.g. a bool where an int is expected)");
    }
  });
}
}  // namespace
}  // namespace ember::py

namespace ember::py {
void bind_profiler(nb::module_& m);   // bind_profiler.cpp: ember._C._profiler, ember._C._memory
void instrument_ops(nb::module_& m);  // Note [Op events from the bindings]: after every op is bound
}  // namespace ember::py

NB_MODULE(_C, m) {
  using namespace ember::py;
  nb::set_leak_warnings(false);  // dtype singletons live until interpreter exit by design
  register_exceptions(m);
  bind_dtype_device(m);
  bind_tensor(m);
  bind_ops(m);
  bind_interop(m);
  bind_autograd(m);
  bind_pyobj(m);
  bind_random(m);
  bind_index(m);
  bind_linalg(m);
  bind_unary(m);
  bind_reduce(m);
  bind_complex(m);
  bind_multiprocessing(m);
  bind_nn_conv(m);  // nn: convolution
  bind_nn_linear(m);
  bind_optim(m);  // optim
  bind_serialization(m);
  bind_nn_norm(m);
  bind_fft(m);
  bind_distributed(m);  // after register_exceptions: its translator is tried first
  bind_profiler(m);
  instrument_ops(m);
}
