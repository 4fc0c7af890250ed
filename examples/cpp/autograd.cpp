// Autograd from C++ in the style of libtorch's autograd example: gradients of tensor
// expressions, higher-order gradients (a gradient penalty), and custom differentiable functions
// (torch::autograd::Function with an AutogradContext). Deterministic inputs, so the output is
// the same against libtorch and against Ember's <torch/torch.h>.
#include <torch/torch.h>

#include <iostream>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = x W^T + b, with its backward written by hand.
struct LinearFunction : public torch::autograd::Function<LinearFunction> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                               torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) output += bias.unsqueeze(0).expand_as(output);
    return output;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0], weight = saved[1], bias = saved[2];
    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) grad_bias = grad_output.sum(0);
    return {grad_input, grad_weight, grad_bias};
  }
};

// y = x * constant; the constant travels in saved_data.
struct MulConstant : public torch::autograd::Function<MulConstant> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor tensor, double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    // One gradient per input: none for the constant.
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
  }
};

void basic_autograd_operations() {
  std::cout << "====== Running: \"Basic autograd operations\" ======" << std::endl;
  auto x = torch::ones({2, 2}, torch::requires_grad());
  std::cout << x << std::endl;
  auto y = x + 2;
  std::cout << y << std::endl;
  std::cout << y.grad_fn()->name() << std::endl;
  auto z = y * y * 3;
  auto out = z.mean();
  std::cout << z << std::endl;
  std::cout << z.grad_fn()->name() << std::endl;
  std::cout << out << std::endl;

  auto a = torch::arange(4., torch::dtype(torch::kFloat)).view({2, 2}) - 1.5;
  a = ((a * 3) / (a - 1));
  std::cout << a.requires_grad() << std::endl;
  a.requires_grad_(true);
  std::cout << a.requires_grad() << std::endl;
  auto b = (a * a).sum();
  std::cout << b.grad_fn()->name() << std::endl;

  out.backward();
  std::cout << x.grad() << std::endl;

  x = torch::linspace(-1, 1, 3, torch::requires_grad());
  y = x * 2;
  while (y.norm().item<double>() < 1000) y = y * 2;
  std::cout << y << std::endl;
  std::cout << y.grad_fn()->name() << std::endl;
  auto v = torch::tensor({0.1, 1.0, 0.0001}, torch::kFloat);
  y.backward(v);
  std::cout << x.grad() << std::endl;

  std::cout << x.requires_grad() << std::endl;
  std::cout << x.pow(2).requires_grad() << std::endl;
  {
    torch::NoGradGuard no_grad;
    std::cout << x.pow(2).requires_grad() << std::endl;
  }
  std::cout << x.requires_grad() << std::endl;
  y = x.detach();
  std::cout << y.requires_grad() << std::endl;
  std::cout << x.eq(y).all().item<bool>() << std::endl;
}

void compute_higher_order_gradients() {
  std::cout << "====== Running \"Computing higher-order gradients in C++\" ======" << std::endl;
  // One use of higher-order gradients is a gradient penalty: grad(model(input))^2 added to the loss.
  auto model = torch::nn::Linear(4, 3);
  {
    torch::NoGradGuard no_grad;
    model->weight.copy_(torch::arange(12., torch::kFloat).view({3, 4}) / 10 - 0.5);
    model->bias.copy_(torch::tensor({0.1, -0.2, 0.3}));
  }
  auto input = torch::linspace(-1, 1, 12).view({3, 4}).requires_grad_(true);
  auto output = model(input);
  auto target = torch::tensor({{0.5, 0.0, -0.5}, {1.0, 1.0, 1.0}, {0.0, 0.0, 0.0}});
  auto loss = torch::nn::functional::mse_loss(output, target);
  auto grad_output = torch::ones_like(output);
  auto gradient = torch::autograd::grad({output}, {input}, /*grad_outputs=*/{grad_output}, /*retain_graph=*/true,
                                        /*create_graph=*/true)[0];
  auto gradient_penalty = torch::pow((gradient.norm(2, /*dim=*/1) - 1), 2).mean();
  auto combined_loss = loss + gradient_penalty;
  combined_loss.backward();
  std::cout << input.grad() << std::endl;
  std::cout << model->weight.grad() << std::endl;
}

void custom_autograd_functions() {
  std::cout << "====== Running \"Using custom autograd function in C++\" ======" << std::endl;
  {
    auto x = (torch::arange(6., torch::kDouble).view({2, 3}) / 6).requires_grad_();
    auto weight = (torch::arange(12., torch::kDouble).view({4, 3}) / 12 - 0.5).requires_grad_();
    auto y = LinearFunction::apply(x, weight);
    y.sum().backward();
    std::cout << x.grad() << std::endl;
    std::cout << weight.grad() << std::endl;
  }
  {
    auto x = (torch::arange(4., torch::kDouble).view({2, 2}) - 1).requires_grad_();
    auto y = MulConstant::apply(x, 5.5);
    y.sum().backward();
    std::cout << x.grad() << std::endl;
    // A second derivative through the custom function.
    auto z = MulConstant::apply(x * x, 2.0).sum();
    auto g = torch::autograd::grad({z}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    std::cout << g << std::endl;
    auto gg = torch::autograd::grad({g.sum()}, {x})[0];
    std::cout << gg << std::endl;
  }
}

int main() {
  std::cout << std::boolalpha;
  basic_autograd_operations();
  std::cout << "\n";
  compute_higher_order_gradients();
  std::cout << "\n";
  custom_autograd_functions();
}
