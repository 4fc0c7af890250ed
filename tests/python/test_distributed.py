"""ember.distributed collectives with 2 and 4 processes against NumPy references (and torch's Gloo).

Each scenario of dist_cases.py runs once per world size in fresh processes (module-scoped
fixtures); the tests compare what every rank got with a reference computed here from the same
deterministic inputs.
"""
import numpy as np
import pytest

from dist_cases import DTYPES, FLOATS, SIZES, dtypes_for, make_input, ops_for
from dist_harness import free_port, run_ranks

WORLDS = [2, 4]
RTOL = {"float32": 1e-6, "float64": 1e-12, "float16": 1e-3, "bfloat16": 1e-2, "complex64": 1e-6}


@pytest.fixture(scope="module", params=WORLDS, ids=lambda w: f"world{w}")
def collectives(request, tmp_path_factory):
    w = request.param
    return w, run_ranks("collectives", w, tmp_path_factory.mktemp(f"coll{w}"), timeout=120)


@pytest.fixture(scope="module", params=WORLDS, ids=lambda w: f"world{w}")
def p2p(request, tmp_path_factory):
    w = request.param
    return w, run_ranks("point_to_point", w, tmp_path_factory.mktemp(f"p2p{w}"))


@pytest.fixture(scope="module", params=WORLDS, ids=lambda w: f"world{w}")
def objects(request, tmp_path_factory):
    w = request.param
    return w, run_ranks("objects_and_async", w, tmp_path_factory.mktemp(f"obj{w}"))


def as_dtype(a, dtype):
    """Input values as the tensor held them (float16/bfloat16 inputs are exact halves)."""
    if dtype == "bfloat16":
        return a.astype(np.float32)
    if dtype == "complex64":
        return a.astype(np.complex64)
    return a.astype(dtype)


def inputs(case, world, dtype, n):
    return [as_dtype(make_input(case, r, dtype, n), dtype) for r in range(world)]


def reduce_ref(arrs, op, dtype):
    s = np.stack(arrs)
    if dtype == "bool":
        f = {"SUM": np.any, "MAX": np.any, "BOR": np.any, "PRODUCT": np.all, "MIN": np.all, "BAND": np.all}
        if op == "BXOR":
            return np.logical_xor.reduce(s, axis=0)
        return f[op](s, axis=0)
    wide = s.astype(np.float64) if dtype in FLOATS else s
    if op == "SUM":
        return wide.sum(axis=0, dtype=wide.dtype)  # integers wrap, as in torch
    if op == "AVG":
        return wide.mean(axis=0)
    if op == "PRODUCT":
        return wide.prod(axis=0, dtype=wide.dtype)
    if op == "MIN":
        return wide.min(axis=0)
    if op == "MAX":
        return wide.max(axis=0)
    return {"BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}[op].reduce(s, axis=0)


def check(got, want, dtype, what):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    if dtype in RTOL:
        np.testing.assert_allclose(got.astype(np.complex128 if dtype == "complex64" else np.float64),
                                   want, rtol=RTOL[dtype], atol=RTOL[dtype], err_msg=what)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)


def skip_unless_run(world, dtype):
    if dtype not in dtypes_for(world):
        pytest.skip(f"{dtype} runs with 2 processes only (keeps the 4-process run short)")


def sizes(dtype):
    return SIZES + ([300_000] if dtype == "float32" else [])


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_reduce_every_op(collectives, dtype):
    world, res = collectives
    skip_unless_run(world, dtype)
    for n in sizes(dtype):
        for op in (["SUM"] if n > 1000 else ops_for(dtype)):
            want = reduce_ref(inputs("all_reduce_" + op, world, dtype, n), op, dtype)
            for r in range(world):
                check(res[r][("all_reduce", op, dtype, n)], want, dtype, f"all_reduce {op} {dtype} n={n} rank {r}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_and_reduce(collectives, dtype):
    world, res = collectives
    skip_unless_run(world, dtype)
    root = 1 % world
    for n in SIZES:
        src = inputs("broadcast", world, dtype, n)[world - 1]
        for r in range(world):
            check(res[r][("broadcast", dtype, n)], src, dtype, f"broadcast rank {r}")
        for op in ("SUM", "MAX"):
            if op not in ops_for(dtype):
                continue
            ins = inputs("reduce_" + op, world, dtype, n)
            for r in range(world):
                want = reduce_ref(ins, op, dtype) if r == root else ins[r]  # others keep their input
                check(res[r][("reduce", op, dtype, n)], want, dtype, f"reduce {op} rank {r}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather_and_gather(collectives, dtype):
    world, res = collectives
    skip_unless_run(world, dtype)
    for n in SIZES:
        ins = inputs("all_gather", world, dtype, n)
        for r in range(world):
            got = res[r][("all_gather", dtype, n)]
            for j in range(world):
                check(got[j], ins[j], dtype, f"all_gather rank {r} slot {j}")
            check(res[r][("all_gather_into_tensor", dtype, n)], np.concatenate(ins), dtype, "all_gather_into_tensor")
        ins = inputs("gather", world, dtype, n)
        for j in range(world):
            check(res[0][("gather", dtype, n)][j], ins[j], dtype, f"gather slot {j}")
        for r in range(1, world):
            assert res[r][("gather", dtype, n)] is None


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter(collectives, dtype):
    world, res = collectives
    skip_unless_run(world, dtype)
    for n in SIZES:
        src_inputs = [as_dtype(make_input(f"scatter_{j}", world - 1, dtype, n), dtype) for j in range(world)]
        for r in range(world):
            check(res[r][("scatter", dtype, n)], src_inputs[r], dtype, f"scatter rank {r}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_scatter(collectives, dtype):
    world, res = collectives
    skip_unless_run(world, dtype)
    for n in SIZES:
        for op in ("SUM", "MAX"):
            if op not in ops_for(dtype):
                continue
            for r in range(world):
                # Rank r gets the reduction over ranks of their r-th input.
                parts = [as_dtype(make_input(f"reduce_scatter_{op}_{r}", k, dtype, n), dtype) for k in range(world)]
                want = reduce_ref(parts, op, dtype)
                check(res[r][("reduce_scatter", op, dtype, n)], want, dtype, f"reduce_scatter {op} rank {r}")
                check(res[r][("reduce_scatter_tensor", op, dtype, n)], want, dtype, f"reduce_scatter_tensor {op}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_to_all(collectives, dtype):
    world, res = collectives
    skip_unless_run(world, dtype)
    for n in SIZES:
        for r in range(world):
            got = res[r][("all_to_all", dtype, n)]
            for j in range(world):  # what rank j sent to rank r
                want = as_dtype(make_input(f"a2a_{r}", j, dtype, (j + 2 * r) % 3 + n), dtype)
                check(got[j], want, dtype, f"all_to_all rank {r} from {j}")
            # Equal parts: rank r gets part r of every rank's input, in rank order.
            want = np.concatenate([as_dtype(make_input("a2as", j, dtype, world * n * 2), dtype).reshape(world * n, 2)
                                   [r * n:(r + 1) * n] for j in range(world)])
            check(res[r][("all_to_all_single", dtype, n)], want, dtype, f"all_to_all_single rank {r}")
            parts = []
            for j in range(world):
                splits = [j + k + 1 for k in range(world)]
                a = as_dtype(make_input("a2asv", j, dtype, sum(splits) * 3), dtype).reshape(-1, 3)
                start = sum(splits[:r])
                parts.append(a[start:start + splits[r]])
            check(res[r][("all_to_all_single_v", dtype, n)], np.concatenate(parts), dtype, f"uneven a2a rank {r}")


def test_point_to_point(p2p):
    world, res = p2p
    for r in range(world):
        prv = (r - 1) % world
        got, src = res[r]["ring"]
        np.testing.assert_array_equal(got, np.arange(6, dtype=np.float32) + 100 * prv)
        assert src == prv
        b, c1, c2 = res[r]["isend_irecv"]
        np.testing.assert_array_equal(b, np.full(3, float(prv)))
        assert c1 and c2
        for t in (5, 9):
            np.testing.assert_array_equal(res[r]["batch"][t], np.full(4, prv * 10 + t))
        np.testing.assert_array_equal(res[r]["noncontig"], (np.arange(12, dtype=np.float32).reshape(3, 4) + prv).T)
    assert res[0]["any_source"] == [(s, s * 11) for s in range(1, world)]


def test_objects_async_groups(objects):
    world, res = objects
    evens = [r for r in range(world) if r % 2 == 0]
    for r in range(world):
        R = res[r]
        assert R["broadcast_object_list"] == [{"rank": 1, "x": [1]}, "ss", None]
        assert R["all_gather_object"] == [("r", j, list(range(j))) for j in range(world)]
        assert R["gather_object"] == ([{"from": j} for j in range(world)] if r == world - 1 else None)
        assert R["scatter_object_list"] == f"to {r}" * (r + 1)
        v, is_same, chained, waited, completed, success = R["future"]
        total = sum(range(1, world + 1))
        np.testing.assert_array_equal(v, np.full(8, float(total)))
        assert is_same  # the future's value is the tensor that was reduced in place
        np.testing.assert_array_equal(chained, np.full(8, 2.0 * total))
        assert waited is True and completed and success
        assert R["in_flight"] == [float(sum(j + k for j in range(world))) for k in range(5)]
        want = np.max([np.arange(12, dtype=np.float32).reshape(3, 4) * (j + 1) for j in range(world)], axis=0)
        np.testing.assert_array_equal(R["noncontig_all_reduce"], want)
        want = np.arange(12, dtype=np.float64).reshape(4, 3) + r
        want[:, 1] = np.arange(12, dtype=np.float64).reshape(4, 3)[:, 1]
        np.testing.assert_array_equal(R["noncontig_broadcast"], want)
        if r % 2 == 0:
            assert R["group_rank"] == (evens.index(r), len(evens))
            assert R["group_sum"] == float(sum(evens))
            assert R["group_ranks"] == evens
            assert R["group_bcast"] == float(max(evens))
        else:
            assert R["group_rank"] == (-1, -1) and R["group_is_non_member"]
        assert R["empty_ok"] == [10.0 * r, 10.0 * r + 1, 10.0 * r + 2]
        assert R["backend"] == ("gloo", True, world, r)
        assert R["after"] is False


def test_argument_errors_are_consistent(tmp_path):
    res = run_ranks("bad_input", 2, tmp_path)
    e = res[0]
    assert e["not_tensor"][0] == "TypeError"
    assert e["band_float"] == ("RuntimeError", "Cannot use ReduceOp.BAND with non-integral dtype")
    assert e["max_complex"] == ("ValueError", "all_reduce does not support RedOpType.MAX on complex tensors")
    assert e["avg_int"][0] == "RuntimeError" and "can't be cast" in e["avg_int"][1]
    assert e["premul"][0] == "NotImplementedError"
    assert e["bad_op"][0] == "TypeError"
    assert e["bad_src"][0] == "ValueError" and "not part of group" in e["bad_src"][1]
    assert e["gather_list_size"][0] == "ValueError"
    assert e["gather_shape"][0] == "RuntimeError" and "invalid tensor size" in e["gather_shape"][1]
    assert e["gather_dtype"][0] == "ValueError"
    for k in ("agit_size", "rst_size", "a2a_splits", "a2a_div", "send_self", "neg_tag", "scatter_list_nonsrc",
              "gather_list_missing", "p2p_list", "p2p_op"):
        assert e[k] is not None and e[k][0] == "ValueError", (k, e[k])
    assert e["nccl"] == ("RuntimeError", "Distributed package doesn't have NCCL built in")
    assert e["twice"][0] == "ValueError"
    assert e["still_works"] == [2.0, 2.0, 2.0]
    assert e["not_initialized"][0] == "ValueError" and "not been initialized" in e["not_initialized"][1]
    assert e["not_initialized_collective"][0] == "ValueError"
    assert res[1]["still_works"] == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("mode", ["exit", "hang"])
def test_dead_or_silent_peer_fails_within_the_timeout(tmp_path, mode):
    # A rank that exits is noticed at once (its connections close); a silent one after the timeout.
    timeout = 2
    res = run_ranks("peer_dies", 3, tmp_path, timeout=40, expect_fail=(1,), mode=mode, pg_timeout=timeout)
    for r in (0, 2):
        name, msg, elapsed, is_dist_error = res[r]
        assert name == "DistBackendError" and is_dist_error, res[r]
        assert f"[rank {r}]" in msg and "all_reduce failed" in msg
        assert elapsed < timeout + 2, elapsed
        if mode == "exit":
            assert "closed" in msg.lower() or "reset" in msg.lower(), msg
        else:
            assert elapsed > 0.5
    if mode == "exit":
        assert res[1][:2] == ("failed", 17)


@pytest.mark.parametrize("method", ["env", "file", "store"])
def test_init_methods(tmp_path, method):
    res = run_ranks("init_methods", 2, tmp_path, method=method, path=str(tmp_path / "rdzv"))
    assert res == [(3.0, 0, 2), (3.0, 1, 2)]
    assert not (tmp_path / "rdzv").exists()  # file://: removed once both ranks destroyed their group


def test_same_results_as_torch_gloo(tmp_path):
    pytest.importorskip("torch")
    res = run_ranks("torch_interop", 2, tmp_path, timeout=120, tport=free_port())
    assert len(res[0]) > 60
    for r in range(2):
        for key, (e, t) in res[r].items():
            dtype = key[1]
            tol = RTOL.get(dtype, 0)
            np.testing.assert_allclose(e.astype(np.float64), t.astype(np.float64), rtol=tol, atol=tol,
                                       err_msg=f"{key} rank {r}")


@pytest.mark.parametrize("method", ["master", "worker"])
def test_init_without_the_other_ranks_times_out(tmp_path, method):
    name, msg, elapsed = run_ranks("init_alone", 1, tmp_path, method=method)[0]
    if method == "master":  # rank 0 hosts the store and waits for the second client
        assert name == "DistStoreError" and "1/2 clients joined" in msg
    else:
        assert name == "DistNetworkError" and "could not connect" in msg
    assert elapsed < 5
