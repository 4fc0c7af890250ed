// The profiler's Python side: op events for every bound function, Python stacks, record_function,
// allocator counters and memory history (ember._C._profiler, ember._C._memory).
#include "common.h"
// after Python.h (via common.h): frame access for the stacks
#include <frameobject.h>

#include <array>
#include <string_view>
#include <unordered_map>

#include "ember/core/memory_stats.h"
#include "ember/core/type_name.h"
#include "ember/profiler/profiler.h"

namespace ember::py {
namespace {
namespace prof = ember::profiler;

// ---- Python stacks ----
std::string g_package_dir;  // ".../ember/": frames under it are marked internal
constexpr int kMaxFrames = 64;

std::string utf8(PyObject* s) {
  const char* c = s ? PyUnicode_AsUTF8(s) : nullptr;
  if (!c) {
    PyErr_Clear();
    return "";
  }
  return c;
}

// Names of each code object seen, interned once. The map holds a reference to its code objects,
// so an address is never reused for another one; only touched with the GIL.
struct CodeNames {
  const std::string* file;
  const std::string* name;
  bool internal;
};
std::unordered_map<PyCodeObject*, CodeNames> g_code_names;

const CodeNames& code_names(PyCodeObject* code) {
  auto it = g_code_names.find(code);
  if (it != g_code_names.end()) return it->second;
  std::string file = utf8(code->co_filename);
  bool internal = !g_package_dir.empty() && file.compare(0, g_package_dir.size(), g_package_dir) == 0;
  Py_INCREF(code);
  return g_code_names.emplace(code, CodeNames{prof::intern(file), prof::intern(utf8(code->co_name)), internal})
      .first->second;
}

std::vector<prof::Frame> python_stack() {
  std::vector<prof::Frame> out;
  if (!PyGILState_Check()) return out;
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  while (f && static_cast<int>(out.size()) < kMaxFrames) {
    PyCodeObject* code = PyFrame_GetCode(f);
    const CodeNames& names = code_names(code);
    Py_DECREF(code);
    out.push_back(prof::Frame{names.file, names.name, PyFrame_GetLineNumber(f), names.internal});
    PyFrameObject* back = PyFrame_GetBack(f);  // new reference
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  return out;
}

// ---- Note [Op events from the bindings] ----
// Every op reaches C++ through a nanobind function object (ember.add, Tensor.add, Tensor.__add__
// by way of the type slot, ...), and CPython calls each through the vectorcall pointer stored in
// the object (at its type's tp_vectorcall_offset). After the module is built, that pointer is
// swapped for a trampoline that checks the profiler's flag (Note [Profiler cost]) and jumps to
// the original; only when something observes does it look up the op's name and record a range.
// nanobind has a handful of distinct vectorcall functions; each gets a trampoline of its own so
// the fast path needs no lookup. Functions defined later (or in Python) are not instrumented;
// Python code that wants a range uses record_function.
using VectorCall = PyObject* (*)(PyObject*, PyObject* const*, size_t, PyObject*);
constexpr int kMaxKinds = 8;
VectorCall g_orig[kMaxKinds] = {};
int g_num_kinds = 0;
std::unordered_map<PyObject*, std::string> g_op_names;  // patched object -> event name (written at import only)
struct Patched {
  VectorCall* slot;
  VectorCall original, trampoline;
};
std::vector<Patched> g_patched;  // for _set_instrumented (measuring what the trampolines cost)

bool is_tensor_obj(PyObject* o) { return nb::isinstance<Tensor>(nb::handle(o)); }

void append_dims(std::string& s, const Tensor& t) {
  s += '[';
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i) s += ", ";
    s += std::to_string(t.size(i));
  }
  s += ']';
}

// One argument's entry in "Input Shapes" / "Input type".
void describe_arg(PyObject* a, std::string& shapes, std::string& types) {
  if (is_tensor_obj(a)) {
    const Tensor& t = *nb::inst_ptr<Tensor>(a);
    append_dims(shapes, t);
    types += '\'';
    types += cpp_type_name(t.dtype());
    types += '\'';
    return;
  }
  if ((PyList_Check(a) || PyTuple_Check(a)) && PySequence_Fast_GET_SIZE(a) > 0) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(a);
    PyObject** items = PySequence_Fast_ITEMS(a);
    bool all_tensors = true;
    for (Py_ssize_t i = 0; i < n && all_tensors; ++i) all_tensors = is_tensor_obj(items[i]);
    if (all_tensors) {
      shapes += '[';
      for (Py_ssize_t i = 0; i < n; ++i) {
        if (i) shapes += ", ";
        append_dims(shapes, *nb::inst_ptr<Tensor>(items[i]));
      }
      shapes += ']';
      types += "'TensorList'";
      return;
    }
    shapes += "[]";
    types += "'GenericList'";
    return;
  }
  shapes += "[]";
  if (PyBool_Check(a) || PyLong_Check(a) || PyFloat_Check(a) || PyComplex_Check(a))
    types += "'Scalar'";
  else
    types += "''";
}

std::string describe_result(PyObject* r) {
  std::string s = "[", unused;
  if (is_tensor_obj(r)) {
    append_dims(s, *nb::inst_ptr<Tensor>(r));
  } else if (PyTuple_Check(r)) {
    bool first = true;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(r); ++i) {
      PyObject* o = PyTuple_GET_ITEM(r, i);
      if (!is_tensor_obj(o)) continue;
      if (!first) s += ", ";
      first = false;
      append_dims(s, *nb::inst_ptr<Tensor>(o));
    }
  }
  return s + "]";
}

// ---- Note [Function mode] ----
// ember.func.vmap sets prof::kFunctionMode while a vmap level is open. The trampolines then see a
// set state word (so the disabled cost stays the single flag check above) and, before nanobind
// parses anything, look for an argument of a registered Python type (BatchedTensor), directly or
// inside a list/tuple argument (cat, stack). If one is there, or the function is registered as
// "always" (random ops, which vmap's randomness= governs even without batched inputs), the call
// goes to the Python handler as handler(name, function, args_tuple, kwargs_dict): `name` is the
// attribute name the function is bound under (`add`, `__radd__`, `_nn_cross_entropy`), `function`
// the bound object itself, which the handler calls again on plain tensors (then no argument is a
// BatchedTensor and the call goes straight through). For "always" functions the handler clears
// the bit around its own call (_C._profiler._set_function_mode). Everything else falls through.
// Raw references, never released: these live until the process exits (no destructor after finalization).
PyObject* g_fm_handler = nullptr;
PyTypeObject* g_fm_type = nullptr;                    // BatchedTensor
std::unordered_map<PyObject*, PyObject*> g_fm_names;  // every patched function -> its attribute name (str)
std::unordered_map<PyObject*, bool> g_fm_always;      // random ops

bool fm_object(PyObject* o) {
  if (Py_TYPE(o) == g_fm_type) return true;
  if (PyList_Check(o) || PyTuple_Check(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (Py_TYPE(items[i]) == g_fm_type) return true;
  }
  return false;
}

// True when the call went to the handler (*result is its result, or null with an exception set).
bool function_mode_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames, PyObject** result) {
  if (!g_fm_handler || !g_fm_type) return false;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  bool hit = g_fm_always.count(self) != 0;
  for (Py_ssize_t i = 0; i < n + nkw && !hit; ++i) hit = fm_object(args[i]);
  if (!hit) return false;
  auto name = g_fm_names.find(self);
  if (name == g_fm_names.end()) return false;
  PyObject* targs = PyTuple_New(n);
  if (!targs) {
    *result = nullptr;
    return true;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(targs, i, args[i]);
  }
  PyObject* kw = PyDict_New();
  for (Py_ssize_t i = 0; kw && i < nkw; ++i)
    if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) Py_CLEAR(kw);
  *result = kw ? PyObject_CallFunctionObjArgs(g_fm_handler, name->second, self, targs, kw, nullptr) : nullptr;
  Py_DECREF(targs);
  Py_XDECREF(kw);
  return true;
}

NB_NOINLINE PyObject* observed_call(VectorCall orig, PyObject* self, PyObject* const* args, size_t nargsf,
                                    PyObject* kwnames) {
  uint32_t st = prof::state();
  if (st & prof::kFunctionMode) {
    PyObject* r;
    if (function_mode_call(self, args, nargsf, kwnames, &r)) return r;
    if (!(st & ~uint32_t(prof::kFunctionMode))) return orig(self, args, nargsf, kwnames);
  }
  auto it = g_op_names.find(self);
  if (it == g_op_names.end()) return orig(self, args, nargsf, kwnames);
  bool profiling = st & prof::kProfiling;
  std::vector<prof::Frame> frames;
  if ((st & prof::kMemoryHistory) || (profiling && (st & prof::kWithStack))) frames = python_stack();
  int64_t token = prof::begin(it->second, prof::EventKind::Op, std::move(frames));
  bool shapes = profiling && (st & prof::kRecordShapes);
  if (shapes) {
    std::string s = "[", types = "[";
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < n + nkw; ++i) {
      if (i) s += ", ", types += ", ";
      describe_arg(args[i], s, types);
    }
    prof::set_shapes(token, s + "]", types + "]");
  }
  PyObject* r = orig(self, args, nargsf, kwnames);
  if (shapes && r) prof::set_output_shapes(token, describe_result(r));
  prof::end(token);
  return r;
}

// Note [Int overflow is ValueError] (common.h): on a failed call only.
NB_NOINLINE PyObject* retype_int_overflow(PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  PyObject* big = g_int_overflow_arg;
  g_int_overflow_arg = nullptr;
  if (!big || !PyErr_ExceptionMatches(PyExc_TypeError)) return nullptr;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (args[i] == big) {
      PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
      break;
    }
  return nullptr;
}

template <int K>
PyObject* trampoline(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  // A record left by an earlier call (an overload that failed before another matched) must not
  // meet this call's arguments: the borrowed pointer may name a freed int's reused address.
  g_int_overflow_arg = nullptr;
  PyObject* r =
      prof::active() ? observed_call(g_orig[K], self, args, nargsf, kwnames) : g_orig[K](self, args, nargsf, kwnames);
  if (__builtin_expect(r == nullptr, 0)) return retype_int_overflow(args, nargsf, kwnames);
  return r;
}
const VectorCall g_trampolines[kMaxKinds] = {trampoline<0>, trampoline<1>, trampoline<2>, trampoline<3>,
                                             trampoline<4>, trampoline<5>, trampoline<6>, trampoline<7>};

void instrument(PyObject* fn, std::string name, const std::string& attr, bool record_unnamed) {
  Py_ssize_t off = Py_TYPE(fn)->tp_vectorcall_offset;
  if (off <= 0 || !(Py_TYPE(fn)->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL)) return;
  auto* slot = reinterpret_cast<VectorCall*>(reinterpret_cast<char*>(fn) + off);
  VectorCall orig = *slot;
  if (!orig) return;
  int k = -1;
  for (int i = 0; i < kMaxKinds; ++i)
    if (g_trampolines[i] == orig) return;  // already instrumented (an alias of another name)
  for (int i = 0; i < g_num_kinds; ++i)
    if (g_orig[i] == orig) k = i;
  if (k < 0) {
    if (g_num_kinds == kMaxKinds) return;  // a nanobind with more call paths: those stay unobserved
    k = g_num_kinds++;
    g_orig[k] = orig;
  }
  if (!name.empty() || record_unnamed) g_op_names.emplace(fn, std::move(name));
  g_fm_names.emplace(fn, PyUnicode_FromStringAndSize(attr.data(), static_cast<Py_ssize_t>(attr.size())));
  *slot = g_trampolines[k];
  g_patched.push_back({slot, orig, g_trampolines[k]});
}

// torch's name for what a Python-level name computes ("" = not an op: metadata, hooks, settings).
std::string op_name(std::string_view n) {
  static const std::unordered_map<std::string_view, std::string_view> kRenamed = {
      {"__add__", "add"},
      {"__radd__", "add"},
      {"__iadd__", "add_"},
      {"__sub__", "sub"},
      {"__rsub__", "rsub"},
      {"__isub__", "sub_"},
      {"__mul__", "mul"},
      {"__rmul__", "mul"},
      {"__imul__", "mul_"},
      {"__truediv__", "div"},
      {"__rtruediv__", "div"},
      {"__itruediv__", "div_"},
      {"__floordiv__", "floor_divide"},
      {"__rfloordiv__", "floor_divide"},
      {"__ifloordiv__", "floor_divide_"},
      {"__mod__", "remainder"},
      {"__rmod__", "remainder"},
      {"__imod__", "remainder_"},
      {"__pow__", "pow"},
      {"__rpow__", "pow"},
      {"__ipow__", "pow_"},
      {"__matmul__", "matmul"},
      {"__rmatmul__", "matmul"},
      {"__neg__", "neg"},
      {"__pos__", "positive"},
      {"__abs__", "abs"},
      {"__invert__", "bitwise_not"},
      {"__eq__", "eq"},
      {"__ne__", "ne"},
      {"__lt__", "lt"},
      {"__le__", "le"},
      {"__gt__", "gt"},
      {"__ge__", "ge"},
      {"__bool__", "item"},
      {"__float__", "item"},
      {"__int__", "item"},
      {"__index__", "item"},
      {"__complex__", "item"},
      {"float", "to"},
      {"double", "to"},
      {"half", "to"},
      {"bfloat16", "to"},
      {"int", "to"},
      {"long", "to"},
      {"short", "to"},
      {"char", "to"},
      {"byte", "to"},
      {"bool", "to"},
      {"cpu", "to"},
      {"_adaptive_avg_pool", "adaptive_avg_pool"},
      {"_adaptive_max_pool", "adaptive_max_pool"},
      {"_avg_pool", "avg_pool"},
      {"_max_pool", "max_pool"},
      {"_max_unpool", "max_unpool"},
      {"_upsample", "upsample"},
      {"_pad_gather", "pad"},
      {"_pad", "pad"},
      {"_constant_pad_nd", "constant_pad_nd"},
      {"_pdist", "pdist"},
      {"_cdist", "_cdist_forward"},
      {"_linalg_matrix_norm", "linalg_matrix_norm"},
      {"_linalg_vector_norm", "linalg_vector_norm"},
      {"_nn_cross_entropy", "cross_entropy_loss"},
      {"_nn_nll_loss", "nll_loss_nd"},
      {"_nn_smooth_l1_loss", "smooth_l1_loss"},
      {"_nn_huber_loss", "huber_loss"}};
  static const std::unordered_map<std::string_view, bool> kNotOps = {{"can_cast", 1},
                                                                     {"get_default_dtype", 1},
                                                                     {"set_default_dtype", 1},
                                                                     {"get_num_threads", 1},
                                                                     {"set_num_threads", 1},
                                                                     {"get_rng_state", 1},
                                                                     {"set_rng_state", 1},
                                                                     {"initial_seed", 1},
                                                                     {"manual_seed", 1},
                                                                     {"seed", 1},
                                                                     {"is_anomaly_enabled", 1},
                                                                     {"is_anomaly_check_nan_enabled", 1},
                                                                     {"is_grad_enabled", 1},
                                                                     {"is_inference_mode_enabled", 1},
                                                                     {"promote_types", 1},
                                                                     {"result_type", 1},
                                                                     {"is_conj", 1},
                                                                     {"is_neg", 1},
                                                                     {"is_complex", 1},
                                                                     {"is_floating_point", 1},
                                                                     {"is_contiguous", 1},
                                                                     {"is_inference", 1},
                                                                     {"backward", 1},
                                                                     {"data_ptr", 1},
                                                                     {"dim", 1},
                                                                     {"element_size", 1},
                                                                     {"ndimension", 1},
                                                                     {"nelement", 1},
                                                                     {"numel", 1},
                                                                     {"register_hook", 1},
                                                                     {"register_post_accumulate_grad_hook", 1},
                                                                     {"requires_grad_", 1},
                                                                     {"retain_grad", 1},
                                                                     {"size", 1},
                                                                     {"storage_offset", 1},
                                                                     {"stride", 1},
                                                                     {"untyped_storage_ptr", 1},
                                                                     {"numpy", 1},
                                                                     {"tolist", 1},
                                                                     {"as_subclass", 1},
                                                                     {"__array__", 1},
                                                                     {"__array_wrap__", 1},
                                                                     {"__dlpack__", 1},
                                                                     {"__dlpack_device__", 1},
                                                                     {"__hash__", 1},
                                                                     {"__len__", 1},
                                                                     {"__iter__", 1},
                                                                     {"__repr__", 1},
                                                                     {"__format__", 1}};
  // Operator methods torch's profiler names as they are (aten::__and__, ...).
  static const std::unordered_map<std::string_view, bool> kDunderOps = {
      {"__getitem__", 1}, {"__setitem__", 1}, {"__and__", 1},  {"__or__", 1},  {"__xor__", 1},
      {"__lshift__", 1},  {"__rshift__", 1},  {"__rand__", 1}, {"__ror__", 1}, {"__rxor__", 1},
      {"__rlshift__", 1}, {"__rrshift__", 1}, {"__iand__", 1}, {"__ior__", 1}, {"__ixor__", 1},
      {"__ilshift__", 1}, {"__irshift__", 1}};
  if (kNotOps.count(n)) return "";
  if (auto it = kRenamed.find(n); it != kRenamed.end()) return "aten::" + std::string(it->second);
  if (kDunderOps.count(n)) return "aten::" + std::string(n);
  if (n.substr(0, 4) == "_nn_") return "aten::" + std::string(n.substr(4));
  if (n.empty() || n[0] == '_') return "";  // private helpers and other special methods
  return "aten::" + std::string(n);
}

void instrument_dict(PyObject* dict, PyTypeObject* type1, PyTypeObject* type2, const char* prefix) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    if (!PyUnicode_Check(key) || (Py_TYPE(value) != type1 && Py_TYPE(value) != type2)) continue;
    std::string n = utf8(key);
    std::string name = prefix ? (n[0] == '_' ? "" : std::string("aten::") + prefix + n) : op_name(n);
    // Backward is not an op, but what it allocates should point at the line that called it: an
    // unnamed range carries the stack for the memory history and records no event. Functions that
    // are not ops (metadata, settings, private helpers) are patched too, for vmap's function mode
    // (Note [Function mode]); the profiler passes them through.
    bool unnamed_range = n == "backward" || n == "_run_backward";
    instrument(value, std::move(name), prefix ? prefix + n : n, unnamed_range);  // linalg_norm, not norm
  }
}

// ---- CRC32C (Castagnoli), for TensorBoard's record framing ----
uint32_t crc32c(const uint8_t* p, size_t n, uint32_t crc) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

nb::list frames_list(const std::vector<prof::Frame>& frames) {
  nb::list l;
  for (const prof::Frame& f : frames) l.append(nb::make_tuple(*f.file, f.line, *f.name, f.internal));
  return l;
}

}  // namespace

// After every other binding: swaps in the trampolines (Note [Op events from the bindings]).
void instrument_ops(nb::module_& m) {
  PyTypeObject* fn_type = Py_TYPE(m.attr("add").ptr());
  PyTypeObject* method_type = Py_TYPE(nb::type<Tensor>().attr("__dict__")["add"].ptr());
  instrument_dict(PyModule_GetDict(m.ptr()), fn_type, method_type, nullptr);
  PyObject* tensor_dict = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr())->tp_dict;
  instrument_dict(tensor_dict, fn_type, method_type, nullptr);
  if (nb::hasattr(m, "_linalg"))
    instrument_dict(PyModule_GetDict(m.attr("_linalg").ptr()), fn_type, method_type, "linalg_");
}

void bind_profiler(nb::module_& m) {
  prof::set_stack_hook(&python_stack);
  m.def(
      "_crc32c", [](nb::bytes b, uint32_t crc) { return crc32c(static_cast<const uint8_t*>(b.data()), b.size(), crc); },
      nb::arg("data"), nb::arg("crc") = 0);

  nb::module_ p = m.def_submodule("_profiler", "Profiler events (ember.profiler)");
  p.def("_set_package_dir", [](std::string d) { g_package_dir = std::move(d); });
  p.def(
      "_start",
      [](bool record_shapes, bool profile_memory, bool with_stack) {
        prof::start(prof::Config{record_shapes, profile_memory, with_stack});
      },
      nb::arg("record_shapes") = false, nb::arg("profile_memory") = false, nb::arg("with_stack") = false);
  p.def("_is_profiling", &prof::is_profiling);
  // False puts the original call paths back (no op events; for measuring the trampolines' cost).
  p.def("_set_instrumented", [](bool on) {
    for (const Patched& e : g_patched) *e.slot = on ? e.trampoline : e.original;
  });
  // Function mode (Note [Function mode]): the handler, the BatchedTensor type, the random ops.
  p.def("_set_function_mode_handler", [](nb::object handler, nb::object type) {
    g_fm_handler = handler.release().ptr();  // kept for the process
    g_fm_type = type.is_none() ? nullptr : reinterpret_cast<PyTypeObject*>(type.release().ptr());
  });
  p.def("_set_function_mode_always", [](nb::list fns) {
    g_fm_always.clear();
    for (nb::handle f : fns) {
      Py_INCREF(f.ptr());
      g_fm_always.emplace(f.ptr(), true);
    }
  });
  p.def("_set_function_mode", [](bool on) {
    if (on)
      prof::detail::g_state.fetch_or(prof::kFunctionMode);
    else
      prof::detail::g_state.fetch_and(~uint32_t(prof::kFunctionMode));
  });
  p.def("_function_mode", [] { return (prof::state() & prof::kFunctionMode) != 0; });
  p.def("_now_ns", &prof::now_ns);
  p.def("_thread_id", &prof::thread_id);
  // Events as tuples: (name, kind, id, parent, start_ns, end_ns, tid, seq, self_bytes, input_shapes,
  // input_types, output_shapes, stack); kind 0 op, 1 backward node, 2 user range.
  p.def("_stop", [] {
    prof::Result r = prof::stop();
    nb::list events, memory;
    for (const prof::Event& e : r.events)
      events.append(nb::make_tuple(e.name, static_cast<int>(e.kind), e.id, e.parent, e.start_ns, e.end_ns, e.tid, e.seq,
                                   e.self_bytes, e.input_shapes, e.input_types, e.output_shapes, frames_list(e.stack)));
    for (const prof::MemoryEvent& me : r.memory)
      memory.append(nb::make_tuple(me.ts_ns, me.tid, me.bytes, me.addr, me.total_allocated, me.total_reserved));
    nb::dict d;
    d["events"] = events;
    d["memory"] = memory;
    d["start_ns"] = r.start_ns;
    d["end_ns"] = r.end_ns;
    return d;
  });
  // record_function: a range on this thread; -1 (and nothing else) when nothing observes.
  p.def("_record_function_enter", [](std::string name) -> int64_t {
    uint32_t st = prof::state();
    if (!st) return -1;
    std::vector<prof::Frame> frames;
    if ((st & prof::kMemoryHistory) || ((st & prof::kProfiling) && (st & prof::kWithStack))) frames = python_stack();
    return prof::begin(std::move(name), prof::EventKind::User, std::move(frames));
  });
  p.def("_record_function_exit", [](int64_t token) { prof::end(token); });

  nb::module_ mem = m.def_submodule("_memory", "CPU allocator counters and memory history (ember.cpu)");
  mem.def("_counters", [] {
    CpuMemoryCounters c = cpu_memory_counters();
    nb::dict d;
    d["allocated_bytes"] = c.allocated_bytes;
    d["allocated_bytes_peak"] = c.allocated_bytes_peak;
    d["allocated_bytes_total"] = c.allocated_bytes_total;
    d["freed_bytes_total"] = c.freed_bytes_total;
    d["reserved_bytes"] = c.reserved_bytes;
    d["reserved_bytes_peak"] = c.reserved_bytes_peak;
    d["allocations"] = c.allocations;
    d["allocations_peak"] = c.allocations_peak;
    d["allocations_total"] = c.allocations_total;
    d["frees_total"] = c.frees_total;
    d["cached_bytes"] = c.cached_bytes;
    d["cache_hits"] = c.cache_hits;
    d["num_ooms"] = c.num_ooms;
    return d;
  });
  mem.def("_reset_peak", &cpu_reset_peak_counters);
  mem.def("_reset_accumulated", &cpu_reset_accumulated_counters);
  mem.def("_empty_cache", &cpu_empty_cache);
  mem.def(
      "_record_history",
      [](bool enabled, bool trace, size_t max_entries) {
        if (enabled)
          memory_history::enable(trace, max_entries);
        else
          memory_history::disable();
      },
      nb::arg("enabled"), nb::arg("trace") = false, nb::arg("max_entries") = 0);
  mem.def("_history_enabled", &memory_history::enabled);
  mem.def("_largest_by_line", &memory_history::largest_by_line, nb::arg("n") = 5);
  // Live blocks (addr, size, requested, tid, ts_ns, op, frames) and trace entries
  // (action, addr, size, ts_ns, op, frames); frames are (file, line, name, internal), innermost first.
  mem.def("_snapshot", [] {
    nb::list blocks, trace;
    for (const memory_history::Block& b : memory_history::live_blocks())
      blocks.append(nb::make_tuple(b.addr, b.size, b.requested, b.tid, b.ts_ns, b.op, frames_list(b.frames)));
    for (const memory_history::TraceEntry& t : memory_history::trace())
      trace.append(nb::make_tuple(std::string(1, t.action), t.addr, t.size, t.ts_ns, t.op, frames_list(t.frames)));
    return nb::make_tuple(blocks, trace);
  });
}

}  // namespace ember::py
