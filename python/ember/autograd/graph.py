"""``ember.autograd.graph``, as ``torch.autograd.graph``: hooks on the tensors autograd saves.

``saved_tensors_hooks(pack_hook, unpack_hook)``: inside the block, every tensor saved for
backward (by built-in ops and by custom Functions) is passed to ``pack_hook`` and only its
result is kept; backward calls ``unpack_hook`` on it to get the tensor back (Note [Saved tensor
hooks] in csrc/ember/autograd/node.h). Hooks belong to the thread that installs them; the
innermost block applies. ``save_on_cpu`` keeps saved tensors on the CPU (where ember's already
are); ``disable_saved_tensors_hooks(message)`` makes installing hooks raise ``message``.
"""
from ember import _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]


class saved_tensors_hooks:  # noqa: N801  (torch's name)
    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Saved tensors are kept on the CPU (pinned if pin_memory) and moved back to their device in
    backward; for ember's CPU tensors the saved tensor is the tensor itself."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            if t.device.type == "cpu":
                return (t.device, t)
            cpu = t.cpu()
            return (t.device, cpu.pin_memory() if pin_memory else cpu)

        def unpack(packed):
            device, t = packed
            return t if t.device == device else t.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801
    """Inside the block (or the decorated function), installing saved-tensor hooks raises
    RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._previous = _C._set_saved_tensors_hooks_disabled(self.error_message)
        return self

    def __exit__(self, *exc):
        _C._set_saved_tensors_hooks_disabled(self._previous)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


Node = _C.Node  # the type of every grad_fn, built-in and custom (isinstance(t.grad_fn, Node))
