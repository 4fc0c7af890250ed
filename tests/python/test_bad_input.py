"""Regression tests for inputs the argument fuzzer (fuzz_ops.py) found mishandled: each must
behave as in torch (same exception type, or the same result)."""
import pytest

import ember
from conftest import torch

NAN = float("nan")

# Each case is evaluated with `lib` bound to torch and to ember.
CASES = [
    "lib.tensordot(lib.randn(2, 3, 4), lib.randn(3, 4, 5), dims=lib.randn(4, dtype=lib.float64))",
    "lib.tensordot(lib.tensor(1.), lib.randn(4, 3, 2), dims=([0, 1], [1, 0]))",
    "lib.roll(lib.tensor(3), (1, -2), (0, 1))",
    "lib.roll(lib.tensor(3.), 1, 0)",
    "lib.take_along_dim(lib.tensor(2.), lib.tensor(0), 0)",
    "lib.index_add(lib.zeros(3, 4), 0, lib.tensor([0, 1]), lib.ones(2, 5))",
    "lib.index_add(lib.zeros(3, 4), 0, lib.tensor([0, 1]), lib.ones(3, 4))",
    "lib.index_add(lib.zeros(3, 4), 0, lib.tensor([5]), lib.ones(1, 4))",
    "lib.index_add(lib.zeros(3, 4), 0, lib.tensor([0]), lib.ones(1, 4, dtype=lib.float64))",
    "lib.index_add(lib.tensor(1.), 0, lib.tensor([0]), lib.ones(1))",
    "lib.index_copy(lib.zeros(3, 4), 0, lib.tensor([0, 1]), lib.ones(3, 4))",
    "lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([0]), lib.ones(3, 1, 1))",
    "lib.index_copy(lib.zeros(3, 4), 0, lib.tensor([0]), lib.tensor(1.))",
    "lib.zeros(2, dtype=lib.int8).masked_fill(lib.tensor([True, False]), 1000)",
    "lib.zeros(2, dtype=lib.float16).masked_fill(lib.tensor([True, False]), 1e10)",
    "lib.where(lib.tensor([True, False]), lib.zeros(2, dtype=lib.int8), 1000)",
    "lib.clamp(lib.zeros(2, dtype=lib.uint8), 0, 1000)",
    "lib.zeros(2, dtype=lib.int8).index_fill(0, lib.tensor([0]), 1000)",
    "lib.zeros(2, dtype=lib.int8).scatter(0, lib.tensor([0]), 1000)",
    "lib.zeros(4).scatter_add(0, lib.tensor([0, 1, 2, 3, 3]), lib.tensor(1.))",
    "lib.zeros(4).scatter(0, lib.tensor([0, 1]), lib.tensor(1.))",
    "lib.zeros(4).scatter_reduce(0, lib.tensor([0, 1, 2]), lib.tensor(1.), 'amax')",
    "lib.ones(4).put(lib.tensor([0]), lib.tensor([1]))",
    "lib.zeros(3, dtype=lib.bfloat16).index_put((lib.tensor([0]),), lib.tensor([1]))",
    "lib.eq(2, lib.ones(2))",
    "lib.ge(2.5, lib.ones(2))",
    "lib.bitwise_and(2, lib.ones(2, dtype=lib.int64))",
    "lib.bitwise_left_shift(2, lib.ones(2, dtype=lib.int64))",
    "lib.bitwise_or(True, -1)",
    "lib.remainder(0, 2)",
    "lib.sum(lib.ones(2), '')",
    "lib.median(lib.ones(2, 3, dtype=lib.bool))",
    "lib.nanmedian(lib.ones(2, 3, dtype=lib.bool), 0)",
    "lib.kthvalue(lib.ones(2, dtype=lib.bool), 1)",
    "lib.trace(lib.ones(2, 2, dtype=lib.bool))",
    "lib.lerp(lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.int64))",
    "lib.lerp(lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64), lib.tensor(0.5))",
    "lib.linalg.norm(lib.ones(3, 4), '')",
    "lib.linalg.svdvals(lib.tensor([[NAN, 1.], [1., 1.]]))",
    "lib.linalg.pinv(lib.tensor([[NAN, 1.], [1., 1.]]))",
    "lib.linalg.cholesky(lib.tensor([[NAN, 1.], [1., 1.]]))",
    "lib.linalg.matrix_rank(lib.eye(3), atol=[1, 2])",
    "lib.max(lib.ones(3, 4), lib.tensor(3), keepdim=False)",
    "lib.max(lib.ones(3, 4), lib.tensor(1.), keepdim=True)",
    # True/False is not an int to torch's parser (Note [No bool for int]).
    "lib.ones(3, 4).sum(True)",
    "lib.amax(lib.ones(3, 4), True)",
    "lib.topk(lib.ones(6), True)",
    "lib.kthvalue(lib.ones(3, 4), 1, True)",
    "lib.cummin(lib.ones(3, 4), True)",
    "lib.count_nonzero(lib.ones(3, 4), True)",
    "lib.ones(3, 4).unsqueeze(True)",
    "lib.ones(3, 4).flip(True)",
    "lib.ones(3, 4).size(True)",
    "lib.eye(True)",
    # Number arguments: None or a string is a TypeError, never silently alpha=1.
    "lib.add(lib.ones(2), lib.ones(2), alpha='a')",
    "lib.add(lib.ones(2), lib.ones(2), alpha=None)",
    "lib.ones(2).sub_(lib.ones(2), alpha=None)",
    "lib.addmm(lib.zeros(5), lib.ones(3, 4), lib.ones(4, 5), beta=None)",
    "lib.addcmul(lib.ones(2), lib.ones(2), lib.ones(2), value=None)",
    "lib.ones(3).index_add(0, lib.tensor([0]), lib.ones(1), alpha=None)",
    "lib.max(lib.ones(3), None)",
    "lib.min(lib.ones(3, 4), 1, keepdim=None)",
    "lib.clamp(lib.ones(3, 4), lib.zeros(4), 7)",
    "lib.clamp(lib.ones(3, 4), -0.5, lib.zeros(4))",
    "lib.clamp(lib.ones(3, 4), min=lib.zeros(4), max=7)",
    "lib.var_mean(lib.ones(3, 4), 1, correction=10**30)",
    # Python-number exponents must fit integer and half result types.
    "lib.pow(lib.ones(3, dtype=lib.int8), 1000)",
    "lib.pow(lib.ones(3, dtype=lib.float16), 70000)",
    "lib.pow(lib.ones(3, dtype=lib.bfloat16), 1e300)",
    "lib.pow(lib.ones(3), 1e300)",
    "lib.max(lib.ones(2, 3, dtype=lib.complex64), 1)",
    "lib.min(lib.empty(0, 3, dtype=lib.complex64), -1)",
    "lib.kthvalue(lib.empty(0, 3, dtype=lib.complex64), 1)",
    "lib.topk(lib.ones(2, 3, dtype=lib.bool), 2)",
    "lib.linalg.norm(lib.ones(2, 3, 4), 'fro', [-1])",
    "lib.linalg.lstsq(lib.zeros(3, 4), lib.ones(3, 2), driver='gels')",
    "list(lib.tensor(3))",
    "lib.einsum(lib.ones(2, 3), [0, 1], lib.tensor(1))",
    "lib.nn.functional.silu(lib.ones(3, dtype=lib.complex64).requires_grad_())",
    "lib.clamp(lib.arange(6.).reshape(3, 2), lib.tensor(1.), 4)",  # a 0-d tensor is a Number to torch
    "lib.clamp(lib.arange(6).to(lib.uint8), 7, lib.tensor(3, dtype=lib.uint8))",
    "lib.nansum(lib.ones(2, 3, 4), lib.tensor(1))",
    "lib.linalg.vector_norm(lib.arange(6.), True)",
    "lib.linalg.matrix_norm(lib.ones(3, 2, 4), True, (0, 2))",
    "lib.linalg.matrix_rank(lib.ones(2, 3), hermitian=True)",
    "lib.linalg.pinv(lib.ones(2, 3), hermitian=True)",
    "lib.linalg.pinv(lib.ones(2, 3, requires_grad=True), hermitian=True)",
    "lib.amax(lib.arange(12.).reshape(3, 4), None, keepdim=True)",
]

# Negative and out-of-range indices: gather/scatter*/index_add/index_copy raise (not wrap as advanced
# indexing does), take_along_dim with a dim takes them modulo the size, index_fill and take wrap;
# index_select's messages depend on the dim and on an empty self. Messages must match too.
INDEX_CASES = [
    "lib.gather(lib.zeros(3, 4), 1, lib.tensor([[-1, 0]]))",
    "lib.gather(lib.zeros(3, 4), 0, lib.tensor([[0, 1, -4]]))",
    "lib.gather(lib.tensor(2.), 0, lib.tensor(-1))",
    "lib.zeros(3, 4).scatter(1, lib.tensor([[-1]]), 1.0)",
    "lib.zeros(3, 4).scatter(1, lib.tensor([[-1]]), lib.ones(1, 1))",
    "lib.zeros(3, 4).scatter_add(0, lib.tensor([[0, -2]]), lib.ones(1, 2))",
    "lib.tensor(2.).scatter_add(0, lib.tensor(-1), lib.tensor(1.))",
    "lib.zeros(3, 4).scatter_reduce(1, lib.tensor([[-1]]), lib.ones(1, 1), 'sum')",
    "lib.zeros(3, 4).scatter_reduce(1, lib.tensor([[-1]]), lib.ones(1, 1), 'amin', include_self=False)",
    "lib.zeros(3, 4).scatter_reduce(1, lib.tensor([[-1]]), lib.ones(1, 1), 'mean', include_self=False)",
    "lib.take_along_dim(lib.arange(12.).reshape(3, 4), lib.tensor([[-1], [5], [-6]]), 1)",
    "lib.take_along_dim(lib.arange(12.).reshape(3, 4), lib.tensor([[7, -5, 2, 3]]), 0)",
    "lib.take_along_dim(lib.arange(12.).reshape(3, 4), lib.tensor([[-1]]))",
    "lib.take_along_dim(lib.zeros(3, 0), lib.zeros(3, 1, dtype=lib.long), 1)",
    "lib.index_select(lib.zeros(3, 4), 1, lib.tensor([0, -1]))",
    "lib.index_select(lib.zeros(2, 3, 4), 2, lib.tensor([4]))",
    "lib.index_select(lib.zeros(3, 4), 0, lib.tensor([-1]))",
    "lib.index_select(lib.zeros(4), 0, lib.tensor([-1]))",
    "lib.index_select(lib.zeros(2, 0), 1, lib.tensor([0]))",
    "lib.index_select(lib.zeros(2, 0), 0, lib.tensor([-1]))",
    "lib.index_select(lib.tensor(2.), 0, lib.tensor([0, 0]))",
    "lib.index_select(lib.tensor(2.), 0, lib.tensor([-1]))",
    "lib.index_select(lib.tensor(2.), 0, lib.tensor([0]))",
    "lib.index_add(lib.zeros(3, 4), 1, lib.tensor([-1]), lib.ones(3, 1))",
    "lib.index_add(lib.zeros(4), 0, lib.tensor([-1]), lib.ones(1))",
    "lib.index_add(lib.zeros(3, 0), 0, lib.tensor([0, -1]), lib.ones(2, 0))",
    "lib.zeros(3, dtype=lib.int64).index_add(0, lib.tensor([0, 1]), lib.tensor([3, 1]), alpha=2.5)",
    "lib.zeros(3, dtype=lib.uint8).index_add(0, lib.tensor([0]), lib.ones(1, dtype=lib.uint8), alpha=300)",
    "lib.index_copy(lib.zeros(3, 4), 1, lib.tensor([-1]), lib.ones(3, 1))",
    "lib.index_fill(lib.zeros(3, 4), 1, lib.tensor([-1]), 2.0)",
    "lib.take(lib.arange(4.), lib.tensor([-1]))",
]
CASES += INDEX_CASES


def _eval(expr, lib):
    return eval(expr, {"lib": lib, "NAN": NAN})


@pytest.mark.parametrize("expr", CASES)
def test_bad_input_matches_torch(expr):
    try:
        expected = _eval(expr, torch)
    except Exception as e:
        kind = type(e).__mro__[1] if type(e).__name__.startswith("_") else type(e)  # _LinAlgError -> RuntimeError
        if kind is AssertionError:  # torch's Python-level asserts; ember raises a proper error type
            kind = Exception
        with pytest.raises(kind):
            _eval(expr, ember)
        return
    got = _eval(expr, ember)
    exp = expected if isinstance(expected, (tuple, list)) else [expected]
    res = got if isinstance(got, (tuple, list)) else [got]
    for e, g in zip(exp, res):
        assert e.tolist() == g.tolist()


@pytest.mark.parametrize("expr", INDEX_CASES)
def test_index_errors_match_torch_message(expr):
    try:
        expected = _eval(expr, torch)
    except Exception as e:
        with pytest.raises(type(e)) as got:
            _eval(expr, ember)
        assert str(got.value) == str(e)
        return
    got = _eval(expr, ember)
    assert got.tolist() == expected.tolist() and tuple(got.shape) == tuple(expected.shape)


def test_matrix_power_most_negative_exponent():
    # -(-2**63) overflows int64; ember must still square-and-multiply |n| times (torch hangs here).
    r = ember.linalg.matrix_power(ember.eye(2, dtype=ember.float64) * 2, -2**63)
    assert r.tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("fn", ["any", "all"])
def test_any_all_empty_dim_list_reduces_nothing(fn):
    x = [[0, 1], [2, 0]]
    for dt in ("int64", "uint8", "float32"):
        t = getattr(torch, fn)(torch.tensor(x, dtype=getattr(torch, dt)), dim=[])
        e = getattr(ember, fn)(ember.tensor(x, dtype=getattr(ember, dt)), dim=[])
        assert e.tolist() == t.tolist() and str(e.dtype)[6:] == str(t.dtype)[6:]


def test_matrix_rank_tensor_tolerances_broadcast():
    a = torch.randn(2, 4, 4, generator=torch.Generator().manual_seed(0))
    b = ember.from_numpy(a.numpy())
    for kw in (dict(atol=[0.1, 100.0]), dict(rtol=[0.5, 0.01]), dict(atol=[[[0.1]]])):
        t = torch.linalg.matrix_rank(a, **{k: torch.tensor(v) for k, v in kw.items()})
        e = ember.linalg.matrix_rank(b, **{k: ember.tensor(v) for k, v in kw.items()})
        assert e.tolist() == t.tolist()
