// libFuzzer target over the C++ op API (scripts/sanitize.sh builds and runs it under ASan+UBSan).
// The fuzz input is read as a little program: make a few tensors of a random dtype, shape and
// layout (contiguous, transposed, sliced, expanded, as_strided with a random offset and strides,
// a view of another tensor's storage), then call random ops on them with random dims, sizes,
// indices and scalars, in place, with out= and out of place. Any ember exception is fine (bad
// arguments must raise one); a crash, a sanitizer report or another exception type is a bug.
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return i_ >= n_; }
  uint8_t byte() { return i_ < n_ ? d_[i_++] : 0; }
  int64_t pick(int64_t n) { return n <= 0 ? 0 : byte() % n; }
  // Mostly small values (sizes, dims, indices), sometimes negative or extreme ones.
  int64_t small_int() {
    uint8_t b = byte();
    switch (b >> 5) {
      case 0:
        return -static_cast<int64_t>(b & 7) - 1;
      case 1: {
        static const int64_t extreme[] = {INT64_MIN, INT64_MAX,    INT32_MIN, INT32_MAX,
                                          1ll << 40, -(1ll << 40), 1ll << 62, 255};
        return extreme[b & 7];
      }
      default:
        return b & 7;
    }
  }
  double number() {
    uint8_t b = byte();
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e30, -1e30, 1e-30, 65504.0, 3.5};
    if (b < 20) return b % 2 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    if (b < 40) return -std::numeric_limits<double>::infinity();
    return special[b % 10] * (b & 0x80 ? -1 : 1);
  }
  Scalar scalar() {
    switch (pick(4)) {
      case 0:
        return Scalar(small_int());
      case 1:
        return Scalar(byte() & 1 ? true : false);
      default:
        return Scalar(number());
    }
  }
  ScalarType dtype() { return static_cast<ScalarType>(pick(kNumScalarTypes)); }
  Shape shape(int max_dims = 4) {
    Shape s(pick(max_dims + 1));
    for (auto& v : s) v = pick(5);
    return s;
  }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

// A tensor with values, in some layout.
Tensor make_tensor(Input& in, std::vector<Tensor>& pool) {
  ScalarType dt = in.dtype();
  Shape s = in.shape();
  Tensor t = to_dtype(mul(rand(s), full({}, Scalar(in.number() == 0 ? 3.0 : 10.0), ScalarType::Float32)), dt);
  switch (in.pick(8)) {
    case 0:  // transposed
      if (t.dim() >= 2) t = transpose(t, 0, t.dim() - 1);
      break;
    case 1:  // sliced with a step
      if (t.dim() >= 1) t = slice(t, in.pick(t.dim()), in.small_int(), in.small_int(), 1 + in.pick(3));
      break;
    case 2: {  // expanded
      Shape e = t.sizes();
      e.insert(e.begin(), in.pick(4));
      t = expand(t, e);
      break;
    }
    case 3: {  // as_strided with random geometry (out-of-bounds must raise)
      Shape sz = in.shape(3), st(sz.size());
      for (auto& v : st) v = in.pick(4);
      t = as_strided(t, sz, st, in.pick(6));
      break;
    }
    case 4:  // a view of another tensor's storage (aliasing inputs and outputs)
      if (!pool.empty()) {
        Tensor o = pool[in.pick(static_cast<int64_t>(pool.size()))];
        if (o.dim() >= 1) t = slice(o, 0, in.small_int(), in.small_int(), 1);
      }
      break;
    default:
      break;
  }
  return t;
}

void run_op(Input& in, std::vector<Tensor>& pool) {
  auto any = [&]() -> Tensor& { return pool[in.pick(static_cast<int64_t>(pool.size()))]; };
  Tensor& a = any();
  Tensor& b = any();
  int64_t d = in.small_int();
  switch (in.pick(40)) {
    case 0:
      pool.push_back(unary_op(static_cast<UnaryOp>(in.pick(static_cast<int64_t>(UnaryOp::Clamp) + 1)), a));
      break;
    case 1: {  // unary in place / out=
      // Small parameters: UnaryParams is the raw interface (the bindings validate numbers before
      // they get here, e.g. a NaN clamp bound for an int tensor).
      UnaryParams p{.p0 = static_cast<double>(in.pick(8)),
                    .p1 = static_cast<double>(in.pick(8)),
                    .p2 = static_cast<double>(in.pick(8))};
      auto op = static_cast<UnaryOp>(in.pick(static_cast<int64_t>(UnaryOp::Clamp) + 1));
      if (in.byte() & 1)
        unary_op(op, a, a, true, p);
      else
        unary_op(op, a, b, false, p);
      break;
    }
    case 2:
      pool.push_back(binary_op(static_cast<BinaryOp>(in.pick(14)), a, b, Tensor(), false, in.scalar()));
      break;
    case 3:
      binary_op(static_cast<BinaryOp>(in.pick(14)), a, b, a, true, in.scalar());
      break;
    case 4: {
      Tensor c = any();
      binary_op(static_cast<BinaryOp>(in.pick(14)), a, b, c, false, in.scalar());
      break;
    }
    case 5:
      pool.push_back(pointwise_op(static_cast<PointwiseOp>(in.pick(16)), a, b));
      break;
    case 6:
      pointwise_op(static_cast<PointwiseOp>(in.pick(16)), a, b, a, true);
      break;
    case 7:
      pool.push_back(sum(a, std::vector<int64_t>{d}, in.byte() & 1));
      break;
    case 8:
      pool.push_back(amax(a, std::vector<int64_t>{d}, in.byte() & 1));
      break;
    case 9:
      pool.push_back(cumsum(a, d));
      break;
    case 10:
      pool.push_back(std::get<0>(sort(a, d, in.byte() & 1)));
      break;
    case 11:
      pool.push_back(std::get<1>(topk(a, in.small_int(), d)));
      break;
    case 12:
      pool.push_back(softmax(a, d));
      break;
    case 13:
      pool.push_back(index_select(a, d, b));
      break;
    case 14:
      pool.push_back(gather(a, d, b));
      break;
    case 15:
      pool.push_back(scatter_add(a, d, b, any()));
      break;
    case 16:
      pool.push_back(index_add(a, d, b, any(), in.scalar()));
      break;
    case 17:
      pool.push_back(take(a, b));
      break;
    case 18:
      pool.push_back(masked_fill(a, b, any()));
      break;
    case 19:
      pool.push_back(cat({a, b}, d));
      break;
    case 20:
      pool.push_back(flip(a, {d}));
      break;
    case 21:
      pool.push_back(roll(a, {in.small_int()}, {d}));
      break;
    case 22:
      pool.push_back(repeat(a, in.shape(3)));
      break;
    case 23:
      pool.push_back(matmul(a, b));
      break;
    case 24:
      pool.push_back(where(b, a, any()));
      break;
    case 25:
      pool.push_back(clamp(a, in.scalar(), in.scalar()));
      break;
    case 26:
      pool.push_back(tril(a, in.small_int()));
      break;
    case 27:
      pool.push_back(diagonal(a, in.small_int(), in.small_int(), in.small_int()));
      break;
    case 28:
      pool.push_back(unfold(a, d, in.small_int(), in.small_int()));
      break;
    case 29:
      pool.push_back(narrow(a, d, in.small_int(), in.small_int()));
      break;
    case 30:
      pool.push_back(reshape(a, in.shape(3)));
      break;
    case 31:
      pool.push_back(permute(a, in.shape(4)));
      break;
    case 32:
      copy_(a, b);
      break;
    case 33:
      fill_(a, in.scalar());
      break;
    case 34:
      pool.push_back(searchsorted(a, b, in.byte() & 1, in.byte() & 1));
      break;
    case 35:
      pool.push_back(var(a, std::vector<int64_t>{d}, static_cast<double>(in.small_int())));
      break;
    case 36:
      pool.push_back(nonzero(a));
      break;
    case 37:
      pool.push_back(lerp(a, b, any(), a, true));
      break;
    case 38:
      pool.push_back(to_dtype(a, in.dtype()));
      break;
    case 39:
      pool.push_back(expand(a, in.shape(4)));
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  std::vector<Tensor> pool;
  try {
    for (int i = 0, n = 1 + static_cast<int>(in.pick(3)); i < n; ++i) pool.push_back(make_tensor(in, pool));
  } catch (const ember::Error&) {
    return 0;
  }
  for (int step = 0; step < 8 && !in.empty(); ++step) {
    try {
      run_op(in, pool);
    } catch (const ember::Error&) {
      // bad arguments raise: fine
    }
    if (pool.size() > 12) pool.erase(pool.begin() + 1, pool.begin() + 4);
    for (const Tensor& t : pool)
      if (t.numel() > (1 << 16)) return 0;  // keep each run small and fast
  }
  return 0;
}
