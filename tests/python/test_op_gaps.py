"""Focused checks for scatter_reduce/scatter gradients, einsum sublists, where(cond),
repeat_interleave(output_size=), lstsq drivers and thread-count independence of index kernels."""
import pytest

import ember
from conftest import assert_same, same_error, torch


def E(t, grad=False):
    e = ember.tensor(t.detach().numpy())
    return e.requires_grad_() if grad else e


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_ties_and_zeros_match_torch_gradients(reduce, include_self):
    # Ties among self and src (amax/amin share the gradient) and zeros (prod's special cases).
    x = torch.tensor([1.0, 0.0, 3.0, 2.0], dtype=torch.float64, requires_grad=True)
    s = torch.tensor([1.0, 1.0, 0.0, 3.0, 3.0, 0.0, 0.0], dtype=torch.float64, requires_grad=True)
    i = torch.tensor([0, 0, 1, 2, 2, 3, 3])
    y = torch.scatter_reduce(x, 0, i, s, reduce, include_self=include_self)
    w = torch.arange(1.0, 5.0, dtype=torch.float64)
    gx, gs = torch.autograd.grad((y * w).sum(), (x, s))
    ex, es = E(x, True), E(s, True)
    ey = ember.scatter_reduce(ex, 0, E(i), es, reduce, include_self=include_self)
    egx, egs = ember.autograd.grad((ey * E(w)).sum(), (ex, es))
    assert_same(ey, y.detach())
    assert_same(egx, gx)
    assert_same(egs, gs)


def test_scatter_reduce_src_larger_than_index_gradient():
    # src is cut to index's shape; the rest of src gets a zero gradient.
    x = torch.rand(3, 4, dtype=torch.float64) + 0.5
    s = torch.rand(3, 5, dtype=torch.float64) + 0.5
    i = E(torch.tensor([[0, 1, 0, 2], [1, 1, 2, 0]]))
    for red in ["prod", "amax", "amin"]:
        f = lambda a, b: ember.scatter_reduce(a, 0, i, b, red)  # noqa: E731
        assert ember.autograd.gradcheck(f, (E(x, True), E(s, True)))
        assert ember.autograd.gradgradcheck(f, (E(x, True), E(s, True)))


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_has_no_derivative(reduce):
    def run(lib, x, s, inplace):
        i = lib.tensor([[0, 1], [1, 0]])
        y = x.clone().scatter_(1, i, s, reduce=reduce) if inplace else lib.scatter(x, 1, i, s, reduce=reduce)
        y.sum().backward()

    for inplace in [False, True]:
        tx = torch.rand(2, 3, requires_grad=True)
        ts = torch.rand(2, 2, requires_grad=True)
        same_error(lambda: run(ember, E(tx, True), E(ts, True), inplace), lambda: run(torch, tx, ts, inplace))
    # Forward values still work without grad.
    tx, ts = torch.rand(2, 3), torch.rand(2, 2)
    ti = torch.tensor([[0, 1], [1, 1]])
    assert_same(ember.scatter(E(tx), 1, E(ti), E(ts), reduce=reduce), torch.scatter(tx, 1, ti, ts, reduce=reduce))
