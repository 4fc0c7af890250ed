// Random ops: argument checks, then kernels that draw from Philox streams (Note [Counter-based RNG]).
#include "ember/ops/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/core/philox.h"
#include "ember/cpu/iter.h"
#include "ember/cpu/random_math.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"
#include "ember/ops/special.h"

namespace ember {
namespace {

Generator& gen_or_default(Generator* g) { return g ? *g : default_generator(); }

// Random bits in the significand of each floating type: rand() values are k * 2^-digits, all exact.
template <typename T>
constexpr int kDigits = std::numeric_limits<T>::digits;
template <>
constexpr int kDigits<Half> = 11;
template <>
constexpr int kDigits<BFloat16> = 8;

int float_digits(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return 11;
    case ScalarType::BFloat16:
      return 8;
    case ScalarType::Float32:
      return 24;
    default:
      return 53;
  }
}
double float_max(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return 65504.0;
    case ScalarType::BFloat16:
      return 3.38953138925153547590470800371487866880e+38;
    case ScalarType::Float32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

// ---- streams ----

// Note [Tiles]: a stream of n elements, each consuming W 32-bit words, is cut into tiles of kTile
// elements. Tile t starts at block counter + t * kTile * W / 4, so an element's words depend only on
// its index, whichever thread computes its tile.
constexpr int64_t kTile = 256;

// `group`: blocks are generated in multiples of this (4 for Box-Muller's Note [Box-Muller groups]).
template <int W, int64_t group = 1, typename Write>
void for_each_tile(int64_t n, Generator* gen, const Write& write) {
  static_assert(kTile * W % 4 == 0);
  if (n <= 0) return;
  PhiloxSlice s = gen_or_default(gen).reserve(uint64_t((n * W + 3) / 4));
  int64_t ntiles = (n + kTile - 1) / kTile;
  parallel_for(0, ntiles, std::max<int64_t>(1, kGrainSize / kTile), [&](int64_t t0, int64_t t1) {
    alignas(64) uint32_t words[kTile * W];
    for (int64_t t = t0; t < t1; ++t) {
      int64_t begin = t * kTile, count = std::min(kTile, n - begin);
      int64_t nblocks = std::min<int64_t>(((count * W + 3) / 4 + group - 1) / group * group, kTile * W / 4);
      philox_fill(s.key, s.counter + uint64_t(t * (kTile * W / 4)), nblocks, words);
      write(begin, count, static_cast<const uint32_t*>(words));
    }
  });
}

// Sequential words from `nblocks` blocks starting at `counter`, for the serial parts (randperm,
// multinomial rows). Generates at most what was reserved, so short streams stay cheap.
class WordStream {
 public:
  WordStream(uint64_t key, uint64_t counter, uint64_t nblocks) : key_(key), counter_(counter), left_(nblocks) {}
  uint32_t next32() {
    if (pos_ == end_) {
      int64_t n = int64_t(std::min<uint64_t>(kBuf / 4, std::max<uint64_t>(left_, 1)));
      philox_fill(key_, counter_, n, buf_);
      counter_ += uint64_t(n);
      left_ -= std::min<uint64_t>(left_, uint64_t(n));
      pos_ = 0;
      end_ = int(4 * n);
    }
    return buf_[pos_++];
  }
  uint64_t next64() {
    uint64_t hi = next32();
    return hi << 32 | next32();
  }
  double open_unit() { return (double(next64() >> 11) + 0.5) * 0x1p-53; }  // (0, 1)

 private:
  static constexpr int kBuf = 256;
  uint64_t key_, counter_, left_;
  int pos_ = 0, end_ = 0;
  alignas(64) uint32_t buf_[kBuf];
};

inline uint64_t word64(const uint32_t* w, int64_t k) { return uint64_t(w[2 * k]) << 32 | w[2 * k + 1]; }

// Element k's uniform in [0, 1) with kDigits<T> bits (W = 2 words for double, else 1).
template <typename T>
inline opmath_t<T> unit(const uint32_t* w, int64_t k) {
  if constexpr (std::is_same_v<T, double>) {
    return double(word64(w, k) >> 11) * 0x1p-53;
  } else {
    constexpr int D = kDigits<T>;
    return float(int32_t(w[k] >> (32 - D))) * (1.0f / float(1u << D));
  }
}
template <typename T>
constexpr int kWords = std::is_same_v<T, double> ? 2 : 1;

// count standard normals (z has room for kTile) from a tile's words.
template <typename T>
void standard_normals(const uint32_t* w, int64_t count, opmath_t<T>* z) {
  if constexpr (std::is_same_v<T, double>)
    cpu::box_muller_f64(w, (count + 1) / 2, z);
  else
    cpu::box_muller_f32(w, (count + 1) / 2, z);
}

// ---- layout ----

// Whether t's elements fill exactly numel slots of memory (a permutation of a contiguous layout).
bool is_dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  std::vector<std::pair<int64_t, int64_t>> d;  // (stride, size) of the non-trivial dims
  for (int64_t i = 0; i < t.dim(); ++i)
    if (t.sizes()[i] != 1) d.emplace_back(t.strides()[i], t.sizes()[i]);
  std::sort(d.begin(), d.end());
  int64_t expect = 1;
  for (auto [st, sz] : d) {
    if (st != expect) return false;
    expect *= sz;
  }
  return true;
}

// Runs fill(out) on memory laid out densely: `self` itself when dense (elements drawn in memory
// order), else a contiguous temporary copied back.
template <typename F>
Tensor& fill_dense(Tensor& self, const F& fill) {
  if (self.numel() == 0) return self;
  if (is_dense(self)) {
    fill(self);
    self.bump_version();
  } else {
    Tensor tmp = empty(self.sizes(), self.dtype());
    fill(tmp);
    copy_(self, tmp);
  }
  return self;
}

Tensor empty_like_dense(const Tensor& t, ScalarType dtype) {
  if (!t.is_contiguous() && is_dense(t)) return empty_strided(t.sizes(), t.strides(), dtype, t.device());
  return empty(t.sizes(), dtype, t.device());
}

template <typename T>
inline T from_int(int64_t v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return T(float(v));
  else
    return static_cast<T>(v);
}

void check_floating(const Tensor& self, const char* what) {
  EMBER_CHECK(is_floating_point(self.dtype()), what,
              " distribution is a continuous probability distribution. dtype must be a floating point but you "
              "specified ",
              dtype_name(self.dtype()));
}

// Draws standard-normal-based values into dense `out`: out = mean + std * z.
void normal_fill(Tensor& out, double mean, double std, Generator* gen) {
  int64_t n = out.numel();
  EMBER_DISPATCH_FLOAT(out.dtype(), "normal_", [&] {
    using M = opmath_t<scalar_t>;
    scalar_t* o = out.data<scalar_t>();
    const M m = M(mean), s = M(std);
    for_each_tile<kWords<scalar_t>, 4>(n, gen, [&](int64_t b, int64_t c, const uint32_t* w) {
      alignas(64) M z[kTile];
      standard_normals<scalar_t>(w, c, z);
      for (int64_t k = 0; k < c; ++k) o[b + k] = scalar_t(m + s * z[k]);
    });
  });
}

// Fills dense `out` with from + r, r uniform in [0, range); range 0 stands for 2^64.
void random_range_fill(Tensor& out, int64_t from, uint64_t range, Generator* gen) {
  int64_t n = out.numel();
  const uint64_t base = uint64_t(from);
  EMBER_DISPATCH_ALL(out.dtype(), "random_", [&] {
    scalar_t* o = out.data<scalar_t>();
    if (range != 0 && range <= (uint64_t(1) << 32)) {
      for_each_tile<1>(n, gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k) o[b + k] = from_int<scalar_t>(int64_t(base + ((uint64_t(w[k]) * range) >> 32)));
      });
    } else {
      for_each_tile<2>(n, gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k) {
          uint64_t x = word64(w, k);
          uint64_t r = range ? uint64_t((static_cast<unsigned __int128>(x) * range) >> 64) : x;
          o[b + k] = from_int<scalar_t>(int64_t(base + r));
        }
      });
    }
  });
}

// Inclusive integer bounds a dtype can hold, for random_'s checks.
std::pair<int64_t, int64_t> int_bounds(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return {0, 1};
    case ScalarType::UInt8:
      return {0, 255};
    case ScalarType::Int8:
      return {-128, 127};
    case ScalarType::Int16:
      return {-32768, 32767};
    case ScalarType::Int32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}
bool in_bounds(int64_t v, ScalarType t) {
  if (is_floating_point(t)) return std::abs(double(v)) <= float_max(t);
  auto [lo, hi] = int_bounds(t);
  return v >= lo && v <= hi;
}
void check_random_dtype(ScalarType t) {
  EMBER_CHECK(t != ScalarType::Undefined && !is_complex(t),
              "random_ handles only integral, floating-point and boolean types, got ", dtype_name(t));
}

// Normal with tensor mean and/or std: standard normals, then out = mean + std * z broadcast.
Tensor normal_tensors(const Tensor* mean_t, double mean_s, const Tensor* std_t, double std_s, Generator* gen) {
  ScalarType dt = mean_t ? mean_t->dtype() : std_t->dtype();
  if (!is_floating_point(dt)) EMBER_NOT_IMPLEMENTED("\"normal\" not implemented for '", dtype_name(dt), "'");
  if (std_t) {
    Tensor sd = contiguous(to_dtype(*std_t, ScalarType::Float64));
    const double* p = sd.data<double>();
    for (int64_t i = 0; i < sd.numel(); ++i) EMBER_CHECK(p[i] >= 0.0, "normal expects all elements of std >= 0.0");
  } else {
    EMBER_CHECK(std_s >= 0.0, "normal expects std >= 0.0, but found std ", std_s);
  }
  Shape shape = mean_t && std_t ? broadcast_shapes(mean_t->sizes(), std_t->sizes(), "normal")
                : mean_t        ? mean_t->sizes()
                                : std_t->sizes();
  Tensor out = empty(shape, dt);
  normal_fill(out, 0.0, 1.0, gen);
  Tensor m = mean_t ? to_dtype(*mean_t, dt) : scalar_tensor(mean_s, dt);
  Tensor s = std_t ? to_dtype(*std_t, dt) : scalar_tensor(std_s, dt);
  TensorIter it(out, {out, m, s}, dt, "normal");
  EMBER_DISPATCH_FLOAT(dt, "normal", [&] {
    using M = opmath_t<scalar_t>;
    it.for_each([](char** d, const int64_t* st, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        M z = M(*reinterpret_cast<const scalar_t*>(d[1] + k * st[1]));
        M mu = M(*reinterpret_cast<const scalar_t*>(d[2] + k * st[2]));
        M sigma = M(*reinterpret_cast<const scalar_t*>(d[3] + k * st[3]));
        *reinterpret_cast<scalar_t*>(d[0] + k * st[0]) = scalar_t(mu + sigma * z);
      }
    });
  });
  return out;
}

}  // namespace

// ---- in-place fills ----

Tensor& uniform_(Tensor& self, double from, double to, Generator* gen) {
  ScalarType dt = self.dtype();
  if (is_complex(dt)) {  // as PyTorch: both parts uniform, drawn as the (..., 2) real view
    Tensor parts = view_as_real(self);
    uniform_(parts, from, to, gen);
    return self;
  }
  if (!is_floating_point(dt)) EMBER_NOT_IMPLEMENTED("\"uniform_\" not implemented for '", dtype_name(dt), "'");
  double hi = float_max(dt);
  EMBER_CHECK(from >= -hi && from <= hi, "from is out of bounds for ", dtype_name(dt));
  EMBER_CHECK(to >= -hi && to <= hi, "to is out of bounds for ", dtype_name(dt));
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  EMBER_CHECK(to - from <= hi, "uniform_ expects to-from <= std::numeric_limits<", dtype_name(dt),
              ">::max(), but found to=", to, " and from=", from, " which result in to-from to exceed the limit");
  return fill_dense(self, [&](Tensor& out) {
    EMBER_DISPATCH_FLOAT(dt, "uniform_", [&] {
      using M = opmath_t<scalar_t>;
      scalar_t* o = out.data<scalar_t>();
      const M lo = M(from), range = M(to - from);
      for_each_tile<kWords<scalar_t>>(out.numel(), gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k) o[b + k] = scalar_t(lo + range * unit<scalar_t>(w, k));
      });
    });
  });
}

Tensor& normal_(Tensor& self, double mean, double std, Generator* gen) {
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (is_complex(self.dtype())) {  // as PyTorch: each part normal with std / sqrt(2), so E|z - mean|^2 = std^2
    Tensor parts = view_as_real(self);
    normal_(parts, mean, std / std::sqrt(2.0), gen);
    return self;
  }
  if (!is_floating_point(self.dtype()))
    EMBER_NOT_IMPLEMENTED("\"normal_\" not implemented for '", dtype_name(self.dtype()), "'");
  return fill_dense(self, [&](Tensor& out) { normal_fill(out, mean, std, gen); });
}

Tensor& bernoulli_(Tensor& self, double p, Generator* gen) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  // u < p with u = w / 2^32, compared in integers: w < p * 2^32.
  const uint64_t threshold = uint64_t(p * 4294967296.0);
  return fill_dense(self, [&](Tensor& out) {
    EMBER_DISPATCH_ALL(self.dtype(), "bernoulli_", [&] {
      scalar_t* o = out.data<scalar_t>();
      for_each_tile<1>(out.numel(), gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k) o[b + k] = from_int<scalar_t>(uint64_t(w[k]) < threshold);
      });
    });
  });
}

Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator* gen) {
  if (!is_floating_point(p.dtype()))
    EMBER_NOT_IMPLEMENTED("\"bernoulli_\" not implemented for probabilities of type '", dtype_name(p.dtype()), "'");
  check_random_dtype(self.dtype());
  // Probabilities in self's logical order; the draws go to a contiguous buffer (copied back if needed).
  Tensor pc = contiguous(expand(p, self.sizes()));
  Tensor out = self.is_contiguous() ? self : empty(self.sizes(), self.dtype());
  int64_t n = self.numel();
  EMBER_DISPATCH_FLOAT(p.dtype(), "bernoulli_", [&] {
    using P = scalar_t;
    const P* pp = pc.data<P>();
    for (int64_t i = 0; i < n; ++i) {
      double v = double(opmath_t<P>(pp[i]));
      EMBER_CHECK(v >= 0.0 && v <= 1.0, "bernoulli expects all elements of p to be in [0, 1]");
    }
    EMBER_DISPATCH_ALL(self.dtype(), "bernoulli_", [&] {
      scalar_t* o = out.data<scalar_t>();
      for_each_tile<1>(n, gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k)
          o[b + k] = from_int<scalar_t>(double(w[k]) * 0x1p-32 < double(opmath_t<P>(pp[b + k])));
      });
    });
  });
  if (!out.is_same(self))
    copy_(self, out);
  else
    self.bump_version();
  return self;
}

Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to, Generator* gen) {
  ScalarType dt = self.dtype();
  check_random_dtype(dt);
  uint64_t range;  // 0 means 2^64 (int64's full range)
  if (to) {
    EMBER_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    EMBER_CHECK(in_bounds(from, dt), "from is out of bounds for ", dtype_name(dt));
    EMBER_CHECK(in_bounds(*to - 1, dt), "to - 1 is out of bounds for ", dtype_name(dt));
    range = uint64_t(*to) - uint64_t(from);
  } else {
    int64_t to_inc = is_floating_point(dt) ? int64_t(1) << float_digits(dt) : int_bounds(dt).second;
    EMBER_CHECK(in_bounds(from, dt), "from is out of bounds for ", dtype_name(dt));
    EMBER_CHECK(from <= to_inc,
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to ",
                "dtype, but got from=", from, " > to_inc=", to_inc);
    range = uint64_t(to_inc) - uint64_t(from) + 1;
  }
  return fill_dense(self, [&](Tensor& out) { random_range_fill(out, from, range, gen); });
}

Tensor& random_(Tensor& self, Generator* gen) { return random_(self, 0, std::nullopt, gen); }

Tensor& exponential_(Tensor& self, double lambd, Generator* gen) {
  check_floating(self, "Exponential");
  EMBER_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  return fill_dense(self, [&](Tensor& out) {
    EMBER_DISPATCH_FLOAT(self.dtype(), "exponential_", [&] {
      using M = opmath_t<scalar_t>;
      scalar_t* o = out.data<scalar_t>();
      const M scale = M(-1.0 / lambd);
      for_each_tile<kWords<scalar_t>>(out.numel(), gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k) {
          // -log(u) / lambda with u in (0, 1]
          if constexpr (std::is_same_v<scalar_t, double>)
            o[b + k] = scale * std::log(double((word64(w, k) >> 11) + 1) * 0x1p-53);
          else
            o[b + k] = scalar_t(scale * cpu::log_f(float(int32_t(w[k] >> 8) + 1) * 0x1p-24f));
        }
      });
    });
  });
}

Tensor& cauchy_(Tensor& self, double median, double sigma, Generator* gen) {
  check_floating(self, "Cauchy");
  EMBER_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  return fill_dense(self, [&](Tensor& out) {
    EMBER_DISPATCH_FLOAT(self.dtype(), "cauchy_", [&] {
      scalar_t* o = out.data<scalar_t>();
      for_each_tile<2>(out.numel(), gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k) {
          // tan(pi (u - 1/2)) = -cos(pi u) / sin(pi u), u in (0, 1) so sin > 0.
          double u = (double(word64(w, k) >> 11) + 0.5) * 0x1p-53, s, cs;
          cpu::sincos_2pi(0.5 * u, s, cs);
          o[b + k] = scalar_t(static_cast<opmath_t<scalar_t>>(median - sigma * cs / s));
        }
      });
    });
  });
}

Tensor& log_normal_(Tensor& self, double mean, double std, Generator* gen) {
  if (!is_floating_point(self.dtype()))
    EMBER_NOT_IMPLEMENTED("\"log_normal_\" not implemented for '", dtype_name(self.dtype()), "'");
  EMBER_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  return fill_dense(self, [&](Tensor& out) {
    normal_fill(out, mean, std, gen);
    EMBER_DISPATCH_FLOAT(self.dtype(), "log_normal_", [&] {
      scalar_t* o = out.data<scalar_t>();
      parallel_for(0, out.numel(), kGrainSize, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) o[k] = scalar_t(std::exp(opmath_t<scalar_t>(o[k])));
      });
    });
  });
}

Tensor& geometric_(Tensor& self, double p, Generator* gen) {
  EMBER_CHECK(p > 0.0 && p < 1.0, "geometric_ expects p to be in (0, 1), but got p=", p);
  const double denom = std::log1p(-p);
  return fill_dense(self, [&](Tensor& out) {
    EMBER_DISPATCH_NUMERIC(self.dtype(), "geometric_", [&] {
      scalar_t* o = out.data<scalar_t>();
      for_each_tile<1>(out.numel(), gen, [&](int64_t b, int64_t c, const uint32_t* w) {
        for (int64_t k = 0; k < c; ++k) {
          double u = (double(w[k]) + 0.5) * 0x1p-32;  // (0, 1)
          double v = std::ceil(std::log(u) / denom);
          if constexpr (std::is_integral_v<scalar_t>)
            o[b + k] = static_cast<scalar_t>(static_cast<int64_t>(v));
          else
            o[b + k] = scalar_t(static_cast<opmath_t<scalar_t>>(v));
        }
      });
    });
  });
}

// ---- factories ----

Tensor rand(IntArrayRef sizes, Generator* gen, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  return uniform_(t, 0.0, 1.0, gen);
}

Tensor randn(IntArrayRef sizes, Generator* gen, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  return normal_(t, 0.0, 1.0, gen);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator* gen, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  return random_(t, low, high, gen);
}

Tensor normal(double mean, double std, IntArrayRef sizes, Generator* gen, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  return normal_(t, mean, std, gen);
}
Tensor normal(const Tensor& mean, double std, Generator* gen) { return normal_tensors(&mean, 0.0, nullptr, std, gen); }
Tensor normal(double mean, const Tensor& std, Generator* gen) { return normal_tensors(nullptr, mean, &std, 0.0, gen); }
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen) {
  return normal_tensors(&mean, 0.0, &std, 0.0, gen);
}

Tensor rand_like(const Tensor& t, std::optional<ScalarType> dtype, Generator* gen) {
  Tensor out = empty_like_dense(t, dtype.value_or(t.dtype()));
  return uniform_(out, 0.0, 1.0, gen);
}
Tensor randn_like(const Tensor& t, std::optional<ScalarType> dtype, Generator* gen) {
  Tensor out = empty_like_dense(t, dtype.value_or(t.dtype()));
  return normal_(out, 0.0, 1.0, gen);
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, std::optional<ScalarType> dtype, Generator* gen) {
  Tensor out = empty_like_dense(t, dtype.value_or(t.dtype()));
  return random_(out, low, high, gen);
}

Tensor randperm(int64_t n, Generator* gen, ScalarType dtype, Device device) {
  EMBER_CHECK(n >= 0, "Trying to create tensor with negative dimension ", n, ": [", n, "]");
  if (dtype == ScalarType::Bool || is_complex(dtype) || dtype == ScalarType::Undefined)
    EMBER_NOT_IMPLEMENTED("\"randperm\" not implemented for '", dtype_name(dtype), "'");
  if (is_floating_point(dtype)) {
    int64_t limit = (int64_t(1) << float_digits(dtype)) + 1;
    EMBER_CHECK(n <= limit, "n cannot be greater than ", limit, " for ", dtype_name(dtype), " type.");
  } else {
    EMBER_CHECK(n == 0 || n - 1 <= int_bounds(dtype).second, "randperm: n=", n, " is too large for result type ",
                dtype_name(dtype));
  }
  Tensor perm = empty({n}, ScalarType::Int64, device);
  int64_t* p = perm.data<int64_t>();
  std::iota(p, p + n, int64_t(0));
  if (n > 1) {
    // Fisher-Yates from the back; step i draws j uniform in [0, i] from one (or two) words.
    const bool wide = uint64_t(n) > (uint64_t(1) << 32);
    const uint64_t words = uint64_t(n - 1) * (wide ? 2 : 1);
    PhiloxSlice s = gen_or_default(gen).reserve((words + 3) / 4);
    WordStream ws(s.key, s.counter, (words + 3) / 4);
    for (int64_t i = n - 1; i > 0; --i) {
      uint64_t range = uint64_t(i) + 1, j;
      if (wide)
        j = uint64_t((static_cast<unsigned __int128>(ws.next64()) * range) >> 64);
      else
        j = (uint64_t(ws.next32()) * range) >> 32;
      std::swap(p[i], p[j]);
    }
  }
  return dtype == ScalarType::Int64 ? perm : to_dtype(perm, dtype);
}

// ---- sampling from tensors ----

Tensor bernoulli(const Tensor& p, Generator* gen) {
  if (!is_floating_point(p.dtype()))
    EMBER_NOT_IMPLEMENTED("\"bernoulli\" not implemented for '", dtype_name(p.dtype()), "'");
  Tensor out = empty_like_dense(p, p.dtype());
  return bernoulli_(out, p, gen);
}

Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  Tensor out = empty_like_dense(self, self.dtype());
  return bernoulli_(out, p, gen);
}

namespace {
// Uniform doubles in (0, 1) from the Philox sub-stream (key, counter, j) for j = 0, 1, ...
class SubStream {
 public:
  SubStream(uint64_t key, uint64_t counter) : key_(key), counter_(counter) {}
  double next() {
    if (used_ == 2) refill();
    uint64_t hi = words_[2 * used_], lo = words_[2 * used_ + 1];
    ++used_;
    return (double(((hi << 32) | lo) >> 11) + 0.5) * 0x1p-53;
  }

 private:
  void refill() {
    words_ = philox4x32({uint32_t(counter_), uint32_t(counter_ >> 32), uint32_t(block_), uint32_t(block_ >> 32)},
                        {uint32_t(key_), uint32_t(key_ >> 32)});
    ++block_;
    used_ = 0;
  }
  uint64_t key_, counter_, block_ = 0;
  std::array<uint32_t, 4> words_{};
  int used_ = 2;
};

// Knuth's product method for small rates; Hormann's transformed rejection (PTRS, 1993) above.
double poisson_sample(double lam, SubStream& u) {
  if (lam <= 0) return 0;
  if (lam < 10) {
    double limit = std::exp(-lam), p = 1.0;
    int64_t k = -1;
    do {
      ++k;
      p *= u.next();
    } while (p > limit);
    return double(k);
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    double U = u.next() - 0.5, V = u.next();
    double us = 0.5 - std::fabs(U);
    double k = std::floor((2 * a / us + b) * U + lam + 0.43);
    if (us >= 0.07 && V <= vr) return k;
    if (k < 0 || (us < 0.013 && V > us)) continue;
    if (std::log(V) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -lam + k * loglam - std::lgamma(k + 1))
      return k;
  }
}

// Standard normals from pairs of uniforms (Box-Muller), both values of each pair used.
class NormalStream {
 public:
  explicit NormalStream(SubStream& u) : u_(u) {}
  double next() {
    if (have_) {
      have_ = false;
      return spare_;
    }
    double r = std::sqrt(-2.0 * std::log(u_.next())), t = 2.0 * 3.14159265358979323846 * u_.next();
    spare_ = r * std::sin(t);
    have_ = true;
    return r * std::cos(t);
  }

 private:
  SubStream& u_;
  double spare_ = 0.0;
  bool have_ = false;
};

// Marsaglia and Tsang's squeeze-and-reject method (2000) for alpha >= 1; smaller alpha draws
// Gamma(alpha + 1) and scales it by U^(1/alpha).
double gamma_sample(double alpha, SubStream& u) {
  if (!(alpha > 0)) return alpha == 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  double log_boost = 0.0;
  const bool boosted = alpha < 1.0;
  if (boosted) {
    log_boost = std::log(u.next()) / alpha;
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  NormalStream normal(u);
  while (true) {
    double x, v;
    do {
      x = normal.next();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double U = u.next(), x2 = x * x;
    if (U < 1.0 - 0.0331 * x2 * x2 || std::log(U) < 0.5 * x2 + d * (1.0 - v + std::log(v)))
      return boosted ? std::exp(std::log(d * v) + log_boost) : d * v;  // in logs: U^(1/alpha) may underflow
  }
}

// Binomial(n, p) for p <= 0.5: inversion (sequential search from 0) when n p is small, else
// Hormann's transformed rejection with squeeze (BTRS, 1993).
double binomial_sample_low(double n, double p, SubStream& u) {
  if (n * p < 10.0) {
    const double q = 1.0 - p, s = p / q, a = (n + 1.0) * s;
    double r = std::pow(q, n), x = u.next(), k = 0;
    while (x > r && k < n) {
      x -= r;
      k += 1.0;
      r *= a / k - s;
    }
    return k;
  }
  const double q = 1.0 - p, spq = std::sqrt(n * p * q);
  const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5;
  const double vr = 0.92 - 4.2 / b, alpha = (2.83 + 5.1 / b) * spq, lpq = std::log(p / q);
  const double m = std::floor((n + 1.0) * p), h = std::lgamma(m + 1.0) + std::lgamma(n - m + 1.0);
  while (true) {
    double U = u.next() - 0.5, V = u.next(), us = 0.5 - std::fabs(U);
    double k = std::floor((2.0 * a / us + b) * U + c);
    if (k < 0 || k > n) continue;
    if (us >= 0.07 && V <= vr) return k;
    V = std::log(V * alpha / (a / (us * us) + b));
    if (V <= h - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + (k - m) * lpq) return k;
  }
}

double binomial_sample(double n, double p, SubStream& u) {
  if (std::isnan(n) || std::isnan(p)) return std::numeric_limits<double>::quiet_NaN();
  n = std::floor(n);
  if (n <= 0 || p <= 0) return 0.0;
  if (p >= 1) return n;
  return p <= 0.5 ? binomial_sample_low(n, p, u) : n - binomial_sample_low(n, 1.0 - p, u);
}

// Draws f(params..., stream) per element into a tensor of `like`'s shape and dtype, each
// element from its own Philox sub-stream.
template <typename F>
Tensor sample_elementwise(const Tensor& like, const std::vector<Tensor>& params, Generator* gen, const F& f) {
  std::vector<Tensor> ps;
  std::vector<const double*> ptrs;
  for (const Tensor& t : params) {
    ps.push_back(contiguous(to_dtype(expand(t, like.sizes()), ScalarType::Float64)));
    ptrs.push_back(ps.back().data<double>());
  }
  const int64_t n = like.numel();
  PhiloxSlice slice = gen_or_default(gen).reserve(static_cast<uint64_t>(n));
  Tensor out = empty(like.sizes(), ScalarType::Float64);
  double* op = out.data<double>();
  parallel_for(0, n, 2048, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      SubStream s(slice.key, slice.counter + static_cast<uint64_t>(i));
      op[i] = f(ptrs.data(), i, s);
    }
  });
  return to_dtype(out, like.dtype());
}
}  // namespace

Tensor poisson(const Tensor& rates, Generator* gen) {
  EMBER_CHECK(is_floating_point(rates.dtype()), "\"poisson_cpu\" not implemented for '", dtype_name(rates.dtype()),
              "'");
  Tensor r = contiguous(to_dtype(rates, ScalarType::Float64));
  const double* rp = r.data<double>();
  for (int64_t i = 0; i < r.numel(); ++i)
    EMBER_CHECK(rp[i] >= 0 && !std::isnan(rp[i]), "invalid Poisson rate, expected rate to be non-negative");
  PhiloxSlice slice = gen_or_default(gen).reserve(static_cast<uint64_t>(r.numel()));
  Tensor out = empty(rates.sizes(), ScalarType::Float64);
  double* op = out.data<double>();
  parallel_for(0, r.numel(), 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      SubStream s(slice.key, slice.counter + static_cast<uint64_t>(i));
      op[i] = poisson_sample(rp[i], s);
    }
  });
  Tensor result = to_dtype(out, rates.dtype());
  if (auto n = autograd::make_node<autograd::LambdaBackward>(rates)) {  // piecewise constant in the rate
    n->name_ = "PoissonBackward0";
    Shape sz = rates.sizes();
    ScalarType dt = rates.dtype();
    n->fn = [sz, dt](const autograd::TensorList&, const autograd::TensorList&) -> autograd::TensorList {
      return {zeros(sz, dt)};
    };
    autograd::set_history(result, n);
  }
  return result;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(is_floating_point(probs.dtype()),
              "multinomial only supports floating-point dtypes for input, got: ", dtype_name(probs.dtype()));
  EMBER_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t n_cat = probs.size(-1);
  const int64_t n_dist = probs.dim() == 1 ? 1 : probs.size(0);
  EMBER_CHECK(replacement || num_samples <= n_cat,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  EMBER_CHECK(n_cat <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
  Tensor out =
      probs.dim() == 1 ? empty({num_samples}, ScalarType::Int64) : empty({n_dist, num_samples}, ScalarType::Int64);
  if (n_dist == 0) return out;

  Tensor w = contiguous(to_dtype(probs, ScalarType::Float64));
  const double* pw = w.data<double>();
  for (int64_t r = 0; r < n_dist; ++r) {
    double total = 0;
    for (int64_t i = 0; i < n_cat; ++i) {
      double v = pw[r * n_cat + i];
      EMBER_CHECK(std::isfinite(v) && v >= 0.0, "probability tensor contains either `inf`, `nan` or element < 0");
      total += v;
    }
    EMBER_CHECK(total > 0.0, "invalid multinomial distribution (sum of probabilities <= 0)");
  }

  // Each row draws from its own block range (one 64-bit word pair per draw), so rows run in parallel.
  const int64_t draws = replacement ? num_samples : n_cat;
  const uint64_t row_blocks = (uint64_t(draws) * 2 + 3) / 4;
  PhiloxSlice s = gen_or_default(gen).reserve(row_blocks * uint64_t(n_dist));
  int64_t* o = out.data<int64_t>();
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(draws, 1));
  parallel_for(0, n_dist, grain, [&](int64_t r0, int64_t r1) {
    std::vector<double> acc(n_cat);
    std::vector<int64_t> idx;
    for (int64_t r = r0; r < r1; ++r) {
      WordStream ws(s.key, s.counter + uint64_t(r) * row_blocks, row_blocks);
      const double* p = pw + r * n_cat;
      int64_t* dst = o + r * num_samples;
      if (replacement) {
        // Inverse CDF: the first category whose cumulative weight exceeds u * total.
        double total = 0;
        int64_t last_nonzero = 0;
        for (int64_t i = 0; i < n_cat; ++i) {
          total += p[i];
          acc[i] = total;
          if (p[i] > 0) last_nonzero = i;
        }
        for (int64_t k = 0; k < num_samples; ++k) {
          double x = double(ws.next64() >> 11) * 0x1p-53 * total;
          int64_t i = std::upper_bound(acc.begin(), acc.end(), x) - acc.begin();
          dst[k] = std::min(i, last_nonzero);  // x rounding up to total lands past the end
        }
      } else {
        // Without replacement: the num_samples largest keys p_i / E_i with E_i ~ Exp(1)
        // (exponential races, equivalent to sequential draws without replacement).
        for (int64_t i = 0; i < n_cat; ++i) acc[i] = p[i] / -std::log(ws.open_unit());
        idx.resize(n_cat);
        std::iota(idx.begin(), idx.end(), int64_t(0));
        auto by_key = [&](int64_t a, int64_t b) { return acc[a] > acc[b] || (acc[a] == acc[b] && a < b); };
        std::partial_sort(idx.begin(), idx.begin() + num_samples, idx.end(), by_key);
        std::copy(idx.begin(), idx.begin() + num_samples, dst);
      }
    }
  });
  return out;
}

}  // namespace ember

namespace ember {

Tensor standard_gamma(const Tensor& alpha, Generator* gen) {
  EMBER_CHECK(is_floating_point(alpha.dtype()), "\"gamma_cpu\" not implemented for '", dtype_name(alpha.dtype()), "'");
  // Samples that underflow (small alpha) become the smallest normal number, as torch's do.
  const double tiny = alpha.dtype() == ScalarType::Float64   ? std::numeric_limits<double>::min()
                      : alpha.dtype() == ScalarType::Float16 ? 0x1p-14
                                                             : double(std::numeric_limits<float>::min());
  Tensor x = sample_elementwise(alpha, {alpha}, gen, [tiny](const double* const* p, int64_t i, SubStream& s) {
    return std::max(gamma_sample(p[0][i], s), tiny);
  });
  // Note [Gamma reparameterization] in ops/special.cpp.
  if (auto n = autograd::make_node<autograd::LambdaBackward>(alpha)) {
    n->record("StandardGammaBackward0", {x}, {alpha}, {x},
              [](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
                return {mul(g[0], standard_gamma_grad(s[0], s[1]))};
              });
  }
  return x;
}

Tensor binomial(const Tensor& count, const Tensor& prob, Generator* gen) {
  EMBER_CHECK(is_floating_point(count.dtype()) && is_floating_point(prob.dtype()),
              "\"binomial_cpu\" not implemented for '",
              dtype_name(is_floating_point(count.dtype()) ? prob.dtype() : count.dtype()), "'");
  Shape shape = broadcast_shapes(count.sizes(), prob.sizes(), "binomial");
  Tensor like = empty(shape, count.dtype());
  return sample_elementwise(like, {count, prob}, gen, [](const double* const* p, int64_t i, SubStream& s) {
    return binomial_sample(p[0][i], p[1][i], s);
  });
}

}  // namespace ember
