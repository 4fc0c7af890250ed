"""torch.pdist and torch.cdist's direct form (Note [pdist], ops/distance.cpp) against torch: every norm,
short and long rows, layouts, NaN, gradients, the missing second derivative, thread counts and errors."""
import math

import numpy as np
import pytest

import ember
from conftest import torch

NORMS = [0.0, 1.0, 2.0, 3.0, math.inf, 0.5]


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


@pytest.mark.parametrize("p", NORMS)
@pytest.mark.parametrize("shape", [(7, 5), (33, 64), (12, 129), (5, 300), (2, 1), (1, 4), (0, 3), (4, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_match_torch(p, shape, dtype):
    g = torch.Generator().manual_seed(shape[0] * 1000 + shape[1])
    x = torch.randn(*shape, dtype=getattr(torch, dtype), generator=g)
    if shape[0] > 3:
        x[3] = x[1]  # a pair at distance 0 (gradient 0 there, as torch)
        x[2, :1] = x[0, :1]  # equal coordinates (p < 1, inf)
    xt, xe = x.clone().requires_grad_(), E(x).requires_grad_()
    yt, ye = torch.pdist(xt, p), ember.pdist(xe, p)
    rtol = 2e-5 if dtype == "float32" else 1e-12
    assert tuple(ye.shape) == tuple(yt.shape) and ye.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=rtol)
    if yt.numel() == 0:
        return
    gy = torch.randn(yt.shape, dtype=yt.dtype, generator=g)
    yt.backward(gy)
    ye.backward(E(gy))
    assert ye.grad_fn.name() == "PdistBackward0"
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=rtol * 10, atol=rtol * 10)


def test_non_contiguous_input_and_functional_form():
    x = torch.randn(9, 6, dtype=torch.float64)
    e = E(x)
    np.testing.assert_allclose(ember.pdist(e.t().contiguous().t()).numpy(), torch.pdist(x).numpy(), rtol=1e-14)
    np.testing.assert_allclose(ember.pdist(e[::2]).numpy(), torch.pdist(x[::2]).numpy(), rtol=1e-14)
    np.testing.assert_allclose(ember.nn.functional.pdist(e, 1.5).numpy(), torch.pdist(x, 1.5).numpy(), rtol=1e-13)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_gradcheck(p):
    x = ember.randn(5, 4, dtype=ember.float64, generator=ember.Generator().manual_seed(1)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: ember.pdist(t, p), (x,))


def test_second_derivative_raises_as_torch():
    """torch has no second derivative of pdist: the gradient taken with create_graph carries a history
    that raises NotImplementedError when differentiated (not a silent zero)."""
    for lib in (torch, ember):
        x = lib.tensor([[0.0, 1.0], [2.0, 0.5], [1.0, 1.0]], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.pdist(x).sum(), x, create_graph=True)
        with pytest.raises(NotImplementedError, match="_pdist_backward"):
            g.sum().backward()


def test_same_bits_for_any_thread_count():
    x = E(torch.randn(300, 40))
    before = ember.get_num_threads()
    try:
        outs = []
        for n in (1, 2):
            ember.set_num_threads(n)
            xe = x.clone().requires_grad_()
            y = ember.pdist(xe)
            y.sum().backward()
            outs.append(y.detach().numpy().tobytes() + xe.grad.numpy().tobytes())
        assert outs[0] == outs[1]
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("make", [
    lambda lib: lib.pdist(lib.ones(3)),
    lambda lib: lib.pdist(lib.ones(2, 3, 4)),
    lambda lib: lib.pdist(lib.ones(2, 3), -1),
    lambda lib: lib.pdist(lib.ones(2, 3, dtype=lib.int64)),
    lambda lib: lib.pdist(lib.ones(2, 3, dtype=lib.float16)),
    lambda lib: lib.pdist(lib.ones(2, 3, dtype=lib.bfloat16)),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 4), 1.0),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3), -1.0),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.float16), lib.ones(2, 3), 1.0),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.bfloat16), lib.ones(2, 3, dtype=lib.bfloat16), 0.0),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.int64), 1.0),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float16), 1.0),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64), 1.0),
    lambda lib: lib.cdist(lib.ones(30, 3), lib.ones(30, 3, dtype=lib.float64), 2.0),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.complex64), lib.ones(2, 3), 1.0),
    lambda lib: lib.cdist(lib.ones(3), lib.ones(2, 3), 1.0),
    lambda lib: lib.cdist(lib.ones(4, 2, 3, 3), lib.ones(3, 2, 3), 1.0),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), -0.5),
])
def test_errors_match_torch(make):
    with pytest.raises(Exception) as want:
        make(torch)
    with pytest.raises(Exception) as got:
        make(ember)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


def test_nan_and_inf_as_torch():
    """Note [Distances in lanes]: NaN differences give NaN for every p in pdist (p = 0 and inf too), and for
    every p but inf in cdist, whose max skips them (as torch's); inf coordinates; -0 and +0."""
    a = np.array([[0.0, 1, 2], [np.nan, 1, 5], [0, 7, 2], [1, 1, np.nan], [-0.0, 1, 2], [np.inf, 0, 0],
                  [-np.inf, 3, 1]])
    a = np.concatenate([a, np.random.default_rng(0).standard_normal((40, 3))])  # whole tiles and a tail
    for dtype in ("float32", "float64"):
        for p in NORMS + [1.5]:
            tol = 2e-5 if dtype == "float32" else 1e-12
            want = torch.pdist(torch.tensor(a, dtype=getattr(torch, dtype)), p).numpy()
            got = ember.pdist(ember.tensor(a, dtype=getattr(ember, dtype)), p).numpy()
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            b = a[::-1].copy()
            kw = dict(compute_mode="donot_use_mm_for_euclid_dist")
            want = torch.cdist(torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(b, dtype=getattr(torch, dtype)),
                               p, **kw).numpy()
            got = ember.cdist(ember.tensor(a, dtype=getattr(ember, dtype)), ember.tensor(b, dtype=getattr(ember, dtype)),
                              p, **kw).numpy()
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


CDIST_SHAPES = [((7, 5), (9, 5)), ((40, 3), (37, 3)), ((3, 20, 64), (3, 11, 64)), ((2, 1, 6, 129), (3, 4, 129)),
                ((0, 3), (4, 3)), ((4, 0), (5, 0)), ((1, 1), (1, 1)), ((2, 5), (0, 5))]


@pytest.mark.parametrize("p", NORMS)
@pytest.mark.parametrize("shapes", CDIST_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cdist_values_and_gradients_match_torch(p, shapes, dtype):
    """cdist's direct form (ops/distance.cpp; p = 2 with compute_mode='donot_use_mm_for_euclid_dist'):
    short rows in lanes (whole tiles and a tail), long rows per pair, a batch, a broadcast batch, empty
    operands; both gradients, a pair at distance 0 and equal coordinates; the node's name."""
    g = torch.Generator().manual_seed(sum(shapes[0]) * 100 + sum(shapes[1]))
    x1 = torch.randn(*shapes[0], dtype=getattr(torch, dtype), generator=g)
    x2 = torch.randn(*shapes[1], dtype=getattr(torch, dtype), generator=g)
    if x1.shape[-2] > 2 and x2.shape[-2] > 2 and x1.shape[-1] > 0 and x1.shape[:-2] == x2.shape[:-2]:
        x2[..., 1, :] = x1[..., 0, :]  # distance 0
        x2[..., 2, :1] = x1[..., 1, :1]  # an equal coordinate
    kw = dict(compute_mode="donot_use_mm_for_euclid_dist")
    t1, t2 = x1.clone().requires_grad_(), x2.clone().requires_grad_()
    e1, e2 = E(x1).requires_grad_(), E(x2).requires_grad_()
    yt, ye = torch.cdist(t1, t2, p, **kw), ember.cdist(e1, e2, p, **kw)
    tol = 2e-5 if dtype == "float32" else 1e-12
    assert tuple(ye.shape) == tuple(yt.shape) and ye.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    if yt.numel() == 0:
        return
    assert ye.grad_fn.name() == "CdistBackward0"
    gy = torch.randn(yt.shape, dtype=yt.dtype, generator=g)
    yt.backward(gy)
    ye.backward(E(gy))
    for ge, gt in ((e1.grad, t1.grad), (e2.grad, t2.grad)):
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=tol * 10, atol=tol * 10)


def test_cdist_one_operand_with_grad_layouts_and_threads():
    """Only x2 requiring grad; non-contiguous operands; the same bits on 1 and 2 threads (forward and
    both gradients); gradcheck for each p; the second derivative raises as torch's."""
    x1, x2 = torch.randn(70, 6, dtype=torch.float64), torch.randn(45, 6, dtype=torch.float64)
    for p in (1.0, 3.0):
        e2 = E(x2).requires_grad_()
        ember.cdist(E(x1), e2, p).sum().backward()
        t2 = x2.clone().requires_grad_()
        torch.cdist(x1, t2, p).sum().backward()
        np.testing.assert_allclose(e2.grad.numpy(), t2.grad.numpy(), rtol=1e-12)
    e1 = E(x1.t().contiguous()).t()
    np.testing.assert_allclose(ember.cdist(e1, E(x2)[::2], 1.0).numpy(), torch.cdist(x1, x2[::2], 1.0).numpy(),
                               rtol=1e-13)
    before = ember.get_num_threads()
    try:
        for p in NORMS:
            outs = []
            for n in (1, 2):
                ember.set_num_threads(n)
                a, b = E(x1.float()).requires_grad_(), E(x2.float()).requires_grad_()
                y = ember.cdist(a, b, p, compute_mode="donot_use_mm_for_euclid_dist")
                y.backward(ember.ones_like(y))
                outs.append(y.detach().numpy().tobytes() + a.grad.numpy().tobytes() + b.grad.numpy().tobytes())
            assert outs[0] == outs[1], p
    finally:
        ember.set_num_threads(before)
    for p in (1.0, 2.0, 3.0, math.inf):
        a = ember.randn(4, 3, dtype=ember.float64, generator=ember.Generator().manual_seed(2)).requires_grad_()
        b = ember.randn(5, 3, dtype=ember.float64, generator=ember.Generator().manual_seed(3)).requires_grad_()
        assert ember.autograd.gradcheck(lambda u, v: ember.cdist(u, v, p, compute_mode="donot_use_mm_for_euclid_dist"),
                                        (a, b))
    for lib in (torch, ember):
        a = lib.tensor([[0.0, 1.0], [2.0, 0.5]], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.cdist(a, a.detach() + 1, 1.0).sum(), a, create_graph=True)
        with pytest.raises(NotImplementedError, match="_cdist_backward"):
            g.sum().backward()
