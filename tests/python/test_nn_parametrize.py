"""nn.utils.parametrize and parametrizations.weight_norm / spectral_norm / orthogonal against torch 2.13."""
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as enn
from ember.nn.utils import parametrize as eP
from ember.nn.utils import parametrizations as ePs

torch = pytest.importorskip("torch")
tnn = torch.nn
tP = torch.nn.utils.parametrize
tPs = torch.nn.utils.parametrizations


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def close(e, t, tol=1e-5):
    assert tuple(e.shape) == tuple(t.shape)
    ref = t.detach()
    ref = ref.to(torch.complex128) if ref.is_complex() else ref.double()
    np.testing.assert_allclose(np.asarray(e.detach().tolist(), dtype=complex if ref.is_complex() else float)
                               .reshape(tuple(e.shape)), ref.numpy(), rtol=tol, atol=tol)


def load_from(em, tm):
    em.load_state_dict(OrderedDict((k, to_ember(v)) for k, v in tm.state_dict().items()))


def make_symmetric(nn):
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def test_custom_parametrization_matches_torch():
    tm, em = tnn.Linear(3, 3), enn.Linear(3, 3)
    load_from(em, tm)
    w_obj = em.weight
    tP.register_parametrization(tm, "weight", make_symmetric(tnn))
    eP.register_parametrization(em, "weight", make_symmetric(enn))
    assert type(em).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert repr(em).replace("Symmetric", "S") == repr(tm).replace("Symmetric", "S")
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert em.parametrizations.weight.original is w_obj  # the original Parameter object is kept
    close(em.weight, tm.weight)
    w = em.weight.tolist()
    assert w == [list(r) for r in zip(*w)]
    x = torch.randn(2, 3)
    yt, ye = tm(x), em(to_ember(x))
    close(ye, yt)
    yt.sum().backward()
    ye.sum().backward()
    close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad)
    # Assigning goes through right_inverse.
    a = torch.randn(3, 3)
    a = a + a.T
    with torch.no_grad():
        tm.weight = a
    em.weight = to_ember(a)
    close(em.weight, tm.weight)
    close(em.parametrizations.weight.original, tm.parametrizations.weight.original)
    assert eP.is_parametrized(em) and eP.is_parametrized(em, "weight") and not eP.is_parametrized(em, "bias")
    assert eP.type_before_parametrizations(em) is enn.Linear
    with eP.cached():
        assert em.weight is em.weight
    assert em.weight is not em.weight
    eP.remove_parametrizations(em, "weight")
    tP.remove_parametrizations(tm, "weight")
    assert type(em) is enn.Linear and not hasattr(em, "parametrizations")
    assert isinstance(em.weight, enn.Parameter) and em.weight is w_obj
    close(em.weight, tm.weight)
    assert list(em.state_dict()) == list(tm.state_dict())


def test_remove_without_leaving_parametrized_and_chaining():
    em = enn.Linear(3, 3)
    orig = em.weight.detach().clone()
    eP.register_parametrization(em, "weight", make_symmetric(enn))
    eP.register_parametrization(em, "weight", make_symmetric(enn))  # chained
    assert len(em.parametrizations.weight) == 2
    eP.remove_parametrizations(em, "weight", leave_parametrized=False)
    np.testing.assert_allclose(np.asarray(em.weight.tolist()), np.triu(np.asarray(orig.tolist())), rtol=1e-6)


def test_parametrize_errors():
    for nn, P, lib in ((enn, eP, ember), (tnn, tP, torch)):
        m = nn.Linear(2, 3)
        with pytest.raises(ValueError):
            P.register_parametrization(m, "nope", make_symmetric(nn))

        class Shrink(nn.Module):
            def forward(self, x):
                return x[:1]
        with pytest.raises(ValueError):
            P.register_parametrization(m, "weight", Shrink())
        with pytest.raises(ValueError):
            P.remove_parametrizations(m, "weight")
        P.register_parametrization(m, "bias", Shrink(), unsafe=True)
        assert tuple(m.bias.shape) == (1,)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_matches_torch(dim):
    tm = tPs.weight_norm(tnn.Linear(4, 3), dim=dim)
    em = ePs.weight_norm(enn.Linear(4, 3), dim=dim)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    for k in tm.state_dict():
        assert tuple(em.state_dict()[k].shape) == tuple(tm.state_dict()[k].shape), k
    load_from(em, tm)
    close(em.weight, tm.weight)
    x = torch.randn(5, 4)
    yt, ye = tm(x), em(to_ember(x))
    close(ye, yt)
    yt.pow(2).sum().backward()
    ye.pow(2).sum().backward()
    for i in (0, 1):
        close(getattr(em.parametrizations.weight, f"original{i}").grad,
              getattr(tm.parametrizations.weight, f"original{i}").grad, 1e-4)


def test_weight_norm_loads_old_checkpoint_names():
    old = tnn.utils.weight_norm(tnn.Linear(3, 2))  # the hook-based form: weight_g / weight_v
    em = ePs.weight_norm(enn.Linear(3, 2))
    load_from(em, old)
    close(em.weight, old.weight)


def test_weight_norm_conv_like_weight():
    w = torch.randn(4, 2, 3, 3)

    class Holder(tnn.Module):
        def __init__(self):
            super().__init__()
            self.weight = tnn.Parameter(w.clone())

    class EHolder(enn.Module):
        def __init__(self):
            super().__init__()
            self.weight = enn.Parameter(to_ember(w))
    tm, em = tPs.weight_norm(Holder(), dim=0), ePs.weight_norm(EHolder(), dim=0)
    close(em.parametrizations.weight.original0, tm.parametrizations.weight.original0)
    close(em.weight, tm.weight)


@pytest.mark.parametrize("shape", [(5, 4), (3, 2, 2, 2)])
def test_spectral_norm_matches_torch(shape):
    class Holder(tnn.Module):
        def __init__(self):
            super().__init__()
            self.weight = tnn.Parameter(torch.randn(shape))

    class EHolder(enn.Module):
        def __init__(self):
            super().__init__()
            self.weight = enn.Parameter(ember.zeros(shape))
    tm, em = tPs.spectral_norm(Holder()), ePs.spectral_norm(EHolder())
    assert list(em.state_dict()) == list(tm.state_dict())
    load_from(em, tm)  # same weight and power-iteration vectors
    for _ in range(3):  # training: u and v advance one iteration per access
        close(em.weight, tm.weight)
    close(em.parametrizations.weight[0]._u, tm.parametrizations.weight[0]._u)
    em.eval()
    tm.eval()
    close(em.weight, tm.weight)
    yt = (tm.weight ** 2).sum()
    ye = (em.weight ** 2).sum()
    yt.backward()
    ye.backward()
    close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad, 1e-4)


def test_spectral_norm_vector_and_errors():
    em = ePs.spectral_norm(enn.Linear(3, 3))
    w = np.asarray(em.weight.tolist())
    assert abs(np.linalg.svd(w, compute_uv=False)[0] - 1) < 0.2  # roughly unit spectral norm after 15+1 iterations
    with pytest.raises(ValueError):
        ePs.spectral_norm(enn.Linear(2, 2), name="nope")
    with pytest.raises(ValueError):
        ePs.spectral_norm(enn.Linear(2, 2), n_power_iterations=0)


# ---- parametrizations.orthogonal ----

def orthonormal_error(w):
    """max |Q^H Q - I| for tall Q (Q Q^H for wide)."""
    q = np.asarray(w.detach().tolist())
    if q.shape[-2] < q.shape[-1]:
        q = np.swapaxes(q, -1, -2)
    g = np.swapaxes(q, -1, -2).conj() @ q
    return np.abs(g - np.eye(q.shape[-1])).max()


def orthogonal_pair(shape, dtype=torch.float64, **kw):
    """The same Linear in both libraries (weight (out, in) = shape), parametrized with `kw`."""
    tm = tnn.Linear(shape[1], shape[0]).to(dtype)
    if dtype.is_complex:
        with torch.no_grad():
            tm.weight.copy_(torch.randn_like(tm.weight))
    em = enn.Linear(shape[1], shape[0]).to(getattr(ember, str(dtype).split(".")[-1]))
    load_from(em, tm)
    tPs.orthogonal(tm, **kw)
    ePs.orthogonal(em, **kw)
    return em, tm


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_matches_torch(shape, orthogonal_map, use_trivialization):
    em, tm = orthogonal_pair(shape, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())  # incl. parametrizations.weight.0.base
    assert em.parametrizations.weight[0].orthogonal_map == tm.parametrizations.weight[0].orthogonal_map.name
    # Registration: the weight is orthonormal and equals torch's (the Q factor of the old weight,
    # or the map of the old weight where no right_inverse applies).
    close(em.weight, tm.weight, 1e-12)
    if use_trivialization or orthogonal_map == "householder" or (orthogonal_map is None and shape[0] != shape[1]):
        assert orthonormal_error(em.weight) < 1e-13
    close(em.parametrizations.weight.original, tm.parametrizations.weight.original, 1e-12)
    # With torch's state (its random base completion for non-square weights included), the
    # gradients w.r.t. the original parameter equal torch's.
    load_from(em, tm)
    x = torch.randn(2, shape[1], dtype=torch.float64)
    g = torch.randn(2, shape[0], dtype=torch.float64)
    tm(x).backward(g)
    em(to_ember(x)).backward(to_ember(g))
    close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad, 1e-11)
    # Assigning an orthonormal matrix goes through right_inverse (torch refuses for matrix_exp and
    # cayley without a trivialization: there is no inverse to compute).
    q = torch.linalg.qr(torch.randn(max(shape), min(shape), dtype=torch.float64)).Q
    q = q.T if shape[0] < shape[1] else q
    try:
        with torch.no_grad():
            tm.weight = q
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            em.weight = to_ember(q)
        return
    em.weight = to_ember(q)
    close(em.weight, tm.weight, 1e-12)
    close(em.weight, q, 1e-12)
    close(em.parametrizations.weight.original, tm.parametrizations.weight.original, 1e-12)


def test_orthogonal_training_steps_match_torch():
    # A few SGD steps from the same state: the weights stay equal to torch's and orthonormal.
    for kw in [dict(), dict(orthogonal_map="cayley"), dict(orthogonal_map="householder", use_trivialization=False)]:
        em, tm = orthogonal_pair((5, 3), **kw)
        load_from(em, tm)
        topt = torch.optim.SGD(tm.parameters(), lr=0.1)
        eopt = ember.optim.SGD(em.parameters(), lr=0.1)
        x = torch.randn(4, 3, dtype=torch.float64)
        for _ in range(3):
            topt.zero_grad()
            eopt.zero_grad()
            (tm(x) ** 2).sum().backward()
            (em(to_ember(x)) ** 2).sum().backward()
            topt.step()
            eopt.step()
        close(em.weight, tm.weight, 1e-10)
        assert orthonormal_error(em.weight) < 1e-12


def test_orthogonal_float32_complex_and_batched():
    em, tm = orthogonal_pair((4, 6), dtype=torch.float32)
    close(em.weight, tm.weight, 1e-5)
    assert orthonormal_error(em.weight) < 1e-5
    # Complex: matrix_exp by default (tall too); householder refuses complex tensors.
    for shape in [(3, 3), (5, 2)]:
        with pytest.warns(UserWarning, match="Complex modules"):
            em, tm = orthogonal_pair(shape, dtype=torch.complex128)
        assert em.parametrizations.weight[0].orthogonal_map == "matrix_exp"
        close(em.weight, tm.weight, 1e-12)
        assert orthonormal_error(em.weight) < 1e-13
    for lib, nn, P in ((ember, enn, ePs), (torch, tnn, tPs)):
        with pytest.raises(ValueError):
            P.orthogonal(nn.Linear(2, 3).to(lib.complex128), orthogonal_map="householder")

    # A batch of matrices as one parameter.
    def holder(nn, lib, w):
        m = nn.Module()
        m.weight = nn.Parameter(w)
        return m
    w = torch.randn(2, 3, 5, 4, dtype=torch.float64)
    for orthogonal_map in ["matrix_exp", "householder"]:
        tm, em = holder(tnn, torch, w.clone()), holder(enn, ember, to_ember(w))
        tPs.orthogonal(tm, orthogonal_map=orthogonal_map)
        ePs.orthogonal(em, orthogonal_map=orthogonal_map)
        close(em.weight, tm.weight, 1e-12)
        assert orthonormal_error(em.weight) < 1e-13
        load_from(em, tm)
        (tm.weight * w).sum().backward()
        (em.weight * to_ember(w)).sum().backward()
        close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad, 1e-11)


def test_orthogonal_householder_without_trivialization_identity_and_cached():
    # Assigning I: geqrf gives tau = 0 (no reflection); the stored diagonal signs make up for it.
    em, tm = orthogonal_pair((4, 4), orthogonal_map="householder", use_trivialization=False)
    eye = torch.eye(4, dtype=torch.float64)
    with torch.no_grad():
        tm.weight = eye
    em.weight = to_ember(eye)
    close(em.weight, eye, 1e-15)
    close(em.parametrizations.weight.original, tm.parametrizations.weight.original, 1e-15)
    with eP.cached():
        assert em.weight is em.weight
    assert em.weight is not em.weight


def test_orthogonal_errors_match_torch():
    for lib, nn, P in ((ember, enn, ePs), (torch, tnn, tPs)):
        with pytest.raises(ValueError):
            P.orthogonal(nn.Linear(2, 2), name="nope")
        with pytest.raises(ValueError):
            P.orthogonal(nn.BatchNorm1d(3))  # 1-d weight
        with pytest.raises(ValueError):
            P.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
        m = P.orthogonal(nn.Linear(3, 2))
        with pytest.raises(ValueError):  # right_inverse checks the shape
            m.weight = lib.zeros(3, 2)


# ---- nn.utils.fusion ----

def _bn_stats(c):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(c, generator=g), torch.rand(c, generator=g) + 0.5, torch.randn(c, generator=g),
            torch.randn(c, generator=g))


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_weights_matches_torch(transpose, bias):
    w = torch.randn(4, 6, 3, 3) if not transpose else torch.randn(6, 4, 3, 3)
    b = torch.randn(4) if bias else None
    rm, rv, bw, bb = _bn_stats(4)
    ft = tnn.utils.fuse_conv_bn_weights(w, b, rm, rv, 1e-5, bw, bb, transpose)
    fe = enn.utils.fuse_conv_bn_weights(to_ember(w), None if b is None else to_ember(b), to_ember(rm), to_ember(rv),
                                        1e-5, to_ember(bw), to_ember(bb), transpose)
    for e, t in zip(fe, ft):
        assert isinstance(e, enn.Parameter)
        close(e, t)
    fe = enn.utils.fuse_conv_bn_weights(to_ember(w), None, to_ember(rm), to_ember(rv), 1e-3, None, None, transpose)
    ft = tnn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-3, None, None, transpose)
    for e, t in zip(fe, ft):
        close(e, t)


def test_fuse_linear_bn_matches_torch():
    rm, rv, bw, bb = _bn_stats(3)
    w, b = torch.randn(3, 5), torch.randn(3)
    for e, t in zip(enn.utils.fuse_linear_bn_weights(to_ember(w), to_ember(b), to_ember(rm), to_ember(rv), 1e-5,
                                                     to_ember(bw), to_ember(bb)),
                    tnn.utils.fuse_linear_bn_weights(w, b, rm, rv, 1e-5, bw, bb)):
        close(e, t)

    class BN(enn.Module):  # the attributes fuse_linear_bn_eval reads (nn.BatchNorm1d comes from another branch)
        def __init__(self):
            super().__init__()
            self.num_features, self.eps = 3, 1e-5
            self.weight, self.bias = enn.Parameter(to_ember(bw)), enn.Parameter(to_ember(bb))
            self.register_buffer("running_mean", to_ember(rm))
            self.register_buffer("running_var", to_ember(rv))

    lin = enn.Linear(5, 3)
    with ember.no_grad():
        lin.weight.copy_(to_ember(w))
        lin.bias.copy_(to_ember(b))
    fused = enn.utils.fuse_linear_bn_eval(lin.eval(), BN().eval())
    tb = tnn.BatchNorm1d(3).eval()
    tb.load_state_dict({"weight": bw, "bias": bb, "running_mean": rm, "running_var": rv,
                        "num_batches_tracked": torch.tensor(0)})
    tl = tnn.Linear(5, 3)
    tl.load_state_dict({"weight": w, "bias": b})
    x = torch.randn(4, 5)
    close(fused(to_ember(x)), tb(tl(x)), 1e-4)
    with pytest.raises(AssertionError):
        enn.utils.fuse_linear_bn_eval(lin.train(), BN().eval())


# ---- the hook-based weight_norm ----

@pytest.mark.parametrize("dim", [0, 1, None])
def test_hook_weight_norm_matches_torch(dim):
    with pytest.warns(FutureWarning):
        tm = tnn.utils.weight_norm(tnn.Linear(4, 3), dim=dim)
    with pytest.warns(FutureWarning):
        em = enn.utils.weight_norm(enn.Linear(4, 3), dim=dim)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert list(em.state_dict()) == list(tm.state_dict())
    load_from(em, tm)
    x = torch.randn(2, 4)
    yt, ye = tm(x), em(to_ember(x))
    close(ye, yt)
    yt.sum().backward()
    ye.sum().backward()
    close(em.weight_g.grad, tm.weight_g.grad, 1e-4)
    close(em.weight_v.grad, tm.weight_v.grad, 1e-4)
    with pytest.raises(RuntimeError):
        enn.utils.weight_norm(em, dim=dim)
    enn.utils.remove_weight_norm(em)
    tnn.utils.remove_weight_norm(tm)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    close(em.weight, tm.weight)
    with pytest.raises(ValueError):
        enn.utils.remove_weight_norm(em)


# ---- the hook-based spectral_norm ----

def test_hook_spectral_norm_matches_torch():
    tm = tnn.utils.spectral_norm(tnn.Linear(4, 5))
    em = enn.utils.spectral_norm(enn.Linear(4, 5))
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    tsd = tm.state_dict()
    assert list(em.state_dict()) == list(tsd)
    assert dict(em.state_dict()._metadata) == dict(tsd._metadata)
    em.load_state_dict(OrderedDict((k, to_ember(v)) for k, v in tsd.items()))
    x = torch.randn(3, 4)
    for _ in range(3):  # training: u, v advance on each call
        close(em(to_ember(x)), tm(x), 1e-4)
    close(em.weight_u, tm.weight_u, 1e-4)
    em.eval()
    tm.eval()
    yt, ye = tm(x), em(to_ember(x))
    close(ye, yt, 1e-4)
    yt.sum().backward()
    ye.sum().backward()
    close(em.weight_orig.grad, tm.weight_orig.grad, 1e-4)
    with pytest.raises(RuntimeError):
        enn.utils.spectral_norm(em)
    enn.utils.remove_spectral_norm(em)
    tnn.utils.remove_spectral_norm(tm)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    close(em.weight, tm.weight, 1e-4)
    assert list(em.state_dict()) == list(tm.state_dict())
    with pytest.raises(ValueError):
        enn.utils.remove_spectral_norm(em)
    with pytest.raises(ValueError):
        enn.utils.spectral_norm(enn.Linear(2, 2), n_power_iterations=0)
