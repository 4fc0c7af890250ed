"""Scenarios run by every rank of a test group (see dist_harness.py); each returns picklable results.

Inputs come from `make_input`, a pure function of (case, rank, dtype, n), so the tests can
recompute them and build NumPy references.
"""
import os
import time
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64"]
FLOATS = {"float32", "float64", "float16", "bfloat16"}
SIZES = [1, 5, 1000]
WORLD4_DTYPES = ["float32", "float64", "bfloat16", "int64", "uint8", "bool", "complex64"]  # keeps the run short


def dtypes_for(world):
    return DTYPES if world <= 2 else WORLD4_DTYPES


def ops_for(dtype):
    """The reductions defined for dtype (torch's rules)."""
    if dtype == "complex64":
        return ["SUM", "AVG"]
    ops = ["SUM", "PRODUCT", "MIN", "MAX"]
    if dtype in FLOATS:
        return ops + ["AVG"]
    return ops + ["BAND", "BOR", "BXOR"]


def make_input(case, rank, dtype, n):
    """Deterministic inputs: halves in [-2, 2] for floats (sums are exact), small integers, bools."""
    seed = (abs(hash_str(case)) * 131 + rank * 7919 + n * 31 + DTYPES.index(dtype)) % (2 ** 32)
    rng = np.random.default_rng(seed)
    if dtype in FLOATS:
        return (rng.integers(-4, 5, n) / 2).astype(np.float64)
    if dtype == "complex64":
        return (rng.integers(-4, 5, n) / 2 + 1j * rng.integers(-4, 5, n) / 2).astype(np.complex128)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype == "uint8":
        return rng.integers(0, 256, n).astype(np.uint8)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -60), min(info.max, 60)
    return rng.integers(lo, hi + 1, n).astype(dtype)


def hash_str(s):
    h = 0
    for c in s:
        h = (h * 31 + ord(c)) % (2 ** 31)
    return h


def to_ember(a, dtype):
    if dtype in ("float16", "bfloat16"):
        return ember.from_numpy(a.astype(np.float32)).to(getattr(ember, dtype))
    return ember.from_numpy(np.ascontiguousarray(a)).to(getattr(ember, dtype))


def to_numpy(t):
    if t.dtype == ember.bfloat16:
        return t.to(ember.float32).numpy().copy()
    return t.numpy().copy()


def _init(rank, world, port, timeout=20):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=timedelta(seconds=timeout))


# ---- scenarios ----

def collectives(rank, world, port):
    """Every tensor collective over the dtypes and sizes; outputs by (op, dtype, n)."""
    _init(rank, world, port)
    R = {}
    for dtype in dtypes_for(world):
        sizes = SIZES + ([300_000] if dtype == "float32" else [])
        for n in sizes:
            key = (dtype, n)
            big = n > 1000
            for op in (["SUM"] if big else ops_for(dtype)):
                t = to_ember(make_input("all_reduce_" + op, rank, dtype, n), dtype)
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                R[("all_reduce", op) + key] = to_numpy(t)
            if big:
                continue
            t = to_ember(make_input("broadcast", rank, dtype, n), dtype)
            dist.broadcast(t, src=world - 1)
            R[("broadcast",) + key] = to_numpy(t)
            for op in ("SUM", "MAX"):
                if op not in ops_for(dtype):
                    continue
                t = to_ember(make_input("reduce_" + op, rank, dtype, n), dtype)
                dist.reduce(t, dst=1 % world, op=getattr(dist.ReduceOp, op))
                R[("reduce", op) + key] = to_numpy(t)
            x = to_ember(make_input("all_gather", rank, dtype, n), dtype)
            outs = [ember.empty(n, dtype=x.dtype) for _ in range(world)]
            dist.all_gather(outs, x)
            R[("all_gather",) + key] = [to_numpy(o) for o in outs]
            o = ember.empty(world * n, dtype=x.dtype)
            dist.all_gather_into_tensor(o, x)
            R[("all_gather_into_tensor",) + key] = to_numpy(o)
            for op in ("SUM", "MAX"):
                if op not in ops_for(dtype):
                    continue
                ins = [to_ember(make_input(f"reduce_scatter_{op}_{j}", rank, dtype, n), dtype) for j in range(world)]
                o = ember.empty(n, dtype=x.dtype)
                dist.reduce_scatter(o, ins, op=getattr(dist.ReduceOp, op))
                R[("reduce_scatter", op) + key] = to_numpy(o)
                o2 = ember.empty(n, dtype=x.dtype)
                dist.reduce_scatter_tensor(o2, ember.cat(ins), op=getattr(dist.ReduceOp, op))
                R[("reduce_scatter_tensor", op) + key] = to_numpy(o2)
            # all_to_all with a different size for each pair: rank i sends (i + 2j) % 3 + n elements to j.
            ins = [to_ember(make_input(f"a2a_{j}", rank, dtype, (rank + 2 * j) % 3 + n), dtype) for j in range(world)]
            outs = [ember.empty((j + 2 * rank) % 3 + n, dtype=x.dtype) for j in range(world)]
            dist.all_to_all(outs, ins)
            R[("all_to_all",) + key] = [to_numpy(o) for o in outs]
            # all_to_all_single: equal parts of dim 0, then uneven splits (rank i sends i + j + 1 rows to j).
            inp = to_ember(make_input("a2as", rank, dtype, world * n * 2), dtype).reshape(world * n, 2)
            o = ember.empty(world * n, 2, dtype=x.dtype)
            dist.all_to_all_single(o, inp)
            R[("all_to_all_single",) + key] = to_numpy(o)
            in_splits = [rank + j + 1 for j in range(world)]
            out_splits = [j + rank + 1 for j in range(world)]
            inp = to_ember(make_input("a2asv", rank, dtype, sum(in_splits) * 3), dtype).reshape(-1, 3)
            o = ember.empty(sum(out_splits), 3, dtype=x.dtype)
            dist.all_to_all_single(o, inp, out_splits, in_splits)
            R[("all_to_all_single_v",) + key] = to_numpy(o)
            t = to_ember(make_input("gather", rank, dtype, n), dtype)
            gl = [ember.empty(n, dtype=x.dtype) for _ in range(world)] if rank == 0 else None
            dist.gather(t, gl, dst=0)
            R[("gather",) + key] = [to_numpy(g) for g in gl] if rank == 0 else None
            src = world - 1
            sl = [to_ember(make_input(f"scatter_{j}", rank, dtype, n), dtype) for j in range(world)] \
                if rank == src else None
            o = ember.empty(n, dtype=x.dtype)
            dist.scatter(o, sl, src=src)
            R[("scatter",) + key] = to_numpy(o)
    dist.barrier()
    dist.destroy_process_group()
    return R


def point_to_point(rank, world, port):
    """send/recv around a ring, isend/irecv, batch_isend_irecv, recv from any source, tags."""
    _init(rank, world, port)
    R = {}
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    x = ember.arange(6, dtype=ember.float32) + 100 * rank
    got = ember.empty(6)
    if rank % 2 == 0:
        dist.send(x, nxt)
        src = dist.recv(got, prv)
    else:
        src = dist.recv(got, prv)
        dist.send(x, nxt)
    R["ring"] = (to_numpy(got), src)
    # isend/irecv both ways, the receive posted first on odd ranks (no ordering deadlock).
    a = ember.full((3,), float(rank), dtype=ember.float64)
    b = ember.empty(3, dtype=ember.float64)
    if rank % 2:
        w1 = dist.irecv(b, prv)
        w2 = dist.isend(a, nxt)
    else:
        w2 = dist.isend(a, nxt)
        w1 = dist.irecv(b, prv)
    w1.wait()
    w2.wait()
    R["isend_irecv"] = (to_numpy(b), w1.is_completed(), w2.is_completed())
    # batch_isend_irecv with two tags to each neighbour; tags keep the messages apart.
    outs = {t: ember.empty(4, dtype=ember.int64) for t in (5, 9)}
    ops = []
    for t in (9, 5):
        ops.append(dist.P2POp(dist.isend, ember.full((4,), rank * 10 + t, dtype=ember.int64), nxt, tag=t))
    for t in (5, 9):
        ops.append(dist.P2POp(dist.irecv, outs[t], prv, tag=t))
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    R["batch"] = {t: to_numpy(o) for t, o in outs.items()}
    # Rank 0 receives from any source, world - 1 times.
    if rank == 0:
        seen = []
        for _ in range(world - 1):
            buf = ember.empty(1, dtype=ember.int32)
            s = dist.recv(buf, tag=3)
            seen.append((s, int(buf.item())))
        R["any_source"] = sorted(seen)
    else:
        dist.send(ember.tensor([rank * 11], dtype=ember.int32), 0, tag=3)
    # Non-contiguous receive buffer and send source.
    m = ember.arange(12, dtype=ember.float32).reshape(3, 4) + rank
    recvd = ember.zeros(3, 4).t()  # (4, 3), as the view sent
    w = dist.isend(m.t(), nxt)
    dist.recv(recvd, prv)
    w.wait()
    R["noncontig"] = to_numpy(recvd)
    dist.barrier()
    dist.destroy_process_group()
    return R


def objects_and_async(rank, world, port):
    """Object collectives, async_op Work handles and futures, non-contiguous tensors, groups."""
    _init(rank, world, port)
    R = {}
    objs = [{"rank": rank, "x": [rank] * rank}, "s" * (rank + 1), None] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(objs, src=1)
    R["broadcast_object_list"] = objs
    ag = [None] * world
    dist.all_gather_object(ag, ("r", rank, list(range(rank))))
    R["all_gather_object"] = ag
    go = [None] * world if rank == world - 1 else None
    dist.gather_object({"from": rank}, go, dst=world - 1)
    R["gather_object"] = go
    out = [None]
    dist.scatter_object_list(out, [f"to {j}" * (j + 1) for j in range(world)] if rank == 0 else None, src=0)
    R["scatter_object_list"] = out[0]
    # async all_reduce: Work and its future, and a chained then().
    t = ember.ones(8) * (rank + 1)
    w = dist.all_reduce(t, async_op=True)
    fut = w.get_future()
    chained = fut.then(lambda f: f.value()[0] * 2)
    v = fut.wait()
    R["future"] = (to_numpy(v[0]), v[0] is t, to_numpy(chained.wait()), w.wait(), w.is_completed(), w.is_success())
    # Several async ops in flight at once complete in order.
    ts = [ember.full((100,), float(rank + k)) for k in range(5)]
    works = [dist.all_reduce(x, async_op=True) for x in ts]
    for x in works:
        x.wait()
    R["in_flight"] = [float(x[0]) for x in ts]
    # Non-contiguous tensors: all_reduce and broadcast write through the view.
    base = ember.arange(12, dtype=ember.float32).reshape(3, 4) * (rank + 1)
    view = base.t()
    dist.all_reduce(view, op=dist.ReduceOp.MAX)
    R["noncontig_all_reduce"] = to_numpy(base)
    base2 = ember.arange(12, dtype=ember.float64).reshape(4, 3) + rank
    dist.broadcast(base2[:, 1], src=0)
    R["noncontig_broadcast"] = to_numpy(base2)
    # A group of the even ranks: collectives there leave the others alone; non-members get -1.
    evens = dist.new_group([r for r in range(world) if r % 2 == 0])
    R["group_rank"] = (dist.get_rank(evens), dist.get_world_size(evens))
    if rank % 2 == 0:
        g = ember.tensor([float(rank)])
        dist.all_reduce(g, group=evens)
        R["group_sum"] = float(g.item())
        R["group_ranks"] = dist.get_process_group_ranks(evens)
        b = ember.tensor([float(rank)])
        dist.broadcast(b, src=max(r for r in range(world) if r % 2 == 0), group=evens)
        R["group_bcast"] = float(b.item())
    else:
        R["group_is_non_member"] = evens is dist.GroupMember.NON_GROUP_MEMBER
    # Empty tensors go through every collective (Gloo is given no empty buffers), and a split of 0.
    e = ember.zeros(0)
    dist.all_reduce(e)
    dist.broadcast(e, 0)
    dist.all_gather([ember.zeros(0) for _ in range(world)], e)
    dist.all_gather_into_tensor(ember.zeros(0), e)
    dist.reduce_scatter(ember.zeros(0), [e] * world)
    dist.gather(e, [ember.zeros(0) for _ in range(world)] if rank == 0 else None, dst=0)
    dist.scatter(e, [e] * world if rank == 0 else None, src=0)
    splits = [3 if j == rank else 0 for j in range(world)]  # everything to itself
    out = ember.empty(3)
    dist.all_to_all_single(out, ember.arange(3.) + 10 * rank, splits, splits)
    R["empty_ok"] = out.tolist()
    dist.barrier()
    dist.monitored_barrier(timeout=timedelta(seconds=10))
    R["backend"] = (dist.get_backend(), dist.is_initialized(), dist.get_world_size(), dist.get_rank())
    dist.destroy_process_group()
    R["after"] = dist.is_initialized()
    return R


def bad_input(rank, world, port):
    """Argument errors raise the same exception on every rank without starting a collective."""
    _init(rank, world, port)
    errs = {}

    def err(name, f):
        try:
            f()
            errs[name] = None
        except Exception as e:  # noqa: BLE001
            errs[name] = (type(e).__name__, str(e))

    x = ember.ones(4)
    err("not_tensor", lambda: dist.all_reduce([1, 2]))
    err("band_float", lambda: dist.all_reduce(x, op=dist.ReduceOp.BAND))
    err("max_complex", lambda: dist.all_reduce(ember.ones(2, dtype=ember.complex64), op=dist.ReduceOp.MAX))
    err("avg_int", lambda: dist.all_reduce(ember.ones(2, dtype=ember.int64), op=dist.ReduceOp.AVG))
    err("premul", lambda: dist.all_reduce(x, op=dist.ReduceOp.PREMUL_SUM))
    err("bad_op", lambda: dist.all_reduce(x, op="sum"))
    err("bad_src", lambda: dist.broadcast(x, src=world))
    err("gather_list_size", lambda: dist.all_gather([ember.ones(4)], x))
    err("gather_shape", lambda: dist.all_gather([ember.ones(5)] * world, x))
    err("gather_dtype", lambda: dist.all_gather([ember.ones(4, dtype=ember.float64)] * world, x))
    err("agit_size", lambda: dist.all_gather_into_tensor(ember.ones(3), x))
    err("rst_size", lambda: dist.reduce_scatter_tensor(ember.ones(3), x))
    err("a2a_splits", lambda: dist.all_to_all_single(ember.ones(4), x, [1] * world, [5] * world))
    err("a2a_div", lambda: dist.all_to_all_single(ember.ones(3 * world + 1), ember.ones(3 * world + 1)))
    err("send_self", lambda: dist.send(x, rank))
    err("neg_tag", lambda: dist.send(x, (rank + 1) % world, tag=-1))
    err("scatter_list_nonsrc", lambda: dist.scatter(x, [x] * world, src=(rank + 1) % world))
    err("gather_list_missing", lambda: dist.gather(x, None, dst=rank))
    err("p2p_list", lambda: dist.batch_isend_irecv([1]))
    err("p2p_op", lambda: dist.P2POp(dist.all_reduce, x, 0))
    err("nccl", lambda: dist.new_group(backend="nccl"))
    err("twice", lambda: dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=1))
    # After all that, the group still works.
    t = ember.ones(3)
    dist.all_reduce(t)
    errs["still_works"] = t.tolist()
    dist.destroy_process_group()
    err("not_initialized", lambda: dist.get_rank())
    err("not_initialized_collective", lambda: dist.all_reduce(x))
    return errs


def peer_dies(rank, world, port, mode, pg_timeout):
    """Rank 1 dies (or hangs) after the first collective; the others must fail within the timeout."""
    _init(rank, world, port, timeout=pg_timeout)
    dist.all_reduce(ember.ones(4))
    if rank == 1:
        if mode == "exit":
            os._exit(17)
        time.sleep(pg_timeout + 0.5)  # alive but silent until the others gave up
        os._exit(0)
    t0 = time.monotonic()
    try:
        for _ in range(5):
            dist.all_reduce(ember.ones(100_000))
        return ("no error", time.monotonic() - t0)
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e), time.monotonic() - t0, isinstance(e, dist.DistError))


def init_methods(rank, world, port, method, path=""):
    """init_process_group through env://, file:// and an explicit store."""
    if method == "env":
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
        dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    elif method == "file":
        dist.init_process_group("gloo", init_method=f"file://{path}", rank=rank, world_size=world,
                                timeout=timedelta(seconds=20))
    elif method == "store":
        store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=timedelta(seconds=20))
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timedelta(seconds=20))
    t = ember.tensor([float(rank + 1)])
    dist.all_reduce(t)
    out = (float(t.item()), dist.get_rank(), dist.get_world_size())
    dist.destroy_process_group()
    return out


def torch_interop(rank, world, port, tport):
    """The same inputs through ember and torch.distributed (both on Gloo); both outputs."""
    import torch  # noqa: PLC0415
    import torch.distributed as tdist  # noqa: PLC0415

    _init(rank, world, port)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{tport}", rank=rank, world_size=world)
    R = {}

    def both(name, dtype, n, fn):
        a = make_input(name, rank, dtype, n)
        e = to_ember(a, dtype)
        t = torch.from_numpy(a.astype(np.float32) if dtype in ("float16", "bfloat16") else a).to(getattr(torch, dtype))
        e_out, t_out = fn(dist, e), fn(tdist, t)
        conv = (lambda x: x.float().numpy() if x.dtype == torch.bfloat16 else x.numpy())
        R[(name, dtype, n)] = (_flat(e_out, to_numpy), _flat(t_out, conv))

    for dtype in ["float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool"]:
        for n in (1000,):
            for op in ops_for(dtype):
                if op == "AVG" and dtype not in FLOATS:
                    continue

                def ar(d, x, op=op):
                    d.all_reduce(x, op=getattr(d.ReduceOp, op))
                    return x
                both("all_reduce_" + op, dtype, n, ar)

            def rd(d, x):  # torch's Gloo leaves partial sums in the other ranks' tensors: compare the root's
                d.reduce(x, dst=0)
                return x if rank == 0 else x[:0]
            both("reduce", dtype, n, rd)

            def bc(d, x):
                d.broadcast(x, src=world - 1)
                return x
            both("broadcast", dtype, n, bc)

            def agit(d, x):
                o = (ember if d is dist else torch).empty(world * n, dtype=x.dtype)
                d.all_gather_into_tensor(o, x)
                return o
            both("all_gather_into_tensor", dtype, n, agit)

            if dtype in FLOATS or dtype in ("int64", "int32"):
                def rst(d, x):
                    lib = ember if d is dist else torch
                    o = lib.empty(n // world if n % world == 0 else 1, dtype=x.dtype)
                    d.reduce_scatter_tensor(o, x[:o.numel() * world])
                    return o
                both("reduce_scatter_tensor", dtype, n, rst)

            def a2a(d, x):
                lib = ember if d is dist else torch
                m = (n // world) * world
                o = lib.empty(m, dtype=x.dtype)
                d.all_to_all_single(o, x[:m].contiguous())
                return o
            both("all_to_all_single", dtype, n, a2a)
    tdist.destroy_process_group()
    dist.destroy_process_group()
    return R


def _flat(x, conv):
    return conv(x.detach().reshape(-1).clone())


# ---- DistributedDataParallel ----

def ddp_model(seed, unused_branch=False):
    ember.manual_seed(seed)
    nn = ember.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(10, 32)
            self.fc2 = nn.Linear(32, 16)
            self.fc3 = nn.Linear(16, 3)
            self.extra = nn.Linear(16, 3) if unused_branch else None
            self.register_buffer("steps", ember.zeros(1))

        def forward(self, x, use_extra=False):
            h = ember.relu(self.fc2(ember.relu(self.fc1(x))))
            out = self.fc3(h)
            if use_extra:
                out = out + self.extra(h)
            return out

    return Net()


def ddp_data(step, batch):
    g = np.random.default_rng(1000 + step)
    x = g.standard_normal((batch, 10)).astype(np.float32)
    y = g.integers(0, 3, batch)
    return ember.from_numpy(x), ember.from_numpy(y)


def ddp_reference(variant, world, steps=20, per_rank=8):
    """Single-process training on the concatenated batches of every rank: the final parameters."""
    model = ddp_model(seed=0, unused_branch=variant == "unused")
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x, y = ddp_data(step, per_rank * world)
        opt.zero_grad()
        if variant == "no_sync":
            half = per_rank // 2
            for k in range(2):  # the same two micro-batches per rank, accumulated
                idx = np.concatenate([np.arange(r * per_rank + k * half, r * per_rank + (k + 1) * half)
                                      for r in range(world)])
                loss = ember.nn.functional.cross_entropy(model(x[ember.from_numpy(idx)]), y[ember.from_numpy(idx)])
                loss.backward()
        elif variant == "unused":
            # The mean of the ranks' losses, rank 0's with the extra branch on even steps.
            losses = [ember.nn.functional.cross_entropy(
                model(x[r * per_rank:(r + 1) * per_rank], use_extra=step % 2 == 0 and r == 0),
                y[r * per_rank:(r + 1) * per_rank]) for r in range(world)]
            (sum(losses) / world).backward()
        else:
            loss = ember.nn.functional.cross_entropy(model(x), y)
            loss.backward()
        opt.step()
    return {n: to_numpy(p.detach()) for n, p in model.named_parameters()}


def ddp(rank, world, port, variants, steps=20, per_rank=8):
    """The same training with DDP, each rank on its slice of every batch; final parameters per variant."""
    from ember.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: PLC0415
    from ember.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    _init(rank, world, port)
    R = {variant: _ddp_train(variant, rank, world, steps, per_rank) for variant in variants}
    dist.destroy_process_group()
    return R


def _ddp_train(variant, rank, world, steps, per_rank):
    from ember.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: PLC0415
    from ember.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    # Different initial weights on each rank: DDP must start every rank from rank 0's.
    model = ddp_model(seed=rank, unused_branch=variant == "unused")
    kw = {}
    if variant == "small_buckets":
        kw = dict(bucket_cap_mb=1e-6, gradient_as_bucket_view=True)
    if variant == "unused":
        kw = dict(find_unused_parameters=True)
    m = DDP(model, **kw)
    launches = []
    if variant in ("allreduce_hook", "fp16_hook", "bf16_hook", "small_buckets"):
        hook = {"fp16_hook": default_hooks.fp16_compress_hook, "bf16_hook": default_hooks.bf16_compress_hook}.get(
            variant, default_hooks.allreduce_hook)

        def recording(state, bucket, hook=hook, m=m):
            launches.append((bucket.index(), sum(m._marked), len(m._marked)))
            return hook(state, bucket)
        m.register_comm_hook(None, recording)
    opt = ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x, y = ddp_data(step, per_rank * world)
        xs, ys = x[rank * per_rank:(rank + 1) * per_rank], y[rank * per_rank:(rank + 1) * per_rank]
        opt.zero_grad()
        if variant == "no_sync":
            half = per_rank // 2
            with m.no_sync():
                ember.nn.functional.cross_entropy(m(xs[:half]), ys[:half]).backward()
            ember.nn.functional.cross_entropy(m(xs[half:]), ys[half:]).backward()
        else:
            # "unused": the extra branch runs on even steps, and only on rank 0 (the others' gradients
            # for it are zeros, averaged in).
            use_extra = variant == "unused" and step % 2 == 0 and rank == 0
            ember.nn.functional.cross_entropy(m(xs, use_extra=use_extra), ys).backward()
        opt.step()
    return {
        "params": {n: to_numpy(p.detach()) for n, p in model.named_parameters()},
        "buckets": len(m._buckets),
        "launches": launches[:len(m._buckets)],
        "state_dict_keys": sorted(m.state_dict().keys())[:3],
        "grad_is_view": variant == "small_buckets" and all(
            p.grad is not None and p.grad.data_ptr() == v.data_ptr()
            for b in m._buckets for p, v in zip(b.params, b.views)),
    }


def ddp_under_launcher(out_dir, steps=10):
    """Run by a launcher's worker (env://): DDP training; its results and the address Gloo used."""
    import pickle  # noqa: PLC0415

    from ember.distributed.distributed_c10d import _gloo_device, _world  # noqa: PLC0415

    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank, world = dist.get_rank(), dist.get_world_size()
    res = _ddp_train("default", rank, world, steps, 8)
    res["gloo_address"] = _gloo_device(_world.store)
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(res, f)


def ddp_checks(rank, world, port):
    """Buffers follow rank 0 at each forward; a parameter left without gradient is reported at the next
    forward; bad arguments."""
    from ember.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    _init(rank, world, port)
    R = {}
    model = ddp_model(seed=rank, unused_branch=True)
    m = DDP(model)
    model.steps.fill_(float(rank + 5))
    x, y = ddp_data(0, 4)
    out = m(x)
    R["buffer_after_forward"] = float(model.steps.item())
    R["same_weights"] = to_numpy(model.fc1.weight.detach())
    ember.nn.functional.cross_entropy(out, y).backward()  # `extra` gets no gradient
    try:
        m(x)
        R["unfinished"] = None
    except RuntimeError as e:
        R["unfinished"] = str(e)

    def err(name, f):
        try:
            f()
            R[name] = None
        except Exception as e:  # noqa: BLE001
            R[name] = (type(e).__name__, str(e))

    err("device_ids", lambda: DDP(ddp_model(0), device_ids=[0]))
    err("no_params", lambda: DDP(ember.nn.ReLU()))
    err("not_module", lambda: DDP(lambda x: x))
    m2 = DDP(ddp_model(0), broadcast_buffers=False)
    err("hook_twice", lambda: (m2.register_comm_hook(None, lambda s, b: None),
                               m2.register_comm_hook(None, lambda s, b: None)))
    m3 = DDP(ddp_model(0))
    m3.register_comm_hook(None, lambda s, b: b.buffer())  # not a future
    err("hook_no_future", lambda: ember.nn.functional.cross_entropy(m3(x), y).backward())
    dist.destroy_process_group()
    return R


def init_alone(rank, world, port, method):
    """A world of 2 where only this rank comes: init_process_group raises within its timeout."""
    t0 = time.monotonic()
    try:
        if method == "master":
            _init(0, 2, port, timeout=1)
        else:  # a non-zero rank whose master never starts
            _init(1, 2, port, timeout=1)
        return ("no error", time.monotonic() - t0)
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e), time.monotonic() - t0)


def _sync_bn_data(world, per_rank, step):
    rng = np.random.RandomState(100 + step)
    return rng.randn(world * per_rank, 3, 4, 4).astype(np.float64) * 2 + 1


def _sync_bn_module(cls):
    bn = cls(3, momentum=0.3).double()
    with ember.no_grad():
        bn.weight.copy_(ember.tensor([1.0, 2.0, -0.5], dtype=ember.float64))
        bn.bias.copy_(ember.tensor([0.1, 0.0, 0.3], dtype=ember.float64))
    return bn


def _sync_bn_step(bn, x):
    """One training step on x: output, gradients and running statistics."""
    x = ember.from_numpy(x.copy()).requires_grad_()
    y = bn(x)
    (y * y.detach().cos()).sum().backward()  # a loss whose gradient differs per element
    r = {"y": to_numpy(y.detach()), "gx": to_numpy(x.grad), "gw": to_numpy(bn.weight.grad),
         "gb": to_numpy(bn.bias.grad), "rm": to_numpy(bn.running_mean), "rv": to_numpy(bn.running_var)}
    bn.weight.grad = bn.bias.grad = None
    return r


def sync_batchnorm(rank, world, port, steps=3, per_rank=4):
    """SyncBatchNorm(3) in training on this rank's slice of each step's batch, to compare with
    BatchNorm2d over the whole batch in one process (sync_batchnorm_reference)."""
    _init(rank, world, port)
    bn = _sync_bn_module(ember.nn.SyncBatchNorm)
    out = [_sync_bn_step(bn, _sync_bn_data(world, per_rank, s)[rank * per_rank:(rank + 1) * per_rank])
           for s in range(steps)]
    dist.destroy_process_group()
    return out


def sync_batchnorm_reference(world, steps=3, per_rank=4):
    # the whole batch's weight and bias gradients are the sum of the ranks' (each rank's loss
    # covers its slice): the test compares them through that sum
    bn = _sync_bn_module(ember.nn.BatchNorm2d)
    return [_sync_bn_step(bn, _sync_bn_data(world, per_rank, s)) for s in range(steps)]
