"""split / split_with_sizes / chunk / unbind: one backward node for all outputs (torch's
SplitBackward0, SplitWithSizesBackward0, UnbindBackward0) and torch's rule that such outputs may
not be modified in place under grad mode (Note [Multi-output views] in ops/shape.cpp)."""
import pytest

import ember
from conftest import torch

OPS = {
    "split": lambda lib, y: y.split(3, 1),
    "split_uneven": lambda lib, y: y.split(4, 1),
    "split_with_sizes": lambda lib, y: y.split([2, 4], 1),
    "split_with_sizes_method": lambda lib, y: y.split_with_sizes([1, 0, 5], 1),
    "chunk": lambda lib, y: y.chunk(2, 1),
    "torch_split": lambda lib, y: lib.split(y, 2, 0),
    "unbind": lambda lib, y: y.unbind(0),
    "unbind_dim1": lambda lib, y: lib.unbind(y, 1),
    "tensor_split": lambda lib, y: y.tensor_split(2, 1),
    "hsplit": lambda lib, y: y.hsplit(2),
}


def _base(lib):
    x = lib.arange(24, dtype=lib.float64).reshape(4, 6).requires_grad_()
    return x, x * 1


@pytest.mark.parametrize("op", sorted(OPS))
def test_grad_fn_names_match_torch(op):
    names = []
    for lib in (ember, torch):
        _, y = _base(lib)
        names.append([o.grad_fn.name() for o in OPS[op](lib, y)])
    assert names[0] == names[1]


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("used", ["all", "first", "last", "none_but_one_twice"])
def test_gradients_match_torch(op, used):
    grads = []
    for lib in (ember, torch):
        x, y = _base(lib)
        outs = OPS[op](lib, y)
        picks = {"all": list(range(len(outs))), "first": [0], "last": [len(outs) - 1],
                 "none_but_one_twice": [0, 0]}[used]
        loss = sum(((i + 2) * outs[i] ** 2).sum() for i in picks)
        loss.backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.parametrize("op", ["split", "split_with_sizes", "unbind", "chunk"])
def test_gradcheck_and_gradgradcheck(op):
    x = ember.randn(4, 6, dtype=ember.float64, requires_grad=True)

    def first_and_last(t):
        outs = OPS[op](ember, t * 1)
        return outs[0] * 2, outs[-1] ** 2

    assert ember.autograd.gradcheck(first_and_last, (x,))
    assert ember.autograd.gradgradcheck(first_and_last, (x,))


def test_forward_ad_through_split():
    import ember.autograd.forward_ad as fwAD
    x = ember.randn(4, 6, dtype=ember.float64)
    v = ember.randn(4, 6, dtype=ember.float64)
    with fwAD.dual_level():
        a, b = fwAD.make_dual(x, v).split(3, 1)
        assert ember.equal(fwAD.unpack_dual(b).tangent, v[:, 3:])
        u = fwAD.make_dual(x, v).unbind(0)
        assert ember.equal(fwAD.unpack_dual(u[2]).tangent, v[2])


def _outcome(fn):
    try:
        r = fn()
        return ("ok", r)
    except Exception as e:  # noqa: BLE001 - the exception class and message are what is compared
        return (type(e).__name__, str(e))


def _inplace_cases(lib):
    x = lib.randn(4, 6, requires_grad=True)
    cases = {}
    y = x * 1
    cases["split"] = lambda: y.split(3, 1)[0].add_(1) is None
    cases["split_with_sizes"] = lambda: y.split([2, 4], 1)[1].mul_(2) is None
    cases["chunk"] = lambda: y.chunk(2, 1)[0].add_(1) is None
    cases["unbind"] = lambda: y.unbind(0)[0].add_(1) is None
    cases["setitem_of_unbind_output"] = lambda: y.unbind(0)[0].__setitem__(0, 1.0)
    cases["one_piece"] = lambda: y.split(6, 1)[0].add_(1) is None
    cases["of_leaf"] = lambda: x.split(3, 1)[0].add_(1) is None
    z = lib.randn(4, 6)
    cases["base_without_grad"] = lambda: z.split(3, 1)[0].add_(1) is None
    cases["other_operand_needs_grad"] = lambda: lib.randn(4, 6).split(3, 1)[0].add_(x[:, :3]) is None

    def under_no_grad():
        with lib.no_grad():
            y.split(3, 1)[0].add_(1)
        return True
    cases["under_no_grad"] = under_no_grad

    def made_under_no_grad():
        with lib.no_grad():
            a = y.split(3, 1)[0]
        a.add_(1)
    cases["made_under_no_grad"] = made_under_no_grad

    def base_modified_then_grad_fn():
        b = x * 1
        a, _ = b.split(3, 1)
        b.add_(1)
        return a.grad_fn is None
    cases["base_modified_then_grad_fn"] = base_modified_then_grad_fn

    def base_modified_through_detach():
        b = x * 1
        a, _ = b.split(3, 1)
        b.detach().add_(1)
        return a.sum() is None
    cases["base_modified_through_detach"] = base_modified_through_detach

    def view_of_output():
        a, _ = (x * 1).split(3, 1)
        a[0].add_(1)
    cases["view_of_output"] = view_of_output

    def detached_output():
        a, _ = (x * 1).split(3, 1)
        return a.detach().add_(1) is None
    cases["detached_output"] = detached_output
    return cases


@pytest.mark.parametrize("case", sorted(_inplace_cases(ember)))
def test_inplace_on_outputs_matches_torch(case):
    e = _outcome(_inplace_cases(ember)[case])
    t = _outcome(_inplace_cases(torch)[case])
    assert e == t
