// Discrete Fourier transforms: the three primitives that ember.fft (python/ember/fft.py) builds
// fft/ifft/rfft/irfft/hfft/ihfft and their 2-D and N-D forms, stft and istft from, as torch's
// _fft_c2c/_fft_r2c/_fft_c2r. Any lengths, float32/float64 and complex64/complex128, over any
// set of dims of a strided tensor; computed by FFTW (cpu/fft_kernels.cpp). Each is differentiable
// (reverse and forward mode), its gradient written with the other primitives.
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// Scaling of a transform's result, as torch's fft_norm_mode: none, 1/sqrt(n) or 1/n, with n the
// product of the signal lengths over the transformed dims (the real lengths for r2c and c2r).
enum class FftNorm : int64_t { None = 0, ByRootN = 1, ByN = 2 };

// Complex-to-complex over `dim` (unique; empty is a copy); forward: exp(-2 pi i jk / n), else +.
Tensor fft_c2c(const Tensor& self, IntArrayRef dim, FftNorm norm, bool forward);
// Real-to-complex forward transform over `dim` (at least one). onesided: the last of `dim` keeps
// n / 2 + 1 values (the rest follow from Hermitian symmetry).
Tensor fft_r2c(const Tensor& self, IntArrayRef dim, FftNorm norm, bool onesided);
// Complex-to-real inverse transform over `dim`: the last of `dim` holds last_dim_size / 2 + 1
// values of a Hermitian signal (imaginary parts of the zero and Nyquist terms are ignored); the
// result has last_dim_size there.
Tensor fft_c2r(const Tensor& self, IntArrayRef dim, FftNorm norm, int64_t last_dim_size);

}  // namespace ember
