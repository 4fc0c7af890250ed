// linear and bilinear (nn.functional) built from mm/addmm/matmul/bmm, so autograd, double
// backward and every dtype the GEMMs support come from the parts.
#include "ember/ops/nn_linear.h"

#include <algorithm>

#include "ember/core/autocast.h"
#include "ember/core/error.h"
#include "ember/ops/ops.h"
#include "ember/ops/unsafe_view.h"

namespace ember {
namespace {
// A vector bias that cannot expand to (rows, out) raises expand's error, as torch's addmm path does.
void check_bias_expands(const Tensor& bias, int64_t rows, const Tensor& weight) {
  if (bias.dim() == 1 && weight.dim() == 2 && bias.sizes()[0] != 1 && bias.sizes()[0] != weight.sizes()[0])
    (void)expand(bias, Shape{rows, weight.sizes()[0]});
}
}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (autocast::active_for({&input, &weight, bias ? &*bias : nullptr})) {  // Note [Autocast]
    autocast::ExcludeGuard exclude;
    return linear(autocast::to_lower(input), autocast::to_lower(weight),
                  bias ? std::optional<Tensor>(autocast::to_lower(*bias)) : std::nullopt);
  }
  EMBER_CHECK(input.dim() >= 1 && weight.dim() >= 1, "both arguments to linear need to be at least 1D, but they are ",
              input.dim(), "D and ", weight.dim(), "D");
  EMBER_CHECK(weight.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", weight.dim(), "D");
  if (input.dim() == 2 && bias) {  // torch's addmm path, which needs a matrix weight
    EMBER_CHECK(weight.dim() == 2, "mat2 must be a matrix, got ", weight.dim(), "-D tensor");
    check_bias_expands(*bias, input.sizes()[0], weight);
    return addmm(*bias, input, t_(weight));
  }
  Tensor out;
  if (weight.dim() == 2 && input.dim() > 2) {
    // One GEMM (with the bias when it is a vector): fold the leading dims of input into rows (a view
    // when it can be), as torch does, so shape errors name the folded matrices like torch's.
    const Shape& in = input.sizes();
    Shape out_shape(in.begin(), in.end() - 1);
    out_shape.push_back(weight.sizes()[0]);
    Tensor rows = reshape(input, Shape{-1, in.back()});
    if (bias && bias->dim() <= 1) {
      check_bias_expands(*bias, rows.sizes()[0], weight);
      return reshape(addmm(*bias, rows, t_(weight)), out_shape);
    }
    out = unsafe_view(mm(rows, t_(weight)), out_shape);  // (not a view of the product, as torch's matmul)
  } else {
    out = weight.dim() == 2 ? matmul(input, t_(weight)) : matmul(input, weight);
  }
  if (!bias) return out;
  // The bias is added into the product (as torch's in-place add_): it may not grow the result.
  const Shape& os = out.sizes();
  const Shape& bs = bias->sizes();
  bool fits = bs.size() <= os.size(), broadcasts = true;
  Shape bc(std::max(os.size(), bs.size()), 1);
  for (size_t i = 0; i < bc.size(); ++i) {
    int64_t o = i < os.size() ? os[os.size() - 1 - i] : 1, b = i < bs.size() ? bs[bs.size() - 1 - i] : 1;
    fits = fits && (b == o || b == 1);
    broadcasts = broadcasts && (b == o || b == 1 || o == 1);
    bc[bc.size() - 1 - i] = o == 1 ? b : o;
  }
  // Shapes that do not broadcast at all raise add's own error below.
  EMBER_CHECK(fits || !broadcasts, "output with shape ", out.shape_str(), " doesn't match the broadcast shape ",
              shape_str(bc));
  return add(out, *bias);
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const std::optional<Tensor>& bias) {
  EMBER_CHECK(input1.dim() == input2.dim(), "bilinear(): input dimensions do not match: got ", input1.dim(), " and ",
              input2.dim());
  for (int64_t i = 0; i + 1 < input1.dim(); ++i)
    EMBER_CHECK(input1.sizes()[i] == input2.sizes()[i], "bilinear(): input batch dimensions do not match at dim ", i,
                ": got ", input1.sizes()[i], " and ", input2.sizes()[i]);
  EMBER_CHECK(input1.dim() >= 1, "bilinear(): expected inputs with at least 1 dimension, but got 0-d inputs");
  EMBER_CHECK(weight.dim() == 3, "bilinear(): expected a 3-D weight (out_features, in1_features, in2_features), got ",
              weight.dim(), "-D");
  int64_t out_f = weight.sizes()[0], in1 = weight.sizes()[1], in2 = weight.sizes()[2];
  EMBER_CHECK(input1.sizes().back() == in1, "bilinear(): input1 size does not match weight size: got ",
              input1.sizes().back(), " but expected ", in1);
  EMBER_CHECK(input2.sizes().back() == in2, "bilinear(): input2 size does not match weight size: got ",
              input2.sizes().back(), " but expected ", in2);
  if (bias) {
    EMBER_CHECK(bias->dim() >= 1 && bias->sizes()[0] == out_f, "bilinear(): bias size does not match weight size: got ",
                bias->dim() >= 1 ? bias->sizes()[0] : 0, " but expected ", out_f);
  }
  const Shape& s1 = input1.sizes();
  Shape out_shape(s1.begin(), s1.end() - 1);
  out_shape.push_back(out_f);
  Tensor x1 = reshape(input1, Shape{-1, in1});  // (N, in1)
  Tensor x2 = reshape(input2, Shape{-1, in2});  // (N, in2)
  int64_t n = x1.sizes()[0];
  // (N, in1) @ (in1, out*in2) -> (N, out, in2), then a batched product with x2 contracts in2.
  Tensor w = reshape(permute(weight, {1, 0, 2}), Shape{in1, out_f * in2});
  Tensor t = reshape(mm(x1, w), Shape{n, out_f, in2});
  Tensor out = reshape(bmm(t, unsqueeze(x2, 2)), Shape{n, out_f});
  if (bias) out = add(out, *bias);
  return reshape(out, out_shape);
}

}  // namespace ember
