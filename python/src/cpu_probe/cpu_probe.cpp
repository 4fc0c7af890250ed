// ember._cpu_probe: the CPU's vector features, read with CPUID before ember._C (and with it
// OpenBLAS) is loaded; ember/__init__.py picks OpenBLAS's kernels from it (Note [OpenBLAS
// kernels on newer CPUs]). A module of its own because _C links OpenBLAS, which reads its
// settings when it is loaded. __builtin_cpu_supports also checks that the OS saves the vector
// registers (XGETBV), and reports an emulator's CPU (qemu -cpu Haswell) rather than the host's,
// which /proc/cpuinfo would not.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject* openblas_coretype(PyObject*, PyObject*) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return PyUnicode_FromString("SKYLAKEX");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return PyUnicode_FromString("HASWELL");
#endif
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {{"openblas_coretype", openblas_coretype, METH_NOARGS,
                                 "OpenBLAS kernel family for this CPU's vector features (SKYLAKEX, HASWELL), or None."},
                                {nullptr, nullptr, 0, nullptr}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cpu_probe", nullptr, -1, methods, nullptr, nullptr, nullptr, nullptr};

extern "C" PyMODINIT_FUNC PyInit__cpu_probe(void) { return PyModule_Create(&module); }
