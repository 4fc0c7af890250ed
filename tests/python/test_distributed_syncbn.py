"""SyncBatchNorm over Gloo: 2 processes, each with half of every batch, give the outputs, input
gradients, summed weight/bias gradients and running statistics of one BatchNorm2d over the whole
batch; outside a process group it is BatchNorm. convert_sync_batchnorm keeps parameters, buffers
and modes. (torch's SyncBatchNorm needs GPUs for the synchronized case; ember's runs on the CPU.)"""
import numpy as np
import pytest

import ember
from dist_cases import sync_batchnorm_reference
from dist_harness import run_ranks

WORLD, PER_RANK = 2, 4


def test_sync_batchnorm_matches_one_big_batch(tmp_path):
    res = run_ranks("sync_batchnorm", WORLD, tmp_path, timeout=120, per_rank=PER_RANK)
    ref = sync_batchnorm_reference(WORLD, per_rank=PER_RANK)
    for step, want in enumerate(ref):
        sl = [slice(r * PER_RANK, (r + 1) * PER_RANK) for r in range(WORLD)]
        for r in range(WORLD):
            got = res[r][step]
            np.testing.assert_allclose(got["y"], want["y"][sl[r]], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(got["gx"], want["gx"][sl[r]], rtol=1e-9, atol=1e-11)
            np.testing.assert_allclose(got["rm"], want["rm"], rtol=1e-12)
            np.testing.assert_allclose(got["rv"], want["rv"], rtol=1e-12)
        for key in ("gw", "gb"):
            np.testing.assert_allclose(sum(res[r][step][key] for r in range(WORLD)), want[key], rtol=1e-9,
                                       atol=1e-11)


def test_sync_batchnorm_without_a_group_is_batchnorm():
    x = ember.randn(6, 3, 5, 5, dtype=ember.float64)
    sync, plain = ember.nn.SyncBatchNorm(3).double(), ember.nn.BatchNorm2d(3).double()
    for mode in ("train", "eval"):
        getattr(sync, mode)(), getattr(plain, mode)()
        assert ember.allclose(sync(x), plain(x))
    assert ember.allclose(sync.running_var, plain.running_var)
    with pytest.raises(ValueError):
        sync(ember.ones(3))
    with pytest.raises(ValueError):
        ember.nn.SyncBatchNorm(0)(ember.ones(2, 0, 3))


def test_convert_sync_batchnorm_keeps_state():
    m = ember.nn.Sequential(ember.nn.Conv2d(2, 3, 3), ember.nn.BatchNorm2d(3),
                            ember.nn.Sequential(ember.nn.BatchNorm1d(4, affine=False)))
    m[1](ember.randn(4, 3, 2, 2))  # some running statistics
    m.eval()
    before = {k: v.clone() for k, v in m.state_dict().items()}
    c = ember.nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert isinstance(c[1], ember.nn.SyncBatchNorm) and isinstance(c[2][0], ember.nn.SyncBatchNorm)
    assert isinstance(c[0], ember.nn.Conv2d) and not c[1].training and c[2][0].weight is None
    after = c.state_dict()
    assert after.keys() == before.keys()
    assert all(ember.equal(after[k], before[k]) for k in before)
    assert list(ember.nn.DataParallel(ember.nn.Linear(2, 2)).state_dict()) == ["module.weight", "module.bias"]
