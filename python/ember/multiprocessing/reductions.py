"""How ember tensors cross process boundaries: through shared memory, never by copying bytes.

A tensor put on a multiprocessing queue (or passed to a child) is moved into shared memory
(`share_memory_()`, a memfd segment: Note [Shared memory by memfd] in core/shared_memory.h) and
the receiver maps the same segment from a duplicated file descriptor, so writes on either side
are visible on the other.
"""
from multiprocessing.reduction import ForkingPickler, DupFd

from ember import _C

_registered = False


def _rebuild_tensor(cls, dup_fd, nbytes, dtype, sizes, strides, offset, requires_grad):
    t = _C._tensor_from_shm(dup_fd.detach(), nbytes, dtype, sizes, strides, offset)
    if cls is not _C.Tensor:
        from ember.nn.parameter import Parameter  # noqa: PLC0415 (only when a Parameter arrives)
        if issubclass(cls, Parameter):
            return cls(t, requires_grad)
        t = t.as_subclass(cls)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
            "support crossing process boundaries.  If you just want to transfer the data, call detach() "
            "on the tensor before serializing (e.g., putting it on the queue).")
    _C._share_memory_(t)
    fd, nbytes = _C._shm_handle(t)
    return (_rebuild_tensor, (type(t), DupFd(fd), nbytes, t.dtype, tuple(t.shape), t.stride(), t.storage_offset(),
                              t.requires_grad))


def init_reductions():
    """Registers the shared-memory reducer for ember tensors with multiprocessing's pickler."""
    global _registered
    if _registered:
        return
    ForkingPickler.register(_C.Tensor, reduce_tensor)
    _registered = True
