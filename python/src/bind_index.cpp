// Indexing, assembly and shape ops (ops/index.cpp, ops/shape.cpp): ember.* functions and Tensor methods.
#include "common.h"
#include "ember/autograd/record.h"
#include "ember/ops/tri_indices.h"

namespace ember::py {
namespace {
using autograd::grad_fn;
using autograd::GradMode;
using autograd::NoGradGuard;

TensorVec tensor_list(nb::handle seq, const char* op) {
  if (nb::isinstance<Tensor>(seq) || !PySequence_Check(seq.ptr()))
    throw ember::TypeError(
        detail::str_cat(op, "(): argument 'tensors' must be tuple of Tensors, not ", Py_TYPE(seq.ptr())->tp_name));
  TensorVec r;
  for (nb::handle h : seq) {
    if (!nb::isinstance<Tensor>(h))
      throw ember::TypeError(detail::str_cat(op,
                                             "(): argument 'tensors' must be tuple of Tensors, but found element "
                                             "of type ",
                                             Py_TYPE(h.ptr())->tp_name));
    r.push_back(nb::cast<Tensor>(h));
  }
  return r;
}
// f(*tensors) or f([tensors]).
TensorVec tensors_varargs(nb::args args, const char* op) {
  if (args.size() == 1 && !nb::isinstance<Tensor>(args[0])) return tensor_list(args[0], op);
  return tensor_list(args, op);
}
nb::tuple to_tuple(const TensorVec& v) {
  nb::list l;
  for (const Tensor& t : v) l.append(nb::cast(t));
  return nb::tuple(l);
}
// Writes r into out= (resized). `disjoint` inputs may not share memory with it at all,
// `no_partial` ones not in part (Note [Memory overlap]), as torch checks for these ops.
Tensor with_out(const Tensor& r, nb::handle out, const char* op, const TensorVec& disjoint = {},
                const TensorVec& no_partial = {}) {
  if (out.is_none()) return r;
  Tensor o = nb::cast<Tensor>(out);
  EMBER_CHECK(!(GradMode::is_enabled() && autograd::requires_grad(r)), op,
              "(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
  resize_(o, r.sizes());
  assert_no_internal_overlap(o);
  for (const Tensor& t : disjoint) assert_no_overlap(o, t);
  for (const Tensor& t : no_partial) assert_no_partial_overlap(o, t);
  copy_(o, r);
  return o;
}
// A number or 0-d tensor used as a fill value for a tensor of dtype `dt`.
Tensor value_arg(nb::handle h, ScalarType dt, const char* op) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  Scalar s;
  if (!to_scalar(h, s))
    throw ember::TypeError(detail::str_cat(op, "(): argument 'value' must be Number, not ", Py_TYPE(h.ptr())->tp_name));
  check_number_fits(scalar_tensor(s, std::nullopt, true), dt);
  return to_dtype(scalar_tensor(s), dt);
}
Tensor long_index(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  Shape v = int_or_ints(h, "index");
  Tensor r = empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
  std::copy(v.begin(), v.end(), r.data<int64_t>());
  return r;
}

// In-place form of an out-of-place op: `compute` runs after the leaf check; its result is
// written into self and, under autograd, becomes self's history (Note [In-place under autograd]).
// Self may not have internal overlap nor share memory with the `disjoint` operands (torch's
// rule for ops that read them while writing self in an order of their own).
template <typename F>
nb::object inplace(nb::handle self_h, std::initializer_list<const Tensor*> others, const char* op, F compute,
                   std::initializer_list<const Tensor*> disjoint = {}) {
  Tensor& self = nb::cast<Tensor&>(self_h);
  assert_no_internal_overlap(self);
  for (const Tensor* t : disjoint) assert_no_overlap(self, *t);
  bool needs = autograd::inplace_needs_grad(self, others);
  if (needs) autograd::check_inplace(self, true);
  Tensor r = compute(self);
  EMBER_CHECK(r.sizes() == self.sizes(), op, ": output with shape ", self.shape_str(),
              " doesn't match the broadcast shape ", r.shape_str());
  if (needs) {
    {
      NoGradGuard g;
      copy_(self, r);
    }
    if (auto fn = grad_fn(r)) autograd::rebase_history(self, fn);
  } else {
    copy_(self, r);
  }
  return nb::borrow(self_h);
}

std::optional<int64_t> opt_int(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<int64_t>(h);
}
Tensor repeats_arg(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  return full({}, nb::cast<int64_t>(h), ScalarType::Int64);
}
TensorVec split_any(const Tensor& t, nb::handle s, int64_t dim) {
  if (PyLong_Check(s.ptr())) return split(t, nb::cast<int64_t>(s), dim);
  if (nb::isinstance<Tensor>(s)) return split(t, item(nb::cast<Tensor>(s)).to_int(), dim);
  return split_with_sizes(t, int_or_ints(s, "split"), dim);
}
TensorVec tensor_split_any(const Tensor& t, nb::handle s, int64_t dim) {
  if (PyLong_Check(s.ptr())) return tensor_split(t, nb::cast<int64_t>(s), dim);
  if (nb::isinstance<Tensor>(s)) {
    Tensor ix = nb::cast<Tensor>(s);
    EMBER_CHECK(is_integral(ix.dtype(), false) && ix.dim() <= 1,
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got ",
                dtype_name(ix.dtype()));
    if (ix.dim() == 0) return tensor_split(t, item(ix).to_int(), dim);
    Tensor c = contiguous(to_dtype(ix, ScalarType::Int64));
    return tensor_split_indices(t, Shape(c.data<int64_t>(), c.data<int64_t>() + c.numel()), dim);
  }
  return tensor_split_indices(t, int_or_ints(s, "tensor_split"), dim);
}
Shape dims_of(nb::args args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return int_or_ints(args[0], "flip");
  // ints one by one (x.flip(0, 1)): an int-list argument to torch
  Shape r;
  for (nb::handle h : args) r.push_back(list_element(h, "flip", "dims", r.size() + 1));
  return r;
}
// index_put's `indices`: a tuple/list of tensors (None allowed).
TensorVec index_list(nb::handle h) {
  TensorVec r;
  for (nb::handle x : h) r.push_back(x.is_none() ? Tensor() : nb::cast<Tensor>(x));
  return r;
}
Tensor sorter_arg(nb::handle h) { return h.is_none() ? Tensor() : nb::cast<Tensor>(h); }
Tensor search_values(nb::handle h, ScalarType dt) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  Scalar s;
  EMBER_CHECK_TYPEERR(to_scalar(h, s), "searchsorted(): argument 'input' must be Tensor or Number");
  return scalar_tensor(s, dt);
}
bool side_right(bool right, nb::handle side) {
  if (side.is_none()) return right;
  std::string s = nb::cast<std::string>(side);
  EMBER_CHECK(s == "left" || s == "right", "torch.searchsorted(): side can only be 'left' or 'right' but got ", s);
  EMBER_CHECK(!(right && s == "left"),
              "torch.searchsorted(): side and right can't be set to opposites, got side of "
              "left while right was True");
  return s == "right";
}

}  // namespace

// nonzero(as_tuple=True) and where(condition): one index tensor per dim (a 0-d input counts as 1-d).
nb::object nonzero_tuple(const Tensor& t) {
  Tensor r = nonzero(t);
  if (t.dim() == 0) return nb::cast(to_tuple({zeros({r.size(0)}, ScalarType::Int64)}));
  return nb::cast(to_tuple(unbind(r, 1)));
}

void bind_index(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  auto none = nb::none();

  // ---- assembly ----
  for (const char* name : {"cat", "concat", "concatenate"})
    m.def(
        name,
        [](nb::handle ts, int64_t dim, nb::handle out) {
          TensorVec v = tensor_list(ts, "cat");
          return with_out(cat(v, dim), out, "cat", v);
        },
        nb::arg("tensors"), nb::arg("dim") = 0, nb::kw_only(), nb::arg("out") = none);
  m.def(
      "stack",
      [](nb::handle ts, int64_t dim, nb::handle out) {
        TensorVec v = tensor_list(ts, "stack");
        return with_out(stack(v, dim), out, "stack", v);
      },
      nb::arg("tensors"), nb::arg("dim") = 0, nb::kw_only(), nb::arg("out") = none);
  m.def(
      "hstack",
      [](nb::handle ts, nb::handle out) {
        TensorVec v = tensor_list(ts, "hstack");
        return with_out(hstack(v), out, "hstack", v);
      },
      nb::arg("tensors"), nb::kw_only(), nb::arg("out") = none);
  for (const char* name : {"vstack", "row_stack"})
    m.def(
        name,
        [](nb::handle ts, nb::handle out) {
          TensorVec v = tensor_list(ts, "vstack");
          return with_out(vstack(v), out, "vstack", v);
        },
        nb::arg("tensors"), nb::kw_only(), nb::arg("out") = none);
  m.def(
      "dstack",
      [](nb::handle ts, nb::handle out) {
        TensorVec v = tensor_list(ts, "dstack");
        return with_out(dstack(v), out, "dstack", v);
      },
      nb::arg("tensors"), nb::kw_only(), nb::arg("out") = none);
  m.def("broadcast_tensors",
        [](nb::args args) { return to_tuple(broadcast_tensors(tensors_varargs(args, "broadcast_tensors"))); });
  m.def("meshgrid", [](nb::args args, nb::kwargs kw) {
    std::string indexing = "ij";
    if (kw.contains("indexing") && !kw["indexing"].is_none()) indexing = nb::cast<std::string>(kw["indexing"]);
    return to_tuple(meshgrid(tensors_varargs(args, "meshgrid"), indexing));
  });
  m.def("cartesian_prod", [](nb::args args) { return cartesian_prod(tensors_varargs(args, "cartesian_prod")); });
  m.def("combinations", &combinations, nb::arg("input"), nb::arg("r") = 2, nb::arg("with_replacement") = false);
  m.def(
      "atleast_1d", [](const Tensor& t) { return atleast_nd(t, 1); }, nb::arg("input"));
  m.def(
      "atleast_2d", [](const Tensor& t) { return atleast_nd(t, 2); }, nb::arg("input"));
  m.def(
      "atleast_3d", [](const Tensor& t) { return atleast_nd(t, 3); }, nb::arg("input"));

  // ---- splitting (views) ----
  auto split_f = [](const Tensor& t, nb::handle s, int64_t dim) { return to_tuple(split_any(t, s, dim)); };
  m.def(
      "split",
      [split_f](nb::handle t, nb::handle s, int64_t dim) {
        if (!nb::isinstance<Tensor>(t))  // torch.split is Python calling tensor.split
          throw nb::attribute_error(
              detail::str_cat("'", Py_TYPE(t.ptr())->tp_name, "' object has no attribute 'split'").c_str());
        return split_f(nb::cast<const Tensor&>(t), s, dim);
      },
      nb::arg("tensor"), nb::arg("split_size_or_sections"), nb::arg("dim") = 0);
  cls.def("split", split_f, nb::arg("split_size"), nb::arg("dim") = 0);
  auto split_ws = [](const Tensor& t, nb::handle s, int64_t dim) {
    return to_tuple(split_with_sizes(t, int_or_ints(s, "split_with_sizes"), dim));
  };
  m.def("split_with_sizes", split_ws, nb::arg("input"), nb::arg("split_sizes"), nb::arg("dim") = 0);
  cls.def("split_with_sizes", split_ws, nb::arg("split_sizes"), nb::arg("dim") = 0);
  auto chunk_f = [](const Tensor& t, int64_t c, int64_t dim) { return to_tuple(chunk(t, c, dim)); };
  m.def("chunk", chunk_f, nb::arg("input"), nb::arg("chunks"), nb::arg("dim") = 0);
  cls.def("chunk", chunk_f, nb::arg("chunks"), nb::arg("dim") = 0);
  auto tsplit = [](const Tensor& t, nb::handle s, int64_t dim) { return to_tuple(tensor_split_any(t, s, dim)); };
  m.def("tensor_split", tsplit, nb::arg("input"), nb::arg("indices_or_sections"), nb::arg("dim") = 0);
  cls.def("tensor_split", tsplit, nb::arg("indices_or_sections"), nb::arg("dim") = 0);
  auto unbind_f = [](const Tensor& t, int64_t dim) { return to_tuple(unbind(t, dim)); };
  m.def("unbind", unbind_f, nb::arg("input"), nb::arg("dim") = 0);
  cls.def("unbind", unbind_f, nb::arg("dim") = 0);

  // ---- reordering and repetition ----
  m.def(
      "flip",
      [](const Tensor& t, nb::handle dims) {
        // torch.flip's dims is an int list (torch refuses a bare int, with a TypeError as for an overflow)
        return flip(
            t, PyLong_Check(dims.ptr()) ? Shape{list_element(dims, "flip", "dims", 1)} : int_or_ints(dims, "flip"));
      },
      nb::arg("input"), nb::arg("dims"));
  cls.def("flip", [](const Tensor& t, nb::args dims) { return flip(t, dims_of(dims)); });
  auto fliplr = [](const Tensor& t) {
    EMBER_CHECK(t.dim() >= 2, "Input must be >= 2-d.");
    return flip(t, {1});
  };
  auto flipud = [](const Tensor& t) {
    EMBER_CHECK(t.dim() >= 1, "Input must be >= 1-d.");
    return flip(t, {0});
  };
  m.def("fliplr", fliplr, nb::arg("input"));
  cls.def("fliplr", fliplr);
  m.def("flipud", flipud, nb::arg("input"));
  cls.def("flipud", flipud);
  auto roll_f = [](const Tensor& t, nb::handle shifts, nb::handle dims) {
    return roll(t, int_or_ints(shifts, "roll"), dims.is_none() ? Shape() : int_or_ints(dims, "roll"));
  };
  m.def("roll", roll_f, nb::arg("input"), nb::arg("shifts"), nb::arg("dims") = none);
  cls.def("roll", roll_f, nb::arg("shifts"), nb::arg("dims") = none);
  cls.def("repeat", [](const Tensor& t, nb::args args) { return repeat(t, sizes_from_args(args, "repeat")); });
  m.def(
      "tile", [](const Tensor& t, nb::handle dims) { return tile(t, int_or_ints(dims, "tile")); }, nb::arg("input"),
      nb::arg("dims"));
  cls.def("tile", [](const Tensor& t, nb::args args) { return tile(t, sizes_from_args(args, "tile")); });
  // output_size only saves torch a device sync; here it is checked against the result's length.
  auto rep_il = [](const Tensor& t, nb::handle repeats, nb::handle dim, nb::handle output_size) {
    Tensor r =
        repeats.is_none() ? repeat_interleave_indices(t) : repeat_interleave(t, repeats_arg(repeats), opt_int(dim));
    if (!output_size.is_none()) {
      int64_t want = nb::cast<int64_t>(output_size);
      int64_t got = repeats.is_none() || dim.is_none() ? r.numel() : r.size(nb::cast<int64_t>(dim));
      if (!repeats.is_none() && !nb::isinstance<Tensor>(repeats))
        EMBER_CHECK(want == got, "repeat_interleave: Invalid output_size, expected ", got, " but got ", want);
      EMBER_CHECK(want == got, "allocated size does not match required size");
    }
    return r;
  };
  m.def("repeat_interleave", rep_il, nb::arg("input"), nb::arg("repeats") = none, nb::arg("dim") = none, nb::kw_only(),
        nb::arg("output_size") = none);
  cls.def("repeat_interleave", rep_il, nb::arg("repeats") = none, nb::arg("dim") = none, nb::kw_only(),
          nb::arg("output_size") = none);
  auto rot = [](const Tensor& t, int64_t k, nb::handle dims) {
    return rot90(t, k, dims.is_none() ? Shape{0, 1} : int_or_ints(dims, "rot90"));
  };
  m.def("rot90", rot, nb::arg("input"), nb::arg("k") = 1, nb::arg("dims") = none);
  cls.def("rot90", rot, nb::arg("k") = 1, nb::arg("dims") = none);
  auto ncopy = [](const Tensor& t, int64_t dim, int64_t start, int64_t length) {
    return narrow_copy(t, dim, start, length);
  };
  m.def("narrow_copy", ncopy, nb::arg("input"), nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  cls.def("narrow_copy", ncopy, nb::arg("dim"), nb::arg("start"), nb::arg("length"));

  // ---- triangles and diagonals ----
  // tril_indices / triu_indices (ops/tri_indices.cpp); ember/_composite.py gives them torch's signature.
  m.def(
      "_tri_indices",
      [](int64_t row, int64_t col, int64_t offset, ScalarType dtype, bool upper) {
        return upper ? triu_indices(row, col, offset, dtype) : tril_indices(row, col, offset, dtype);
      },
      nb::arg("row"), nb::arg("col"), nb::arg("offset"), nb::arg("dtype"), nb::arg("upper"));
  m.def(
      "tril", [](const Tensor& t, int64_t k, nb::handle out) { return with_out(tril(t, k), out, "tril"); },
      nb::arg("input"), nb::arg("diagonal") = 0, nb::kw_only(), nb::arg("out") = none);
  m.def(
      "triu", [](const Tensor& t, int64_t k, nb::handle out) { return with_out(triu(t, k), out, "triu"); },
      nb::arg("input"), nb::arg("diagonal") = 0, nb::kw_only(), nb::arg("out") = none);
  cls.def(
      "tril", [](const Tensor& t, int64_t k) { return tril(t, k); }, nb::arg("diagonal") = 0);
  cls.def(
      "triu", [](const Tensor& t, int64_t k) { return triu(t, k); }, nb::arg("diagonal") = 0);
  cls.def(
      "tril_",
      [](nb::handle self, int64_t k) {
        return inplace(self, {}, "tril_", [&](const Tensor& s) { return tril(s, k); });
      },
      nb::arg("diagonal") = 0);
  cls.def(
      "triu_",
      [](nb::handle self, int64_t k) {
        return inplace(self, {}, "triu_", [&](const Tensor& s) { return triu(s, k); });
      },
      nb::arg("diagonal") = 0);
  m.def(
      "diagonal", [](const Tensor& t, int64_t off, int64_t d1, int64_t d2) { return diagonal(t, off, d1, d2); },
      nb::arg("input"), nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
  cls.def(
      "diagonal", [](const Tensor& t, int64_t off, int64_t d1, int64_t d2) { return diagonal(t, off, d1, d2); },
      nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
  auto dembed = [](const Tensor& t, int64_t off, int64_t d1, int64_t d2) { return diag_embed(t, off, d1, d2); };
  m.def("diag_embed", dembed, nb::arg("input"), nb::arg("offset") = 0, nb::arg("dim1") = -2, nb::arg("dim2") = -1);
  cls.def("diag_embed", dembed, nb::arg("offset") = 0, nb::arg("dim1") = -2, nb::arg("dim2") = -1);
  m.def(
      "diag", [](const Tensor& t, int64_t k, nb::handle out) { return with_out(diag(t, k), out, "diag"); },
      nb::arg("input"), nb::arg("diagonal") = 0, nb::kw_only(), nb::arg("out") = none);
  cls.def(
      "diag", [](const Tensor& t, int64_t k) { return diag(t, k); }, nb::arg("diagonal") = 0);
  m.def("trace", &trace, nb::arg("input"));
  cls.def("trace", &trace);
  for (const char* name : {"outer", "ger"}) {
    m.def(
        name,
        [](const Tensor& a, const Tensor& b, nb::handle out) {
          return with_out(outer(a, b), out, "outer", {}, {a, b});
        },
        nb::arg("input"), nb::arg("vec2"), nb::kw_only(), nb::arg("out") = none);
    cls.def(name, &outer, nb::arg("vec2"));
  }
  m.def(
      "kron", [](const Tensor& a, const Tensor& b, nb::handle out) { return with_out(kron(a, b), out, "kron"); },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = none);
  cls.def("kron", &kron, nb::arg("other"));

  // ---- indexing ----
  m.def(
      "index_select",
      [](const Tensor& t, int64_t dim, const Tensor& ix, nb::handle out) {
        return with_out(index_select(t, dim, ix), out, "index_select", {t, ix});
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::kw_only(), nb::arg("out") = none);
  cls.def("index_select", &index_select, nb::arg("dim"), nb::arg("index"));
  m.def(
      "gather",
      [](const Tensor& t, int64_t dim, const Tensor& ix, bool, nb::handle out) {
        return with_out(gather(t, dim, ix), out, "gather", {t}, {ix});
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::kw_only(), nb::arg("sparse_grad") = false,
      nb::arg("out") = none);
  cls.def(
      "gather", [](const Tensor& t, int64_t dim, const Tensor& ix, bool) { return gather(t, dim, ix); }, nb::arg("dim"),
      nb::arg("index"), nb::kw_only(), nb::arg("sparse_grad") = false);

  // scatter(dim, index, src | value, *, reduce=None)
  auto scatter_f = [](const Tensor& t, int64_t dim, const Tensor& ix, nb::handle src, nb::handle value,
                      nb::handle reduce) {
    nb::handle v = src.is_none() ? value : src;
    EMBER_CHECK_TYPEERR(!v.is_none(), "scatter() missing required argument 'src' or 'value'");
    Tensor s = nb::isinstance<Tensor>(v) ? nb::cast<Tensor>(v) : value_arg(v, t.dtype(), "scatter");
    if (nb::isinstance<Tensor>(v)) {
      EMBER_CHECK(s.dtype() == t.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
      EMBER_CHECK(ix.dim() == s.dim() || (ix.dim() == 0 && s.dim() == 0),
                  "Index tensor must have the same number of dimensions as src tensor");
    }
    return scatter(t, dim, ix, s, reduce.is_none() ? "" : nb::cast<std::string>(reduce));
  };
  m.def("scatter", scatter_f, nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::arg("src") = none,
        nb::arg("value") = none, nb::kw_only(), nb::arg("reduce") = none);
  cls.def("scatter", scatter_f, nb::arg("dim"), nb::arg("index"), nb::arg("src") = none, nb::arg("value") = none,
          nb::kw_only(), nb::arg("reduce") = none);
  cls.def(
      "scatter_",
      [scatter_f](nb::handle self, int64_t dim, const Tensor& ix, nb::handle src, nb::handle value, nb::handle reduce) {
        Tensor s = nb::isinstance<Tensor>(src) ? nb::cast<Tensor>(src) : Tensor();
        return inplace(self, {&s}, "scatter_",
                       [&](const Tensor& t) { return scatter_f(t, dim, ix, src, value, reduce); }, {&ix, &s});
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("src") = none, nb::arg("value") = none, nb::kw_only(),
      nb::arg("reduce") = none);
  auto sadd = [](const Tensor& t, int64_t dim, const Tensor& ix, const Tensor& src) {
    EMBER_CHECK(src.dtype() == t.dtype(), "scatter_add(): Expected self.dtype to be equal to src.dtype");
    return scatter_add(t, dim, ix, src);
  };
  m.def("scatter_add", sadd, nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  cls.def("scatter_add", sadd, nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  cls.def(
      "scatter_add_",
      [](nb::handle self, int64_t dim, const Tensor& ix, const Tensor& src) {
        Tensor& t = nb::cast<Tensor&>(self);
        EMBER_CHECK(src.dtype() == t.dtype(), "scatter_add(): Expected self.dtype to be equal to src.dtype");
        scatter_add_(t, dim, ix, src);  // Note [Index accumulation in place]
        return nb::borrow(self);
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  auto sred = [](const Tensor& t, int64_t dim, const Tensor& ix, const Tensor& src, const std::string& reduce,
                 bool include_self) {
    EMBER_CHECK(src.dtype() == t.dtype(), "scatter_reduce(): Expected self.dtype to be equal to src.dtype");
    return scatter_reduce(t, dim, ix, src, reduce, include_self);
  };
  m.def("scatter_reduce", sred, nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"),
        nb::kw_only(), nb::arg("include_self") = true);
  cls.def("scatter_reduce", sred, nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"), nb::kw_only(),
          nb::arg("include_self") = true);
  cls.def(
      "scatter_reduce_",
      [sred](nb::handle self, int64_t dim, const Tensor& ix, const Tensor& src, const std::string& reduce, bool inc) {
        return inplace(self, {&src}, "scatter_reduce_",
                       [&](const Tensor& t) { return sred(t, dim, ix, src, reduce, inc); }, {&ix, &src});
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"), nb::kw_only(),
      nb::arg("include_self") = true);

  auto iadd = [](const Tensor& t, int64_t dim, const Tensor& ix, const Tensor& src, nb::handle alpha) {
    Scalar a = number_arg(alpha, "index_add", "alpha");
    EMBER_CHECK(src.dtype() == t.dtype(), "index_add_(): self (", dtype_name(t.dtype()), ") and source (",
                dtype_name(src.dtype()), ") must have the same scalar type");
    return index_add(t, dim, ix, src, a);
  };
  m.def("index_add", iadd, nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(),
        nb::arg("alpha") = 1);
  cls.def("index_add", iadd, nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def(
      "index_add_",
      [](nb::handle self, int64_t dim, const Tensor& ix, const Tensor& src, nb::handle alpha) {
        Tensor& t = nb::cast<Tensor&>(self);
        Scalar a = number_arg(alpha, "index_add", "alpha");
        EMBER_CHECK(src.dtype() == t.dtype(), "index_add_(): self (", dtype_name(t.dtype()), ") and source (",
                    dtype_name(src.dtype()), ") must have the same scalar type");
        index_add_(t, dim, ix, src, a);  // Note [Index accumulation in place]
        return nb::borrow(self);
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1);
  auto icopy = [](const Tensor& t, int64_t dim, const Tensor& ix, const Tensor& src) {
    EMBER_CHECK(src.dtype() == t.dtype(),
                "index_copy_(): self and source expected to have the same dtype, but got "
                "(self) ",
                dtype_name(t.dtype()), " and (source) ", dtype_name(src.dtype()));
    return index_copy(t, dim, ix, src);
  };
  m.def("index_copy", icopy, nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::arg("source"));
  cls.def("index_copy", icopy, nb::arg("dim"), nb::arg("index"), nb::arg("source"));
  cls.def(
      "index_copy_",
      [icopy](nb::handle self, int64_t dim, const Tensor& ix, const Tensor& src) {
        return inplace(self, {&src}, "index_copy_", [&](const Tensor& t) { return icopy(t, dim, ix, src); },
                       {&ix, &src});
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("source"));
  auto ifill = [](const Tensor& t, int64_t dim, const Tensor& ix, nb::handle value) {
    return index_fill(t, dim, ix, value_arg(value, t.dtype(), "index_fill"));
  };
  m.def("index_fill", ifill, nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::arg("value"));
  cls.def("index_fill", ifill, nb::arg("dim"), nb::arg("index"), nb::arg("value"));
  cls.def(
      "index_fill_",
      [ifill](nb::handle self, int64_t dim, const Tensor& ix, nb::handle value) {
        return inplace(self, {}, "index_fill_", [&](const Tensor& t) { return ifill(t, dim, ix, value); });
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("value"));
  // The functional forms require equal dtypes (t[i] = v converts instead, as in torch).
  auto same_dtype = [](const Tensor& t, const Tensor& values) {
    EMBER_CHECK(t.dtype() == values.dtype(), "Index put requires the source and destination dtypes match, got ",
                dtype_name(t.dtype()), " for the destination and ", dtype_name(values.dtype()), " for the source.");
  };
  auto iput = [same_dtype](const Tensor& t, nb::handle indices, const Tensor& values, bool acc) {
    same_dtype(t, values);
    return index_put(t, index_list(indices), values, acc);
  };
  m.def("index_put", iput, nb::arg("input"), nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
  cls.def("index_put", iput, nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
  auto iput_ = [same_dtype](nb::handle self, nb::handle indices, const Tensor& values, bool acc) {
    Tensor& t = nb::cast<Tensor&>(self);
    same_dtype(t, values);
    index_put_(t, index_list(indices), values, acc);
    return nb::borrow(self);
  };
  m.def("index_put_", iput_, nb::arg("input"), nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
  cls.def("index_put_", iput_, nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);

  auto mfill = [](const Tensor& t, const Tensor& mask, nb::handle value) {
    return masked_fill(t, mask, value_arg(value, t.dtype(), "masked_fill"));
  };
  m.def("masked_fill", mfill, nb::arg("input"), nb::arg("mask"), nb::arg("value"));
  cls.def("masked_fill", mfill, nb::arg("mask"), nb::arg("value"));
  cls.def(
      "masked_fill_",
      [](nb::handle self, const Tensor& mask, nb::handle value) {
        Tensor& t = nb::cast<Tensor&>(self);
        masked_fill_(t, mask, value_arg(value, t.dtype(), "masked_fill_"));
        return nb::borrow(self);
      },
      nb::arg("mask"), nb::arg("value"));
  m.def(
      "masked_select",
      [](const Tensor& t, const Tensor& mask, nb::handle out) {
        return with_out(masked_select(t, mask), out, "masked_select", {t, mask});
      },
      nb::arg("input"), nb::arg("mask"), nb::kw_only(), nb::arg("out") = none);
  cls.def("masked_select", &masked_select, nb::arg("mask"));
  m.def("masked_scatter", &masked_scatter, nb::arg("input"), nb::arg("mask"), nb::arg("source"));
  cls.def("masked_scatter", &masked_scatter, nb::arg("mask"), nb::arg("source"));
  cls.def(
      "masked_scatter_",
      [](nb::handle self, const Tensor& mask, const Tensor& src) {
        return inplace(self, {&src}, "masked_scatter_", [&](const Tensor& t) { return masked_scatter(t, mask, src); });
      },
      nb::arg("mask"), nb::arg("source"));
  m.def(
      "take",
      [](const Tensor& t, const Tensor& ix, nb::handle out) {
        return with_out(take(t, ix), out, "take", {t, ix});
      },
      nb::arg("input"), nb::arg("index"), nb::kw_only(), nb::arg("out") = none);
  cls.def("take", &take, nb::arg("index"));
  auto tad = [](const Tensor& t, const Tensor& ix, nb::handle dim) { return take_along_dim(t, ix, opt_int(dim)); };
  m.def("take_along_dim", tad, nb::arg("input"), nb::arg("indices"), nb::arg("dim") = none);
  cls.def("take_along_dim", tad, nb::arg("indices"), nb::arg("dim") = none);
  m.def("put", &put, nb::arg("input"), nb::arg("index"), nb::arg("source"), nb::arg("accumulate") = false);
  cls.def("put", &put, nb::arg("index"), nb::arg("source"), nb::arg("accumulate") = false);
  cls.def(
      "put_",
      [](nb::handle self, const Tensor& ix, const Tensor& src, bool acc) {
        return inplace(self, {&src}, "put_", [&](const Tensor& t) { return put(t, ix, src, acc); }, {&ix, &src});
      },
      nb::arg("index"), nb::arg("source"), nb::arg("accumulate") = false);

  auto nz = [](const Tensor& t, bool as_tuple) -> nb::object {
    if (as_tuple) return nonzero_tuple(t);
    return nb::cast(nonzero(t));
  };
  m.def("nonzero", nz, nb::arg("input"), nb::kw_only(), nb::arg("as_tuple") = false);
  cls.def("nonzero", nz, nb::kw_only(), nb::arg("as_tuple") = false);
  m.def("argwhere", &nonzero, nb::arg("input"));
  cls.def("argwhere", &nonzero);

  m.def(
      "searchsorted",
      [](const Tensor& seq, nb::handle values, bool out_int32, bool right, nb::handle side, nb::handle sorter) {
        return searchsorted(seq, search_values(values, seq.dtype()), out_int32, side_right(right, side),
                            sorter_arg(sorter));
      },
      nb::arg("sorted_sequence"), nb::arg("input"), nb::kw_only(), nb::arg("out_int32") = false,
      nb::arg("right") = false, nb::arg("side") = none, nb::arg("sorter") = none);
  m.def(
      "bucketize",
      [](nb::handle values, const Tensor& boundaries, bool out_int32, bool right) {
        return bucketize(search_values(values, boundaries.dtype()), boundaries, out_int32, right);
      },
      nb::arg("input"), nb::arg("boundaries"), nb::kw_only(), nb::arg("out_int32") = false, nb::arg("right") = false);
  (void)long_index;
}

}  // namespace ember::py
