// Autograd from Python: Tensor.backward/grad/hooks, graph nodes, autograd.grad, grad modes,
// and the node type behind ember.autograd.Function.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "common.h"
// after Python.h (via common.h): frame access for python_site()
#include <frameobject.h>

#include "ember/autograd/accumulate.h"
#include "ember/autograd/anomaly.h"
#include "ember/autograd/engine.h"
#include "ember/autograd/forward_ad_custom.h"
#include "ember/autograd/functions.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"

namespace ember::py {
namespace ag = ember::autograd;
using ag::TensorList;
namespace {

// A Python object that may outlive the GIL holder: released under the GIL (or leaked at exit).
struct GilObject {
  nb::object obj;
  explicit GilObject(nb::object o) : obj(std::move(o)) {}
  ~GilObject() {
    if (!Py_IsInitialized()) {
      obj.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    obj.reset();
  }
};

// Note [Saved tensor hooks] from Python: pack's result, and the unpack that turns it back.
struct PyPackedTensor : ag::PackedTensor {
  std::shared_ptr<GilObject> packed, unpack_fn;
  Tensor unpack() const override {
    nb::gil_scoped_acquire gil;
    nb::object r = unpack_fn->obj(packed->obj);
    if (!nb::isinstance<Tensor>(r))
      throw TypeError(
          std::string("Output of saved tensor unpack_hook expected to be a Tensor but got result of type ") +
          nb::type_name(r.type()).c_str());
    return nb::cast<Tensor>(r);
  }
};

// Saved tensors of a Python Function (ctx.save_for_backward), version-checked on unpack.
struct SavedTensors {
  std::vector<ag::SavedVariable> vars;
  std::vector<bool> is_none;
  std::weak_ptr<ag::Node> owner;
  bool released = false;
};

// The node a Python autograd.Function call records; its apply calls cls.backward(ctx, *grads).
struct PyNode : ag::Node {
  nb::object ctx;                 // holds the Function class as ctx._cls
  SavedTensors* saved = nullptr;  // owned by ctx
  std::string name_;
  std::vector<bool> arg_is_tensor;
  bool materialize = true;
  std::string name() const override { return name_; }
  bool is_python() const override { return true; }
  bool materialize_grads() const override { return materialize; }
  TensorList apply(TensorList&& grads) override {
    nb::gil_scoped_acquire gil;
    nb::list args;
    args.append(ctx);
    for (Tensor& g : grads) args.append(g.defined() ? nb::cast(std::move(g)) : nb::none());
    nb::object result = ctx.attr("_backward_fn")(*nb::tuple(args));
    nb::tuple res = PyTuple_Check(result.ptr()) ? nb::borrow<nb::tuple>(result) : nb::make_tuple(result);
    size_t n = next_edges.size();
    // Trailing Nones beyond the inputs are allowed, as in PyTorch.
    size_t got = res.size();
    while (got > n && res[got - 1].is_none()) --got;
    EMBER_CHECK(got == n || res.size() == n, "function ", name_,
                " returned an incorrect number of gradients (expected ", n, ", got ", res.size(), ")");
    TensorList out(n);
    for (size_t i = 0; i < n; ++i) {
      if (res[i].is_none()) continue;
      EMBER_CHECK_TYPEERR(nb::isinstance<Tensor>(res[i]), "function ", name_,
                          " returned a gradient that is not a Tensor or None");
      out[i] = nb::cast<Tensor>(res[i]);
      if (next_edges[i].valid()) {
        const ag::InputMeta& want = next_edges[i].fn->input_meta(next_edges[i].input_nr);
        EMBER_CHECK(out[i].sizes() == want.shape, "Function ", name_, " returned an invalid gradient at index ", i,
                    " - got ", out[i].shape_str(), " but expected shape compatible with ", shape_str(want.shape));
      }
    }
    return out;
  }
  void release_variables() override {
    if (saved) {
      for (auto& v : saved->vars) v.reset();
      saved->released = true;
    }
  }
  ~PyNode() override {
    if (ctx.is_valid() && Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      ctx.reset();
    }
  }
};

TensorList run_python_node(ag::Node& node, TensorList&& grads) { return node.apply(std::move(grads)); }

// "file.py:12" of the innermost Python frame: where an in-place op on a saved tensor ran.
std::string python_site() {
  if (!PyGILState_Check()) return "";
  PyFrameObject* f = PyEval_GetFrame();
  if (!f) return "";
  PyCodeObject* code = PyFrame_GetCode(f);
  int line = PyFrame_GetLineNumber(f);
  std::string file = nb::cast<std::string>(nb::handle(code->co_filename));
  Py_DECREF(code);
  return file + ":" + std::to_string(line);
}

// Anomaly mode's record of a forward call: traceback.format_stack(), as torch keeps it.
std::string python_traceback() {
  if (!PyGILState_Check()) return "";
  try {
    nb::object lines = nb::module_::import_("traceback").attr("format_stack")();
    return nb::cast<std::string>(nb::str("").attr("join")(lines));
  } catch (const nb::python_error&) {
    return "";
  }
}

nb::object node_object(const std::shared_ptr<ag::Node>& n) {
  if (!n) return nb::none();
  return nb::cast(n);
}

TensorList tensors_of(nb::handle h) {
  TensorList out;
  if (h.is_none()) return out;
  if (nb::isinstance<Tensor>(h)) {
    out.push_back(nb::cast<Tensor>(h));
    return out;
  }
  for (nb::handle x : h) out.push_back(x.is_none() ? Tensor() : nb::cast<Tensor>(x));
  return out;
}

TensorList run_engine(const TensorList& roots, const TensorList& grads, const TensorList& inputs,
                      const ag::BackwardOptions& opts) {
  nb::gil_scoped_release no_gil;  // the engine runs without the GIL (paper §5.3)
  return ag::run_backward(roots, grads, inputs, opts);
}

// Holds a Python object in C++ state the engine may drop without the GIL (a node freed at the
// end of backward): the last reference is given back under the GIL.
std::shared_ptr<nb::object> gil_safe_holder(nb::object o) {
  return std::shared_ptr<nb::object>(new nb::object(std::move(o)), [](nb::object* p) {
    if (interpreter_gone()) {
      (void)p->release();  // leak rather than touch it
    } else {
      nb::gil_scoped_acquire gil;
      p->reset();
    }
    delete p;
  });
}

std::string hook_name(nb::handle fn) {
  nb::object n = nb::getattr(fn, "__name__", nb::none());
  return n.is_none() ? nb::cast<std::string>(nb::str(nb::handle(Py_TYPE(fn.ptr()))))
                     : nb::cast<std::string>(nb::str(n));
}

// A tensor hook's result replaces the gradient: it must be a Tensor (or None) of the same size
// and dtype, as torch checks.
Tensor checked_hook_result(nb::handle fn, nb::handle r, const Tensor& g) {
  if (!nb::isinstance<Tensor>(r))
    throw TypeError("expected Variable, but hook returned '" +
                    nb::cast<std::string>(nb::handle(Py_TYPE(r.ptr())).attr("__name__")) + "'");
  Tensor t = nb::cast<Tensor>(r);
  EMBER_CHECK(t.sizes() == g.sizes(), "hook '", hook_name(fn), "' has changed the size of value");
  EMBER_CHECK(t.dtype() == g.dtype(), "hook '", hook_name(fn), "' has changed the type of value (was ",
              legacy_type_name(g.dtype()), " got ", legacy_type_name(t.dtype()), ")");
  EMBER_CHECK(t.device() == g.device(), "hook '", hook_name(fn), "' has changed the type of value");
  return t;
}

// A Python callable as a gradient hook (called with the GIL).
ag::GradHook py_hook(nb::object fn) {
  auto holder = gil_safe_holder(std::move(fn));
  return [holder](const Tensor& g) -> Tensor {
    nb::gil_scoped_acquire gil;
    nb::object r = (*holder)(g);
    if (r.is_none()) return Tensor();
    return checked_hook_result(*holder, r, g);
  };
}

// Handle returned by register_hook; remove() disables the hook (read by the engine's threads).
struct HookHandle {
  std::shared_ptr<std::atomic<bool>> enabled;
  void remove() { enabled->store(false); }
};
std::shared_ptr<std::atomic<bool>> new_enabled_flag() { return std::make_shared<std::atomic<bool>>(true); }
ag::GradHook removable(ag::GradHook h, std::shared_ptr<std::atomic<bool>> enabled) {
  return [h = std::move(h), enabled](const Tensor& g) { return enabled->load() ? h(g) : Tensor(); };
}

}  // namespace

void bind_autograd(nb::module_& m) {
  ag::set_python_node_runner(&run_python_node);
  set_mutation_site_hook(&python_site);
  ag::set_forward_trace_hook(&python_traceback);

  nb::class_<HookHandle>(m, "RemovableHandle").def("remove", &HookHandle::remove);

  nb::class_<ag::Node>(m, "Node")
      .def("name", &ag::Node::name)
      .def_prop_ro("next_functions",
                   [](ag::Node& n) {
                     nb::list l;
                     for (const ag::Edge& e : n.next_edges) l.append(nb::make_tuple(node_object(e.fn), e.input_nr));
                     return nb::tuple(l);
                   })
      .def_prop_ro("metadata", [](ag::Node&) { return nb::dict(); })
      .def_prop_ro("variable",
                   [](ag::Node& n) -> nb::object {
                     if (auto* acc = dynamic_cast<ag::AccumulateGrad*>(&n)) return nb::cast(acc->variable());
                     throw nb::attribute_error("'Node' object has no attribute 'variable'");
                   })
      .def("register_hook",
           [](ag::Node& n, nb::object fn) {
             auto holder = gil_safe_holder(std::move(fn));
             auto enabled = new_enabled_flag();
             n.add_post_hook([holder, enabled](const TensorList& gin, const TensorList& gout) {
               if (!enabled->load()) return;
               nb::gil_scoped_acquire gil;
               auto tup = [](const TensorList& l) {
                 nb::list r;
                 for (const Tensor& t : l) r.append(t.defined() ? nb::cast(t) : nb::none());
                 return nb::tuple(r);
               };
               (*holder)(tup(gin), tup(gout));
             });
             return HookHandle{enabled};
           })
      .def("__repr__", [](ag::Node& n) { return "<" + n.name() + " object>"; });

  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  cls.def_prop_rw(
         "requires_grad", [](const Tensor& t) { return ag::requires_grad(t); },
         [](Tensor& t, bool v) { ag::set_requires_grad(t, v); })
      .def(
          "requires_grad_",
          [](Tensor& t, bool v) -> Tensor {
            ag::set_requires_grad(t, v);
            return t;
          },
          nb::arg("requires_grad") = true)
      .def_prop_rw(
          "grad",
          [](const Tensor& t) -> nb::object {
            Tensor g = ag::grad(t);
            return g.defined() ? nb::cast(g) : nb::none();
          },
          [](Tensor& t, nb::handle g) { ag::set_grad(t, g.is_none() ? Tensor() : nb::cast<Tensor>(g)); },
          nb::arg("grad").none())
      .def_prop_rw(
          "grad_dtype",
          [](const Tensor& t) -> nb::object {
            std::optional<ScalarType> dt = ag::grad_dtype(t);
            return dt ? nb::cast(*dt) : nb::none();
          },
          [](Tensor& t, nb::handle dt) {
            ScalarType st{};
            if (!dt.is_none() && !nb::try_cast<ScalarType>(dt, st)) {
              std::string type = Py_TYPE(dt.ptr())->tp_name;  // torch names the bare class: "str", "Tensor"
              throw Error("grad_dtype must be a torch.dtype or None, but got " + type.substr(type.rfind('.') + 1));
            }
            ag::set_grad_dtype(t, dt.is_none() ? std::nullopt : std::optional<ScalarType>(st));
          },
          nb::arg("grad_dtype").none())
      .def_prop_ro("grad_fn", [](const Tensor& t) { return node_object(ag::grad_fn(t)); })
      .def_prop_ro("is_leaf", [](const Tensor& t) { return ag::is_leaf(t); })
      .def_prop_ro("retains_grad",
                   [](const Tensor& t) {
                     auto* mm = ag::meta(t);
                     return mm && mm->retains_grad;
                   })
      .def_prop_ro("output_nr",
                   [](const Tensor& t) {
                     auto* mm = ag::meta(t);
                     return mm ? mm->output_nr : 0u;
                   })
      .def("retain_grad", [](Tensor& t) { ag::retain_grad(t); })
      .def("is_inference", [](const Tensor& t) { return t.impl()->is_inference; })
      .def("detach", [](const Tensor& t) { return ag::detach(t); })
      // In-place view ops (squeeze_, t_, ...; python/ember/_tensor.py): t takes the geometry of a view of itself.
      .def("_set_geometry_from",
           [](Tensor& t, const Tensor& view) {
             EMBER_CHECK(view.impl()->storage().get() == t.impl()->storage().get(),
                         "internal error: _set_geometry_from needs a view of the same storage");
             if (ag::requires_grad(t))
               EMBER_NOT_IMPLEMENTED(
                   "in-place view ops (squeeze_, unsqueeze_, t_, transpose_, ...) on a tensor "
                   "that requires grad are not supported; use the out-of-place form");
             t.impl()->set_geometry(view.sizes(), view.strides(), view.storage_offset());
           })
      // x.data: like detach(), but with its own version counter, so in-place writes through it
      // are invisible to autograd's saved-tensor checks (torch's semantics, and its hazard).
      // Assigning replaces x's storage and geometry and keeps x's autograd state.
      .def_prop_rw(
          "data",
          [](const Tensor& t) {
            Tensor d = ag::detach(t);
            d.impl()->share_version_counter(IntrusivePtr<VersionCounter>::make());
            return d;
          },
          [](Tensor& t, const Tensor& src) {
            if (src.dtype() != t.dtype())
              EMBER_NOT_IMPLEMENTED("assigning .data of another dtype (", dtype_name(src.dtype()), " to ",
                                    dtype_name(t.dtype()), ") is not supported; assign a tensor of the same dtype");
            EMBER_CHECK(src.device() == t.device(), "data set to a tensor that requires gradients must match device");
            t.impl()->set_storage(src.impl()->storage());
            t.impl()->set_geometry(src.sizes(), src.strides(), src.storage_offset());
          })
      .def("detach_",
           [](Tensor& t) -> Tensor {
             if (auto* mm = ag::meta(t)) {
               EMBER_CHECK(!t.impl()->view_base, "Can't detach views in-place. Use detach() instead.");
               mm->grad_fn.reset();
               mm->requires_grad = false;
             }
             return t;
           })
      .def(
          "backward",
          [](Tensor& t, nb::handle gradient, nb::handle retain_graph, bool create_graph, nb::handle inputs) {
            ag::BackwardOptions o;
            o.create_graph = create_graph;
            o.keep_graph = retain_graph.is_none() ? create_graph : nb::cast<bool>(retain_graph);
            o.accumulate = true;
            TensorList grads = tensors_of(gradient);
            run_engine({t}, grads, tensors_of(inputs), o);
          },
          nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = nb::none(), nb::arg("create_graph") = false,
          nb::arg("inputs") = nb::none())
      .def("register_hook",
           [](Tensor& t, nb::object fn) {
             EMBER_CHECK(ag::requires_grad(t), "cannot register a hook on a tensor that doesn't require gradient");
             auto enabled = new_enabled_flag();
             auto hook = removable(py_hook(std::move(fn)), enabled);
             auto& mm = ag::meta_or_create(t);
             if (std::shared_ptr<ag::Node> fn_node = mm.grad_fn)
               fn_node->add_pre_hook(mm.output_nr, std::move(hook));
             else
               ag::add_leaf_hook(t, std::move(hook));
             return HookHandle{enabled};
           })
      .def("register_post_accumulate_grad_hook", [](Tensor& t, nb::object fn) {
        EMBER_CHECK(ag::is_leaf(t), "post accumulate grad hooks cannot be registered on non-leaf tensors");
        auto enabled = new_enabled_flag();
        auto holder = gil_safe_holder(std::move(fn));
        ag::add_post_accumulate_hook(t, [holder, enabled](const Tensor& v) {
          if (!enabled->load()) return;
          nb::gil_scoped_acquire gil;
          // Its result is not used, but torch still checks a returned tensor against the leaf.
          nb::object r = (*holder)(v);
          if (!r.is_none()) (void)checked_hook_result(*holder, r, v);
        });
        return HookHandle{enabled};
      });

  m.def(
      "_run_backward",
      [](nb::handle outputs, nb::handle grad_outputs, bool keep_graph, bool create_graph, nb::handle inputs,
         bool allow_unused, bool accumulate) -> nb::object {
        ag::BackwardOptions o{keep_graph, create_graph, accumulate, allow_unused};
        TensorList res = run_engine(tensors_of(outputs), tensors_of(grad_outputs), tensors_of(inputs), o);
        nb::list l;
        for (Tensor& r : res) l.append(r.defined() ? nb::cast(std::move(r)) : nb::none());
        return nb::tuple(l);
      },
      nb::arg("outputs"), nb::arg("grad_outputs").none(), nb::arg("keep_graph"), nb::arg("create_graph"),
      nb::arg("inputs").none(), nb::arg("allow_unused"), nb::arg("accumulate"));
  m.def("is_grad_enabled", [] { return ag::GradMode::is_enabled(); });
  m.def("_push_saved_tensors_hooks", [](nb::object pack, nb::object unpack) {
    auto pack_h = std::make_shared<GilObject>(std::move(pack));
    auto unpack_h = std::make_shared<GilObject>(std::move(unpack));
    ag::push_saved_tensor_hooks([pack_h, unpack_h](const Tensor& t) -> std::shared_ptr<ag::PackedTensor> {
      nb::gil_scoped_acquire gil;
      auto p = std::make_shared<PyPackedTensor>();
      p->packed = std::make_shared<GilObject>(pack_h->obj(t));
      p->unpack_fn = unpack_h;
      return p;
    });
  });
  m.def("_pop_saved_tensors_hooks", [] { ag::pop_saved_tensor_hooks(); });
  m.def("_set_saved_tensors_hooks_disabled",
        [](std::optional<std::string> message) { return ag::set_saved_tensor_hooks_disabled(std::move(message)); });

  // Forward-mode AD (ember.autograd.forward_ad; Note [Forward AD]).
  namespace fw = ag::forward_ad;
  m.def("_enter_dual_level", [] { return fw::enter_level(); });
  m.def(
      "_exit_dual_level", [](int64_t level) { fw::exit_level(level); }, nb::arg("level"));
  m.def(
      "_make_dual",
      [](const Tensor& t, const Tensor& tangent, int64_t level) { return fw::make_dual(t, tangent, level); },
      nb::arg("tensor"), nb::arg("tangent"), nb::arg("level"));
  m.def(
      "_unpack_dual",
      [](const Tensor& t, int64_t level) -> std::pair<Tensor, nb::object> {
        auto [p, tan] = fw::unpack_dual(t, level);
        return {p, tan.defined() ? nb::cast(tan) : nb::none()};
      },
      nb::arg("tensor"), nb::arg("level"));
  // For custom Functions' jvp (python/ember/autograd/function.py).
  struct HideLevels {
    int64_t level;
    std::unique_ptr<fw::HideLevelsGuard> guard;
  };
  nb::class_<HideLevels>(m, "_HideDualLevels")
      .def("__init__",
           [](HideLevels* h, int64_t level) {
             new (h) HideLevels{level, nullptr};
           })
      .def("__enter__", [](HideLevels& h) { h.guard = std::make_unique<fw::HideLevelsGuard>(h.level); })
      .def("__exit__", [](HideLevels& h, nb::args) { h.guard.reset(); });
  m.def("_fw_levels_with_tangents", [](nb::handle ts) { return fw::levels_with_tangents(tensors_of(ts)); });
  m.def("_fw_tangent", [](const Tensor& t, int64_t level) -> nb::object {
    Tensor tan = fw::tangent(t, level);
    return tan.defined() ? nb::cast(tan) : nb::none();
  });
  m.def(
      "_fw_set_tangent",
      [](const Tensor& t, const Tensor& tan, int64_t level, bool inplace) { fw::set_tangent(t, tan, level, inplace); },
      nb::arg("tensor"), nb::arg("tangent"), nb::arg("level"), nb::arg("inplace"));
  m.def("_fw_alias", [](const Tensor& t) { return fw::alias_without_tangents(t); });
  // (is a view, its root TensorImpl, its TensorImpl) for the jvp checks.
  m.def("_fw_view_root", [](const Tensor& t) {
    const TensorImpl* b = t.impl()->view_base ? t.impl()->view_base.get() : t.impl();
    return nb::make_tuple(static_cast<bool>(t.impl()->view_base), reinterpret_cast<uintptr_t>(b),
                          reinterpret_cast<uintptr_t>(t.impl()));
  });
  m.def("_set_grad_enabled", [](bool v) { ag::GradMode::set_enabled(v); });
  m.def("is_inference_mode_enabled", [] { return ag::InferenceMode::is_enabled(); });
  m.def("_set_inference_mode", [](bool v) { ag::InferenceMode::set_enabled(v); });
  m.def("is_anomaly_enabled", [] { return ag::AnomalyMode::is_enabled(); });
  m.def("is_anomaly_check_nan_enabled", [] { return ag::AnomalyMode::check_nan(); });
  m.def(
      "_set_anomaly_enabled", [](bool v, bool nan) { ag::AnomalyMode::set_enabled(v, nan); }, nb::arg("enabled"),
      nb::arg("check_nan") = true);

  // ---- autograd.Function support ----
  nb::class_<SavedTensors>(m, "_SavedTensors").def("unpack", [](SavedTensors& s) {
    EMBER_CHECK(!s.released,
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.");
    auto owner = s.owner.lock();
    nb::list l;
    for (size_t i = 0; i < s.vars.size(); ++i) l.append(s.is_none[i] ? nb::none() : nb::cast(s.vars[i].unpack(owner)));
    return nb::tuple(l);
  });

  // Records a Function call: args are the forward arguments, outputs what forward returned.
  m.def(
      "_function_record",
      [](nb::object ctx, nb::str name, nb::tuple args, nb::tuple outputs, nb::handle to_save, nb::handle dirty,
         nb::handle non_diff) -> nb::tuple {
        TensorList tensor_inputs;
        std::vector<bool> is_tensor;
        bool any = false;
        for (nb::handle a : args) {
          bool t = nb::isinstance<Tensor>(a);
          is_tensor.push_back(t);
          if (t && ag::requires_grad(nb::cast<const Tensor&>(a))) any = true;
        }
        auto contains = [](nb::handle seq, const Tensor& t) {
          if (seq.is_none()) return false;
          for (nb::handle x : seq)
            if (nb::isinstance<Tensor>(x) && nb::cast<const Tensor&>(x).is_same(t)) return true;
          return false;
        };
        nb::list result;
        std::shared_ptr<PyNode> node;
        if (any && ag::GradMode::is_enabled()) {
          node = std::make_shared<PyNode>();
          node->name_ = nb::cast<std::string>(name);
          node->materialize = !nb::hasattr(ctx, "materialize_grads") || nb::cast<bool>(ctx.attr("materialize_grads"));
          for (size_t i = 0; i < args.size(); ++i)
            node->next_edges.push_back(is_tensor[i] ? ag::gradient_edge(nb::cast<const Tensor&>(args[i])) : ag::Edge{});
        }
        for (nb::handle o : outputs) {
          if (!nb::isinstance<Tensor>(o)) {
            result.append(o);
            continue;
          }
          Tensor out = nb::cast<Tensor>(o);
          bool is_dirty = contains(dirty, out);
          if (node && contains(non_diff, out)) {
            node->add_input_metadata(out);  // backward still receives a (zero) gradient for it
          } else if (node) {
            if (is_dirty) {
              ag::check_inplace(out, true);
              auto& mm = ag::meta_or_create(out);
              mm.grad_fn = node;
              mm.output_nr = node->add_input_metadata(out);
              mm.requires_grad = false;
            } else {
              bool is_input = false;
              for (nb::handle a : args)
                if (nb::isinstance<Tensor>(a) && nb::cast<const Tensor&>(a).is_same(out)) is_input = true;
              if (is_input) out = ag::detach(out);  // an input returned as is gets a fresh history
              ag::set_history(out, node);
            }
          }
          result.append(nb::cast(out));
        }
        auto saved = std::make_unique<SavedTensors>();
        if (!to_save.is_none()) {
          for (nb::handle x : to_save) {
            if (x.is_none()) {
              saved->vars.emplace_back();
              saved->is_none.push_back(true);
              continue;
            }
            const Tensor& t = nb::cast<const Tensor&>(x);
            bool is_output = false;
            for (nb::handle r : result)
              if (nb::isinstance<Tensor>(r) && nb::cast<const Tensor&>(r).is_same(t)) is_output = true;
            saved->vars.emplace_back(t, is_output && node);
            saved->is_none.push_back(false);
          }
        }
        saved->owner = node;
        SavedTensors* raw = saved.get();
        ctx.attr("_saved") = nb::cast(saved.release(), nb::rv_policy::take_ownership);
        if (node) {
          node->saved = raw;
          node->ctx = ctx;
        }
        return nb::tuple(result);
      },
      nb::arg("ctx"), nb::arg("name"), nb::arg("args"), nb::arg("outputs"), nb::arg("to_save").none(),
      nb::arg("dirty").none(), nb::arg("non_diff").none());
}

}  // namespace ember::py
