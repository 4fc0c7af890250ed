// FFT primitives (ops/fft.h): checks, output shapes and normalization, autograd records; the
// transforms run in cpu/fft_kernels.cpp (FFTW).
//
// Gradients (PyTorch's convention for complex tensors, Note [Complex double vjp]): each transform
// is linear, so its gradient is its adjoint and its tangent is the transform of the tangent.
// - c2c: the adjoint of the unnormalized DFT is the unnormalized DFT of the other sign, with the
//   same scale.
// - r2c: the one-sided result is the full one cut to n / 2 + 1 terms, so its adjoint pads the
//   gradient back to n with zeros, runs the inverse c2c and keeps the real part (real input).
// - c2r: reading the half spectrum as Hermitian counts the terms 1 .. n - (n / 2 + 1) twice and
//   ignores imaginary parts at 0 and n / 2, so its adjoint is the one-sided r2c of the gradient
//   with those middle terms doubled (r2c gives real values at 0 and n / 2).
// All three formulas are built from these primitives, so they differentiate again.
#include "ember/ops/fft.h"

#include <algorithm>
#include <cmath>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/cpu/fft_kernels.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

// Wrapped, unique dims (torch's "FFT dims must be unique").
Shape fft_dims(const Tensor& t, IntArrayRef dim, const char* op, bool allow_empty) {
  EMBER_CHECK(allow_empty || !dim.empty(), op, " must transform at least one axis");
  Shape d;
  for (int64_t x : dim) {
    int64_t w = wrap_dim(x, t.dim(), /*scalar_ok=*/false);
    EMBER_CHECK(std::find(d.begin(), d.end(), w) == d.end(), "FFT dims must be unique");
    d.push_back(w);
  }
  return d;
}

void check_cpu(const Tensor& t, const char* op) {
  if (!t.device().is_cpu()) EMBER_NOT_IMPLEMENTED(op, " is not implemented on ", t.device().str());
}

double norm_scale(FftNorm norm, const Shape& signal, const Shape& dims) {
  if (norm == FftNorm::None) return 1.0;
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(signal[d]);
  return norm == FftNorm::ByN ? 1.0 / n : 1.0 / std::sqrt(n);
}

// FFTW geometry: transform dims in the given order (the last is the halved one for r2c/c2r) and
// the remaining dims as the batch. `n` is the logical (real) length of each dim.
void geometry(const Tensor& in, const Tensor& out, const Shape& logical, const Shape& dims,
              std::vector<cpu::FftDim>& tdims, std::vector<cpu::FftDim>& batch) {
  for (int64_t d : dims) tdims.push_back({logical[d], in.stride(d), out.stride(d)});
  for (int64_t d = 0; d < in.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end() && logical[d] != 1)
      batch.push_back({logical[d], in.stride(d), out.stride(d)});
}

void check_length(int64_t n) { EMBER_CHECK(n >= 1, "Invalid number of data points (", n, ") specified"); }

// Note [Real transforms of awkward lengths]
// FFTW's real transforms of an odd length with a large prime factor go through its real-data
// Rader algorithm, which is several times slower than its complex one: rfft of 1,000,003 floats
// took 255-330 ms against 80-115 ms for the complex transform of the same length (an even length
// is fine: its r2c is a complex transform of half the length). Such lengths take the complex
// transform: r2c of the complexified input cut to n / 2 + 1 terms, and c2r as c2c over the other
// dims, the Hermitian extension along the last dim (the imaginary part of term 0 dropped, as c2r
// ignores it) and the real part of its inverse c2c.
bool real_transform_via_c2c(int64_t n) {
  if (n % 2 == 0 || n < 2048) return false;
  int64_t largest = 1, m = n;
  for (int64_t p = 3; p * p <= m; p += 2)
    while (m % p == 0) largest = p, m /= p;
  largest = std::max(largest, m);
  return largest > 2048;
}

Tensor contiguous_copy(const Tensor& t) {
  Tensor c = empty(t.sizes(), t.dtype());
  copy_(c, t);
  return c;
}

}  // namespace

Tensor fft_c2c(const Tensor& self, IntArrayRef dim, FftNorm norm, bool forward) {
  check_cpu(self, "fft_c2c");
  EMBER_CHECK(is_complex(self.dtype()), "fft_c2c expects a complex input tensor, but got ", dtype_name(self.dtype()));
  Shape dims = fft_dims(self, dim, "fft_c2c", /*allow_empty=*/true);
  for (int64_t d : dims) check_length(self.size(d));
  Tensor out = empty(self.sizes(), self.dtype());
  {
    std::vector<cpu::FftDim> tdims, batch;
    geometry(self, out, self.sizes(), dims, tdims, batch);
    cpu::fft_execute(forward ? cpu::FftKind::C2CForward : cpu::FftKind::C2CBackward, to_real(self.dtype()),
                     self.data_ptr(), out.data_ptr(), out.numel(), tdims, batch, norm_scale(norm, self.sizes(), dims));
  }
  if (auto n = autograd::make_node<LambdaBackward>(self)) {
    n->record("FftC2CBackward0", {out}, {}, {},
              [dims, norm, forward](const TensorList& g, const TensorList&) -> TensorList {
                return {fft_c2c(g[0], dims, norm, !forward)};
              });
    n->jvp_fn = [dims, norm, forward](const TensorList& t, const TensorList&) -> TensorList {
      return {t[0].defined() ? fft_c2c(t[0], dims, norm, forward) : Tensor()};
    };
  }
  return out;
}

Tensor fft_r2c(const Tensor& self, IntArrayRef dim, FftNorm norm, bool onesided) {
  check_cpu(self, "fft_r2c");
  ScalarType dt = self.dtype();
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64,
              "fft_r2c expects a float32 or float64 input tensor, but got ", dtype_name(dt));
  Shape dims = fft_dims(self, dim, "fft_r2c", /*allow_empty=*/false);
  for (int64_t d : dims) check_length(self.size(d));
  const int64_t last = dims.back(), n_last = self.size(last);
  Tensor out;
  if (!onesided || real_transform_via_c2c(n_last)) {
    // The full spectrum is a c2c of the complex copy (Hermitian filling would save half of it);
    // one-sided results of awkward lengths are cut from it (Note [Real transforms of awkward lengths]).
    autograd::NoGradGuard no_grad;
    out = fft_c2c(to_dtype(autograd::detach(self), complex_for(dt)), dims, norm, /*forward=*/true);
    if (onesided) out = contiguous_copy(narrow(out, last, 0, n_last / 2 + 1));
  } else {
    Shape out_sizes = self.sizes();
    out_sizes[last] = n_last / 2 + 1;
    out = empty(out_sizes, complex_for(dt));
    std::vector<cpu::FftDim> tdims, batch;
    geometry(self, out, self.sizes(), dims, tdims, batch);
    cpu::fft_execute(cpu::FftKind::R2C, dt, self.data_ptr(), out.data_ptr(), out.numel(), tdims, batch,
                     norm_scale(norm, self.sizes(), dims));
  }
  if (auto n = autograd::make_node<LambdaBackward>(self)) {
    n->record("FftR2CBackward0", {out}, {}, {},
              [dims, norm, onesided, n_last, last](const TensorList& g, const TensorList&) -> TensorList {
                Tensor full = g[0];
                if (onesided && full.size(last) < n_last) {
                  Shape pad = full.sizes();
                  pad[last] = n_last - full.size(last);
                  full = cat({full, zeros(pad, full.dtype())}, last);
                }
                return {real(fft_c2c(full, dims, norm, /*forward=*/false))};
              });
    n->jvp_fn = [dims, norm, onesided](const TensorList& t, const TensorList&) -> TensorList {
      return {t[0].defined() ? fft_r2c(t[0], dims, norm, onesided) : Tensor()};
    };
  }
  return out;
}

Tensor fft_c2r(const Tensor& self, IntArrayRef dim, FftNorm norm, int64_t last_dim_size) {
  check_cpu(self, "fft_c2r");
  EMBER_CHECK(is_complex(self.dtype()), "fft_c2r expects a complex input tensor, but got ", dtype_name(self.dtype()));
  Shape dims = fft_dims(self, dim, "fft_c2r", /*allow_empty=*/false);
  check_length(last_dim_size);
  const int64_t last = dims.back(), half = last_dim_size / 2 + 1;
  EMBER_CHECK(self.size(last) == half, "fft_c2r: expected ", half, " values along dim ", last,
              " for an output of length ", last_dim_size, ", but the input has ", self.size(last));
  for (int64_t d : dims) check_length(self.size(d));
  Shape out_sizes = self.sizes();
  out_sizes[last] = last_dim_size;
  Tensor out;
  if (real_transform_via_c2c(last_dim_size)) {  // Note [Real transforms of awkward lengths]
    autograd::NoGradGuard no_grad;
    Tensor x = autograd::detach(self);
    Shape others(dims.begin(), dims.end() - 1);
    if (!others.empty()) x = fft_c2c(x, others, norm, /*forward=*/false);
    Tensor head = narrow(x, last, 0, 1);
    head = complex(real(head), zeros(head.sizes(), to_real(x.dtype())));
    Tensor mirrored = conj(flip(narrow(x, last, 1, last_dim_size - half), {last}));
    Tensor full = cat({head, narrow(x, last, 1, half - 1), mirrored}, last);
    out = contiguous_copy(real(fft_c2c(full, {last}, norm, /*forward=*/false)));
  } else {
    out = empty(out_sizes, to_real(self.dtype()));
    // FFTW's c2r overwrites its input: it gets a private contiguous copy.
    Tensor buf = empty(self.sizes(), self.dtype());
    copy_(buf, autograd::detach(self));
    std::vector<cpu::FftDim> tdims, batch;
    geometry(buf, out, out_sizes, dims, tdims, batch);
    cpu::fft_execute(cpu::FftKind::C2R, out.dtype(), buf.data_ptr(), out.data_ptr(), out.numel(), tdims, batch,
                     norm_scale(norm, out_sizes, dims));
  }
  if (auto n = autograd::make_node<LambdaBackward>(self)) {
    const int64_t rank = self.dim();
    n->record("FftC2RBackward0", {out}, {}, {},
              [dims, norm, last, half, last_dim_size, rank](const TensorList& g, const TensorList&) -> TensorList {
                Tensor gi = fft_r2c(g[0], dims, norm, /*onesided=*/true);
                const int64_t twice = last_dim_size - half;  // terms 1 .. twice appear twice in the signal
                if (twice <= 0) return {gi};
                ScalarType rt = to_real(gi.dtype());
                TensorVec parts{ones({1}, rt), full({twice}, Scalar(2.0), rt)};
                if (half - 1 - twice > 0) parts.push_back(ones({half - 1 - twice}, rt));
                Shape ws(rank, 1);
                ws[last] = half;
                return {mul(gi, view(cat(parts, 0), ws))};
              });
    n->jvp_fn = [dims, norm, last_dim_size](const TensorList& t, const TensorList&) -> TensorList {
      return {t[0].defined() ? fft_c2r(t[0], dims, norm, last_dim_size) : Tensor()};
    };
  }
  return out;
}

}  // namespace ember
