// The scan loop of ops/scan.cpp (cumsum, cumprod, logcumsumexp), a kernel header: cpu/sum_kernels.cpp
// compiles it per ISA level for the float sums and products (scan_float_kernel).
#pragma once
#include <algorithm>
#include <cstdint>

#include "ember/core/parallel.h"
#include "ember/cpu/isa_check.h"  // Note [Multi-ISA kernels]

namespace ember {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

// y[r] = acc = f(acc, x[r]) along R, starting from init; acc type A, output type O.
template <typename T, typename O, typename A, typename F>
void scan_rows(const T* x, O* y, int64_t outer, int64_t R, int64_t inner, A init, const F& f) {
  if (outer == 0 || R == 0 || inner == 0) return;
  if (inner == 1) {
    // Contiguous rows, two side by side: a row's running value is a chain of dependent adds
    // (latency-bound), so two chains keep the adder busier (more rows at once: 4 KiB apart, they
    // made loads wait on stores with the same low address bits). Each row's order is unchanged.
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
      int64_t o = b;
      for (; o + 2 <= e; o += 2) {
        const T *x0 = x + o * R, *x1 = x0 + R;
        O *y0 = y + o * R, *y1 = y0 + R;
        A a0 = init, a1 = init;
        for (int64_t r = 0; r < R; ++r) {
          a0 = f(a0, x0[r]);
          a1 = f(a1, x1[r]);
          y0[r] = static_cast<O>(a0);
          y1[r] = static_cast<O>(a1);
        }
      }
      for (; o < e; ++o) {
        A acc = init;
        for (int64_t r = 0; r < R; ++r) {
          acc = f(acc, x[o * R + r]);
          y[o * R + r] = static_cast<O>(acc);
        }
      }
    });
    return;
  }
  constexpr int64_t kTile = 256;
  int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / (R * kTile)), [&](int64_t b, int64_t e) {
    A acc[kTile];
    for (int64_t w = b; w < e; ++w) {
      int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
      for (int64_t j = 0; j < len; ++j) acc[j] = init;
      for (int64_t r = 0; r < R; ++r) {
        int64_t base = (o * R + r) * inner + j0;
        for (int64_t j = 0; j < len; ++j) {
          acc[j] = f(acc[j], x[base + j]);
          y[base + j] = static_cast<O>(acc[j]);
        }
      }
    }
  });
}

}  // namespace EMBER_ISA_NS
}  // namespace ember
