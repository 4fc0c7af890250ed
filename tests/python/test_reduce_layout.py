"""Note [Reduction layout]: reductions of permuted dense tensors (transposes, permutes, with size-1
dims) read them in memory order without copying; values, shapes and contiguous results as torch's
for every dim choice, keepdim, and the indices of max/min/argmax."""
import itertools

import numpy as np
import pytest

import ember
from conftest import torch

_PERMS = [((6, 5), (1, 0)), ((4, 3, 5), (2, 0, 1)), ((4, 3, 5), (1, 2, 0)), ((4, 1, 5), (2, 1, 0)),
          ((2, 3, 4, 5), (0, 3, 1, 2)), ((3, 1, 4), (0, 2, 1))]


def _dim_choices(n):
    out = [None]
    for r in range(1, n + 1):
        out += list(itertools.combinations(range(n), r))
    return out


@pytest.mark.parametrize("shape,perm", _PERMS)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "prod", "var", "std", "logsumexp", "norm"])
def test_reductions_of_permuted_tensors_match_torch(shape, perm, op):
    a = np.random.default_rng(0).standard_normal(shape) * 0.5 + 1.0
    te, tt = ember.tensor(a).permute(*perm), torch.tensor(a).permute(*perm)
    for dims in _dim_choices(len(shape)):
        if op == "logsumexp" and dims is None:
            continue
        for keepdim in (False, True):
            if dims is None:
                re, rt = getattr(te, op)(), getattr(tt, op)()
            elif op == "prod":
                if len(dims) != 1:
                    continue
                re, rt = te.prod(dims[0], keepdim=keepdim), tt.prod(dims[0], keepdim=keepdim)
            elif op == "norm":
                if len(dims) > 2:  # torch's norm: a matrix norm needs exactly 2 dims
                    continue
                re, rt = te.norm(dim=dims, keepdim=keepdim), tt.norm(dim=dims, keepdim=keepdim)
            else:
                re, rt = getattr(te, op)(dims, keepdim=keepdim), getattr(tt, op)(dims, keepdim=keepdim)
            assert tuple(re.shape) == tuple(rt.shape), (op, dims, keepdim)
            assert re.is_contiguous()
            np.testing.assert_allclose(re.numpy(), rt.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape,perm", _PERMS)
def test_max_min_argmax_of_permuted_tensors_match_torch(shape, perm):
    a = np.random.default_rng(1).permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)  # no ties
    te, tt = ember.tensor(a).permute(*perm), torch.tensor(a).permute(*perm)
    for d in range(len(shape)):
        for keepdim in (False, True):
            for op in ("max", "min"):
                (ve, ie), (vt, it) = getattr(te, op)(d, keepdim=keepdim), getattr(tt, op)(d, keepdim=keepdim)
                assert np.array_equal(ve.numpy(), vt.numpy()) and np.array_equal(ie.numpy(), it.numpy())
            assert np.array_equal(te.argmax(d, keepdim=keepdim).numpy(), tt.argmax(d, keepdim=keepdim).numpy())


def test_sum_of_a_transpose_is_read_in_place():
    # the gradient of a transposed sum flows back in the input's own layout
    x = ember.randn(64, 32, dtype=ember.float64, requires_grad=True)
    w = ember.randn(32, dtype=ember.float64)
    (x.t().sum(1) * w).sum().backward()
    assert np.allclose(x.grad.numpy(), np.broadcast_to(w.numpy(), (64, 32)))
    assert ember.autograd.gradcheck(lambda t: t.t().sum(0), (x,))


@pytest.mark.parametrize("shape,perm", _PERMS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp", "sort", "argsort",
                                "cummax"])
def test_ops_along_a_dim_of_permuted_tensors_match_torch(shape, perm, op):
    # results shaped as the input: these read the input in its logical order, never memory order
    a = np.random.default_rng(2).permutation(int(np.prod(shape))).reshape(shape) / np.prod(shape)
    te, tt = ember.tensor(a).permute(*perm), torch.tensor(a).permute(*perm)
    for d in range(len(shape)):
        re, rt = getattr(te, op)(d), getattr(tt, op)(d)
        if not isinstance(rt, torch.Tensor):
            re, rt = re[0], rt[0]
        np.testing.assert_allclose(re.numpy(), rt.numpy(), rtol=1e-12, atol=1e-12)
