// Recurrent cells: the fused pointwise halves of the LSTM and GRU cells (kernels in
// cpu/rnn_kernels.cpp) and torch's cell functions (lstm_cell, gru_cell, rnn_tanh_cell,
// rnn_relu_cell) built on them. The projections are GEMMs (linear); the fused ops turn the ten or
// so elementwise ops of a cell, each with an output and an autograd node, into one pass forward
// and one backward. Their backward under create_graph is written with ember ops, so higher-order
// gradients work as through the unfused formulas.
#include "ember/ops/nn.h"

#include <cstring>
#include <exception>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/allocator.h"
#include "ember/core/parallel.h"
#include "ember/cpu/gemm_kernels.h"
#include "ember/cpu/mkl_blas.h"
#include "ember/ops/gemm.h"
#include "ember/ops/nn_kernels.h"
#include "ember/ops/nn_linear.h"
#include "ember/ops/nn_rnn.h"
#include "ember/ops/operators.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

void check_pair(const Tensor& a, const Tensor& b, const char* op, const char* an, const char* bn) {
  EMBER_CHECK(a.device() == b.device(), op, ": expected ", an, " and ", bn, " on the same device, got ",
              a.device().str(), " and ", b.device().str());
  EMBER_CHECK(a.dtype() == b.dtype(), op, ": expected ", an, " and ", bn, " to have the same dtype, got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
}

// (B, chunks * H) gates and a (B, H) state; returns H.
int64_t check_gates(const Tensor& gates, const Tensor& state, int64_t chunks, const char* op, const char* gname,
                    const char* sname) {
  EMBER_CHECK(gates.dim() == 2 && state.dim() == 2, op, ": expected 2-D ", gname, " and ", sname, ", got ", gates.dim(),
              "-D and ", state.dim(), "-D");
  const int64_t H = state.size(1);
  EMBER_CHECK(gates.size(0) == state.size(0) && gates.size(1) == chunks * H, op, ": ", gname, " of shape ",
              gates.shape_str(), " does not match ", sname, " of shape ", state.shape_str(), " (expected (",
              state.size(0), ", ", chunks * H, "))");
  check_pair(gates, state, op, gname, sname);
  if (!is_floating_point(gates.dtype()))
    EMBER_NOT_IMPLEMENTED(op, " is not implemented for '", dtype_name(gates.dtype()), "'");
  return H;
}

Tensor gate(const Tensor& g, int64_t k, int64_t H) { return narrow(g, 1, k * H, H); }
Tensor one_minus(const Tensor& t) { return 1.0 - t; }

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell_fused(const Tensor& gates_in, const Tensor& cx_in) {
  const int64_t H = check_gates(gates_in, cx_in, 4, "lstm_cell", "gates", "cx"), B = cx_in.size(0);
  Tensor gates = contiguous(gates_in), cx = contiguous(cx_in);
  Tensor hy = empty({B, H}, gates.dtype(), gates.device()), cy = empty({B, H}, gates.dtype(), gates.device());
  {
    autograd::NoGradGuard raw;
    kernels::lstm_cell_forward(gates, cx, B, H, hy, cy);
  }
  if (auto n = autograd::make_node<LambdaBackward>(gates_in, cx_in)) {
    n->record("FusedLstmCellBackward0", {hy, cy}, {gates_in, cx_in}, {cy},
              [H, B](const TensorList& g, const TensorList& s) -> TensorList {
                const Tensor &gates = s[0], &cx = s[1], &cy = s[2];
                if (!g[0].defined() && !g[1].defined()) return {Tensor(), Tensor()};
                if (autograd::GradMode::is_enabled()) {  // create_graph: differentiable formulas
                  Tensor i = sigmoid(gate(gates, 0, H)), f = sigmoid(gate(gates, 1, H)), gg = tanh(gate(gates, 2, H)),
                         o = sigmoid(gate(gates, 3, H)), tc = tanh(cy);
                  Tensor gh = g[0].defined() ? g[0] : zeros(cy.sizes(), cy.dtype(), cy.device());
                  Tensor dc = gh * o * one_minus(tc * tc);
                  if (g[1].defined()) dc = dc + g[1];
                  Tensor dgates = cat({dc * gg * i * one_minus(i), dc * cx * f * one_minus(f),
                                       dc * i * one_minus(gg * gg), gh * tc * o * one_minus(o)},
                                      1);
                  return {dgates, dc * f};
                }
                Tensor dgates = empty({B, 4 * H}, gates.dtype(), gates.device());
                Tensor dcx = empty({B, H}, gates.dtype(), gates.device());
                auto grad_or_zeros = [&](const Tensor& t) {
                  return t.defined() ? contiguous(t) : zeros({B, H}, gates.dtype(), gates.device());
                };
                Tensor ghy = grad_or_zeros(g[0]), gcy = grad_or_zeros(g[1]);
                kernels::lstm_cell_backward(contiguous(gates), contiguous(cx), contiguous(cy), ghy, gcy, B, H, dgates,
                                            dcx);
                return {dgates, dcx};
              });
  }
  return {hy, cy};
}

Tensor gru_cell_fused(const Tensor& gi_in, const Tensor& gh_in, const Tensor& hx_in) {
  const int64_t H = check_gates(gi_in, hx_in, 3, "gru_cell", "input_gates", "hx"), B = hx_in.size(0);
  check_gates(gh_in, hx_in, 3, "gru_cell", "hidden_gates", "hx");
  Tensor gi = contiguous(gi_in), gh = contiguous(gh_in), hx = contiguous(hx_in);
  Tensor hy = empty({B, H}, gi.dtype(), gi.device());
  {
    autograd::NoGradGuard raw;
    kernels::gru_cell_forward(gi, gh, hx, B, H, hy);
  }
  if (auto n = autograd::make_node<LambdaBackward>(gi_in, gh_in, hx_in)) {
    n->record(
        "FusedGruCellBackward0", {hy}, {gi_in, gh_in, hx_in}, {},
        [H, B](const TensorList& g, const TensorList& s) -> TensorList {
          const Tensor &gi = s[0], &gh = s[1], &hx = s[2];
          if (!g[0].defined()) return {Tensor(), Tensor(), Tensor()};
          if (autograd::GradMode::is_enabled()) {  // create_graph: differentiable formulas
            Tensor r = sigmoid(gate(gi, 0, H) + gate(gh, 0, H)), z = sigmoid(gate(gi, 1, H) + gate(gh, 1, H));
            Tensor hn = gate(gh, 2, H), n = tanh(gate(gi, 2, H) + r * hn);
            Tensor dn = g[0] * one_minus(z) * one_minus(n * n);
            Tensor dr = dn * hn * r * one_minus(r), dz = g[0] * (hx - n) * z * one_minus(z);
            return {cat({dr, dz, dn}, 1), cat({dr, dz, dn * r}, 1), g[0] * z};
          }
          Tensor dgi = empty({B, 3 * H}, gi.dtype(), gi.device()), dgh = empty({B, 3 * H}, gi.dtype(), gi.device());
          Tensor dhx = empty({B, H}, gi.dtype(), gi.device());
          kernels::gru_cell_backward(contiguous(gi), contiguous(gh), contiguous(hx), contiguous(g[0]), B, H, dgi, dgh,
                                     dhx);
          return {dgi, dgh, dhx};
        });
  }
  return hy;
}

// Note [Fused LSTM layer]: a layer's time loop in C++ over raw buffers, as cuDNN's layer call (and
// oneDNN's, which torch's CPU LSTM runs) rather than a Python loop of per-step ops, each an addmm
// and a cell with its own autograd nodes. Forward, per step: the gates of the step's rows start as
// their input projections (one copy of gi for all steps), the hidden projection is added by one
// product with beta = 1 (Note [Recurrent GEMM]), and a pointwise pass writes the activations over
// the gates, c and h. Each step runs in a fixed number of pieces of hidden units (layer_pieces), in
// parallel, a barrier between steps. Only activations, c and each step's previous h and c are kept
// for backward, which walks the steps back: a pointwise pass gives the gates' gradient (tanh(c) its
// only transcendental), one product the previous h's; the weight gradient dW_hh is one GEMM over
// all steps' gate gradients and previous states (N x 4H by N x H) instead of a small product and an
// add per step. Rows are the sequences sorted by decreasing length and a step touches the first
// batch_sizes[t] of them (the previous step's rows, or h0's where sequences join in the reverse
// direction), so packed sequences need nothing else. Under create_graph the backward is recomputed
// with differentiable ops, so higher-order gradients flow as through the composition. A GRU layer
// (gru_layer) runs the same way with its three gates; its hidden projection is kept per step with
// b_hh, since the reset gate multiplies the n part of it, and b_hh's gradient is the column sums of
// the hidden gates' gradients.
namespace {
struct LayerSteps {
  std::vector<int64_t> rows, offset;  // per time index t
  int64_t n = 0, B = 0, H = 0;
  bool reverse = false;
  int64_t time(int64_t s) const { return reverse ? static_cast<int64_t>(rows.size()) - 1 - s : s; }
  int64_t count() const { return static_cast<int64_t>(rows.size()); }
};

// gi (N, G H), h0 and c0 (B, H; c0 undefined for a GRU), w (G H, H) and the batch sizes.
LayerSteps check_layer(const char* op, int64_t G, const Tensor& gi, IntArrayRef batch_sizes, const Tensor& h0,
                       const Tensor& c0, const Tensor& w, bool reverse) {
  const Tensor& c = c0.defined() ? c0 : h0;
  EMBER_CHECK(gi.dim() == 2 && h0.dim() == 2 && c.dim() == 2 && w.dim() == 2, op,
              ": expected 2-D gates, states and weight, got ", gi.dim(), "-D, ", h0.dim(), "-D, ", c.dim(), "-D and ",
              w.dim(), "-D");
  for (const Tensor* t : {&h0, &c, &w}) check_pair(gi, *t, op, "gates", "states and weight");
  EMBER_CHECK(gi.dtype() == ScalarType::Float32 || gi.dtype() == ScalarType::Float64, op,
              ": the fused layer takes float32 or float64, got ", dtype_name(gi.dtype()));
  EMBER_CHECK(gi.device().is_cpu(), op, ": the fused layer runs on the CPU, got ", gi.device().str());
  LayerSteps st;
  st.H = h0.size(1);
  st.B = h0.size(0);
  st.reverse = reverse;
  EMBER_CHECK(c.sizes() == h0.sizes(), op, ": expected c0 of shape ", h0.shape_str(), ", got ", c.shape_str());
  EMBER_CHECK(w.size(0) == G * st.H && w.size(1) == st.H && gi.size(1) == G * st.H, op, ": weight_hh of shape ",
              w.shape_str(), " and gates of shape ", gi.shape_str(), " do not match hidden size ", st.H);
  EMBER_CHECK(!batch_sizes.empty(), op, ": expected at least one time step");
  EMBER_CHECK(batch_sizes[0] == st.B, op, ": expected the first batch size to equal the states' ", st.B, ", got ",
              batch_sizes[0]);
  int64_t prev = st.B;
  for (int64_t b : batch_sizes) {
    EMBER_CHECK(b >= 1 && b <= prev, op, ": batch sizes must be positive and non-increasing, got ", b, " after ", prev);
    st.rows.push_back(b);
    st.offset.push_back(st.n);
    st.n += b;
    prev = b;
  }
  EMBER_CHECK(gi.size(0) == st.n, op, ": expected ", st.n, " rows of gates for the batch sizes, got ", gi.size(0));
  return st;
}

Tensor rows_of(const Tensor& t, int64_t offset, int64_t rows) { return narrow(t, 0, offset, rows); }
void copy_rows(Tensor& dst, int64_t dst_row, const Tensor& src, int64_t src_row, int64_t rows) {
  const int64_t width = dst.size(1), bytes = static_cast<int64_t>(element_size(dst.dtype()));
  std::memcpy(static_cast<char*>(dst.data_ptr()) + dst_row * width * bytes,
              static_cast<const char*>(src.data_ptr()) + src_row * width * bytes,
              static_cast<size_t>(rows * width * bytes));
}
void* row_ptr(const Tensor& t, int64_t row) {
  return static_cast<char*>(t.data_ptr()) + row * t.size(1) * static_cast<int64_t>(element_size(t.dtype()));
}
Tensor clone_contiguous(const Tensor& t) {
  Tensor r = empty(t.sizes(), t.dtype(), t.device());
  copy_(r, t);
  return r;
}
// h_n (or c_n) from the per-step states (N, H): each sequence's row after its own last step (the
// last step in time order, or step 0 in the reverse direction, where every sequence ends).
Tensor final_states(const LayerSteps& st, const Tensor& steps) {
  Tensor r = empty({st.B, st.H}, steps.dtype(), steps.device());
  const int64_t T = st.count();
  for (int64_t t = 0; t < T; ++t) {
    const int64_t after = st.reverse ? t - 1 : t + 1;
    const int64_t lo = after >= 0 && after < T ? st.rows[after] : 0, hi = st.rows[t];
    if (st.reverse ? t == 0 : lo < hi) copy_rows(r, lo, steps, st.offset[t] + lo, hi - lo);
  }
  return r;
}
// rows [0, rows) of `state` replaced by `head` (differentiably).
Tensor with_head(const Tensor& head, const Tensor& state) {
  const int64_t rows = head.size(0), B = state.size(0);
  return rows == B ? head : cat({head, narrow(state, 0, rows, B - rows)}, 0);
}

// The create_graph backward of lstm_layer: the forward recomputed with differentiable ops from the
// saved inputs, then the gradient formulas of lstm_cell_fused's create_graph path, step by step.
TensorList lstm_layer_backward_differentiable(const LayerSteps& st, const TensorList& g, const Tensor& gi,
                                              const Tensor& h0, const Tensor& c0, const Tensor& w) {
  const int64_t H = st.H, T = st.count();
  struct Step {
    Tensor i, f, gg, o, cp, c, hp;
  };
  std::vector<Step> steps(static_cast<size_t>(T));
  Tensor h = h0, c = c0, wt = transpose(w, 0, 1);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = st.time(s), rows = st.rows[t];
    Step& k = steps[static_cast<size_t>(t)];
    k.hp = narrow(h, 0, 0, rows);
    k.cp = narrow(c, 0, 0, rows);
    Tensor pre = addmm(rows_of(gi, st.offset[t], rows), k.hp, wt);
    k.i = sigmoid(gate(pre, 0, H));
    k.f = sigmoid(gate(pre, 1, H));
    k.gg = tanh(gate(pre, 2, H));
    k.o = sigmoid(gate(pre, 3, H));
    k.c = k.f * k.cp + k.i * k.gg;
    h = with_head(k.o * tanh(k.c), h);
    c = with_head(k.c, c);
  }
  auto zeros_bh = [&] { return zeros({st.B, H}, gi.dtype(), gi.device()); };
  Tensor dh = g[1].defined() ? g[1] : zeros_bh(), dc = g[2].defined() ? g[2] : zeros_bh(), dw;
  std::vector<Tensor> dgates(static_cast<size_t>(T));
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = st.time(s), rows = st.rows[t];
    const Step& k = steps[static_cast<size_t>(t)];
    Tensor gh = narrow(dh, 0, 0, rows);
    if (g[0].defined()) gh = gh + rows_of(g[0], st.offset[t], rows);
    Tensor tc = tanh(k.c);
    Tensor d = narrow(dc, 0, 0, rows) + gh * k.o * one_minus(tc * tc);
    Tensor dg = cat({d * k.gg * k.i * one_minus(k.i), d * k.cp * k.f * one_minus(k.f), d * k.i * one_minus(k.gg * k.gg),
                     gh * tc * k.o * one_minus(k.o)},
                    1);
    dgates[static_cast<size_t>(t)] = dg;
    dh = with_head(mm(dg, w), dh);
    dc = with_head(d * k.f, dc);
    Tensor dwt = mm(transpose(dg, 0, 1), k.hp);
    dw = dw.defined() ? dw + dwt : dwt;
  }
  return {cat(dgates, 0), dh, dc, dw};
}
}  // namespace

namespace {
// The fixed pieces of a step (Note [Fused LSTM layer]): P groups of H / P hidden units, P by shape
// alone (a power of two, pieces at least 64 units and 2^16 multiply-adds wide), so the bits are
// the same for any thread count.
int64_t layer_pieces(int64_t G, int64_t B, int64_t H) {
  int64_t P = 1;
  while (P < 8 && H % (2 * P) == 0 && H / (2 * P) >= 64 && B * G * H * H / (2 * P) >= (int64_t(1) << 16)) P *= 2;
  return P;
}

// (.., G, P, Hc) <-> (.., P, G, Hc) along `dim` of size G H: piece k's G gates side by side.
Tensor to_pieces(const Tensor& t, int64_t dim, int64_t P, int64_t G = 4) {
  if (P == 1) return contiguous(t);
  const int64_t Hc = t.size(dim) / G / P;
  Shape split = t.sizes();
  split[static_cast<size_t>(dim)] = G;
  split.insert(split.begin() + dim + 1, {P, Hc});
  return reshape(contiguous(transpose(reshape(t, split), dim, dim + 1)), t.sizes());
}
Tensor from_pieces(const Tensor& t, int64_t dim, int64_t P, int64_t G = 4) {
  if (P == 1) return t;
  const int64_t Hc = t.size(dim) / G / P;
  Shape split = t.sizes();
  split[static_cast<size_t>(dim)] = P;
  split.insert(split.begin() + dim + 1, {G, Hc});
  return reshape(contiguous(transpose(reshape(t, split), dim, dim + 1)), t.sizes());
}

// The recurrent products' right operands packed for cpu::panel_gemm (Note [Recurrent GEMM]): piece
// k's k_rows x n matrix view(k) as panels of panel_width columns; all pieces in one buffer, piece k
// at k * panel_elems(...). Products of more rows than kPanelMaxRows run on BLAS instead.
// (Batches of 64 ran 5-10% faster on OpenBLAS, 32 and fewer on panels.)
constexpr int64_t kPanelMaxRows = 48;
using cpu::panel_width;
int64_t panel_elems(ScalarType dt, int64_t k_rows, int64_t n) {
  const int64_t w = panel_width(dt);
  return (n + w - 1) / w * w * k_rows;
}
template <typename View>
Tensor pack_panels(int64_t P, int64_t k_rows, int64_t n, ScalarType dt, const View& view) {
  const int64_t w = panel_width(dt), np = (n + w - 1) / w, piece = np * k_rows * w;
  Tensor packed = empty({P * piece}, dt);
  // One pass, read through each view's strides (zeros, a copy, a permuted copy and a cat took 36 us
  // of an inference call of about 1 ms, LSTM batch 16, hidden 128).
  auto pack = [&]<typename T>(T) {
    T* out = packed.data<T>();
    for (int64_t k = 0; k < P; ++k) {
      const Tensor v = view(k);
      const T* src = v.data<T>();
      const int64_t s0 = v.strides()[0], s1 = v.strides()[1];
      for (int64_t p = 0; p < np; ++p)
        for (int64_t q = 0; q < k_rows; ++q) {
          T* dst = out + k * piece + (p * k_rows + q) * w;
          for (int64_t j = 0; j < w; ++j) {
            const int64_t col = p * w + j;
            dst[j] = col < n ? src[q * s0 + col * s1] : T(0);
          }
        }
    }
  };
  if (dt == ScalarType::Float64)
    pack(double{});
  else
    pack(float{});
  return packed;
}

// The recurrent products' right operands packed once for MKL (mkl_pack_b): MKL's sgemm repacked the
// 256x256 weight piece of every step (64-row steps: 69 us a product, 58 packed). Used where MKL has
// the calls, panels are not, and every step has the same rows (the packing fixes m).
class RecurrentPack {
 public:
  // Piece k of the weight: n rows of k_dim (pieces n * k_dim elements apart), used transposed; results go to rows ldc
  // apart.
  RecurrentPack(ScalarType dt, bool panels, const LayerSteps& st, int64_t n, int64_t k_dim, int64_t P, const char* w,
                int64_t ldc)
      : f64_(dt == ScalarType::Float64), m_(st.B), n_(n), k_(k_dim) {
    if (panels || !cpu::mkl_pack_available() || !cpu::mkl_gemm_fits(m_, n_, k_, k_, k_, ldc)) return;
    for (int64_t r : st.rows)
      if (r != m_) return;
    const int64_t es = f64_ ? 8 : 4;
    bytes_ = static_cast<int64_t>(cpu::mkl_pack_b_bytes(f64_, m_, n_, k_));
    bytes_ = (bytes_ + 63) / 64 * 64;
    mem_ = cpu_allocator()->allocate(static_cast<size_t>(bytes_ * P));
    for (int64_t k = 0; k < P; ++k)
      cpu::mkl_pack_b(f64_, true, m_, n_, k_, w + k * n_ * k_ * es, k_, static_cast<char*>(mem_.ptr) + k * bytes_);
  }
  bool used() const { return mem_.ptr != nullptr; }
  // c (+)= a @ piece k^T, a: m rows of k_dim
  void run(int64_t k, const void* a, void* c, int64_t ldc, bool accumulate) const {
    cpu::mkl_gemm_packed_b(f64_, m_, n_, k_, a, k_, static_cast<const char*>(mem_.ptr) + k * bytes_, k_, c, ldc,
                           accumulate);
  }

 private:
  bool f64_;
  int64_t m_, n_, k_, bytes_ = 0;
  DataPtr mem_;
};

// Runs body(t, phase, k) for every step in order, each of its phases in turn and every piece k of
// a phase, the pieces on the threads in parallel with a barrier after each phase; before(t) runs
// alone before step t where needs_before(t).
template <typename Needs, typename Before, typename Body>
void for_steps(const LayerSteps& st, int64_t P, int phases, const Needs& needs_before, const Before& before,
               const Body& body) {
  const int64_t T = st.count();
  const int nt = static_cast<int>(std::min<int64_t>(P, get_num_threads()));
#ifdef _OPENMP
  if (nt > 1 && !in_parallel_region()) {
#pragma omp parallel num_threads(nt)
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = st.time(s);
      if (needs_before(t)) {
#pragma omp single
        before(t);
      }
      for (int phase = 0; phase < phases; ++phase) {
#pragma omp for schedule(static)
        for (int64_t k = 0; k < P; ++k) body(t, phase, k);
      }
    }
    return;
  }
#endif
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = st.time(s);
    if (needs_before(t)) before(t);
    for (int phase = 0; phase < phases; ++phase)
      for (int64_t k = 0; k < P; ++k) body(t, phase, k);
  }
}

// The backward of lstm_layer (Note [Fused LSTM layer]) from its activations (pieces' order),
// previous states, c of every step and the weight in pieces' order: per step (in reverse) the
// pointwise pass of each piece, then dh[:, piece] = dgates @ wp[:, piece], which needs every
// piece's dgates (two phases).
TensorList lstm_layer_backward(const LayerSteps& st, int64_t P, const TensorList& g, const Tensor& act,
                               const Tensor& hprev, const Tensor& cprev, const Tensor& cs, const Tensor& wp) {
  const int64_t H = st.H, Hc = H / P;
  const ScalarType dt = act.dtype();
  const int64_t es = static_cast<int64_t>(element_size(dt));
  auto state_grad = [&](const Tensor& gr) {
    return gr.defined() ? clone_contiguous(gr) : zeros({st.B, H}, dt, act.device());
  };
  Tensor dh = state_grad(g[1]), dc = state_grad(g[2]);
  const Tensor dout = g[0].defined() ? contiguous(g[0]) : Tensor();
  Tensor dgates = empty({st.n, 4 * H}, dt, act.device());
  auto step = EMBER_ISA_SELECT(cpu::lstm_layer_step_backward);
  char *DH = static_cast<char*>(dh.data_ptr()), *DC = static_cast<char*>(dc.data_ptr()),
       *DG = static_cast<char*>(dgates.data_ptr());
  const char *W = static_cast<const char*>(wp.data_ptr()), *A = static_cast<const char*>(act.data_ptr()),
             *CP = static_cast<const char*>(cprev.data_ptr()), *CS = static_cast<const char*>(cs.data_ptr()),
             *DO = dout.defined() ? static_cast<const char*>(dout.data_ptr()) : nullptr;
  const bool panels = st.B <= kPanelMaxRows;
  const Tensor wpan =
      panels ? pack_panels(P, 4 * H, Hc, dt, [&](int64_t k) { return narrow(wp, 1, k * Hc, Hc); }) : Tensor();
  const char* WP = panels ? static_cast<const char*>(wpan.data_ptr()) : nullptr;
  const int64_t pstride = panel_elems(dt, 4 * H, Hc) * es;
  auto gemm = EMBER_ISA_SELECT(cpu::panel_gemm);
  LayerSteps back = st;  // the steps in the opposite order
  back.reverse = !st.reverse;
  for_steps(
      back, P, 2, [](int64_t) { return false; }, [](int64_t) {},
      [&](int64_t t, int phase, int64_t k) {
        const int64_t rows = st.rows[t], off = st.offset[t];
        if (phase == 0) {
          step(dt, A + (off * 4 * H + k * 4 * Hc) * es, CP + (off * H + k * Hc) * es, CS + (off * H + k * Hc) * es,
               DH + k * Hc * es, DO ? DO + (off * H + k * Hc) * es : nullptr, DC + k * Hc * es,
               DG + (off * 4 * H + k * 4 * Hc) * es, rows, Hc, 4 * H, H);
        } else if (panels) {
          gemm(dt, rows, Hc, 4 * H, DG + off * 4 * H * es, 4 * H, WP + k * pstride, DH + k * Hc * es, H, false);
        } else {
          gemm_raw_one_thread(dt, false, false, rows, Hc, 4 * H, DG + off * 4 * H * es, 4 * H, W + k * Hc * es, H,
                              false, DH + k * Hc * es, H);
        }
      });
  Tensor dgi = from_pieces(dgates, 1, P);
  return {dgi, dh, dc, mm(transpose(dgi, 0, 1), hprev)};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& gi_in, IntArrayRef batch_sizes, const Tensor& h0_in,
                                              const Tensor& c0_in, const Tensor& w_in, bool reverse, bool gi_scratch) {
  const LayerSteps st = check_layer("lstm", 4, gi_in, batch_sizes, h0_in, c0_in, w_in, reverse);
  const int64_t H = st.H, B = st.B, N = st.n, T = st.count(), P = layer_pieces(4, B, H), Hc = H / P;
  const ScalarType dt = gi_in.dtype();
  const int64_t es = static_cast<int64_t>(element_size(dt));
  auto node = autograd::make_node<LambdaBackward>(gi_in, h0_in, c0_in, w_in);
  Tensor gates, wp, out, cs, h0, c0, hprev, cprev, hn, cn;
  {
    autograd::NoGradGuard raw;
    gates = to_pieces(gi_in, 1, P);  // a copy: the activations overwrite it
    if (P == 1 && gates.is_same(gi_in) && (node || !gi_scratch)) gates = clone_contiguous(gi_in);
    wp = to_pieces(w_in, 0, P);
    out = empty({N, H}, dt, gi_in.device());
    cs = empty({N, H}, dt, gi_in.device());
    h0 = contiguous(h0_in);
    c0 = contiguous(c0_in);
    // A step's previous states: the rows of the step before it, or h0/c0; in the reverse direction
    // a step where sequences join takes rows of both, gathered into hprev/cprev (which also keep
    // every step's previous states for backward).
    auto previous = [&](int64_t t, bool c) -> std::pair<const Tensor*, int64_t> {
      const int64_t before = reverse ? t + 1 : t - 1;
      if (before < 0 || before >= T) return {c ? &c0 : &h0, 0};
      if (st.rows[before] < st.rows[t]) return {c ? &cprev : &hprev, st.offset[t]};
      return {c ? &cs : &out, st.offset[before]};
    };
    auto joins_at = [&](int64_t t) { return reverse && t + 1 < T && st.rows[t + 1] < st.rows[t]; };
    bool joins = false;
    for (int64_t t = 0; t < T; ++t) joins = joins || joins_at(t);
    if (node || joins) {
      hprev = empty({N, H}, dt, gi_in.device());
      cprev = empty({N, H}, dt, gi_in.device());
    }
    auto gather = [&](int64_t t) {
      const int64_t before = t + 1, off = st.offset[t];
      const int64_t kept = st.rows[before], joined = st.rows[t] - kept;
      copy_rows(hprev, off, out, st.offset[before], kept);
      copy_rows(cprev, off, cs, st.offset[before], kept);
      copy_rows(hprev, off + kept, h0, kept, joined);
      copy_rows(cprev, off + kept, c0, kept, joined);
    };
    auto step = EMBER_ISA_SELECT(cpu::lstm_layer_step_forward);
    auto gemm = EMBER_ISA_SELECT(cpu::panel_gemm);
    const bool panels = B <= kPanelMaxRows;
    const Tensor wpan = panels
                            ? pack_panels(P, H, 4 * Hc, dt,
                                          [&](int64_t k) { return transpose(narrow(wp, 0, k * 4 * Hc, 4 * Hc), 0, 1); })
                            : Tensor();
    const char* WP = panels ? static_cast<const char*>(wpan.data_ptr()) : nullptr;
    const int64_t pstride = panel_elems(dt, H, 4 * Hc) * es;
    const char *G = static_cast<const char*>(gates.data_ptr()), *W = static_cast<const char*>(wp.data_ptr());
    char *O = static_cast<char*>(out.data_ptr()), *C = static_cast<char*>(cs.data_ptr());
    const RecurrentPack pack(dt, panels, st, 4 * Hc, H, P, W, 4 * H);
    for_steps(st, P, 1, joins_at, gather, [&](int64_t t, int, int64_t k) {
      const int64_t rows = st.rows[t], off = st.offset[t];
      auto [hsrc, hrow] = previous(t, false);
      auto [csrc, crow] = previous(t, true);
      char* g = const_cast<char*>(G) + (off * 4 * H + k * 4 * Hc) * es;
      // gates[:, piece k] += h_prev @ wp[piece k rows]^T
      if (panels)
        gemm(dt, rows, 4 * Hc, H, row_ptr(*hsrc, hrow), H, WP + k * pstride, g, 4 * H, true);
      else if (pack.used())
        pack.run(k, row_ptr(*hsrc, hrow), g, 4 * H, true);
      else
        gemm_raw_one_thread(dt, false, true, rows, 4 * Hc, H, row_ptr(*hsrc, hrow), H, W + k * 4 * Hc * H * es, H, true,
                            g, 4 * H);
      step(dt, g, static_cast<const char*>(row_ptr(*csrc, crow)) + k * Hc * es, C + (off * H + k * Hc) * es,
           O + (off * H + k * Hc) * es, rows, Hc, 4 * H, H);
    });
    hn = final_states(st, out);
    cn = final_states(st, cs);
    if (node)
      for (int64_t t = 0; t < T; ++t) {
        auto [hsrc, hrow] = previous(t, false);
        auto [csrc, crow] = previous(t, true);
        if (hsrc == &hprev) continue;  // gathered in place already
        copy_rows(hprev, st.offset[t], *hsrc, hrow, st.rows[t]);
        copy_rows(cprev, st.offset[t], *csrc, crow, st.rows[t]);
      }
  }
  if (node)
    node->record("LstmLayerBackward0", {out, hn, cn}, {gi_in, h0_in, c0_in, w_in, gates, hprev, cprev, cs, wp}, {},
                 [st, P](const TensorList& g, const TensorList& s) -> TensorList {
                   if (!g[0].defined() && !g[1].defined() && !g[2].defined())
                     return {Tensor(), Tensor(), Tensor(), Tensor()};
                   if (autograd::GradMode::is_enabled())
                     return lstm_layer_backward_differentiable(st, g, s[0], s[1], s[2], s[3]);
                   return lstm_layer_backward(st, P, g, s[4], s[5], s[6], s[7], s[8]);
                 });
  return {out, hn, cn};
}

std::array<std::tuple<Tensor, Tensor, Tensor>, 2> lstm_layer_pair(const Tensor& gi_fwd, const Tensor& gi_bwd,
                                                                  IntArrayRef batch_sizes, const Tensor& h0_fwd,
                                                                  const Tensor& c0_fwd, const Tensor& w_fwd,
                                                                  const Tensor& h0_bwd, const Tensor& c0_bwd,
                                                                  const Tensor& w_bwd, bool gi_scratch) {
  auto direction = [&](int64_t d) {
    return d == 0 ? lstm_layer(gi_fwd, batch_sizes, h0_fwd, c0_fwd, w_fwd, false, gi_scratch)
                  : lstm_layer(gi_bwd, batch_sizes, h0_bwd, c0_bwd, w_bwd, true, gi_scratch);
  };
  std::array<std::tuple<Tensor, Tensor, Tensor>, 2> r;
  const bool graph =
      autograd::GradMode::is_enabled() &&
      autograd::any_requires_grad({&gi_fwd, &gi_bwd, &h0_fwd, &c0_fwd, &w_fwd, &h0_bwd, &c0_bwd, &w_bwd});
  if (graph || get_num_threads() < 2 || in_parallel_region()) {
    r[0] = direction(0);
    r[1] = direction(1);
    return r;
  }
  std::array<std::exception_ptr, 2> error;
  parallel_for(0, 2, 1, [&](int64_t b, int64_t e) {
    for (int64_t d = b; d < e; ++d) {
      try {
        autograd::NoGradGuard raw;  // grad mode is per thread: the pool's starts enabled
        r[static_cast<size_t>(d)] = direction(d);
      } catch (...) {
        error[static_cast<size_t>(d)] = std::current_exception();
      }
    }
  });
  for (const auto& err : error)
    if (err) std::rethrow_exception(err);
  return r;
}

namespace {
// The create_graph backward of gru_layer, as lstm_layer_backward_differentiable's.
TensorList gru_layer_backward_differentiable(const LayerSteps& st, const TensorList& g, const Tensor& gi,
                                             const Tensor& h0, const Tensor& w, const Tensor& b) {
  const int64_t H = st.H, T = st.count();
  struct Step {
    Tensor r, z, n, ghn, hp;
  };
  std::vector<Step> steps(static_cast<size_t>(T));
  Tensor h = h0, wt = transpose(w, 0, 1);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = st.time(s), rows = st.rows[t];
    Step& k = steps[static_cast<size_t>(t)];
    k.hp = narrow(h, 0, 0, rows);
    Tensor gh = b.defined() ? addmm(b, k.hp, wt) : mm(k.hp, wt), gt = rows_of(gi, st.offset[t], rows);
    k.r = sigmoid(gate(gt, 0, H) + gate(gh, 0, H));
    k.z = sigmoid(gate(gt, 1, H) + gate(gh, 1, H));
    k.ghn = gate(gh, 2, H);
    k.n = tanh(gate(gt, 2, H) + k.r * k.ghn);
    h = with_head(one_minus(k.z) * k.n + k.z * k.hp, h);
  }
  Tensor dh = g[1].defined() ? g[1] : zeros({st.B, H}, gi.dtype(), gi.device()), dw, db;
  std::vector<Tensor> dgis(static_cast<size_t>(T));
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = st.time(s), rows = st.rows[t];
    const Step& k = steps[static_cast<size_t>(t)];
    Tensor gy = narrow(dh, 0, 0, rows);
    if (g[0].defined()) gy = gy + rows_of(g[0], st.offset[t], rows);
    Tensor dn = gy * one_minus(k.z) * one_minus(k.n * k.n);
    Tensor dr = dn * k.ghn * k.r * one_minus(k.r), dz = gy * (k.hp - k.n) * k.z * one_minus(k.z);
    dgis[static_cast<size_t>(t)] = cat({dr, dz, dn}, 1);
    Tensor dgh = cat({dr, dz, dn * k.r}, 1);
    dh = with_head(gy * k.z + mm(dgh, w), dh);
    Tensor dwt = mm(transpose(dgh, 0, 1), k.hp);
    dw = dw.defined() ? dw + dwt : dwt;
    if (b.defined()) {
      Tensor dbt = sum(dgh, std::vector<int64_t>{0});
      db = db.defined() ? db + dbt : dbt;
    }
  }
  return {cat(dgis, 0), dh, dw, db};
}

// The backward of gru_layer from its activations and hidden projections (pieces' order), previous
// states and the weight in pieces' order: per step the pointwise pass per piece, then
// dh[:, piece] += dgh @ wp[:, piece] (two phases), as lstm_layer_backward.
TensorList gru_layer_backward(const LayerSteps& st, int64_t P, bool has_bias, const TensorList& g, const Tensor& act,
                              const Tensor& ghs, const Tensor& hprev, const Tensor& wp) {
  const int64_t H = st.H, Hc = H / P;
  const ScalarType dt = act.dtype();
  const int64_t es = static_cast<int64_t>(element_size(dt));
  Tensor dh = g[1].defined() ? clone_contiguous(g[1]) : zeros({st.B, H}, dt, act.device());
  const Tensor dout = g[0].defined() ? contiguous(g[0]) : Tensor();
  Tensor dgi = empty({st.n, 3 * H}, dt, act.device()), dgh = empty({st.n, 3 * H}, dt, act.device());
  auto step = EMBER_ISA_SELECT(cpu::gru_layer_step_backward);
  auto gemm = EMBER_ISA_SELECT(cpu::panel_gemm);
  const bool panels = st.B <= kPanelMaxRows;
  const Tensor wpan =
      panels ? pack_panels(P, 3 * H, Hc, dt, [&](int64_t k) { return narrow(wp, 1, k * Hc, Hc); }) : Tensor();
  const char* WP = panels ? static_cast<const char*>(wpan.data_ptr()) : nullptr;
  const int64_t pstride = panel_elems(dt, 3 * H, Hc) * es;
  char *DH = static_cast<char*>(dh.data_ptr()), *DI = static_cast<char*>(dgi.data_ptr()),
       *DG = static_cast<char*>(dgh.data_ptr());
  const char *W = static_cast<const char*>(wp.data_ptr()), *A = static_cast<const char*>(act.data_ptr()),
             *GH = static_cast<const char*>(ghs.data_ptr()), *HP = static_cast<const char*>(hprev.data_ptr()),
             *DO = dout.defined() ? static_cast<const char*>(dout.data_ptr()) : nullptr;
  LayerSteps back = st;
  back.reverse = !st.reverse;
  for_steps(
      back, P, 2, [](int64_t) { return false; }, [](int64_t) {},
      [&](int64_t t, int phase, int64_t k) {
        const int64_t rows = st.rows[t], off = st.offset[t], gofs = (off * 3 * H + k * 3 * Hc) * es;
        if (phase == 0) {
          step(dt, A + gofs, GH + gofs, HP + (off * H + k * Hc) * es, DH + k * Hc * es,
               DO ? DO + (off * H + k * Hc) * es : nullptr, DI + gofs, DG + gofs, rows, Hc, 3 * H, H);
        } else if (panels) {
          gemm(dt, rows, Hc, 3 * H, DG + off * 3 * H * es, 3 * H, WP + k * pstride, DH + k * Hc * es, H, true);
        } else {
          gemm_raw_one_thread(dt, false, false, rows, Hc, 3 * H, DG + off * 3 * H * es, 3 * H, W + k * Hc * es, H, true,
                              DH + k * Hc * es, H);
        }
      });
  Tensor dgi_u = from_pieces(dgi, 1, P, 3), dgh_u = from_pieces(dgh, 1, P, 3);
  Tensor db = has_bias ? sum(dgh_u, std::vector<int64_t>{0}) : Tensor();
  return {dgi_u, dh, mm(transpose(dgh_u, 0, 1), hprev), db};
}
}  // namespace

std::tuple<Tensor, Tensor> gru_layer(const Tensor& gi_in, IntArrayRef batch_sizes, const Tensor& h0_in,
                                     const Tensor& w_in, const Tensor& b_in, bool reverse) {
  const LayerSteps st = check_layer("gru", 3, gi_in, batch_sizes, h0_in, Tensor(), w_in, reverse);
  if (b_in.defined()) {
    check_pair(gi_in, b_in, "gru", "gates", "bias_hh");
    EMBER_CHECK(b_in.dim() == 1 && b_in.size(0) == 3 * st.H, "gru: expected bias_hh of shape (", 3 * st.H, "), got ",
                b_in.shape_str());
  }
  const int64_t H = st.H, B = st.B, N = st.n, T = st.count(), P = layer_pieces(3, B, H), Hc = H / P;
  const ScalarType dt = gi_in.dtype();
  const int64_t es = static_cast<int64_t>(element_size(dt));
  const bool has_bias = b_in.defined();
  auto node = has_bias ? autograd::make_node<LambdaBackward>(gi_in, h0_in, w_in, b_in)
                       : autograd::make_node<LambdaBackward>(gi_in, h0_in, w_in);
  Tensor gates, wp, ghs, out, h0, hprev, hn;
  {
    autograd::NoGradGuard raw;
    gates = to_pieces(gi_in, 1, P, 3);  // a copy: the activations overwrite it
    if (P == 1 && gates.is_same(gi_in)) gates = clone_contiguous(gi_in);
    wp = to_pieces(w_in, 0, P, 3);
    const Tensor bp = has_bias ? to_pieces(b_in, 0, P, 3) : Tensor();
    ghs = empty({N, 3 * H}, dt, gi_in.device());
    out = empty({N, H}, dt, gi_in.device());
    h0 = contiguous(h0_in);
    auto previous = [&](int64_t t) -> std::pair<const Tensor*, int64_t> {
      const int64_t before = reverse ? t + 1 : t - 1;
      if (before < 0 || before >= T) return {&h0, 0};
      if (st.rows[before] < st.rows[t]) return {&hprev, st.offset[t]};
      return {&out, st.offset[before]};
    };
    auto joins_at = [&](int64_t t) { return reverse && t + 1 < T && st.rows[t + 1] < st.rows[t]; };
    bool joins = false;
    for (int64_t t = 0; t < T; ++t) joins = joins || joins_at(t);
    if (node || joins) hprev = empty({N, H}, dt, gi_in.device());
    auto gather = [&](int64_t t) {
      const int64_t before = t + 1, off = st.offset[t], kept = st.rows[before];
      copy_rows(hprev, off, out, st.offset[before], kept);
      copy_rows(hprev, off + kept, h0, kept, st.rows[t] - kept);
    };
    auto step = EMBER_ISA_SELECT(cpu::gru_layer_step_forward);
    auto gemm = EMBER_ISA_SELECT(cpu::panel_gemm);
    const bool panels = B <= kPanelMaxRows;
    const Tensor wpan = panels
                            ? pack_panels(P, H, 3 * Hc, dt,
                                          [&](int64_t k) { return transpose(narrow(wp, 0, k * 3 * Hc, 3 * Hc), 0, 1); })
                            : Tensor();
    const char* WP = panels ? static_cast<const char*>(wpan.data_ptr()) : nullptr;
    const int64_t pstride = panel_elems(dt, H, 3 * Hc) * es;
    char *G = static_cast<char*>(gates.data_ptr()), *GH = static_cast<char*>(ghs.data_ptr()),
         *O = static_cast<char*>(out.data_ptr());
    const char *W = static_cast<const char*>(wp.data_ptr()),
               *BP = has_bias ? static_cast<const char*>(bp.data_ptr()) : nullptr;
    const RecurrentPack pack(dt, panels, st, 3 * Hc, H, P, W, 3 * H);
    for_steps(st, P, 1, joins_at, gather, [&](int64_t t, int, int64_t k) {
      const int64_t rows = st.rows[t], off = st.offset[t], gofs = (off * 3 * H + k * 3 * Hc) * es;
      auto [hsrc, hrow] = previous(t);
      char* gh = GH + gofs;
      if (BP)  // gh starts as b_hh's piece, the product is added to it
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(gh + r * 3 * H * es, BP + k * 3 * Hc * es, static_cast<size_t>(3 * Hc * es));
      if (panels)
        gemm(dt, rows, 3 * Hc, H, row_ptr(*hsrc, hrow), H, WP + k * pstride, gh, 3 * H, BP != nullptr);
      else if (pack.used())
        pack.run(k, row_ptr(*hsrc, hrow), gh, 3 * H, BP != nullptr);
      else
        gemm_raw_one_thread(dt, false, true, rows, 3 * Hc, H, row_ptr(*hsrc, hrow), H, W + k * 3 * Hc * H * es, H,
                            BP != nullptr, gh, 3 * H);
      step(dt, G + gofs, gh, static_cast<const char*>(row_ptr(*hsrc, hrow)) + k * Hc * es, O + (off * H + k * Hc) * es,
           rows, Hc, 3 * H, H);
    });
    hn = final_states(st, out);
    if (node)
      for (int64_t t = 0; t < T; ++t) {
        auto [hsrc, hrow] = previous(t);
        if (hsrc != &hprev) copy_rows(hprev, st.offset[t], *hsrc, hrow, st.rows[t]);
      }
  }
  if (node)
    node->record("GruLayerBackward0", {out, hn},
                 {gi_in, h0_in, w_in, has_bias ? b_in : Tensor(), gates, ghs, hprev, wp}, {},
                 [st, P, has_bias](const TensorList& g, const TensorList& s) -> TensorList {
                   TensorList r;
                   if (!g[0].defined() && !g[1].defined())
                     r = {Tensor(), Tensor(), Tensor(), Tensor()};
                   else if (autograd::GradMode::is_enabled())
                     r = gru_layer_backward_differentiable(st, g, s[0], s[1], s[2], s[3]);
                   else
                     r = gru_layer_backward(st, P, has_bias, g, s[4], s[5], s[6], s[7]);
                   if (!has_bias) r.pop_back();  // the node's inputs: gi, h0, w_hh
                   return r;
                 });
  return {out, hn};
}

namespace {
// input (B, I), states (B, H) (torch's cell functions take no unbatched form: the modules add the
// batch dim themselves).
void check_cell_args(const Tensor& input, const Tensor& hx, const char* op) {
  EMBER_CHECK_INDEX(input.dim() >= 2 && hx.dim() >= 2,
                    "Dimension out of range (expected to be in range of [-1, 0], "
                    "but got 1)");
  EMBER_CHECK(input.dim() == 2 && hx.dim() == 2, op, ": expected 2-D input and hidden state, got ", input.dim(),
              "-D and ", hx.dim(), "-D");
}
Tensor projection(const Tensor& x, const Tensor& w, const Tensor& b) {
  return linear(x, w, b.defined() ? std::optional<Tensor>(b) : std::nullopt);
}
}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_cell_args(input, hx, "lstm_cell");
  return lstm_cell_fused(projection(input, w_ih, b_ih) + projection(hx, w_hh, b_hh), cx);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  check_cell_args(input, hx, "gru_cell");
  return gru_cell_fused(projection(input, w_ih, b_ih), projection(hx, w_hh, b_hh), hx);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  check_cell_args(input, hx, "rnn_tanh_cell");
  return tanh(projection(input, w_ih, b_ih) + projection(hx, w_hh, b_hh));
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  check_cell_args(input, hx, "rnn_relu_cell");
  return relu(projection(input, w_ih, b_ih) + projection(hx, w_hh, b_hh));
}

}  // namespace ember
