"""sum and mean against torch: dims, keepdim, dtype=, layouts, 0-d, empty, errors."""
import pytest

import ember
from conftest import DTYPES, FLOAT_DTYPES, assert_same, same_error, torch

DIMS = [None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1, 2), (), [0, -1]]


def pair(shape, dtype="float32"):
    n = 1
    for s in shape:
        n *= s
    t = (torch.arange(n, dtype=torch.float64).reshape(shape) % 7 - 3).to(getattr(torch, dtype))
    e = (ember.arange(n, dtype=ember.float64).reshape(shape) % 7 - 3).to(getattr(ember, dtype))
    return e, t


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean_dims(dim, keepdim):
    e, t = pair((3, 4, 5))
    if dim is None:
        assert_same(e.sum(), t.sum())
        assert_same(e.mean(), t.mean())
        return
    assert_same(e.sum(dim, keepdim=keepdim), t.sum(dim, keepdim=keepdim))
    assert_same(ember.mean(e, dim, keepdim), torch.mean(t, dim, keepdim))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_dtypes(dtype):
    e, t = pair((4, 6), dtype) if dtype != "bool" else (ember.ones(4, 6) > 0, torch.ones(4, 6) > 0)
    if dtype == "uint8":
        e, t = ember.ones(4, 6, dtype=ember.uint8) * 3, torch.ones(4, 6, dtype=torch.uint8) * 3
    assert_same(e.sum(), t.sum())
    assert_same(e.sum(0), t.sum(0))
    assert_same(e.sum(1, dtype=ember.float64), t.sum(1, dtype=torch.float64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_mean_float_dtypes(dtype):
    e, t = pair((5, 7), dtype)
    assert_same(e.mean(), t.mean())
    assert_same(e.mean(1), t.mean(1))


def test_non_contiguous():
    e, t = pair((6, 8))
    assert_same(e.t().sum(0), t.t().sum(0))
    assert_same(e[::2, 1::3].sum(1), t[::2, 1::3].sum(1))
    assert_same(e.t().mean((0, 1)), t.t().mean((0, 1)))
    ex = e[:, :1].expand(6, 8)
    tx = t[:, :1].expand(6, 8)
    assert_same(ex.sum(1), tx.sum(1))


def test_zero_dim_and_empty():
    e, t = pair(())
    assert_same(e.sum(), t.sum())
    assert_same(e.sum(0), t.sum(0))
    assert_same(e.mean(-1, keepdim=True), t.mean(-1, keepdim=True))
    ez, tz = ember.ones(0, 3), torch.ones(0, 3)
    assert_same(ez.sum(), tz.sum())
    assert_same(ez.sum(0), tz.sum(0))
    assert_same(ez.sum(1), tz.sum(1))
    assert_same(ez.mean(0), tz.mean(0))  # nan, like torch


def test_large_sums_are_accurate():
    n = 1 << 22
    e = ember.ones(n) * 0.1
    t = torch.ones(n) * 0.1
    assert_same(e.sum(), t.sum(), rtol=1e-5)
    e2 = ember.ones(1024, 4096) * 0.1
    t2 = torch.ones(1024, 4096) * 0.1
    assert_same(e2.sum(0), t2.sum(0), rtol=1e-5)
    assert_same(e2.sum(1), t2.sum(1), rtol=1e-5)


def test_errors():
    e, t = pair((2, 3))
    same_error(lambda: e.sum(2), lambda: t.sum(2))
    same_error(lambda: e.sum((0, 0)), lambda: t.sum((0, 0)))
    same_error(lambda: ember.ones(3, dtype=ember.int64).mean(), lambda: torch.ones(3, dtype=torch.int64).mean())
    with pytest.raises(IndexError, match="Dimension out of range"):
        e.sum(-3)
