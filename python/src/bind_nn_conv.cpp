// Bindings of the convolution and pooling ops (ops/nn.h): torch.conv1d/2d/3d,
// conv_transpose1d/2d/3d and convolution, as torch.nn.functional calls them; the pools, im2col
// and col2im under private names that ember/nn/functional.py wraps with torch's signatures; F.pad's kernels.
#include <nanobind/stl/tuple.h>

#include <string>

#include "common.h"
#include "ember/ops/nn_grid_sample.h"
#include "ember/ops/nn_pad.h"

namespace ember::py {
namespace {

// An int or a sequence of ints (torch's int[] argument): TypeError naming the argument otherwise.
Shape int_list_arg(nb::handle h, const char* op, const char* name) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return Shape{nb::cast<int64_t>(h)};
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
    Shape out;
    for (nb::handle v : nb::borrow<nb::sequence>(h)) {
      if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
        throw nb::type_error((std::string(op) + "(): argument '" + name +
                              "' must be tuple of ints, but found element of type " + Py_TYPE(v.ptr())->tp_name)
                                 .c_str());
      out.push_back(nb::cast<int64_t>(v));
    }
    return out;
  }
  throw nb::type_error(
      (std::string(op) + "(): argument '" + name + "' must be tuple of ints, not " + Py_TYPE(h.ptr())->tp_name)
          .c_str());
}

Tensor opt_tensor(nb::handle h, const char* op, const char* name) {
  if (h.is_none()) return Tensor();
  if (!nb::isinstance<Tensor>(h))
    throw nb::type_error(
        (std::string(op) + "(): argument '" + name + "' must be Tensor, not " + Py_TYPE(h.ptr())->tp_name).c_str());
  return nb::cast<Tensor>(h);
}

template <int ND>
void bind_conv(nb::module_& m, const char* name, const char* tname) {
  m.def(
      name,
      [name](const Tensor& input, const Tensor& weight, nb::handle bias, nb::handle stride, nb::handle padding,
             nb::handle dilation, int64_t groups) {
        Tensor b = opt_tensor(bias, name, "bias");
        Shape s = int_list_arg(stride, name, "stride"), d = int_list_arg(dilation, name, "dilation");
        if (PyUnicode_Check(padding.ptr())) {
          std::string p = nb::cast<std::string>(padding);
          if (ND == 1) return conv1d(input, weight, b, s, p, d, groups);
          if (ND == 2) return conv2d(input, weight, b, s, p, d, groups);
          return conv3d(input, weight, b, s, p, d, groups);
        }
        Shape p = int_list_arg(padding, name, "padding");
        if (ND == 1) return conv1d(input, weight, b, s, p, d, groups);
        if (ND == 2) return conv2d(input, weight, b, s, p, d, groups);
        return conv3d(input, weight, b, s, p, d, groups);
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1, nb::arg("padding") = 0,
      nb::arg("dilation") = 1, nb::arg("groups") = 1);
  m.def(
      tname,
      [tname](const Tensor& input, const Tensor& weight, nb::handle bias, nb::handle stride, nb::handle padding,
              nb::handle output_padding, int64_t groups, nb::handle dilation) {
        Tensor b = opt_tensor(bias, tname, "bias");
        Shape s = int_list_arg(stride, tname, "stride"), p = int_list_arg(padding, tname, "padding"),
              op = int_list_arg(output_padding, tname, "output_padding"), d = int_list_arg(dilation, tname, "dilation");
        if (ND == 1) return conv_transpose1d(input, weight, b, s, p, op, groups, d);
        if (ND == 2) return conv_transpose2d(input, weight, b, s, p, op, groups, d);
        return conv_transpose3d(input, weight, b, s, p, op, groups, d);
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1, nb::arg("padding") = 0,
      nb::arg("output_padding") = 0, nb::arg("groups") = 1, nb::arg("dilation") = 1);
}

}  // namespace

void bind_nn_conv(nb::module_& m) {
  bind_conv<1>(m, "conv1d", "conv_transpose1d");
  bind_conv<2>(m, "conv2d", "conv_transpose2d");
  bind_conv<3>(m, "conv3d", "conv_transpose3d");
  m.def(
      "convolution",
      [](const Tensor& input, const Tensor& weight, nb::handle bias, nb::handle stride, nb::handle padding,
         nb::handle dilation, bool transposed, nb::handle output_padding, int64_t groups) {
        const char* op = "convolution";
        return convolution(input, weight, opt_tensor(bias, op, "bias"), int_list_arg(stride, op, "stride"),
                           int_list_arg(padding, op, "padding"), int_list_arg(dilation, op, "dilation"), transposed,
                           int_list_arg(output_padding, op, "output_padding"), groups);
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"), nb::arg("padding"),
      nb::arg("dilation"), nb::arg("transposed"), nb::arg("output_padding"), nb::arg("groups"));

  // ---- pooling, unfold/fold ----
  auto ints = [](nb::handle h, const char* op, const char* name) {
    return h.is_none() ? Shape{} : int_list_arg(h, op, name);
  };
  m.def(
      "_max_pool",
      [ints](const Tensor& x, int64_t nd, nb::handle k, nb::handle s, nb::handle p, nb::handle d, bool ceil_mode) {
        const char* op = "max_pool";
        return max_pool_with_indices(x, nd, ints(k, op, "kernel_size"), ints(s, op, "stride"), ints(p, op, "padding"),
                                     ints(d, op, "dilation"), ceil_mode);
      },
      nb::arg("input"), nb::arg("nd"), nb::arg("kernel_size"), nb::arg("stride").none(), nb::arg("padding"),
      nb::arg("dilation"), nb::arg("ceil_mode"));
  m.def(
      "_avg_pool",
      [ints](const Tensor& x, int64_t nd, nb::handle k, nb::handle s, nb::handle p, bool ceil_mode,
             bool count_include_pad, std::optional<int64_t> divisor_override) {
        const char* op = "avg_pool";
        return avg_pool(x, nd, ints(k, op, "kernel_size"), ints(s, op, "stride"), ints(p, op, "padding"), ceil_mode,
                        count_include_pad, divisor_override);
      },
      nb::arg("input"), nb::arg("nd"), nb::arg("kernel_size"), nb::arg("stride").none(), nb::arg("padding"),
      nb::arg("ceil_mode"), nb::arg("count_include_pad"), nb::arg("divisor_override").none());
  m.def("_adaptive_avg_pool", [ints](const Tensor& x, int64_t nd, nb::handle o) {
    return adaptive_avg_pool(x, nd, ints(o, "adaptive_avg_pool", "output_size"));
  });
  m.def("_adaptive_max_pool", [ints](const Tensor& x, int64_t nd, nb::handle o) {
    return adaptive_max_pool(x, nd, ints(o, "adaptive_max_pool", "output_size"));
  });
  m.def("_max_unpool", [ints](const Tensor& x, const Tensor& idx, nb::handle o) {
    return max_unpool(x, idx, ints(o, "max_unpool", "output_size"));
  });
  m.def(
      "im2col",
      [ints](const Tensor& x, nb::handle k, nb::handle d, nb::handle p, nb::handle s) {
        const char* op = "im2col";
        return im2col(x, ints(k, op, "kernel_size"), ints(d, op, "dilation"), ints(p, op, "padding"),
                      ints(s, op, "stride"));
      },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("dilation"), nb::arg("padding"), nb::arg("stride"));
  m.def("_pad_gather", &pad_gather, nb::arg("input"), nb::arg("maps"), nb::arg("node_name"));
  m.def(
      "_constant_pad_nd",
      [ints](const Tensor& x, nb::handle pad, nb::handle value) {
        return constant_pad_nd(x, ints(pad, "constant_pad_nd", "pad"), number_arg(value, "constant_pad_nd", "value"));
      },
      nb::arg("input"), nb::arg("pad"), nb::arg("value"));
  m.def(
      "_pad",
      [ints](const Tensor& x, nb::handle p, const std::string& mode, nb::handle value) {
        EMBER_CHECK_TYPEERR(!PyComplex_Check(value.ptr()),
                            "pad(): argument 'value' (position 4) must be float, not complex");
        return pad(x, ints(p, "pad", "pad"), mode, value.is_none() ? Scalar(0) : number_arg(value, "pad", "value"));
      },
      nb::arg("input"), nb::arg("pad"), nb::arg("mode"), nb::arg("value").none());
  m.def("_grid_sample_2d", &grid_sample_2d, nb::arg("input"), nb::arg("grid"), nb::arg("nearest"), nb::arg("padding"),
        nb::arg("align_corners"));
  m.def("_grid_sample_3d", &grid_sample_3d, nb::arg("input"), nb::arg("grid"), nb::arg("nearest"), nb::arg("padding"),
        nb::arg("align_corners"));
  m.def(
      "_upsample",
      [ints](const Tensor& x, const std::string& mode, nb::handle size, std::vector<std::optional<double>> scales,
             bool align_corners) {
        return upsample(x, mode, ints(size, "interpolate", "size"), scales, align_corners);
      },
      nb::arg("input"), nb::arg("mode"), nb::arg("output_size"), nb::arg("scales"), nb::arg("align_corners"));
  m.def(
      "col2im",
      [ints](const Tensor& x, nb::handle o, nb::handle k, nb::handle d, nb::handle p, nb::handle s) {
        const char* op = "col2im";
        return col2im(x, ints(o, op, "output_size"), ints(k, op, "kernel_size"), ints(d, op, "dilation"),
                      ints(p, op, "padding"), ints(s, op, "stride"));
      },
      nb::arg("input"), nb::arg("output_size"), nb::arg("kernel_size"), nb::arg("dilation"), nb::arg("padding"),
      nb::arg("stride"));
}

}  // namespace ember::py
