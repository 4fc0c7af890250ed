"""DistributedDataParallel: 20 SGD steps on 2 processes equal single-process training on the
concatenated batches, for the built-in all-reduce, small buckets with gradient_as_bucket_view,
no_sync accumulation, find_unused_parameters and the default communication hooks."""
import numpy as np
import pytest

from dist_cases import ddp_reference
from dist_harness import run_ranks

VARIANTS = ["default", "small_buckets", "no_sync", "unused", "allreduce_hook", "fp16_hook", "bf16_hook"]
WORLD = 2


@pytest.fixture(scope="module")
def ddp_runs(tmp_path_factory):
    return run_ranks("ddp", WORLD, tmp_path_factory.mktemp("ddp"), timeout=120, variants=VARIANTS)


@pytest.mark.parametrize("variant", VARIANTS)
def test_ddp_matches_single_process(ddp_runs, variant):
    ref = ddp_reference(variant, WORLD)
    # Compressed hooks round the averaged gradients to 16 bits each step.
    tol = {"fp16_hook": 2e-3, "bf16_hook": 2e-2}.get(variant, 1e-5)
    for r in range(WORLD):
        got = ddp_runs[r][variant]["params"]
        assert got.keys() == ref.keys()
        for name in ref:
            np.testing.assert_allclose(got[name], ref[name], rtol=tol, atol=tol, err_msg=f"{variant} {name} rank {r}")
    # Every rank ends with identical parameters.
    for name in ref:
        np.testing.assert_array_equal(ddp_runs[0][variant]["params"][name], ddp_runs[1][variant]["params"][name])


def test_ddp_buckets_overlap_backward(ddp_runs):
    r = ddp_runs[0]["small_buckets"]
    # A tiny bucket_cap_mb gives one bucket per parameter; bucket 0 (the last layer's) is sent while
    # most of the other gradients are still to be computed.
    assert r["buckets"] == 6
    first = r["launches"][0]
    assert first[0] == 0 and first[1] < first[2] // 2
    assert [b for b, _, _ in r["launches"]] == list(range(6))
    assert r["grad_is_view"]
    assert ddp_runs[0]["default"]["buckets"] == 1
    assert ddp_runs[0]["default"]["state_dict_keys"][0].startswith("module.")


def test_ddp_buffers_errors(tmp_path):
    res = run_ranks("ddp_checks", WORLD, tmp_path)
    for r in range(WORLD):
        R = res[r]
        assert R["buffer_after_forward"] == 5.0  # rank 0's buffer, broadcast by forward
        np.testing.assert_array_equal(R["same_weights"], res[0]["same_weights"])  # rank 0's weights
        assert R["unfinished"] is not None and "Expected to have finished reduction" in R["unfinished"]
        assert "extra.weight" in R["unfinished"]
        assert R["device_ids"][0] == "ValueError"
        assert R["no_params"][0] == "RuntimeError"
        assert R["not_module"][0] == "TypeError"
        assert R["hook_twice"] == ("RuntimeError", "register_comm_hook or register_builtin_comm_hook can only be "
                                                   "called once.")
        assert R["hook_no_future"][0] == "RuntimeError" and "Future" in R["hook_no_future"][1]
