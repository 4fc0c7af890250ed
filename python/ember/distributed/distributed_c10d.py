"""Process groups and collectives: torch.distributed's functions over ember's C++ back ends.

Collectives are queued on the group's C++ worker thread (csrc/ember/distributed/), which runs
them without the GIL; with async_op=True the caller gets a Work handle at once, otherwise the
call waits for it (also without the GIL). Ranks in arguments are global ranks, as in torch;
group_dst/group_src/group_peer name ranks within the group.
"""
import atexit
import enum
import os
import pickle
import queue
import socket
import threading
import warnings
from datetime import timedelta

import ember
from ember._C import _distributed as _C_dist
from ember.distributed.rendezvous import rendezvous
from ember.futures import Future

__all__ = [
    "Backend", "ReduceOp", "GroupMember", "group", "ProcessGroup", "Work", "P2POp", "default_pg_timeout",
    "init_process_group", "destroy_process_group", "is_initialized", "is_available", "is_gloo_available",
    "is_nccl_available", "is_mpi_available", "is_ucc_available", "is_backend_available", "is_torchelastic_launched",
    "get_rank", "get_world_size", "get_backend", "new_group", "get_process_group_ranks", "get_global_rank",
    "get_group_rank", "get_pg_count", "get_node_local_rank",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
    "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "gather", "scatter", "barrier", "monitored_barrier",
    "send", "recv", "isend", "irecv", "batch_isend_irecv",
    "broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list", "send_object_list",
    "recv_object_list",
]

default_pg_timeout = timedelta(minutes=30)


def is_available():
    """True: ember is always built with its distributed package."""
    return True


def is_gloo_available():
    """True: the Gloo back end is part of every ember build."""
    return True


def is_nccl_available():
    """False: the NCCL back end comes with CUDA support."""
    return False


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_backend_available(backend):
    """Whether init_process_group accepts this backend name."""
    return Backend(backend) == Backend.GLOO


def is_torchelastic_launched():
    """True when this process was started by a launcher (ember.distributed.run sets TORCHELASTIC_RUN_ID)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK from the environment (set by the launcher), else fallback_rank."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


class Backend(str):
    """A back-end name: Backend("GLOO") == "gloo"."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        value = getattr(Backend, name.upper(), None)
        if value is None or not isinstance(value, str) or value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


class ReduceOp:
    """Reduction operations (ReduceOp.SUM, ...); the members are ReduceOp.RedOpType values."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


def _op_code(op):
    if isinstance(op, ReduceOp.RedOpType):
        if op == ReduceOp.PREMUL_SUM:
            raise NotImplementedError("ReduceOp.PREMUL_SUM is not supported by the gloo backend")
        return int(op)
    raise TypeError(f"op must be a ReduceOp (e.g. ReduceOp.SUM), got {op!r}")


class _NonGroupMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """GroupMember.WORLD is the default group once initialized; new_group returns NON_GROUP_MEMBER to
    the ranks it leaves out."""

    WORLD = None
    NON_GROUP_MEMBER = _NonGroupMember()


group = GroupMember  # torch.distributed.group.WORLD


class _FutureDispatcher:
    """A Python thread that completes the futures of a group's works in order (the C++ threads never
    take the GIL, so Python callbacks run here)."""

    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._thread = None
        self._lock = threading.Lock()

    def submit(self, work, future):
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ember-dist-futures", daemon=True)
                self._thread.start()
        self._queue.put((work, future))

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            work, fut = item
            try:
                work.wait()
            except BaseException as e:  # noqa: BLE001 - delivered through the future
                value, exc = None, e
            else:
                value, exc = list(work.result()), None
            try:
                if exc is None:
                    fut.set_result(value)
                else:
                    fut.set_exception(exc)
            except BaseException as e:  # noqa: BLE001 - a failing callback must not stop the thread
                warnings.warn(f"a callback of a distributed future raised {type(e).__name__}: {e}", stacklevel=1)

    def stop(self):
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                if self._thread is not threading.current_thread():
                    self._thread.join()
                self._thread = None


class ProcessGroup:
    """A set of ranks that run collectives together (from init_process_group or new_group)."""

    def __init__(self, impl, ranks, backend, group_name, store, timeout):
        self._impl = impl
        self._ranks = list(ranks)  # global rank of each group rank
        self._group_rank = {g: i for i, g in enumerate(self._ranks)}
        self._backend = Backend(backend)
        self.group_name = group_name
        self._store = store
        self._timeout = timeout
        self._futures = _FutureDispatcher()

    def rank(self):
        return self._impl.rank()

    def size(self):
        return self._impl.size()

    def name(self):
        return str(self._backend)

    @property
    def group_desc(self):
        return self.group_name

    def _shutdown(self):
        if self._impl is not None:
            self._impl.shutdown()  # waits (without the GIL) for the queued work
            self._futures.stop()

    def __repr__(self):
        return f"ProcessGroup(backend={self._backend}, rank={self.rank()}, size={self.size()}, name={self.group_name})"


class Work:
    """A collective in flight (async_op=True): wait(), is_completed(), get_future()."""

    def __init__(self, impl, pg, source_to_global=False):
        self._impl = impl
        self._pg = pg
        self._source_to_global = source_to_global

    def wait(self, timeout=None):
        """Blocks until the operation is done and raises its error; True."""
        if timeout is not None and not isinstance(timeout, timedelta):
            raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")
        return self._impl.wait(timeout)

    def synchronize(self):
        self.wait()

    def is_completed(self):
        return self._impl.is_completed()

    def is_success(self):
        return self._impl.is_success()

    def exception(self):
        """The operation's error once it failed, else None."""
        if not self._impl.is_completed() or self._impl.is_success():
            return None
        try:
            self._impl.wait()
        except Exception as e:  # noqa: BLE001
            return e
        return None

    def result(self):
        """The tensors the operation wrote."""
        return list(self._impl.result())

    def source_rank(self):
        """recv from any source: the sender's (global) rank."""
        r = self._impl.source_rank()
        return self._pg._ranks[r] if r >= 0 and self._source_to_global else r

    _source_rank = source_rank

    def get_future(self):
        """An ember.futures.Future completed with result() (or the error) when the work is done."""
        fut = Future()
        self._pg._futures.submit(self._impl, fut)
        return fut


class _World:
    default_pg = None
    store = None  # the default group's store, before any prefix
    groups = {}  # ProcessGroup -> None, in creation order
    group_count = 0


_world = _World()


def _gloo_device(store):
    """(hostname, iface) for a group's Gloo device: GLOO_SOCKET_IFNAME wins; with a TCPStore, the
    local address on the route to its server (right for one host and for many); else this host's
    name if it resolves to a local address, else the loopback address."""
    ifname = os.environ.get("GLOO_SOCKET_IFNAME")
    if ifname:
        return "", ifname.split(",")[0]
    base = store
    while isinstance(base, _C_dist.PrefixStore):
        base = base.underlying_store
    if isinstance(base, _C_dist.TCPStore):
        addr = _C_dist._local_address_towards(base.host)
        if addr:
            return addr, ""
    try:
        addr = socket.gethostbyname(socket.gethostname())
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((addr, 0))
        return addr, ""
    except OSError:
        return "127.0.0.1", ""


def _new_group_impl(ranks, my_rank, timeout, name):
    """A group over global `ranks` (sorted); every rank of the world calls this in the same order."""
    prefixed = _C_dist.PrefixStore(name, _world.store)
    hostname, iface = _gloo_device(_world.store)
    impl = _C_dist.ProcessGroupGloo(prefixed, ranks.index(my_rank), len(ranks), timeout, hostname, iface)
    pg = ProcessGroup(impl, ranks, Backend.GLOO, name, prefixed, timeout)
    _world.groups[pg] = None
    return pg


def _check_backend(backend):
    backend = Backend(backend if backend is not None else Backend.GLOO)
    if backend == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if backend != Backend.GLOO:
        raise ValueError(f"Invalid backend: '{backend}' (ember supports 'gloo')")
    return backend


def _check_timeout(timeout):
    if timeout is None:
        return default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    if timeout <= timedelta(0):
        raise ValueError(f"timeout must be positive, got {timeout}")
    return timeout


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Initializes the default process group: every rank calls it, and it returns once all have joined.

    init_method: "env://" (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; the default),
    "tcp://host:port" or "file:///path"; or pass a store with rank and world_size.
    """
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    backend = _check_backend(backend)
    timeout = _check_timeout(timeout)
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if store is not None:
        if not isinstance(world_size, int) or world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if not isinstance(rank, int) or rank < 0:
            raise ValueError("rank must be non-negative if using store")
        if rank >= world_size:
            raise ValueError(f"rank {rank} is out of range for world_size {world_size}")
    else:
        if init_method is None:
            init_method = "env://"
        store, rank, world_size = next(rendezvous(init_method, rank, world_size, timeout=timeout))
        if world_size <= 0 or not 0 <= rank < world_size:
            raise ValueError(f"invalid rank {rank} for world_size {world_size}")
        store.set_timeout(timeout)
    _world.store = store
    _world.group_count = 1
    try:
        pg = _new_group_impl(list(range(world_size)), rank, timeout, "0")
    except BaseException:
        _world.store = None
        raise
    _world.default_pg = pg
    GroupMember.WORLD = pg


def _shutdown_all():
    for pg in list(_world.groups):
        pg._shutdown()
    _world.groups.clear()
    _world.default_pg = None
    _world.store = None
    GroupMember.WORLD = None


atexit.register(_shutdown_all)


def destroy_process_group(group=None):
    """Destroys a group, or (None / the default group) every group and the default one."""
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group is None or group is _world.default_pg:
        _shutdown_all()
        return
    if group not in _world.groups:
        raise ValueError("Invalid process group specified")
    group._shutdown()
    del _world.groups[group]


def is_initialized():
    """Whether init_process_group has been called (and the group not destroyed)."""
    return _world.default_pg is not None


def _default_pg():
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _world.default_pg


def _resolve(group):
    if group is None or group is GroupMember.WORLD:
        return _default_pg()
    if group is GroupMember.NON_GROUP_MEMBER:
        return group
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    if group not in _world.groups:
        raise ValueError("Invalid process group specified (was it destroyed?)")
    return group


def get_rank(group=None):
    """This process's rank in group (-1 if it is not a member)."""
    pg = _resolve(group)
    return -1 if pg is GroupMember.NON_GROUP_MEMBER else pg.rank()


def get_world_size(group=None):
    """The number of ranks in group (-1 if this process is not a member)."""
    pg = _resolve(group)
    return -1 if pg is GroupMember.NON_GROUP_MEMBER else pg.size()


def get_backend(group=None):
    """The group's backend name ("gloo")."""
    pg = _resolve(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_pg_count():
    """How many process groups exist (the default one included)."""
    return len(_world.groups)


def get_process_group_ranks(group):
    """The global ranks of group, in group-rank order."""
    pg = _resolve(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return list(pg._ranks)


def get_global_rank(group, group_rank):
    """The global rank of group_rank in group."""
    pg = _resolve(group)
    if pg is GroupMember.NON_GROUP_MEMBER or not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank within group of global_rank."""
    pg = _resolve(group)
    if pg is GroupMember.NON_GROUP_MEMBER or global_rank not in pg._group_rank:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return pg._group_rank[global_rank]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A process group over a subset of the ranks. Every rank must call it, in the same order as the
    other new_group calls; ranks left out get GroupMember.NON_GROUP_MEMBER."""
    world = _default_pg()
    _check_backend(backend)
    timeout = _check_timeout(timeout if timeout is not None else world._timeout)
    if use_local_synchronization:
        raise NotImplementedError("new_group(use_local_synchronization=True) is not supported by ember")
    n = world.size()
    ranks = list(range(n)) if ranks is None else sorted(set(int(r) for r in ranks))
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(f"new_group: rank {r} is out of range for world_size {n}")
    if not ranks:
        raise ValueError("new_group: the list of ranks is empty")
    name = str(_world.group_count)
    _world.group_count += 1  # on every rank, members or not, so group names agree
    me = world.rank()
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    return _new_group_impl(ranks, me, timeout, name)


# ---- argument helpers ----

def _check_tensor(t, name):
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type ember.Tensor but got "
                        f"{type(t)} instead.")


def _check_tensor_list(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, ember.Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[ember.Tensor] but got "
                        f"{type(ts)} instead.")


def _not_member(pg, op):
    if pg is GroupMember.NON_GROUP_MEMBER:
        warnings.warn(f"Running {op} on global rank {get_rank()} which does not belong to the given group.",
                      stacklevel=3)
        return True
    return False


def _peer(pg, global_rank, group_rank, what, default=None):
    """The group rank for a global rank or a group rank argument (exactly one may be given)."""
    if global_rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group")
        return group_rank
    if global_rank is None:
        if default is None:
            raise ValueError(f"Must specify either {what} or group_{what}")
        global_rank = default
    if global_rank not in pg._group_rank:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._group_rank[global_rank]


def _done(work, pg, async_op, source_to_global=False):
    if async_op:
        return Work(work, pg, source_to_global)
    work.wait()
    return None


# ---- collectives ----

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces tensor over all ranks in place: every rank gets the result."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    if _not_member(pg, "all_reduce"):
        return None
    return _done(pg._impl.allreduce(tensor, _op_code(op)), pg, async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies tensor from rank src to every rank."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    if _not_member(pg, "broadcast"):
        return None
    root = _peer(pg, src, group_src, "src")
    return _done(pg._impl.broadcast(tensor, root), pg, async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces tensor over all ranks into rank dst's tensor (the others keep theirs)."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    if _not_member(pg, "reduce"):
        return None
    root = _peer(pg, dst, group_dst, "dst")
    return _done(pg._impl.reduce(tensor, root, _op_code(op)), pg, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] receives rank i's tensor, on every rank."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    if _not_member(pg, "all_gather"):
        return None
    return _done(pg._impl.allgather(list(tensor_list), tensor), pg, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """The inputs of all ranks, back to back in output_tensor (world_size times the input's size)."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _resolve(group)
    if _not_member(pg, "all_gather_into_tensor"):
        return None
    return _done(pg._impl.allgather_into_tensor(output_tensor, input_tensor), pg, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output = the reduction over ranks of input_list[rank]."""
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    pg = _resolve(group)
    if _not_member(pg, "reduce_scatter"):
        return None
    return _done(pg._impl.reduce_scatter(output, list(input_list), _op_code(op)), pg, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """input holds world_size chunks of output's size; output = the reduction of chunk[rank]."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _resolve(group)
    if _not_member(pg, "reduce_scatter_tensor"):
        return None
    n = pg.size()
    if input.numel() != output.numel() * n:
        raise ValueError(f"reduce_scatter_tensor: the input has {input.numel()} elements, expected world_size ({n}) "
                         f"times the output's {output.numel()}")
    if input.dtype != output.dtype:
        raise ValueError(f"reduce_scatter_tensor: input dtype {input.dtype} differs from the output's {output.dtype}")
    chunks = list(input.reshape(-1).chunk(n)) if output.numel() else [output] * n
    chunks = [c.view(output.shape) for c in chunks]
    return _done(pg._impl.reduce_scatter(output, chunks, _op_code(op)), pg, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """input_tensor_list[i] goes to rank i; output_tensor_list[i] comes from rank i."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    pg = _resolve(group)
    if _not_member(pg, "all_to_all"):
        return None
    return _done(pg._impl.alltoall(list(output_tensor_list), list(input_tensor_list)), pg, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """Splits input along dim 0 (equally, or by input_split_sizes), sends part i to rank i, and
    concatenates what arrives into output (by output_split_sizes)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _resolve(group)
    if _not_member(pg, "all_to_all_single"):
        return None
    out_splits = [int(s) for s in output_split_sizes] if output_split_sizes is not None else []
    in_splits = [int(s) for s in input_split_sizes] if input_split_sizes is not None else []
    return _done(pg._impl.alltoall_base(output, input, out_splits, in_splits), pg, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank dst receives every rank's tensor in gather_list (given on dst only)."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    if _not_member(pg, "gather"):
        return None
    root = _peer(pg, dst, group_dst, "dst", default=0 if group_dst is None else None)
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, "gather_list")
        outs = list(gather_list)
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        outs = []
    return _done(pg._impl.gather(outs, tensor, root), pg, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank src sends scatter_list[i] to rank i, which receives it in tensor."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    if _not_member(pg, "scatter"):
        return None
    root = _peer(pg, src, group_src, "src", default=0 if group_src is None else None)
    if pg.rank() == root:
        if scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, "scatter_list")
        ins = list(scatter_list)
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        ins = []
    return _done(pg._impl.scatter(tensor, ins, root), pg, async_op)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Waits until every rank of the group has reached the barrier."""
    pg = _resolve(group)
    if _not_member(pg, "barrier"):
        return None
    work = pg._impl.barrier()
    if async_op:
        return Work(work, pg)
    work.wait(_check_timeout(timeout) if timeout is not None else None)
    return None


_MONITOR_TAG = (1 << 31) - 2  # a tag user code is unlikely to use


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not reach it within timeout (rank 0 checks each)."""
    pg = _resolve(group)
    if _not_member(pg, "monitored_barrier"):
        return None
    timeout = _check_timeout(timeout if timeout is not None else pg._timeout)
    n, me = pg.size(), pg.rank()
    if n == 1:
        return None
    token = ember.zeros(1, dtype=ember.uint8)
    if me != 0:
        pg._impl.send(token, 0, _MONITOR_TAG).wait()
        pg._impl.recv(ember.zeros(1, dtype=ember.uint8), 0, _MONITOR_TAG).wait()
        return None
    works = {r: pg._impl.recv(ember.zeros(1, dtype=ember.uint8), r, _MONITOR_TAG) for r in range(1, n)}
    failed = []
    ms = int(timeout.total_seconds() * 1000)
    for r, w in works.items():
        try:
            w.wait(timeout)
        except RuntimeError as e:
            failed.append((pg._ranks[r], e))
            if not wait_all_ranks:
                raise RuntimeError(f"Rank {pg._ranks[r]} failed to pass monitoredBarrier in {ms} ms") from e
    if failed:
        names = ", ".join(str(r) for r, _ in failed)
        raise RuntimeError(f"Ranks {names} failed to pass monitoredBarrier in {ms} ms")
    for r in range(1, n):
        pg._impl.send(token, r, _MONITOR_TAG).wait()
    return None


# ---- point to point ----

def _check_tag(tag):
    if not isinstance(tag, int) or isinstance(tag, bool) or tag < 0 or tag >= (1 << 31):
        raise ValueError(f"tag must be an int in [0, 2**31), got {tag!r}")


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends tensor to rank dst; returns a Work."""
    _check_tensor(tensor, "tensor")
    _check_tag(tag)
    pg = _resolve(group)
    if _not_member(pg, "isend"):
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    return Work(pg._impl.send(tensor, peer, tag), pg)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into tensor from rank src (any rank if None); returns a Work."""
    _check_tensor(tensor, "tensor")
    _check_tag(tag)
    pg = _resolve(group)
    if _not_member(pg, "irecv"):
        return None
    peer = -1 if src is None and group_src is None else _peer(pg, src, group_src, "src")
    return Work(pg._impl.recv(tensor, peer, tag), pg, source_to_global=True)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends tensor to rank dst and waits until it has been sent."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into tensor from rank src (any rank if None); the sender's rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w.source_rank()


class P2POp:
    """One isend or irecv for batch_isend_irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv, send, recv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``ember.distributed.isend`` or "
                             "``ember.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op = isend if op in (isend, send) else irecv
        self.tensor = tensor
        self.peer = peer
        self.group = group
        self.tag = tag
        self.group_peer = group_peer

    def __repr__(self):
        return f"P2POp({self.op.__name__}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list):
    """Posts every send and receive of the list at once; their Work handles."""
    if not isinstance(p2p_op_list, (list, tuple)) or not p2p_op_list or \
            not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``ember.distributed.P2POp``.")
    groups = {id(_resolve(p.group)) for p in p2p_op_list}
    if len(groups) != 1:
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, group_dst=p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, group_src=p.group_peer))
    return works


# ---- object collectives (pickled into uint8 tensors) ----

def _to_tensor(obj):
    import numpy as np  # noqa: PLC0415

    data = pickle.dumps(obj)
    return ember.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def _to_object(t, size):
    return pickle.loads(t[:size].numpy().tobytes())


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replaces object_list on every rank by rank src's (picklable) objects, in place."""
    pg = _resolve(group)
    if _not_member(pg, "broadcast_object_list"):
        return
    root = _peer(pg, src, group_src, "src", default=0 if group_src is None else None)
    n = len(object_list)
    if pg.rank() == root:
        tensors = [_to_tensor(o) for o in object_list]
        sizes = ember.tensor([t.numel() for t in tensors], dtype=ember.int64)
    else:
        sizes = ember.zeros(n, dtype=ember.int64)
    pg._impl.broadcast(sizes, root).wait()
    total = int(sizes.sum())
    if pg.rank() == root:
        data = ember.cat(tensors) if tensors else ember.zeros(0, dtype=ember.uint8)
    else:
        data = ember.empty(total, dtype=ember.uint8)
    pg._impl.broadcast(data, root).wait()
    if pg.rank() != root:
        pos = 0
        for i, s in enumerate(sizes.tolist()):
            object_list[i] = _to_object(data[pos:pos + s], s)
            pos += s


def _gather_sizes(pg, t):
    sizes = [ember.zeros(1, dtype=ember.int64) for _ in range(pg.size())]
    pg._impl.allgather(sizes, ember.tensor([t.numel()], dtype=ember.int64)).wait()
    return [int(s.item()) for s in sizes]


def all_gather_object(object_list, obj, group=None):
    """object_list[i] = rank i's obj, on every rank (object_list must hold world_size entries)."""
    pg = _resolve(group)
    if _not_member(pg, "all_gather_object"):
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries, expected world_size "
                         f"({pg.size()})")
    t = _to_tensor(obj)
    sizes = _gather_sizes(pg, t)
    m = max(sizes)
    padded = ember.zeros(m, dtype=ember.uint8)
    padded[:t.numel()] = t
    outs = [ember.empty(m, dtype=ember.uint8) for _ in range(pg.size())]
    pg._impl.allgather(outs, padded).wait()
    for i, (o, s) in enumerate(zip(outs, sizes)):
        object_list[i] = _to_object(o, s)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank dst receives every rank's obj in object_gather_list (given on dst only)."""
    pg = _resolve(group)
    if _not_member(pg, "gather_object"):
        return
    root = _peer(pg, dst, group_dst, "dst", default=0 if group_dst is None else None)
    is_root = pg.rank() == root
    if is_root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: object_gather_list on the destination rank must hold world_size "
                         f"({pg.size()}) entries")
    t = _to_tensor(obj)
    sizes = _gather_sizes(pg, t)
    m = max(sizes)
    padded = ember.zeros(m, dtype=ember.uint8)
    padded[:t.numel()] = t
    outs = [ember.empty(m, dtype=ember.uint8) for _ in range(pg.size())] if is_root else []
    pg._impl.gather(outs, padded, root).wait()
    if is_root:
        for i, (o, s) in enumerate(zip(outs, sizes)):
            object_gather_list[i] = _to_object(o, s)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """Rank src sends scatter_object_input_list[i] to rank i, which finds it in
    scatter_object_output_list[0]."""
    pg = _resolve(group)
    if _not_member(pg, "scatter_object_list"):
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    root = _peer(pg, src, group_src, "src", default=0 if group_src is None else None)
    is_root = pg.rank() == root
    m = ember.zeros(1, dtype=ember.int64)
    if is_root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != pg.size():
            raise ValueError(f"scatter_object_list: scatter_object_input_list on the source rank must hold "
                             f"world_size ({pg.size()}) objects")
        tensors = [_to_tensor(o) for o in scatter_object_input_list]
        m[0] = max(t.numel() for t in tensors)
    pg._impl.broadcast(m, root).wait()
    size = int(m.item())
    if is_root:
        padded = []
        for t in tensors:
            p = ember.zeros(size, dtype=ember.uint8)
            p[:t.numel()] = t
            padded.append(p)
        lens = [ember.tensor([t.numel()], dtype=ember.int64) for t in tensors]
    else:
        padded, lens = [], []
    out = ember.empty(size, dtype=ember.uint8)
    out_len = ember.zeros(1, dtype=ember.int64)
    pg._impl.scatter(out, padded, root).wait()
    pg._impl.scatter(out_len, lens, root).wait()
    scatter_object_output_list[0] = _to_object(out, int(out_len.item()))


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Sends the picklable objects of object_list to rank dst."""
    pg = _resolve(group)
    if _not_member(pg, "send_object_list"):
        return
    peer = _peer(pg, dst, group_dst, "dst")
    tensors = [_to_tensor(o) for o in object_list]
    sizes = ember.tensor([t.numel() for t in tensors], dtype=ember.int64)
    pg._impl.send(sizes, peer, 0).wait()
    data = ember.cat(tensors) if tensors else ember.zeros(0, dtype=ember.uint8)
    pg._impl.send(data, peer, 0).wait()


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Receives len(object_list) objects from rank src into object_list; the sender's rank."""
    pg = _resolve(group)
    if _not_member(pg, "recv_object_list"):
        return -1
    peer = _peer(pg, src, group_src, "src")
    sizes = ember.zeros(len(object_list), dtype=ember.int64)
    pg._impl.recv(sizes, peer, 0).wait()
    data = ember.empty(int(sizes.sum()), dtype=ember.uint8)
    pg._impl.recv(data, peer, 0).wait()
    pos = 0
    for i, s in enumerate(sizes.tolist()):
        object_list[i] = _to_object(data[pos:pos + s], s)
        pos += s
    return pg._ranks[peer]
