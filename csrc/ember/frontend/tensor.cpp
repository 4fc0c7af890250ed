// at::Tensor's methods: each calls the ember op or autograd call Python's Tensor method calls.
#include "ember/frontend/tensor.h"

#include <iostream>

#include "ember/autograd/engine.h"
#include "ember/autograd/functions.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/frontend/functions.h"
#include "ember/ops/operators.h"
#include "ember/ops/random.h"

namespace at {
namespace ag = ember::autograd;

namespace {
ember::Tensor wrap(const c10::Scalar& s) { return ember::wrap_scalar(s); }
ember::OptDims dims_of(IntArrayRef d) { return d.empty() ? ember::OptDims() : ember::OptDims(d.vec()); }
void check_cpu(const Device& d, const char* what) {
  if (!d.is_cpu()) EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; ", what, " ", d.str());
}
// Names the node an op just recorded after libtorch's overload (add(Tensor, Scalar) records
// AddBackward1 there; the op itself names it as Python's torch does).
template <typename NodeT>
Tensor named(Tensor r, const char* name) {
  auto* m = ag::meta(r);
  if (auto* n = dynamic_cast<NodeT*>(m ? m->grad_fn.get() : nullptr)) n->name_override = name;
  return r;
}
template <typename NodeT>
const Tensor& named_inplace(const Tensor& self, const char* name) {
  named<NodeT>(self, name);
  return self;
}
Tensor filled_remainder(const c10::Scalar& a, const Tensor& b) {
  Tensor r = at::empty_like(b);
  r.fill_(a);
  ember::binary_op(ember::BinaryOp::Remainder, r, b, r, /*inplace=*/true);
  return r;
}
}  // namespace

// ---- properties ----

TensorOptions Tensor::options() const { return TensorOptions().dtype(scalar_type()).device(device()); }

bool Tensor::is_contiguous(MemoryFormat f) const { return ember::is_contiguous(*this, f); }

bool Tensor::is_alias_of(const Tensor& o) const {
  return defined() && o.defined() && impl()->storage().get() == o.impl()->storage().get();
}

bool Tensor::is_nonzero() const {
  EMBER_CHECK(numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  EMBER_CHECK(numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return ember::item(*this).to_bool();
}

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedType";
  std::string s = device().is_cpu() ? "CPU" : "CUDA";
  return s + c10::toString(scalar_type()) + "Type";
}

int64_t Tensor::use_count() const { return defined() ? static_cast<int64_t>(impl()->use_count()) : 0; }

void Tensor::print() const {
  if (defined())
    std::cerr << "[" << toString() << " " << sizes() << "]" << std::endl;
  else
    std::cerr << "[UndefinedTensor]" << std::endl;
}

void Tensor::check_element_type(ScalarType want) const {
  EMBER_CHECK(defined(), "Cannot access data pointer of Tensor that doesn't have storage");
  EMBER_CHECK(scalar_type() == want, "expected scalar type ", c10::toString(want), " but found ",
              c10::toString(scalar_type()));
}

void Tensor::check_accessor_dim(size_t n) const {
  EMBER_CHECK(dim() == static_cast<int64_t>(n), "TensorAccessor expected ", n, " dims but tensor has ", dim());
}

Tensor Tensor::data() const {
  Tensor d = ag::detach(*this);
  d.impl()->share_version_counter(ember::IntrusivePtr<ember::VersionCounter>::make());
  return d;
}

c10::Scalar Tensor::item() const { return c10::Scalar(ember::item(*this)); }

// ---- autograd ----

bool Tensor::requires_grad() const { return ag::requires_grad(*this); }

const Tensor& Tensor::requires_grad_(bool r) const {
  ag::set_requires_grad(*this, r);
  return *this;
}

bool Tensor::is_leaf() const { return ag::is_leaf(*this); }
Tensor Tensor::grad() const { return defined() ? Tensor(ag::grad(*this)) : Tensor(); }
void Tensor::set_grad(const Tensor& g) const { ag::set_grad(*this, g); }
std::shared_ptr<Node> Tensor::grad_fn() const { return ag::grad_fn(*this); }

int64_t Tensor::output_nr() const {
  auto* m = ag::meta(*this);
  return m ? m->output_nr : 0;
}

void Tensor::retain_grad() const { ag::retain_grad(*this); }

bool Tensor::retains_grad() const {
  auto* m = ag::meta(*this);
  return m && m->retains_grad;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<TensorList> inputs) const {
  ag::BackwardOptions o;
  o.create_graph = create_graph;
  o.keep_graph = retain_graph.value_or(create_graph);
  o.accumulate = true;
  std::vector<ember::Tensor> in;
  if (inputs) {
    EMBER_CHECK(!inputs->empty(), "'inputs' argument to backward() cannot be empty.");
    in.assign(inputs->begin(), inputs->end());
  }
  ag::run_backward({*this}, {gradient}, in, o);
}

Tensor Tensor::detach() const { return ag::detach(*this); }

const Tensor& Tensor::detach_() const {
  if (auto* m = ag::meta(*this)) {
    EMBER_CHECK(!impl()->view_base, "Can't detach views in-place. Use detach() instead.");
    m->grad_fn.reset();
    m->requires_grad = false;
  }
  return *this;
}

void Tensor::set_data(const Tensor& new_data) const {
  EMBER_CHECK(new_data.defined(), "set_data: new_data must be defined");
  EMBER_CHECK(new_data.device() == device(), "data set to a tensor that requires gradients must match device");
  impl()->set_storage(new_data.impl()->storage());
  impl()->set_dtype(new_data.scalar_type());
  impl()->set_geometry(new_data.ember::Tensor::sizes(), new_data.ember::Tensor::strides(), new_data.storage_offset());
}

unsigned Tensor::register_hook_impl(std::function<Tensor(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  ag::GradHook h = [hook = std::move(hook)](const ember::Tensor& g) -> ember::Tensor { return hook(Tensor(g)); };
  if (is_leaf()) {
    ag::add_leaf_hook(*this, std::move(h));
    return static_cast<unsigned>(ag::meta(*this)->hooks.size() - 1);
  }
  grad_fn()->add_pre_hook(static_cast<uint32_t>(output_nr()), std::move(h));
  return static_cast<unsigned>(grad_fn()->pre_hooks().size() - 1);
}

void Tensor::remove_hook(unsigned) const {
  EMBER_NOT_IMPLEMENTED("Tensor::remove_hook is not supported by Ember's C++ frontend");
}

// ---- conversion ----

Tensor Tensor::to(TensorOptions options, bool, bool copy, std::optional<MemoryFormat> memory_format) const {
  if (options.has_device()) check_cpu(options.device(), "cannot move to");
  ScalarType dt = options.has_dtype() ? options.dtype().toScalarType() : scalar_type();
  Tensor r = ember::to_dtype(*this, dt, copy);
  if (memory_format && *memory_format != MemoryFormat::Preserve) r = ember::contiguous(r, *memory_format);
  return r;
}

Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) const {
  return to(TensorOptions().device(device).dtype(dtype), non_blocking, copy, memory_format);
}

Tensor Tensor::to(ScalarType dtype, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) const {
  return to(TensorOptions().dtype(dtype), non_blocking, copy, memory_format);
}

Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) const {
  return to(other.options(), non_blocking, copy, memory_format);
}

Tensor Tensor::cpu() const { return *this; }

Tensor Tensor::cuda() const { EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot move to cuda"); }

Tensor Tensor::contiguous(MemoryFormat f) const { return ember::contiguous(*this, f); }

Tensor Tensor::clone(std::optional<MemoryFormat> f) const {
  return ember::clone(*this, f.value_or(MemoryFormat::Preserve));
}

// ---- views and shape ----

Tensor Tensor::view(IntArrayRef size) const { return ember::view(*this, to_ember(size)); }
Tensor Tensor::view(ScalarType dtype) const { return ember::view_dtype(*this, dtype); }
Tensor Tensor::reshape(IntArrayRef shape) const { return ember::reshape(*this, to_ember(shape)); }
Tensor Tensor::expand(IntArrayRef size, bool) const { return ember::expand(*this, to_ember(size)); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return ember::squeeze(*this, std::vector<int64_t>{dim}); }
Tensor Tensor::squeeze(IntArrayRef dims) const { return ember::squeeze(*this, dims.vec()); }
Tensor Tensor::unsqueeze(int64_t dim) const { return ember::unsqueeze(*this, dim); }

namespace {
// In-place view ops change the geometry of the tensor itself (as the Python bindings do).
const Tensor& set_geometry_from(const Tensor& self, const ember::Tensor& view) {
  if (ag::requires_grad(self))
    EMBER_NOT_IMPLEMENTED(
        "in-place view ops (squeeze_, unsqueeze_, t_, transpose_) on a tensor that requires grad are not "
        "supported; use the out-of-place form");
  self.impl()->set_geometry(view.sizes(), view.strides(), view.storage_offset());
  return self;
}
}  // namespace

const Tensor& Tensor::squeeze_() const { return set_geometry_from(*this, squeeze()); }
const Tensor& Tensor::squeeze_(int64_t dim) const { return set_geometry_from(*this, squeeze(dim)); }
const Tensor& Tensor::unsqueeze_(int64_t dim) const { return set_geometry_from(*this, unsqueeze(dim)); }
const Tensor& Tensor::t_() const { return set_geometry_from(*this, t()); }
const Tensor& Tensor::transpose_(int64_t d0, int64_t d1) const { return set_geometry_from(*this, transpose(d0, d1)); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return ember::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const { return ember::unflatten(*this, dim, to_ember(sizes)); }
Tensor Tensor::permute(IntArrayRef dims) const { return ember::permute(*this, to_ember(dims)); }
Tensor Tensor::movedim(IntArrayRef s, IntArrayRef d) const { return ember::movedim(*this, to_ember(s), to_ember(d)); }
Tensor Tensor::movedim(int64_t s, int64_t d) const { return ember::movedim(*this, {s}, {d}); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ember::transpose(*this, d0, d1); }
Tensor Tensor::t() const {
  Tensor r = ember::t_(*this);
  // t() of a 0-d or 1-d tensor is an alias; torch still names its node TBackward0.
  auto* m = ag::meta(r);
  if (auto* n = dynamic_cast<ag::ViewBackward*>(m ? m->grad_fn.get() : nullptr))
    if (n->name_ == "AliasBackward0") n->name_ = "TBackward0";
  return r;
}
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return ember::narrow(*this, dim, start, length);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return ember::select(*this, dim, index); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
Tensor Tensor::unfold(int64_t d, int64_t size, int64_t step) const { return ember::unfold(*this, d, size, step); }
Tensor Tensor::diagonal(int64_t o, int64_t d1, int64_t d2) const { return ember::diagonal(*this, o, d1, d2); }
Tensor Tensor::diag(int64_t d) const { return ember::diag(*this, d); }
Tensor Tensor::tril(int64_t d) const { return ember::tril(*this, d); }
Tensor Tensor::triu(int64_t d) const { return ember::triu(*this, d); }

namespace {
std::vector<Tensor> to_vec(const std::vector<ember::Tensor>& v) { return std::vector<Tensor>(v.begin(), v.end()); }
}  // namespace

std::vector<Tensor> Tensor::chunk(int64_t n, int64_t dim) const { return to_vec(ember::chunk(*this, n, dim)); }
std::vector<Tensor> Tensor::split(int64_t s, int64_t dim) const { return to_vec(ember::split(*this, s, dim)); }
std::vector<Tensor> Tensor::split(IntArrayRef s, int64_t dim) const {
  return to_vec(ember::split_with_sizes(*this, to_ember(s), dim));
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef s, int64_t dim) const { return split(s, dim); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return to_vec(ember::unbind(*this, dim)); }
Tensor Tensor::repeat(IntArrayRef r) const { return ember::repeat(*this, to_ember(r)); }
Tensor Tensor::tile(IntArrayRef d) const { return ember::tile(*this, to_ember(d)); }
Tensor Tensor::flip(IntArrayRef d) const { return ember::flip(*this, to_ember(d)); }
Tensor Tensor::roll(IntArrayRef s, IntArrayRef d) const { return at::roll(*this, s, d); }
Tensor Tensor::repeat_interleave(const Tensor& r, std::optional<int64_t> dim) const {
  return ember::repeat_interleave(*this, r, dim);
}
Tensor Tensor::repeat_interleave(int64_t r, std::optional<int64_t> dim) const {
  return at::repeat_interleave(*this, r, dim);
}
const Tensor& Tensor::resize_(IntArrayRef size) const {
  ember::Tensor h = *this;
  ember::resize_(h, to_ember(size));
  bump_version("resize_");
  return *this;
}

// ---- indexing (Python's x[...] rules, as the Python bindings apply them) ----

namespace indexing {

Slice::Slice(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step) {
  step_ = step.value_or(1);
  EMBER_CHECK_VALUE(step_ != 0, "slice step cannot be zero");
  EMBER_CHECK_VALUE(step_ > 0, "step must be greater than zero");
  start_ = start.value_or(0);
  stop_ = stop.value_or(INT64_MAX);
}

std::ostream& operator<<(std::ostream& os, const Slice& s) {
  return os << s.start() << ":" << s.stop() << ":" << s.step();
}

TensorIndex::TensorIndex(const char* s) : type_(TensorIndexType::Ellipsis) {
  EMBER_CHECK_VALUE(std::string_view(s) == "...", "Expected \"...\" to represent an ellipsis index, but got \"", s,
                    "\"");
}

std::ostream& operator<<(std::ostream& os, const TensorIndex& i) {
  if (i.is_none()) return os << "None";
  if (i.is_ellipsis()) return os << "...";
  if (i.is_integer()) return os << i.integer();
  if (i.is_boolean()) return os << (i.boolean() ? "true" : "false");
  if (i.is_slice()) return os << i.slice();
  return os << i.tensor();
}

}  // namespace indexing

namespace {

struct Indexed {
  ember::Tensor view;
  std::vector<ember::Tensor> indices;
  bool advanced = false;
};

Indexed apply_index(const Tensor& self, ArrayRef<indexing::TensorIndex> items) {
  using indexing::TensorIndex;
  EMBER_CHECK_INDEX(!(self.dim() == 0 && items.size() == 1 && items[0].is_integer()),
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                    "convert a 0-dim tensor to a number");
  int64_t consumed = 0;  // dims of self the index addresses
  for (const TensorIndex& it : items) {
    if (it.is_integer() || it.is_slice()) ++consumed;
    if (it.is_tensor()) {
      const Tensor& t = it.tensor();
      if (t.scalar_type() == kBool || t.scalar_type() == kByte)
        consumed += t.dim();
      else
        ++consumed;
    }
  }
  EMBER_CHECK_INDEX(consumed <= self.dim(), "too many indices for tensor of dimension ", self.dim());
  Indexed r;
  ember::Tensor t = self;
  int64_t dim = 0, report_dim = 0;
  auto skip = [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) r.indices.push_back(ember::Tensor());
    dim += n;
    report_dim += n;
  };
  for (const TensorIndex& it : items) {
    if (it.is_none()) {
      t = ember::unsqueeze(t, dim);
      skip(1);
    } else if (it.is_ellipsis()) {
      skip(self.dim() - consumed);
    } else if (it.is_slice()) {
      const indexing::Slice& s = it.slice();
      t = ember::slice(t, dim, s.start(), s.stop(), s.step());
      skip(1);
    } else if (it.is_integer()) {
      int64_t size = dim < t.dim() ? t.sizes()[dim] : 0;
      int64_t v = it.integer();
      EMBER_CHECK_INDEX(v >= -size && v < size, "index ", v, " is out of bounds for dimension ", report_dim,
                        " with size ", size);
      t = ember::select(t, dim, v);
      ++report_dim;
    } else if (it.is_boolean()) {
      // x[true]: a new dim of size 1; x[false]: a new dim of size 0.
      t = ember::unsqueeze(t, dim);
      r.advanced = true;
      r.indices.push_back(ember::full({1}, ember::Scalar(it.boolean()), ember::ScalarType::Bool));
      ++dim;
    } else {
      ember::Tensor ix = it.tensor();
      EMBER_CHECK_INDEX(ember::is_integral(ix.dtype(), /*include_bool=*/true),
                        "tensors used as indices must be long, int, byte or bool tensors");
      if (ix.dim() == 0 && ix.dtype() != ember::ScalarType::Bool && ix.dtype() != ember::ScalarType::UInt8) {
        int64_t size = dim < t.dim() ? t.sizes()[dim] : 0;
        int64_t v = ember::item(ix).to_int();
        EMBER_CHECK_INDEX(v >= -size && v < size, "index ", v, " is out of bounds for dimension ", report_dim,
                          " with size ", size);
        t = ember::select(t, dim, v);
        ++report_dim;
        continue;
      }
      r.advanced = true;
      if (ix.dtype() == ember::ScalarType::Bool && ix.dim() == 0) {
        t = ember::unsqueeze(t, dim);
        ix = ember::reshape(ix, {1});
      }
      r.indices.push_back(ix);
      int64_t n = (ix.dtype() == ember::ScalarType::Bool || ix.dtype() == ember::ScalarType::UInt8) ? ix.dim() : 1;
      dim += n;
      report_dim += n;
    }
  }
  r.view = t;
  return r;
}

}  // namespace

Tensor Tensor::index(ArrayRef<indexing::TensorIndex> indices) const {
  Indexed ix = apply_index(*this, indices);
  if (ix.advanced) return ember::index(ix.view, ix.indices);
  return ix.view.is_same(*this) ? ember::alias(*this) : ix.view;
}

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return index(ArrayRef<indexing::TensorIndex>(indices));
}

const Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& rhs) const {
  Indexed ix = apply_index(*this, indices);
  // Leading size-1 dims of the value are dropped, as Python's x[...] = v does.
  int64_t lead = 0;
  while (lead < rhs.dim() && rhs.sizes()[lead] == 1) ++lead;
  ember::Tensor src =
      lead > 0 ? ember::reshape(rhs, ember::Shape(rhs.sizes().begin() + lead, rhs.sizes().end())) : ember::Tensor(rhs);
  if (ix.advanced) {
    ember::index_put_(ix.view, ix.indices, src);
    return *this;
  }
  ember::Tensor dst = ix.view.is_same(*this) ? ember::alias(*this) : ix.view;
  if (src.dim() == 0 && dst.sizes() != src.sizes()) {
    ember::fill_(dst, src);
    return *this;
  }
  if (src.sizes() != dst.sizes()) src = ember::expand(src, dst.sizes());
  ember::copy_(dst, src);
  return *this;
}

const Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const c10::Scalar& v) const {
  ScalarType dt = scalar_type();
  Tensor value = (dt == kHalf || dt == kBFloat16)
                     ? Tensor(ember::to_dtype(ember::full({}, v, v.is_floating() ? kDouble : v.natural_dtype()), dt))
                     : Tensor(ember::full({}, v, dt));
  return index_put_(indices, value);
}

const Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& rhs) const {
  return index_put_(ArrayRef<indexing::TensorIndex>(indices), rhs);
}

const Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const c10::Scalar& v) const {
  return index_put_(ArrayRef<indexing::TensorIndex>(indices), v);
}

Tensor Tensor::operator[](int64_t i) const { return index({indexing::TensorIndex(i)}); }
Tensor Tensor::operator[](const Tensor& i) const { return index({indexing::TensorIndex(i)}); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return ember::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index, bool) const { return ember::gather(*this, dim, index); }
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const c10::Scalar& value) const {
  return at::scatter(*this, dim, index, value);
}
const Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return copy_(scatter(dim, index, src));
}
const Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const c10::Scalar& value) const {
  return copy_(scatter(dim, index, value));
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
const Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const {
  ember::Tensor self = *this;  // a handle to the same tensor: libtorch's in-place methods are const
  ember::scatter_add_(self, dim, index, src);
  return *this;
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& src, const c10::Scalar& alpha) const {
  return ember::index_add(*this, dim, index, src, alpha);
}
const Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& src, const c10::Scalar& alpha) const {
  ember::Tensor self = *this;  // as scatter_add_
  ember::index_add_(self, dim, index, src, alpha);
  return *this;
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const c10::Scalar& value) const {
  return ember::index_fill(*this, dim, index, ember::full({}, value, scalar_type()));
}
const Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const c10::Scalar& value) const {
  return copy_(index_fill(dim, index, value));
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::index_copy(*this, dim, index, src);
}
Tensor Tensor::masked_fill(const Tensor& mask, const c10::Scalar& value) const {
  return ember::masked_fill(*this, mask, wrap(value));
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return ember::masked_fill(*this, mask, value);
}
const Tensor& Tensor::masked_fill_(const Tensor& mask, const c10::Scalar& value) const {
  ember::Tensor h = *this;
  ember::masked_fill_(h, mask, wrap(value));
  return *this;
}
const Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) const {
  ember::Tensor h = *this;
  ember::masked_fill_(h, mask, value);
  return *this;
}
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& src) const {
  return ember::masked_scatter(*this, mask, src);
}
Tensor Tensor::take(const Tensor& index) const { return ember::take(*this, index); }
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return ember::where(condition, *this, other);
}

// ---- arithmetic ----

Tensor Tensor::add(const Tensor& o, const c10::Scalar& a) const { return ember::add(*this, o, a); }
Tensor Tensor::add(const c10::Scalar& o, const c10::Scalar& a) const {
  return named<ag::AddBackward0>(ember::add(*this, wrap(o), a), "AddBackward1");
}
Tensor Tensor::sub(const Tensor& o, const c10::Scalar& a) const { return ember::sub(*this, o, a); }
Tensor Tensor::sub(const c10::Scalar& o, const c10::Scalar& a) const {
  return named<ag::SubBackward0>(ember::sub(*this, wrap(o), a), "SubBackward1");
}
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(const c10::Scalar& o) const {
  return named<ag::MulBackward0>(ember::mul(*this, wrap(o)), "MulBackward1");
}
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> mode) const { return at::div(*this, o, mode); }
Tensor Tensor::div(const c10::Scalar& o, std::optional<std::string_view> mode) const {
  if (mode) return at::div(*this, Tensor(wrap(o)), mode);
  return named<ag::DivBackward0>(ember::div(*this, wrap(o)), "DivBackward1");
}
Tensor Tensor::remainder(const Tensor& o) const { return ember::remainder(*this, o); }
Tensor Tensor::remainder(const c10::Scalar& o) const { return ember::remainder(*this, wrap(o)); }
Tensor Tensor::fmod(const Tensor& o) const { return ember::fmod(*this, o); }
Tensor Tensor::fmod(const c10::Scalar& o) const { return ember::fmod(*this, wrap(o)); }
Tensor Tensor::floor_divide(const Tensor& o) const { return ember::floor_divide(*this, o); }
Tensor Tensor::floor_divide(const c10::Scalar& o) const { return ember::floor_divide(*this, wrap(o)); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const c10::Scalar& e) const { return ember::pow(*this, wrap(e)); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor Tensor::atan2(const Tensor& o) const { return ember::atan2(*this, o); }
Tensor Tensor::lerp(const Tensor& end, const c10::Scalar& w) const { return ember::lerp(*this, end, wrap(w)); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& w) const { return ember::lerp(*this, end, w); }
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const c10::Scalar& v) const {
  return ember::addcmul(*this, t1, t2, v);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const c10::Scalar& v) const {
  return ember::addcdiv(*this, t1, t2, v);
}
Tensor Tensor::clamp(const std::optional<c10::Scalar>& min, const std::optional<c10::Scalar>& max) const {
  return at::clamp(*this, min, max);
}
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return at::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(const c10::Scalar& min) const { return at::clamp(*this, min, std::nullopt); }
Tensor Tensor::clamp_max(const c10::Scalar& max) const { return at::clamp(*this, std::nullopt, max); }
Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return ember::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return ember::bmm(*this, o); }
Tensor Tensor::mv(const Tensor& v) const { return ember::mv(*this, v); }
Tensor Tensor::dot(const Tensor& o) const { return ember::dot(*this, o); }
Tensor Tensor::outer(const Tensor& o) const { return ember::outer(*this, o); }
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha) const {
  return ember::addmm(*this, m1, m2, beta, alpha);
}
Tensor Tensor::inverse() const { return ember::linalg_inv(*this); }
Tensor Tensor::det() const { return ember::linalg_det(*this); }
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dt) const { return ember::softmax(*this, dim, dt); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dt) const {
  return ember::log_softmax(*this, dim, dt);
}
Tensor Tensor::neg() const { return ember::neg(*this); }
#define EMBER_FE_DEFINE_UNARY_METHOD(fn)              \
  Tensor Tensor::fn() const { return at::fn(*this); } \
  const Tensor& Tensor::fn##_() const {               \
    ember::Tensor h = *this;                          \
    Tensor hh(h);                                     \
    at::fn##_(hh);                                    \
    return *this;                                     \
  }
EMBER_FE_UNARY_METHODS(EMBER_FE_DEFINE_UNARY_METHOD)
#undef EMBER_FE_DEFINE_UNARY_METHOD
Tensor Tensor::round(int64_t d) const { return ember::round(*this, d); }
const Tensor& Tensor::round_(int64_t d) const {
  ember::UnaryParams p;
  p.p0 = static_cast<double>(d);
  ember::unary_op(ember::UnaryOp::Round, *this, *this, true, p);
  return *this;
}
Tensor Tensor::isnan() const { return ember::isnan(*this); }
Tensor Tensor::isinf() const { return ember::isinf(*this); }
Tensor Tensor::isfinite() const { return ember::isfinite(*this); }
Tensor Tensor::logit(std::optional<double> eps) const { return ember::logit(*this, eps); }
Tensor Tensor::nan_to_num(std::optional<double> n, std::optional<double> p, std::optional<double> m) const {
  return ember::nan_to_num(*this, n, p, m);
}
Tensor Tensor::logical_and(const Tensor& o) const { return ember::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ember::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return ember::logical_xor(*this, o); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return ember::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return ember::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return ember::bitwise_xor(*this, o); }

// ---- comparison ----
#define EMBER_FE_DEFINE_CMP_METHOD(fn)                                     \
  Tensor Tensor::fn(const Tensor& o) const { return ember::fn(*this, o); } \
  Tensor Tensor::fn(const c10::Scalar& o) const { return ember::fn(*this, wrap(o)); }
EMBER_FE_DEFINE_CMP_METHOD(eq)
EMBER_FE_DEFINE_CMP_METHOD(ne)
EMBER_FE_DEFINE_CMP_METHOD(lt)
EMBER_FE_DEFINE_CMP_METHOD(le)
EMBER_FE_DEFINE_CMP_METHOD(gt)
EMBER_FE_DEFINE_CMP_METHOD(ge)
#undef EMBER_FE_DEFINE_CMP_METHOD
bool Tensor::equal(const Tensor& o) const { return ember::equal(*this, o); }
bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::allclose(*this, o, rtol, atol, equal_nan);
}
Tensor Tensor::isclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::isclose(*this, o, rtol, atol, equal_nan);
}

// ---- reductions ----

Tensor Tensor::sum(std::optional<ScalarType> dt) const { return ember::sum(*this, std::nullopt, false, dt); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dt) const {
  return ember::sum(*this, dims_of(dim), keepdim, dt);
}
Tensor Tensor::nansum(std::optional<ScalarType> dt) const { return ember::nansum(*this, std::nullopt, false, dt); }
// (ember::mean names its node MeanBackward0/1, as torch)
Tensor Tensor::mean(std::optional<ScalarType> dt) const { return ember::mean(*this, std::nullopt, false, dt); }
Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dt) const {
  return ember::mean(*this, dims_of(dim), keepdim, dt);
}
Tensor Tensor::prod(std::optional<ScalarType> dt) const { return ember::prod(*this, std::nullopt, false, dt); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dt) const {
  return ember::prod(*this, dim, keepdim, dt);
}
Tensor Tensor::max() const { return ember::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  auto [v, i] = ember::max(*this, dim, keepdim);
  return {v, i};
}
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  auto [v, i] = ember::min(*this, dim, keepdim);
  return {v, i};
}
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const { return ember::amax(*this, dims_of(dim), keepdim); }
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const { return ember::amin(*this, dims_of(dim), keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return ember::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return ember::argmin(*this, dim, keepdim); }
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return ember::all(*this, std::vector<int64_t>{dim}, keepdim); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return ember::any(*this, std::vector<int64_t>{dim}, keepdim); }
Tensor Tensor::std(bool unbiased) const { return ember::std(*this, std::nullopt, unbiased ? 1 : 0); }
Tensor Tensor::std(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::std(*this, dims_of(dim), unbiased ? 1 : 0, keepdim);
}
Tensor Tensor::var(bool unbiased) const { return ember::var(*this, std::nullopt, unbiased ? 1 : 0); }
Tensor Tensor::var(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::var(*this, dims_of(dim), unbiased ? 1 : 0, keepdim);
}
Tensor Tensor::norm(const c10::Scalar& p) const { return at::norm(*this, p); }
Tensor Tensor::norm(const std::optional<c10::Scalar>& p, IntArrayRef dim, bool keepdim) const {
  return at::norm(*this, p, dim, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const { return ember::logsumexp(*this, dims_of(dim), keepdim); }
Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dt) const { return ember::cumsum(*this, dim, dt); }
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dt) const { return ember::cumprod(*this, dim, dt); }
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const { return at::sort(*this, dim, descending); }
Tensor Tensor::argsort(int64_t dim, bool descending) const { return ember::argsort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return at::topk(*this, k, dim, largest, sorted);
}
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  auto [v, i] = ember::kthvalue(*this, k, dim, keepdim);
  return {v, i};
}
Tensor Tensor::median() const { return ember::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const { return at::median(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const {
  auto [v, i] = ember::mode(*this, dim, keepdim);
  return {v, i};
}
Tensor Tensor::count_nonzero(std::optional<int64_t> dim) const { return at::count_nonzero(*this, dim); }
Tensor Tensor::trace() const { return ember::trace(*this); }

// ---- in place ----

namespace {
const Tensor& binary_inplace(const Tensor& self, ember::BinaryOp op, const ember::Tensor& other,
                             const c10::Scalar& alpha = 1) {
  ember::binary_op(op, self, other, self, /*inplace=*/true, alpha);
  return self;
}
}  // namespace

const Tensor& Tensor::add_(const Tensor& o, const c10::Scalar& a) const {
  return binary_inplace(*this, ember::BinaryOp::Add, o, a);
}
const Tensor& Tensor::add_(const c10::Scalar& o, const c10::Scalar& a) const {
  return named_inplace<ag::AddBackward0>(binary_inplace(*this, ember::BinaryOp::Add, wrap(o), a), "AddBackward1");
}
const Tensor& Tensor::sub_(const Tensor& o, const c10::Scalar& a) const {
  return binary_inplace(*this, ember::BinaryOp::Sub, o, a);
}
const Tensor& Tensor::sub_(const c10::Scalar& o, const c10::Scalar& a) const {
  return named_inplace<ag::SubBackward0>(binary_inplace(*this, ember::BinaryOp::Sub, wrap(o), a), "SubBackward1");
}
const Tensor& Tensor::mul_(const Tensor& o) const { return binary_inplace(*this, ember::BinaryOp::Mul, o); }
const Tensor& Tensor::mul_(const c10::Scalar& o) const {
  return named_inplace<ag::MulBackward0>(binary_inplace(*this, ember::BinaryOp::Mul, wrap(o)), "MulBackward1");
}
const Tensor& Tensor::div_(const Tensor& o) const { return binary_inplace(*this, ember::BinaryOp::Div, o); }
const Tensor& Tensor::div_(const c10::Scalar& o) const {
  return named_inplace<ag::DivBackward0>(binary_inplace(*this, ember::BinaryOp::Div, wrap(o)), "DivBackward1");
}
const Tensor& Tensor::pow_(const Tensor& e) const { return binary_inplace(*this, ember::BinaryOp::Pow, e); }
const Tensor& Tensor::pow_(const c10::Scalar& e) const { return binary_inplace(*this, ember::BinaryOp::Pow, wrap(e)); }
const Tensor& Tensor::neg_() const {
  ember::unary_op(ember::UnaryOp::Neg, *this, *this, true);
  return *this;
}
const Tensor& Tensor::clamp_(const std::optional<c10::Scalar>& min, const std::optional<c10::Scalar>& max) const {
  EMBER_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  ember::UnaryParams p;
  p.p0 = min ? min->to_double() : 0.0;
  p.p1 = max ? max->to_double() : 0.0;
  p.has_p0 = min.has_value();
  p.has_p1 = max.has_value();
  ember::unary_op(ember::UnaryOp::Clamp, *this, *this, true, p);
  return *this;
}
const Tensor& Tensor::clamp_min_(const c10::Scalar& min) const { return clamp_(min, std::nullopt); }
const Tensor& Tensor::clamp_max_(const c10::Scalar& max) const { return clamp_(std::nullopt, max); }
const Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const c10::Scalar& v) const {
  ember::addcmul(*this, t1, t2, v, *this, true);
  return *this;
}
const Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const c10::Scalar& v) const {
  ember::addcdiv(*this, t1, t2, v, *this, true);
  return *this;
}
const Tensor& Tensor::lerp_(const Tensor& end, const c10::Scalar& w) const {
  ember::lerp(*this, end, wrap(w), *this, true);
  return *this;
}
const Tensor& Tensor::zero_() const { return fill_(0); }
const Tensor& Tensor::fill_(const c10::Scalar& v) const {
  ember::Tensor h = *this;
  ember::fill_(h, v);
  return *this;
}
const Tensor& Tensor::fill_(const Tensor& v) const {
  ember::Tensor h = *this;
  ember::fill_(h, v);
  return *this;
}
const Tensor& Tensor::copy_(const Tensor& src, bool) const {
  ember::Tensor h = *this;
  ember::copy_(h, src);
  return *this;
}
const Tensor& Tensor::uniform_(double from, double to) const {
  ember::Tensor h = *this;
  ember::uniform_(h, from, to);
  return *this;
}
const Tensor& Tensor::normal_(double mean, double std) const {
  ember::Tensor h = *this;
  ember::normal_(h, mean, std);
  return *this;
}
const Tensor& Tensor::bernoulli_(double p) const {
  ember::Tensor h = *this;
  ember::bernoulli_(h, p);
  return *this;
}
const Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to) const {
  ember::Tensor h = *this;
  ember::random_(h, from, to);
  return *this;
}
const Tensor& Tensor::random_(int64_t to) const { return random_(0, to); }
const Tensor& Tensor::random_() const {
  ember::Tensor h = *this;
  ember::random_(h);
  return *this;
}
const Tensor& Tensor::exponential_(double lambd) const {
  ember::Tensor h = *this;
  ember::exponential_(h, lambd);
  return *this;
}
Tensor Tensor::bernoulli() const { return ember::bernoulli(*this); }
Tensor Tensor::multinomial(int64_t n, bool replacement) const { return ember::multinomial(*this, n, replacement); }

// ---- operators ----

// The operators as libtorch defines them: Tensor op Scalar is the Scalar overload of the method;
// Scalar + Tensor and Scalar * Tensor commute; Scalar - Tensor, / and % fill a tensor like the
// right operand (its dtype) with the number and apply the in-place op.
#define EMBER_FE_DEFINE_BINARY_OPERATOR(sym, method, scalar_first)                   \
  Tensor operator sym(const Tensor& a, const Tensor& b) { return a.method(b); }      \
  Tensor operator sym(const Tensor& a, const c10::Scalar& b) { return a.method(b); } \
  Tensor operator sym(const c10::Scalar& a, const Tensor& b) { return scalar_first; }
EMBER_FE_DEFINE_BINARY_OPERATOR(+, add, b.add(a))
EMBER_FE_DEFINE_BINARY_OPERATOR(*, mul, b.mul(a))
EMBER_FE_DEFINE_BINARY_OPERATOR(-, sub, Tensor(at::empty_like(b).fill_(a).sub_(b)))
EMBER_FE_DEFINE_BINARY_OPERATOR(/, div, Tensor(at::empty_like(b).fill_(a).div_(b)))
EMBER_FE_DEFINE_BINARY_OPERATOR(%, remainder, Tensor(filled_remainder(a, b)))
EMBER_FE_DEFINE_BINARY_OPERATOR(==, eq, b.eq(a))
EMBER_FE_DEFINE_BINARY_OPERATOR(!=, ne, b.ne(a))
EMBER_FE_DEFINE_BINARY_OPERATOR(<, lt, b.gt(a))
EMBER_FE_DEFINE_BINARY_OPERATOR(<=, le, b.ge(a))
EMBER_FE_DEFINE_BINARY_OPERATOR(>, gt, b.lt(a))
EMBER_FE_DEFINE_BINARY_OPERATOR(>=, ge, b.le(a))
#undef EMBER_FE_DEFINE_BINARY_OPERATOR
#define EMBER_FE_DEFINE_BITWISE_OPERATOR(sym, fn)                                              \
  Tensor operator sym(const Tensor& a, const Tensor& b) { return ember::fn(a, b); }            \
  Tensor operator sym(const Tensor& a, const c10::Scalar& b) { return ember::fn(a, wrap(b)); } \
  Tensor operator sym(const c10::Scalar& a, const Tensor& b) { return ember::fn(b, wrap(a)); }
EMBER_FE_DEFINE_BITWISE_OPERATOR(&, bitwise_and)
EMBER_FE_DEFINE_BITWISE_OPERATOR(|, bitwise_or)
EMBER_FE_DEFINE_BITWISE_OPERATOR(^, bitwise_xor)
#undef EMBER_FE_DEFINE_BITWISE_OPERATOR
Tensor operator-(const Tensor& a) { return ember::neg(a); }
Tensor operator~(const Tensor& a) { return ember::bitwise_not(a); }
Tensor operator!(const Tensor& a) { return ember::logical_not(a); }
const Tensor& operator+=(const Tensor& a, const Tensor& b) { return a.add_(b); }
const Tensor& operator+=(const Tensor& a, const c10::Scalar& b) { return a.add_(b); }
const Tensor& operator-=(const Tensor& a, const Tensor& b) { return a.sub_(b); }
const Tensor& operator-=(const Tensor& a, const c10::Scalar& b) { return a.sub_(b); }
const Tensor& operator*=(const Tensor& a, const Tensor& b) { return a.mul_(b); }
const Tensor& operator*=(const Tensor& a, const c10::Scalar& b) { return a.mul_(b); }
const Tensor& operator/=(const Tensor& a, const Tensor& b) { return a.div_(b); }
const Tensor& operator/=(const Tensor& a, const c10::Scalar& b) { return a.div_(b); }

TensorOptions TensorOptions::merge_in(TensorOptions o) const {
  TensorOptions r = o;
  if (dtype_) r.dtype_ = dtype_;
  if (device_) r.device_ = device_;
  if (requires_grad_) r.requires_grad_ = requires_grad_;
  if (memory_format_) r.memory_format_ = memory_format_;
  return r;
}

// Leaves std::boolalpha set on the stream, as libtorch's printing does.
std::ostream& operator<<(std::ostream& os, const TensorOptions& o) {
  os << std::boolalpha << "TensorOptions(dtype=" << o.dtype() << ", device=" << o.device()
     << ", layout=Strided, requires_grad=" << o.requires_grad();
  if (!o.has_requires_grad()) os << " (default)";
  os << ", pinned_memory=false (default), memory_format=";
  if (o.memory_format_opt())
    os << ember::memory_format_name(*o.memory_format_opt());
  else
    os << "(nullopt)";
  return os << ")";
}

}  // namespace at
