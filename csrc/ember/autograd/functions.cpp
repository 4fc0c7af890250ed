#include "ember/autograd/functions.h"

#include "ember/autograd/forward_ad.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"

namespace ember::autograd {
namespace {
Tensor num(Scalar s) { return scalar_tensor(s, std::nullopt, /*wrapped=*/true); }
// A real input of an op with a complex result gets the real part of its complex gradient.
Tensor cast_like(const Tensor& g, ScalarType dtype) {
  if (g.dtype() == dtype) return g;
  return to_dtype(is_complex(g.dtype()) && !is_complex(dtype) ? real(g) : g, dtype);
}
// Complex gradients multiply by the conjugate of each partial derivative (PyTorch's convention).
Tensor cj(const Tensor& t) { return is_complex(t.dtype()) ? conj(t) : t; }
bool wants(const Node& n, size_t i) { return i < n.next_edges.size() && n.next_edges[i].valid(); }
}  // namespace

Tensor sum_to(const Tensor& grad, IntArrayRef shape) {
  if (IntArrayRef(grad.sizes()) == shape) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.sizes()[d] != 1)) dims.push_back(d);
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return reshape(r, shape);
}

TensorList AddBackward0::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  TensorList out(2);
  if (wants(*this, 0)) out[0] = cast_like(sum_to(g, self_sizes), self_dtype);
  if (wants(*this, 1)) {
    bool one = !alpha.is_bool() && alpha.to_complex() == std::complex<double>(1.0);
    Tensor go = one ? g : mul(g, num(alpha.is_complex() ? Scalar(std::conj(alpha.to_complex())) : alpha));
    out[1] = cast_like(sum_to(go, other_sizes), other_dtype);
  }
  return out;
}

TensorList MulBackward0::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  auto me = shared_from_this();
  Tensor a = self.unpack(me), b = other.unpack(me);
  TensorList out(2);
  if (wants(*this, 0)) out[0] = cast_like(sum_to(mul(g, cj(b)), a.sizes()), a.dtype());
  if (wants(*this, 1)) out[1] = cast_like(sum_to(mul(g, cj(a)), b.sizes()), b.dtype());
  return out;
}

TensorList DivBackward0::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  auto me = shared_from_this();
  Tensor a = self.unpack(me), b = other.unpack(me);
  TensorList out(2);
  if (wants(*this, 0)) out[0] = cast_like(sum_to(div(g, cj(b)), a.sizes()), a.dtype());
  if (wants(*this, 1)) out[1] = cast_like(sum_to(neg(div(mul(g, cj(a)), cj(mul(b, b)))), b.sizes()), b.dtype());
  return out;
}

TensorList PowBackward0::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  auto me = shared_from_this();
  Tensor a = self.unpack(me), e = exponent.unpack(me);
  TensorList out(2);
  if (wants(*this, 0)) {
    // d/da a^e = e * a^(e-1); where e == 0 the gradient is 0 (avoids 0 * inf at a == 0).
    // A wrapped exponent stays a wrapped double: wrapped - wrapped would round it to the default dtype.
    Tensor em1 = sub(e, num(1));
    if (is_wrapped_number(e)) {
      Scalar v = item(e);
      em1 = v.is_integral() ? num(v.to_int() - 1) : num(v.to_double() - 1.0);
      // a real number exponent: no mask pass (x ** 2's backward took 1.3x torch's time)
      if (!v.is_complex() && !v.is_bool()) {
        if (v.to_double() == 0.0) {
          out[0] = zeros(a.sizes(), a.dtype());
        } else {
          // e * a^(e-1); for e == 2, 2 * a (the same bits, one pass fewer)
          Tensor d = v.to_double() == 2.0 ? mul(a, e) : mul(e, pow(a, em1));
          out[0] = cast_like(sum_to(mul(g, cj(d)), a.sizes()), a.dtype());
        }
      }
    }
    if (!out[0].defined()) {
      Tensor d = mul(e, pow(a, em1));
      d = where(eq(e, num(0)), zeros(d.sizes(), d.dtype()), d);  // where, not a mask product: 0 * inf is nan
      out[0] = cast_like(sum_to(mul(g, cj(d)), a.sizes()), a.dtype());
    }
  }
  if (wants(*this, 1)) {
    // d/de a^e = a^e log(a); 0 where a == 0 and e >= 0 (a^e is 0 or 1 there: no 0 * -inf).
    Tensor d = mul(pow(a, e), log(a));
    // Complex exponents: the real ones with real part >= 0 (torch's rule).
    Tensor e_ge0 = is_complex(e.dtype()) ? logical_and(eq(imag(e), num(0)), ge(real(e), num(0))) : ge(e, num(0));
    d = where(logical_and(eq(a, num(0)), e_ge0), zeros(d.sizes(), d.dtype()), d);
    out[1] = cast_like(sum_to(mul(g, cj(d)), e.sizes()), e.dtype());
  }
  return out;
}

TensorList SumBackward1::apply(TensorList&& grads) {
  Tensor g = grads[0];
  if (!keepdim) {
    std::vector<int64_t> ds = dims;
    if (ds.empty())
      for (int64_t d = 0; d < static_cast<int64_t>(self_sizes.size()); ++d) ds.push_back(d);
    std::sort(ds.begin(), ds.end());
    for (int64_t d : ds) g = unsqueeze(g, d);
  }
  return {expand(g, self_sizes)};
}

TensorList MmBackward0::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  auto me = shared_from_this();
  TensorList out(2);
  if (wants(*this, 0)) out[0] = mm(g, cj(t_(mat2.unpack(me))));
  if (wants(*this, 1)) {
    // x @ w.t() (a Linear without bias): w's .grad arrives contiguous, so AccumulateGrad keeps it
    // without a transposing copy (230 us for a 1024x256 weight)
    Tensor m1 = cj(self.unpack(me));
    out[1] = mat2_transposed ? t_(mm(t_(g), m1)) : mm(t_(m1), g);
  }
  return out;
}

TensorList AddmmBackward0::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  auto me = shared_from_this();
  TensorList out(3);
  if (wants(*this, 0)) out[0] = sum_to(g, self_sizes);
  if (wants(*this, 1)) out[1] = mm(g, cj(t_(mat2.unpack(me))));
  if (wants(*this, 2)) {
    // A Linear's weight.t() gets (g^T @ mat1)^T, so the weight's .grad arrives contiguous and
    // AccumulateGrad keeps it without a copy.
    Tensor m1 = cj(mat1.unpack(me));
    out[2] = mat2_transposed ? t_(mm(t_(g), m1)) : mm(t_(m1), g);
  }
  return out;
}

TensorList BmmBackward0::apply(TensorList&& grads) {
  const Tensor& g = grads[0];
  auto me = shared_from_this();
  TensorList out(2);
  if (wants(*this, 0)) out[0] = bmm(g, cj(transpose(mat2.unpack(me), 1, 2)));
  if (wants(*this, 1)) out[1] = bmm(cj(transpose(self.unpack(me), 1, 2)), g);
  return out;
}

TensorList ToCopyBackward0::apply(TensorList&& grads) { return {cast_like(grads[0], self_dtype)}; }

TensorList CopyBackwards::apply(TensorList&& grads) {
  TensorList out(2);
  if (wants(*this, 1)) out[1] = cast_like(sum_to(grads[0], src_sizes), src_dtype);
  return out;
}

void LambdaBackward::record(const char* name, std::initializer_list<Tensor> outputs,
                            std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> saved_outputs, Fn f) {
  name_ = name;
  auto me = shared_from_this();
  for (const Tensor& o : outputs) set_history(o, me);
  saved.clear();
  for (const Tensor& t : inputs) saved.emplace_back(t, false);
  for (const Tensor& t : saved_outputs) saved.emplace_back(t, true);
  fn = std::move(f);
}

// ---- forward mode (Note [Forward AD]): tangents of the outputs from those of the inputs ----

namespace {
Tensor add_opt(const Tensor& a, const Tensor& b) { return !a.defined() ? b : !b.defined() ? a : add(a, b); }
}  // namespace

TensorList AddBackward0::jvp(const TensorList& t) {
  Tensor b = t[1];
  if (b.defined() && !(alpha.to_double() == 1.0 && !alpha.is_bool())) b = mul(b, num(alpha));
  return {add_opt(t[0], b)};  // broadcast to the output's shape when stored
}

TensorList MulBackward0::jvp(const TensorList& t) {
  auto me = shared_from_this();
  Tensor a = self.unpack(me), b = other.unpack(me);
  return {add_opt(t[0].defined() ? mul(t[0], b) : Tensor(), t[1].defined() ? mul(a, t[1]) : Tensor())};
}

TensorList DivBackward0::jvp(const TensorList& t) {
  auto me = shared_from_this();
  Tensor a = self.unpack(me), b = other.unpack(me);
  // d(a / b) = da / b - a db / b^2
  return {
      add_opt(t[0].defined() ? div(t[0], b) : Tensor(), t[1].defined() ? neg(div(mul(a, t[1]), mul(b, b))) : Tensor())};
}

TensorList SumBackward1::jvp(const TensorList& t) {
  if (!t[0].defined()) return {Tensor()};
  return {dims.empty() && !keepdim ? sum(t[0]) : sum(t[0], dims.empty() ? OptDims() : OptDims(dims), keepdim)};
}

TensorList MmBackward0::jvp(const TensorList& t) {
  auto me = shared_from_this();
  return {add_opt(t[0].defined() ? mm(t[0], mat2.unpack(me)) : Tensor(),
                  t[1].defined() ? mm(self.unpack(me), t[1]) : Tensor())};
}

TensorList AddmmBackward0::jvp(const TensorList& t) {
  auto me = shared_from_this();
  Tensor prod = add_opt(t[1].defined() ? mm(t[1], mat2.unpack(me)) : Tensor(),
                        t[2].defined() ? mm(mat1.unpack(me), t[2]) : Tensor());
  return {add_opt(t[0].defined() ? expand(t[0], out_sizes) : Tensor(), prod)};
}

TensorList BmmBackward0::jvp(const TensorList& t) {
  auto me = shared_from_this();
  return {add_opt(t[0].defined() ? bmm(t[0], mat2.unpack(me)) : Tensor(),
                  t[1].defined() ? bmm(self.unpack(me), t[1]) : Tensor())};
}

// ---- in-place ops and views ----

namespace {
// Gradient of a base when one of its views was modified in place by `fn` (PyTorch's CopySlices).
struct CopySlices : Node {
  Shape base_sizes, base_strides;
  int64_t base_offset = 0;
  ScalarType base_dtype;
  Shape view_sizes, view_strides;
  int64_t view_offset = 0;
  std::shared_ptr<Node> fn;
  std::string name() const override { return "CopySlices"; }
  TensorList apply(TensorList&& grads) override {
    // Lay the gradient out like the base so the view's geometry indexes it directly.
    Tensor result = empty_strided(base_sizes, base_strides, grads[0].dtype());
    copy_(result, grads[0]);
    Tensor slot = as_strided(result, view_sizes, view_strides, view_offset - base_offset);
    TensorList r = fn->apply({clone(slot)});
    if (r.size() > 0 && r[0].defined())
      copy_(slot, r[0]);
    else
      fill_(slot, 0);
    TensorList out{result};
    for (size_t i = 1; i < r.size(); ++i) out.push_back(r[i]);
    return out;
  }
  void release_variables() override { fn->release_variables(); }
};
}  // namespace

void check_no_grad_view_inplace(const Tensor& self, std::initializer_list<const Tensor*> others) {
  if (!GradMode::is_enabled() || !self.impl()->view_base || !self.impl()->view_made_no_grad) return;
  if (requires_grad(Tensor(self.impl()->view_base)) || any_requires_grad(others)) check_inplace(self, true);
}

// Note [Multi-output views] (ops/shape.cpp): torch's error, naming the view's own backward node
// ("Output 1 of SplitWithSizes"; a select of one such output says "Select").
void throw_multi_output_view_inplace(const Tensor& view, bool base_modified) {
  AutogradMetaImpl* m = meta(view);
  std::string what = "A view was created in no_grad mode and is being modified inplace with grad mode enabled.";
  if (m && m->grad_fn) {
    std::string name = m->grad_fn->name();
    size_t cut = name.rfind("Backward");
    if (cut != std::string::npos && cut > 0) name.resize(cut);
    what = detail::str_cat("Output ", m->output_nr, " of ", name, " is a view and ",
                           base_modified ? "its base or another view of its base has been modified inplace."
                                         : "is being modified inplace.");
  }
  throw Error(detail::str_cat(what,
                              " This view is the output of a function that returns multiple views. Such functions do "
                              "not allow the output views to be modified inplace. You should replace the inplace "
                              "operation by an out-of-place one."));
}

void check_inplace(const Tensor& self, bool any_input_requires_grad) {
  if (!GradMode::is_enabled()) return;
  if (self.impl()->view_base && self.impl()->view_made_no_grad)
    throw Error(
        "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
        "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
        "and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
        "outside (if you want the inplace to be tracked).");
  if (self.impl()->view_base && self.impl()->view_multi_output) throw_multi_output_view_inplace(self, false);
  AutogradMetaImpl* m = meta(self);
  if (m && m->requires_grad && !m->grad_fn)
    throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
  if (self.impl()->view_base) {
    AutogradMetaImpl* bm = meta(Tensor(self.impl()->view_base));
    if (bm && bm->requires_grad && !bm->grad_fn)
      throw Error("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  (void)any_input_requires_grad;
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& node) {
  if (node->num_inputs() == 0) node->add_input_metadata(self);
  AutogradMetaImpl& m = meta_or_create(self);
  if (!self.impl()->view_base) {
    m.grad_fn = node;  // node already has one input slot: the out-of-place result it produced
    m.output_nr = 0;
    m.requires_grad = false;
    return;
  }
  // In-place on a view: the base's new history runs `node` on the view's slice of its gradient.
  const Tensor base(self.impl()->view_base);
  auto cs = std::make_shared<CopySlices>();
  cs->base_sizes = base.sizes();
  cs->base_strides = base.strides();
  cs->base_offset = base.storage_offset();
  cs->base_dtype = base.dtype();
  cs->view_sizes = self.sizes();
  cs->view_strides = self.strides();
  cs->view_offset = self.storage_offset();
  cs->fn = node;
  cs->next_edges.push_back(gradient_edge(base));
  for (size_t i = 1; i < node->next_edges.size(); ++i) cs->next_edges.push_back(node->next_edges[i]);
  AutogradMetaImpl& bm = meta_or_create(base);
  bm.grad_fn = cs;
  bm.output_nr = cs->add_input_metadata(base);
  bm.requires_grad = false;
  // The view's own history is now "a view of the new base".
  auto vb = std::make_shared<ViewBackward>();
  vb->name_ = "AsStridedBackward0";
  vb->next_edges.push_back(Edge{cs, 0});
  Shape bs = base.sizes(), bst = base.strides(), vs = self.sizes(), vst = self.strides();
  int64_t off = self.storage_offset() - base.storage_offset();
  vb->backward = [bs, bst, vs, vst, off](const Tensor& g) {
    Tensor laid = empty_strided(bs, bst, g.dtype());
    fill_(laid, 0);
    Tensor slot = as_strided(laid, vs, vst, off + laid.storage_offset());
    copy_(slot, g);
    return laid;
  };
  m.grad_fn = vb;
  m.output_nr = vb->add_input_metadata(self);
  self.impl()->view_version.store(self.version(), std::memory_order_relaxed);  // its history is current
}

Tensor as_strided_backward(const Tensor& g, const Shape& in_sizes, const Shape& in_strides, int64_t in_off,
                           const Shape& sizes, const Shape& strides, int64_t off) {
  // Scatter-add g into the storage range both geometries cover, then read the input's
  // geometry back. index_add and index_select are differentiable (linear in g), so the
  // result records history under create_graph and as_strided/unfold differentiate twice.
  auto extent = [](const Shape& sz, const Shape& st, int64_t o) {
    int64_t hi = o;
    for (size_t i = 0; i < sz.size(); ++i)
      if (sz[i] > 0) hi += (sz[i] - 1) * st[i];
    return hi;
  };
  int64_t base = std::min(in_off, off);
  int64_t top = std::max(extent(in_sizes, in_strides, in_off), extent(sizes, strides, off));
  // Storage positions (relative to base) of every element of a geometry, in row-major order.
  auto positions = [base](const Shape& sz, const Shape& st, int64_t o) {
    Tensor pos = empty({numel_of(sz)}, ScalarType::Int64);
    int64_t* p = pos.data<int64_t>();
    int64_t n = pos.numel(), nd = static_cast<int64_t>(sz.size());
    std::vector<int64_t> idx(nd, 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t at = o - base;
      for (int64_t d = 0; d < nd; ++d) at += idx[d] * st[d];
      p[i] = at;
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (++idx[d] < sz[d]) break;
        idx[d] = 0;
      }
    }
    return pos;
  };
  // Accumulate half/bfloat16 in float32; float64 and complex keep their dtype.
  ScalarType acc =
      g.dtype() == ScalarType::Float16 || g.dtype() == ScalarType::BFloat16 ? ScalarType::Float32 : g.dtype();
  Tensor buf =
      index_add(zeros({top - base + 1}, acc), 0, positions(sizes, strides, off), reshape(to_dtype(g, acc), {-1}));
  Tensor r = reshape(index_select(buf, 0, positions(in_sizes, in_strides, in_off)), in_sizes);
  return to_dtype(r, g.dtype());
}

void set_view_history(const Tensor& input, const Tensor& view, const char* name,
                      std::function<Tensor(const Tensor&)> backward) {
  // Ops that build a view under an internal no_grad guard record it here, in the caller's mode.
  if (view.impl()->view_base) view.impl()->view_made_no_grad = !GradMode::is_enabled();
  if (forward_ad::is_active()) forward_ad::on_view(input, view);
  if (!GradMode::is_enabled() || !requires_grad(input)) return;
  auto n = std::make_shared<ViewBackward>();
  n->name_ = name;
  n->backward = std::move(backward);
  n->next_edges = {gradient_edge(input)};
  set_history(view, n);
}

}  // namespace ember::autograd
