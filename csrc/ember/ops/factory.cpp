#include <algorithm>
#include <cmath>
#include <complex>

#include "ember/core/checked_math.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {
Allocator* allocator_for(Device device) {
  if (device.is_cpu()) return cpu_allocator();
  EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot allocate on ", device.str());
}
void check_sizes(IntArrayRef sizes, const char* op) {
  for (int64_t s : sizes)
    EMBER_CHECK(s >= 0, op, "(): Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
}

// c10's name of a dtype, as torch's messages spell it.
const char* c10_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "Bool";
    case ScalarType::UInt8:
      return "Byte";
    case ScalarType::Int8:
      return "Char";
    case ScalarType::Int16:
      return "Short";
    case ScalarType::Int32:
      return "Int";
    case ScalarType::Int64:
      return "Long";
    case ScalarType::Float16:
      return "Half";
    case ScalarType::BFloat16:
      return "BFloat16";
    case ScalarType::Float32:
      return "Float";
    case ScalarType::Float64:
      return "Double";
    case ScalarType::Complex64:
      return "ComplexFloat";
    default:
      return "ComplexDouble";
  }
}

// linspace/logspace's dtype: complex endpoints infer the default complex dtype, which only a
// complex dtype may replace (torch's check).
ScalarType spaced_dtype(const char* op, const Scalar& start, const Scalar& end, std::optional<ScalarType> dtype) {
  bool cplx = start.is_complex() || end.is_complex();
  ScalarType inferred = cplx ? complex_for(default_dtype()) : default_dtype();
  if (!dtype) return inferred;
  EMBER_CHECK(!cplx || is_complex(*dtype), "torch.", op, "(): inferred dtype c10::complex<",
              inferred == ScalarType::Complex128 ? "double" : "float", "> can't be safely cast to passed dtype ",
              c10_name(*dtype));
  return *dtype;
}

// Evenly spaced complex values, filled from both ends as the real ones; f maps each to the output.
template <typename T, typename F>
void fill_spaced_complex(T* p, const Scalar& start, const Scalar& end, int64_t steps, const F& f) {
  using C = std::complex<double>;
  C s = start.to_complex(), e = end.to_complex();
  C step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : C(0);
  int64_t half = std::max<int64_t>(steps / 2, 1);  // one step: start, as torch
  for (int64_t i = 0; i < steps; ++i) {
    C v = i < half ? s + step * static_cast<double>(i) : e - step * static_cast<double>(steps - 1 - i);
    p[i] = static_cast<T>(f(v));
  }
}
}  // namespace

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device) {
  check_sizes(sizes, "empty_strided");
  EMBER_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  for (size_t i = 0; i < sizes.size(); ++i)
    EMBER_CHECK(strides[i] >= 0, "empty_strided: negative strides are not supported");
  checked_numel(sizes);
  size_t nbytes = storage_nbytes_strided(sizes, strides, element_size(dtype));  // Note [Checked size arithmetic]
  Storage st = StorageImpl::allocate(nbytes, allocator_for(device));
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(st), dtype, Shape(sizes.begin(), sizes.end()),
                                               Shape(strides.begin(), strides.end()), 0));
}

Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  check_sizes(sizes, "empty");
  size_t nbytes = storage_nbytes_contiguous(sizes, element_size(dtype));  // Note [Checked size arithmetic]
  Storage st = StorageImpl::allocate(nbytes, allocator_for(device));
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(st), dtype, Shape(sizes.begin(), sizes.end()),
                                               contiguous_strides(sizes), 0));
}

Tensor empty_permuted(IntArrayRef sizes, IntArrayRef perm, ScalarType dtype, Device device) {
  EMBER_CHECK(perm.size() == sizes.size(), "empty_permuted: perm must have one entry per dim");
  Shape strides(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(perm.size()) - 1; i >= 0; --i) {
    strides[perm[i]] = acc;
    acc *= std::max<int64_t>(sizes[perm[i]], 1);
  }
  return empty_strided(sizes, strides, dtype, device);
}

Tensor full(IntArrayRef sizes, Scalar value, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  fill_(t, value);
  t.impl()->share_version_counter({});  // a fresh tensor starts at version 0, as in PyTorch
  return t;
}
Tensor zeros(IntArrayRef sizes, ScalarType dtype, Device device) { return full(sizes, 0, dtype, device); }
Tensor ones(IntArrayRef sizes, ScalarType dtype, Device device) { return full(sizes, 1, dtype, device); }

Tensor scalar_tensor(Scalar s, std::optional<ScalarType> dtype, bool wrapped) {
  ScalarType dt = dtype     ? *dtype
                  : wrapped ? (s.is_bool()       ? ScalarType::Bool
                               : s.is_integral() ? ScalarType::Int64
                               : s.is_complex()  ? ScalarType::Complex128
                                                 : ScalarType::Float64)
                            : s.natural_dtype();
  Tensor t = empty({}, dt);
  EMBER_DISPATCH_ALL_AND_COMPLEX(dt, "scalar_tensor", [&] { *t.data<scalar_t>() = s.to<scalar_t>(); });
  t.impl()->wrapped_number = wrapped;
  return t;
}

Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<ScalarType> dtype, Device device) {
  EMBER_CHECK(!start.is_complex() && !end.is_complex() && !step.is_complex(),
              "value cannot be converted to type double without overflow");
  bool any_float = start.is_floating() || end.is_floating() || step.is_floating();
  ScalarType dt = dtype ? *dtype : (any_float ? default_dtype() : ScalarType::Int64);
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(st != 0, "step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "upper bound and larger bound inconsistent with step sign");
  int64_t n;
  if (!any_float && is_integral(dt, false)) {
    int64_t si = start.to_int(), ei = end.to_int(), sti = step.to_int();
    n = sti > 0 ? (ei - si + sti - 1) / sti : (si - ei + (-sti) - 1) / (-sti);
  } else {
    n = static_cast<int64_t>(std::ceil((e - s) / st));
  }
  Tensor t = empty({n}, dt, device);
  EMBER_DISPATCH_NUMERIC(dt, "arange", [&] {
    scalar_t* p = t.data<scalar_t>();
    // each element from its index alone, so the threads' split cannot change a value
    parallel_for(0, n, kGrainSize, [&](int64_t lo, int64_t hi) {
      if constexpr (std::is_integral_v<scalar_t>) {
        int64_t si = start.to_int(), sti = step.to_int();
        if (any_float) {
          for (int64_t i = lo; i < hi; ++i) p[i] = static_cast<scalar_t>(s + st * static_cast<double>(i));
        } else {
          for (int64_t i = lo; i < hi; ++i) p[i] = static_cast<scalar_t>(si + sti * i);
        }
      } else {
        for (int64_t i = lo; i < hi; ++i)
          p[i] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(s + st * static_cast<double>(i)));
      }
    });
  });
  return t;
}

Tensor linspace(Scalar start, Scalar end, int64_t steps, std::optional<ScalarType> dtype, Device device) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  ScalarType dt = spaced_dtype("linspace", start, end, dtype);
  Tensor t = empty({steps}, dt, device);
  if (is_complex(dt)) {
    EMBER_DISPATCH_COMPLEX(dt, "linspace", [&] {
      fill_spaced_complex(t.data<scalar_t>(), start, end, steps, [](std::complex<double> v) { return v; });
    });
    return t;
  }
  double s = start.to_double(), e = end.to_double();
  double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  int64_t half = std::max<int64_t>(steps / 2, 1);  // one step: start, as torch
  EMBER_DISPATCH_NUMERIC(dt, "linspace", [&] {
    scalar_t* p = t.data<scalar_t>();
    // Fill from both ends so the last value is exactly `end` (as PyTorch does); each element from
    // its index alone, so the threads' split cannot change a value.
    parallel_for(0, steps, kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        double v = i < half ? s + step * static_cast<double>(i) : e - step * static_cast<double>(steps - 1 - i);
        if constexpr (std::is_integral_v<scalar_t>)
          p[i] = static_cast<scalar_t>(v);
        else
          p[i] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(v));
      }
    });
  });
  return t;
}

Tensor logspace(Scalar start, Scalar end, int64_t steps, double base, std::optional<ScalarType> dtype, Device device) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  ScalarType dt = spaced_dtype("logspace", start, end, dtype);
  Tensor t = empty({steps}, dt, device);
  if (is_complex(dt)) {  // base^x on the principal branch (a negative base is fine)
    std::complex<double> b(base, 0.0);
    EMBER_DISPATCH_COMPLEX(dt, "logspace", [&] {
      fill_spaced_complex(t.data<scalar_t>(), start, end, steps,
                          [&](std::complex<double> x) { return std::pow(b, x); });
    });
    return t;
  }
  double s = start.to_double(), e = end.to_double();
  double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  int64_t half = std::max<int64_t>(steps / 2, 1);  // one step: start, as torch
  EMBER_DISPATCH_NUMERIC(dt, "logspace", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < steps; ++i) {
      double x = i < half ? s + step * static_cast<double>(i) : e - step * static_cast<double>(steps - 1 - i);
      double v = std::pow(base, x);
      if constexpr (std::is_integral_v<scalar_t>)
        p[i] = static_cast<scalar_t>(v);
      else
        p[i] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(v));
    }
  });
  return t;
}

Tensor eye(int64_t n, int64_t m, ScalarType dtype, Device device) {
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  Tensor t = zeros({n, m}, dtype, device);
  EMBER_DISPATCH_ALL_AND_COMPLEX(dtype, "eye", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = scalar_t(1);
  });
  return t;
}

}  // namespace ember
