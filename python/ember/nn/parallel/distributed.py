"""DistributedDataParallel: data-parallel training over an ember.distributed process group.

Note [DDP buckets]: the parameters that need gradients are grouped, in reverse registration order
(roughly the order backward produces their gradients), into flat per-dtype buckets of about
bucket_cap_mb (the first one 1 MiB, so communication starts early), as torch does. A
post-accumulate-grad hook on each parameter copies its gradient into its slot of the bucket; when
a bucket is full it is all-reduced asynchronously on the group's C++ thread while backward goes
on. Buckets are launched in index order on every rank, so the collectives always match up. When
the last bucket has been launched (the last hook of the backward pass), the hook waits for all of
them and writes the averaged gradients back to .grad, so backward() returns with synchronized
gradients.
"""
import contextlib
import weakref

import ember
from ember.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


class _Bucket:
    def __init__(self, index, params, indices):
        self.index = index
        self.params = params  # parameters, in bucket order
        self.indices = indices  # their positions in DDP's parameter list
        self.dtype = params[0].dtype
        self.numels = [p.numel() for p in params]
        self.offsets = []
        off = 0
        for n in self.numels:
            self.offsets.append(off)
            off += n
        with ember.no_grad():
            self.buffer = ember.zeros(off, dtype=self.dtype)
        self.views = [self.buffer[o:o + n].view(p.shape) for o, n, p in zip(self.offsets, self.numels, params)]
        self.pending = len(params)
        self.ready = False
        self.handle = None  # Work (built-in all-reduce) or Future (comm hook)


def _assign_buckets(params, cap_bytes):
    """Positions of params grouped into buckets: reverse order, one dtype per bucket, the first of
    each dtype capped at 1 MiB (or cap_bytes if smaller) and the others at cap_bytes (Note [DDP buckets])."""
    open_buckets = {}  # dtype -> (positions, bytes, number closed so far)
    closed = []
    for i in reversed(range(len(params))):
        p = params[i]
        pos, nbytes, count = open_buckets.get(p.dtype, ([], 0, 0))
        pos.append(i)
        nbytes += p.numel() * p.element_size()
        limit = min(_FIRST_BUCKET_BYTES, cap_bytes) if count == 0 else cap_bytes
        if nbytes >= limit:
            closed.append(pos)
            open_buckets[p.dtype] = ([], 0, count + 1)
        else:
            open_buckets[p.dtype] = (pos, nbytes, count)
    rest = [pos for pos, _, _ in open_buckets.values() if pos]
    rest.sort(key=lambda pos: -pos[0])  # later parameters (earlier gradients) first
    return closed + rest


class GradBucket:
    """What a communication hook receives: one bucket's flat gradient buffer and its parameters."""

    def __init__(self, bucket, is_last):
        self._bucket = bucket
        self._is_last = is_last

    def index(self):
        return self._bucket.index

    def buffer(self):
        """The flat gradients of the bucket (a hook may reduce it in place)."""
        return self._bucket.buffer

    def gradients(self):
        """The gradient of each parameter: views into buffer()."""
        return list(self._bucket.views)

    def parameters(self):
        return list(self._bucket.params)

    def is_last(self):
        return self._is_last

    def set_buffer(self, buffer):
        self._bucket.buffer.copy_(buffer)


class DistributedDataParallel(Module):
    """Wraps a module for data-parallel training: every process runs the module on its own part of
    the batch, and backward() leaves each parameter's .grad averaged over the processes."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        super().__init__()
        import ember.distributed as dist  # noqa: PLC0415 - ember.nn must not import it eagerly

        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel expects an nn.Module, got {type(module).__name__}")
        if mixed_precision is not None or device_mesh is not None:
            raise NotImplementedError("DistributedDataParallel: mixed_precision and device_mesh are not supported")
        if delay_all_reduce_named_params is not None or param_to_hook_all_reduce is not None:
            raise NotImplementedError("DistributedDataParallel: delayed all-reduce of named parameters is not "
                                      "supported")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {p.device.type for p in module.parameters()}
        if device_ids is not None or output_device is not None:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             f"single-device/multiple-device GPU modules, but got device_ids {device_ids}, "
                             f"output_device {output_device}, and module parameters on {sorted(devices)}.")
        if devices != {"cpu"}:
            raise NotImplementedError(f"DistributedDataParallel: parameters on {sorted(devices)}; ember's Gloo back "
                                      "end handles CPU tensors")
        if bucket_cap_mb is not None and bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self._dist = dist
        self.module = module
        self.process_group = process_group if process_group is not None else dist.distributed_c10d._default_pg()
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((bucket_cap_mb if bucket_cap_mb is not None else _DEFAULT_BUCKET_MB) * 2 ** 20)
        self._params = params
        self._param_names = {id(p): n for n, p in module.named_parameters()}
        self._world = dist.get_world_size(self.process_group)
        self._comm_hook = None
        self._comm_state = None

        self._verify_same_model()
        if init_sync:
            self._broadcast_coalesced([p.detach() for p in module.parameters()] + list(module.buffers()))
        self._buckets = [_Bucket(k, [params[i] for i in pos], pos)
                         for k, pos in enumerate(_assign_buckets(params, self.bucket_bytes_cap))]
        self._where = {}
        for b in self._buckets:
            for j, i in enumerate(b.indices):
                self._where[i] = (b, j)
        if gradient_as_bucket_view:
            for b in self._buckets:
                for p, v in zip(b.params, b.views):
                    if p.grad is not None:
                        v.copy_(p.grad)
                    p.grad = None  # set to the view when its first gradient arrives
        self._reset_iteration()
        me = weakref.ref(self)
        self._hook_handles = [p.register_post_accumulate_grad_hook(_make_hook(me, i)) for i, p in enumerate(params)]

    # ---- construction helpers ----

    def _verify_same_model(self):
        shapes = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        everyone = [None] * self._world
        self._dist.all_gather_object(everyone, shapes, group=self.process_group)
        for r, s in enumerate(everyone):
            if s != everyone[0]:
                raise RuntimeError(f"DDP expects the same model on every rank, but rank {r} has "
                                   f"{len(s)} parameters {s[:4]}... while rank 0 has {len(everyone[0])} "
                                   f"{everyone[0][:4]}...")

    def _broadcast_coalesced(self, tensors, src_rank=0):
        """Copies tensors from the group's rank src_rank to every rank, one flat message per dtype."""
        if self._world == 1 or not tensors:
            return
        src = self._dist.get_global_rank(self.process_group, src_rank)
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with ember.no_grad():
            for ts in by_dtype.values():
                flat = ember.cat([t.reshape(-1) for t in ts])
                self._dist.broadcast(flat, src=src, group=self.process_group)
                off = 0
                for t in ts:
                    n = t.numel()
                    t.copy_(flat[off:off + n].view(t.shape))
                    off += n

    # ---- the iteration ----

    def _reset_iteration(self):
        for b in self._buckets:
            b.pending = len(b.params)
            b.ready = False
            b.handle = None
        self._next_bucket = 0
        self._marked = [False] * len(self._params)
        self._locally_used = [False] * len(self._params)
        self._started = False  # a hook of this iteration has fired
        self._unused = []  # found by the last forward (find_unused_parameters)

    def forward(self, *inputs, **kwargs):
        if self._started:
            missing = [self._param_names.get(id(p), "?") for i, p in enumerate(self._params) if not self._marked[i]]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`ember.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                f"participate in calculating loss. Parameters that did not receive a gradient: {missing}")
        # Buffers follow rank 0 in training forwards only (no collective in a no_grad evaluation,
        # where ranks may run different numbers of batches).
        if self.require_forward_param_sync and self.broadcast_buffers and ember.is_grad_enabled():
            bufs = list(self.module.buffers())
            if bufs:
                self._broadcast_coalesced(bufs)
        out = self.module(*inputs, **kwargs)
        if (self.find_unused_parameters or self.static_graph) and ember.is_grad_enabled() and \
                self.require_backward_grad_sync:
            self._unused = self._find_unused(out)
        return out

    def _find_unused(self, out):
        """Positions of the parameters the autograd graph of `out` does not reach."""
        reached = set()
        stack = [t.grad_fn for t in _tensors_in(out) if t.grad_fn is not None]
        seen = set()
        while stack:
            f = stack.pop()
            if f is None or id(f) in seen:
                continue
            seen.add(id(f))
            v = getattr(f, "variable", None)
            if v is not None:
                reached.add(id(v))
            stack.extend(n for n, _ in f.next_functions)
        for t in _tensors_in(out):  # an output that is itself a parameter
            reached.add(id(t))
        return [i for i, p in enumerate(self._params) if id(p) not in reached]

    def _mark_ready(self, i, has_grad=True):
        if not self.require_backward_grad_sync:
            return  # no_sync(): gradients accumulate locally
        if not self._started:
            self._started = True
            for u in self._unused:  # unused parameters join their buckets as soon as backward starts
                if u != i:
                    self._mark_ready(u, has_grad=False)
        if self._marked[i]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. Parameter {self._param_names.get(id(self._params[i]))}"
                " has been marked as ready twice: it may be used in several backward passes of one iteration, or "
                "be shared with another module (not supported by ember's DDP).")
        self._marked[i] = True
        b, j = self._where[i]
        p, view = self._params[i], b.views[j]
        g = p.grad
        with ember.no_grad():
            if g is None:
                view.zero_()
            else:
                self._locally_used[i] = has_grad
                if not (self.gradient_as_bucket_view and _same_memory(g, view)):
                    view.copy_(g)
                if self.gradient_as_bucket_view:
                    p.grad = view
            if self._comm_hook is None and self._world > 1:
                view.div_(self._world)  # the built-in all-reduce averages: divide, then sum
        b.pending -= 1
        if b.pending == 0:
            b.ready = True
            self._launch_ready()

    def _launch_ready(self):
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].ready:
            b = self._buckets[self._next_bucket]
            last = self._next_bucket == len(self._buckets) - 1
            if self._comm_hook is not None:
                fut = self._comm_hook(self._comm_state, GradBucket(b, last))
                if not hasattr(fut, "wait"):
                    raise RuntimeError("A communication hook must return a Future (ember.futures.Future)")
                b.handle = fut
            else:
                b.handle = self._dist.all_reduce(b.buffer, group=self.process_group, async_op=True)
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _finalize(self):
        """Waits for every bucket and writes the averaged gradients back (the last hook of backward)."""
        globally_used = None
        if self.find_unused_parameters or self.static_graph:
            used = ember.tensor([1 if u else 0 for u in self._locally_used], dtype=ember.int32)
            self._dist.all_reduce(used, group=self.process_group)
            globally_used = used.tolist()
        try:
            for b in self._buckets:
                if self._comm_hook is not None:
                    result = b.handle.wait()
                    if isinstance(result, (list, tuple)):
                        result = result[0]
                    if result is not b.buffer:
                        if result.shape != b.buffer.shape:
                            raise ValueError(f"The communication hook returned a tensor of shape {tuple(result.shape)}"
                                             f" for a bucket of shape {tuple(b.buffer.shape)}")
                        with ember.no_grad():
                            b.buffer.copy_(result)
                elif b.handle is not None:
                    b.handle.wait()
                with ember.no_grad():
                    for j, i in enumerate(b.indices):
                        p, view = b.params[j], b.views[j]
                        if globally_used is not None and not globally_used[i] and p.grad is None:
                            continue  # unused on every rank: .grad stays None, as in torch
                        if self.gradient_as_bucket_view:
                            p.grad = view
                        elif p.grad is None:
                            p.grad = view.clone()
                        else:
                            p.grad.copy_(view)
        finally:
            self._reset_iteration()

    # ---- public API ----

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of the backward passes inside accumulate locally; the next one outside syncs them all."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """Replaces the built-in all-reduce: hook(state, bucket: GradBucket) returns a Future whose value
        is the bucket's reduced (averaged) flat gradients. See ember.distributed.algorithms.ddp_comm_hooks."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = hook
        self._comm_state = state

    def _set_static_graph(self):
        self.static_graph = True

    def join(self, *args, **kwargs):
        raise NotImplementedError("DistributedDataParallel.join (uneven inputs) is not supported by ember")

    def extra_repr(self):
        return ""


def _make_hook(ddp_ref, i):
    def hook(param):
        ddp = ddp_ref()
        if ddp is not None:
            ddp._mark_ready(i)
    return hook


def _same_memory(a, b):
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()


def _tensors_in(obj):
    if isinstance(obj, ember.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)
