"""nn.AdaptiveLogSoftmaxWithLoss against torch's with the same weights: outputs, loss, gradients,
log_prob, predict, unbatched input, parameter names, and torch's errors for bad arguments."""
import numpy as np
import pytest

import ember
from conftest import same_error, torch


def _pair(in_f, n_cls, cutoffs, div=4.0, head_bias=False, dtype="float64"):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(in_f, n_cls, cutoffs, div_value=div, head_bias=head_bias)
    tm = tm.to(getattr(torch, dtype))
    em = ember.nn.AdaptiveLogSoftmaxWithLoss(in_f, n_cls, cutoffs, div_value=div, head_bias=head_bias,
                                             dtype=getattr(ember, dtype))
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, em


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cfg", [(16, 30, [5, 12, 20], 2.0, True), (8, 10, [3], 4.0, False),
                                 (12, 50, [10, 11, 30], 3.0, False)])
def test_forward_backward_log_prob_predict_match_torch(cfg, dtype):
    in_f, n_cls, cutoffs, div, hb = cfg
    tm, em = _pair(in_f, n_cls, cutoffs, div, hb, dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((11, in_f)).astype(dtype)
    t = rng.integers(0, n_cls, size=11)
    t[:2] = [0, n_cls - 1]  # the first and the last class
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    to, eo = tm(tx, torch.tensor(t)), em(ex, ember.tensor(t))
    assert type(eo).__name__ == type(to).__name__ and eo._fields == to._fields
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(eo.output.detach().numpy(), to.output.detach().numpy(), **tol)
    np.testing.assert_allclose(eo.loss.detach().numpy(), to.loss.detach().numpy(), **tol)
    to.loss.backward()
    eo.loss.backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol)
    for (name, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert (tp.grad is None) == (ep.grad is None), name
        if tp.grad is not None:
            np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), **tol)
    with ember.no_grad(), torch.no_grad():
        np.testing.assert_allclose(em.log_prob(ex).numpy(), tm.log_prob(tx).numpy(), **tol)
        assert em.predict(ex).tolist() == tm.predict(tx).tolist()
        ro, rt = em(ex[3], ember.tensor(int(t[3]))), tm(tx[3], torch.tensor(int(t[3])))  # unbatched
        assert tuple(ro.output.shape) == tuple(rt.output.shape) == ()
        np.testing.assert_allclose(float(ro.output), float(rt.output), **tol)


def test_gradcheck_through_clusters():
    _, em = _pair(6, 12, [3, 7], 2.0, True)
    target = ember.tensor([0, 5, 11, 8, 2])

    def loss(x):
        return em(x, target).loss
    x = ember.randn(5, 6, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(loss, (x,))


@pytest.mark.parametrize("cutoffs", [[5, 5, 20], [0, 5], [5, 40], [20, 5], [5, 30], []])
def test_bad_cutoffs_as_torch(cutoffs):
    same_error(lambda: ember.nn.AdaptiveLogSoftmaxWithLoss(16, 30, cutoffs),
               lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(16, 30, cutoffs))


def test_bad_inputs_and_targets_as_torch():
    tm, em = _pair(16, 30, [5, 12, 20])
    cases = [((4, 16), [0, 30, 1, 2]), ((4, 16), [-1, 0, 1, 2]), ((2, 3, 16), [[1, 2, 3], [1, 2, 3]]),
             ((4, 16), [1, 2]), ((4, 15), [1, 2, 3, 4]), ((16,), [1, 2]), ((2, 16), 3)]
    for shape, target in cases:
        x = np.zeros(shape)
        same_error(lambda: em(ember.tensor(x), ember.tensor(target)),
                   lambda: tm(torch.tensor(x), torch.tensor(target)))
    same_error(lambda: em.log_prob(ember.zeros(16, dtype=ember.float64)),
               lambda: tm.log_prob(torch.zeros(16, dtype=torch.float64)))
