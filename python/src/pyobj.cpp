// Note [PyObject preservation]: one Python object per TensorImpl while the impl lives, as in
// PyTorch, so `x.grad is x.grad`, id() is stable and attributes set on a tensor survive trips
// through C++ (.grad, hooks, saved tensors).
//
// TensorImpl::pyobj points at the object. Two states:
//  - Python owns it (untagged pointer): the object's payload Tensor holds a counted reference to
//    the impl; the impl's pointer is weak. This is the usual state.
//  - The impl owns it (low bit set): when the object's refcount reached zero while C++ still used
//    the impl, tensor_dealloc kept the object alive instead (refcount 1, held by the impl) and
//    the payload stopped counting its reference (it still points at the impl, uncounted, so the
//    object stays valid if gc hands it out). Handing the impl to Python again flips the state
//    back; ~TensorImpl drops the object through release_hook. No reference cycle either way.
// Python subclasses keep their type: CPython's subtype_dealloc ends in the base dealloc below,
// and the instance dict lives at the base (nb::dynamic_attr), so it survives too.
#include "common.h"
#include "ember/autograd/node.h"

namespace ember::py {
namespace {

constexpr uintptr_t kOwnedByImpl = 1;
PyTypeObject* tensor_type = nullptr;
destructor nb_dealloc = nullptr;  // nanobind's instance dealloc for ember.Tensor

IntrusivePtr<TensorImpl>& payload(PyObject* o) {
  // The payload Tensor is a non-const object: casting away the accessor's const is defined.
  return const_cast<IntrusivePtr<TensorImpl>&>(nb::inst_ptr<Tensor>(o)->impl_ptr());
}

PyObject* untag(void* p) { return reinterpret_cast<PyObject*>(reinterpret_cast<uintptr_t>(p) & ~kOwnedByImpl); }

void tensor_dealloc(PyObject* self) {
  if (nb::inst_ready(self)) {
    IntrusivePtr<TensorImpl>& p = payload(self);
    TensorImpl* impl = p.get();
    if (impl && impl->pyobj == self) {
      if (impl->use_count() > 1) {
        // C++ still uses the impl: it takes over this object (the caller's reference was the last).
        Py_SET_REFCNT(self, 1);
        impl->pyobj = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(self) | kOwnedByImpl);
        IntrusivePtr<TensorImpl> counted = std::move(p);
        p = IntrusivePtr<TensorImpl>::adopt(impl);  // uncounted from here on
        counted.reset();  // if another thread dropped the impl meanwhile, release_hook frees self
        return;
      }
      impl->pyobj = nullptr;
    }
  }
  nb_dealloc(self);
}

void release_hook(TensorImpl* impl, void* tagged) {
  PyObject* self = untag(tagged);
  impl->pyobj = nullptr;
  bool have_gil = PyGILState_Check();
  if (!have_gil && interpreter_gone()) return;  // interpreter gone: leave it
  PyGILState_STATE st{};
  if (!have_gil) st = PyGILState_Ensure();
  (void)payload(self).release();  // uncounted: nothing to give back
  Py_DECREF(self);
  if (!have_gil) PyGILState_Release(st);
}

}  // namespace

PyObject* preserved_pyobj(TensorImpl* impl) {
  if (!impl || !impl->pyobj) return nullptr;
  auto bits = reinterpret_cast<uintptr_t>(impl->pyobj);
  PyObject* self = untag(impl->pyobj);
  if (bits & kOwnedByImpl) {
    // Python takes the object back: the impl's reference goes to the caller, the payload counts again.
    impl->pyobj = self;
    (void)IntrusivePtr<TensorImpl>(impl).release();
    return self;
  }
  Py_INCREF(self);
  return self;
}

void register_pyobj(PyObject* o) {
  if (!o) return;
  if (TensorImpl* impl = nb::inst_ptr<Tensor>(o)->impl()) impl->pyobj = o;
}

nb::object wrap_as(const Tensor& t, nb::handle cls) {
  if (!PyType_Check(cls.ptr()) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), tensor_type))
    throw TypeError(
        "Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. Make sure your "
        "class inherits from Tensor.");
  nb::object o = nb::inst_alloc(cls);
  new (nb::inst_ptr<Tensor>(o)) Tensor(t);
  nb::inst_mark_ready(o);
  register_pyobj(o.ptr());
  return o;
}

void bind_pyobj(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  nb_dealloc = tensor_type->tp_dealloc;
  tensor_type->tp_dealloc = tensor_dealloc;
  pyobj_release_hook = release_hook;
  cls.def_prop_ro("_base", [](const Tensor& t) -> nb::object {
    const auto& base = t.impl()->view_base;
    return base ? nb::cast(Tensor(base)) : nb::none();
  });
  cls.def("_is_view", [](const Tensor& t) { return static_cast<bool>(t.impl()->view_base); });
  // Both make a new TensorImpl (a Python object per impl): an alias, or a detached alias.
  cls.def(
      "as_subclass", [](const Tensor& t, nb::handle c) { return wrap_as(alias(t), c); }, nb::arg("cls"));
  // torch's legacy constructor, ember.Tensor(...) (and subclasses without their own __new__):
  // python/ember/_legacy.py makes the tensor and this object takes over its TensorImpl (one Python
  // object per impl: the impl now points here, and the temporary, referenced nowhere else, goes).
  // Should anything else hold the temporary, this object becomes an alias of it instead.
  cls.def("__init__", [](nb::pointer_and_handle<Tensor> self, nb::args args, nb::kwargs kwargs) {
    nb::object made = nb::module_::import_("ember._legacy").attr("tensor_new")(*args, **kwargs);
    Tensor t = nb::cast<Tensor>(made);
    new (self.p) Tensor(Py_REFCNT(made.ptr()) == 1 ? t : alias(t));
    register_pyobj(self.h.ptr());
  });
  cls.def_static(
      "_make_subclass",
      [](nb::handle c, const Tensor& data, bool require_grad) {
        Tensor d = autograd::detach(data);
        autograd::set_requires_grad(d, require_grad);
        return wrap_as(d, c);
      },
      nb::arg("cls"), nb::arg("data"), nb::arg("require_grad") = false);
}

}  // namespace ember::py
