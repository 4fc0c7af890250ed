// Note [Bessel functions]: the scalar functions against values from mpmath (30 digits), the tensor
// entry's dtype rules and its gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/autograd/engine.h"
#include "ember/ember.h"

using namespace ember;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

void expect_rel(double got, double want) { EXPECT_NEAR(got, want, 4e-16 * 8 * std::fabs(want)) << want; }
}  // namespace

TEST(Bessel, ValuesAgainstMpmath) {
  const double x[3] = {0.5, 3.0, 12.0};
  const struct {
    double (*f)(double);
    double want[3];
  } cases[] = {
      {math::bessel_i0, {1.0634833707413235, 4.8807925858650241, 18948.925349296309}},
      {math::bessel_i1e, {0.1564208031848717, 0.19682671329730085, 0.11146429929018098}},
      {math::bessel_k0, {0.92441907122766586, 0.034739504386279248, 2.2008253973114914e-6}},
      {math::bessel_k1e, {2.7310097082117857, 0.8065634801287869, 0.37283175336970988}},
      {math::bessel_j0, {0.9384698072408129, -0.26005195490193344, 0.047689310796833537}},
      {math::bessel_j1, {0.24226845767487389, 0.33905895852593646, -0.22344710449062761}},
      {math::bessel_y0, {-0.44451873350670656, 0.37685001001279038, -0.22523731263436143}},
      {math::bessel_y1, {-1.4714723926702431, 0.32467442479179998, -0.057099218260896521}},
  };
  for (const auto& c : cases)
    for (int i = 0; i < 3; ++i) expect_rel(c.f(x[i]), c.want[i]);
}

TEST(Bessel, EdgeValues) {
  EXPECT_EQ(math::bessel_i0(0.0), 1.0);
  EXPECT_TRUE(std::isnan(math::bessel_i0(kInf)));  // inf / inf, as torch
  EXPECT_EQ(math::bessel_i0(710.0), kInf);
  EXPECT_EQ(math::bessel_i0e(-kInf), 0.0);
  EXPECT_TRUE(std::signbit(math::bessel_i1e(-kInf)));
  EXPECT_EQ(math::bessel_k0(0.0), kInf);
  EXPECT_TRUE(std::isnan(math::bessel_k1(-1.0)));
  EXPECT_EQ(math::bessel_k0e(kInf), 0.0);
  EXPECT_EQ(math::bessel_y0(0.0), -kInf);
  EXPECT_TRUE(std::isnan(math::bessel_y1(-2.0)));
  EXPECT_TRUE(std::signbit(math::bessel_j1(-0.0)));
  EXPECT_TRUE(std::isnan(math::bessel_j0(kInf)));
  EXPECT_EQ(math::bessel_j1(1e-300), 5e-301);
}

TEST(Bessel, TensorDtypesAndGradient) {
  Tensor x = arange(Scalar(0), Scalar(4), Scalar(1), ScalarType::Int64);
  Tensor y = bessel(BesselOp::I0, x);  // integers compute in the default dtype
  EXPECT_EQ(y.dtype(), ScalarType::Float32);
  EXPECT_NEAR(item(select(y, 0, 3)).to_double(), 4.8807925858650241, 1e-6);
  EXPECT_THROW(bessel(BesselOp::J0, to_dtype(x, ScalarType::Float16)), NotImplementedError);
  EXPECT_NO_THROW(bessel(BesselOp::I1e, to_dtype(x, ScalarType::BFloat16)));
  EXPECT_THROW(bessel(BesselOp::I0, to_dtype(x, ScalarType::Complex64)), NotImplementedError);

  Tensor v = full({1}, Scalar(3.0), ScalarType::Float64);
  autograd::set_requires_grad(v, true);
  autograd::BackwardOptions o;
  o.accumulate = false;
  Tensor g = autograd::run_backward({sum(bessel(BesselOp::I0, v))}, {Tensor()}, {v}, o)[0];
  expect_rel(item(g).to_double(), 3.9533702174026094);             // I0' = I1
  EXPECT_FALSE(autograd::requires_grad(bessel(BesselOp::K0, v)));  // none for K, J, Y, as torch
}
