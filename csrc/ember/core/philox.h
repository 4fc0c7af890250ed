// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator. Output block = f(key, counter) with no state between blocks, so any
// element of a random stream can be computed directly from its position.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>

namespace ember {

namespace philox {
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
constexpr int kRounds = 10;
}  // namespace philox

// One block: four 32-bit outputs for a 128-bit counter and a 64-bit key (Random123 layout).
inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int r = 0; r < philox::kRounds; ++r) {
    if (r) k[0] += philox::kW0, k[1] += philox::kW1;
    uint64_t p0 = uint64_t(philox::kM0) * c[0], p1 = uint64_t(philox::kM1) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c;
}

// Writes the 4 * nblocks words of the blocks with counters (counter + i, 0, 0) for i < nblocks,
// block i at out[4i .. 4i+3]. Lanes are processed side by side so the compiler vectorizes the
// rounds (32x32->64 multiplies map to vpmuludq).
inline void philox_fill(uint64_t key, uint64_t counter, int64_t nblocks, uint32_t* out) {
  constexpr int L = 16;
  const uint32_t key0 = uint32_t(key), key1 = uint32_t(key >> 32);
  for (int64_t b = 0; b < nblocks; b += L) {
    alignas(64) uint32_t c0[L], c1[L], c2[L], c3[L];
    for (int j = 0; j < L; ++j) {
      uint64_t c = counter + uint64_t(b + j);
      c0[j] = uint32_t(c), c1[j] = uint32_t(c >> 32), c2[j] = 0, c3[j] = 0;
    }
    uint32_t k0 = key0, k1 = key1;
    for (int r = 0; r < philox::kRounds; ++r) {
      for (int j = 0; j < L; ++j) {
        uint64_t p0 = uint64_t(philox::kM0) * c0[j], p1 = uint64_t(philox::kM1) * c2[j];
        uint32_t n0 = uint32_t(p1 >> 32) ^ c1[j] ^ k0, n2 = uint32_t(p0 >> 32) ^ c3[j] ^ k1;
        c1[j] = uint32_t(p1), c3[j] = uint32_t(p0), c0[j] = n0, c2[j] = n2;
      }
      k0 += philox::kW0, k1 += philox::kW1;
    }
    int64_t m = std::min<int64_t>(L, nblocks - b);
    uint32_t* o = out + 4 * b;
    for (int64_t j = 0; j < m; ++j) o[4 * j] = c0[j], o[4 * j + 1] = c1[j], o[4 * j + 2] = c2[j], o[4 * j + 3] = c3[j];
  }
}

}  // namespace ember
