// Convolution on the BLAS (float64, and float32 with oneDNN switched off: float32 normally runs
// on oneDNN, Note [oneDNN convolution]): each image's receptive fields are unrolled into a column matrix
// (vol2col) so the convolution is one GEMM per image and group; 1x1 convolutions with unit
// stride and no padding read the image itself as that matrix. Batches run one image per thread
// (each thread with its own column buffer, BLAS single-threaded inside); a single image lets the
// BLAS use every thread instead.
#include "ember/cpu/conv_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "ember/cpu/onednn.h"

namespace ember::cpu {
namespace {

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta,
          T* c, int64_t ldc) {
  auto A = ta ? CblasTrans : CblasNoTrans, B = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, A, B, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_dgemm(CblasRowMajor, A, B, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

struct Dims {
  int64_t c_in_g, c_out_g, K, L, in_l, R;  // per-group channels, kernel volume, out/in volume, K * c_in_g
  bool direct;                             // 1x1, unit stride, no padding: the image is its own column matrix
};

Dims dims_of(const ConvGeometry& g) {
  Dims d;
  d.c_in_g = g.c_in / g.groups;
  d.c_out_g = g.c_out / g.groups;
  d.K = g.k[0] * g.k[1] * g.k[2];
  d.L = g.out[0] * g.out[1] * g.out[2];
  d.in_l = g.in[0] * g.in[1] * g.in[2];
  d.R = d.c_in_g * d.K;
  d.direct = d.K == 1;
  for (int i = 0; i < 3; ++i) d.direct = d.direct && g.stride[i] == 1 && g.pad[i] == 0 && g.in[i] == g.out[i];
  return d;
}

// The output positions o in [0, n_out) whose input position o * s + off lies in [0, n_in).
inline void valid_range(int64_t off, int64_t s, int64_t n_in, int64_t n_out, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = off > n_in - 1 ? 0 : std::min(n_out, (n_in - 1 - off) / s + 1);
  lo = std::min(lo, n_out);
  hi = std::max(hi, lo);
}

// Visits every (column row, output row) pair: f(col_row, x_row_or_null, lo, hi, stride_w) where
// x_row points at the input element of output position 0 (offset applied) and [lo, hi) are the
// output positions that read inside the input. Channels [c0, c1) of one image.
template <typename F>
void for_each_row(const ConvGeometry& g, const Dims& d, int64_t c0, int64_t c1, F&& f) {
  const int64_t kD = g.k[0], kH = g.k[1], kW = g.k[2];
  const int64_t oD = g.out[0], oH = g.out[1], oW = g.out[2];
  const int64_t iD = g.in[0], iH = g.in[1], iW = g.in[2];
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t kd = 0; kd < kD; ++kd)
      for (int64_t kh = 0; kh < kH; ++kh)
        for (int64_t kw = 0; kw < kW; ++kw) {
          int64_t row = ((c * kD + kd) * kH + kh) * kW + kw;
          int64_t off_w = kw * g.dil[2] - g.pad[2], lo, hi;
          valid_range(off_w, g.stride[2], iW, oW, lo, hi);
          for (int64_t od = 0; od < oD; ++od) {
            int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
            for (int64_t oh = 0; oh < oH; ++oh) {
              int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
              int64_t col_off = row * d.L + (od * oH + oh) * oW;
              if (id < 0 || id >= iD || ih < 0 || ih >= iH)
                f(col_off, int64_t(-1), lo, lo);
              else
                f(col_off, (c * iD + id) * iH * iW + ih * iW + off_w, lo, hi);
            }
          }
        }
}

// col (c * K, L) <- the receptive fields of x's channels [0, c).
template <typename T>
void vol2col(const T* x, T* col, int64_t c, const ConvGeometry& g, const Dims& d) {
  const int64_t oW = g.out[2], sW = g.stride[2];
  parallel_for(0, c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, d.K * d.L)), [&](int64_t c0, int64_t c1) {
    for_each_row(g, d, c0, c1, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
      T* r = col + co;
      std::fill(r, r + lo, T(0));
      if (hi > lo) {
        const T* xr = x + xo;
        if (sW == 1)
          std::memcpy(r + lo, xr + lo, sizeof(T) * (hi - lo));
        else
          for (int64_t o = lo; o < hi; ++o) r[o] = xr[o * sW];
      }
      std::fill(r + hi, r + oW, T(0));
    });
  });
}

// x's channels [0, c) += the column matrix folded back onto them (the adjoint of vol2col).
template <typename T>
void col2vol(const T* col, T* x, int64_t c, const ConvGeometry& g, const Dims& d) {
  const int64_t sW = g.stride[2];
  parallel_for(0, c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, d.K * d.L)), [&](int64_t c0, int64_t c1) {
    for_each_row(g, d, c0, c1, [&](int64_t co, int64_t xo, int64_t lo, int64_t hi) {
      if (hi <= lo) return;
      const T* r = col + co;
      T* xr = x + xo;
      if (sW == 1)
        for (int64_t o = lo; o < hi; ++o) xr[o] += r[o];
      else
        for (int64_t o = lo; o < hi; ++o) xr[o * sW] += r[o];
    });
  });
}

template <typename T>
std::unique_ptr<T[]> buffer(int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
}

// Runs f(n, col) for every image n: one image per thread when the batch has several, each
// thread with its own column buffer of `col_size` elements.
template <typename T, typename F>
void for_each_image(int64_t batch, int64_t col_size, const F& f) {
  int nt = static_cast<int>(std::min<int64_t>(get_num_threads(), batch));
  if (nt > 1 && !in_parallel_region()) {
#pragma omp parallel num_threads(nt)
    {
      auto col = buffer<T>(col_size);
#pragma omp for schedule(static)
      for (int64_t n = 0; n < batch; ++n) f(n, col.get());
    }
    return;
  }
  auto col = buffer<T>(col_size);
  for (int64_t n = 0; n < batch; ++n) f(n, col.get());
}

template <typename T>
void forward_impl(const T* x, const T* w, const T* b, T* y, const ConvGeometry& g) {
  Dims d = dims_of(g);
  for_each_image<T>(g.batch, d.direct ? 0 : d.R * d.L, [&](int64_t n, T* col) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xg = x + (n * g.c_in + grp * d.c_in_g) * d.in_l;
      T* yg = y + (n * g.c_out + grp * d.c_out_g) * d.L;
      const T* B = xg;
      if (!d.direct) {
        vol2col(xg, col, d.c_in_g, g, d);
        B = col;
      }
      T beta = 0;
      if (b) {
        for (int64_t co = 0; co < d.c_out_g; ++co)
          std::fill(yg + co * d.L, yg + (co + 1) * d.L, b[grp * d.c_out_g + co]);
        beta = 1;
      }
      gemm<T>(false, false, d.c_out_g, d.L, d.R, w + grp * d.c_out_g * d.R, d.R, B, d.L, beta, yg, d.L);
    }
  });
}

template <typename T>
void backward_input_impl(const T* gy, const T* w, const T* b, T* gx, const ConvGeometry& g) {
  Dims d = dims_of(g);
  for_each_image<T>(g.batch, d.direct ? 0 : d.R * d.L, [&](int64_t n, T* col) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      T* gxg = gx + (n * g.c_in + grp * d.c_in_g) * d.in_l;
      const T* gyg = gy + (n * g.c_out + grp * d.c_out_g) * d.L;
      const T* wg = w + grp * d.c_out_g * d.R;
      if (d.direct) {
        gemm<T>(true, false, d.c_in_g, d.L, d.c_out_g, wg, d.R, gyg, d.L, T(0), gxg, d.L);
      } else {
        gemm<T>(true, false, d.R, d.L, d.c_out_g, wg, d.R, gyg, d.L, T(0), col, d.L);
        std::fill(gxg, gxg + d.c_in_g * d.in_l, T(0));
        col2vol(col, gxg, d.c_in_g, g, d);
      }
      if (b)
        for (int64_t c = 0; c < d.c_in_g; ++c) {
          T bc = b[grp * d.c_in_g + c];
          T* p = gxg + c * d.in_l;
          for (int64_t i = 0; i < d.in_l; ++i) p[i] += bc;
        }
    }
  });
}

// Note [Deterministic conv weight gradient]: the batch is cut into a fixed number of chunks
// (independent of the thread count), each summed into its own buffer, and the buffers are added
// in chunk order, so the result is bit-identical for any number of threads.
template <typename T>
void backward_weight_impl(const T* x, const T* gy, T* gw, const ConvGeometry& g) {
  Dims d = dims_of(g);
  const int64_t wsize = g.c_out * d.R;
  constexpr int64_t kMaxChunks = 8, kMaxPartialBytes = int64_t(64) << 20;
  int64_t chunks = std::min<int64_t>(
      {g.batch, kMaxChunks, std::max<int64_t>(1, kMaxPartialBytes / std::max<int64_t>(1, wsize * sizeof(T)))});
  chunks = std::max<int64_t>(chunks, 1);
  std::fill(gw, gw + wsize, T(0));
  if (g.batch == 0) return;
  auto partial = buffer<T>((chunks - 1) * wsize);
  std::fill(partial.get(), partial.get() + (chunks - 1) * wsize, T(0));
  const int64_t col_size = d.direct ? 0 : d.R * d.L;
  auto run_chunk = [&](int64_t ch, T* col) {
    T* acc = ch == 0 ? gw : partial.get() + (ch - 1) * wsize;
    int64_t n0 = ch * g.batch / chunks, n1 = (ch + 1) * g.batch / chunks;
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* xg = x + (n * g.c_in + grp * d.c_in_g) * d.in_l;
        const T* gyg = gy + (n * g.c_out + grp * d.c_out_g) * d.L;
        const T* B = xg;
        if (!d.direct) {
          vol2col(xg, col, d.c_in_g, g, d);
          B = col;
        }
        gemm<T>(false, true, d.c_out_g, d.R, d.L, gyg, d.L, B, d.L, T(1), acc + grp * d.c_out_g * d.R, d.R);
      }
  };
  int nt = static_cast<int>(std::min<int64_t>(get_num_threads(), chunks));
  if (nt > 1 && !in_parallel_region()) {
#pragma omp parallel num_threads(nt)
    {
      auto col = buffer<T>(col_size);
#pragma omp for schedule(static)
      for (int64_t ch = 0; ch < chunks; ++ch) run_chunk(ch, col.get());
    }
  } else {
    auto col = buffer<T>(col_size);
    for (int64_t ch = 0; ch < chunks; ++ch) run_chunk(ch, col.get());
  }
  for (int64_t ch = 1; ch < chunks; ++ch) {
    const T* p = partial.get() + (ch - 1) * wsize;
    for (int64_t i = 0; i < wsize; ++i) gw[i] += p[i];
  }
}

template <typename T>
void im2col_impl(const T* x, T* col, const ConvGeometry& g) {
  ConvGeometry one = g;
  one.groups = 1;
  Dims d = dims_of(one);
  parallel_for(0, g.batch, 1, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) vol2col(x + n * g.c_in * d.in_l, col + n * d.R * d.L, g.c_in, one, d);
  });
}

template <typename T>
void col2im_impl(const T* col, T* x, const ConvGeometry& g) {
  ConvGeometry one = g;
  one.groups = 1;
  Dims d = dims_of(one);
  parallel_for(0, g.batch, 1, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      T* xn = x + n * g.c_in * d.in_l;
      std::fill(xn, xn + g.c_in * d.in_l, T(0));
      col2vol(col + n * d.R * d.L, xn, g.c_in, one, d);
    }
  });
}

}  // namespace

void im2col(ScalarType dtype, const void* x, void* col, const ConvGeometry& g) {
  if (dtype == ScalarType::Float32)
    im2col_impl(static_cast<const float*>(x), static_cast<float*>(col), g);
  else if (dtype == ScalarType::Float64)
    im2col_impl(static_cast<const double*>(x), static_cast<double*>(col), g);
  else
    EMBER_NOT_IMPLEMENTED("im2col: unsupported dtype ", dtype_name(dtype));
}

void col2im(ScalarType dtype, const void* col, void* x, const ConvGeometry& g) {
  if (dtype == ScalarType::Float32)
    col2im_impl(static_cast<const float*>(col), static_cast<float*>(x), g);
  else if (dtype == ScalarType::Float64)
    col2im_impl(static_cast<const double*>(col), static_cast<double*>(x), g);
  else
    EMBER_NOT_IMPLEMENTED("col2im: unsupported dtype ", dtype_name(dtype));
}

void conv_forward(ScalarType dtype, const void* x, const void* w, const void* b, void* y, const ConvGeometry& g) {
  if (dtype == ScalarType::Float32) {
    auto xf = static_cast<const float*>(x), wf = static_cast<const float*>(w), bf = static_cast<const float*>(b);
    if (!onednn_conv_forward(xf, wf, bf, static_cast<float*>(y), g))
      forward_impl(xf, wf, bf, static_cast<float*>(y), g);
  } else if (dtype == ScalarType::Float64)
    forward_impl(static_cast<const double*>(x), static_cast<const double*>(w), static_cast<const double*>(b),
                 static_cast<double*>(y), g);
  else if (dtype == ScalarType::BFloat16)  // only when onednn_bf16_available()
    onednn_conv_forward_bf16(static_cast<const BFloat16*>(x), static_cast<const BFloat16*>(w),
                             static_cast<const BFloat16*>(b), static_cast<BFloat16*>(y), g);
  else
    EMBER_NOT_IMPLEMENTED("conv_forward: unsupported dtype ", dtype_name(dtype));
}

void conv_backward_input(ScalarType dtype, const void* gy, const void* w, const void* b, void* gx,
                         const ConvGeometry& g) {
  if (dtype == ScalarType::Float32) {
    auto gyf = static_cast<const float*>(gy), wf = static_cast<const float*>(w), bf = static_cast<const float*>(b);
    if (!onednn_conv_backward_input(gyf, wf, bf, static_cast<float*>(gx), g))
      backward_input_impl(gyf, wf, bf, static_cast<float*>(gx), g);
  } else if (dtype == ScalarType::Float64)
    backward_input_impl(static_cast<const double*>(gy), static_cast<const double*>(w), static_cast<const double*>(b),
                        static_cast<double*>(gx), g);
  else if (dtype == ScalarType::BFloat16)
    onednn_conv_backward_input_bf16(static_cast<const BFloat16*>(gy), static_cast<const BFloat16*>(w),
                                    static_cast<const BFloat16*>(b), static_cast<BFloat16*>(gx), g);
  else
    EMBER_NOT_IMPLEMENTED("conv_backward_input: unsupported dtype ", dtype_name(dtype));
}

void conv_backward_weight(ScalarType dtype, const void* x, const void* gy, void* gw, const ConvGeometry& g) {
  if (dtype == ScalarType::Float32) {
    auto xf = static_cast<const float*>(x), gyf = static_cast<const float*>(gy);
    if (!onednn_conv_backward_weight(xf, gyf, static_cast<float*>(gw), g))
      backward_weight_impl(xf, gyf, static_cast<float*>(gw), g);
  } else if (dtype == ScalarType::Float64)
    backward_weight_impl(static_cast<const double*>(x), static_cast<const double*>(gy), static_cast<double*>(gw), g);
  else if (dtype == ScalarType::BFloat16)
    onednn_conv_backward_weight_bf16(static_cast<const BFloat16*>(x), static_cast<const BFloat16*>(gy),
                                     static_cast<BFloat16*>(gw), g);
  else
    EMBER_NOT_IMPLEMENTED("conv_backward_weight: unsupported dtype ", dtype_name(dtype));
}

}  // namespace ember::cpu
