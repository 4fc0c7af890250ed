// Note [Bessel functions] and ops/special_unary.cpp: the scalar functions against values from mpmath (30
// digits), the tensor entries' dtype rules and their gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/autograd/engine.h"
#include "ember/ember.h"
#include "ember/ops/special_binary.h"
#include "ember/ops/special_unary.h"

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

// ops/special_unary.cpp: erfcx, log_ndtr, ndtri and airy_ai against mpmath (30 digits, at the doubles).
TEST(SpecialUnary, ValuesAgainstMpmath) {
  expect_rel(math::erfcx(-2.0), 108.94090438997797);
  expect_rel(math::erfcx(0.5), 0.61569034419292587);
  expect_rel(math::erfcx(12.0), 0.046854221014893763);  // the asymptotic series
  expect_rel(math::log_ndtr(-20.0), -203.91715537109726);
  expect_rel(math::log_ndtr(-0.5), -1.1759117615936186);
  expect_rel(math::log_ndtr(3.0), -0.0013508099647481938);
  expect_rel(math::ndtri(1e-10), -6.3613409024040562);
  expect_rel(math::ndtri(0.3), -0.52440051270804082);  // (of the doubles nearest 0.3, 0.9999)
  expect_rel(math::ndtri(0.9999), 3.7190164854557084);
  EXPECT_NEAR(math::airy_ai(-12.5), -0.27627456138116025, 1e-15);
  EXPECT_NEAR(math::airy_ai(-3.3), -0.41718093737455014, 1e-15);
  expect_rel(math::airy_ai(0.7), 0.18916240039815008);
  expect_rel(math::airy_ai(15.0), 2.1649625207379923e-18);
}

TEST(SpecialUnary, EdgeValues) {
  EXPECT_EQ(math::erfcx(kInf), 0.0);
  EXPECT_EQ(math::erfcx(-kInf), kInf);
  EXPECT_EQ(math::erfcx(-27.0), kInf);
  EXPECT_EQ(math::log_ndtr(kInf), 0.0);
  EXPECT_EQ(math::log_ndtr(-kInf), -kInf);
  EXPECT_EQ(math::ndtri(0.0), -kInf);
  EXPECT_EQ(math::ndtri(1.0), kInf);
  EXPECT_EQ(math::ndtri(0.5), 0.0);
  EXPECT_TRUE(std::isnan(math::ndtri(1.5)));
  EXPECT_TRUE(std::isnan(math::ndtri(-0.1)));
  EXPECT_TRUE(std::isfinite(math::ndtri(5e-324)));
  EXPECT_TRUE(std::isnan(math::airy_ai(kInf)));
  EXPECT_TRUE(std::isnan(math::airy_ai(-kInf)));
  EXPECT_EQ(math::entr(0.0), 0.0);
  EXPECT_EQ(math::entr(-0.5), -kInf);
  EXPECT_EQ(math::entr(kInf), -kInf);
  EXPECT_DOUBLE_EQ(math::entr(0.5), 0.5 * std::log(2.0));
  for (double (*f)(double) : {math::erfcx, math::log_ndtr, math::ndtri, math::airy_ai, math::entr})
    EXPECT_TRUE(std::isnan(f(std::numeric_limits<double>::quiet_NaN())));
}

TEST(SpecialUnary, TensorDtypesAndGradient) {
  Tensor x = arange(Scalar(0), Scalar(3), Scalar(1), ScalarType::Int64);
  Tensor y = special_unary(SpecialUnaryOp::Erfcx, x);  // integers compute in the default dtype
  EXPECT_EQ(y.dtype(), ScalarType::Float32);
  EXPECT_NEAR(item(select(y, 0, 0)).to_double(), 1.0, 1e-7);
  EXPECT_THROW(special_unary(SpecialUnaryOp::LogNdtr, to_dtype(x, ScalarType::Float16)), NotImplementedError);
  EXPECT_THROW(special_unary(SpecialUnaryOp::Ndtri, to_dtype(x, ScalarType::Complex64)), NotImplementedError);

  Tensor v = full({1}, Scalar(0.5), ScalarType::Float64);
  autograd::set_requires_grad(v, true);
  autograd::BackwardOptions o;
  o.accumulate = false;
  Tensor g = autograd::run_backward({sum(special_unary(SpecialUnaryOp::Erfcx, v))}, {Tensor()}, {v}, o)[0];
  expect_rel(item(g).to_double(), -0.5126888229025867);                             // 2 x erfcx(x) - 2/sqrt(pi)
  EXPECT_FALSE(autograd::requires_grad(special_unary(SpecialUnaryOp::AiryAi, v)));  // none, as torch
}

// A float64 vector of the given values.
static Tensor values_of(std::initializer_list<double> v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t;
}

TEST(SpecialBinary, LogAddExpValuesAndEdges) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (ScalarType dt : {ScalarType::Float32, ScalarType::Float64}) {
    Tensor a = to_dtype(values_of({1.0, kInf, -kInf, kInf, 0.5, nan, -100.0, 3.0}), dt);
    Tensor b = to_dtype(values_of({2.0, kInf, -kInf, -kInf, 0.5, 1.0, 0.0, 3.0}), dt);
    Tensor y = to_dtype(special_binary(SpecialBinaryOp::LogAddExp, a, b), ScalarType::Float64);
    const double* v = contiguous(y).data<double>();
    const double tol = dt == ScalarType::Float32 ? 1e-6 : 1e-15;
    EXPECT_NEAR(v[0], 2.0 + std::log1p(std::exp(-1.0)), tol);
    EXPECT_EQ(v[1], kInf);  // equal infinities give themselves (a - b is NaN)
    EXPECT_EQ(v[2], -kInf);
    EXPECT_EQ(v[3], kInf);
    EXPECT_NEAR(v[4], 0.5 + std::log(2.0), tol);
    EXPECT_TRUE(std::isnan(v[5]));
    EXPECT_NEAR(v[6], std::exp(-100.0),
                dt == ScalarType::Float32 ? 1e-45 : 1e-57);  // the correction term: log1p of a tiny e is e
    EXPECT_NEAR(v[7], 3.0 + std::log(2.0), tol);
    Tensor y2 = special_binary(SpecialBinaryOp::LogAddExp2, a, b);
    EXPECT_NEAR(item(select(y2, 0, 0)).to_double(), 2.0 + std::log2(1.5), tol);
    EXPECT_NEAR(item(select(y2, 0, 4)).to_double(), 1.5, tol);
  }
  // broadcasting, integer and complex refusals
  Tensor r = special_binary(SpecialBinaryOp::LogAddExp, zeros({3, 1}), zeros({4}));
  EXPECT_EQ(r.sizes(), Shape({3, 4}));
  EXPECT_THROW(special_binary(SpecialBinaryOp::LogAddExp, zeros({2}, ScalarType::Int64), zeros({2}, ScalarType::Int64)),
               NotImplementedError);
  EXPECT_THROW(special_binary(SpecialBinaryOp::LogAddExp2, zeros({2}, ScalarType::Complex64), zeros({2})),
               NotImplementedError);
  EXPECT_THROW(special_binary(SpecialBinaryOp::LogAddExp, zeros({2}), zeros({3})), Error);
}

TEST(SpecialBinary, ZetaValuesAndGradient) {
  Tensor x = values_of({2.0, 4.0, 1.0, 0.5, 3.0});
  Tensor q = values_of({1.0, 1.0, 1.0, 1.0, 0.0});
  Tensor z = special_binary(SpecialBinaryOp::Zeta, x, q);
  const double* v = contiguous(z).data<double>();
  expect_rel(v[0], M_PI * M_PI / 6);
  expect_rel(v[1], std::pow(M_PI, 4) / 90);
  EXPECT_EQ(v[2], kInf);          // the pole at x = 1
  EXPECT_TRUE(std::isnan(v[3]));  // x < 1
  EXPECT_EQ(v[4], kInf);          // q a non-positive integer
  EXPECT_THROW(special_binary(SpecialBinaryOp::Zeta, zeros({2}, ScalarType::Float16), zeros({2}, ScalarType::Float16)),
               NotImplementedError);
  EXPECT_EQ(special_binary(SpecialBinaryOp::Zeta, full({1}, Scalar(2), ScalarType::Int64),
                           full({1}, Scalar(1), ScalarType::Int64))
                .dtype(),
            ScalarType::Float32);  // integers compute in the default dtype

  // d/dq zeta(x, q) = -x zeta(x + 1, q); none for x (raises when backward reaches it)
  Tensor qv = full({1}, Scalar(1.0), ScalarType::Float64);
  autograd::set_requires_grad(qv, true);
  autograd::BackwardOptions o;
  o.accumulate = false;
  Tensor g = autograd::run_backward(
      {sum(special_binary(SpecialBinaryOp::Zeta, full({1}, Scalar(2.0), ScalarType::Float64), qv))}, {Tensor()}, {qv},
      o)[0];
  expect_rel(item(g).to_double(), -2.0 * 1.2020569031595942);
  Tensor xv = full({1}, Scalar(2.0), ScalarType::Float64);
  autograd::set_requires_grad(xv, true);
  Tensor zx = sum(special_binary(SpecialBinaryOp::Zeta, xv, full({1}, Scalar(1.0), ScalarType::Float64)));
  EXPECT_THROW(autograd::run_backward({zx}, {Tensor()}, {xv}, o), NotImplementedError);
}
