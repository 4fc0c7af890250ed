// Note [Elementwise iterator]
// TensorIter lines up one output and up to kMaxInputs inputs of one broadcast shape, then walks
// them as rows: loop(data, strides, n) is called with byte pointers and byte strides for each
// operand and the row length n. Before walking, dims are ordered by the output's strides
// (smallest innermost) and adjacent dims merged when every operand allows it, so contiguous
// data becomes one long row and the loop body can take a vectorized fast path. Inputs must
// already have the dtype the kernel computes in; the ops cast them first.
#pragma once
#include <array>
#include <initializer_list>

#include "ember/core/tensor.h"

namespace ember {

// Non-owning reference to a row loop (avoids instantiating the walker per kernel).
class RowLoop {
 public:
  template <typename F>
  RowLoop(const F& f)  // NOLINT
      : obj_(&f),
        call_([](const void* o, char** d, const int64_t* s, int64_t n) { (*static_cast<const F*>(o))(d, s, n); }) {}
  void operator()(char** d, const int64_t* s, int64_t n) const { call_(obj_, d, s, n); }

 private:
  const void* obj_;
  void (*call_)(const void*, char**, const int64_t*, int64_t);
};

// The same for a loop over `rows` rows of n elements: row r of operand k starts at
// data[k] + r * outer[k] (TensorIter::for_each_2d).
class Loop2d {
 public:
  template <typename F>
  Loop2d(const F& f)  // NOLINT
      : obj_(&f), call_([](const void* o, char** d, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
          (*static_cast<const F*>(o))(d, s, n, rows, outer);
        }) {}
  void operator()(char** d, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) const {
    call_(obj_, d, s, n, rows, outer);
  }

 private:
  const void* obj_;
  void (*call_)(const void*, char**, const int64_t*, int64_t, int64_t, const int64_t*);
};

class TensorIter {
 public:
  static constexpr int kMaxOperands = 4;
  static constexpr int kMaxDims = 25;  // fixed arrays: building an iterator allocates nothing

  // `out` undefined: allocated with out_dtype in the broadcast shape, laid out like the
  // inputs. Defined: must have the broadcast shape (resized first when `resize_out`), and
  // unless `check_mem_overlap` is false (fill_: idempotent) it may neither have internal
  // overlap nor partly overlap an input (Note [Memory overlap]).
  TensorIter(Tensor& out, std::initializer_list<Tensor> inputs, ScalarType out_dtype, const char* op_name,
             bool resize_out = false, bool check_mem_overlap = true);

  int64_t numel() const { return numel_; }
  int ntensors() const { return ntensors_; }
  // Walks every element; splits across threads above `grain` elements.
  void for_each(RowLoop loop, int64_t grain = kGrainSizeDefault) const;
  // The same, handing the loop whole rows along the next dim at once: one call and no carry per
  // row, which short rows need (a permuted copy of 64-float attention-head rows took twice torch's
  // time row by row).
  void for_each_2d(Loop2d loop, int64_t grain = kGrainSizeDefault) const;
  static constexpr int64_t kGrainSizeDefault = 32768;
  // Operand t's one value (0 is the output) when it is broadcast over the whole iteration (no
  // dim moves it), else null: lets a kernel specialize on a scalar operand (pow's exponent).
  const char* broadcast_value(int t) const {
    for (int d = 0; d < ndim_; ++d)
      if (shape_[d] != 1 && strides_[d * ntensors_ + t] != 0) return nullptr;
    return data_[t];
  }

 private:
  void walk(RowLoop loop, int64_t begin, int64_t end) const;
  void walk_2d(Loop2d loop, int64_t begin, int64_t end) const;
  int ntensors_ = 0;
  int ndim_ = 0;
  int64_t numel_ = 1;
  int64_t shape_[kMaxDims];                   // innermost first, after reordering and merging
  int64_t strides_[kMaxDims * kMaxOperands];  // strides_[d * ntensors_ + t], bytes
  std::array<char*, kMaxOperands> data_{};
};

}  // namespace ember
