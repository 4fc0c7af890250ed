// Forward-mode AD: dual levels and per-tensor tangents, propagated op by op.
//
// Note [Forward AD]: a tensor's tangents hang off its AutogradMetaImpl, one per open dual level.
// Ops that record history (make_node / set_history, record.h) also see whether an input has a
// tangent at a visible level; if so the node is built even when nothing requires grad (then it
// is "forward-only": the output gets no grad_fn), the input tangents are captured, and after the
// op the output tangents are computed from the node: its jvp() formula when it has one, or else
// exactly from its backward formula by a local double vjp (g(u) = J^T u is linear in u, so
// d<g(u), t>/du = J t). The computation is queued by set_history and run on the next tangent
// read, backward, or level exit (ops save tensors into their node after set_history). Views
// get a view of the input's tangent; copy_ updates the destination's tangent in place, and
// every in-place op ends in copy_ when a tangent is involved. No open level: one load of a
// global counter per recorded op.
#pragma once
#include <atomic>
#include <initializer_list>

#include "ember/autograd/node.h"

namespace ember::autograd::forward_ad {

namespace detail {
extern std::atomic<int> g_num_levels;
}
// The hot-path check: false while no dual level is open.
inline bool is_active() { return detail::g_num_levels.load(std::memory_order_relaxed) != 0; }

int64_t enter_level();
void exit_level(int64_t level);  // must be the innermost open level
int64_t innermost_level();       // -1 when none is open

// Tangent of t at `level` (undefined when none). A view without its own tangent sees the
// matching view of its base's tangent.
Tensor tangent(const Tensor& t, int64_t level);
// True when one of `ts` has a tangent at a level visible here (see HideLevelsGuard).
bool any_has_tangent(std::initializer_list<const Tensor*> ts);

// make_dual / unpack_dual with torch's checks; `level` < 0 means the innermost level.
Tensor make_dual(const Tensor& primal, const Tensor& tangent, int64_t level);
std::pair<Tensor, Tensor> unpack_dual(const Tensor& t, int64_t level);

// Recording hooks (record.h, node.cpp, views, copy_).
void capture_inputs(const std::shared_ptr<Node>& node, const std::vector<const Tensor*>& inputs, bool records);
bool on_set_history(const Tensor& out, const std::shared_ptr<Node>& fn);  // true: the node is forward-only
void on_view(const Tensor& input, const Tensor& view);
void on_copy(const Tensor& dst, const Tensor& src);  // after copy_ wrote dst (src undefined: a fill)
void flush();                                        // computes queued output tangents

// Hides levels >= `level` while a level's tangents are computed, so that computation is
// itself differentiated at outer levels only.
class HideLevelsGuard {
 public:
  explicit HideLevelsGuard(int64_t level);
  ~HideLevelsGuard();
  HideLevelsGuard(const HideLevelsGuard&) = delete;
  HideLevelsGuard& operator=(const HideLevelsGuard&) = delete;

 private:
  int64_t prev_;
};

}  // namespace ember::autograd::forward_ad
