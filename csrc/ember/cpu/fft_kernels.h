// FFT kernels (CPU) on top of FFTW3 (Note [FFTW plans] in fft_kernels.cpp). The ops in ops/fft.cpp
// check arguments, pick shapes and normalization and record autograd.
#pragma once
#include <cstdint>
#include <vector>

#include "ember/core/dtype.h"

namespace ember::cpu {

enum class FftKind : uint8_t { C2CForward, C2CBackward, R2C, C2R };

// One dim of a transform or of its batch: logical length n (the real length for R2C/C2R, whose
// last transform dim holds n / 2 + 1 complex values), input and output strides in elements of the
// input and output arrays.
struct FftDim {
  int64_t n, is, os;
};

// Unnormalized transform of `in` into `out` (distinct buffers) over `dims`, repeated over `batch`,
// then out *= scale when scale != 1. `real_dtype` is float32 or float64 (complex values are pairs of
// it). For R2C/C2R the last of `dims` is the halved one. C2R overwrites `in`. `out` must be a
// contiguous buffer of `out_numel` elements (the scaling pass and the parallel split rely on it).
void fft_execute(FftKind kind, ScalarType real_dtype, void* in, void* out, int64_t out_numel,
                 const std::vector<FftDim>& dims, const std::vector<FftDim>& batch, double scale);

// Number of cached FFTW plans, and dropping them (tests, and ember.backends.cpu-style housekeeping).
int64_t fft_plan_cache_size();
void fft_plan_cache_clear();

}  // namespace ember::cpu
