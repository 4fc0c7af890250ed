// Random numbers: ember.Generator, seeding functions, random factories and Tensor fill methods.
#include <nanobind/stl/pair.h>

#include <cstring>

#include "common.h"
#include "ember/autograd/node.h"

namespace ember::py {

// The factories' shared keywords (common.h).
void check_factory_options(nb::handle layout, bool pin_memory, bool requires_grad, ScalarType dtype) {
  if (!layout.is_none()) {
    std::string s = nb::cast<std::string>(nb::str(layout));
    if (s.size() < 7 || s.compare(s.size() - 7, 7, "strided") != 0)
      EMBER_NOT_IMPLEMENTED("layout ", s, " is not supported; only strided tensors exist");
  }
  if (pin_memory) EMBER_NOT_IMPLEMENTED("pin_memory=True needs CUDA, which this build does not have");
  if (requires_grad) {
    EMBER_CHECK(is_floating_point(dtype) || is_complex(dtype),
                "Only Tensors of floating point and complex dtype can require gradients");
  }
}
// requires_grad=True on a fresh factory result makes it a leaf that requires grad.
Tensor grad_if(Tensor t, bool requires_grad) {
  if (requires_grad) autograd::set_requires_grad(t, true);
  return t;
}
// `out=` for factories: resized to `sizes`, dtype checked against an explicit dtype.
Tensor factory_out(nb::handle out, IntArrayRef sizes, std::optional<ScalarType> dtype, const char* op) {
  Tensor t = nb::cast<Tensor>(out);
  EMBER_CHECK(!dtype || *dtype == t.dtype(), op, "(): dtype ", dtype_name(*dtype),
              " does not match dtype of out parameter (", dtype_name(t.dtype()), ")");
  if (t.sizes() != sizes) resize_(t, sizes);
  return t;
}
// Result computed out of place, written into `out` (resized) when given.
nb::object into_out(Tensor result, nb::handle out) {
  if (out.is_none()) return nb::cast(std::move(result));
  Tensor t = nb::cast<Tensor>(out);
  if (t.sizes() != result.sizes()) resize_(t, result.sizes());
  copy_(t, result);
  return nb::borrow(out);
}

namespace {

using Self = nb::pointer_and_handle<Tensor>;

Generator* gen_arg(nb::handle h) {
  if (h.is_none()) return nullptr;
  Generator* g = nullptr;
  if (!nb::try_cast<Generator*>(h, g) || !g)
    throw ember::TypeError(detail::str_cat("generator must be an ember.Generator, not ", Py_TYPE(h.ptr())->tp_name));
  return g;
}

std::optional<ScalarType> dtype_arg(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  ScalarType t;
  if (!nb::try_cast<ScalarType>(h, t))
    throw ember::TypeError(detail::str_cat("dtype must be an ember.dtype, not ", Py_TYPE(h.ptr())->tp_name));
  return t;
}

Device device_arg(nb::handle h) {
  if (h.is_none()) return Device();
  Device d = nb::cast<Device>(h);
  if (!d.is_cpu()) EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot create tensors on ", d.str());
  return d;
}

// Factory options PyTorch accepts; each one we cannot honour is an error, never ignored.

// memory_format for the *_like functions: None/preserve keeps a dense input's strides.
bool preserve_layout(nb::handle memory_format) {
  if (memory_format.is_none()) return true;
  std::string s = nb::cast<std::string>(nb::str(memory_format));
  auto ends = [&](const char* suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
  };
  if (ends("preserve_format")) return true;
  if (ends("contiguous_format")) return false;
  EMBER_NOT_IMPLEMENTED("memory_format ", s, " is not supported");
}

int64_t int_arg(nb::handle h, const char* op, const char* name) {
  if (!PyLong_Check(h.ptr()) && !(PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr())))
    throw ember::TypeError(
        detail::str_cat(op, "(): argument '", name, "' must be int, not ", Py_TYPE(h.ptr())->tp_name));
  int overflow = 0;
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow) throw ember::Error(detail::str_cat(op, "(): argument '", name, "' overflows int64"));
  return static_cast<int64_t>(v);
}

double float_arg(nb::handle h, const char* op, const char* name) {
  Scalar s;
  if (!to_scalar(h, s))
    throw ember::TypeError(
        detail::str_cat(op, "(): argument '", name, "' must be a number, not ", Py_TYPE(h.ptr())->tp_name));
  return s.to_double();
}

// Sizes for randint/randint_like-style `size` arguments: a sequence, not a bare int (as torch).
Shape size_arg(nb::handle h, const char* op) {
  if (PyLong_Check(h.ptr()))
    throw ember::TypeError(detail::str_cat(op, "(): argument 'size' must be tuple of ints, not int"));
  return sizes_from_handle(h, op);
}

// A seed: any int in [-2^63, 2^64), negative values wrapping like uint64. torch.manual_seed
// converts with int() first; Generator.manual_seed takes only ints (`strict`).
uint64_t seed_arg(nb::handle h, bool strict = false) {
  if (strict && (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr())))
    throw ember::Error(detail::str_cat("manual_seed expected a long, but got ", Py_TYPE(h.ptr())->tp_name));
  nb::object i = nb::steal(PyNumber_Long(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
  if (!PyErr_Occurred()) return u;
  PyErr_Clear();
  long long s = PyLong_AsLongLong(i.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw ember::ValueError("Overflow when unpacking long long");
  }
  return static_cast<uint64_t>(s);
}

Shape factory_sizes(nb::args args, nb::handle size, const char* op) {
  if (!size.is_none()) {
    EMBER_CHECK_TYPEERR(args.size() == 0, op, "(): size given both positionally and as a keyword");
    return sizes_from_handle(size, op);
  }
  EMBER_CHECK_TYPEERR(args.size() > 0, op, "(): missing required argument 'size'");
  return sizes_from_args(args, op);
}

nb::handle g_default_generator;  // wraps default_generator(); released (Note [Process-lifetime Python objects])

void bind_generator(nb::module_& m) {
  nb::class_<Generator>(m, "Generator",
                        "Generator(device='cpu'): a Philox4x32-10 random number generator. Copies of the Python "
                        "object share one state; pass it as `generator=` to random functions.")
      .def(
          "__init__", [](Generator* g, nb::handle device) { new (g) Generator(nb::cast<Device>(device)); },
          nb::arg("device") = "cpu")
      .def(
          "manual_seed",
          [](nb::pointer_and_handle<Generator> self, nb::handle seed) {
            self.p->manual_seed(seed_arg(seed, /*strict=*/true));
            return nb::borrow(self.h);
          },
          nb::arg("seed"), "Seeds the generator and returns it.")
      .def("seed", &Generator::seed, "Reseeds from a non-deterministic source; returns the seed.")
      .def("initial_seed", &Generator::initial_seed)
      .def("get_state", &Generator::get_state, "The state as a uint8 tensor (seed and counter offset).")
      .def(
          "set_state",
          [](nb::pointer_and_handle<Generator> self, nb::handle state) {
            const Tensor* t = nullptr;
            if (!nb::try_cast<const Tensor*>(state, t) || !t)
              throw ember::TypeError(
                  detail::str_cat("expected an ember uint8 tensor, but got ", Py_TYPE(state.ptr())->tp_name));
            self.p->set_state(*t);
            return nb::borrow(self.h);
          },
          nb::arg("new_state"))
      .def("get_offset", &Generator::offset, "Philox blocks used since the last seeding.")
      .def(
          "set_offset",
          [](nb::pointer_and_handle<Generator> self, uint64_t offset) {
            self.p->set_offset(offset);
            return nb::borrow(self.h);
          },
          nb::arg("offset"))
      .def("clone_state", &Generator::clone_state)
      .def_prop_ro("device", &Generator::device)
      .def("__getstate__",
           [](const Generator& g) {
             Tensor s = g.get_state();
             return std::make_pair(g.device().str(),
                                   nb::bytes(static_cast<const char*>(s.data_ptr()), static_cast<size_t>(s.numel())));
           })
      .def("__setstate__", [](Generator* g, const std::pair<std::string, nb::bytes>& st) {
        new (g) Generator(Device(st.first));
        Tensor s = empty({static_cast<int64_t>(st.second.size())}, ScalarType::UInt8);
        std::memcpy(s.data_ptr(), st.second.c_str(), st.second.size());
        g->set_state(s);
      });

  g_default_generator = nb::cast(&default_generator(), nb::rv_policy::reference).release();
  m.attr("default_generator") = g_default_generator;
  m.def(
      "manual_seed",
      [](nb::handle seed) {
        manual_seed(seed_arg(seed));
        return nb::borrow(g_default_generator);
      },
      nb::arg("seed"), "Seeds the default CPU generator; returns it.");
  m.def(
      "seed", [] { return seed(); }, "Seeds the default generator non-deterministically; returns the seed.");
  m.def(
      "initial_seed", [] { return initial_seed(); }, "The seed of the default generator.");
  m.def(
      "get_rng_state", [] { return get_rng_state(); }, "The default generator's state as a uint8 tensor.");
  m.def(
      "set_rng_state",
      [](nb::handle state) {
        const Tensor* t = nullptr;
        if (!nb::try_cast<const Tensor*>(state, t) || !t)
          throw ember::TypeError(
              detail::str_cat("expected an ember uint8 tensor, but got ", Py_TYPE(state.ptr())->tp_name));
        set_rng_state(*t);
      },
      nb::arg("new_state"), "Restores the default generator from get_rng_state()'s tensor.");
}

void bind_factories(nb::module_& m) {
  // rand / randn(*size, size=None, generator=None, out=None, dtype=None, layout=None, device=None, ...)
  auto def_sized = [&](const char* name, bool normal) {
    m.def(
        name,
        [name, normal](nb::args args, nb::handle size, nb::handle generator, nb::handle out, nb::handle dtype,
                       nb::handle layout, nb::handle device, bool pin_memory, bool requires_grad) {
          Shape sizes = factory_sizes(args, size, name);
          std::optional<ScalarType> dt = dtype_arg(dtype);
          Generator* gen = gen_arg(generator);
          if (!out.is_none()) {
            Tensor t = factory_out(out, sizes, dt, name);
            check_factory_options(layout, pin_memory, requires_grad, t.dtype());
            normal ? normal_(t, 0.0, 1.0, gen) : uniform_(t, 0.0, 1.0, gen);
            return nb::borrow(out);
          }
          ScalarType st = dt.value_or(default_dtype());
          check_factory_options(layout, pin_memory, requires_grad, st);
          Device dev = device_arg(device);
          return nb::cast(grad_if(normal ? randn(sizes, gen, st, dev) : rand(sizes, gen, st, dev), requires_grad));
        },
        nb::arg("args"), nb::arg("size") = nb::none(), nb::arg("generator") = nb::none(), nb::arg("out") = nb::none(),
        nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(),
        nb::arg("pin_memory") = false, nb::arg("requires_grad") = false,
        normal ? "randn(*size, *, generator=None, out=None, dtype=None, device=None, requires_grad=False): "
                 "standard normal samples."
               : "rand(*size, *, generator=None, out=None, dtype=None, device=None, requires_grad=False): "
                 "uniform samples in [0, 1).");
  };
  def_sized("rand", false);
  def_sized("randn", true);

  // randint(low=0, high, size, *, generator=None, ...) and randint(high, size, ...)
  m.def(
      "randint",
      [](nb::args args, nb::handle low_kw, nb::handle high_kw, nb::handle size_kw, nb::handle generator, nb::handle out,
         nb::handle dtype, nb::handle layout, nb::handle device, bool pin_memory, bool requires_grad) {
        nb::handle low = low_kw, high = high_kw, size = size_kw;
        size_t n = args.size();
        EMBER_CHECK_TYPEERR(n <= 3, "randint() takes at most 3 positional arguments (", n, " given)");
        if (n == 3) {
          low = args[0], high = args[1], size = args[2];
        } else if (n == 2) {
          if (size_kw.is_none())
            high = args[0], size = args[1];
          else
            low = args[0], high = args[1];
        } else if (n == 1) {
          if (high_kw.is_none())
            high = args[0];
          else
            low = args[0];
        }
        EMBER_CHECK_TYPEERR(!high.is_none(), "randint(): missing required argument 'high'");
        EMBER_CHECK_TYPEERR(!size.is_none(), "randint(): missing required argument 'size'");
        int64_t lo = low.is_none() ? 0 : int_arg(low, "randint", "low");
        int64_t hi = int_arg(high, "randint", "high");
        Shape sizes = size_arg(size, "randint");
        std::optional<ScalarType> dt = dtype_arg(dtype);
        Generator* gen = gen_arg(generator);
        if (!out.is_none()) {
          Tensor t = factory_out(out, sizes, dt, "randint");
          check_factory_options(layout, pin_memory, requires_grad, t.dtype());
          random_(t, lo, hi, gen);
          return nb::borrow(out);
        }
        ScalarType st = dt.value_or(ScalarType::Int64);
        check_factory_options(layout, pin_memory, requires_grad, st);
        return nb::cast(grad_if(randint(lo, hi, sizes, gen, st, device_arg(device)), requires_grad));
      },
      nb::arg("args"), nb::arg("low") = nb::none(), nb::arg("high") = nb::none(), nb::arg("size") = nb::none(),
      nb::arg("generator") = nb::none(), nb::arg("out") = nb::none(), nb::arg("dtype") = nb::none(),
      nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(), nb::arg("pin_memory") = false,
      nb::arg("requires_grad") = false,
      "randint(low=0, high, size, *, generator=None, out=None, dtype=int64, device=None, requires_grad=False): "
      "integers uniform in [low, high).");

  m.def(
      "randperm",
      [](nb::handle n_arg, nb::handle generator, nb::handle out, nb::handle dtype, nb::handle layout, nb::handle device,
         bool pin_memory, bool requires_grad) {
        int64_t n = int_arg(n_arg, "randperm", "n");
        std::optional<ScalarType> dt = dtype_arg(dtype);
        Generator* gen = gen_arg(generator);
        if (!out.is_none()) {
          Tensor t = nb::cast<Tensor>(out);
          EMBER_CHECK(!dt || *dt == t.dtype(), "randperm(): dtype ", dtype_name(*dt),
                      " does not match dtype of out parameter (", dtype_name(t.dtype()), ")");
          check_factory_options(layout, pin_memory, requires_grad, t.dtype());
          return into_out(randperm(n, gen, t.dtype()), out);
        }
        ScalarType st = dt.value_or(ScalarType::Int64);
        check_factory_options(layout, pin_memory, requires_grad, st);
        return nb::cast(grad_if(randperm(n, gen, st, device_arg(device)), requires_grad));
      },
      nb::arg("n"), nb::kw_only(), nb::arg("generator") = nb::none(), nb::arg("out") = nb::none(),
      nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("pin_memory") = false, nb::arg("requires_grad") = false,
      "randperm(n, *, generator=None, out=None, dtype=int64, device=None, requires_grad=False): a random permutation "
      "of 0..n-1.");

  // normal(mean, std, size=None, *, ...): tensor/number mean and std; numbers need a size.
  m.def(
      "normal",
      [](nb::handle mean, nb::handle std, nb::handle size, nb::handle generator, nb::handle out, nb::handle dtype,
         nb::handle layout, nb::handle device, bool pin_memory, bool requires_grad) {
        const Tensor* mt = nullptr;
        const Tensor* st = nullptr;
        nb::try_cast<const Tensor*>(mean, mt);
        nb::try_cast<const Tensor*>(std, st);
        Generator* gen = gen_arg(generator);
        if (mt || st) {
          EMBER_CHECK_TYPEERR(size.is_none() && dtype.is_none() && device.is_none(),
                              "normal(): size, dtype and device are only accepted when mean and std are numbers");
          check_factory_options(layout, pin_memory, requires_grad, ScalarType::Float32);
          Tensor r = mt && st ? normal(*mt, *st, gen)
                     : mt     ? normal(*mt, std.is_none() ? 1.0 : float_arg(std, "normal", "std"), gen)
                              : normal(float_arg(mean, "normal", "mean"), *st, gen);
          return into_out(std::move(r), out);
        }
        double m_v = float_arg(mean, "normal", "mean");
        double s_v = std.is_none() ? 1.0 : float_arg(std, "normal", "std");
        EMBER_CHECK_TYPEERR(!size.is_none(), "normal(): a size is required when mean and std are numbers");
        Shape sizes = sizes_from_handle(size, "normal");
        std::optional<ScalarType> dt = dtype_arg(dtype);
        if (!out.is_none()) {
          Tensor t = factory_out(out, sizes, dt, "normal");
          check_factory_options(layout, pin_memory, requires_grad, t.dtype());
          normal_(t, m_v, s_v, gen);
          return nb::borrow(out);
        }
        ScalarType sc = dt.value_or(default_dtype());
        check_factory_options(layout, pin_memory, requires_grad, sc);
        return nb::cast(grad_if(normal(m_v, s_v, sizes, gen, sc, device_arg(device)), requires_grad));
      },
      nb::arg("mean"), nb::arg("std") = nb::none(), nb::arg("size") = nb::none(), nb::kw_only(),
      nb::arg("generator") = nb::none(), nb::arg("out") = nb::none(), nb::arg("dtype") = nb::none(),
      nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(), nb::arg("pin_memory") = false,
      nb::arg("requires_grad") = false,
      "normal(mean, std=1.0, size=None, *, generator=None, out=None, ...): normal samples; mean and std are tensors "
      "(broadcast together) or numbers (then size is required).");

  // *_like(input, ...): input's shape, dtype (unless given) and, for dense inputs, strides.
  auto def_like = [&](const char* name, bool normal) {
    m.def(
        name,
        [normal](const Tensor& t, nb::handle generator, nb::handle dtype, nb::handle layout, nb::handle device,
                 bool requires_grad, nb::handle memory_format) {
          ScalarType dt = dtype_arg(dtype).value_or(t.dtype());
          check_factory_options(layout, false, requires_grad, dt);
          device_arg(device);
          Generator* gen = gen_arg(generator);
          if (!preserve_layout(memory_format))
            return grad_if(normal ? randn(t.sizes(), gen, dt) : rand(t.sizes(), gen, dt), requires_grad);
          return grad_if(normal ? randn_like(t, dt, gen) : rand_like(t, dt, gen), requires_grad);
        },
        nb::arg("input"), nb::kw_only(), nb::arg("generator") = nb::none(), nb::arg("dtype") = nb::none(),
        nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
        nb::arg("memory_format") = nb::none(),
        normal ? "randn_like(input, *, generator=None, dtype=None, ...): randn with input's shape, dtype and layout."
               : "rand_like(input, *, generator=None, dtype=None, ...): rand with input's shape, dtype and layout.");
  };
  def_like("rand_like", false);
  def_like("randn_like", true);
  // randint_like(input, low=0, high, *, ...) and randint_like(input, high, ...)
  m.def(
      "randint_like",
      [](const Tensor& t, nb::args args, nb::handle low_kw, nb::handle high_kw, nb::handle generator, nb::handle dtype,
         nb::handle layout, nb::handle device, bool requires_grad, nb::handle memory_format) {
        nb::handle low = low_kw, high = high_kw;
        size_t n = args.size();
        EMBER_CHECK_TYPEERR(n <= 2, "randint_like() takes at most 3 positional arguments");
        if (n == 2) {
          low = args[0], high = args[1];
        } else if (n == 1) {
          if (high_kw.is_none())
            high = args[0];
          else
            low = args[0];
        }
        EMBER_CHECK_TYPEERR(!high.is_none(), "randint_like(): missing required argument 'high'");
        int64_t lo = low.is_none() ? 0 : int_arg(low, "randint_like", "low");
        int64_t hi = int_arg(high, "randint_like", "high");
        ScalarType dt = dtype_arg(dtype).value_or(t.dtype());
        check_factory_options(layout, false, requires_grad, dt);
        device_arg(device);
        Generator* gen = gen_arg(generator);
        if (!preserve_layout(memory_format)) return randint(lo, hi, t.sizes(), gen, dt);
        return randint_like(t, lo, hi, dt, gen);
      },
      nb::arg("input"), nb::arg("args"), nb::arg("low") = nb::none(), nb::arg("high") = nb::none(),
      nb::arg("generator") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("layout") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false, nb::arg("memory_format") = nb::none(),
      "randint_like(input, low=0, high, *, generator=None, dtype=None, ...): randint with input's shape and dtype.");
}

// bernoulli(input, p=None, *, generator=None[, out=None]): p None draws with input's probabilities.
Tensor bernoulli_impl(const Tensor& self, nb::handle p, nb::handle generator) {
  Generator* gen = gen_arg(generator);
  if (p.is_none()) return bernoulli(self, gen);
  return bernoulli(self, float_arg(p, "bernoulli", "p"), gen);
}

void bind_sampling(nb::module_& m, nb::class_<Tensor>& cls) {
  m.def(
      "poisson", [](const Tensor& rates, nb::handle generator) { return poisson(rates, gen_arg(generator)); },
      nb::arg("input"), nb::arg("generator") = nb::none(),
      "poisson(input, generator=None): Poisson samples with the rates in input, same shape and dtype.");
  m.def(
      "_standard_gamma",
      [](const Tensor& alpha, nb::handle generator) { return standard_gamma(alpha, gen_arg(generator)); },
      nb::arg("input"), nb::arg("generator") = nb::none(),
      "_standard_gamma(input, generator=None): Gamma(input, 1) samples, differentiable in input.");
  m.def("_standard_gamma_grad", &standard_gamma_grad, nb::arg("input"), nb::arg("output"),
        "_standard_gamma_grad(alpha, x): d x / d alpha of Gamma(alpha, 1) samples x.");
  m.def(
      "binomial",
      [](const Tensor& count, const Tensor& prob, nb::handle generator) {
        return binomial(count, prob, gen_arg(generator));
      },
      nb::arg("count"), nb::arg("prob"), nb::arg("generator") = nb::none(),
      "binomial(count, prob, generator=None): Binomial(count, prob) samples in count's dtype.");
  m.def(
      "bernoulli",
      [](const Tensor& self, nb::handle p, nb::handle generator, nb::handle out) {
        return into_out(bernoulli_impl(self, p, generator), out);
      },
      nb::arg("input"), nb::arg("p") = nb::none(), nb::kw_only(), nb::arg("generator") = nb::none(),
      nb::arg("out") = nb::none(),
      "bernoulli(input, p=None, *, generator=None, out=None): 0/1 samples with probabilities input (or p).");
  cls.def(
      "bernoulli",
      [](const Tensor& self, nb::handle p, nb::handle generator) { return bernoulli_impl(self, p, generator); },
      nb::arg("p") = nb::none(), nb::kw_only(), nb::arg("generator") = nb::none());

  m.def(
      "multinomial",
      [](const Tensor& self, int64_t num_samples, bool replacement, nb::handle generator, nb::handle out) {
        return into_out(multinomial(self, num_samples, replacement, gen_arg(generator)), out);
      },
      nb::arg("input"), nb::arg("num_samples"), nb::arg("replacement") = false, nb::kw_only(),
      nb::arg("generator") = nb::none(), nb::arg("out") = nb::none(),
      "multinomial(input, num_samples, replacement=False, *, generator=None, out=None): category indices drawn from "
      "the rows of input (non-negative weights).");
  cls.def(
      "multinomial",
      [](const Tensor& self, int64_t num_samples, bool replacement, nb::handle generator) {
        return multinomial(self, num_samples, replacement, gen_arg(generator));
      },
      nb::arg("num_samples"), nb::arg("replacement") = false, nb::kw_only(), nb::arg("generator") = nb::none());
}

// In-place methods return `self` (the same Python object), as PyTorch's do.
void bind_fills(nb::class_<Tensor>& cls) {
  cls.def(
      "uniform_",
      [](Self self, double from, double to, nb::handle generator) {
        uniform_(*self.p, from, to, gen_arg(generator));
        return nb::borrow(self.h);
      },
      nb::arg("from") = 0.0, nb::arg("to") = 1.0, nb::kw_only(), nb::arg("generator") = nb::none());
  cls.def(
      "normal_",
      [](Self self, double mean, double std, nb::handle generator) {
        normal_(*self.p, mean, std, gen_arg(generator));
        return nb::borrow(self.h);
      },
      nb::arg("mean") = 0.0, nb::arg("std") = 1.0, nb::kw_only(), nb::arg("generator") = nb::none());
  cls.def(
      "exponential_",
      [](Self self, double lambd, nb::handle generator) {
        exponential_(*self.p, lambd, gen_arg(generator));
        return nb::borrow(self.h);
      },
      nb::arg("lambd") = 1.0, nb::kw_only(), nb::arg("generator") = nb::none());
  cls.def(
      "cauchy_",
      [](Self self, double median, double sigma, nb::handle generator) {
        cauchy_(*self.p, median, sigma, gen_arg(generator));
        return nb::borrow(self.h);
      },
      nb::arg("median") = 0.0, nb::arg("sigma") = 1.0, nb::kw_only(), nb::arg("generator") = nb::none());
  cls.def(
      "log_normal_",
      [](Self self, double mean, double std, nb::handle generator) {
        log_normal_(*self.p, mean, std, gen_arg(generator));
        return nb::borrow(self.h);
      },
      nb::arg("mean") = 1.0, nb::arg("std") = 2.0, nb::kw_only(), nb::arg("generator") = nb::none());
  cls.def(
      "geometric_",
      [](Self self, double p, nb::handle generator) {
        geometric_(*self.p, p, gen_arg(generator));
        return nb::borrow(self.h);
      },
      nb::arg("p"), nb::kw_only(), nb::arg("generator") = nb::none());
  cls.def(
      "bernoulli_",
      [](Self self, nb::handle p, nb::handle generator) {
        const Tensor* pt = nullptr;
        if (nb::try_cast<const Tensor*>(p, pt) && pt)
          bernoulli_(*self.p, *pt, gen_arg(generator));
        else
          bernoulli_(*self.p, float_arg(p, "bernoulli_", "p"), gen_arg(generator));
        return nb::borrow(self.h);
      },
      nb::arg("p") = 0.5, nb::kw_only(), nb::arg("generator") = nb::none());
  // random_(), random_(to), random_(from, to); to=None means the dtype's upper bound.
  cls.def("random_", [](Self self, nb::args args, nb::kwargs kwargs) {
    size_t n = args.size();
    EMBER_CHECK_TYPEERR(n <= 2, "random_() takes at most 2 positional arguments (", n, " given)");
    nb::handle from = n == 2 ? args[0] : nb::handle(), to = n >= 1 ? args[n - 1] : nb::handle();
    nb::handle generator = nb::none();
    for (auto [k, v] : kwargs) {
      std::string key = nb::cast<std::string>(k);
      if (key == "generator") {
        generator = v;
      } else if (key == "to" && n < 2) {
        if (n == 1) from = args[0];  // random_(from, to=...)
        to = v;
      } else if (key == "from" && n == 0) {
        from = v;
      } else {
        throw ember::TypeError("random_() got an unexpected or repeated keyword argument '" + key + "'");
      }
    }
    Generator* gen = gen_arg(generator);
    if (!from.is_valid() && !to.is_valid()) {
      random_(*self.p, gen);
    } else {
      int64_t lo = from.is_valid() ? int_arg(from, "random_", "from") : 0;
      std::optional<int64_t> hi;
      if (to.is_valid() && !to.is_none()) hi = int_arg(to, "random_", "to");
      random_(*self.p, lo, hi, gen);
    }
    return nb::borrow(self.h);
  });
}

}  // namespace

void bind_random(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  bind_generator(m);
  bind_factories(m);
  bind_sampling(m, cls);
  bind_fills(cls);
}

}  // namespace ember::py
