"""cat and stack against torch over the shapes the memcpy path (Note [Small cat and stack]) and
the general path each take: many small inputs, every dim, 0-d and empty inputs, mixed dtypes,
non-contiguous and large inputs, and gradients (which always take the general path)."""
import numpy as np
import pytest

import ember
from conftest import torch

CASES = [  # (shapes, dtypes) of the inputs; every dim of the result is tried
    ([(1, 28, 28)] * 16, ["float32"] * 16),
    ([(3, 4)] * 3, ["int64", "int64", "int64"]),
    ([(3, 4)] * 3, ["int32", "float64", "int32"]),
    ([()] * 5, ["float32"] * 5),
    ([(0, 3)] * 2, ["float32"] * 2),
    ([(2, 0, 3)] * 3, ["uint8"] * 3),
    ([(300, 300)] * 2, ["float32"] * 2),  # over the memcpy size limit
    ([(2, 3, 5)] * 4, ["bool"] * 4),
]


def _inputs(shapes, dtypes, transpose=False):
    rng = np.random.default_rng(0)
    out = []
    for s, dt in zip(shapes, dtypes):
        a = np.asarray((rng.standard_normal(s) * 5).astype(dt))
        if transpose and a.ndim >= 2:
            a = np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)  # same shape, non-contiguous
        out.append(a)
    return out


def _both(arrays, transpose):
    e = [ember.from_numpy(a) for a in arrays]
    t = [torch.from_numpy(a) for a in arrays]
    if transpose and e[0].dim() >= 2 and min(e[0].shape[:2]) > 1:
        assert not any(x.is_contiguous() for x in e)
    return e, t


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("transpose", [False, True])
def test_stack_matches_torch(case, transpose):
    shapes, dtypes = CASES[case]
    e, t = _both(_inputs(shapes, dtypes, transpose), transpose)
    for d in range(-(e[0].dim() + 1), e[0].dim() + 1):
        r, ref = ember.stack(e, d), torch.stack(t, d)
        assert r.shape == ref.shape and str(r.dtype)[6:] == str(ref.dtype)[6:]
        np.testing.assert_array_equal(r.numpy(), ref.numpy())


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("transpose", [False, True])
def test_cat_matches_torch(case, transpose):
    shapes, dtypes = CASES[case]
    if not shapes[0]:
        return  # 0-d inputs: cat raises in both, checked below
    e, t = _both(_inputs(shapes, dtypes, transpose), transpose)
    for d in range(-e[0].dim(), e[0].dim()):
        r, ref = ember.cat(e, d), torch.cat(t, d)
        assert r.shape == ref.shape and str(r.dtype)[6:] == str(ref.dtype)[6:]
        np.testing.assert_array_equal(r.numpy(), ref.numpy())


def test_cat_uneven_sizes_and_legacy_empty():
    a = [np.arange(6.0).reshape(2, 3), np.arange(9.0).reshape(3, 3), np.zeros(0)]
    for d, sel in [(0, a), (1, [a[0], np.ones((2, 5)), a[2]])]:
        r = ember.cat([ember.from_numpy(x) for x in sel], d)
        ref = torch.cat([torch.from_numpy(x) for x in sel], d)
        np.testing.assert_array_equal(r.numpy(), ref.numpy())


def test_errors_match_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.stack([lib.zeros(2, 3), lib.zeros(3, 2)])
        with pytest.raises(RuntimeError):
            lib.cat([lib.tensor(1.0), lib.tensor(2.0)])
        with pytest.raises(IndexError):
            lib.stack([lib.zeros(2)], 3)


def test_gradients_through_stack_and_cat():
    xs = [ember.randn(2, 3, dtype=ember.float64, requires_grad=True) for _ in range(3)]
    assert ember.autograd.gradcheck(lambda *x: ember.stack(x, 1), xs)
    assert ember.autograd.gradcheck(lambda *x: ember.cat(x, 1), xs)
    assert ember.stack(xs).grad_fn is not None
    with ember.no_grad():
        assert ember.stack(xs).grad_fn is None


def test_cat_row_pass_uneven_empty_and_gradients():
    """Big contiguous inputs cut into output rows (one pass, a memcpy per input row): uneven
    widths, an empty piece, the legacy 1-d empty input, and the gradients back to each input."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((128, 300)).astype(np.float32), np.zeros((128, 0), np.float32),
              rng.standard_normal((128, 501)).astype(np.float32), np.zeros(0, np.float32),
              rng.standard_normal((128, 7)).astype(np.float32)]
    e = [ember.from_numpy(a).requires_grad_() for a in arrays]
    t = [torch.from_numpy(a).requires_grad_() for a in arrays]
    r, ref = ember.cat(e, 1), torch.cat(t, 1)
    np.testing.assert_array_equal(r.detach().numpy(), ref.detach().numpy())
    g = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    r.backward(ember.from_numpy(g))
    ref.backward(torch.from_numpy(g))
    for a, b in zip(e, t):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    # three (B, T, C) gradients into (B, T, 3C), as the qkv split's backward
    x = ember.from_numpy(rng.standard_normal((8, 128, 96)).astype(np.float32)).requires_grad_()
    gs = [rng.standard_normal((8, 128, 32)).astype(np.float32) for _ in range(3)]
    ember.autograd.backward(list(x.split(32, 2)), [ember.from_numpy(v) for v in gs])
    np.testing.assert_array_equal(x.grad.numpy(), np.concatenate(gs, 2))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("shape,dims", [((3, 224, 37), (-1,)), ((3, 224, 37), (1,)), ((4, 5, 6), (0, 2)),
                                        ((70001,), (0,)), ((2, 3, 70001), (0, 2)), ((5, 0, 3), (2,)), ((7,), ())])
def test_flip_matches_torch(dtype, shape, dims):
    """flip's row copy (forwards or reversed 16 bytes at a time) over element sizes 1-16, rows
    longer than a work piece, empty tensors, and transposed inputs."""
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(shape) * 50).astype(dtype if dtype != "complex128" else "float64")
    if dtype == "complex128":
        a = a + 1j * a[::-1].copy()
    e, t = ember.from_numpy(a), torch.from_numpy(a)
    np.testing.assert_array_equal(ember.flip(e, dims).numpy(), torch.flip(t, dims).numpy())
    if len(shape) >= 2:  # a transposed (non-contiguous) input
        et, tt = e.transpose(0, -1), t.transpose(0, -1)
        np.testing.assert_array_equal(ember.flip(et, dims).numpy(), torch.flip(tt, dims).numpy())


def test_flip_gradient():
    x = ember.randn(3, 4, 5, requires_grad=True)
    y = x.flip(0, 2)
    assert y.grad_fn.name() == "FlipBackward0"
    g = ember.randn(3, 4, 5)
    y.backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), np.flip(g.numpy(), (0, 2)))
