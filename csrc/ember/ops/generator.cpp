// Generator state: seed, counter offset, serialization, the default generator.
#include <cstring>
#include <random>

#include "ember/ops/ops.h"
#include "ember/ops/random.h"

namespace ember {

void GeneratorImpl::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> g(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t GeneratorImpl::seed() {
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) ^ uint64_t(rd());
  manual_seed(s);
  return s;
}

uint64_t GeneratorImpl::initial_seed() const {
  std::lock_guard<std::mutex> g(mu_);
  return seed_;
}

uint64_t GeneratorImpl::offset() const {
  std::lock_guard<std::mutex> g(mu_);
  return offset_;
}

void GeneratorImpl::set_offset(uint64_t offset) {
  std::lock_guard<std::mutex> g(mu_);
  offset_ = offset;
}

PhiloxSlice GeneratorImpl::reserve(uint64_t nblocks) {
  std::lock_guard<std::mutex> g(mu_);
  PhiloxSlice s{seed_, offset_};
  offset_ += nblocks;
  return s;
}

Tensor GeneratorImpl::get_state() const {
  Tensor t = empty({kRngStateSize}, ScalarType::UInt8);
  uint8_t* p = t.data<uint8_t>();
  std::lock_guard<std::mutex> g(mu_);
  for (int i = 0; i < 8; ++i) {
    p[i] = uint8_t(seed_ >> (8 * i));
    p[8 + i] = uint8_t(offset_ >> (8 * i));
  }
  return t;
}

void GeneratorImpl::set_state(const Tensor& state) {
  EMBER_CHECK_TYPEERR(state.defined() && state.dtype() == ScalarType::UInt8,
                      "RNG state must be a torch.ByteTensor (uint8), got ",
                      state.defined() ? dtype_name(state.dtype()) : "undefined");
  EMBER_CHECK(state.numel() == kRngStateSize, "Expected an RNG state of ", kRngStateSize,
              " bytes (seed and offset) but found the input RNG state size to be ", state.numel());
  Tensor c = contiguous(state);
  const uint8_t* p = c.data<uint8_t>();
  uint64_t seed = 0, offset = 0;
  for (int i = 0; i < 8; ++i) {
    seed |= uint64_t(p[i]) << (8 * i);
    offset |= uint64_t(p[8 + i]) << (8 * i);
  }
  std::lock_guard<std::mutex> g(mu_);
  seed_ = seed;
  offset_ = offset;
}

Generator::Generator(Device device, uint64_t seed) {
  if (!device.is_cpu())
    EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot create a generator on ", device.str());
  impl_ = IntrusivePtr<GeneratorImpl>::make(seed, device);
}

Generator Generator::clone_state() const {
  Generator g(device());
  g.set_state(get_state());
  return g;
}

Generator& default_generator() {
  static auto* g = new Generator();  // never destroyed: other statics may draw during exit
  return *g;
}

Generator& manual_seed(uint64_t seed) { return default_generator().manual_seed(seed); }
uint64_t seed() { return default_generator().seed(); }
uint64_t initial_seed() { return default_generator().initial_seed(); }
Tensor get_rng_state() { return default_generator().get_state(); }
void set_rng_state(const Tensor& state) { default_generator().set_state(state); }

}  // namespace ember
