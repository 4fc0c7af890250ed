"""Activation, padding, shuffle and distance modules, their nn.functional ops, and nn.utils, against torch 2.13."""
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def to_np(x):
    return np.asarray(x.detach().tolist(), dtype=np.float64).reshape(tuple(x.shape))


def close(e, t, tol=1e-5):
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(to_np(e), t.detach().double().numpy(), rtol=tol, atol=tol)


def same_errors(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    return str(ee.value), str(te.value)


# (constructor args, input shape) for every activation module; the module is built in both libraries.
ACTIVATIONS = [
    ("ReLU", (), (2, 3)), ("ReLU", (True,), (4,)), ("ReLU6", (), (2, 3)), ("LeakyReLU", (0.2,), (3, 2)),
    ("ELU", (0.5,), (5,)), ("SELU", (), (2, 2)), ("CELU", (2.0,), (3, 3)), ("GELU", (), (4,)),
    ("GELU", ("tanh",), (2, 3)), ("SiLU", (), (3,)), ("Mish", (), (2, 3)), ("Softplus", (2.0, 5.0), (4, 2)),
    ("Softsign", (), (3,)), ("Hardtanh", (-2.0, 1.5), (2, 4)), ("Hardsigmoid", (), (5,)), ("Hardswish", (), (5,)),
    ("LogSigmoid", (), (3,)), ("Sigmoid", (), (2, 2)), ("Tanh", (), (3,)), ("Tanhshrink", (), (2, 3)),
    ("Threshold", (0.1, 20.0), (3, 3)), ("Softmax", (1,), (2, 5)), ("Softmax", (0,), (3,)),
    ("LogSoftmax", (-1,), (2, 3, 4)), ("Softmin", (1,), (2, 3)), ("Softmax2d", (), (2, 3, 4, 4)),
    ("Softmax2d", (), (3, 2, 2)), ("GLU", (), (2, 6)), ("GLU", (0,), (4, 3)), ("Hardshrink", (0.3,), (3, 4)),
    ("Softshrink", (0.4,), (3, 4)), ("Softshrink", (), ()), ("PReLU", (), (2, 3)), ("PReLU", (3,), (2, 3, 4)),
    ("RReLU", (0.1, 0.3), (4, 4)), ("Hardtanh", (), ()), ("ReLU", (), (0, 3)), ("Softmax", (1,), (0, 3)),
]


@pytest.mark.parametrize("name,args,shape", ACTIVATIONS, ids=[f"{a[0]}{a[1]}{a[2]}" for a in ACTIVATIONS])
def test_activation_module_matches_torch(name, args, shape):
    tm, em = getattr(tnn, name)(*args), getattr(enn, name)(*args)
    assert repr(em) == repr(tm)
    if name == "RReLU":  # random in training: compare the deterministic eval mode
        tm.eval()
        em.eval()
    for p_t, p_e in zip(tm.parameters(), em.parameters()):
        with torch.no_grad():
            p_t.copy_(torch.linspace(0.1, 0.5, p_t.numel()).reshape(p_t.shape))
        with ember.no_grad():
            p_e.copy_(to_ember(p_t))
    x = torch.randn(shape) * 3
    xe = to_ember(x)
    inplace = "True" in repr(tm)
    xt = x.clone().requires_grad_(not inplace)
    xe = xe.clone().requires_grad_(not inplace)
    yt = tm(xt if not inplace else xt.clone())
    ye = em(xe if not inplace else xe.clone())
    close(ye, yt)
    if not inplace and yt.numel():
        g = torch.randn(yt.shape)
        yt.backward(g)
        ye.backward(to_ember(g))
        close(xe.grad, xt.grad, 1e-4)
        for p_t, p_e in zip(tm.parameters(), em.parameters()):
            close(p_e.grad, p_t.grad, 1e-4)


def test_inplace_activations_modify_input():
    for name, args in [("ReLU", (True,)), ("ELU", (1.0, True)), ("LeakyReLU", (0.1, True)),
                       ("Threshold", (0.0, -1.0, True)), ("Hardtanh", (-1.0, 1.0, True)), ("RReLU", (0.1, 0.3, True))]:
        em, tm = getattr(enn, name)(*args).eval(), getattr(tnn, name)(*args).eval()
        x = torch.randn(10)
        xe = to_ember(x)
        ye = em(xe)
        yt = tm(x)
        close(xe, x)
        close(ye, yt)


def test_rrelu_training_is_random_in_range():
    m = enn.RReLU(0.1, 0.3)
    x = -ember.ones(2000)
    y = m(x)
    slopes = -to_np(y)
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    pos = ember.ones(5)
    assert m(pos).tolist() == [1.0] * 5
    x = (-ember.ones(50)).requires_grad_()
    y = m(x)
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), -to_np(y), rtol=1e-6)
    same_errors(lambda: EF.rrelu(ember.ones(2), 0.5, 0.1, True), lambda: TF.rrelu(torch.ones(2), 0.5, 0.1, True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family_dim_and_dtype(dtype):
    x = torch.randn(3, 4, 5, dtype=getattr(torch, dtype))
    xe = to_ember(x)
    for f in ("softmax", "log_softmax", "softmin"):
        for dim in (0, 1, -1):
            close(getattr(EF, f)(xe, dim), getattr(TF, f)(x, dim))
            close(getattr(EF, f)(xe, dim=dim, dtype=ember.float64), getattr(TF, f)(x, dim=dim, dtype=torch.float64))
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            ye = getattr(EF, f)(xe)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yt = getattr(TF, f)(x)
        close(ye, yt)
    for shape in [(), (4,), (2, 3), (2, 3, 4, 5)]:
        x = torch.randn(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close(EF.softmax(to_ember(x)), TF.softmax(x))
            close(enn.Softmax()(to_ember(x)), tnn.Softmax()(x))


def test_softmax_non_contiguous_and_extreme():
    x = torch.randn(5, 4).t()
    xe = to_ember(x.t()).t()  # the same non-contiguous layout
    assert not xe.is_contiguous()
    close(EF.log_softmax(xe, 1), TF.log_softmax(x, 1))
    close(EF.softmax(xe, 0), TF.softmax(x, 0))
    big = torch.tensor([[1000.0, -1000.0, 0.0]])
    close(EF.log_softmax(to_ember(big), 1), TF.log_softmax(big, 1))
    close(EF.softmin(to_ember(big), 1), TF.softmin(big, 1))


def test_composed_functionals_gradcheck():
    d = ember.float64
    x = ember.randn(3, 4, dtype=d, requires_grad=True)
    assert gradcheck(lambda a: EF.glu(a, 1), (x,))
    assert gradgradcheck(lambda a: EF.glu(a, 1), (x,))
    w = ember.tensor([0.1, 0.2, 0.3, 0.4], dtype=d, requires_grad=True)
    x2 = (ember.randn(2, 4, 3, dtype=d) + 0.05).requires_grad_()
    assert gradcheck(EF.prelu, (x2, w))
    assert gradgradcheck(EF.prelu, (x2, w))
    xs = (ember.rand(10, dtype=d) * 4 - 2).requires_grad_()
    assert gradcheck(lambda a: EF.hardshrink(a, 0.3), (xs,))
    assert gradcheck(lambda a: EF.softshrink(a, 0.3), (xs,))
    assert gradcheck(lambda a: EF.softmin(a, 1, dtype=d), (x,))
    assert gradcheck(lambda a: EF.normalize(a, p=3.0, dim=0), (x,))
    y = ember.randn(3, 4, dtype=d, requires_grad=True)
    assert gradcheck(lambda a, b: EF.cosine_similarity(a, b, 1), (x, y))
    assert gradcheck(lambda a, b: EF.pairwise_distance(a, b), (x, y))
    z = ember.randn(1, 8, 2, 3, dtype=d, requires_grad=True)
    assert gradcheck(lambda a: EF.pixel_shuffle(a, 2), (z,))
    assert gradcheck(lambda a: EF.pixel_unshuffle(EF.pixel_shuffle(a, 2), 2), (z,))
    assert gradcheck(lambda a: EF.channel_shuffle(a, 4), (z,))


def test_composed_functionals_match_torch():
    x = torch.randn(2, 6, 3) * 2
    xe = to_ember(x)
    close(EF.glu(xe, 1), TF.glu(x, 1))
    close(EF.glu(xe[..., :2]), TF.glu(x[..., :2]))
    for lambd in (0.0, 0.5, 2.0):
        close(EF.hardshrink(xe, lambd), TF.hardshrink(x, lambd))
        close(EF.softshrink(xe, lambd), TF.softshrink(x, lambd))
    nan = torch.tensor([float("nan"), 0.2, -3.0])
    close(EF.hardshrink(to_ember(nan)), TF.hardshrink(nan))
    close(EF.softshrink(to_ember(nan)), TF.softshrink(nan))
    w = torch.tensor([0.25])
    for shape in [(), (5,), (2, 3), (2, 3, 4)]:
        xi = torch.randn(shape)
        close(EF.prelu(to_ember(xi), to_ember(w)), TF.prelu(xi, w))
    for p, dim in [(2.0, 1), (1.0, 0), (3.0, -1), (float("inf"), 1)]:
        close(EF.normalize(xe, p, dim), TF.normalize(x, p, dim))
    close(EF.normalize(ember.zeros(2, 3)), TF.normalize(torch.zeros(2, 3)))
    out = ember.empty(2, 6, 3)
    assert EF.normalize(xe, out=out) is out
    a, b = torch.randn(4, 5), torch.randn(1, 5)
    close(EF.cosine_similarity(to_ember(a), to_ember(b)), TF.cosine_similarity(a, b))
    close(EF.cosine_similarity(to_ember(a), to_ember(b), dim=0), TF.cosine_similarity(a, b, dim=0))
    close(EF.cosine_similarity(ember.zeros(2, 3), ember.ones(2, 3)), TF.cosine_similarity(torch.zeros(2, 3),
                                                                                         torch.ones(2, 3)))
    for p in (1.0, 2.0, 3.0, float("inf")):
        for keepdim in (False, True):
            close(EF.pairwise_distance(to_ember(a), to_ember(b), p, keepdim=keepdim),
                  TF.pairwise_distance(a, b, p, keepdim=keepdim))
    v1, v2 = torch.randn(5), torch.randn(5)
    close(EF.pairwise_distance(to_ember(v1), to_ember(v2)), TF.pairwise_distance(v1, v2))


def test_one_hot():
    for t, n in [(torch.tensor([0, 2, 1]), -1), (torch.tensor([[1, 0], [3, 2]]), 5), (torch.tensor(2), 4),
                 (torch.tensor([], dtype=torch.long), 3)]:
        e = EF.one_hot(to_ember(t).long(), n)
        r = TF.one_hot(t, n)
        assert e.dtype == ember.int64 and tuple(e.shape) == tuple(r.shape) and e.tolist() == r.tolist()
    for t, n in [(torch.tensor([1, 2]).int(), -1), (torch.tensor([1, -2]), -1), (torch.tensor([1, 5]), 3),
                 (torch.tensor([], dtype=torch.long), -1)]:
        me, mt = same_errors(lambda: EF.one_hot(to_ember(t).to(getattr(ember, str(t.dtype)[6:])), n),
                             lambda: TF.one_hot(t, n))
        assert me == mt


def test_shuffles_match_torch():
    x = torch.randn(2, 8, 3, 4)
    xe = to_ember(x)
    close(EF.pixel_shuffle(xe, 2), TF.pixel_shuffle(x, 2))
    close(enn.PixelShuffle(2)(xe), tnn.PixelShuffle(2)(x))
    y = torch.randn(5, 2, 2, 6, 4)
    close(EF.pixel_unshuffle(to_ember(y), 2), TF.pixel_unshuffle(y, 2))
    close(enn.PixelUnshuffle(2)(to_ember(y)), tnn.PixelUnshuffle(2)(y))
    z = torch.randn(9, 2, 2)
    close(EF.pixel_shuffle(to_ember(z), 3), TF.pixel_shuffle(z, 3))
    close(EF.channel_shuffle(xe, 4), TF.channel_shuffle(x, 4))
    close(enn.ChannelShuffle(2)(xe), tnn.ChannelShuffle(2)(x))
    for m in ("PixelShuffle", "PixelUnshuffle", "ChannelShuffle"):
        assert repr(getattr(enn, m)(3)) == repr(getattr(tnn, m)(3))
    cases = [(lambda F: F.pixel_shuffle, (2, 3), 2), (lambda F: F.pixel_shuffle, (1, 3, 2, 2), 2),
             (lambda F: F.pixel_shuffle, (1, 4, 2, 2), 0), (lambda F: F.pixel_unshuffle, (1, 4, 3, 2), 2),
             (lambda F: F.pixel_unshuffle, (1, 4, 2, 3), 2), (lambda F: F.channel_shuffle, (1, 4, 2, 3), 3),
             (lambda F: F.channel_shuffle, (1, 4, 2, 3), 0), (lambda F: F.channel_shuffle, (4, 2), 2)]
    for get, shape, r in cases:
        me, mt = same_errors(lambda: get(EF)(ember.randn(*shape), r), lambda: get(TF)(torch.randn(*shape), r))
        assert me == mt


def test_distance_modules():
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    for args in [(), (0,), (1, 1e-3)]:
        em, tm = enn.CosineSimilarity(*args), tnn.CosineSimilarity(*args)
        assert repr(em) == repr(tm)
        close(em(to_ember(a), to_ember(b)), tm(a, b))
    for args in [(), (1.0,), (3.0, 1e-3, True)]:
        em, tm = enn.PairwiseDistance(*args), tnn.PairwiseDistance(*args)
        assert repr(em) == repr(tm)
        close(em(to_ember(a), to_ember(b)), tm(a, b))


def test_functional_errors_match_torch():
    cases = [
        (lambda F, lib: F.prelu(lib.randn(3), lib.randn(3))),
        (lambda F, lib: F.prelu(lib.randn(2, 3), lib.randn(4))),
        (lambda F, lib: F.prelu(lib.randn(2, 3), lib.randn(1, 3))),
        (lambda F, lib: F.glu(lib.randn(2, 3))),
        (lambda F, lib: F.glu(lib.randn(()))),
        (lambda F, lib: F.hardshrink(lib.arange(3), 1)),
        (lambda F, lib: F.cosine_similarity(lib.randn(2, 3), lib.randn(3, 3))),
    ]
    for case in cases:
        same_errors(lambda: case(EF, ember), lambda: case(TF, torch))
    same_errors(lambda: enn.Softmax2d()(ember.randn(2, 3)), lambda: tnn.Softmax2d()(torch.randn(2, 3)))
    same_errors(lambda: EF.softshrink(ember.randn(3), -1.0), lambda: TF.softshrink(torch.randn(3), -1.0))
    same_errors(lambda: EF.cosine_similarity(ember.ones(2, 3).long(), ember.ones(2, 3).long()),
                lambda: TF.cosine_similarity(torch.ones(2, 3).long(), torch.ones(2, 3).long()))


def test_prelu_module_default_init_and_dtype():
    m = enn.PReLU(4, init=0.1, dtype=ember.float64)
    assert m.weight.tolist() == [0.1] * 4 and m.weight.dtype == ember.float64
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in tnn.PReLU(4).named_parameters()]


def test_hardtanh_deprecated_names_and_check():
    with pytest.warns(FutureWarning):
        m = enn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0
    with pytest.raises(AssertionError):
        enn.Hardtanh(1.0, 0.0)


# ---- padding modules ----

PADS = [
    ("ZeroPad1d", (2,), (2, 3, 4)), ("ZeroPad2d", ((1, 2, 0, 1),), (1, 2, 3, 3)), ("ZeroPad3d", (1,), (1, 2, 2, 2, 2)),
    ("ConstantPad1d", ((1, 2), 3.5), (2, 4)), ("ConstantPad2d", (1, -1.0), (2, 3, 3)),
    ("ConstantPad3d", (1, 0.5), (1, 1, 2, 2, 2)), ("ReflectionPad1d", (2,), (2, 3, 4)),
    ("ReflectionPad2d", ((1, 0, 2, 1),), (1, 2, 3, 4)), ("ReflectionPad3d", (1,), (1, 1, 3, 3, 3)),
    ("ReplicationPad1d", ((3, 1),), (2, 3, 4)), ("ReplicationPad2d", (2,), (2, 3, 3)),
    ("ReplicationPad3d", (1,), (1, 2, 2, 2, 2)), ("CircularPad1d", (2,), (2, 3, 4)),
    ("CircularPad2d", ((1, 2, 1, 0),), (1, 2, 3, 3)), ("CircularPad3d", (1,), (1, 1, 2, 3, 3)),
    ("ZeroPad2d", ((-1, 1, 0, 2),), (1, 1, 3, 3)),
]


@pytest.mark.parametrize("name,args,shape", PADS, ids=[p[0] + str(p[1]) for p in PADS])
def test_pad_modules_match_torch(name, args, shape):
    em, tm = getattr(enn, name)(*args), getattr(tnn, name)(*args)
    assert repr(em) == repr(tm)
    assert em.padding == tm.padding
    x = torch.randn(*shape, requires_grad=True)
    xe = to_ember(x).requires_grad_()
    yt, ye = tm(x), em(xe)
    close(ye, yt)
    g = torch.randn(yt.shape)
    yt.backward(g)
    ye.backward(to_ember(g))
    close(xe.grad, x.grad)


def test_circular_pad_input_dims_error():
    same_errors(lambda: enn.CircularPad2d(1)(ember.randn(2, 3)), lambda: tnn.CircularPad2d(1)(torch.randn(2, 3)))


@pytest.mark.parametrize("pads", [(-1, 2), (2, -1), (-2, 1), (1, -2), (3, -2), (-2, 0), (-5, 0), (1, 1, -1, 2),
                                  (-1, 0, 2, -1), (4, -2), (6, -1)], ids=str)
def test_circular_pad_negative(pads):
    # torch crops the negative sides first, then wraps the positive ones around what is left
    x = torch.randn(2, 3, 5, requires_grad=True) if len(pads) == 2 else torch.randn(1, 2, 3, 5, requires_grad=True)
    xe = to_ember(x).requires_grad_()
    if pads in ((4, -2), (6, -1)):
        # a pad longer than the cropped dim wraps more than once: torch 2.13 raises for some inputs and
        # returns uninitialised memory for others ((4, -2) here); ember always raises
        with pytest.raises(RuntimeError, match="wrapping around more than once"):
            EF.pad(xe, pads, mode="circular")
        return
    yt = torch.nn.functional.pad(x, pads, mode="circular")
    ye = EF.pad(xe, pads, mode="circular")
    close(ye, yt)
    g = torch.randn(yt.shape)
    yt.backward(g)
    ye.backward(to_ember(g))
    close(xe.grad, x.grad)


# ---- nn.utils ----

def _grads_pair(seed=0):
    torch.manual_seed(seed)
    t = tnn.Sequential(tnn.Linear(4, 5), tnn.Linear(5, 3))
    e = enn.Sequential(enn.Linear(4, 5), enn.Linear(5, 3))
    for pt, pe in zip(t.parameters(), e.parameters()):
        pt.grad = torch.randn(pt.shape) * 3
        pe.grad = to_ember(pt.grad)
        with ember.no_grad():
            pe.copy_(to_ember(pt))
    return e, t


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf"), "inf", 0.5])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm_matches_torch(norm_type, foreach):
    e, t = _grads_pair()
    ne = enn.utils.clip_grad_norm_(e.parameters(), 0.7, norm_type, foreach=foreach)
    nt = tnn.utils.clip_grad_norm_(t.parameters(), 0.7, norm_type, foreach=foreach)
    close(ne, nt, 1e-5)
    for pe, pt in zip(e.parameters(), t.parameters()):
        close(pe.grad, pt.grad, 1e-5)
    # get_total_norm / clip_grads_with_norm_ are the two halves.
    e, t = _grads_pair(1)
    te_ = enn.utils.get_total_norm([p.grad for p in e.parameters()], norm_type)
    tt_ = tnn.utils.get_total_norm([p.grad for p in t.parameters()], norm_type)
    close(te_, tt_, 1e-5)
    enn.utils.clip_grads_with_norm_(e.parameters(), 0.5, te_)
    tnn.utils.clip_grads_with_norm_(t.parameters(), 0.5, tt_)
    for pe, pt in zip(e.parameters(), t.parameters()):
        close(pe.grad, pt.grad, 1e-5)


def test_clip_grad_norm_edge_cases():
    p = enn.Parameter(ember.ones(3))
    assert float(enn.utils.clip_grad_norm_(p, 1.0)) == float(tnn.utils.clip_grad_norm_(tnn.Parameter(torch.ones(3)),
                                                                                        1.0))
    p.grad = ember.ones(3)
    n = enn.utils.clip_grad_norm_(p, 10.0)
    assert abs(float(n) - math.sqrt(3)) < 1e-6 and p.grad.tolist() == [1.0] * 3  # below the limit: untouched
    p.grad = ember.tensor([float("inf"), 1.0, 1.0])
    pt = tnn.Parameter(torch.ones(3))
    pt.grad = torch.tensor([float("inf"), 1.0, 1.0])
    same_errors(lambda: enn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True),
                lambda: tnn.utils.clip_grad_norm_(pt, 1.0, error_if_nonfinite=True))
    ne, nt = enn.utils.clip_grad_norm_(p, 1.0), tnn.utils.clip_grad_norm_(pt, 1.0)
    assert math.isinf(float(ne)) and math.isinf(float(nt))
    with pytest.warns(FutureWarning):
        enn.utils.clip_grad_norm([enn.Parameter(ember.ones(1))], 1.0)


def test_clip_grad_value_matches_torch():
    e, t = _grads_pair(2)
    enn.utils.clip_grad_value_(e.parameters(), 1.5)
    tnn.utils.clip_grad_value_(t.parameters(), 1.5)
    for pe, pt in zip(e.parameters(), t.parameters()):
        close(pe.grad, pt.grad)


def test_parameters_vector_round_trip():
    e, t = _grads_pair(3)
    ve, vt = enn.utils.parameters_to_vector(e.parameters()), tnn.utils.parameters_to_vector(t.parameters())
    close(ve, vt)
    new = torch.arange(float(vt.numel()))
    enn.utils.vector_to_parameters(to_ember(new), e.parameters())
    tnn.utils.vector_to_parameters(new, t.parameters())
    for pe, pt in zip(e.parameters(), t.parameters()):
        close(pe, pt)
        assert isinstance(pe, enn.Parameter)
    same_errors(lambda: enn.utils.vector_to_parameters([1.0], e.parameters()),
                lambda: tnn.utils.vector_to_parameters([1.0], t.parameters()))


def test_functional_call_matches_torch():
    e, t = _grads_pair(4)
    x = torch.randn(2, 4)
    new_t = {"0.weight": torch.ones(5, 4), "1.bias": torch.zeros(3)}
    new_e = {k: to_ember(v) for k, v in new_t.items()}
    ye = enn.utils.stateless.functional_call(e, new_e, (to_ember(x),))
    yt = torch.func.functional_call(t, new_t, (x,))
    close(ye, yt)
    close(e(to_ember(x)), t(x))  # restored afterwards
    # Gradients flow to the supplied tensors.
    w = ember.ones(5, 4).requires_grad_()
    enn.utils.stateless.functional_call(e, {"0.weight": w}, to_ember(x)).sum().backward()
    wt = torch.ones(5, 4).requires_grad_()
    torch.func.functional_call(t, {"0.weight": wt}, x).sum().backward()
    close(w.grad, wt.grad, 1e-5)
    # Buffers, kwargs, several dicts, strict and tied weights.
    m = enn.Module()
    m.register_buffer("b", ember.zeros(2))
    m.forward = lambda x, scale=1: (x + m.b) * scale
    assert enn.utils.stateless.functional_call(m, ({"b": ember.ones(2)},), (ember.ones(2),), {"scale": 3}).tolist() \
        == [6.0, 6.0]
    assert m.b.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError):
        enn.utils.stateless.functional_call(m, ({"b": ember.ones(2)}, {"b": ember.ones(2)}), (ember.ones(2),))
    with pytest.raises(RuntimeError, match="Missing key"):
        enn.utils.stateless.functional_call(e, {"0.weight": ember.ones(5, 4)}, (to_ember(x),), strict=True)
    tied = enn.Sequential(enn.Linear(2, 2, bias=False), enn.Linear(2, 2, bias=False))
    tied[1].weight = tied[0].weight
    out = enn.utils.stateless.functional_call(tied, {"0.weight": ember.eye(2) * 2}, (ember.ones(1, 2),))
    assert out.tolist() == [[4.0, 4.0]]
    out = enn.utils.stateless.functional_call(tied, {"0.weight": ember.eye(2) * 2}, (ember.ones(1, 2),),
                                              tie_weights=False)
    assert out.tolist() != [[4.0, 4.0]]


def test_gumbel_softmax_inplace_variants_pdist_skip_init():
    logits = ember.randn(500, 4)
    y = EF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(to_np(y.sum(-1)), np.ones(500), rtol=1e-5)
    lg = ember.tensor([[2.0, 0.0, -1.0, 0.5]]).requires_grad_()
    h = EF.gumbel_softmax(lg.expand(2000, 4), hard=True)
    assert set(to_np(h).ravel().tolist()) <= {0.0, 1.0} and (to_np(h).sum(-1) == 1).all()
    freq = to_np(h).mean(0)  # sampling probabilities are softmax(logits)
    np.testing.assert_allclose(freq, TF.softmax(torch.tensor([2.0, 0.0, -1.0, 0.5]), 0).numpy(), atol=0.05)
    h.sum().backward()
    assert lg.grad is not None
    for name in ("celu_", "selu_"):
        x = torch.randn(6)
        xe = to_ember(x)
        assert getattr(EF, name)(xe) is xe
        getattr(TF, name)(x)
        close(xe, x)
    a = torch.randn(5, 3)
    for p in (1.0, 2.0):
        close(EF.pdist(to_ember(a), p), TF.pdist(a, p))
    m = enn.utils.skip_init(enn.Linear, 4, 3)
    assert tuple(m.weight.shape) == (3, 4) and isinstance(m.weight, enn.Parameter)
    with pytest.raises(RuntimeError):
        enn.utils.skip_init(enn.Flatten)
    with pytest.warns(FutureWarning):
        enn.init.eye(ember.empty(2, 2))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("log", [False, True])
def test_half_precision_softmax_backward_is_computed_in_float(dtype, log):
    # The fused backward row (float accumulation, one rounding at the end) for 16-bit floats, as
    # torch's CPU kernel: checked against float64 on the same rounded inputs.
    import numpy as np
    rng = np.random.default_rng(1)
    dt = getattr(ember, dtype)
    x = ember.from_numpy(rng.standard_normal((6, 5, 77)).astype(np.float32)).to(dt).requires_grad_()
    g = ember.from_numpy(rng.standard_normal((6, 5, 77)).astype(np.float32)).to(dt)
    y = (ember.log_softmax if log else ember.softmax)(x, -1)
    (gx,) = ember.autograd.grad(y, x, g)
    assert gx.dtype == dt
    gd, yd = g.double().numpy(), y.detach().double().numpy()  # yd: the saved output the kernel reads
    if log:
        want = gd - np.exp(yd) * gd.sum(-1, keepdims=True)
    else:
        want = yd * (gd - (gd * yd).sum(-1, keepdims=True))
    half_ulp = 2.0 ** -8 if dtype == "bfloat16" else 2.0 ** -11  # relative, of the one final rounding
    err = np.abs(gx.double().numpy() - want)
    assert (err <= half_ulp * np.abs(want) + 1e-5).all(), err.max()


def test_log1p_expm1_based_activations_float32_accuracy():
    """softplus, logsigmoid, elu, selu and celu on float32 run vectorizable log1p/expm1
    (cpu/unary_math.h): within 2 ulp of the float64 formula over the whole range, -0 kept."""
    import numpy as np
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(200_000).astype(np.float32) * s for s in (1e-6, 1e-2, 0.5, 2, 8, 40)] +
                       [np.array([0.0, -0.0, 1e-38, -1e-38, 1e-45, -1e-45, 88, -88, -104, 1e30, -1e30, -1, 1,
                                  0.999, -0.999], np.float32)])
    xd = x.astype(np.float64)
    e = ember.from_numpy(x)
    F = ember.nn.functional
    with np.errstate(over="ignore"):
        refs = {
            "softplus": (F.softplus(e), np.where(xd > 20, xd, np.log1p(np.exp(np.minimum(xd, 20))))),
            "logsigmoid": (F.logsigmoid(e), np.minimum(xd, 0) - np.log1p(np.exp(-np.abs(xd)))),
            "elu": (F.elu(e), np.where(xd > 0, xd, np.expm1(np.minimum(xd, 0)))),
            "celu": (F.celu(e, 2.0), np.where(xd > 0, xd, 2.0 * np.expm1(np.minimum(xd, 0) / 2.0))),
        }
    for name, (got, ref) in refs.items():
        got = got.numpy().astype(np.float64)
        ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
        err = np.abs(got - ref) / np.maximum(ulp, 1e-45)
        assert err.max() <= 2.5, (name, err.max(), x[err.argmax()])
    assert np.signbit(F.elu(ember.tensor([-0.0])).numpy()[0])


PAD_GATHER = [((2, 3, 7), (2, 3)), ((2, 3, 7), (0, 0)), ((3, 7), (1, 2)), ((2, 3, 5, 6), (1, 2, 3, 0)),
              ((3, 5, 6), (2, 2, 1, 1)), ((1, 2, 4, 5, 6), (1, 1, 2, 0, 3, 2)), ((2, 2, 4, 5, 6), (1, 0, 0, 2, 1, 1)),
              ((2, 3, 5, 6), (-1, 2, 1, -2)), ((0, 3, 5, 6), (1, 1, 1, 1)), ((2, 3, 5, 1), (0, 0, 2, 1)),
              # rows split among threads mid-plane (the row loop steps plane and row without division)
              ((3, 4, 40, 300), (2, 3, 1, 2)), ((2, 3, 9, 10, 200), (1, 1, 2, 1, 1, 2))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pads", PAD_GATHER, ids=[f"{s}-{p}" for s, p in PAD_GATHER])
def test_pad_gather_matches_torch(mode, shape, pads):
    # reflect/replicate/circular run as one gather through per-dim source maps (ops/nn_pad.cpp)
    npairs = len(pads) // 2
    rng = np.random.default_rng(len(shape) * 10 + npairs)
    a = rng.standard_normal(shape)
    xt = torch.tensor(a, requires_grad=True)
    try:
        yt = torch.nn.functional.pad(xt, pads, mode=mode)
    except (RuntimeError, NotImplementedError) as err:
        with pytest.raises(type(err)):
            EF.pad(ember.tensor(a), pads, mode=mode)
        return
    if shape[0] == 0 and mode == "circular":
        return  # torch's circular pad of an empty batch: nothing to compare
    xe = ember.tensor(a).requires_grad_()
    ye = EF.pad(xe, pads, mode=mode)
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    if mode != "circular":
        assert ye.grad_fn.name() == yt.grad_fn.name()
    g = rng.standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(g))
    ye.backward(ember.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    # other dtypes: the same copies (element sizes 1, 2, 4, 8, 16), and non-contiguous input
    for dt in ("float32", "bfloat16", "float16", "int64", "int8", "bool", "complex64"):
        t = torch.tensor(a * 10).to(getattr(torch, dt)) if dt != "complex64" else torch.tensor(a + 1j * a[::-1].copy())
        if dt == "complex64":
            t = t.to(torch.complex64)
        e = ember.from_numpy(t.numpy()) if dt not in ("bfloat16",) else ember.tensor(a * 10).to(ember.bfloat16)
        if mode == "reflect" and dt in ("bool",):
            continue  # torch: reflection_pad not implemented for Bool
        try:
            want = torch.nn.functional.pad(t, pads, mode=mode)
        except (RuntimeError, NotImplementedError):
            continue
        got = EF.pad(e, pads, mode=mode)
        assert np.array_equal(got.float().numpy() if dt == "bfloat16" else got.numpy(),
                              want.float().numpy() if dt == "bfloat16" else want.numpy()), dt
    if len(shape) >= 3 and shape[-1] > 1 and shape[-2] > 1:  # the same values through a transposed view
        a2 = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        np.testing.assert_array_equal(EF.pad(ember.tensor(a2).transpose(-1, -2), pads, mode=mode).numpy(),
                                      yt.detach().numpy())


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_gather_gradgradcheck(mode):
    x = ember.randn(1, 2, 4, 5, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: EF.pad(t, (2, 1, 1, 3), mode=mode), (x,))
    assert gradgradcheck(lambda t: EF.pad(t, (2, 1, 1, 3), mode=mode), (x,))


def test_pad_gather_bad_maps_raise():
    # the C++ gather behind F.pad checks its maps: a clear RuntimeError, never a read out of bounds
    x = ember.randn(2, 3, 4)
    for maps in ([], [[0]] * 4, [[0, 4]], [[-1, 0]], [[0, 1], [2**40]]):
        with pytest.raises(RuntimeError):
            ember._C._pad_gather(x, maps, "ReflectionPad1DBackward0")
    with pytest.raises(TypeError):
        ember._C._pad_gather(x, "not maps", "ReflectionPad1DBackward0")


CONSTANT_PAD = PAD_GATHER + [((), ()), ((5,), ()), ((4,), (-2, -2)), ((4,), (-3, -3)), ((2, 3), (-1, 4, -3, 1)),
                             ((2, 0, 4), (1, 1)), ((2, 0, 4), (1, 1, 2, 0)), ((3, 0), (2, 1)), ((2, 3), (1, 1, 1, 1)),
                             ((2, 3, 4), (-5, 2)), ((2, 3, 4), (0, 0, 0, 0, 1, 1)), ((6, 40, 1000), (3, 0, 0, 2))]


@pytest.mark.parametrize("shape,pads", CONSTANT_PAD, ids=[f"{s}-{p}" for s, p in CONSTANT_PAD])
def test_constant_pad_matches_torch(shape, pads):
    # Note [Constant pad]: one pass (fill, overlap, fill per row); negative pads crop
    rng = np.random.default_rng(len(shape) * 10 + len(pads))
    a = rng.standard_normal(shape)
    xt = torch.tensor(a, requires_grad=True)
    try:
        yt = torch.nn.functional.pad(xt, pads, value=2.5)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            EF.pad(ember.tensor(a), pads, value=2.5)
        return
    xe = ember.tensor(a).requires_grad_()
    ye = EF.pad(xe, pads, value=2.5)
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    assert ye.grad_fn.name() == yt.grad_fn.name()
    g = rng.standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(g))
    ye.backward(ember.tensor(g))
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())
    np.testing.assert_array_equal(ember.constant_pad_nd(ember.tensor(a), pads, -1).numpy(),
                                  torch.constant_pad_nd(torch.tensor(a), pads, -1).numpy())
    # every element size, the value cast to the dtype, and non-contiguous input
    for dt, value in (("float32", -1.5), ("bfloat16", 3), ("float16", 0.1), ("int64", 7), ("int8", -3),
                      ("uint8", 200), ("bool", True), ("complex64", 2.0), ("complex128", -1), ("int32", 0)):
        t = torch.tensor(a * 10).to(getattr(torch, dt)) if not dt.startswith("complex") else \
            torch.tensor(a + 1j * np.flip(a).copy()).to(getattr(torch, dt))
        e = ember.from_numpy(t.numpy()) if dt != "bfloat16" else ember.tensor(a * 10).to(ember.bfloat16)
        want = torch.nn.functional.pad(t, pads, value=value)
        got = EF.pad(e, pads, value=value)
        assert got.dtype == getattr(ember, dt) and tuple(got.shape) == tuple(want.shape)
        assert np.array_equal(got.float().numpy() if dt == "bfloat16" else got.numpy(),
                              want.float().numpy() if dt == "bfloat16" else want.numpy()), dt
    if len(shape) >= 2 and shape[-1] > 1 and shape[-2] > 1:  # the same values through a transposed view
        a2 = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        np.testing.assert_array_equal(EF.pad(ember.tensor(a2).transpose(-1, -2), pads, value=2.5).numpy(),
                                      yt.detach().numpy())


@pytest.mark.parametrize("pads", [(1, 1, 1, 1), (-1, -1, -1, -1), (2, -1, -1, 3), (0, 0, 1, 0, -1, 2), (-2, 1)])
def test_constant_pad_reads_views_in_place(pads):
    # read through the input's strides: expanded (a sum's gradient), sliced, permuted, stepped;
    # negative pads crop first (a crop alone is a copy)
    a = np.random.default_rng(3).standard_normal((3, 5, 6, 7)).astype(np.float32)
    views = [lambda L, t: L.ones(()).expand(3, 5, 6, 7) * 1, lambda L, t: t.expand(2, 3, 5, 6, 7)[1],
             lambda L, t: t[:, 1:4, ::2, 1:], lambda L, t: t.permute(0, 2, 3, 1), lambda L, t: t[..., ::3],
             lambda L, t: t.unsqueeze(-1).expand(3, 5, 6, 7, 4)[..., 2], lambda L, t: t.new_ones(()).expand(3, 5, 6, 7)]
    for view in views:
        want = torch.nn.functional.pad(view(torch, torch.from_numpy(a)), pads, value=-2.0)
        got = EF.pad(view(ember, ember.from_numpy(a)), pads, value=-2.0)
        assert got.is_contiguous()
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    xe = ember.from_numpy(a).requires_grad_()
    EF.pad(xe, pads).sum().backward()  # the gradient: a crop (or pad) of an expanded tensor
    xt = torch.from_numpy(a).requires_grad_()
    torch.nn.functional.pad(xt, pads).sum().backward()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


def test_constant_pad_threads_and_double_backward():
    x = ember.randn(4, 8, 60, 70)
    prev = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = EF.pad(x, (3, -2, 1, 5, 0, 1))
        ember.set_num_threads(2)
        assert ember.equal(EF.pad(x, (3, -2, 1, 5, 0, 1)), one)
    finally:
        ember.set_num_threads(prev)
    xd = ember.randn(2, 3, 4, 5, dtype=ember.float64, requires_grad=True)
    for pads in ((2, 1, 1, 3), (-1, 2, 0, -2), (1, 1, 1, 1, 1, 1, 1, 1)):
        assert gradcheck(lambda t: EF.pad(t, pads, value=1.5), (xd,))
        assert gradgradcheck(lambda t: EF.pad(t, pads, value=1.5), (xd,))
        assert gradgradcheck(lambda t: ember.constant_pad_nd(t, pads, -2.0), (xd,))


def test_constant_pad_errors_match_torch():
    for pads in ((1,), (1, 1, 1, 1, 1, 1, 1), (-4, 0), (0, 0, -3, 1), (1, 1) * 4):
        with pytest.raises(RuntimeError) as want:
            torch.nn.functional.pad(torch.zeros(3, 2, 3), pads)
        with pytest.raises(RuntimeError) as got:
            EF.pad(ember.zeros(3, 2, 3), pads)
        assert str(got.value) == str(want.value)
        with pytest.raises(RuntimeError):
            torch.constant_pad_nd(torch.zeros(3, 2, 3), pads)
        with pytest.raises(RuntimeError):  # torch's message for too many pads lacks two spaces
            ember.constant_pad_nd(ember.zeros(3, 2, 3), pads)
    for bad in ("ab", [1.5, 2], None):
        with pytest.raises(TypeError):
            ember.constant_pad_nd(ember.zeros(3), bad)
    with pytest.raises(TypeError):
        ember.constant_pad_nd(ember.zeros(3), [1, 1], "x")
    with pytest.raises(RuntimeError):
        ember.constant_pad_nd(ember.zeros(3), [2**62, 2**62])


PAD_ERRORS = [((2, 3, 4), (1,), "reflect", None), ((2, 3), (1,) * 6, "reflect", None),
              ((2, 3, 4), (1, 1), "wrap", None), ((2, 3, 4), (1, 1), "reflect", 2.0),
              ((1, 2, 3, 4, 5), (1,) * 8, "reflect", None), ((2, 3, 4), (), "reflect", None),
              ((4,), (1, 1), "replicate", None), ((2, 3, 4), (4, 0), "reflect", None),
              ((2, 3, 4), (5, 0), "circular", None), ((2, 3, 0), (1, 1), "replicate", None),
              ((2, 3, 4), (-3, -2), "replicate", None), ((2, 3, 4), (2**62, 2**62), "replicate", None),
              ((2, 3, 4), (1, 1), "replicate", 1j), ((2, 3, 4), (1, 1), "constant", 1j),
              ((2, 3, 4), (1, 1), "circular", "x"), ((2, 3, 4), (-5, 1), "replicate", None),
              ((2, 3, 4), (1, -5), "reflect", None), ((2, 3, 4), (-2**63, 2**63 - 1), "replicate", None),
              ((2, 3, 4), (-2**63, -2**63), "constant", None), ((2, 3, 4), (2**63 - 1, 2**63 - 1), "constant", None)]


@pytest.mark.parametrize("shape,pads,mode,value", PAD_ERRORS)
def test_pad_errors_match_torch(shape, pads, mode, value):
    # ember::pad (ops/nn_pad.cpp) checks as torch's F.pad: the same exception type, nothing allocated
    with pytest.raises(Exception) as want:
        torch.nn.functional.pad(torch.zeros(shape), pads, mode=mode, value=value)
    with pytest.raises(want.type):
        EF.pad(ember.zeros(shape), pads, mode=mode, value=value)


def test_pad_crop_past_the_dim_raises():
    # torch returns uninitialized values when a circular pad crops more than the dim holds
    with pytest.raises(RuntimeError, match="narrow"):
        EF.pad(ember.zeros(2, 3, 4), (-5, 1), mode="circular")
    assert EF.pad(ember.zeros(2, 3, 4), (1, 1), mode="reflect", value=0.0).shape == (2, 3, 6)


# ---- Note [Fused activation backward]: one-pass gradients outside create_graph ----

FUSED_BACKWARD = {
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.01),
    "leaky_relu_steep": lambda F, x: F.leaky_relu(x, 1.7),
    "leaky_relu_negative": lambda F, x: F.leaky_relu(x, -0.3),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_range": lambda F, x: F.hardtanh(x, -0.5, 2.0),
    "relu6": lambda F, x: F.relu6(x),
    "silu": lambda F, x: F.silu(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, beta=2.5, threshold=4.0),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "elu": lambda F, x: F.elu(x),
    "elu_alpha": lambda F, x: F.elu(x, alpha=0.3),
    "celu": lambda F, x: F.celu(x, alpha=2.5),
    "selu": lambda F, x: F.selu(x),
    # from the saved result (sigmoid_backward, tanh_backward)
    "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "tensor_sigmoid": lambda F, x: x.sigmoid(),
    "tensor_tanh_then_scale": lambda F, x: x.tanh() * 3,
}
# the branch points of each formula, infinities, a NaN, and signed zeros
_SPECIAL = [0.0, -0.0, -3.0, 3.0, 6.0, -1.0, 1.0, -0.5, 2.0, 1e-30, -90.0, 90.0, float("inf"), float("-inf"),
            float("nan")]


@pytest.mark.parametrize("name", sorted(FUSED_BACKWARD))
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_fused_activation_backward_matches_torch(name, dtype):
    f = FUSED_BACKWARD[name]
    g0 = torch.Generator().manual_seed(0)
    x = torch.cat([torch.tensor(_SPECIAL, dtype=torch.float64), torch.randn(3000, generator=g0, dtype=torch.float64) * 4])
    gy = torch.randn(x.shape, generator=g0, dtype=torch.float64)
    gy[-1] = float("nan")  # a NaN incoming gradient
    td = getattr(torch, dtype)
    xt = x.to(td, copy=True).requires_grad_()
    f(TF, xt).backward(gy.to(td))
    xe = ember.tensor(x.numpy()).to(getattr(ember, dtype)).requires_grad_()
    f(EF, xe).backward(ember.tensor(gy.numpy()).to(getattr(ember, dtype)))
    tol = {"float64": 1e-12, "float32": 2e-6, "bfloat16": 1e-2, "float16": 1e-3}[dtype]
    np.testing.assert_allclose(xe.grad.double().numpy(), xt.grad.double().numpy(), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(FUSED_BACKWARD))
def test_fused_activation_backward_strided_and_create_graph(name):
    f = FUSED_BACKWARD[name]
    x = torch.randn(40, 30, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * 4
    gy = torch.randn(30, 40, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    # transposed input and a transposed incoming gradient
    xt = x.clone().requires_grad_()
    f(TF, xt.t()).backward(gy)
    xe = ember.tensor(x.numpy()).requires_grad_()
    f(EF, xe.t()).backward(ember.tensor(gy.numpy()))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    # create_graph keeps the composed, differentiable formula: second derivatives as torch's
    xt = x[:4, :5].clone().requires_grad_()
    (gt,) = torch.autograd.grad(f(TF, xt).sum(), xt, create_graph=True)
    # d/dx (f'(x) x): f'' x + f' (piecewise-linear activations: f' alone)
    (ht,) = torch.autograd.grad((gt * xt).sum(), xt)
    xe = ember.tensor(x[:4, :5].numpy()).requires_grad_()
    (ge,) = ember.autograd.grad(f(EF, xe).sum(), xe, create_graph=True)
    (he,) = ember.autograd.grad((ge * xe).sum(), xe)
    np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(he.numpy(), ht.numpy(), rtol=1e-10, atol=1e-12)
    assert gradgradcheck(lambda t: f(EF, t), (ember.tensor(x[:3, :3].numpy() + 0.01).requires_grad_(),))
