// complex64/complex128 in the core: Scalar, promotion, casts, views of the parts, conjugation.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;
using c64 = std::complex<float>;

TEST(Complex, ScalarKindAndConversions) {
  Scalar s(std::complex<double>(1.5, -2.0));
  EXPECT_TRUE(s.is_complex());
  EXPECT_EQ(s.to<c64>(), c64(1.5f, -2.0f));
  EXPECT_EQ(s.to_double(), 1.5);  // the real part, as a complex -> real cast
  EXPECT_TRUE(Scalar(std::complex<double>(0, 1)).to_bool());
  EXPECT_EQ(Scalar(std::complex<double>(0, 1)).natural_dtype(), complex_for(default_dtype()));
  EXPECT_EQ(Scalar(2.0).to<std::complex<double>>(), std::complex<double>(2.0, 0.0));
}

TEST(Complex, Promotion) {
  EXPECT_EQ(promote_types(ScalarType::Complex64, ScalarType::Float64), ScalarType::Complex128);
  EXPECT_EQ(promote_types(ScalarType::Int64, ScalarType::Complex64), ScalarType::Complex64);
  EXPECT_EQ(to_real(ScalarType::Complex128), ScalarType::Float64);
  Tensor a = ones({2}, ScalarType::Float32);
  Tensor z = scalar_tensor(Scalar(std::complex<double>(0, 1)), std::nullopt, /*wrapped=*/true);
  EXPECT_EQ(result_type(a, z), ScalarType::Complex64);
  EXPECT_EQ(add(a, z).dtype(), ScalarType::Complex64);
}

TEST(Complex, FillItemAndCasts) {
  Tensor z = full({3}, Scalar(std::complex<double>(1, 2)), ScalarType::Complex64);
  Scalar v = item(select(z, 0, 1));
  ASSERT_TRUE(v.is_complex());
  EXPECT_EQ(v.to_complex(), std::complex<double>(1, 2));
  Tensor r = to_dtype(z, ScalarType::Float64);  // keeps the real part
  EXPECT_EQ(item(select(r, 0, 0)).to_double(), 1.0);
  Tensor back = to_dtype(ones({2}, ScalarType::Int32), ScalarType::Complex128);
  EXPECT_EQ(item(select(back, 0, 1)).to_complex(), std::complex<double>(1, 0));
  EXPECT_THROW(fill_(r, Scalar(std::complex<double>(0, 1))), Error);  // 1j fits no real type
}

TEST(Complex, RealImagAreViewsThatWriteThrough) {
  Tensor z = zeros({2, 3}, ScalarType::Complex128);
  Tensor re = real(z), im = imag(z);
  EXPECT_EQ(re.dtype(), ScalarType::Float64);
  EXPECT_EQ(re.strides(), (Shape{6, 2}));
  EXPECT_EQ(im.storage_offset(), 1);
  Tensor slot = select(im, 1, 2);
  fill_(slot, 4.0);
  EXPECT_EQ(item(select(select(z, 1, 2), 0, 0)).to_complex(), std::complex<double>(0, 4));
  EXPECT_EQ(z.version(), re.version()) << "views share the version counter";
  Tensor pairs = view_as_real(z);
  EXPECT_EQ(pairs.sizes(), (Shape{2, 3, 2}));
  EXPECT_TRUE(view_as_complex(pairs).sizes() == z.sizes());
  EXPECT_THROW(view_as_complex(ones({3})), Error);
}

TEST(Complex, ArithmeticAndConj) {
  Tensor a = full({2}, Scalar(std::complex<double>(1, 2)), ScalarType::Complex64);
  Tensor b = full({2}, Scalar(std::complex<double>(3, -1)), ScalarType::Complex64);
  EXPECT_EQ(item(select(mul(a, b), 0, 0)).to_complex(), std::complex<double>(5, 5));
  std::complex<double> q = item(select(div(a, b), 0, 0)).to_complex();
  EXPECT_NEAR(q.real(), 0.1, 1e-6);
  EXPECT_NEAR(q.imag(), 0.7, 1e-6);
  EXPECT_EQ(item(select(conj(a), 0, 0)).to_complex(), std::complex<double>(1, -2));
  EXPECT_EQ(abs(a).dtype(), ScalarType::Float32);
  EXPECT_NEAR(item(select(abs(a), 0, 0)).to_double(), std::sqrt(5.0), 1e-6);
  EXPECT_EQ(item(sum(a, std::nullopt, false, std::nullopt)).to_complex(), std::complex<double>(2, 4));
  EXPECT_THROW(lt(a, b), NotImplementedError);
}

TEST(Complex, MatmulUsesComplexGemm) {
  Tensor a = full({2, 3}, Scalar(std::complex<double>(0, 1)), ScalarType::Complex128);
  Tensor b = full({3, 2}, Scalar(std::complex<double>(0, 1)), ScalarType::Complex128);
  Tensor c = mm(a, b);  // each entry: 3 * (i * i) = -3
  EXPECT_EQ(item(select(select(c, 0, 1), 0, 0)).to_complex(), std::complex<double>(-3, 0));
}
