// Linear algebra: products (ember.mv, addmm, einsum, ...) and the ember._C._linalg functions
// that python/ember/linalg.py wraps into torch.linalg's API (named tuples, LinAlgError).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include "common.h"
#include "ember/ops/distance.h"
#include "ember/ops/lapack.h"

namespace ember::py {
namespace {

std::vector<Tensor> tensor_list(nb::args args, const char* op) {
  std::vector<Tensor> out;
  if (args.size() == 1 && !nb::isinstance<Tensor>(args[0])) {  // einsum(eq, [a, b])
    for (nb::handle h : args[0]) out.push_back(tensor_arg(h, op));
    return out;
  }
  for (nb::handle h : args) out.push_back(tensor_arg(h, op));
  return out;
}

// An addmm-style op: f(input, a, b, *, beta=1, alpha=1) and the Tensor method.
template <Tensor (*F)(const Tensor&, const Tensor&, const Tensor&, Scalar, Scalar)>
void def_add_product(nb::module_& m, nb::class_<Tensor>& cls, const char* name, const char* a, const char* b) {
  auto fn = [name](const Tensor& input, const Tensor& x, const Tensor& y, nb::handle beta, nb::handle alpha) {
    return F(input, x, y, number_arg(beta, name, "beta"), number_arg(alpha, name, "alpha"));
  };
  m.def(name, fn, nb::arg("input"), nb::arg(a), nb::arg(b), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  cls.def(name, fn, nb::arg(a), nb::arg(b), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
}

std::optional<double> opt_double(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<double>(h);
}

// torch.tensordot parses dims in Python before its kernel, so its exception classes for bad input
// are those of that code: RuntimeError for a dims of another kind or an out-of-range int, ValueError
// for a sequence that is not a pair, TypeError for a pair member that is not a list of ints, and
// AttributeError for a non-tensor operand with an int dims (whose ndim it reads).
Tensor tensordot_py(nb::handle a, nb::handle b, nb::handle dims) {
  auto as_tensor = [](nb::handle h, const char* arg, int pos) -> const Tensor& {
    if (!nb::isinstance<Tensor>(h))
      throw nb::type_error(detail::str_cat("tensordot(): argument '", arg, "' (position ", pos,
                                           ") must be Tensor, not ", Py_TYPE(h.ptr())->tp_name)
                               .c_str());
    return nb::cast<const Tensor&>(h);
  };
  auto by_count = [&](int64_t n, nb::handle shown) {
    if (n < 0) throw Error(detail::str_cat("tensordot expects dims >= 0, but got dims=", nb::str(shown).c_str()));
    for (nb::handle h : {a, b})
      if (!nb::isinstance<Tensor>(h))
        throw nb::attribute_error(
            detail::str_cat("'", Py_TYPE(h.ptr())->tp_name, "' object has no attribute 'dim'").c_str());
    return tensordot(nb::cast<const Tensor&>(a), nb::cast<const Tensor&>(b), n);
  };
  bool is_tensor = nb::isinstance<Tensor>(dims);
  if (PyLong_Check(dims.ptr())) {  // True/False too: torch takes them as 1/0
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(dims.ptr(), &overflow);
    if (overflow > 0)
      throw Error(detail::str_cat("tensordot expects dims < ndim_a or ndim_b, but got dims=", nb::str(dims).c_str()));
    return by_count(overflow < 0 ? -1 : n, dims);
  }
  if (!is_tensor && !PyList_Check(dims.ptr()) && !PyTuple_Check(dims.ptr()))
    throw Error(detail::str_cat(
        "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two lists, but "
        "got dims=",
        nb::str(dims).c_str()));
  nb::object seq = nb::borrow(dims);  // owned: a converted tensor must outlive the loop below
  if (is_tensor) {
    const Tensor& d = nb::cast<const Tensor&>(dims);
    if (d.numel() <= 1) return by_count(item(d).to_int(), dims);
    seq = dims.attr("tolist")();
  }
  std::vector<nb::object> pair;
  for (nb::handle h : seq) pair.push_back(nb::borrow(h));
  if (pair.size() < 2)
    throw nb::value_error(detail::str_cat("not enough values to unpack (expected 2, got ", pair.size(), ")").c_str());
  if (pair.size() > 2) throw nb::value_error("too many values to unpack (expected 2)");
  const Tensor& ta = as_tensor(a, "input", 1);
  const Tensor& tb = as_tensor(b, "other", 2);
  auto as_list = [](nb::handle h, const char* arg) {
    if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr()))
      throw nb::type_error(detail::str_cat("tensordot(): argument '", arg, "' (position 3) must be tuple of ints, not ",
                                           Py_TYPE(h.ptr())->tp_name)
                               .c_str());
    Shape s;
    for (nb::handle x : h) {
      if (!PyLong_Check(x.ptr()) || PyBool_Check(x.ptr()))
        throw nb::type_error(detail::str_cat("tensordot(): argument '", arg,
                                             "' (position 3) must be tuple of ints, but found element of type ",
                                             Py_TYPE(x.ptr())->tp_name, " at pos ", s.size())
                                 .c_str());
      s.push_back(nb::cast<int64_t>(x));
    }
    return s;
  };
  Shape dims_a = as_list(pair[0], "dims_self");  // in order: the first bad list is the one reported
  return tensordot(ta, tb, dims_a, as_list(pair[1], "dims_other"));
}

}  // namespace

void bind_linalg(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  m.def("mv", &mv, nb::arg("input"), nb::arg("vec"));
  // torch.pdist (ops/distance.cpp); ember/_composite.py checks the Python-level arguments.
  m.def(
      "_pdist", [](const Tensor& x, double p) { return pdist(x, p); }, nb::arg("input"), nb::arg("p"));
  // torch.cdist's direct form on (B, P, M) and (B, R, M) (ops/distance.cpp); ember/_composite.py broadcasts.
  m.def(
      "_cdist", [](const Tensor& x1, const Tensor& x2, double p) { return cdist(x1, x2, p); }, nb::arg("x1"),
      nb::arg("x2"), nb::arg("p"));
  cls.def("mv", &mv, nb::arg("vec"));
  m.def("dot", &dot, nb::arg("input"), nb::arg("tensor"));
  cls.def("dot", &dot, nb::arg("tensor"));
  m.def("vdot", &vdot, nb::arg("input"), nb::arg("other"));
  cls.def("vdot", &vdot, nb::arg("other"));
  def_add_product<&addmm>(m, cls, "addmm", "mat1", "mat2");
  def_add_product<&addmv>(m, cls, "addmv", "mat", "vec");
  def_add_product<&baddbmm>(m, cls, "baddbmm", "batch1", "batch2");
  def_add_product<&addbmm>(m, cls, "addbmm", "batch1", "batch2");
  m.def("einsum", [](const std::string& eq, nb::args ops) { return einsum(eq, tensor_list(ops, "einsum")); });
  m.def("tensordot", &tensordot_py, nb::arg("a"), nb::arg("b"), nb::arg("dims").none() = 2);

  nb::module_ l = m.def_submodule("_linalg", "LAPACK-backed functions wrapped by ember.linalg");
  l.def("inv", &linalg_inv);
  l.def("det", &linalg_det);
  l.def("slogdet", &linalg_slogdet);
  l.def("solve", &linalg_solve, nb::arg("A"), nb::arg("B"), nb::arg("left") = true);
  l.def("cholesky", &linalg_cholesky, nb::arg("A"), nb::arg("upper") = false);
  l.def("qr", &linalg_qr, nb::arg("A"), nb::arg("mode") = "reduced");
  l.def("svd", &linalg_svd, nb::arg("A"), nb::arg("full_matrices") = true);
  l.def("svdvals", &linalg_svdvals);
  l.def("geqrf", &geqrf, nb::arg("input"));
  l.def("orgqr_values", &orgqr_values, nb::arg("input"), nb::arg("tau"));
  l.def("eig", &linalg_eig, nb::arg("A"));
  l.def("eigvals", &linalg_eigvals, nb::arg("A"));
  l.def("ldl_factor_ex", &ldl_factor_ex, nb::arg("A"), nb::arg("hermitian") = false);
  l.def("ldl_solve", &ldl_solve, nb::arg("LD"), nb::arg("pivots"), nb::arg("B"), nb::arg("hermitian") = false);
  l.def("solve_triangular", &linalg_solve_triangular, nb::arg("A"), nb::arg("B"), nb::kw_only(), nb::arg("upper"),
        nb::arg("left") = true, nb::arg("unitriangular") = false);
  l.def("lu_factor_ex", &linalg_lu_factor_ex, nb::arg("A"), nb::arg("pivot") = true, nb::arg("check_errors") = false,
        nb::arg("op") = "torch.linalg.lu_factor_ex");
  l.def("lu_unpack", &lu_unpack, nb::arg("LU_data"), nb::arg("LU_pivots"), nb::arg("unpack_data") = true,
        nb::arg("unpack_pivots") = true);
  l.def("lu_solve", &linalg_lu_solve, nb::arg("LU"), nb::arg("pivots"), nb::arg("B"), nb::kw_only(),
        nb::arg("left") = true, nb::arg("adjoint") = false);
  l.def("eigh", &linalg_eigh, nb::arg("A"), nb::arg("UPLO") = "L");
  l.def("eigvalsh", &linalg_eigvalsh, nb::arg("A"), nb::arg("UPLO") = "L");
  l.def(
      "lstsq",
      [](const Tensor& a, const Tensor& b, nb::handle rcond, nb::handle driver) {
        return linalg_lstsq(a, b, opt_double(rcond), driver.is_none() ? "gelsy" : nb::cast<std::string>(driver));
      },
      nb::arg("A"), nb::arg("B"), nb::arg("rcond") = nb::none(), nb::arg("driver") = nb::none());
  l.def(
      "pinv",
      [](const Tensor& a, nb::handle atol, nb::handle rtol, bool hermitian) {
        return linalg_pinv(a, opt_double(atol), opt_double(rtol), hermitian);
      },
      nb::arg("A"), nb::arg("atol") = nb::none(), nb::arg("rtol") = nb::none(), nb::arg("hermitian") = false);
  l.def(
      "matrix_rank",
      [](const Tensor& a, nb::handle atol, nb::handle rtol, bool hermitian) {
        return linalg_matrix_rank(a, opt_double(atol), opt_double(rtol), hermitian);
      },
      nb::arg("A"), nb::arg("atol") = nb::none(), nb::arg("rtol") = nb::none(), nb::arg("hermitian") = false);
  l.def("matrix_power", &linalg_matrix_power, nb::arg("A"), nb::arg("n"));
  l.def("cross", &linalg_cross, nb::arg("input"), nb::arg("other"), nb::arg("dim") = -1);
  l.def(
      "norm",
      [](const Tensor& a, nb::handle ord, nb::handle dim, bool keepdim) {
        std::optional<double> o;
        std::string os;
        if (nb::isinstance<nb::str>(ord)) {
          os = nb::cast<std::string>(ord);
          EMBER_CHECK(os == "fro" || os == "nuc", "linalg.matrix_norm: Order ", os, " not supported.");
        } else if (!ord.is_none())
          o = nb::cast<double>(ord);
        return linalg_norm(a, o, os, dims_arg(dim), keepdim);
      },
      nb::arg("A"), nb::arg("ord") = nb::none(), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
}

}  // namespace ember::py
