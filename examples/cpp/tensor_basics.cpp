// Ember from C++ alone: create tensors, take views, do arithmetic, reduce, multiply matrices.
#include <ember/ember.h>

#include <cstdio>

int main() {
  using namespace ember;
  Tensor a = reshape(arange(0, 6, 1, ScalarType::Float32), {2, 3});  // [[0,1,2],[3,4,5]]
  Tensor b = ones({3}, ScalarType::Float32);
  Tensor c = a * 2.0 + b;                    // broadcasts b over rows
  Tensor row = select(c, 0, 1);              // a view: [7, 9, 11]
  Tensor p = matmul(a, transpose(a, 0, 1));  // 2x2
  std::printf("sum(c) = %g\n", item(sum(c)).to_double());
  std::printf("row[2] = %g\n", item(select(row, 0, 2)).to_double());
  std::printf("a @ a.T = [[%g, %g], [%g, %g]]\n", p.data<float>()[0], p.data<float>()[1], p.data<float>()[2],
              p.data<float>()[3]);
  bool ok = item(sum(c)).to_double() == 36.0 && p.data<float>()[3] == 50.0f;
  std::printf("%s\n", ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
