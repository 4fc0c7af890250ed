#include "ember/core/tensor.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>

#include "ember/core/checked_math.h"
#include "ember/core/warning.h"

namespace ember {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, Shape sizes, Shape strides, int64_t offset)
    : storage_(std::move(storage)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {
  is_inference = inference_mode_enabled();
  refresh();
}

void (*pyobj_release_hook)(TensorImpl*, void*) = nullptr;

TensorImpl::~TensorImpl() {
  if (reinterpret_cast<uintptr_t>(pyobj) & 1) pyobj_release_hook(this, pyobj);  // Note [PyObject preservation]
  delete autograd_.load(std::memory_order_relaxed);
  (void)IntrusivePtr<VersionCounter>::adopt(version_.load(std::memory_order_relaxed));
}

VersionCounter& TensorImpl::version_counter_ref() {
  VersionCounter* v = version_.load(std::memory_order_acquire);
  if (v) return *v;
  IntrusivePtr<VersionCounter> fresh = IntrusivePtr<VersionCounter>::make();
  if (version_.compare_exchange_strong(v, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
  return *v;  // another thread made it first; `fresh` goes
}

void TensorImpl::share_version_counter(IntrusivePtr<VersionCounter> vc) {
  (void)IntrusivePtr<VersionCounter>::adopt(version_.exchange(vc.release(), std::memory_order_acq_rel));
}

AutogradMeta* TensorImpl::install_autograd_meta(std::unique_ptr<AutogradMeta> m) {
  AutogradMeta* expected = nullptr;
  if (autograd_.compare_exchange_strong(expected, m.get(), std::memory_order_acq_rel)) return m.release();
  return expected;
}

namespace {
SiteHook g_site_hook = nullptr;
thread_local bool t_inference_mode = false;
}  // namespace
bool inference_mode_enabled() { return t_inference_mode; }
void set_inference_mode_enabled(bool enabled) { t_inference_mode = enabled; }
void throw_inference_inplace() {
  throw Error(
      "Inplace update to inference tensor outside InferenceMode is not allowed. You can make a clone to get "
      "a normal tensor before doing inplace update.");
}
void set_mutation_site_hook(SiteHook hook) { g_site_hook = hook; }

namespace {
WarnHook g_warn_hook = nullptr;
std::mutex g_warned_mutex;
std::set<std::string> g_warned;
}  // namespace
void set_warn_hook(WarnHook hook) { g_warn_hook = hook; }
void warn_once(const std::string& msg) {
  {
    std::lock_guard<std::mutex> lock(g_warned_mutex);
    if (!g_warned.insert(msg).second) return;
  }
  if (g_warn_hook)
    g_warn_hook(msg);
  else
    std::fprintf(stderr, "Warning: %s\n", msg.c_str());
}
void warn(const std::string& msg) {
  if (g_warn_hook)
    g_warn_hook(msg);
  else
    std::fprintf(stderr, "Warning: %s\n", msg.c_str());
}
std::string current_site() { return g_site_hook ? g_site_hook() : std::string(); }
namespace {
std::mutex g_mutation_mutex;  // guards VersionCounter::last_mutation (rarely written: watched tensors only)
}
void record_mutation(VersionCounter& vc, const char* op) {
  std::string site = g_site_hook ? g_site_hook() : std::string();
  std::string what = detail::str_cat(op ? op : "an in-place operation", site.empty() ? "" : " at ", site);
  std::lock_guard<std::mutex> lock(g_mutation_mutex);
  vc.last_mutation = std::move(what);
}
std::string last_mutation_of(const VersionCounter& vc) {
  std::lock_guard<std::mutex> lock(g_mutation_mutex);
  return vc.last_mutation;
}

void TensorImpl::set_geometry(Shape sizes, Shape strides, int64_t offset) {
  checked_numel(sizes);  // before anything changes (Note [Checked size arithmetic])
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  offset_ = offset;
  refresh();
}

void TensorImpl::refresh() {
  numel_ = checked_numel(sizes_);  // Note [Checked size arithmetic]
  // Contiguous = row-major; size-1 dims may have any stride (as in PyTorch).
  contiguous_ = true;
  if (numel_ == 0) return;
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) {
      contiguous_ = false;
      return;
    }
    expected *= sizes_[i];
  }
}

int64_t wrap_dim(int64_t dim, int64_t ndim, bool scalar_ok) {
  int64_t n = ndim;
  if (n == 0) {
    EMBER_CHECK_INDEX(scalar_ok, "Dimension specified as ", dim, " but tensor has no dimensions");
    n = 1;
  }
  EMBER_CHECK_INDEX(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                    "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim(), false)]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), false)]; }
std::string Tensor::shape_str() const { return ember::shape_str(sizes()); }

Shape contiguous_strides(IntArrayRef sizes) {
  Shape st(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    if (__builtin_expect(mul_overflows(acc, std::max<int64_t>(sizes[i], 1), &acc), 0))
      throw Error(detail::str_cat("Storage size calculation overflowed with sizes=", shape_str(sizes)));
  }
  return st;
}

int64_t numel_of(IntArrayRef sizes) { return checked_numel(sizes); }

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream ss;
  ss << "[";
  for (size_t i = 0; i < sizes.size(); ++i) ss << (i ? ", " : "") << sizes[i];
  ss << "]";
  return ss.str();
}

}  // namespace ember
