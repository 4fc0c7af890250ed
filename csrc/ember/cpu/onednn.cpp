// oneDNN glue: convolutions (float32 and bfloat16) and bfloat16 matrix products.
//
// Note [oneDNN convolution]: float32 convolutions (forward, input and weight gradients) run on
// oneDNN's JIT kernels, which pick the CPU's instruction set at run time. Its fast kernels want
// blocked layouts (nChw16c and the like), so each call reorders the plain (N, C, spatial...)
// operands into the layouts the primitive chose, runs it, and reorders the result back: the
// reorders are a few percent of the convolution and the blocked kernels are 2-3x faster than
// oneDNN's own plain-layout GEMM path (and than our im2col) on small feature maps.
// Primitives are built once per geometry and thread count and kept in a cache; every buffer
// (blocked copies, scratchpad) comes from ember's caching allocator, so concurrent calls from
// several threads share nothing mutable.
#include "ember/cpu/onednn.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <dnnl.hpp>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ember/core/allocator.h"
#include "ember/core/error.h"
#include "ember/core/half.h"
#include "ember/core/parallel.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {
namespace {
using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

std::atomic<bool> g_enabled{true};

enum class Kind : int64_t { Forward, BackwardInput, BackwardWeight };

// oneDNN's view of a ConvGeometry: 1-, 2- or 3-d (leading trivial dims dropped, Note [Conv
// geometry]), grouped weights as (G, O/G, I/G, k...), dilation counted from 0.
struct Shapes {
  memory::dims src, wei, dst, bias, strides, dil, pad_l, pad_r;
  tag act_tag = tag::undef, wei_tag = tag::undef;
};

Shapes shapes_of(const ConvGeometry& g) {
  int first = 0;
  while (first < 2 && g.in[first] == 1 && g.out[first] == 1 && g.k[first] == 1 && g.pad[first] == 0) ++first;
  const int nd = 3 - first;
  Shapes s;
  s.src = {g.batch, g.c_in};
  s.dst = {g.batch, g.c_out};
  s.wei = g.groups > 1 ? memory::dims{g.groups, g.c_out / g.groups, g.c_in / g.groups} : memory::dims{g.c_out, g.c_in};
  s.bias = {g.c_out};
  for (int i = first; i < 3; ++i) {
    s.src.push_back(g.in[i]);
    s.dst.push_back(g.out[i]);
    s.wei.push_back(g.k[i]);
    s.strides.push_back(g.stride[i]);
    s.dil.push_back(g.dil[i] - 1);
    s.pad_l.push_back(g.pad[i]);
    // oneDNN checks out == (in + pad_l + pad_r - extent) / stride + 1; the padding after that
    // the output size implies can be below 0 (unread input at the end), which that check accepts
    // as 0 too, since out was itself rounded down.
    int64_t extent = (g.k[i] - 1) * g.dil[i] + 1;
    s.pad_r.push_back(std::max<int64_t>(0, (g.out[i] - 1) * g.stride[i] + extent - g.in[i] - g.pad[i]));
  }
  static constexpr tag kAct[] = {tag::ncw, tag::nchw, tag::ncdhw};
  static constexpr tag kWei[] = {tag::oiw, tag::oihw, tag::oidhw};
  static constexpr tag kGroupWei[] = {tag::goiw, tag::goihw, tag::goidhw};
  s.act_tag = kAct[nd - 1];
  s.wei_tag = g.groups > 1 ? kGroupWei[nd - 1] : kWei[nd - 1];
  return s;
}

// Never destroyed (nor is the cache below): at exit oneDNN's own globals may already be gone.
const dnnl::engine& engine() {
  static const dnnl::engine* e = [] {
    // Kernel tests force lower instruction sets (EMBER_CPU_CAPABILITY); oneDNN follows them.
    // Must happen before oneDNN builds its first primitive.
    switch (cpu_capability()) {
      case CpuCapability::Default:
        dnnl::set_max_cpu_isa(dnnl::cpu_isa::sse41);
        break;
      case CpuCapability::AVX2:
        dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2);
        break;
      case CpuCapability::AVX512:
        break;
    }
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return *e;
}

// One operand: the plain layout the caller's buffer has, the layout the primitive wants, and
// the reorder between them when they differ.
struct Operand {
  int arg = 0;
  memory::desc user, prim;
  std::optional<dnnl::reorder> reorder;
};

Operand operand(int arg, const memory::desc& user, const memory::desc& prim, bool is_output) {
  Operand o{arg, user, prim, std::nullopt};
  if (user != prim) {
    const dnnl::engine& e = engine();
    o.reorder = is_output ? dnnl::reorder(dnnl::reorder::primitive_desc(e, prim, e, user))
                          : dnnl::reorder(dnnl::reorder::primitive_desc(e, user, e, prim));
  }
  return o;
}

// A built convolution: two inputs, an optional plain bias, one output.
struct Entry {
  dnnl::primitive prim;
  Operand in0, in1, out;
  bool bias = false;
  size_t scratch_bytes = 0;
};

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// bf16: bfloat16 activations and weights (the weight gradient stays float32: Note [bfloat16
// convolution]); else float32 throughout.
Entry build(Kind kind, const ConvGeometry& g, bool with_bias, bool bf16) {
  const dnnl::engine& e = engine();
  Shapes s = shapes_of(g);
  const dt act = bf16 ? dt::bf16 : dt::f32;
  auto any = [act](const memory::dims& d) { return memory::desc(d, act, tag::any); };
  memory::desc src_user(s.src, act, s.act_tag), dst_user(s.dst, act, s.act_tag), wei_user(s.wei, act, s.wei_tag),
      bias_user(s.bias, act, tag::a);
  dnnl::primitive_attr attr = user_scratchpad();
  auto fwd_desc = [&](bool bias) {
    if (bias)
      return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                             any(s.src), any(s.wei), bias_user, any(s.dst), s.strides, s.dil, s.pad_l,
                                             s.pad_r);
    return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                           any(s.src), any(s.wei), any(s.dst), s.strides, s.dil, s.pad_l, s.pad_r);
  };
  Entry r;
  if (kind == Kind::Forward) {
    dnnl::convolution_forward::primitive_desc pd(fwd_desc(with_bias), attr, e);
    r.prim = dnnl::convolution_forward(pd);
    r.in0 = operand(DNNL_ARG_SRC, src_user, pd.src_desc(), false);
    r.in1 = operand(DNNL_ARG_WEIGHTS, wei_user, pd.weights_desc(), false);
    r.out = operand(DNNL_ARG_DST, dst_user, pd.dst_desc(), true);
    r.bias = with_bias;
    r.scratch_bytes = pd.scratchpad_desc().get_size();
  } else if (kind == Kind::BackwardInput) {
    dnnl::convolution_forward::primitive_desc hint(fwd_desc(false), e);
    dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, any(s.src), any(s.wei), any(s.dst),
                                            s.strides, s.dil, s.pad_l, s.pad_r);
    dnnl::convolution_backward_data::primitive_desc pd(d, attr, e, hint);
    r.prim = dnnl::convolution_backward_data(pd);
    r.in0 = operand(DNNL_ARG_DIFF_DST, dst_user, pd.diff_dst_desc(), false);
    r.in1 = operand(DNNL_ARG_WEIGHTS, wei_user, pd.weights_desc(), false);
    r.out = operand(DNNL_ARG_DIFF_SRC, src_user, pd.diff_src_desc(), true);
    r.scratch_bytes = pd.scratchpad_desc().get_size();
  } else {
    dnnl::convolution_forward::primitive_desc hint(fwd_desc(false), e);
    memory::desc gw_any(s.wei, dt::f32, tag::any), gw_user(s.wei, dt::f32, s.wei_tag);
    dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, any(s.src), gw_any, any(s.dst),
                                               s.strides, s.dil, s.pad_l, s.pad_r);
    dnnl::convolution_backward_weights::primitive_desc pd(d, attr, e, hint);
    r.prim = dnnl::convolution_backward_weights(pd);
    r.in0 = operand(DNNL_ARG_SRC, src_user, pd.src_desc(), false);
    r.in1 = operand(DNNL_ARG_DIFF_DST, dst_user, pd.diff_dst_desc(), false);
    r.out = operand(DNNL_ARG_DIFF_WEIGHTS, gw_user, pd.diff_weights_desc(), true);
    r.scratch_bytes = pd.scratchpad_desc().get_size();
  }
  return r;
}

// Sets this thread's OpenMP thread count (what oneDNN sizes and runs its work with) for a scope.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : old_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OmpThreads() { omp_set_num_threads(old_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int old_;
};

using Key = std::array<int64_t, 25>;

Key key_of(Kind kind, const ConvGeometry& g, bool bias, bool bf16, int threads) {
  Key k{static_cast<int64_t>(kind), bias, threads, g.batch, g.c_in, g.c_out, g.groups};
  k[24] = bf16;
  for (int i = 0; i < 3; ++i) {
    k[7 + i] = g.in[i];
    k[10 + i] = g.out[i];
    k[13 + i] = g.k[i];
    k[16 + i] = g.stride[i];
    k[19 + i] = g.pad[i];
  }
  k[22] = g.dil[0] * 1000003 + g.dil[1];  // dilations are small; two slots are enough
  k[23] = g.dil[2];
  return k;
}

// Built primitives by geometry. Bounded: a program that keeps changing shapes (variable image
// sizes) starts over past kMaxEntries instead of growing without end.
// `threads` is the thread count the primitive is built for (oneDNN sizes its work split by it).
std::shared_ptr<const Entry> cached(Kind kind, const ConvGeometry& g, bool bias, bool bf16, int threads) {
  constexpr size_t kMaxEntries = 512;
  static std::mutex mu;
  static auto& cache = *new std::map<Key, std::shared_ptr<const Entry>>;
  Key k = key_of(kind, g, bias, bf16, threads);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(k);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const Entry> entry;
  {
    OmpThreads scope(threads);
    entry = std::make_shared<const Entry>(build(kind, g, bias, bf16));
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(k, std::move(entry)).first->second;
}

// Runs a built convolution on plain buffers, reordering through blocked copies as needed.
void run(const Entry& e, const void* in0, const void* in1, const void* bias, void* out) {
  const dnnl::engine& eng = engine();
  thread_local dnnl::stream stream(eng);
  std::vector<DataPtr> buffers;  // blocked copies and scratchpad, back to the cache at return
  auto scratch = [&](size_t bytes) {
    buffers.push_back(cpu_allocator()->allocate(std::max<size_t>(bytes, 1)));
    return buffers.back().ptr;
  };
  auto input = [&](const Operand& o, const void* p) {
    memory user(o.user, eng, const_cast<void*>(p));
    if (!o.reorder) return user;
    memory prim(o.prim, eng, scratch(o.prim.get_size()));
    o.reorder->execute(stream, user, prim);
    return prim;
  };
  memory m0 = input(e.in0, in0), m1 = input(e.in1, in1);
  memory user_out(e.out.user, eng, out);
  memory prim_out = e.out.reorder ? memory(e.out.prim, eng, scratch(e.out.prim.get_size())) : user_out;
  std::unordered_map<int, memory> args{{e.in0.arg, m0}, {e.in1.arg, m1}, {e.out.arg, prim_out}};
  if (e.bias)
    args.emplace(DNNL_ARG_BIAS, memory(memory::desc({e.out.user.dims()[1]}, e.out.user.data_type(), tag::a), eng,
                                       const_cast<void*>(bias)));
  if (e.scratch_bytes > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(memory::desc({static_cast<memory::dim>(e.scratch_bytes)}, dt::u8, tag::a),
                                             eng, scratch(e.scratch_bytes)));
  e.prim.execute(stream, args);
  if (e.out.reorder) e.out.reorder->execute(stream, prim_out, user_out);
  stream.wait();
}

// Any oneDNN failure (an unsupported geometry, out of memory) surfaces as ember's Error.
template <typename F>
bool guarded(const char* what, F&& f) {
  try {
    f();
  } catch (const dnnl::error& err) {
    EMBER_CHECK(false, what, ": oneDNN failed: ", err.what());
  }
  return true;
}

// A first layer on one-channel images: im2col's single GEMM per image beats the blocked
// layouts, which pad that channel to a block of 8 or 16 (measured 0.9 vs 1.5 ms, 128x1x28x28).
bool single_input_channel(const ConvGeometry& g) { return g.groups == 1 && g.c_in == 1; }

}  // namespace

void set_onednn_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }
bool onednn_enabled() { return g_enabled.load(std::memory_order_relaxed); }

namespace {
// The three entries for either element type (T: float or BFloat16); callers decide whether
// oneDNN runs (the float heuristics, or bfloat16, which has no other fast path).
template <typename T>
void forward_impl(const T* x, const T* w, const T* b, T* y, const ConvGeometry& g) {
  constexpr bool bf16 = std::is_same_v<T, BFloat16>;
  guarded("conv forward", [&] { run(*cached(Kind::Forward, g, b != nullptr, bf16, get_num_threads()), x, w, b, y); });
}

template <typename T>
void backward_input_impl(const T* gy, const T* w, const T* b, T* gx, const ConvGeometry& g) {
  constexpr bool bf16 = std::is_same_v<T, BFloat16>;
  guarded("conv backward (input)",
          [&] { run(*cached(Kind::BackwardInput, g, false, bf16, get_num_threads()), gy, w, nullptr, gx); });
  if (b) {  // a transposed convolution's bias, per channel of gx
    const int64_t plane = g.in[0] * g.in[1] * g.in[2];
    parallel_for(0, g.batch * g.c_in, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t nc = lo; nc < hi; ++nc) {
                     const float bc = static_cast<float>(b[nc % g.c_in]);
                     T* p = gx + nc * plane;
                     for (int64_t i = 0; i < plane; ++i) p[i] = static_cast<T>(static_cast<float>(p[i]) + bc);
                   }
                 });
  }
}

// Note [Deterministic conv weight gradient] holds here too: the batch is cut into a fixed number
// of chunks, each chunk's gradient computed by a one-thread primitive into its own float32 buffer,
// and the buffers added in chunk order, so the result does not depend on the thread count.
// Note [bfloat16 convolution]: the chunks' weight gradients are float32 (oneDNN accumulates in
// float32 anyway) and rounded to bfloat16 once, after the sum.
template <typename T>
void backward_weight_impl(const T* x, const T* gy, T* gw, const ConvGeometry& g) {
  constexpr bool bf16 = std::is_same_v<T, BFloat16>;
  constexpr int64_t kMaxChunks = 8, kMaxPartialBytes = int64_t(64) << 20;
  const int64_t wsize = g.c_out * (g.c_in / g.groups) * g.k[0] * g.k[1] * g.k[2];
  const int64_t x_img = g.c_in * g.in[0] * g.in[1] * g.in[2], gy_img = g.c_out * g.out[0] * g.out[1] * g.out[2];
  const int64_t chunks = std::max<int64_t>(
      1, std::min<int64_t>({g.batch, kMaxChunks, kMaxPartialBytes / std::max<int64_t>(1, wsize * 4)}));
  // float32 sums: chunk 0 into gw itself when gw is float32
  const int64_t own = bf16 ? chunks : chunks - 1;
  DataPtr partial = cpu_allocator()->allocate(std::max<int64_t>(1, own * wsize) * sizeof(float));
  float* sums = static_cast<float*>(partial.ptr);
  auto acc_of = [&](int64_t ch) -> float* {
    if constexpr (bf16)
      return sums + ch * wsize;
    else
      return ch == 0 ? gw : sums + (ch - 1) * wsize;
  };
  auto run_chunk = [&](int64_t ch) {
    int64_t n0 = ch * g.batch / chunks, n1 = (ch + 1) * g.batch / chunks;
    ConvGeometry gc = g;
    gc.batch = n1 - n0;
    OmpThreads one(1);
    run(*cached(Kind::BackwardWeight, gc, false, bf16, 1), x + n0 * x_img, gy + n0 * gy_img, nullptr, acc_of(ch));
  };
  guarded("conv backward (weight)", [&] {
    int nt = static_cast<int>(std::min<int64_t>(get_num_threads(), chunks));
    if (nt > 1 && !in_parallel_region()) {
      // Errors inside the parallel region are carried out of it (an exception must not cross it).
      std::exception_ptr failure;
#pragma omp parallel for num_threads(nt) schedule(static)
      for (int64_t ch = 0; ch < chunks; ++ch) {
        try {
          run_chunk(ch);
        } catch (...) {
#pragma omp critical(ember_onednn_failure)
          failure = std::current_exception();
        }
      }
      if (failure) std::rethrow_exception(failure);
    } else {
      for (int64_t ch = 0; ch < chunks; ++ch) run_chunk(ch);
    }
  });
  float* total = acc_of(0);
  for (int64_t ch = 1; ch < chunks; ++ch) {
    const float* p = acc_of(ch);
    for (int64_t i = 0; i < wsize; ++i) total[i] += p[i];
  }
  if constexpr (bf16)
    for (int64_t i = 0; i < wsize; ++i) gw[i] = static_cast<BFloat16>(total[i]);
}

}  // namespace

bool onednn_conv_forward(const float* x, const float* w, const float* b, float* y, const ConvGeometry& g) {
  if (!onednn_enabled() || single_input_channel(g)) return false;
  forward_impl(x, w, b, y, g);
  return true;
}

bool onednn_conv_backward_input(const float* gy, const float* w, const float* b, float* gx, const ConvGeometry& g) {
  if (!onednn_enabled()) return false;
  // oneDNN's input gradient is slower than im2col for few input channels (except depthwise).
  const int64_t c_in_g = g.c_in / g.groups;
  if (c_in_g < 16 && !(g.groups > 1 && c_in_g == 1)) return false;
  backward_input_impl(gy, w, b, gx, g);
  return true;
}

bool onednn_conv_backward_weight(const float* x, const float* gy, float* gw, const ConvGeometry& g) {
  if (!onednn_enabled() || single_input_channel(g)) return false;
  backward_weight_impl(x, gy, gw, g);
  return true;
}

namespace {
bool has_avx512_core() {
  static const bool yes = [] {
    engine();  // applies EMBER_CPU_CAPABILITY's limit first
    auto have = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto need = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (have & need) == need;
  }();
  return yes;
}
}  // namespace

// oneDNN 2.x runs bfloat16 convolutions with JIT kernels from AVX-512 on (natively with
// AVX512_BF16); below that only its slow reference kernels: float32 is then faster.
bool onednn_bf16_available() { return onednn_enabled() && has_avx512_core(); }

// Below AVX-512 oneDNN's float32 matmul is its gemm-based one, which splits k among threads by
// their count (results differed between 2 and 3 threads); its brgemm matmul (AVX-512 on) measured
// bit-identical for 1-64 threads with row-major left operands.
bool onednn_matmul_f32_available() { return onednn_enabled() && has_avx512_core(); }

void onednn_conv_forward_bf16(const BFloat16* x, const BFloat16* w, const BFloat16* b, BFloat16* y,
                              const ConvGeometry& g) {
  forward_impl(x, w, b, y, g);
}
void onednn_conv_backward_input_bf16(const BFloat16* gy, const BFloat16* w, const BFloat16* b, BFloat16* gx,
                                     const ConvGeometry& g) {
  backward_input_impl(gy, w, b, gx, g);
}
void onednn_conv_backward_weight_bf16(const BFloat16* x, const BFloat16* gy, BFloat16* gw, const ConvGeometry& g) {
  backward_weight_impl(x, gy, gw, g);
}

// ---- bfloat16 matrix products (Note [bfloat16 matmul] in onednn.h) ----

namespace {
struct MatmulEntry {
  dnnl::matmul prim;
  size_t scratch_bytes = 0;
};

// key: B, m, n, k, a's and b's strides, threads, element type (0: bf16, 1: f32), with a bias (1) or not, c's row
// stride.
using MatmulKey = std::array<int64_t, 14>;
std::shared_ptr<const MatmulEntry> matmul_entry(const MatmulKey& key) {
  constexpr size_t kMaxEntries = 512;
  static std::mutex mu;
  static auto& cache = *new std::map<MatmulKey, std::shared_ptr<const MatmulEntry>>;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const int64_t B = key[0], m = key[1], n = key[2], k = key[3], ldc = key[13];
  const dt type = key[11] == 1 ? dt::f32 : dt::bf16;
  memory::desc a({B, m, k}, type, memory::dims{key[4], key[5], key[6]});
  memory::desc b({B, k, n}, type, memory::dims{key[7], key[8], key[9]});
  memory::desc c({B, m, n}, type, memory::dims{m * ldc, ldc, 1});
  auto entry = std::make_shared<MatmulEntry>();
  {
    OmpThreads scope(static_cast<int>(key[10]));
    auto desc = key[12] ? dnnl::matmul::desc(a, b, memory::desc({1, 1, n}, type, memory::dims{n, n, 1}), c)
                        : dnnl::matmul::desc(a, b, c);
    dnnl::matmul::primitive_desc pd(desc, user_scratchpad(), engine());
    entry->prim = dnnl::matmul(pd);
    entry->scratch_bytes = pd.scratchpad_desc().get_size();
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(key, std::move(entry)).first->second;
}

// threads: what the primitive is made for (its work split); ldc: c's row stride.
void run_matmul(dt type, const void* a, const int64_t a_strides[3], const void* b, const int64_t b_strides[3], void* c,
                int64_t B, int64_t m, int64_t n, int64_t k, const void* bias, int threads, int64_t ldc) {
  MatmulKey key{B,
                m,
                n,
                k,
                a_strides[0],
                a_strides[1],
                a_strides[2],
                b_strides[0],
                b_strides[1],
                b_strides[2],
                threads,
                type == dt::f32 ? 1 : 0,
                bias ? 1 : 0,
                ldc};
  auto e = matmul_entry(key);
  const dnnl::engine& eng = engine();
  thread_local dnnl::stream stream(eng);
  memory am(memory::desc({B, m, k}, type, memory::dims{a_strides[0], a_strides[1], a_strides[2]}), eng,
            const_cast<void*>(a));
  memory bm(memory::desc({B, k, n}, type, memory::dims{b_strides[0], b_strides[1], b_strides[2]}), eng,
            const_cast<void*>(b));
  memory cm(memory::desc({B, m, n}, type, memory::dims{m * ldc, ldc, 1}), eng, c);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
  if (bias)
    args.emplace(DNNL_ARG_BIAS,
                 memory(memory::desc({1, 1, n}, type, memory::dims{n, n, 1}), eng, const_cast<void*>(bias)));
  DataPtr scratch;
  if (e->scratch_bytes > 0) {
    scratch = cpu_allocator()->allocate(e->scratch_bytes);
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 memory(memory::desc({static_cast<memory::dim>(e->scratch_bytes)}, dt::u8, tag::a), eng, scratch.ptr));
  }
  // A one-thread primitive runs on this thread alone, inside a parallel region or not.
  std::optional<OmpThreads> one;
  if (threads == 1 && !omp_in_parallel()) one.emplace(1);
  e->prim.execute(stream, args);
  stream.wait();
}
}  // namespace

void onednn_matmul_bf16(const BFloat16* a, const int64_t a_strides[3], const BFloat16* b, const int64_t b_strides[3],
                        BFloat16* c, int64_t B, int64_t m, int64_t n, int64_t k, const BFloat16* bias) {
  guarded("matmul (bfloat16)",
          [&] { run_matmul(dt::bf16, a, a_strides, b, b_strides, c, B, m, n, k, bias, get_num_threads(), n); });
}

void onednn_matmul_f32(const float* a, const int64_t a_strides[3], const float* b, const int64_t b_strides[3], float* c,
                       int64_t B, int64_t m, int64_t n, int64_t k, const float* bias) {
  guarded("matmul (float32)",
          [&] { run_matmul(dt::f32, a, a_strides, b, b_strides, c, B, m, n, k, bias, get_num_threads(), n); });
}

void onednn_matmul_f32_one_thread(const float* a, const int64_t a_strides[3], const float* b,
                                  const int64_t b_strides[3], float* c, int64_t B, int64_t m, int64_t n, int64_t k,
                                  int64_t ldc) {
  guarded("matmul (float32)", [&] { run_matmul(dt::f32, a, a_strides, b, b_strides, c, B, m, n, k, nullptr, 1, ldc); });
}

}  // namespace ember::cpu
