// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). The pointwise halves of the
// LSTM and GRU cells (ops/nn_rnn.cpp): one pass over the gates instead of about ten elementwise
// ops, each with its own output and autograd node. Gates are (B, k * H) rows laid out as torch's
// weights: LSTM (i, f, g, o), GRU (r, z, n). float math uses the vectorizable sigmoid/tanh of
// unary_math.h (Note [Vectorizable float math]); 16-bit floats compute in float.
#include <cmath>

#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/ops/nn_kernels.h"

// Kernel code from here on (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math_of.h"
#include "ember/cpu/unary_math.h"

namespace ember::cpu {
namespace {

using math::sigmoid_of;
using math::tanh_of;

template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Rows [r0, r1) of B, each H wide: f(row) per row, in parallel when the work is large.
template <typename F>
void for_rows(int64_t B, int64_t H, F&& f) {
  parallel_for(0, B, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 4 * H)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) f(r);
  });
}

template <typename T>
const T* ptr(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}
template <typename T>
T* mut(Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// One row each. The pointers are restrict parameters (GCC honours restrict on parameters, not on
// locals), so the loops vectorize without alias checks; gate k of a row is at g + k * H.
template <typename T, typename M = opmath_t<T>>
void lstm_row(const T* __restrict g, const T* __restrict c0, T* __restrict c1, T* __restrict h1, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M i = sigmoid_of(M(g[j])), f = sigmoid_of(M(g[H + j])), gg = tanh_of(M(g[2 * H + j])),
      o = sigmoid_of(M(g[3 * H + j]));
    M c = f * M(c0[j]) + i * gg;
    c1[j] = T(c);
    h1[j] = T(o * tanh_of(c));
  }
}

template <typename T, typename M = opmath_t<T>>
void lstm_backward_row(const T* __restrict g, const T* __restrict c0, const T* __restrict c1, const T* __restrict ghy,
                       const T* __restrict gcy, T* __restrict dg, T* __restrict dc0, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M i = sigmoid_of(M(g[j])), f = sigmoid_of(M(g[H + j])), gg = tanh_of(M(g[2 * H + j])),
      o = sigmoid_of(M(g[3 * H + j]));
    M tc = tanh_of(M(c1[j]));
    M gh = M(ghy[j]), dc = M(gcy[j]) + gh * o * (M(1) - tc * tc);
    dg[j] = T(dc * gg * i * (M(1) - i));
    dg[H + j] = T(dc * M(c0[j]) * f * (M(1) - f));
    dg[2 * H + j] = T(dc * i * (M(1) - gg * gg));
    dg[3 * H + j] = T(gh * tc * o * (M(1) - o));
    dc0[j] = T(dc * f);
  }
}

template <typename T, typename M = opmath_t<T>>
void gru_row(const T* __restrict a, const T* __restrict b, const T* __restrict h0, T* __restrict h1, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M r = sigmoid_of(M(a[j]) + M(b[j])), z = sigmoid_of(M(a[H + j]) + M(b[H + j]));
    M n = tanh_of(M(a[2 * H + j]) + r * M(b[2 * H + j]));
    h1[j] = T((M(1) - z) * n + z * M(h0[j]));
  }
}

template <typename T, typename M = opmath_t<T>>
void gru_backward_row(const T* __restrict a, const T* __restrict b, const T* __restrict h0, const T* __restrict gy_r,
                      T* __restrict da, T* __restrict db, T* __restrict dh0, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M r = sigmoid_of(M(a[j]) + M(b[j])), z = sigmoid_of(M(a[H + j]) + M(b[H + j]));
    M hn = M(b[2 * H + j]), n = tanh_of(M(a[2 * H + j]) + r * hn);
    M gy = M(gy_r[j]);
    M dn = gy * (M(1) - z) * (M(1) - n * n);
    M dr = dn * hn * r * (M(1) - r), dz = gy * (M(h0[j]) - n) * z * (M(1) - z);
    da[j] = T(dr);
    db[j] = T(dr);
    da[H + j] = T(dz);
    db[H + j] = T(dz);
    da[2 * H + j] = T(dn);
    db[2 * H + j] = T(dn * r);
    dh0[j] = T(gy * z);
  }
}

template <typename T>
void lstm_forward(const Tensor& gates, const Tensor& cx, int64_t B, int64_t H, Tensor& hy, Tensor& cy) {
  const T *G = ptr<T>(gates), *C = ptr<T>(cx);
  T *HY = mut<T>(hy), *CY = mut<T>(cy);
  for_rows(B, H, [=](int64_t r) { lstm_row<T>(G + r * 4 * H, C + r * H, CY + r * H, HY + r * H, H); });
}

template <typename T>
void lstm_backward(const Tensor& gates, const Tensor& cx, const Tensor& cy, const Tensor& ghy, const Tensor& gcy,
                   int64_t B, int64_t H, Tensor& dgates, Tensor& dcx) {
  const T *G = ptr<T>(gates), *C = ptr<T>(cx), *CY = ptr<T>(cy), *GH = ptr<T>(ghy), *GC = ptr<T>(gcy);
  T *DG = mut<T>(dgates), *DC = mut<T>(dcx);
  for_rows(B, H, [=](int64_t r) {
    lstm_backward_row<T>(G + r * 4 * H, C + r * H, CY + r * H, GH + r * H, GC + r * H, DG + r * 4 * H, DC + r * H, H);
  });
}

template <typename T>
void gru_forward(const Tensor& gi, const Tensor& gh, const Tensor& hx, int64_t B, int64_t H, Tensor& hy) {
  const T *GI = ptr<T>(gi), *GH = ptr<T>(gh), *HX = ptr<T>(hx);
  T* HY = mut<T>(hy);
  for_rows(B, H, [=](int64_t r) { gru_row<T>(GI + r * 3 * H, GH + r * 3 * H, HX + r * H, HY + r * H, H); });
}

template <typename T>
void gru_backward(const Tensor& gi, const Tensor& gh, const Tensor& hx, const Tensor& ghy, int64_t B, int64_t H,
                  Tensor& dgi, Tensor& dgh, Tensor& dhx) {
  const T *GI = ptr<T>(gi), *GH = ptr<T>(gh), *HX = ptr<T>(hx), *GY = ptr<T>(ghy);
  T *DI = mut<T>(dgi), *DH = mut<T>(dgh), *DX = mut<T>(dhx);
  for_rows(B, H, [=](int64_t r) {
    gru_backward_row<T>(GI + r * 3 * H, GH + r * 3 * H, HX + r * H, GY + r * H, DI + r * 3 * H, DH + r * 3 * H,
                        DX + r * H, H);
  });
}

// Note [Fused LSTM layer]: a step writes the activations over the pre-activations, so the
// backward needs only tanh(c) and no other transcendental.
template <typename T, typename M = opmath_t<T>>
void lstm_layer_row(T* __restrict g, const T* __restrict c0, T* __restrict c1, T* __restrict h1, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M i = sigmoid_of(M(g[j])), f = sigmoid_of(M(g[H + j])), gg = tanh_of(M(g[2 * H + j])),
      o = sigmoid_of(M(g[3 * H + j]));
    M c = f * M(c0[j]) + i * gg;
    g[j] = T(i);
    g[H + j] = T(f);
    g[2 * H + j] = T(gg);
    g[3 * H + j] = T(o);
    c1[j] = T(c);
    h1[j] = T(o * tanh_of(c));
  }
}

#ifdef EMBER_AVX512_LANES
// lstm_layer_row for float at 16 lanes (sigmoid16 and tanh16 give math::sigmoid's and math::tanh's
// floats, Note [16-lane float math]; a masked tail): the auto-vectorized row took 1.6x the time of
// the standalone sigmoid and tanh kernels.
inline void lstm_layer_row16(float* __restrict g, const float* __restrict c0, float* __restrict c1,
                             float* __restrict h1, int64_t H) {
  for (int64_t j = 0; j < H; j += 16) {
    const __mmask16 m = H - j >= 16 ? __mmask16(0xffff) : tail_mask16(H - j);
    const __m512 i = math::sigmoid16(load16(g + j, m)), f = math::sigmoid16(load16(g + H + j, m)),
                 gg = math::tanh16(load16(g + 2 * H + j, m)), o = math::sigmoid16(load16(g + 3 * H + j, m));
    const __m512 c = _mm512_fmadd_ps(f, load16(c0 + j, m), _mm512_mul_ps(i, gg));
    store16(g + j, i, m);
    store16(g + H + j, f, m);
    store16(g + 2 * H + j, gg, m);
    store16(g + 3 * H + j, o, m);
    store16(c1 + j, c, m);
    store16(h1 + j, _mm512_mul_ps(o, math::tanh16(c)), m);
  }
}
#endif

template <typename T>
void lstm_layer_rows(T* G, const T* C0, T* C, T* HY, int64_t rows, int64_t H, int64_t ldg, int64_t ldh) {
#ifdef EMBER_AVX512_LANES
  if constexpr (std::is_same_v<T, float>) {
    for_rows(rows, H, [=](int64_t r) { lstm_layer_row16(G + r * ldg, C0 + r * ldh, C + r * ldh, HY + r * ldh, H); });
    return;
  }
#endif
  for_rows(rows, H, [=](int64_t r) { lstm_layer_row<T>(G + r * ldg, C0 + r * ldh, C + r * ldh, HY + r * ldh, H); });
}

template <typename T, bool HasOut, typename M = opmath_t<T>>
void lstm_layer_backward_row(const T* __restrict a, const T* __restrict c0, const T* __restrict c1,
                             const T* __restrict dh, const T* __restrict dout, T* __restrict dc, T* __restrict dg,
                             int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M i = M(a[j]), f = M(a[H + j]), gg = M(a[2 * H + j]), o = M(a[3 * H + j]);
    M tc = tanh_of(M(c1[j]));
    M gh = HasOut ? M(dh[j]) + M(dout[j]) : M(dh[j]);
    M d = M(dc[j]) + gh * o * (M(1) - tc * tc);
    dg[j] = T(d * gg * i * (M(1) - i));
    dg[H + j] = T(d * M(c0[j]) * f * (M(1) - f));
    dg[2 * H + j] = T(d * i * (M(1) - gg * gg));
    dg[3 * H + j] = T(gh * tc * o * (M(1) - o));
    dc[j] = T(d * f);
  }
}

template <typename T, typename M = opmath_t<T>>
void gru_layer_row(T* __restrict a, const T* __restrict b, const T* __restrict h0, T* __restrict h1, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M r = sigmoid_of(M(a[j]) + M(b[j])), z = sigmoid_of(M(a[H + j]) + M(b[H + j]));
    M n = tanh_of(M(a[2 * H + j]) + r * M(b[2 * H + j]));
    a[j] = T(r);
    a[H + j] = T(z);
    a[2 * H + j] = T(n);
    h1[j] = T((M(1) - z) * n + z * M(h0[j]));
  }
}

template <typename T, bool HasOut, typename M = opmath_t<T>>
void gru_layer_backward_row(const T* __restrict a, const T* __restrict b, const T* __restrict h0, T* __restrict dh,
                            const T* __restrict dout, T* __restrict dgi, T* __restrict dgh, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    M r = M(a[j]), z = M(a[H + j]), n = M(a[2 * H + j]);
    M g = HasOut ? M(dh[j]) + M(dout[j]) : M(dh[j]);
    M dn = g * (M(1) - z) * (M(1) - n * n);
    M dr = dn * M(b[2 * H + j]) * r * (M(1) - r), dz = g * (M(h0[j]) - n) * z * (M(1) - z);
    dgi[j] = T(dr);
    dgh[j] = T(dr);
    dgi[H + j] = T(dz);
    dgh[H + j] = T(dz);
    dgi[2 * H + j] = T(dn);
    dgh[2 * H + j] = T(dn * r);
    dh[j] = T(g * z);
  }
}

}  // namespace

void EMBER_ISA_KERNEL(lstm_cell_forward)(const Tensor& gates, const Tensor& cx, int64_t B, int64_t H, Tensor& hy,
                                         Tensor& cy) {
  EMBER_DISPATCH_FLOAT(gates.dtype(), "lstm_cell", [&] { lstm_forward<scalar_t>(gates, cx, B, H, hy, cy); });
}
void EMBER_ISA_KERNEL(lstm_cell_backward)(const Tensor& gates, const Tensor& cx, const Tensor& cy, const Tensor& ghy,
                                          const Tensor& gcy, int64_t B, int64_t H, Tensor& dgates, Tensor& dcx) {
  EMBER_DISPATCH_FLOAT(gates.dtype(), "lstm_cell_backward",
                       [&] { lstm_backward<scalar_t>(gates, cx, cy, ghy, gcy, B, H, dgates, dcx); });
}
void EMBER_ISA_KERNEL(gru_cell_forward)(const Tensor& gi, const Tensor& gh, const Tensor& hx, int64_t B, int64_t H,
                                        Tensor& hy) {
  EMBER_DISPATCH_FLOAT(gi.dtype(), "gru_cell", [&] { gru_forward<scalar_t>(gi, gh, hx, B, H, hy); });
}
void EMBER_ISA_KERNEL(gru_cell_backward)(const Tensor& gi, const Tensor& gh, const Tensor& hx, const Tensor& ghy,
                                         int64_t B, int64_t H, Tensor& dgi, Tensor& dgh, Tensor& dhx) {
  EMBER_DISPATCH_FLOAT(gi.dtype(), "gru_cell_backward",
                       [&] { gru_backward<scalar_t>(gi, gh, hx, ghy, B, H, dgi, dgh, dhx); });
}

void EMBER_ISA_KERNEL(lstm_layer_step_forward)(ScalarType dt, void* gates, const void* c_prev, void* c, void* h,
                                               int64_t rows, int64_t H, int64_t ldg, int64_t ldh) {
  EMBER_DISPATCH_FLOAT(dt, "lstm", [&] {
    using T = scalar_t;
    T *G = static_cast<T*>(gates), *C = static_cast<T*>(c), *HY = static_cast<T*>(h);
    const T* C0 = static_cast<const T*>(c_prev);
    lstm_layer_rows<T>(G, C0, C, HY, rows, H, ldg, ldh);
  });
}
void EMBER_ISA_KERNEL(lstm_layer_step_backward)(ScalarType dt, const void* act, const void* c_prev, const void* c,
                                                const void* dh, const void* dout, void* dc, void* dgates, int64_t rows,
                                                int64_t H, int64_t ldg, int64_t ldh) {
  EMBER_DISPATCH_FLOAT(dt, "lstm_backward", [&] {
    using T = scalar_t;
    const T *A = static_cast<const T*>(act), *C0 = static_cast<const T*>(c_prev), *C = static_cast<const T*>(c),
            *DH = static_cast<const T*>(dh), *DO = static_cast<const T*>(dout);
    T *DC = static_cast<T*>(dc), *DG = static_cast<T*>(dgates);
    for_rows(rows, H, [=](int64_t r) {
      if (DO)
        lstm_layer_backward_row<T, true>(A + r * ldg, C0 + r * ldh, C + r * ldh, DH + r * ldh, DO + r * ldh,
                                         DC + r * ldh, DG + r * ldg, H);
      else
        lstm_layer_backward_row<T, false>(A + r * ldg, C0 + r * ldh, C + r * ldh, DH + r * ldh, DH, DC + r * ldh,
                                          DG + r * ldg, H);
    });
  });
}

void EMBER_ISA_KERNEL(gru_layer_step_forward)(ScalarType dt, void* gi, const void* gh, const void* h_prev, void* h,
                                              int64_t rows, int64_t H, int64_t ldg, int64_t ldh) {
  EMBER_DISPATCH_FLOAT(dt, "gru", [&] {
    using T = scalar_t;
    T *A = static_cast<T*>(gi), *HY = static_cast<T*>(h);
    const T *B = static_cast<const T*>(gh), *H0 = static_cast<const T*>(h_prev);
    for_rows(rows, H, [=](int64_t r) { gru_layer_row<T>(A + r * ldg, B + r * ldg, H0 + r * ldh, HY + r * ldh, H); });
  });
}
void EMBER_ISA_KERNEL(gru_layer_step_backward)(ScalarType dt, const void* act, const void* gh, const void* h_prev,
                                               void* dh, const void* dout, void* dgi, void* dgh, int64_t rows,
                                               int64_t H, int64_t ldg, int64_t ldh) {
  EMBER_DISPATCH_FLOAT(dt, "gru_backward", [&] {
    using T = scalar_t;
    const T *A = static_cast<const T*>(act), *B = static_cast<const T*>(gh), *H0 = static_cast<const T*>(h_prev),
            *DO = static_cast<const T*>(dout);
    T *DH = static_cast<T*>(dh), *DI = static_cast<T*>(dgi), *DG = static_cast<T*>(dgh);
    for_rows(rows, H, [=](int64_t r) {
      if (DO)
        gru_layer_backward_row<T, true>(A + r * ldg, B + r * ldg, H0 + r * ldh, DH + r * ldh, DO + r * ldh,
                                        DI + r * ldg, DG + r * ldg, H);
      else
        gru_layer_backward_row<T, false>(A + r * ldg, B + r * ldg, H0 + r * ldh, DH + r * ldh, DH, DI + r * ldg,
                                         DG + r * ldg, H);
    });
  });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
