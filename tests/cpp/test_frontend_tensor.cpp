// The C++ frontend's tensor layer (csrc/ember/frontend, included as <torch/torch.h>): factories and
// options, libtorch's method names and conventions, indexing, printing and errors. Expected
// printed text is what libtorch 2.13 prints for the same statements.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

using torch::indexing::Ellipsis;
using torch::indexing::None;
using torch::indexing::Slice;

namespace {
template <typename T>
std::string str(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
std::vector<float> values(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}
}  // namespace

TEST(FrontendTensor, FactoriesAndOptions) {
  auto a = torch::ones({2, 3}, torch::dtype(torch::kFloat64).requires_grad(true));
  EXPECT_EQ(a.scalar_type(), torch::kDouble);
  EXPECT_TRUE(a.dtype() == torch::kFloat64);
  EXPECT_TRUE(a.requires_grad());
  EXPECT_TRUE(a.is_leaf());
  EXPECT_EQ(a.sizes(), torch::IntArrayRef({2, 3}));
  EXPECT_EQ(a.size(-1), 3);
  EXPECT_EQ(a.numel(), 6);
  EXPECT_EQ(a.dim(), 2);
  EXPECT_EQ(torch::zeros({2}, torch::kInt).scalar_type(), torch::kInt32);
  EXPECT_EQ(torch::full({2}, 7).scalar_type(), torch::kLong);  // the fill value's kind decides
  EXPECT_EQ(torch::full({2}, 7.0).scalar_type(), torch::kFloat);
  EXPECT_EQ(torch::arange(5).scalar_type(), torch::kLong);
  EXPECT_EQ(torch::arange(0., 1., 0.25).numel(), 4);
  EXPECT_EQ(torch::eye(3).sum().item<float>(), 3.0f);
  EXPECT_EQ(torch::empty({4, 5}).sizes().vec(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(torch::linspace(0, 1, 5).index({4}).item<float>(), 1.0f);
  auto o = torch::TensorOptions().dtype(torch::kLong).device(torch::kCPU);
  EXPECT_EQ(torch::zeros({1}, o).scalar_type(), torch::kLong);
  EXPECT_EQ(str(torch::zeros({1}).options()),
            "TensorOptions(dtype=float, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))");
  EXPECT_FALSE(torch::cuda::is_available());
  EXPECT_THROW(torch::zeros({1}, torch::Device(torch::kCUDA)), c10::NotImplementedError);
  EXPECT_EQ(str(torch::Device("cuda:1")), "cuda:1");
  EXPECT_EQ(torch::Device(torch::kCPU).type(), torch::kCPU);
}

TEST(FrontendTensor, TensorFromLists) {
  EXPECT_EQ(torch::tensor({1, 2, 3}).scalar_type(), torch::kLong);    // integers give int64
  EXPECT_EQ(torch::tensor({1.5, 2.0}).scalar_type(), torch::kFloat);  // floating gives the default
  EXPECT_EQ(torch::tensor({true, false}).scalar_type(), torch::kBool);
  EXPECT_EQ(torch::tensor(3.5).dim(), 0);
  auto m = torch::tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(m.sizes(), torch::IntArrayRef({2, 3}));
  EXPECT_EQ(m.index({1, 2}).item<int64_t>(), 6);
  auto v = torch::tensor(std::vector<float>{0.5f, 1.5f}, torch::kDouble);
  EXPECT_EQ(v.scalar_type(), torch::kDouble);
  EXPECT_EQ(v.index({1}).item<double>(), 1.5);
  EXPECT_EQ(torch::tensor({1, 2}, torch::requires_grad().dtype(torch::kFloat)).requires_grad(), true);
  try {
    torch::tensor({1.0, 2.0f});
    FAIL() << "mixed element types must raise";
  } catch (const c10::Error& e) {
    EXPECT_EQ(std::string(e.what_without_backtrace()),
              "Expected all elements of the tensor to have the same scalar type: Double, but got element of scalar "
              "type: Float");
  }
  EXPECT_THROW(torch::tensor({{1, 2}, {3}}), c10::Error);
}

TEST(FrontendTensor, FromBlob) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  auto t = torch::from_blob(data, {2, 3});
  EXPECT_EQ(t.data_ptr<float>(), data);  // no copy
  t.mul_(2);
  EXPECT_EQ(data[5], 12.0f);
  bool freed = false;
  {
    auto u = torch::from_blob(
        data, {3}, {2}, [&](void*) { freed = true; }, torch::kFloat);
    EXPECT_EQ(values(u), (std::vector<float>{2, 6, 10}));
  }
  EXPECT_TRUE(freed);
}

TEST(FrontendTensor, MethodsWithLibtorchConventions) {
  auto x = torch::arange(12, torch::kFloat).view({-1, 4});  // [[0..3], [4..7], [8..11]]
  EXPECT_EQ(values(x.sum(1)), (std::vector<float>{6, 22, 38}));
  EXPECT_EQ(values(x.sum({0, 1}, /*keepdim=*/true)), (std::vector<float>{66}));
  EXPECT_EQ(x.sum(1, true).sizes(), torch::IntArrayRef({3, 1}));
  EXPECT_EQ(x.mean().item<float>(), 5.5f);
  EXPECT_EQ(values(x.argmax(1)), (std::vector<float>{3, 3, 3}));
  EXPECT_EQ(x.argmax(1).scalar_type(), torch::kLong);
  auto [mx, idx] = x.max(0);
  EXPECT_EQ(values(mx), (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(values(idx), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(x.eq(5).sum().item<int64_t>(), 1);
  EXPECT_EQ(values(x.t().contiguous().view({12})).at(1), 4.0f);
  EXPECT_EQ(x.transpose(0, 1).is_contiguous(), false);
  EXPECT_EQ(values(x.reshape({2, 6}).select(0, 1)), (std::vector<float>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(values(x.narrow(1, 1, 2).flatten()), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(x.unsqueeze(0).sizes(), torch::IntArrayRef({1, 3, 4}));
  EXPECT_EQ(x.to(torch::kDouble).scalar_type(), torch::kDouble);
  EXPECT_EQ(x.to(torch::Device(torch::kCPU)).is_same(x), true);  // same dtype and device: the tensor itself
  EXPECT_EQ(x.clamp(2, 5).min().item<float>(), 2.0f);
  EXPECT_EQ(x.chunk(2, 1).size(), 2u);
  EXPECT_EQ(x.size(0), 3);
  auto acc = x.accessor<float, 2>();
  EXPECT_EQ(acc[2][1], 9.0f);
  EXPECT_EQ(x.index({1, 1}).item().toFloat(), 5.0f);
  EXPECT_TRUE(x.allclose(x + 1e-9));
  EXPECT_TRUE(torch::equal(x.clone(), x));
}

TEST(FrontendTensor, OperatorsAndInPlace) {
  auto a = torch::tensor({1.0, 2.0, 3.0});
  auto b = torch::tensor({4.0, 5.0, 6.0});
  EXPECT_EQ(values(a + b), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(values(2 * a - 1), (std::vector<float>{1, 3, 5}));
  EXPECT_EQ(values(1.0 / a * 6), (std::vector<float>{6, 3, 2}));
  EXPECT_EQ(values(-a), (std::vector<float>{-1, -2, -3}));
  EXPECT_EQ(values(a < 2.5), (std::vector<float>{1, 1, 0}));
  EXPECT_EQ(values((a > 1) & (a < 3)), (std::vector<float>{0, 1, 0}));
  auto c = a.clone();
  c += b;
  c *= 2;
  c -= 1;
  c /= 2;
  EXPECT_EQ(values(c), (std::vector<float>{4.5, 6.5, 8.5}));
  c.zero_().add_(3).mul_(b);
  EXPECT_EQ(values(c), (std::vector<float>{12, 15, 18}));
  c.clamp_(13, 17);
  EXPECT_EQ(values(c), (std::vector<float>{13, 15, 17}));
  c.fill_(2).pow_(3);
  EXPECT_EQ(values(c), (std::vector<float>{8, 8, 8}));
  c.copy_(a);
  EXPECT_EQ(values(c), (std::vector<float>{1, 2, 3}));
  auto r = values(c.sqrt_().square());
  for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(r[k], k + 1.0, 1e-6);
  auto i = torch::tensor({7, 2});
  EXPECT_EQ(values(i % 3), (std::vector<float>{1, 2}));
  EXPECT_EQ((i / 2).scalar_type(), torch::kFloat);  // true division
}

TEST(FrontendTensor, Indexing) {
  auto x = torch::arange(24).view({2, 3, 4});
  EXPECT_EQ(x.index({0}).sizes(), torch::IntArrayRef({3, 4}));
  EXPECT_EQ(x.index({1, 2, 3}).item<int64_t>(), 23);
  EXPECT_EQ(x.index({Slice(), 1}).sizes(), torch::IntArrayRef({2, 4}));
  EXPECT_EQ(values(x.index({0, Slice(0, 2), 1})), (std::vector<float>{1, 5}));
  EXPECT_EQ(values(x.index({0, 0, Slice(None, None, 2)})), (std::vector<float>{0, 2}));
  EXPECT_EQ(x.index({Ellipsis, 0}).sizes(), torch::IntArrayRef({2, 3}));
  EXPECT_EQ(x.index({"...", None}).sizes(), torch::IntArrayRef({2, 3, 4, 1}));
  EXPECT_EQ(x.index({-1, -1, -1}).item<int64_t>(), 23);
  auto mask = x.index({0}) > 8;
  EXPECT_EQ(values(x.index({0}).index({mask})), (std::vector<float>{9, 10, 11}));
  auto rows = torch::tensor({2, 0});
  EXPECT_EQ(values(x.index({1, rows, 0})), (std::vector<float>{20, 12}));
  EXPECT_EQ(x[1][2][0].item<int64_t>(), 20);
  // index_put_: numbers, tensors, slices and masks.
  auto y = torch::zeros({2, 3});
  y.index_put_({0, Slice(1, None)}, 5);
  y.index_put_({1}, torch::tensor({1.0, 2.0, 3.0}));
  y.index_put_({y > 4}, -1);
  EXPECT_EQ(values(y), (std::vector<float>{0, -1, -1, 1, 2, 3}));
  y.index_put_({torch::tensor({1}), torch::tensor({0})}, 9);
  EXPECT_EQ(y.index({1, 0}).item<float>(), 9.0f);
  try {
    x.index({0, 0, 9});
    FAIL() << "out-of-range index must raise";
  } catch (const c10::IndexError& e) {
    EXPECT_EQ(std::string(e.what()), "index 9 is out of bounds for dimension 2 with size 4");
  }
  EXPECT_THROW(x.index({0, 0, 0, 0}), c10::IndexError);
  EXPECT_THROW(torch::tensor(1.0).index({0}), c10::IndexError);
}

TEST(FrontendTensor, PrintsAsLibtorch) {
  EXPECT_EQ(str(torch::arange(6).reshape({2, 3})), " 0  1  2\n 3  4  5\n[ CPULongType{2,3} ]");
  EXPECT_EQ(str(torch::arange(6.).reshape({2, 3}) / 7),
            " 0.0000  0.1429  0.2857\n 0.4286  0.5714  0.7143\n[ CPUFloatType{2,3} ]");
  EXPECT_EQ(str(torch::tensor({1e-5, 1.0, 1e6})), " 1.0000e-05\n 1.0000e+00\n 1.0000e+06\n[ CPUFloatType{3} ]");
  EXPECT_EQ(str(torch::tensor({true, false})), " 1\n 0\n[ CPUBoolType{2} ]");
  EXPECT_EQ(str(torch::tensor(3.5)), "3.5\n[ CPUFloatType{} ]");
  EXPECT_EQ(str(torch::tensor(1.0 / 3, torch::kDouble)), "0.3333333333333333\n[ CPUDoubleType{} ]");
  EXPECT_EQ(str(torch::zeros({0, 3})), "[ CPUFloatType{0,3} ]");
  EXPECT_EQ(str(torch::Tensor()), "[ Tensor (undefined) ]");
  EXPECT_EQ(str(torch::tensor({std::nan(""), double(INFINITY), 1.5})),
            "    nan\n    inf\n 1.5000\n[ CPUFloatType{3} ]");
  EXPECT_EQ(str(torch::tensor({{0.001, 0.002}, {0.003, -0.004}})),
            "0.001 *\n 1.0000  2.0000\n  3.0000 -4.0000\n[ CPUFloatType{2,2} ]");
  EXPECT_EQ(str(torch::tensor({1e6 + 0.5, 2e6})), "1000000 *\n 1.0000\n 2.0000\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(torch::full({2, 1, 2}, 1.25)),
            "(1,.,.) = \n 1.2500  1.2500\n\n(2,.,.) = \n 1.2500  1.2500\n[ CPUFloatType{2,1,2} ]");
  EXPECT_EQ(str(torch::ones({2, 28}, torch::kLong)).substr(0, 20), "Columns 1 to 26 1  1");
  EXPECT_EQ(str(torch::zeros({2, 3}).sizes()), "[2, 3]");
  EXPECT_EQ(str(torch::zeros({2}).dtype()), "float");
  EXPECT_EQ(str(torch::zeros({2}, torch::kLong).dtype()), "long int");
  EXPECT_EQ(str(torch::kFloat), "Float");
  EXPECT_EQ(torch::ones({2}).toString(), "CPUFloatType");
}

TEST(FrontendTensor, ErrorsAreC10Errors) {
  try {
    torch::zeros({2, 3}).view({4});
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_EQ(std::string(e.what_without_backtrace()), "shape '[4]' is invalid for input of size 6");
  }
  try {
    torch::matmul(torch::zeros({2, 3}), torch::zeros({4, 5}));
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_EQ(e.msg(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  }
  try {
    torch::zeros({2}).data_ptr<double>();
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_EQ(e.msg(), "expected scalar type Double but found Float");
  }
  try {
    TORCH_CHECK(1 + 1 == 3, "arithmetic is ", "broken");
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_EQ(e.msg(), "arithmetic is broken");
  }
  EXPECT_THROW(AT_ASSERT(false), c10::Error);
  EXPECT_THROW(torch::ones({2}).item<float>(), c10::Error);
}

TEST(FrontendTensor, ProductsWithOut) {
  // torch::mm_out / torch::bmm_out: out keeps its memory when it has the product's shape, and is
  // resized otherwise
  auto a = torch::randn({5, 4}), b = torch::randn({4, 3});
  auto out = torch::empty({5, 3});
  const void* before = out.data_ptr();
  torch::Tensor& r = torch::mm_out(out, a, b);
  EXPECT_EQ(&r, &out);
  EXPECT_EQ(out.data_ptr(), before);
  EXPECT_TRUE(torch::allclose(out, torch::mm(a, b)));
  auto bout = torch::empty({0});
  torch::bmm_out(bout, a.unsqueeze(0), b.unsqueeze(0));
  EXPECT_EQ(bout.sizes(), (std::vector<int64_t>{1, 5, 3}));
  EXPECT_TRUE(torch::allclose(bout[0], torch::mm(a, b)));
}
