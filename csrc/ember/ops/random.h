// Random number generation: Generator (Philox4x32-10, counter-based) and the random ops.
//
// Note [Counter-based RNG]
// A Generator is a Philox key (the seed) plus a 64-bit counter offset. An op reserves the
// counters it needs under the generator's mutex (one increment of the offset), then computes
// each element from (key, its own counter) alone. Values therefore depend only on the seed and
// the sequence of ops, never on the number of threads or how the work is chunked. Ops fill a
// dense output in memory order; other outputs are filled through a contiguous temporary.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>

#include "ember/core/intrusive_ptr.h"
#include "ember/core/tensor.h"

namespace ember {

// PyTorch's default seed, so a fresh program starts from the same well-known value.
constexpr uint64_t kDefaultRngSeed = 67280421310721ull;
// Bytes of Generator::get_state(): seed then offset, each little-endian uint64.
constexpr int64_t kRngStateSize = 16;

// Where an op's random stream starts: key and first block counter.
struct PhiloxSlice {
  uint64_t key;
  uint64_t counter;
};

class GeneratorImpl : public RefCounted {
 public:
  GeneratorImpl(uint64_t seed, Device device) : seed_(seed), device_(device) {}

  void manual_seed(uint64_t seed);
  uint64_t seed();  // reseeds from a non-deterministic source and returns the new seed
  uint64_t initial_seed() const;
  uint64_t offset() const;
  void set_offset(uint64_t offset);
  Tensor get_state() const;
  void set_state(const Tensor& state);
  Device device() const { return device_; }
  // Takes `nblocks` consecutive Philox blocks for one op (see Note [Counter-based RNG]).
  PhiloxSlice reserve(uint64_t nblocks);

 private:
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
  Device device_;
};

// A handle to a GeneratorImpl; copies share the generator (as torch.Generator objects do).
class Generator {
 public:
  explicit Generator(Device device = Device(), uint64_t seed = kDefaultRngSeed);
  explicit Generator(IntrusivePtr<GeneratorImpl> impl) : impl_(std::move(impl)) {}

  Generator& manual_seed(uint64_t seed) {
    impl_->manual_seed(seed);
    return *this;
  }
  uint64_t seed() { return impl_->seed(); }
  uint64_t initial_seed() const { return impl_->initial_seed(); }
  uint64_t offset() const { return impl_->offset(); }
  void set_offset(uint64_t offset) { impl_->set_offset(offset); }
  Tensor get_state() const { return impl_->get_state(); }  // uint8 tensor of kRngStateSize bytes
  void set_state(const Tensor& state) { impl_->set_state(state); }
  Generator clone_state() const;  // a new generator in the same state
  Device device() const { return impl_->device(); }
  PhiloxSlice reserve(uint64_t nblocks) { return impl_->reserve(nblocks); }
  GeneratorImpl* impl() const { return impl_.get(); }
  bool is_same(const Generator& o) const { return impl_ == o.impl_; }

 private:
  IntrusivePtr<GeneratorImpl> impl_;
};

// The process-wide CPU generator that ops use when given no generator.
Generator& default_generator();
Generator& manual_seed(uint64_t seed);  // seeds the default generator; returns it
uint64_t seed();                        // non-deterministic reseed of the default generator
uint64_t initial_seed();
Tensor get_rng_state();
void set_rng_state(const Tensor& state);

// ---- factories; `gen` null means the default generator ----
Tensor rand(IntArrayRef sizes, Generator* gen = nullptr, ScalarType dtype = default_dtype(), Device device = Device());
Tensor randn(IntArrayRef sizes, Generator* gen = nullptr, ScalarType dtype = default_dtype(), Device device = Device());
// Integers in [low, high).
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator* gen = nullptr,
               ScalarType dtype = ScalarType::Int64, Device device = Device());
Tensor randperm(int64_t n, Generator* gen = nullptr, ScalarType dtype = ScalarType::Int64, Device device = Device());
Tensor normal(double mean, double std, IntArrayRef sizes, Generator* gen = nullptr, ScalarType dtype = default_dtype(),
              Device device = Device());
// Tensor forms broadcast mean and std; the result has mean's dtype (std's when mean is a number).
Tensor normal(const Tensor& mean, double std = 1.0, Generator* gen = nullptr);
Tensor normal(double mean, const Tensor& std, Generator* gen = nullptr);
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr);
Tensor rand_like(const Tensor& t, std::optional<ScalarType> dtype = std::nullopt, Generator* gen = nullptr);
Tensor randn_like(const Tensor& t, std::optional<ScalarType> dtype = std::nullopt, Generator* gen = nullptr);
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, std::optional<ScalarType> dtype = std::nullopt,
                    Generator* gen = nullptr);

// ---- sampling from tensors ----
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);               // 0/1 with probability p, p's dtype
Tensor bernoulli(const Tensor& self, double p, Generator* gen = nullptr);  // self's shape and dtype
// Indices (int64) of num_samples draws per row of a 1-D or 2-D tensor of non-negative weights.
// Poisson samples with the given rates (each element its own Philox sub-stream).
Tensor poisson(const Tensor& rates, Generator* gen = nullptr);
// Gamma(alpha, 1) samples (torch._standard_gamma); differentiable in alpha through
// standard_gamma_grad (Note [Gamma reparameterization] in ops/special.cpp).
Tensor standard_gamma(const Tensor& alpha, Generator* gen = nullptr);
// Binomial(count, prob) samples over the broadcast inputs, in count's dtype (torch.binomial).
Tensor binomial(const Tensor& count, const Tensor& prob, Generator* gen = nullptr);
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, Generator* gen = nullptr);

// ---- in-place fills (any layout; bump the version) ----
Tensor& uniform_(Tensor& self, double from = 0.0, double to = 1.0, Generator* gen = nullptr);
Tensor& normal_(Tensor& self, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& self, double p = 0.5, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator* gen = nullptr);
// random_(self): [0, max] for integers, [0, 2^digits] for floating types, {0, 1} for bool.
Tensor& random_(Tensor& self, Generator* gen = nullptr);
// [from, to) or, when `to` is empty, [from, the upper bound above].
Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to, Generator* gen = nullptr);
Tensor& exponential_(Tensor& self, double lambd = 1.0, Generator* gen = nullptr);
Tensor& cauchy_(Tensor& self, double median = 0.0, double sigma = 1.0, Generator* gen = nullptr);
Tensor& log_normal_(Tensor& self, double mean = 1.0, double std = 2.0, Generator* gen = nullptr);
Tensor& geometric_(Tensor& self, double p, Generator* gen = nullptr);

}  // namespace ember
