"""ember.utils.data against torch.utils.data: datasets, samplers, collation, DataLoader with workers."""
import collections
import os
import signal
import time

import numpy as np
import pytest

import ember
from ember.utils import data as ed

torch = pytest.importorskip("torch")
from torch.utils import data as td  # noqa: E402


def _tolist(x):
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return ("T", str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: _tolist(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_tolist(v) for v in x]
    return x


# ---- collation ----

Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("make", [
    lambda L: [L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])],
    lambda L: [1, 2, 3],
    lambda L: [1.5, 2.5],
    lambda L: [True, False],
    lambda L: ["a", "b"],
    lambda L: [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
    lambda L: [np.float32(1.0), np.float32(2.0)],
    lambda L: [{"a": L.tensor([1]), "b": 2}, {"a": L.tensor([3]), "b": 4}],
    lambda L: [(L.tensor([1]), 2), (L.tensor([3]), 4)],
    lambda L: [[L.tensor([1]), 2.0], [L.tensor([3]), 4.0]],
    lambda L: [Point(1, L.tensor(2.0)), Point(3, L.tensor(4.0))],
    lambda L: [L.zeros(0, 3), L.zeros(0, 3)],
])
def test_default_collate_matches_torch(make):
    assert _tolist(ed.default_collate(make(ember))) == _tolist(td.default_collate(make(torch)))


@pytest.mark.parametrize("make", [
    lambda L: [np.array([1, 2]), {"a": np.float64(1.0)}, (np.array([3.0]),), "s"],
    lambda L: Point(np.array([1]), 2),
])
def test_default_convert_matches_torch(make):
    assert _tolist(ed.default_convert(make(ember))) == _tolist(td.default_convert(make(torch)))


@pytest.mark.parametrize("bad", [[object(), object()], [[1, 2], [1]], [np.array(["a"]), np.array(["b"])]])
def test_default_collate_errors_match_torch(bad):
    with pytest.raises(Exception) as te:
        td.default_collate(bad)
    with pytest.raises(te.type):
        ed.default_collate(bad)


# ---- datasets ----

def test_tensor_concat_subset_stack_datasets():
    x, y = ember.arange(10.0).reshape(5, 2), ember.arange(5)
    ds = ed.TensorDataset(x, y)
    assert len(ds) == 5 and ds[2][1].item() == 2 and ds[2][0].tolist() == [4.0, 5.0]
    with pytest.raises(AssertionError):
        ed.TensorDataset(x, ember.arange(4))
    cat = ds + ds
    assert isinstance(cat, ed.ConcatDataset) and len(cat) == 10 and cat[7][1].item() == 2 and cat[-1][1].item() == 4
    sub = ed.Subset(ds, [4, 0])
    assert len(sub) == 2 and sub[0][1].item() == 4
    st = ed.StackDataset(a=ds, b=list(range(5)))
    assert st[3]["b"] == 3 and len(st) == 5
    with pytest.raises(ValueError):
        ed.StackDataset(ds, list(range(4)))


def test_random_split_lengths_fractions_and_generator():
    ds = list(range(10))
    g = ember.Generator().manual_seed(1) if hasattr(ember.Generator(), "manual_seed") else None
    a, b = ed.random_split(ds, [3, 7], generator=g)
    assert len(a) == 3 and len(b) == 7 and sorted(list(a) + list(b)) == ds
    parts = ed.random_split(range(11), [0.5, 0.5])
    assert [len(p) for p in parts] == [6, 5]  # leftovers go round-robin, as torch
    assert [len(p) for p in td.random_split(range(11), [0.5, 0.5])] == [6, 5]
    with pytest.raises(ValueError):
        ed.random_split(ds, [3, 3])
    g1, g2 = ember.Generator(), ember.Generator()
    g1.manual_seed(5)
    g2.manual_seed(5)
    assert list(ed.random_split(ds, [5, 5], generator=g1)[0]) == list(ed.random_split(ds, [5, 5], generator=g2)[0])


def test_chain_dataset():
    class R(ed.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    c = R(2) + R(3)
    assert list(c) == [0, 1, 0, 1, 2] and len(c) == 5


# ---- samplers ----

def test_samplers_behave_as_torch():
    assert list(ed.SequentialSampler(range(4))) == list(td.SequentialSampler(range(4)))
    rs = list(ed.RandomSampler(range(10)))
    assert sorted(rs) == list(range(10))
    assert len(list(ed.RandomSampler(range(10), replacement=True, num_samples=37))) == 37
    assert len(list(ed.RandomSampler(range(5), num_samples=12))) == 12
    assert sorted(ed.SubsetRandomSampler([3, 5, 7])) == [3, 5, 7]
    w = list(ed.WeightedRandomSampler([0.0, 1.0, 0.0], 20))
    assert w == [1] * 20
    assert list(ed.WeightedRandomSampler([1.0, 1.0], 2, replacement=False)) in ([0, 1], [1, 0])
    for n, bs, dl in [(10, 3, False), (10, 3, True), (9, 3, False), (0, 2, False)]:
        assert list(ed.BatchSampler(range(n), bs, dl)) == list(td.BatchSampler(range(n), bs, dl))
        assert len(ed.BatchSampler(range(n), bs, dl)) == len(td.BatchSampler(range(n), bs, dl))


@pytest.mark.parametrize("call", [
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, None),
    lambda m: m.WeightedRandomSampler([[1.0]], 2),
])
def test_sampler_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(td)
    with pytest.raises(te.type):
        call(ed)


def test_random_sampler_follows_manual_seed_and_generator():
    ember.manual_seed(7)
    a = list(ed.RandomSampler(range(20)))
    ember.manual_seed(7)
    assert list(ed.RandomSampler(range(20))) == a
    g = ember.Generator()
    g.manual_seed(3)
    b = list(ed.RandomSampler(range(20), generator=g))
    g.manual_seed(3)
    assert list(ed.RandomSampler(range(20), generator=g)) == b


def test_distributed_sampler_partitions_like_torch():
    for n, reps, drop in [(10, 3, False), (10, 3, True), (4, 4, False), (2, 3, False)]:
        for shuffle in (False, True):
            es = [list(ed.DistributedSampler(range(n), reps, r, shuffle=shuffle, drop_last=drop)) for r in range(reps)]
            ts = [list(td.DistributedSampler(range(n), reps, r, shuffle=shuffle, drop_last=drop)) for r in range(reps)]
            assert [len(e) for e in es] == [len(t) for t in ts]
            if not shuffle:
                assert es == ts
            elif not drop:  # every index is read, the padding repeats some
                assert set(sum(es, [])) == set(range(n))
    with pytest.raises(ValueError):
        ed.DistributedSampler(range(4), 2, 2)


# ---- DataLoader ----

class Squares(ed.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return {"x": ember.tensor([float(i), float(i * i)]), "i": i}

    def __len__(self):
        return self.n


class TSquares(td.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i), float(i * i)]), "i": i}

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kwargs", [dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=None),
                                    dict(batch_size=3, num_workers=2), dict(batch_size=5, num_workers=1),
                                    dict(batch_size=2, num_workers=2, prefetch_factor=1)])
def test_dataloader_sequential_matches_torch(kwargs):
    e = [_tolist(b) for b in ed.DataLoader(Squares(11), **kwargs)]
    t = [_tolist(b) for b in td.DataLoader(TSquares(11), **kwargs)]
    assert e == t
    assert len(ed.DataLoader(Squares(11), **kwargs)) == len(td.DataLoader(TSquares(11), **kwargs))


def test_shuffle_same_multiset_and_reproducible_across_worker_counts():
    def run(nw):
        g = ember.Generator()
        g.manual_seed(123)
        return [b["i"].tolist() for b in ed.DataLoader(Squares(23), batch_size=4, shuffle=True, generator=g,
                                                         num_workers=nw)]
    a, b, c = run(0), run(1), run(2)
    assert a == b == c
    assert sorted(sum(a, [])) == list(range(23))
    assert a != [list(range(i, min(i + 4, 23))) for i in range(0, 23, 4)]


def test_iterable_dataset_sharded_by_worker_info():
    class Stream(ed.IterableDataset):
        def __iter__(self):
            info = ed.get_worker_info()
            if info is None:
                return iter(range(13))
            assert info.dataset is not self or info.num_workers == 2
            return iter(range(info.id, 13, info.num_workers))

        def __len__(self):
            return 13

    out = [x for b in ed.DataLoader(Stream(), batch_size=3, num_workers=2) for x in b.tolist()]
    assert sorted(out) == list(range(13))
    assert [b.tolist() for b in ed.DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8],
                                                                          [9, 10, 11], [12]]
    assert len(ed.DataLoader(Stream(), batch_size=3)) == 5
    assert ed.get_worker_info() is None


def test_worker_batches_arrive_in_shared_memory_and_in_order_false():
    batches = list(ed.DataLoader(Squares(12), batch_size=3, num_workers=2))
    assert all(b["x"].is_shared() for b in batches)
    got = list(ed.DataLoader(Squares(12), batch_size=3, num_workers=2, in_order=False))
    assert sorted(x for b in got for x in b["i"].tolist()) == list(range(12))


def test_worker_init_fn_seeds_and_persistent_workers():
    def init(worker_id):
        info = ed.get_worker_info()
        assert info.id == worker_id and info.num_workers == 2

    class Rand(ed.Dataset):
        def __getitem__(self, i):
            return ember.rand(1)

        def __len__(self):
            return 8

    dl = ed.DataLoader(Rand(), batch_size=2, num_workers=2, worker_init_fn=init, persistent_workers=True)
    e1 = [b.tolist() for b in dl]
    e2 = [b.tolist() for b in dl]
    assert len(e1) == len(e2) == 4 and e1 != e2  # new epoch, new base seed
    assert dl._iterator is not None and all(w.is_alive() for w in dl._iterator._workers)
    dl._iterator._shutdown_workers()


def test_worker_exception_reraised_with_traceback():
    class Bad(ed.Dataset):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError("missing-key-5")
            return i

        def __len__(self):
            return 8

    with pytest.raises(KeyError, match="in DataLoader worker process") as ei:
        list(ed.DataLoader(Bad(), batch_size=2, num_workers=2))
    assert "missing-key-5" in str(ei.value) and "Traceback" in str(ei.value)


def test_killed_worker_raises_instead_of_hanging():
    class Suicide(ed.Dataset):
        def __getitem__(self, i):
            if i == 6:
                os.kill(os.getpid(), signal.SIGKILL)
            return i

        def __len__(self):
            return 20

    t0 = time.time()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by signal: Killed"):
        list(ed.DataLoader(Suicide(), batch_size=2, num_workers=2))
    assert time.time() - t0 < 30


def test_timeout_raises():
    class Slow(ed.Dataset):
        def __getitem__(self, i):
            time.sleep(3)
            return i

        def __len__(self):
            return 2

    with pytest.raises(RuntimeError, match="timed out"):
        list(ed.DataLoader(Slow(), num_workers=1, timeout=0.5))


def test_no_leaked_processes_after_loader_is_dropped():
    import multiprocessing  # noqa: PLC0415
    before = {p.pid for p in multiprocessing.active_children()}
    it = iter(ed.DataLoader(Squares(40), batch_size=2, num_workers=2))
    next(it)
    pids = [w.pid for w in it._workers]
    del it
    import gc  # noqa: PLC0415
    gc.collect()
    time.sleep(0.2)
    after = {p.pid for p in multiprocessing.active_children()}
    assert not (set(pids) & after) and after <= before | set()


@pytest.mark.parametrize("kwargs", [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2), dict(persistent_workers=True),
    dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
])
def test_dataloader_argument_errors_match_torch(kwargs):
    with pytest.raises(Exception) as te:
        td.DataLoader(TSquares(4), **kwargs)
    with pytest.raises(te.type):
        ed.DataLoader(Squares(4), **kwargs)


def test_iterable_dataset_rejects_shuffle_like_torch():
    class S(ed.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    class T(td.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError):
        td.DataLoader(T(), shuffle=True)
    with pytest.raises(ValueError):
        ed.DataLoader(S(), shuffle=True)


def test_pin_memory_warns_without_accelerator():
    with pytest.warns(UserWarning, match="pin_memory"):
        dl = ed.DataLoader(Squares(4), batch_size=2, pin_memory=True)
    assert len(list(dl)) == 2


def test_setting_attributes_after_init_raises():
    dl = ed.DataLoader(Squares(4))
    with pytest.raises(ValueError):
        dl.batch_size = 3


@pytest.mark.parametrize("ctx", ["spawn", "forkserver"])
def test_other_start_methods(ctx):
    x = ember.arange(20.0).reshape(10, 2)
    ds = ed.TensorDataset(x, ember.arange(10))
    out = [b[1].tolist() for b in ed.DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context=ctx)]
    assert out == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_utils_data_reachable_from_bare_import():
    assert ember.utils.data.DataLoader is ed.DataLoader
