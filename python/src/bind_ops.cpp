// Functions and operators: ember.add(...), Tensor.__add__, factories, reductions, matmul.
#include "common.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/core/autocast.h"
#include "ember/core/type_name.h"
#include "ember/ops/gemm.h"

namespace ember::py {
namespace {

std::optional<ScalarType> opt_dtype(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<ScalarType>(h);
}
Device opt_device(nb::handle h) {
  if (h.is_none()) return Device();
  Device d = nb::cast<Device>(h);
  if (!d.is_cpu()) EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot create tensors on ", d.str());
  return d;
}
Tensor out_tensor(nb::handle out) { return out.is_none() ? Tensor() : nb::cast<Tensor>(out); }

// Python operators: NotImplemented for operands that are neither tensors nor numbers.
void def_dunders(nb::class_<Tensor>& cls, BinaryOp op, const char* dunder, const char* rdunder, const char* idunder) {
  if (dunder)
    cls.def(dunder, [op](const Tensor& a, nb::handle b) -> nb::object {
      Tensor* bt = nullptr;
      Scalar s;
      if (nb::try_cast<Tensor*>(b, bt) && bt) return nb::cast(binary_op(op, a, *bt));
      if (is_ndarray(b.ptr())) return nb::borrow(Py_NotImplemented);  // NumPy computes it, see __array_wrap__
      if (!to_scalar(b, s)) return nb::borrow(Py_NotImplemented);
      return nb::cast(binary_op(op, a, scalar_tensor(s, std::nullopt, true)));
    });
  if (rdunder)
    cls.def(rdunder, [op](const Tensor& a, nb::handle b) -> nb::object {
      Scalar s;
      if (is_ndarray(b.ptr()) || !to_scalar(b, s)) return nb::borrow(Py_NotImplemented);
      return nb::cast(binary_op(op, scalar_tensor(s, std::nullopt, true), a));
    });
  if (idunder)
    cls.def(idunder, [op](nb::handle self, nb::handle b) -> nb::object {
      if (is_ndarray(b.ptr())) return nb::borrow(Py_NotImplemented);  // t += array rebinds t, as in PyTorch
      Tensor& a = nb::cast<Tensor&>(self);
      binary_op(op, a, tensor_arg(b, "inplace"), a, /*inplace=*/true);
      return nb::borrow(self);  // in-place ops return the same Python object
    });
}

// One binding per binary op: function (a, b, *, out=None), method, in-place method, dunders.
// number_first: torch.fn(2, t) is accepted (torch has a Number-self overload; comparisons do not).
void def_binary(nb::module_& m, nb::class_<Tensor>& cls, const char* name, BinaryOp op, const char* dunder,
                const char* rdunder, const char* idunder, bool number_first = true) {
  m.def(
      name,
      [op, name, number_first](nb::handle a, nb::handle b, nb::handle out) {
        if (!nb::isinstance<Tensor>(a) && (!number_first || !nb::isinstance<Tensor>(b)))
          throw ember::TypeError(detail::str_cat(name, "(): argument 'input' (position 1) must be Tensor, not ",
                                                 Py_TYPE(a.ptr())->tp_name));
        return binary_op(op, tensor_arg(a, name), tensor_arg(b, name), out_tensor(out));
      },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def(
      name, [op, name](const Tensor& a, nb::handle b) { return binary_op(op, a, tensor_arg(b, name)); },
      nb::arg("other"));
  std::string inplace = std::string(name) + "_";
  cls.def(
      inplace.c_str(),
      [op, name](nb::handle self, nb::handle b) -> nb::object {
        Tensor& a = nb::cast<Tensor&>(self);
        binary_op(op, a, tensor_arg(b, name), a, /*inplace=*/true);
        return nb::borrow(self);
      },
      nb::arg("other"));
  def_dunders(cls, op, dunder, rdunder, idunder);
}

void def_alpha_op(nb::module_& m, nb::class_<Tensor>& cls, const char* name, BinaryOp op) {
  m.def(
      name,
      [op, name](nb::handle a, nb::handle b, nb::handle alpha, nb::handle out) {
        return binary_op(op, tensor_arg(a, name), tensor_arg(b, name), out_tensor(out), false,
                         number_arg(alpha, name, "alpha"));
      },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1, nb::arg("out") = nb::none());
  cls.def(
      name,
      [op, name](const Tensor& a, nb::handle b, nb::handle alpha) {
        return binary_op(op, a, tensor_arg(b, name), Tensor(), false, number_arg(alpha, name, "alpha"));
      },
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  std::string inplace = std::string(name) + "_";
  cls.def(
      inplace.c_str(),
      [op, name](nb::handle self, nb::handle b, nb::handle alpha) -> nb::object {
        Tensor& a = nb::cast<Tensor&>(self);
        binary_op(op, a, tensor_arg(b, name), a, true, number_arg(alpha, name, "alpha"));
        return nb::borrow(self);
      },
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
}

BinaryOp div_op(nb::handle mode) {
  if (mode.is_none()) return BinaryOp::Div;
  std::string s = nb::cast<std::string>(mode);
  if (s == "trunc") return BinaryOp::DivTrunc;
  if (s == "floor") return BinaryOp::DivFloor;
  throw ember::Error("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + s + "'");
}

}  // namespace

void bind_ops(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));

  def_alpha_op(m, cls, "add", BinaryOp::Add);
  def_alpha_op(m, cls, "sub", BinaryOp::Sub);
  def_binary(m, cls, "mul", BinaryOp::Mul, "__mul__", "__rmul__", "__imul__");
  def_binary(m, cls, "floor_divide", BinaryOp::DivFloor, "__floordiv__", "__rfloordiv__", "__ifloordiv__");
  def_binary(m, cls, "remainder", BinaryOp::Remainder, "__mod__", "__rmod__", "__imod__");
  def_binary(m, cls, "pow", BinaryOp::Pow, "__pow__", "__rpow__", "__ipow__");
  def_binary(m, cls, "eq", BinaryOp::Eq, "__eq__", nullptr, nullptr, false);
  def_binary(m, cls, "ne", BinaryOp::Ne, "__ne__", nullptr, nullptr, false);
  def_binary(m, cls, "lt", BinaryOp::Lt, "__lt__", nullptr, nullptr, false);
  def_binary(m, cls, "le", BinaryOp::Le, "__le__", nullptr, nullptr, false);
  def_binary(m, cls, "gt", BinaryOp::Gt, "__gt__", nullptr, nullptr, false);
  def_binary(m, cls, "ge", BinaryOp::Ge, "__ge__", nullptr, nullptr, false);
  def_binary(m, cls, "true_divide", BinaryOp::Div, "__truediv__", "__rtruediv__", "__itruediv__");
  def_dunders(cls, BinaryOp::Add, "__add__", "__radd__", "__iadd__");
  def_dunders(cls, BinaryOp::Sub, "__sub__", "__rsub__", "__isub__");

  m.def(
      "div",
      [](nb::handle a, nb::handle b, nb::handle mode, nb::handle out) {
        return binary_op(div_op(mode), tensor_arg(a, "div"), tensor_arg(b, "div"), out_tensor(out));
      },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none(),
      nb::arg("out") = nb::none());
  cls.def(
      "div",
      [](const Tensor& a, nb::handle b, nb::handle mode) { return binary_op(div_op(mode), a, tensor_arg(b, "div")); },
      nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());
  cls.def(
      "div_",
      [](nb::handle self, nb::handle b, nb::handle mode) -> nb::object {
        Tensor& a = nb::cast<Tensor&>(self);
        binary_op(div_op(mode), a, tensor_arg(b, "div"), a, true);
        return nb::borrow(self);
      },
      nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());

  cls.def("__neg__", [](const Tensor& a) { return neg(a); });
  cls.def("__pos__", [](const Tensor& a) { return a; });
  m.def("result_type", [](nb::handle a, nb::handle b) {
    return result_type(tensor_arg(a, "result_type"), tensor_arg(b, "result_type"));
  });

  // reductions: bind_reduce.cpp

  // linear algebra
  // matmul's out=: computed first (so out may alias an input, as torch), in out's dtype only.
  m.def(
      "matmul",
      [](const Tensor& a, const Tensor& b, nb::handle out) {
        if (out.is_none()) return matmul(a, b);
        Tensor o = nb::cast<Tensor>(out);
        autocast::ExcludeGuard no_autocast;  // out= forms are not autocast (torch's)
        Tensor r = matmul(a, b);
        EMBER_CHECK(!(autograd::GradMode::is_enabled() && (autograd::requires_grad(r) || autograd::requires_grad(o))),
                    "matmul(): functions with out=... arguments don't support automatic differentiation, but one of "
                    "the arguments requires grad.");
        EMBER_CHECK(o.dtype() == r.dtype(), "Expected out tensor to have dtype ", cpp_type_name(r.dtype()),
                    ", but got ", cpp_type_name(o.dtype()), " instead");
        warn_if_out_resized(o.sizes(), o.numel(), r.sizes());
        resize_(o, r.sizes());
        copy_(o, r);
        return o;
      },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());
  // mm/bmm write into out directly where they can (ops/gemm.h)
  struct ProductDef {
    const char* name;
    Tensor (*f)(const Tensor&, const Tensor&);
    Tensor& (*f_out)(Tensor&, const Tensor&, const Tensor&);
  };
  for (const ProductDef& p : {ProductDef{"mm", mm, mm_out}, ProductDef{"bmm", bmm, bmm_out}})
    m.def(
        p.name,
        [f = p.f, f_out = p.f_out](const Tensor& a, const Tensor& b, nb::handle out) {
          if (out.is_none()) return f(a, b);
          Tensor o = nb::cast<Tensor>(out);
          const Shape before = o.sizes();
          const int64_t numel_before = o.numel();
          f_out(o, a, b);
          warn_if_out_resized(before, numel_before, o.sizes());  // after the op's errors, as torch
          return o;
        },
        nb::arg("input"), nb::arg("mat2"), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def("matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  cls.def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  cls.def("__rmatmul__", [](const Tensor& a, const Tensor& b) { return matmul(b, a); });
  cls.def("mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); });
  cls.def("bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); });

  // views and shape functions (ops/view.cpp, ops/copy.cpp): ember.reshape(t, shape) etc.
  m.def(
      "reshape", [](const Tensor& t, nb::handle shape) { return reshape(t, sizes_from_handle(shape, "reshape")); },
      nb::arg("input"), nb::arg("shape"));
  m.def(
      "ravel", [](const Tensor& t) { return view(contiguous(t), Shape{-1}); }, nb::arg("input"));
  m.def(
      "permute", [](const Tensor& t, nb::handle dims) { return permute(t, sizes_from_handle(dims, "permute")); },
      nb::arg("input"), nb::arg("dims"));
  m.def(
      "transpose", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, nb::arg("input"),
      nb::arg("dim0"), nb::arg("dim1"));
  m.def(
      "swapaxes", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, nb::arg("input"),
      nb::arg("axis0"), nb::arg("axis1"));
  m.def(
      "swapdims", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, nb::arg("input"),
      nb::arg("dim0"), nb::arg("dim1"));
  m.def(
      "t", [](const Tensor& t) { return t_(t); }, nb::arg("input"));
  m.def(
      "adjoint", [](const Tensor& t) { return matrix_transpose(t, "adjoint()"); }, nb::arg("input"));
  auto movedim_fn = [](const char* name) {
    return [name](const Tensor& t, nb::handle src, nb::handle dst) {
      return movedim(t, int_or_ints(src, name), int_or_ints(dst, name));
    };
  };
  m.def("movedim", movedim_fn("movedim"), nb::arg("input"), nb::arg("source"), nb::arg("destination"));
  m.def("moveaxis", movedim_fn("moveaxis"), nb::arg("input"), nb::arg("source"), nb::arg("destination"));
  m.def(
      "squeeze", [](const Tensor& t, nb::handle dim) { return squeeze(t, dims_arg(dim)); }, nb::arg("input"),
      nb::arg("dim") = nb::none());
  m.def(
      "unsqueeze", [](const Tensor& t, int64_t d) { return unsqueeze(t, d); }, nb::arg("input"), nb::arg("dim"));
  m.def(
      "flatten",
      [](nb::handle self, int64_t s, int64_t e) -> nb::object {
        const Tensor& t = nb::cast<const Tensor&>(self);
        Tensor r = flatten(t, s, e);
        return r.is_same(t) ? nb::borrow(self) : nb::cast(r);
      },
      nb::arg("input"), nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  m.def(
      "unflatten",
      [](const Tensor& t, int64_t d, nb::handle sizes) {
        return unflatten(t, d, sizes_from_handle(sizes, "unflatten"));
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("sizes"));
  m.def(
      "narrow",
      [](const Tensor& t, int64_t d, nb::handle start, int64_t l) { return narrow(t, d, narrow_start(start), l); },
      nb::arg("input"), nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  m.def(
      "select", [](const Tensor& t, int64_t d, int64_t i) { return select(t, d, i); }, nb::arg("input"), nb::arg("dim"),
      nb::arg("index"));
  m.def(
      "as_strided",
      [](const Tensor& t, nb::handle size, nb::handle stride, std::optional<int64_t> off) {
        return as_strided(t, sizes_from_handle(size, "as_strided"), sizes_from_handle(stride, "as_strided"), off);
      },
      nb::arg("input"), nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none());
  m.def(
      "broadcast_to",
      [](const Tensor& t, nb::handle size) { return expand(t, sizes_from_handle(size, "broadcast_to")); },
      nb::arg("input"), nb::arg("size"));
  m.def(
      "clone",
      [](const Tensor& t, nb::handle fmt) { return clone(t, memory_format_arg(fmt, MemoryFormat::Preserve, "clone")); },
      nb::arg("input"), nb::kw_only(), nb::arg("memory_format") = nb::none());

  // factories: torch's keywords (out, dtype, layout, device, pin_memory, requires_grad) on each
  auto sized = [&](const char* name, Scalar fill, bool filled) {
    m.def(
        name,
        [name, fill, filled](nb::args size, nb::handle dtype, nb::handle device, bool requires_grad, nb::handle out,
                             nb::handle layout, bool pin_memory) -> nb::object {
          Shape sizes = sizes_from_args(size, name);
          std::optional<ScalarType> dt = opt_dtype(dtype);
          if (!out.is_none()) {
            Tensor t = factory_out(out, sizes, dt, name);
            check_factory_options(layout, pin_memory, requires_grad, t.dtype());
            if (filled) fill_(t, fill);
            return nb::borrow(out);
          }
          const ScalarType st = dt.value_or(default_dtype());
          check_factory_options(layout, pin_memory, requires_grad, st);
          Tensor t = filled ? full(sizes, fill, st, opt_device(device)) : empty(sizes, st, opt_device(device));
          return nb::cast(grad_if(std::move(t), requires_grad));
        },
        nb::arg("size"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
        nb::arg("requires_grad") = false, nb::arg("out") = nb::none(), nb::arg("layout") = nb::none(),
        nb::arg("pin_memory") = false);
  };
  sized("empty", 0, false);
  sized("zeros", 0, true);
  sized("ones", 1, true);
  // The others compute the result, then copy it into out= when given (in out's dtype when dtype is absent).
  auto finish = [](Tensor t, nb::handle out, nb::handle layout, bool pin_memory, bool requires_grad) {
    check_factory_options(layout, pin_memory, requires_grad, t.dtype());
    return into_out(grad_if(std::move(t), requires_grad && out.is_none()), out);
  };
  auto out_dtype = [](nb::handle dtype, nb::handle out) {
    std::optional<ScalarType> dt = opt_dtype(dtype);
    if (!dt && !out.is_none()) dt = nb::cast<Tensor>(out).dtype();
    return dt;
  };
  m.def(
      "full",
      [=](nb::handle size, nb::handle value, nb::handle out, nb::handle dtype, nb::handle layout, nb::handle device,
          bool pin_memory, bool requires_grad) {
        Scalar v;
        EMBER_CHECK_TYPEERR(to_scalar(value, v), "full(): argument 'fill_value' must be Number");
        ScalarType dt = out_dtype(dtype, out).value_or(v.natural_dtype());
        return finish(full(sizes_from_handle(size, "full"), v, dt, opt_device(device)), out, layout, pin_memory,
                      requires_grad);
      },
      nb::arg("size"), nb::arg("fill_value"), nb::kw_only(), nb::arg("out") = nb::none(), nb::arg("dtype") = nb::none(),
      nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(), nb::arg("pin_memory") = false,
      nb::arg("requires_grad") = false);
  m.def(
      "empty_strided",
      [=](nb::handle size, nb::handle stride, nb::handle dtype, nb::handle layout, nb::handle device,
          bool requires_grad, bool pin_memory) {
        Tensor t = empty_strided(sizes_from_handle(size, "empty_strided"), sizes_from_handle(stride, "empty_strided"),
                                 opt_dtype(dtype).value_or(default_dtype()), opt_device(device));
        return finish(std::move(t), nb::none(), layout, pin_memory, requires_grad);
      },
      nb::arg("size"), nb::arg("stride"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false, nb::arg("pin_memory") = false);
  m.def(
      "arange",
      [=](nb::args args, nb::handle out, nb::handle dtype, nb::handle layout, nb::handle device, bool requires_grad,
          nb::handle start_kw, nb::handle end_kw, nb::handle step_kw) {
        size_t n = args.size();
        EMBER_CHECK_TYPEERR(n <= 3, "arange() takes 1 to 3 positional arguments");
        auto num = [](nb::handle h) {
          Scalar s;
          EMBER_CHECK_TYPEERR(to_scalar(h, s), "arange(): argument must be a Number");
          return s;
        };
        // arange(end), arange(start, end[, step]), or any of them by keyword
        nb::handle start = n >= 2 ? args[0] : start_kw, end = n == 1 ? args[0] : (n >= 2 ? args[1] : end_kw),
                   step = n == 3 ? args[2] : step_kw;
        EMBER_CHECK_TYPEERR(!end.is_none(), "arange() missing required argument 'end' (pos 1)");
        Tensor t = arange(start.is_none() ? Scalar(0) : num(start), num(end), step.is_none() ? Scalar(1) : num(step),
                          out_dtype(dtype, out), opt_device(device));
        return finish(std::move(t), out, layout, false, requires_grad);
      },
      nb::arg("args"), nb::arg("out") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false, nb::arg("start") = nb::none(),
      nb::arg("end") = nb::none(), nb::arg("step") = nb::none());
  m.def(
      "linspace",
      [=](nb::handle start, nb::handle end, int64_t steps, nb::handle out, nb::handle dtype, nb::handle layout,
          nb::handle device, bool requires_grad) {
        Scalar s, e;
        to_scalar(start, s);
        to_scalar(end, e);
        return finish(linspace(s, e, steps, out_dtype(dtype, out), opt_device(device)), out, layout, false,
                      requires_grad);
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::kw_only(), nb::arg("out") = nb::none(),
      nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
  m.def(
      "logspace",
      [=](nb::handle start, nb::handle end, int64_t steps, double base, nb::handle out, nb::handle dtype,
          nb::handle layout, nb::handle device, bool requires_grad) {
        Scalar s, e;
        to_scalar(start, s);
        to_scalar(end, e);
        return finish(logspace(s, e, steps, base, out_dtype(dtype, out), opt_device(device)), out, layout, false,
                      requires_grad);
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::arg("base") = 10.0, nb::kw_only(),
      nb::arg("out") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false);
  m.def(
      "eye",
      [=](int64_t n, nb::handle mm, nb::handle out, nb::handle dtype, nb::handle layout, nb::handle device,
          bool requires_grad) {
        int64_t cols = mm.is_none() ? n : nb::cast<int64_t>(mm);
        return finish(eye(n, cols, out_dtype(dtype, out).value_or(default_dtype()), opt_device(device)), out, layout,
                      false, requires_grad);
      },
      nb::arg("n"), nb::arg("m") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
      nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
}

}  // namespace ember::py
