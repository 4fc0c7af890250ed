"""ember.multiprocessing: tensors shared between processes, spawn() error propagation, Hogwild."""
import os

import pytest

import ember
import ember.multiprocessing as mp
import mp_helpers


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_tensor_sent_to_child_aliases_parent_memory(method):
    ctx = mp.get_context(method)
    t = ember.zeros(5)
    if method == "fork":
        t.share_memory_()  # fork copies private memory on write, as torch: share first
    q, done = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=mp_helpers.add_one, args=(t, q, done))
    p.start()
    v = q.get(timeout=60)
    done.set()
    p.join(60)
    assert p.exitcode == 0
    assert t.tolist() == [1.0] * 5  # the child's write is seen here
    assert v.is_shared() and t.is_shared()
    v.fill_(7)  # and ours in the view the child sent back
    assert t.tolist() == [1.0, 7.0, 7.0, 1.0, 1.0]


def test_share_memory_keeps_values_views_and_dtypes():
    for dt in (ember.float32, ember.int64, ember.bool, ember.float16, ember.complex64):
        x = ember.arange(6).to(dt).reshape(2, 3)
        v = x[:, 1]
        before = x.clone()
        assert not x.is_shared()
        assert x.share_memory_() is x
        assert x.is_shared() and v.is_shared()
        assert ember.equal(x, before)
        x[0, 1] = 0
        assert v[0].item() == 0  # the view follows its base to the new memory
    e = ember.empty(0)
    e.share_memory_()
    assert e.is_shared() and e.numel() == 0


def test_non_leaf_requiring_grad_refuses_to_cross_processes():
    from multiprocessing.reduction import ForkingPickler  # noqa: PLC0415
    x = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing"):
        ForkingPickler.dumps(x)
    leaf = ember.ones(2, requires_grad=True)
    assert len(ForkingPickler.dumps(leaf)) > 0


def test_spawn_propagates_exceptions_and_exit_codes():
    with pytest.raises(mp.ProcessRaisedException, match="rank one failed on purpose"):
        mp.spawn(mp_helpers.fail_on_one, nprocs=2)
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as ei:
        mp.spawn(mp_helpers.exit_on_zero, nprocs=2)
    assert ei.value.exit_code == 3
    ctx = mp.spawn(mp_helpers.fail_on_one, nprocs=1, join=False)
    while not ctx.join():
        pass


def test_hogwild_training_decreases_loss():
    ember.manual_seed(0)
    x = ember.randn(256, 8)
    w_true = ember.randn(8, 1)
    y = x @ w_true
    w = ember.zeros(8, 1).share_memory_()
    x.share_memory_()
    y.share_memory_()
    loss0 = ((x @ w - y) ** 2).mean().item()
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=mp_helpers.hogwild_worker, args=(r, w, x, y, 150, 0.05)) for r in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    loss1 = ((x @ w - y) ** 2).mean().item()
    assert loss1 < 0.01 * loss0


def test_nothing_left_in_dev_shm():
    before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    xs = [ember.ones(1000).share_memory_() for _ in range(5)]
    del xs
    after = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    assert after == before  # memfd segments have no name to leak


def test_sharing_strategy_api():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert "file_descriptor" in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("file_system_nonexistent")
