#include "ember/autograd/forward_ad.h"

#include <climits>
#include <mutex>

#include "ember/autograd/engine.h"
#include "ember/autograd/forward_ad_custom.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/autograd/synthetic_grad.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"

namespace ember::autograd {
namespace {
thread_local bool t_synthetic_grad = false;
}  // namespace
bool synthetic_grad_active() { return t_synthetic_grad; }
SyntheticGradGuard::SyntheticGradGuard() : prev(t_synthetic_grad) { t_synthetic_grad = true; }
SyntheticGradGuard::~SyntheticGradGuard() { t_synthetic_grad = prev; }
}  // namespace ember::autograd

namespace ember::autograd::forward_ad {
namespace detail {
std::atomic<int> g_num_levels{0};
}

namespace {

struct Level {
  int64_t idx;
  std::vector<std::weak_ptr<ForwardGrads>> holders;  // tensors with a tangent at this level
  size_t pruned_at = 64;
};
// Open levels, innermost last. Global, as torch's: a level opened on one thread covers all, so
// it is guarded by g_levels_mutex and iterated through snapshots of the open indices (an op run
// while iterating may read tangents, which needs the list again).
std::vector<Level> g_levels;
std::mutex g_levels_mutex;

std::vector<int64_t> open_levels() {
  if (!is_active()) return {};
  std::lock_guard<std::mutex> lock(g_levels_mutex);
  std::vector<int64_t> ids;
  ids.reserve(g_levels.size());
  for (const Level& l : g_levels) ids.push_back(l.idx);
  return ids;
}

thread_local int64_t t_hidden_from = INT64_MAX;  // levels >= this are invisible (HideLevelsGuard)

// An op whose output tangents are still to be computed (Note [Forward AD]).
struct Pending {
  std::shared_ptr<Node> node;
  bool records = false;                                  // false: forward-only, outputs get no grad_fn
  std::vector<std::pair<int64_t, TensorList>> tangents;  // per level: the inputs' tangents
  TensorList outputs;                                    // by output number
};
thread_local std::vector<Pending> t_pending;

bool differentiable(ScalarType t) { return is_floating_point(t) || is_complex(t); }

Level* find_level_locked(int64_t level) {
  for (Level& l : g_levels)
    if (l.idx == level) return &l;
  return nullptr;
}
bool level_open(int64_t level) {
  std::lock_guard<std::mutex> lock(g_levels_mutex);
  return find_level_locked(level) != nullptr;
}

Tensor own_tangent(const Tensor& t, int64_t level) {
  AutogradMetaImpl* m = meta(t);
  if (!m) return {};
  std::shared_ptr<ForwardGrads> fw;
  {
    std::lock_guard<std::mutex> lock(m->mutex);
    fw = m->fw;
  }
  if (!fw) return {};
  std::lock_guard<std::mutex> lock(fw->mu);
  for (auto& [l, v] : fw->by_level)
    if (l == level) return v;
  return {};
}

void store(const Tensor& t, const Tensor& tan, int64_t level) {
  AutogradMetaImpl& m = meta_or_create(t);
  std::shared_ptr<ForwardGrads> fw;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    if (!m.fw) m.fw = std::make_shared<ForwardGrads>();
    fw = m.fw;
  }
  Tensor old;  // dropped after the lock
  {
    std::lock_guard<std::mutex> lock(fw->mu);
    for (auto& [l, v] : fw->by_level)
      if (l == level) {
        old = std::exchange(v, tan);
        return;
      }
    fw->by_level.emplace_back(level, tan);
  }
  std::lock_guard<std::mutex> lock(g_levels_mutex);
  Level* lv = find_level_locked(level);
  if (!lv) return;  // exited meanwhile by another thread
  lv->holders.push_back(fw);
  if (lv->holders.size() > 2 * lv->pruned_at) {  // forget dead tensors now and then
    std::erase_if(lv->holders, [](const std::weak_ptr<ForwardGrads>& w) { return w.expired(); });
    lv->pruned_at = std::max<size_t>(64, lv->holders.size());
  }
}

int64_t storage_numel(const Tensor& t) {
  return static_cast<int64_t>(t.impl()->storage()->nbytes() / t.element_size());
}

// Zeros laid out like p in a buffer as long as p's storage.
Tensor zeros_laid_like(const Tensor& p, ScalarType dtype) {
  return as_strided(zeros({storage_numel(p)}, dtype), p.sizes(), p.strides(), p.storage_offset());
}

// Tangents are laid out like their primal (same strides and offset in a buffer as long as the
// primal's storage), so a view's tangent is the same as_strided view of its input's tangent.
Tensor laid_like(const Tensor& p, const Tensor& tan) {
  if (tan.sizes() == p.sizes() && tan.strides() == p.strides() && tan.storage_offset() == p.storage_offset() &&
      storage_numel(tan) >= storage_numel(p))
    return tan;
  Tensor v = zeros_laid_like(p, tan.dtype());
  copy_(v, tan);
  return v;
}

bool has_visible_tangent(const Tensor& t) {
  if (!meta(t)) return false;
  for (int64_t l : open_levels())
    if (l < t_hidden_from && tangent(t, l).defined()) return true;
  return false;
}

// A node that receives nothing: makes a backward formula compute an input's gradient that no
// reverse pass asked for (the double vjp below needs it).
struct Sink : Node {
  TensorList apply(TensorList&&) override { return {}; }
  std::string name() const override { return "ForwardADSink"; }
};

struct EdgeSwap {
  Node& node;
  std::vector<Edge> saved;
  EdgeSwap(Node& n, const TensorList& tangents) : node(n), saved(n.next_edges) {
    static const auto sink = std::make_shared<Sink>();
    for (size_t i = 0; i < tangents.size() && i < n.next_edges.size(); ++i)
      if (tangents[i].defined() && !n.next_edges[i].valid()) n.next_edges[i] = Edge{sink, 0};
  }
  ~EdgeSwap() { node.next_edges = std::move(saved); }
};

// J t from the backward formula: g(u) = J^T u is linear in u, so d<g(u), t>/du = J t.
// Note [Complex double vjp]: with complex numbers read as pairs of reals, PyTorch's backward
// convention (the gradient of a real loss is dL/dx + i dL/dy) makes every backward formula the
// real transpose J^T, linear over the reals (not over C: g(u) may involve conj(u)). The real inner
// product of complex vectors is Re(sum(conj(a) b)), and the gradient of the real scalar
// Re<J^T u, t> = Re<u, J t> in u is again read in that convention: J t, the tangent torch's
// forward AD gives (df/dz t + df/dconj(z) conj(t)).
TensorList jvp_by_double_vjp(Node& node, const TensorList& tangents, bool records) {
  SyntheticGradGuard synthetic;
  if (node.is_python())
    throw NotImplementedError("forward AD through the custom autograd.Function " + node.name() + " is not supported");
  bool outer_grad = GradMode::is_enabled();
  AutoGradMode on(true);
  TensorList us;
  for (size_t k = 0; k < node.num_inputs(); ++k) {
    // Any u gives the same derivative, but formulas may branch on the sign of the gradient
    // (logcumsumexp): away from 0 their autograd derivative is the linear map's.
    Tensor u = ones(node.input_meta(k).shape, node.input_meta(k).dtype);
    set_requires_grad(u, true);
    us.push_back(u);
  }
  TensorList gs;
  {
    EdgeSwap swap(node, tangents);
    gs = node.apply(TensorList(us));
  }
  Tensor s;
  bool keep_history = records;
  for (size_t i = 0; i < gs.size() && i < tangents.size(); ++i) {
    if (!gs[i].defined() || !tangents[i].defined()) continue;
    if (!requires_grad(gs[i])) {
      // Not differentiable in the incoming gradient: fine only when it is identically zero.
      NoGradGuard ng;
      if (item(any(ne(gs[i], scalar_tensor(0, std::nullopt, true)))).to_bool())
        throw NotImplementedError("forward AD through " + node.name() +
                                  " is not supported: its backward formula is not differentiable");
      continue;
    }
    // Complex numbers count as pairs of reals (Note [Complex double vjp]): the inner product is
    // Re(conj(g) t), and the gradient of the real s in u is then J t in PyTorch's convention.
    Tensor term = is_complex(gs[i].dtype()) || is_complex(tangents[i].dtype())
                      ? real(sum(mul(conj(gs[i]), tangents[i])))
                      : sum(mul(gs[i], tangents[i]));
    s = s.defined() ? add(s, term) : term;
    keep_history = keep_history || requires_grad(tangents[i]);
  }
  if (!s.defined() || !requires_grad(s)) return TensorList(node.num_inputs());
  BackwardOptions o;
  o.create_graph = outer_grad && keep_history;  // tangents are differentiable (forward-over-reverse)
  o.accumulate = false;
  o.allow_unused = true;
  return run_backward({s}, {}, us, o);
}

void compute(Pending& p) {
  for (auto& [level, tans] : p.tangents) {
    if (!level_open(level)) continue;
    HideLevelsGuard hide(level);
    TensorList outs = p.node->jvp(tans);
    if (outs.empty()) outs = jvp_by_double_vjp(*p.node, tans, p.records);
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      const Tensor& o = p.outputs[k];
      if (!o.defined() || !differentiable(o.dtype())) continue;  // integer outputs get no tangent
      Tensor t = k < outs.size() ? outs[k] : Tensor();
      if (!t.defined()) t = zeros(o.sizes(), o.dtype());
      if (t.dtype() != o.dtype()) t = to_dtype(t, o.dtype());
      if (t.sizes() != o.sizes()) t = expand(t, o.sizes());
      store(o, laid_like(o, t), level);
    }
  }
}

}  // namespace

HideLevelsGuard::HideLevelsGuard(int64_t level) : prev_(t_hidden_from) {
  t_hidden_from = std::min(t_hidden_from, level);
}
HideLevelsGuard::~HideLevelsGuard() { t_hidden_from = prev_; }

int64_t enter_level() {
  std::lock_guard<std::mutex> lock(g_levels_mutex);
  int64_t idx = g_levels.empty() ? 0 : g_levels.back().idx + 1;
  g_levels.push_back(Level{idx, {}});
  detail::g_num_levels.store(static_cast<int>(g_levels.size()), std::memory_order_relaxed);
  return idx;
}

void exit_level(int64_t level) {
  EMBER_CHECK(level >= 0, "Dual level must be a positive number.");
  std::vector<std::weak_ptr<ForwardGrads>> holders;
  {
    std::lock_guard<std::mutex> lock(g_levels_mutex);
    EMBER_CHECK(!g_levels.empty() && g_levels.back().idx == level,
                "Trying to exit a forward AD level that was not the last one that was created. This is not "
                "supported.");
    holders = std::move(g_levels.back().holders);
    g_levels.pop_back();
    detail::g_num_levels.store(static_cast<int>(g_levels.size()), std::memory_order_relaxed);
  }
  // Queued tangents of this level are never computed.
  for (Pending& p : t_pending) std::erase_if(p.tangents, [level](const auto& lt) { return lt.first == level; });
  std::erase_if(t_pending, [](const Pending& p) { return p.tangents.empty(); });
  for (auto& w : holders)
    if (auto g = w.lock()) {
      std::vector<std::pair<int64_t, Tensor>> dropped;  // released after the lock
      std::lock_guard<std::mutex> lock(g->mu);
      for (auto& lt : g->by_level)
        if (lt.first == level) dropped.push_back(std::move(lt));
      std::erase_if(g->by_level, [level](const auto& lt) { return lt.first == level; });
    }
}

int64_t innermost_level() {
  std::lock_guard<std::mutex> lock(g_levels_mutex);
  return g_levels.empty() ? -1 : g_levels.back().idx;
}

void flush() {
  if (t_pending.empty()) return;
  std::vector<Pending> work, keep;
  work.swap(t_pending);
  for (Pending& p : work) {
    if (!p.outputs.empty())
      compute(p);
    else if (p.node.use_count() > 1)  // its op is still recording (set_history comes next)
      keep.push_back(std::move(p));
  }
  t_pending.insert(t_pending.begin(), std::make_move_iterator(keep.begin()), std::make_move_iterator(keep.end()));
}

Tensor tangent(const Tensor& t, int64_t level) {
  if (!is_active() || !t.defined() || !meta(t)) return {};
  flush();
  return own_tangent(t, level);
}

bool any_has_tangent(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t && t->defined() && has_visible_tangent(*t)) return true;
  return false;
}

void capture_inputs(const std::shared_ptr<Node>& node, const std::vector<const Tensor*>& inputs, bool records) {
  Pending p{node, records, {}, {}};
  for (int64_t l : open_levels()) {
    if (l >= t_hidden_from) continue;
    TensorList ts;
    bool any = false;
    for (const Tensor* in : inputs) {
      ts.push_back(in && in->defined() ? tangent(*in, l) : Tensor());
      any = any || ts.back().defined();
    }
    if (any) p.tangents.emplace_back(l, std::move(ts));
  }
  if (!p.tangents.empty()) t_pending.push_back(std::move(p));
}

bool on_set_history(const Tensor& out, const std::shared_ptr<Node>& fn) {
  for (auto it = t_pending.rbegin(); it != t_pending.rend(); ++it) {
    if (it->node != fn) continue;
    size_t k = fn->num_inputs() - 1;  // set_history just added this output's slot
    if (it->outputs.size() <= k) it->outputs.resize(k + 1);
    it->outputs[k] = out;
    return !it->records;
  }
  return false;
}

// The tangent's whole buffer reinterpreted as `dtype` (complex <-> its real type), so a view's
// sizes, strides and offset apply to it as they do to the view's storage.
Tensor reinterpreted_buffer(const Tensor& tan, ScalarType dtype) {
  int64_t n = storage_numel(tan);
  if (is_complex(dtype)) {
    if (n % 2) return {};
    return view_as_complex(as_strided(tan, {n / 2, 2}, {2, 1}, 0));
  }
  return view_as_real(as_strided(tan, {n}, {1}, 0));
}

void on_view(const Tensor& input, const Tensor& view) {
  if (!differentiable(view.dtype())) return;
  bool reinterpret = view.dtype() != input.dtype();  // view_as_real, view_as_complex, .real, .imag
  if (reinterpret && to_real(view.dtype()) != to_real(input.dtype())) return;
  for (int64_t l : open_levels()) {
    if (l >= t_hidden_from) continue;
    Tensor it = tangent(input, l);
    if (!it.defined()) continue;
    HideLevelsGuard hide(l);
    if (reinterpret && !(it = reinterpreted_buffer(it, view.dtype())).defined()) continue;
    store(view, as_strided(it, view.sizes(), view.strides(), view.storage_offset()), l);
  }
}

void on_copy(const Tensor& dst, const Tensor& src) {
  if (!differentiable(dst.dtype())) return;
  for (int64_t lvl : open_levels()) {
    if (lvl >= t_hidden_from) continue;
    Tensor st = src.defined() ? tangent(src, lvl) : Tensor();
    Tensor dt = tangent(dst, lvl);
    if (!st.defined() && !dt.defined()) continue;
    HideLevelsGuard hide(lvl);
    if (!dt.defined()) {
      // A view written with a tangent gives its base a (zero) tangent it is a view of.
      Tensor owner = dst.impl()->view_base ? Tensor(dst.impl()->view_base) : dst;
      Tensor z = zeros_laid_like(owner, dst.dtype());
      store(owner, z, lvl);
      dt = owner.is_same(dst) ? z : as_strided(z, dst.sizes(), dst.strides(), dst.storage_offset());
      if (!owner.is_same(dst)) store(dst, dt, lvl);
    }
    if (st.defined())
      copy_(dt, st);
    else
      fill_(dt, 0);
  }
}

Tensor make_dual(const Tensor& primal, const Tensor& tan, int64_t level) {
  EMBER_CHECK(innermost_level() >= 0,
              "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() "
              "first.");
  if (level < 0) level = innermost_level();
  EMBER_CHECK(level_open(level), "Invalid level given to _make_dual");
  if (!differentiable(primal.dtype()))
    throw ValueError(ember::detail::str_cat("Expected primal to be floating point or complex, but got: torch.",
                                            dtype_name(primal.dtype())));
  if (!differentiable(tan.dtype()))
    throw ValueError(ember::detail::str_cat("Expected tangent to be floating point or complex, but got: torch.",
                                            dtype_name(tan.dtype())));
  EMBER_CHECK(tan.sizes() == primal.sizes(),
              "Trying to set a forward gradient that has a different size than that of the original Tensor, "
              "this is not supported. Tensor is of size ",
              shape_str(primal.sizes()), " while the given forward gradient is of size ", shape_str(tan.sizes()), ".");
  EMBER_CHECK(!own_tangent(primal, level).defined(),
              "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level ", level,
              " is not supported.");
  Tensor dual;
  {
    HideLevelsGuard hide(0);  // the alias must not pick up tangents of other levels
    dual = alias(primal);
  }
  // Outer levels still see the primal's tangents through the alias.
  for (int64_t l : open_levels())
    if (l != level)
      if (Tensor t = tangent(primal, l); t.defined()) store(dual, t, l);
  HideLevelsGuard hide(level);
  store(dual, laid_like(dual, tan), level);
  return dual;
}

std::pair<Tensor, Tensor> unpack_dual(const Tensor& t, int64_t level) {
  if (innermost_level() < 0) return {t, Tensor()};
  if (level < 0) level = innermost_level();
  EMBER_CHECK(level_open(level), "Invalid level given to _fw_primal");
  if (level >= t_hidden_from) return {t, Tensor()};  // as torch with forward grad disabled
  Tensor tan = tangent(t, level);
  if (!tan.defined()) return {t, Tensor()};
  Tensor primal;
  {
    HideLevelsGuard hide(0);
    primal = alias(t);
  }
  for (int64_t l : open_levels())
    if (l != level)
      if (Tensor o = tangent(t, l); o.defined()) store(primal, o, l);
  return {primal, tan};
}

std::vector<int64_t> levels_with_tangents(const TensorList& ts) {
  std::vector<int64_t> out;
  for (int64_t l : open_levels()) {
    if (l >= t_hidden_from) continue;
    for (const Tensor& t : ts)
      if (t.defined() && tangent(t, l).defined()) {
        out.push_back(l);
        break;
      }
  }
  return out;
}

void set_tangent(const Tensor& t, const Tensor& tan_in, int64_t level, bool inplace) {
  EMBER_CHECK(level_open(level), "Invalid level given to set a forward gradient");
  EMBER_CHECK(tan_in.sizes() == t.sizes(),
              "Trying to set a forward gradient that has a different size than that of the original Tensor, "
              "this is not supported. Tensor is of size ",
              shape_str(t.sizes()), " while the given forward gradient is of size ", shape_str(tan_in.sizes()), ".");
  HideLevelsGuard hide(level);
  Tensor tan = tan_in.dtype() == t.dtype() ? tan_in : to_dtype(tan_in, t.dtype());
  if (!inplace || !t.impl()->view_base) {
    store(t, laid_like(t, tan), level);
    return;
  }
  // In place on a view without a tangent: the base gets a zero tangent the view's is a view of.
  Tensor owner(t.impl()->view_base);
  Tensor z = own_tangent(owner, level);
  if (!z.defined()) {
    z = zeros_laid_like(owner, t.dtype());
    store(owner, z, level);
  }
  Tensor dt = as_strided(z, t.sizes(), t.strides(), t.storage_offset());
  store(t, dt, level);
  copy_(dt, tan);
}

Tensor alias_without_tangents(const Tensor& t) {
  HideLevelsGuard hide(0);
  return alias(t);
}

}  // namespace ember::autograd::forward_ad
