// Reductions, scans, sorting and counting: ember.sum(...), Tensor.max(...), ... with torch's
// signatures (dim as int/tuple/None, keepdim, dtype=, out=) and its named-tuple results
// (ember.return_types, a Python module).
#include <cmath>

#include "common.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/autograd/record.h"

namespace ember::py {
namespace {

std::optional<ScalarType> opt_dtype(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<ScalarType>(h);
}

// A named tuple of ember.return_types (values/indices and the like).
nb::object named(const char* type, nb::handle a, nb::handle b) {
  // Released: a static nb::object would be decref'd after the interpreter is gone.
  static nb::handle mod = nb::module_::import_("ember.return_types").release();
  return mod.attr(type)(nb::make_tuple(a, b));
}

// Writes r into the out= tensor (resized to r's shape, cast to its dtype); returns r, or the
// out object itself (so `sum(x, out=o) is o`, as in torch). Scans pass their input as
// `no_partial`: like torch's, they refuse an out= that partly overlaps it (Note [Memory overlap]).
nb::object write_out(nb::handle out, const Tensor& r, const char* name, bool any_dtype = false,
                     const Tensor& no_partial = Tensor()) {
  if (out.is_none()) return nb::cast(r);
  Tensor o = nb::cast<Tensor>(out);
  EMBER_CHECK(!(autograd::GradMode::is_enabled() && autograd::requires_grad(r)), name,
              "(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
  EMBER_CHECK(any_dtype || can_cast(r.dtype(), o.dtype()), "result type ", dtype_name(r.dtype()),
              " can't be cast to the desired output type ", dtype_name(o.dtype()));
  if (!(o.sizes() == r.sizes())) {
    warn_if_out_resized(o.sizes(), o.numel(), r.sizes());
    resize_(o, r.sizes());
  }
  if (no_partial.defined()) assert_no_partial_overlap(o, no_partial);
  autograd::NoGradGuard ng;
  copy_(o, r);
  return nb::borrow(out);
}

// out=(values, indices) for the (values, indices) ops; the indices must be int64.
nb::object write_out_pair(nb::handle out, const TensorPair& r, const char* type, const char* name) {
  if (out.is_none()) return named(type, nb::cast(std::get<0>(r)), nb::cast(std::get<1>(r)));
  EMBER_CHECK_TYPEERR(PySequence_Check(out.ptr()) && PySequence_Size(out.ptr()) == 2, name,
                      "(): argument 'out' must be tuple of Tensors");
  nb::sequence seq = nb::borrow<nb::sequence>(out);
  Tensor i = nb::cast<Tensor>(seq[1]);
  EMBER_CHECK(i.dtype() == ScalarType::Int64, name, "(): Expected out tensor to have dtype long int, but got ",
              dtype_name(i.dtype()), " instead");
  nb::object v = write_out(seq[0], std::get<0>(r), name);
  return named(type, v, write_out(seq[1], std::get<1>(r), name));
}

// The dtype a sum-like op computes in when out= is given without dtype=: the out tensor's.
std::optional<ScalarType> dtype_or_out(nb::handle dtype, nb::handle out) {
  if (!dtype.is_none() || out.is_none()) return opt_dtype(dtype);
  return nb::cast<Tensor>(out).dtype();
}

// An int argument (dim, k) given as a handle: TypeError for anything else, as torch's parser.
int64_t int_arg(nb::handle h, const char* name, const char* arg = "dim") {
  Tensor* t = nullptr;  // a 0-d integer tensor is an int to torch's parser
  if (nb::try_cast<Tensor*>(h, t) && t && t->dim() == 0 && is_integral(t->dtype(), false)) return item(*t).to_int();
  if (PyBool_Check(h.ptr()) ||
      (!PyLong_Check(h.ptr()) && !(PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr()) && !nb::isinstance<Tensor>(h))))
    throw ember::TypeError(
        detail::str_cat(name, "(): argument '", arg, "' must be int, not ", Py_TYPE(h.ptr())->tp_name));
  if (PyLong_Check(h.ptr())) {  // an int beyond int64: torch's parser raises ValueError
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow) throw ember::ValueError("Overflow when unpacking long long");
    return v;
  }
  return index_to_int64(h.ptr());
}

std::optional<int64_t> opt_int(nb::handle h, const char* name) {
  if (h.is_none()) return std::nullopt;
  return int_arg(h, name);
}

// var/std arguments: (dim, unbiased, keepdim, correction) with torch's overloads:
// var(x, unbiased), var(x, dim, unbiased, keepdim), var(x, dim, *, correction, keepdim).
struct VarArgs {
  OptDims dims;
  double correction = 1;
};
VarArgs var_args(nb::handle dim, nb::handle unbiased, nb::handle correction, const char* name) {
  VarArgs a;
  nb::handle unb = unbiased;
  if (PyBool_Check(dim.ptr())) {  // var(x, True): the bool is `unbiased`
    unb = dim;
  } else {
    a.dims = dims_arg(dim);
  }
  if (!unb.is_none() && !correction.is_none())
    throw ember::TypeError(detail::str_cat(name, "(): cannot specify both unbiased and correction"));
  if (!unb.is_none()) a.correction = nb::cast<bool>(unb) ? 1 : 0;
  if (PyLong_Check(correction.ptr()))  // an int correction must fit int64 (OverflowError), as torch
    a.correction = static_cast<double>(index_to_int64(correction.ptr()));
  else if (!correction.is_none())
    a.correction = nb::cast<double>(correction);
  return a;
}

// p of torch.norm / ord of linalg norms: a number (int, float, inf) or a string.
bool as_double(nb::handle h, double& out) {
  if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr())) {  // True is 1, as torch's Scalar
    out = nb::cast<double>(h);
    return true;
  }
  return false;
}

Tensor quantile_any(bool nan, const Tensor& t, nb::handle q, nb::handle dim, bool keepdim,
                    const std::string& interpolation) {
  auto d = opt_int(dim, nan ? "nanquantile" : "quantile");
  double qd;
  if (as_double(q, qd))
    return nan ? nanquantile(t, qd, d, keepdim, interpolation) : quantile(t, qd, d, keepdim, interpolation);
  Tensor qt = nb::cast<Tensor>(q);
  return nan ? nanquantile(t, qt, d, keepdim, interpolation) : quantile(t, qt, d, keepdim, interpolation);
}

// torch.unique's results: the values alone, or a tuple with the requested extras.
nb::object unique_result(const std::tuple<Tensor, Tensor, Tensor>& r, bool inverse, bool counts) {
  if (!inverse && !counts) return nb::cast(std::get<0>(r));
  nb::list l;
  l.append(nb::cast(std::get<0>(r)));
  if (inverse) l.append(nb::cast(std::get<1>(r)));
  if (counts) l.append(nb::cast(std::get<2>(r)));
  return nb::tuple(l);
}

Tensor norm_any(const Tensor& t, nb::handle p, nb::handle dim, bool keepdim, nb::handle dtype) {
  double pd;
  if (p.is_none()) return norm(t, std::string("fro"), dims_arg(dim), keepdim, opt_dtype(dtype));
  if (as_double(p, pd)) return norm(t, pd, dims_arg(dim), keepdim, opt_dtype(dtype));
  if (nb::isinstance<nb::str>(p)) return norm(t, nb::cast<std::string>(p), dims_arg(dim), keepdim, opt_dtype(dtype));
  throw ember::TypeError(
      detail::str_cat("norm(): argument 'p' must be a number or a string, not ", Py_TYPE(p.ptr())->tp_name));
}

// max/min: full (no dim), with dim ((values, indices)), or elementwise with a tensor `other`.
// Arguments not given are the `unset` sentinel, so an explicit None is a TypeError as in torch.
// A positional tensor without keepdim is `other` (elementwise); dim= by keyword is always a dim.
PyObject* g_unset = nullptr;
bool given(nb::handle h) { return h.ptr() != g_unset; }

nb::object max_min(bool is_max, const Tensor& t, nb::handle dim, nb::handle keepdim_h, nb::handle other, nb::handle out,
                   bool dim_by_keyword) {
  const char* name = is_max ? "max" : "min";
  for (nb::handle h : {dim, keepdim_h, other})
    if (h.is_none())
      throw ember::TypeError(detail::str_cat(name, "() received an invalid combination of arguments: None where ",
                                             "an int, a bool or a Tensor is expected"));
  if (given(keepdim_h) && !PyBool_Check(keepdim_h.ptr()))
    throw ember::TypeError(
        detail::str_cat(name, "(): argument 'keepdim' must be bool, not ", Py_TYPE(keepdim_h.ptr())->tp_name));
  bool keepdim = given(keepdim_h) && keepdim_h.ptr() == Py_True;
  if (!given(other) && !given(keepdim_h) && !dim_by_keyword && nb::isinstance<Tensor>(dim)) other = dim, dim = g_unset;
  if (given(other)) {
    EMBER_CHECK_TYPEERR(!given(dim) && !given(keepdim_h) && nb::isinstance<Tensor>(other), name,
                        "(): the elementwise form takes a Tensor `other` and no dim or keepdim");
    Tensor r = is_max ? maximum(t, nb::cast<Tensor>(other)) : minimum(t, nb::cast<Tensor>(other));
    return (write_out(out, r, name));
  }
  if (!given(dim)) {
    EMBER_CHECK_TYPEERR(!given(keepdim_h), name, "(): keepdim needs a dim");
    return (write_out(out, is_max ? max(t) : min(t), name));
  }
  int64_t d = int_arg(dim, name);
  return write_out_pair(out, is_max ? max(t, d, keepdim) : min(t, d, keepdim), name, name);
}

nb::object median_any(bool nan, const Tensor& t, nb::handle dim, bool keepdim, nb::handle out) {
  const char* name = nan ? "nanmedian" : "median";
  if (!given(dim)) return (write_out(out, nan ? nanmedian(t) : median(t), name));
  int64_t d = int_arg(dim, name);  // an explicit None too is a TypeError, as torch's overloads
  return write_out_pair(out, nan ? nanmedian(t, d, keepdim) : median(t, d, keepdim), name, name);
}

}  // namespace

void bind_reduce(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  auto none = nb::none();
  // Released (Note [Process-lifetime Python objects], common.h).
  static nb::handle unset = nb::module_::import_("builtins").attr("object")().release();
  g_unset = unset.ptr();

  // ---- sum-like: (input, dim=None, keepdim=False, *, dtype=None, out=None) ----
  using SumFn = Tensor (*)(const Tensor&, OptDims, bool, std::optional<ScalarType>);
  auto sum_like = [&](const char* name, SumFn fn, bool out_sets_dtype) {
    m.def(
        name,
        [fn, name, out_sets_dtype](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype, nb::handle out) {
          auto dt = out_sets_dtype ? dtype_or_out(dtype, out) : opt_dtype(dtype);
          return write_out(out, fn(t, dims_arg(dim), keepdim, dt), name);
        },
        nb::arg("input"), nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(), nb::arg("dtype") = none,
        nb::arg("out") = none);
    cls.def(
        name,
        [fn](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype) {
          return fn(t, dims_arg(dim), keepdim, opt_dtype(dtype));
        },
        nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(), nb::arg("dtype") = none);
  };
  sum_like("sum", &sum, true);
  sum_like("nansum", &nansum, true);
  sum_like("mean", &mean, false);
  sum_like("nanmean", &nanmean, false);

  auto prod_f = [](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype, nb::handle out) {
    return write_out(out, prod(t, opt_int(dim, "prod"), keepdim, dtype_or_out(dtype, out)), "prod");
  };
  m.def("prod", prod_f, nb::arg("input"), nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("dtype") = none, nb::arg("out") = none);
  cls.def(
      "prod",
      [](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype) {
        return prod(t, opt_int(dim, "prod"), keepdim, opt_dtype(dtype));
      },
      nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(), nb::arg("dtype") = none);

  // ---- max / min ----
  for (bool is_max : {true, false}) {
    const char* name = is_max ? "max" : "min";
    // Positional (input, dim_or_other, keepdim) and keywords dim/keepdim/other/out, parsed by hand
    // because a keyword dim= is always a dim while a positional tensor is `other`.
    auto parse = [is_max, name](nb::args args, nb::kwargs kw, bool method) -> nb::object {
      EMBER_CHECK_TYPEERR(args.size() >= 1 || kw.contains("input"), name, "() missing argument 'input'");
      nb::handle self = args.size() >= 1 ? nb::handle(args[0]) : nb::handle(kw["input"]);
      size_t i0 = args.size() >= 1 ? 1 : 0;
      nb::handle slot[3] = {g_unset, g_unset, g_unset};  // dim, keepdim, other
      nb::handle out = nb::none();
      EMBER_CHECK_TYPEERR(args.size() <= i0 + 2, name, "() takes at most ", i0 + 2, " positional arguments");
      for (size_t i = i0; i < args.size(); ++i) slot[i - i0] = args[i];
      bool dim_kw = false;
      for (auto [k, v] : kw) {
        std::string key = nb::cast<std::string>(k);
        int at = key == "dim" ? 0 : key == "keepdim" ? 1 : key == "other" ? 2 : -1;
        if (key == "input" && !method && i0 == 0) continue;
        if (key == "out" && !method) {
          out = v;
          continue;
        }
        EMBER_CHECK_TYPEERR(at >= 0, name, "() got an unexpected keyword argument '", key, "'");
        EMBER_CHECK_TYPEERR(!given(slot[at]), name, "() got multiple values for argument '", key, "'");
        slot[at] = v;
        dim_kw |= at == 0;
      }
      EMBER_CHECK_TYPEERR(nb::isinstance<Tensor>(self), name, "(): argument 'input' must be Tensor");
      return max_min(is_max, nb::cast<const Tensor&>(self), slot[0], slot[1], slot[2], out, dim_kw);
    };
    m.def(name, [parse](nb::args a, nb::kwargs k) { return parse(a, k, false); });
    cls.def(name, [parse](nb::args a, nb::kwargs k) { return parse(a, k, true); });
    const char* aname = is_max ? "amax" : "amin";
    m.def(
        aname,
        [is_max, aname](const Tensor& t, nb::handle dim, bool keepdim, nb::handle out) {
          return write_out(out, is_max ? amax(t, dims_arg(dim), keepdim) : amin(t, dims_arg(dim), keepdim), aname);
        },
        nb::arg("input"), nb::arg("dim").none() = nb::tuple(), nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("out") = none);
    cls.def(
        aname,
        [is_max](const Tensor& t, nb::handle dim, bool keepdim) {
          return is_max ? amax(t, dims_arg(dim), keepdim) : amin(t, dims_arg(dim), keepdim);
        },
        nb::arg("dim").none() = nb::tuple(), nb::arg("keepdim") = false);

    const char* argname = is_max ? "argmax" : "argmin";
    m.def(
        argname,
        [is_max, argname](const Tensor& t, nb::handle dim, bool keepdim, nb::handle out) {
          auto d = opt_int(dim, argname);
          return write_out(out, is_max ? argmax(t, d, keepdim) : argmin(t, d, keepdim), argname);
        },
        nb::arg("input"), nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(), nb::arg("out") = none);
    cls.def(
        argname,
        [is_max, argname](const Tensor& t, nb::handle dim, bool keepdim) {
          auto d = opt_int(dim, argname);
          return is_max ? argmax(t, d, keepdim) : argmin(t, d, keepdim);
        },
        nb::arg("dim") = none, nb::arg("keepdim") = false);
  }
  auto aminmax_f = [](const Tensor& t, nb::handle dim, bool keepdim, nb::handle out) {
    return write_out_pair(out, aminmax(t, opt_int(dim, "aminmax"), keepdim), "aminmax", "aminmax");
  };
  m.def("aminmax", aminmax_f, nb::arg("input"), nb::kw_only(), nb::arg("dim") = none, nb::arg("keepdim") = false,
        nb::arg("out") = none);
  cls.def(
      "aminmax",
      [aminmax_f](const Tensor& t, nb::handle dim, bool keepdim) { return aminmax_f(t, dim, keepdim, nb::none()); },
      nb::kw_only(), nb::arg("dim") = none, nb::arg("keepdim") = false);

  // ---- logical and counting ----
  for (bool is_all : {true, false}) {
    const char* name = is_all ? "all" : "any";
    m.def(
        name,
        [is_all, name](const Tensor& t, nb::handle dim, bool keepdim, nb::handle out) {
          return write_out(out, is_all ? all(t, dims_arg(dim), keepdim) : any(t, dims_arg(dim), keepdim), name);
        },
        nb::arg("input"), nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(), nb::arg("out") = none);
    cls.def(
        name,
        [is_all](const Tensor& t, nb::handle dim, bool keepdim) {
          return is_all ? all(t, dims_arg(dim), keepdim) : any(t, dims_arg(dim), keepdim);
        },
        nb::arg("dim") = none, nb::arg("keepdim") = false);
  }
  auto count_f = [](const Tensor& t, nb::handle dim) { return count_nonzero(t, dims_arg(dim)); };
  m.def("count_nonzero", count_f, nb::arg("input"), nb::arg("dim") = none);
  cls.def("count_nonzero", count_f, nb::arg("dim") = none);

  // ---- moments ----
  for (bool is_std : {false, true}) {
    const char* name = is_std ? "std" : "var";
    auto f = [is_std, name](const Tensor& t, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
      VarArgs a = var_args(dim, unbiased, correction, name);
      return is_std ? ember::std(t, a.dims, a.correction, keepdim) : var(t, a.dims, a.correction, keepdim);
    };
    m.def(
        name,
        [f, name](const Tensor& t, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction,
                  nb::handle out) { return write_out(out, f(t, dim, unbiased, keepdim, correction), name); },
        nb::arg("input"), nb::arg("dim") = none, nb::arg("unbiased") = none, nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("correction") = none, nb::arg("out") = none);
    cls.def(name, f, nb::arg("dim") = none, nb::arg("unbiased") = none, nb::arg("keepdim") = false, nb::kw_only(),
            nb::arg("correction") = none);
    const char* pname = is_std ? "std_mean" : "var_mean";
    m.def(
        pname,
        [is_std, pname](const Tensor& t, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
          VarArgs a = var_args(dim, unbiased, correction, pname);
          TensorPair r =
              is_std ? std_mean(t, a.dims, a.correction, keepdim) : var_mean(t, a.dims, a.correction, keepdim);
          return nb::make_tuple(std::get<0>(r), std::get<1>(r));
        },
        nb::arg("input"), nb::arg("dim") = none, nb::arg("unbiased") = none, nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("correction") = none);
  }

  // ---- norms ----
  m.def(
      "norm",
      [](nb::handle input, nb::handle p, nb::handle dim, bool keepdim, nb::handle out, nb::handle dtype) {
        if (!nb::isinstance<Tensor>(input))  // torch.norm is Python that reads input.layout first
          throw nb::attribute_error(
              detail::str_cat("'", Py_TYPE(input.ptr())->tp_name, "' object has no attribute 'layout'").c_str());
        return write_out(out, norm_any(nb::cast<const Tensor&>(input), p, dim, keepdim, dtype), "norm");
      },
      nb::arg("input"), nb::arg("p").none() = "fro", nb::arg("dim") = none, nb::arg("keepdim") = false,
      nb::arg("out") = none, nb::arg("dtype") = none);
  cls.def("norm", &norm_any, nb::arg("p").none() = "fro", nb::arg("dim") = none, nb::arg("keepdim") = false,
          nb::arg("dtype") = none);
  m.def(
      "_linalg_vector_norm",
      [](const Tensor& t, double ord, nb::handle dim, bool keepdim, nb::handle dtype, nb::handle out) {
        return write_out(out, vector_norm(t, ord, dims_arg(dim), keepdim, opt_dtype(dtype)), "linalg.vector_norm");
      },
      nb::arg("x"), nb::arg("ord") = 2.0, nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(),
      nb::arg("dtype") = none, nb::arg("out") = none);
  m.def(
      "_linalg_matrix_norm",
      [](const Tensor& t, nb::handle ord, nb::handle dim, bool keepdim, nb::handle dtype, nb::handle out) {
        Shape dims = sizes_from_handle(dim, "linalg.matrix_norm");
        double o;
        Tensor r = as_double(ord, o) ? matrix_norm(t, o, dims, keepdim, opt_dtype(dtype))
                                     : matrix_norm(t, nb::cast<std::string>(ord), dims, keepdim, opt_dtype(dtype));
        return write_out(out, r, "linalg.matrix_norm");
      },
      nb::arg("A"), nb::arg("ord") = "fro", nb::arg("dim") = nb::make_tuple(-2, -1), nb::arg("keepdim") = false,
      nb::kw_only(), nb::arg("dtype") = none, nb::arg("out") = none);

  auto lse = [](const Tensor& t, nb::handle dim, bool keepdim) { return logsumexp(t, dims_arg(dim), keepdim); };
  m.def(
      "logsumexp",
      [lse](const Tensor& t, nb::handle dim, bool keepdim, nb::handle out) {
        return write_out(out, lse(t, dim, keepdim), "logsumexp");
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("keepdim") = false, nb::kw_only(), nb::arg("out") = none);
  cls.def("logsumexp", lse, nb::arg("dim"), nb::arg("keepdim") = false);

  // ---- softmax ----
  for (bool is_log : {false, true}) {
    const char* name = is_log ? "log_softmax" : "softmax";
    auto f = [is_log](const Tensor& t, int64_t dim, nb::handle dtype) {
      return is_log ? log_softmax(t, dim, opt_dtype(dtype)) : softmax(t, dim, opt_dtype(dtype));
    };
    m.def(name, f, nb::arg("input"), nb::arg("dim"), nb::arg("dtype") = none);
    cls.def(name, f, nb::arg("dim"), nb::arg("dtype") = none);
  }

  // ---- scans ----
  for (bool is_prod : {false, true}) {
    const char* name = is_prod ? "cumprod" : "cumsum";
    auto f = [is_prod](const Tensor& t, int64_t dim, std::optional<ScalarType> dt) {
      return is_prod ? cumprod(t, dim, dt) : cumsum(t, dim, dt);
    };
    m.def(
        name,
        [f, name](const Tensor& t, int64_t dim, nb::handle dtype, nb::handle out) {
          return write_out(out, f(t, dim, dtype_or_out(dtype, out)), name, false, t);
        },
        nb::arg("input"), nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = none, nb::arg("out") = none);
    cls.def(
        name, [f](const Tensor& t, int64_t dim, nb::handle dtype) { return f(t, dim, opt_dtype(dtype)); },
        nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = none);
    std::string inplace = std::string(name) + "_";
    cls.def(
        inplace.c_str(),
        [f](nb::handle self, int64_t dim, nb::handle dtype) -> nb::object {
          Tensor& t = nb::cast<Tensor&>(self);
          bool grad = autograd::inplace_needs_grad(t, {});
          if (grad) autograd::check_inplace(t, true);
          // Note [In-place under autograd]: the op runs out of place on a copy, the data comes
          // back without recording, and t's history moves onto the op's node.
          Tensor r = f(grad ? clone(t) : t, dim, opt_dtype(dtype));
          EMBER_CHECK(can_cast(r.dtype(), t.dtype()), "result type ", dtype_name(r.dtype()),
                      " can't be cast to the desired output type ", dtype_name(t.dtype()));
          {
            autograd::NoGradGuard ng;
            copy_(t, r);
          }
          if (grad) autograd::rebase_history(t, autograd::grad_fn(r));
          return nb::borrow(self);
        },
        nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = none);
  }
  for (bool is_max : {true, false}) {
    const char* name = is_max ? "cummax" : "cummin";
    m.def(
        name,
        [is_max, name](const Tensor& t, int64_t dim, nb::handle out) {
          return write_out_pair(out, is_max ? cummax(t, dim) : cummin(t, dim), name, name);
        },
        nb::arg("input"), nb::arg("dim"), nb::kw_only(), nb::arg("out") = none);
    cls.def(
        name,
        [is_max, name](const Tensor& t, int64_t dim) {
          return write_out_pair(nb::none(), is_max ? cummax(t, dim) : cummin(t, dim), name, name);
        },
        nb::arg("dim"));
  }
  m.def(
      "logcumsumexp",
      [](const Tensor& t, int64_t dim, nb::handle out) {
        return write_out(out, logcumsumexp(t, dim), "logcumsumexp", false, t);
      },
      nb::arg("input"), nb::arg("dim"), nb::kw_only(), nb::arg("out") = none);
  cls.def(
      "logcumsumexp", [](const Tensor& t, int64_t dim) { return logcumsumexp(t, dim); }, nb::arg("dim"));

  // ---- sorting and selection ----
  // torch's two sort/argsort overloads: (dim=-1, descending=False) positional, or stable= given
  // with dim and descending as keywords only.
  struct SortArgs {
    int64_t dim = -1;
    bool descending = false, stable = false;
    nb::handle out = Py_None;
  };
  auto sort_args = [](const char* name, nb::args args, nb::kwargs kwargs, bool allow_out) {
    auto kw = [&](const char* k) -> nb::handle { return kwargs.contains(k) ? nb::handle(kwargs[k]) : nb::handle(); };
    for (auto [k, v] : kwargs) {
      std::string key = nb::cast<std::string>(k);
      if (key != "dim" && key != "descending" && key != "stable" && !(allow_out && key == "out"))
        throw ember::TypeError(detail::str_cat(name, "() got an unexpected keyword argument '", key, "'"));
    }
    EMBER_CHECK_TYPEERR(args.size() <= 2, name, "() takes at most 3 positional arguments");
    EMBER_CHECK_TYPEERR(!(kw("stable").is_valid() && args.size() > 0), name,
                        "() received an invalid combination of arguments: with stable=, dim and descending must be "
                        "keywords");
    EMBER_CHECK_TYPEERR(!(args.size() > 0 && kw("dim").is_valid()) && !(args.size() > 1 && kw("descending").is_valid()),
                        name, "() got multiple values for an argument");
    nb::handle dim = args.size() > 0 ? nb::handle(args[0]) : kw("dim");
    nb::handle desc = args.size() > 1 ? nb::handle(args[1]) : kw("descending");
    SortArgs a;
    if (dim.is_valid()) a.dim = int_arg(dim, name);
    a.descending = desc.is_valid() && nb::cast<bool>(desc);
    a.stable = kw("stable").is_valid() && nb::cast<bool>(kw("stable"));
    if (kw("out").is_valid()) a.out = kw("out");
    return a;
  };
  auto sort_f = [sort_args](const Tensor& t, nb::args args, nb::kwargs kwargs) {
    SortArgs a = sort_args("sort", args, kwargs, true);
    return write_out_pair(a.out, sort(t, a.dim, a.descending, a.stable), "sort", "sort");
  };
  m.def("sort", sort_f, nb::arg("input"), nb::arg("args"), nb::arg("kwargs"));
  cls.def("sort", sort_f, nb::arg("args"), nb::arg("kwargs"));
  auto argsort_f = [sort_args](const Tensor& t, nb::args args, nb::kwargs kwargs) {
    SortArgs a = sort_args("argsort", args, kwargs, false);
    return argsort(t, a.dim, a.descending, a.stable);
  };
  m.def("argsort", argsort_f, nb::arg("input"), nb::arg("args"), nb::arg("kwargs"));
  cls.def("argsort", argsort_f, nb::arg("args"), nb::arg("kwargs"));
  auto msort_f = [](const Tensor& t) { return std::get<0>(sort(t, 0)); };
  m.def("msort", msort_f, nb::arg("input"));
  cls.def("msort", msort_f);

  auto topk_f = [](const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted, nb::handle out) {
    return write_out_pair(out, topk(t, k, dim, largest, sorted), "topk", "topk");
  };
  m.def("topk", topk_f, nb::arg("input"), nb::arg("k"), nb::arg("dim") = -1, nb::arg("largest") = true,
        nb::arg("sorted") = true, nb::kw_only(), nb::arg("out") = none);
  cls.def(
      "topk",
      [topk_f](const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
        return topk_f(t, k, dim, largest, sorted, nb::none());
      },
      nb::arg("k"), nb::arg("dim") = -1, nb::arg("largest") = true, nb::arg("sorted") = true);

  auto kth_f = [](const Tensor& t, int64_t k, int64_t dim, bool keepdim, nb::handle out) {
    return write_out_pair(out, kthvalue(t, k, dim, keepdim), "kthvalue", "kthvalue");
  };
  m.def("kthvalue", kth_f, nb::arg("input"), nb::arg("k"), nb::arg("dim") = -1, nb::arg("keepdim") = false,
        nb::kw_only(), nb::arg("out") = none);
  cls.def(
      "kthvalue",
      [kth_f](const Tensor& t, int64_t k, int64_t dim, bool keepdim) { return kth_f(t, k, dim, keepdim, nb::none()); },
      nb::arg("k"), nb::arg("dim") = -1, nb::arg("keepdim") = false);

  for (bool nan : {false, true}) {
    const char* name = nan ? "nanmedian" : "median";
    m.def(
        name,
        [nan](const Tensor& t, nb::handle dim, bool keepdim, nb::handle out) {
          return median_any(nan, t, dim, keepdim, out);
        },
        nb::arg("input"), nb::arg("dim").none() = unset, nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("out") = none);
    cls.def(
        name,
        [nan](const Tensor& t, nb::handle dim, bool keepdim) { return median_any(nan, t, dim, keepdim, nb::none()); },
        nb::arg("dim").none() = unset, nb::arg("keepdim") = false);
  }
  auto mode_f = [](const Tensor& t, int64_t dim, bool keepdim, nb::handle out) {
    return write_out_pair(out, mode(t, dim, keepdim), "mode", "mode");
  };
  m.def("mode", mode_f, nb::arg("input"), nb::arg("dim") = -1, nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("out") = none);
  cls.def(
      "mode", [mode_f](const Tensor& t, int64_t dim, bool keepdim) { return mode_f(t, dim, keepdim, nb::none()); },
      nb::arg("dim") = -1, nb::arg("keepdim") = false);

  for (bool nan : {false, true}) {
    const char* name = nan ? "nanquantile" : "quantile";
    m.def(
        name,
        [nan, name](const Tensor& t, nb::handle q, nb::handle dim, bool keepdim, const std::string& interpolation,
                    nb::handle out) {
          return write_out(out, quantile_any(nan, t, q, dim, keepdim, interpolation), name);
        },
        nb::arg("input"), nb::arg("q"), nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("interpolation") = "linear", nb::arg("out") = none);
    cls.def(
        name,
        [nan](const Tensor& t, nb::handle q, nb::handle dim, bool keepdim, const std::string& interpolation) {
          return quantile_any(nan, t, q, dim, keepdim, interpolation);
        },
        nb::arg("q"), nb::arg("dim") = none, nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("interpolation") = "linear");
  }

  // ---- unique and counting ----
  auto unique_f = [](const Tensor& t, bool sorted, bool inverse, bool counts, nb::handle dim) {
    return unique_result(unique(t, sorted, inverse, counts, opt_int(dim, "unique")), inverse, counts);
  };
  m.def("unique", unique_f, nb::arg("input"), nb::arg("sorted") = true, nb::arg("return_inverse") = false,
        nb::arg("return_counts") = false, nb::arg("dim") = none);
  cls.def("unique", unique_f, nb::arg("sorted") = true, nb::arg("return_inverse") = false,
          nb::arg("return_counts") = false, nb::arg("dim") = none);
  auto unique_c = [](const Tensor& t, bool inverse, bool counts, nb::handle dim) {
    return unique_result(unique_consecutive(t, inverse, counts, opt_int(dim, "unique_consecutive")), inverse, counts);
  };
  m.def("unique_consecutive", unique_c, nb::arg("input"), nb::arg("return_inverse") = false,
        nb::arg("return_counts") = false, nb::arg("dim") = none);
  cls.def("unique_consecutive", unique_c, nb::arg("return_inverse") = false, nb::arg("return_counts") = false,
          nb::arg("dim") = none);

  auto bincount_f = [](const Tensor& t, nb::handle weights, int64_t minlength) {
    return bincount(t, weights.is_none() ? Tensor() : nb::cast<Tensor>(weights), minlength);
  };
  m.def("bincount", bincount_f, nb::arg("input"), nb::arg("weights") = none, nb::arg("minlength") = 0);
  cls.def("bincount", bincount_f, nb::arg("weights") = none, nb::arg("minlength") = 0);
  m.def(
      "histc",
      [](const Tensor& t, int64_t bins, double min, double max, nb::handle out) {
        return write_out(out, histc(t, bins, min, max), "histc");
      },
      nb::arg("input"), nb::arg("bins") = 100, nb::arg("min") = 0, nb::arg("max") = 0, nb::kw_only(),
      nb::arg("out") = none);
  cls.def(
      "histc", [](const Tensor& t, int64_t bins, double min, double max) { return histc(t, bins, min, max); },
      nb::arg("bins") = 100, nb::arg("min") = 0, nb::arg("max") = 0);
}

}  // namespace ember::py
