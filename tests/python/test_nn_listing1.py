"""The paper's Listing 1 (a custom LinearLayer from Parameter and mm, used in a FullBasicModel with
Conv2d and softmax) run in ember and torch with the same weights: same outputs and gradients."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as enn

torch = pytest.importorskip("torch")


def build(lib):
    nn = lib.nn

    class LinearLayer(nn.Module):
        def __init__(self, in_sz, out_sz):
            super().__init__()
            t1 = lib.randn(in_sz, out_sz)
            self.w = nn.Parameter(t1)
            t2 = lib.randn(out_sz)
            self.b = nn.Parameter(t2)

        def forward(self, activations):
            t = lib.mm(activations, self.w)
            return t + self.b

    class FullBasicModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 128, 3)
            self.fc = LinearLayer(128, 10)

        def forward(self, x):
            t1 = self.conv(x)
            t2 = nn.functional.relu(t1)
            # The listing feeds the conv output to the linear layer; with a 3x3 input it is (N, 128, 1, 1).
            t3 = self.fc(t2.view(t2.size(0), -1))
            return nn.functional.softmax(t3)

    return FullBasicModel()


def test_listing1_matches_torch():
    tm, em = build(torch), build(ember)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()] == \
        ["conv.weight", "conv.bias", "fc.w", "fc.b"]
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = torch.randn(4, 1, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # softmax without dim: torch's implicit-dim warning
        yt = tm(x)
        ye = em(ember.tensor(x.numpy()))
    np.testing.assert_allclose(np.asarray(ye.tolist()), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = torch.randn(4, 10)
    yt.backward(g)
    ye.backward(ember.tensor(g.numpy()))
    for (n, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(np.asarray(pe.grad.tolist()), pt.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=n)
    assert repr(em).replace("LinearLayer()", "") == repr(tm).replace("LinearLayer()", "")
