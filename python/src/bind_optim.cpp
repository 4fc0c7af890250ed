// ember._C._optim: the fused optimizer steps of csrc/ember/optim (Note [Fused optimizer step]).
// Each takes the group's params and grads, its state lists (None where a parameter has no state
// yet; filled in place) and the param_group dict, whose hyperparameters are read here.
#include "common.h"
#include "ember/optim/optim.h"

namespace ember::py {
namespace {
using optim::TensorList;

TensorList tensor_list(nb::handle seq) {
  TensorList out;
  for (nb::handle x : seq) out.push_back(x.is_none() ? Tensor() : nb::cast<Tensor>(x));
  return out;
}

// Stores the (possibly new) state tensors back into the caller's list.
void store(nb::list dst, const TensorList& src) {
  for (size_t i = 0; i < src.size(); ++i) {
    if (i < nb::len(dst))
      dst[i] = src[i].defined() ? nb::cast(src[i]) : nb::none();
    else
      dst.append(src[i].defined() ? nb::cast(src[i]) : nb::none());
  }
}

nb::handle item(nb::dict g, const char* key) {
  if (!g.contains(key)) throw nb::key_error(key);
  return g[key];
}
double num(nb::handle h) {  // float(h): Python numbers and one-element tensors (tensor-valued lr)
  double v = PyFloat_AsDouble(h.ptr());
  if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return v;
}
double num(nb::dict g, const char* key) { return num(item(g, key)); }
double num(nb::dict g, const char* key, size_t i) { return num(item(g, key)[nb::int_(i)]); }
bool flag(nb::dict g, const char* key) { return g.contains(key) && nb::cast<bool>(nb::bool_(g[key])); }

struct Lists {  // the state lists of one call, converted once and stored back at the end
  std::vector<std::pair<nb::list, TensorList>> lists;
  TensorList& operator()(nb::list l) {
    lists.emplace_back(l, tensor_list(l));
    return lists.back().second;
  }
  Lists() { lists.reserve(8); }  // references handed out stay valid
  void store_all() {
    for (auto& [l, v] : lists) store(l, v);
  }
};

}  // namespace

void bind_optim(nb::module_& root) {
  nb::module_ m = root.def_submodule("_optim", "Fused optimizer steps (csrc/ember/optim)");
  m.def("sgd_step", [](nb::list params, nb::list grads, nb::list bufs, nb::dict g) {
    optim::SgdOptions o{num(g, "lr"),           num(g, "momentum"),  num(g, "dampening"),
                        num(g, "weight_decay"), flag(g, "nesterov"), flag(g, "maximize")};
    TensorList b = tensor_list(bufs);
    optim::sgd_step(tensor_list(params), tensor_list(grads), b, o);
    store(bufs, b);
  });
  m.def("adam_step",
        [](nb::list params, nb::list grads, nb::list m1, nb::list m2, nb::list vmax, nb::list steps, nb::dict g) {
          optim::AdamOptions o{
              num(g, "lr"),           num(g, "betas", 0), num(g, "betas", 1),  num(g, "eps"),
              num(g, "weight_decay"), flag(g, "amsgrad"), flag(g, "maximize"), flag(g, "decoupled_weight_decay")};
          Lists l;
          TensorList &a = l(m1), &b = l(m2), &c = l(vmax), &s = l(steps);
          optim::adam_step(tensor_list(params), tensor_list(grads), a, b, c, s, o);
          l.store_all();
        });
  m.def("adamax_step", [](nb::list params, nb::list grads, nb::list m1, nb::list inf, nb::list steps, nb::dict g) {
    optim::AdamaxOptions o{num(g, "lr"),  num(g, "betas", 0),     num(g, "betas", 1),
                           num(g, "eps"), num(g, "weight_decay"), flag(g, "maximize")};
    Lists l;
    TensorList &a = l(m1), &b = l(inf), &s = l(steps);
    optim::adamax_step(tensor_list(params), tensor_list(grads), a, b, s, o);
    l.store_all();
  });
  m.def("nadam_step", [](nb::list params, nb::list grads, nb::list m1, nb::list m2, nb::list mu_products,
                         nb::list steps, nb::dict g) {
    optim::NadamOptions o{num(g, "lr"),
                          num(g, "betas", 0),
                          num(g, "betas", 1),
                          num(g, "eps"),
                          num(g, "weight_decay"),
                          num(g, "momentum_decay"),
                          flag(g, "decoupled_weight_decay"),
                          flag(g, "maximize")};
    Lists l;
    TensorList &a = l(m1), &b = l(m2), &c = l(mu_products), &s = l(steps);
    optim::nadam_step(tensor_list(params), tensor_list(grads), a, b, c, s, o);
    l.store_all();
  });
  m.def("radam_step", [](nb::list params, nb::list grads, nb::list m1, nb::list m2, nb::list steps, nb::dict g) {
    optim::RadamOptions o{num(g, "lr"),       num(g, "betas", 0),     num(g, "betas", 1),
                          num(g, "eps"),      num(g, "weight_decay"), flag(g, "decoupled_weight_decay"),
                          flag(g, "maximize")};
    Lists l;
    TensorList &a = l(m1), &b = l(m2), &s = l(steps);
    optim::radam_step(tensor_list(params), tensor_list(grads), a, b, s, o);
    l.store_all();
  });
  m.def("adagrad_step", [](nb::list params, nb::list grads, nb::list sums, nb::list steps, nb::dict g) {
    optim::AdagradOptions o{num(g, "lr"),
                            num(g, "lr_decay"),
                            num(g, "weight_decay"),
                            num(g, "eps"),
                            num(g, "initial_accumulator_value"),
                            flag(g, "maximize")};
    Lists l;
    TensorList &a = l(sums), &s = l(steps);
    optim::adagrad_step(tensor_list(params), tensor_list(grads), a, s, o);
    l.store_all();
  });
  m.def("rmsprop_step",
        [](nb::list params, nb::list grads, nb::list sq, nb::list bufs, nb::list gavg, nb::list steps, nb::dict g) {
          optim::RmspropOptions o{num(g, "lr"),       num(g, "alpha"),     num(g, "eps"),      num(g, "weight_decay"),
                                  num(g, "momentum"), flag(g, "centered"), flag(g, "maximize")};
          Lists l;
          TensorList &a = l(sq), &b = l(bufs), &c = l(gavg), &s = l(steps);
          optim::rmsprop_step(tensor_list(params), tensor_list(grads), a, b, c, s, o);
          l.store_all();
        });
  m.def("adadelta_step", [](nb::list params, nb::list grads, nb::list sq, nb::list acc, nb::list steps, nb::dict g) {
    optim::AdadeltaOptions o{num(g, "lr"), num(g, "rho"), num(g, "eps"), num(g, "weight_decay"), flag(g, "maximize")};
    Lists l;
    TensorList &a = l(sq), &b = l(acc), &s = l(steps);
    optim::adadelta_step(tensor_list(params), tensor_list(grads), a, b, s, o);
    l.store_all();
  });
  m.def("asgd_step",
        [](nb::list params, nb::list grads, nb::list axs, nb::list etas, nb::list mus, nb::list steps, nb::dict g) {
          optim::AsgdOptions o{num(g, "lr"), num(g, "lambd"),        num(g, "alpha"),
                               num(g, "t0"), num(g, "weight_decay"), flag(g, "maximize")};
          Lists l;
          TensorList &a = l(axs), &b = l(etas), &c = l(mus), &s = l(steps);
          optim::asgd_step(tensor_list(params), tensor_list(grads), a, b, c, s, o);
          l.store_all();
        });
  m.def("rprop_step", [](nb::list params, nb::list grads, nb::list prevs, nb::list sizes, nb::list steps, nb::dict g) {
    optim::RpropOptions o{
        num(g, "lr"),       num(g, "etas", 0), num(g, "etas", 1), num(g, "step_sizes", 0), num(g, "step_sizes", 1),
        flag(g, "maximize")};
    Lists l;
    TensorList &a = l(prevs), &b = l(sizes), &s = l(steps);
    optim::rprop_step(tensor_list(params), tensor_list(grads), a, b, s, o);
    l.store_all();
  });
}

}  // namespace ember::py
