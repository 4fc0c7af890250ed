// F.grid_sample on 4-d input, bilinear or nearest, as one op forward and one backward.
//
// Note [Fused grid_sample]: each output pixel's source point (the grid's (x, y) unnormalized, then
// clipped or reflected by the padding mode) and its taps are computed once, then applied to every
// channel; the backward scatters the output gradient into the input through the same taps and
// gives the grid its gradient from the taps' differences (the kernels: Note [Vectorized grid_sample taps]). The
// composition it replaces (about 40 elementwise and gather ops in nn/functional.py, which still serves 5-d input)
// took 4.7x torch's time on a 4x16x32x32 input. As torch's, the backward has no derivative of its own.
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/cpu/grid_sample_kernels.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

cpu::GridSampleGeometry geometry_of(const Tensor& x, const Tensor& grid, bool nearest, int padding,
                                    bool align_corners) {
  return {x.size(0), x.size(1), x.size(2), x.size(3), grid.size(1) * grid.size(2), nearest, padding, align_corners};
}

void record_grid_sample(const Tensor& input_, const Tensor& grid_, const Tensor& input, const Tensor& grid,
                        const Tensor& out, bool nearest, int padding, bool align_corners) {
  if (auto node = autograd::make_node<autograd::LambdaBackward>(input_, grid_)) {
    const bool input_grad = autograd::requires_grad(input_), grid_grad = autograd::requires_grad(grid_);
    node->record(
        "GridSampler2DBackward0", {out}, {input, grid}, {},
        [=](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
          const Tensor &x = s[0], &gr = s[1];
          Tensor gout = contiguous(g[0]);
          Tensor gin = input_grad ? zeros(x.sizes(), x.dtype()) : Tensor();
          Tensor ggrid = grid_grad ? zeros(gr.sizes(), gr.dtype()) : Tensor();
          cpu::grid_sample_backward(x.dtype(), geometry_of(x, gr, nearest, padding, align_corners), x.data_ptr(),
                                    gr.data_ptr(), gout.data_ptr(), gin.defined() ? gin.data_ptr() : nullptr,
                                    ggrid.defined() ? ggrid.data_ptr() : nullptr);
          // Under create_graph the gradients get a node that refuses a second derivative, as torch's
          if (auto nn = autograd::make_node<autograd::LambdaBackward>(g[0], x, gr)) {
            std::vector<Tensor> outs;
            if (gin.defined()) outs.push_back(gin);
            if (ggrid.defined()) outs.push_back(ggrid);
            auto refuse = [](const autograd::TensorList&, const autograd::TensorList&) -> autograd::TensorList {
              EMBER_NOT_IMPLEMENTED("the derivative for 'grid_sampler_2d_backward' is not implemented.");
            };
            if (outs.size() == 2)
              nn->record("GridSampler2DBackwardBackward0", {outs[0], outs[1]}, {}, {}, refuse);
            else if (outs.size() == 1)
              nn->record("GridSampler2DBackwardBackward0", {outs[0]}, {}, {}, refuse);
          }
          return {gin, ggrid};
        });
  }
}

}  // namespace

Tensor grid_sample_2d(const Tensor& input_, const Tensor& grid_, bool nearest, int padding, bool align_corners) {
  EMBER_CHECK(input_.dim() == 4 && grid_.dim() == 4 && grid_.size(3) == 2 && grid_.size(0) == input_.size(0),
              "grid_sample_2d: expected input (N, C, H, W) and grid (N, Ho, Wo, 2)");
  EMBER_CHECK(input_.dtype() == grid_.dtype() &&
                  (input_.dtype() == ScalarType::Float32 || input_.dtype() == ScalarType::Float64),
              "grid_sample_2d: float32 or float64 input and grid of one dtype expected");
  EMBER_CHECK(input_.size(2) > 0 && input_.size(3) > 0,
              "grid_sample_2d: expected input to have non-empty spatial dimensions");
  EMBER_CHECK(padding >= 0 && padding <= 2, "grid_sample_2d: padding mode 0 (zeros), 1 (border) or 2 (reflection)");
  const Tensor input = contiguous(input_), grid = contiguous(grid_);
  Tensor out = empty({input.size(0), input.size(1), grid.size(1), grid.size(2)}, input.dtype());
  cpu::grid_sample_forward(input.dtype(), geometry_of(input, grid, nearest, padding, align_corners), input.data_ptr(),
                           grid.data_ptr(), out.data_ptr());
  record_grid_sample(input_, grid_, input, grid, out, nearest, padding, align_corners);
  return out;
}

}  // namespace ember
