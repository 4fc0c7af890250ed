"""nn.utils.prune against torch's: the same masks, parameters, buffers, hooks and state_dict keys
for the same weights, through one-shot, iterative, structured, global and custom pruning."""
import numpy as np
import pytest

import ember
from conftest import torch
import torch.nn.utils.prune  # noqa: E402,F401  (a submodule torch does not import itself)


def _pair(make):
    """The same module in both libraries (weights copied from torch's)."""
    tm = make(torch)
    em = make(ember)
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, em


def _same(tt, et):
    assert np.array_equal(tt.detach().numpy(), et.detach().numpy())


def _linear(L):
    return L.nn.Linear(6, 5)


def _conv(L):
    return L.nn.Conv2d(3, 4, 3)


def _check_modules(tm, em, name="weight"):
    assert sorted(dict(tm.named_parameters())) == sorted(dict(em.named_parameters()))
    assert sorted(dict(tm.named_buffers())) == sorted(dict(em.named_buffers()))
    assert list(tm.state_dict()) == list(em.state_dict())
    _same(getattr(tm, name + "_mask"), getattr(em, name + "_mask"))
    _same(getattr(tm, name), getattr(em, name))
    assert torch.nn.utils.prune.is_pruned(tm) and ember.nn.utils.prune.is_pruned(em)


@pytest.mark.parametrize("amount", [0, 3, 0.4, 1.0])
def test_l1_unstructured_and_iterative_as_torch(amount):
    tm, em = _pair(_linear)
    torch.nn.utils.prune.l1_unstructured(tm, "weight", amount)
    ember.nn.utils.prune.l1_unstructured(em, "weight", amount)
    _check_modules(tm, em)
    # a second round chooses among the entries still kept
    torch.nn.utils.prune.l1_unstructured(tm, "weight", 0.25)
    ember.nn.utils.prune.l1_unstructured(em, "weight", 0.25)
    _check_modules(tm, em)
    assert type(list(em._forward_pre_hooks.values())[0]).__name__ == "PruningContainer"
    x = torch.randn(2, 6)
    # the pre-hook recomputes weight from orig and mask (products may round differently: torch's MKL)
    np.testing.assert_allclose(em(ember.from_numpy(x.numpy())).detach().numpy(), tm(x).detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    torch.nn.utils.prune.remove(tm, "weight")
    ember.nn.utils.prune.remove(em, "weight")
    assert list(tm.state_dict()) == list(em.state_dict()) == ["bias", "weight"]  # re-registered last
    _same(tm.weight, em.weight)
    assert isinstance(em.weight, ember.nn.Parameter) and not ember.nn.utils.prune.is_pruned(em)


@pytest.mark.parametrize("n,dim", [(1, 0), (2, 1), (float("inf"), -1)])
def test_ln_structured_then_l1_as_torch(n, dim):
    tm, em = _pair(_conv)
    torch.nn.utils.prune.ln_structured(tm, "weight", amount=1, n=n, dim=dim)
    ember.nn.utils.prune.ln_structured(em, "weight", amount=1, n=n, dim=dim)
    _check_modules(tm, em)
    torch.nn.utils.prune.ln_structured(tm, "weight", amount=0.5, n=n, dim=dim)
    ember.nn.utils.prune.ln_structured(em, "weight", amount=0.5, n=n, dim=dim)
    _check_modules(tm, em)
    torch.nn.utils.prune.l1_unstructured(tm, "bias", amount=2)
    ember.nn.utils.prune.l1_unstructured(em, "bias", amount=2)
    _check_modules(tm, em, "bias")


def test_global_and_custom_pruning_as_torch():
    t1, e1 = _pair(_linear)
    t2, e2 = _pair(_conv)
    torch.nn.utils.prune.global_unstructured([(t1, "weight"), (t2, "weight")],
                                             pruning_method=torch.nn.utils.prune.L1Unstructured, amount=0.3)
    ember.nn.utils.prune.global_unstructured([(e1, "weight"), (e2, "weight")],
                                             pruning_method=ember.nn.utils.prune.L1Unstructured, amount=0.3)
    _check_modules(t1, e1)
    _check_modules(t2, e2)
    mask = (torch.arange(5) % 2).float()
    torch.nn.utils.prune.custom_from_mask(t1, "bias", mask)
    ember.nn.utils.prune.custom_from_mask(e1, "bias", ember.from_numpy(mask.numpy()))
    _check_modules(t1, e1, "bias")
    with pytest.raises(TypeError):
        ember.nn.utils.prune.global_unstructured([(e1, "weight")], ember.nn.utils.prune.RandomStructured,
                                                 amount=1, dim=0)


def test_random_pruning_counts_and_gradients():
    for make in (_linear, _conv):
        m = make(ember)
        ember.nn.utils.prune.random_unstructured(m, "weight", amount=7)
        assert int((m.weight_mask == 0).sum()) == 7
        ember.nn.utils.prune.random_structured(m, "weight", amount=2, dim=0)
        zero_rows = (m.weight_mask.reshape(m.weight.shape[0], -1).sum(1) == 0).sum()
        assert int(zero_rows) >= 2
    x = ember.randn(2, 3, 5, 5)
    m(x).sum().backward()  # gradients reach weight_orig, zero where pruned
    assert m.weight_orig.grad is not None
    assert bool((m.weight_orig.grad[m.weight_mask == 0] == 0).all())


@pytest.mark.parametrize("amount,exc", [(-1, ValueError), (1.5, ValueError), ("a", TypeError), (31, ValueError)])
def test_bad_amounts_as_torch(amount, exc):
    for L in (torch, ember):
        m = L.nn.Linear(6, 5)
        with pytest.raises(exc):
            L.nn.utils.prune.l1_unstructured(m, "weight", amount)
        assert "weight" in dict(m.named_parameters())  # a failed prune leaves the module as it was
    for L in (torch, ember):
        with pytest.raises(ValueError):
            L.nn.utils.prune.remove(L.nn.Linear(2, 2), "weight")
