// Tensor: a handle to a TensorImpl (sizes, strides, offset into a Storage, dtype).
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/storage.h"

namespace ember {

using Shape = std::vector<int64_t>;

// Non-owning view of sizes/strides/dims; binds to a Shape or a braced list ({2, 3}) that lives
// for the duration of the call.
class IntArrayRef {
 public:
  IntArrayRef() = default;
  IntArrayRef(const Shape& v) : p_(v.data()), n_(v.size()) {}  // NOLINT
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // by design: valid for the call, as c10::ArrayRef
  IntArrayRef(std::initializer_list<int64_t> l) : p_(l.begin()), n_(l.size()) {}  // NOLINT
#pragma GCC diagnostic pop
  IntArrayRef(const int64_t* p, size_t n) : p_(p), n_(n) {}
  const int64_t* begin() const { return p_; }
  const int64_t* end() const { return p_ + n_; }
  const int64_t* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t operator[](size_t i) const { return p_[i]; }
  int64_t back() const { return p_[n_ - 1]; }
  Shape vec() const { return Shape(begin(), end()); }
  bool operator==(IntArrayRef o) const { return n_ == o.n_ && std::equal(begin(), end(), o.begin()); }

 private:
  const int64_t* p_ = nullptr;
  size_t n_ = 0;
};

// Shared by every view of one storage; in-place ops bump it, autograd checks it (paper §4.3).
struct VersionCounter : RefCounted {
  std::atomic<uint32_t> version{0};
  // Set once autograd saved a tensor of this storage; only then do bumps record where they
  // happened, so the error can name the in-place op and the user's line.
  std::atomic<bool> watched{false};
  std::string last_mutation;  // guarded by a global mutex: use record_mutation / last_mutation_of
};
// Describes the caller's source location ("train.py:12"); the Python bindings install one.
using SiteHook = std::string (*)();
void set_mutation_site_hook(SiteHook hook);
void record_mutation(VersionCounter& vc, const char* op);
std::string last_mutation_of(const VersionCounter& vc);
std::string current_site();  // via the hook; empty without one

// Autograd fills this in; the core only owns it (see autograd/).
struct AutogradMeta {
  virtual ~AutogradMeta() = default;
};

// Inference mode lives in core because every new TensorImpl records it (autograd sets it).
bool inference_mode_enabled();
void set_inference_mode_enabled(bool enabled);
[[noreturn]] void throw_inference_inplace();

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, ScalarType dtype, Shape sizes, Shape strides, int64_t offset);
  ~TensorImpl() override;

  const Shape& sizes() const { return sizes_; }
  const Shape& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const Storage& storage() const { return storage_; }
  bool is_contiguous() const { return contiguous_; }
  char* data() const {
    return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  // Changes the geometry in place (for resize_, as_strided_, squeeze_, ...).
  void set_geometry(Shape sizes, Shape strides, int64_t offset);
  void set_storage(Storage s) { storage_ = std::move(s); }
  // With set_storage/set_geometry: swaps the data of a tensor for another's, dtype included, while
  // every handle keeps the same impl (the C++ frontend's Tensor::set_data, Module::to(dtype)).
  void set_dtype(ScalarType t) { dtype_ = t; }

  // The counter is created on first need (a bump, or a view that must share it): most
  // temporaries never get one, which saves an allocation per op.
  // Both are made at most once even when threads race for them (they share a tensor).
  uint32_t version() const {
    VersionCounter* v = version_.load(std::memory_order_acquire);
    return v ? v->version.load(std::memory_order_relaxed) : 0;
  }
  void bump_version(const char* op = nullptr) {
    if (is_inference && !inference_mode_enabled()) throw_inference_inplace();
    VersionCounter& vc = version_counter_ref();
    vc.version.fetch_add(1, std::memory_order_relaxed);
    if (vc.watched.load(std::memory_order_relaxed)) record_mutation(vc, op);
  }
  IntrusivePtr<VersionCounter> version_counter() { return IntrusivePtr<VersionCounter>(&version_counter_ref()); }
  VersionCounter& version_counter_ref();
  // Replaces the counter (null: a fresh one is made on next need). Not for tensors other threads use.
  void share_version_counter(IntrusivePtr<VersionCounter> vc);

  AutogradMeta* autograd_meta() const { return autograd_.load(std::memory_order_acquire); }
  // Installs `m` unless the tensor has a meta already; returns the one it has now.
  AutogradMeta* install_autograd_meta(std::unique_ptr<AutogradMeta> m);

  // Note [PyObject preservation]: the one Python object wrapping this impl, managed by the
  // bindings (python/src/pyobj.cpp). Normally the Python object owns the impl and this is a weak
  // back-pointer; with the low bit set the impl owns the Python object instead (Python dropped it
  // while C++ still used the impl), and ~TensorImpl releases it through pyobj_release_hook.
  void* pyobj = nullptr;
  // A 0-d tensor made from a Python number: type promotion ranks it below tensors.
  bool wrapped_number = false;
  // Made under inference mode (or a view of such a tensor): autograd refuses to save it, and
  // in-place updates outside inference mode raise, as PyTorch's inference tensors.
  bool is_inference = false;
  // For views: the tensor (never itself a view) whose storage this views. Autograd needs it
  // when the view is modified in place (the base's history changes too).
  IntrusivePtr<TensorImpl> view_base;
  // Note [View history]: for views, the shared version when autograd last derived the view's
  // history; an in-place op on the base or another view bumps the version, and the view's
  // grad_fn is then rebuilt from the base's new history (autograd::refresh_view_history).
  std::atomic<uint32_t> view_version{0};
  bool view_made_no_grad = false;  // made with grad mode off: in-place use under grad mode raises
  // An output of split/chunk/unbind (or a view of one), made with grad mode on: in-place use under
  // grad mode raises, as torch's multi-output views (one backward node serves all the outputs).
  bool view_multi_output = false;

 private:
  void refresh();
  Storage storage_;
  Shape sizes_, strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool contiguous_ = true;
  std::atomic<VersionCounter*> version_{nullptr};  // counted reference
  std::atomic<AutogradMeta*> autograd_{nullptr};   // owned
};

// Installed by the Python bindings: drops the Python object an impl owns (Note [PyObject preservation]).
extern void (*pyobj_release_hook)(TensorImpl* impl, void* pyobj);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }

  const Shape& sizes() const { return impl_->sizes(); }
  const Shape& strides() const { return impl_->strides(); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  ScalarType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  size_t element_size() const { return ember::element_size(dtype()); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(impl_->data());
  }
  uint32_t version() const { return impl_->version(); }
  void bump_version(const char* op = nullptr) const { impl_->bump_version(op); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  std::string shape_str() const;  // "[2, 3]"

 private:
  IntrusivePtr<TensorImpl> impl_;
};

// Wraps a negative dim and checks range; throws IndexError as PyTorch does.
int64_t wrap_dim(int64_t dim, int64_t ndim, bool scalar_ok = true);
Shape contiguous_strides(IntArrayRef sizes);
int64_t numel_of(IntArrayRef sizes);
std::string shape_str(IntArrayRef sizes);

}  // namespace ember
