"""Convolution ops (ember.nn.functional.conv*, conv_transpose*) against torch 2.13: values,
gradients, double backward, non-contiguous and unbatched inputs, errors by exception class."""
import numpy as np
import pytest

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {"float32": 2e-4, "float64": 1e-10}


def pair(shape, dtype, rng, noncontig=False):
    a = rng.standard_normal(shape).astype(dtype)
    if noncontig:  # same values through a transposed (non-contiguous) view
        a2 = np.ascontiguousarray(np.swapaxes(a, 0, -1))
        e = ember.tensor(a2).transpose(0, -1)
        t = torch.tensor(a2).transpose(0, -1)
        assert not e.is_contiguous()
        return e, t
    return ember.tensor(a), torch.tensor(a)


def run_both(name, shapes, dtype, kwargs, noncontig=False, seed=0):
    """Runs F.<name> on the same inputs in both libraries; compares output and all gradients."""
    rng = np.random.default_rng(seed)
    es, ts = [], []
    for i, s in enumerate(shapes):
        if s is None:
            es.append(None)
            ts.append(None)
            continue
        e, t = pair(s, dtype, rng, noncontig and i == 0)
        es.append(e.requires_grad_(True) if e.is_leaf else e)
        ts.append(t.requires_grad_(True) if t.is_leaf else t)
    ye = getattr(EF, name)(*es, **kwargs)
    yt = getattr(TF, name)(*ts, **kwargs)
    assert tuple(ye.shape) == tuple(yt.shape)
    tol = TOL[dtype]
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    for e, t in zip(es, ts):
        if e is None:
            continue
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol * 10)


CONV_CASES = [
    # (ndim, input shape, weight shape, bias, kwargs)
    (1, (2, 3, 11), (4, 3, 3), True, {}),
    (1, (2, 4, 12), (6, 2, 4), True, dict(stride=2, padding=3, dilation=2, groups=2)),
    (1, (2, 3, 10), (5, 3, 4), False, dict(padding="same", dilation=3)),
    (1, (2, 3, 10), (5, 3, 4), True, dict(padding="valid")),
    (1, (3, 10), (5, 3, 3), True, dict(padding=1)),  # unbatched
    (2, (2, 3, 9, 8), (4, 3, 3, 3), True, {}),
    (2, (2, 3, 9, 8), (4, 3, 3, 2), True, dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    (2, (2, 6, 7, 7), (6, 1, 3, 3), True, dict(padding=1, groups=6)),  # depthwise
    (2, (2, 4, 7, 6), (6, 2, 1, 1), False, dict(groups=2)),  # 1x1 grouped
    (2, (1, 8, 5, 5), (4, 8, 1, 1), True, {}),  # 1x1, batch 1
    (2, (2, 3, 6, 7), (4, 3, 1, 1), True, dict(stride=2)),  # strided 1x1
    (2, (2, 3, 8, 8), (4, 3, 4, 3), True, dict(padding="same", dilation=(1, 2))),
    (2, (3, 8, 8), (4, 3, 3, 3), True, dict(stride=2, padding=1)),  # unbatched
    (2, (4, 3, 10, 10), (2, 3, 5, 5), True, dict(stride=3, padding=2, dilation=1)),
    (3, (2, 2, 5, 6, 4), (3, 2, 2, 3, 2), True, dict(stride=2, padding=1)),
    (3, (1, 4, 4, 5, 6), (4, 2, 3, 3, 3), False, dict(padding=(1, 0, 2), dilation=(1, 2, 1), groups=2)),
    (3, (2, 2, 4, 4, 4), (3, 2, 3, 3, 3), True, dict(padding="same")),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"conv{c[0]}d-{c[1]}-{c[4]}")
def test_conv_values_and_grads(case, dtype):
    nd, xs, ws, bias, kw = case
    run_both(f"conv{nd}d", [xs, ws, (ws[0],) if bias else None], dtype, kw)


TRANSPOSE_CASES = [
    (1, (2, 4, 5), (4, 3, 3), True, dict(stride=3)),
    (1, (2, 4, 6), (4, 2, 4), True, dict(stride=2, padding=1, output_padding=1, groups=2, dilation=2)),
    (1, (4, 6), (4, 2, 3), False, {}),  # unbatched
    (2, (2, 4, 5, 6), (4, 3, 3, 2), True, dict(stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))),
    (2, (2, 3, 4, 4), (3, 5, 1, 1), True, {}),
    (2, (2, 3, 4, 4), (3, 5, 1, 1), False, dict(stride=2, output_padding=1)),
    (2, (1, 6, 3, 3), (6, 1, 3, 3), True, dict(groups=6, stride=2)),
    (2, (3, 4, 4), (3, 2, 3, 3), True, dict(padding=1)),  # unbatched
    (3, (2, 4, 3, 3, 2), (4, 2, 2, 2, 2), True, dict(stride=2)),
    (3, (1, 2, 3, 2, 3), (2, 3, 3, 2, 2), False, dict(stride=(1, 2, 2), padding=(1, 0, 1), output_padding=(0, 1, 1))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=lambda c: f"convT{c[0]}d-{c[1]}-{c[4]}")
def test_conv_transpose_values_and_grads(case, dtype):
    nd, xs, ws, bias, kw = case
    run_both(f"conv_transpose{nd}d", [xs, ws, (ws[1] * kw.get("groups", 1),) if bias else None], dtype, kw)


@pytest.mark.parametrize("name,xs,ws,kw", [
    ("conv2d", (2, 3, 7, 6), (4, 3, 3, 2), dict(stride=2, padding=1)),
    ("conv1d", (3, 4, 9), (2, 4, 3), dict(dilation=2)),
    ("conv_transpose2d", (2, 3, 4, 5), (3, 2, 3, 3), dict(stride=2)),
])
def test_non_contiguous_input(name, xs, ws, kw):
    run_both(name, [xs, ws, None], "float64", kw, noncontig=True)


def test_non_contiguous_weight():
    a = np.random.default_rng(1).standard_normal((3, 4, 3, 3))
    we = ember.tensor(a).transpose(2, 3)
    wt = torch.tensor(a).transpose(2, 3)
    x = np.random.default_rng(2).standard_normal((2, 4, 6, 6))
    np.testing.assert_allclose(EF.conv2d(ember.tensor(x), we).numpy(), TF.conv2d(torch.tensor(x), wt).numpy(),
                               rtol=1e-10, atol=1e-10)


GRADCHECK_CASES = [
    ("conv1d", (2, 4, 7), (4, 2, 3), (4,), dict(stride=2, padding=1, dilation=2, groups=2)),
    ("conv2d", (2, 2, 5, 4), (3, 2, 3, 2), (3,), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    ("conv2d", (1, 3, 4, 4), (2, 3, 2, 2), None, dict(padding="same")),
    ("conv3d", (1, 2, 3, 4, 3), (2, 1, 2, 2, 2), (2,), dict(padding=1, groups=2)),
    ("conv_transpose1d", (2, 2, 4), (2, 3, 3), (3,), dict(stride=2, output_padding=1)),
    ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 2, 3), (2,), dict(stride=2, padding=1, groups=2, dilation=(2, 1))),
    ("conv_transpose3d", (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), None, dict(stride=(1, 2, 1))),
]


@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=lambda c: c[0] + str(c[4]))
def test_gradcheck_gradgradcheck(case):
    name, xs, ws, bs, kw = case
    ember.manual_seed(0)
    args = [ember.randn(*s, dtype=ember.float64, requires_grad=True) for s in (xs, ws) + ((bs,) if bs else ())]
    f = lambda *a: getattr(EF, name)(*a, **kw)  # noqa: E731
    assert gradcheck(f, tuple(args))
    assert gradgradcheck(f, tuple(args))


def test_double_backward_matches_torch():
    rng = np.random.default_rng(3)
    xa, wa = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        x = lib.tensor(xa, requires_grad=True)
        w = lib.tensor(wa, requires_grad=True)
        y = F.conv2d(x, w, stride=2, padding=1)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        gg = lib.autograd.grad((gx * gx).sum() + (gw ** 3).sum(), (x, w))
        res.append([t.detach().numpy() for t in (gx, gw) + tuple(gg)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_top_level_and_grad_fn():
    x = ember.randn(1, 2, 5, 5, requires_grad=True)
    w = ember.randn(3, 2, 3, 3)
    y = ember.conv2d(x, w)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    y2 = ember.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    np.testing.assert_allclose(y.detach().numpy(), y2.detach().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes(dtype):
    rng = np.random.default_rng(4)
    xa, wa = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    ye = EF.conv2d(ember.tensor(xa, dtype=getattr(ember, dtype)), ember.tensor(wa, dtype=getattr(ember, dtype)))
    yt = TF.conv2d(torch.tensor(xa, dtype=getattr(torch, dtype)), torch.tensor(wa, dtype=getattr(torch, dtype)))
    assert str(ye.dtype) == "ember." + dtype
    np.testing.assert_allclose(ye.float().numpy(), yt.float().numpy(), rtol=5e-2, atol=1e-1)


def test_empty_batch():
    for lib, F in ((ember, EF), (torch, TF)):
        assert tuple(F.conv2d(lib.zeros(0, 3, 8, 8), lib.zeros(4, 3, 3, 3)).shape) == (0, 4, 6, 6)
        assert tuple(F.conv_transpose2d(lib.zeros(0, 3, 8, 8), lib.zeros(3, 4, 3, 3)).shape) == (0, 4, 10, 10)


ERROR_CASES = [
    ("conv2d", (2, 3), (4, 3, 3, 3), None, {}),  # input dims
    ("conv2d", (2, 3, 8, 8, 1), (4, 3, 3, 3), None, {}),
    ("conv2d", (2, 5, 8, 8), (4, 3, 3, 3), None, {}),  # channels
    ("conv2d", (2, 3, 2, 2), (4, 3, 3, 3), None, {}),  # kernel too big
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(groups=0)),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(groups=2)),
    ("conv2d", (2, 6, 8, 8), (3, 3, 3, 3), None, dict(groups=2)),  # weight not divisible
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(stride=0)),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(padding=-1)),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(dilation=0)),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(stride=(1, 1, 1))),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), (5,), {}),  # bias size
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(stride=2, padding="same")),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(padding="foo")),
    ("conv2d", (2, 3, 8, 8), (4, 3, 3), None, {}),  # weight dims
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(padding=1.5)),  # TypeError
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), None, dict(stride=None)),  # TypeError
    ("conv_transpose2d", (2, 3, 8, 8), (4, 4, 3, 3), None, {}),
    ("conv_transpose2d", (2, 3, 8, 8), (3, 4, 3, 3), None, dict(stride=2, output_padding=2)),
    ("conv_transpose2d", (2, 3, 8, 8), (3, 4, 3, 3), None, dict(groups=2)),
    ("conv_transpose2d", (2, 3, 8, 8), (3, 4, 3, 3), (3,), {}),
    ("conv_transpose2d", (2, 3, 8), (3, 4, 3, 3), None, {}),
    ("conv_transpose2d", (2, 3, 8, 8), (3, 4, 3, 3), None, dict(padding="same")),  # TypeError
    ("conv_transpose2d", (2, 3, 2, 2), (3, 4, 3, 3), None, dict(padding=4)),  # output too small
]


def _err(f):
    try:
        f()
    except Exception as ex:  # noqa: BLE001
        return type(ex)
    return None


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[4]}")
def test_errors_match_torch(case):
    name, xs, ws, bs, kw = case
    e_args = [ember.zeros(*xs), ember.zeros(*ws), ember.zeros(*bs) if bs else None]
    t_args = [torch.zeros(*xs), torch.zeros(*ws), torch.zeros(*bs) if bs else None]
    et = _err(lambda: getattr(EF, name)(*e_args, **kw))
    tt = _err(lambda: getattr(TF, name)(*t_args, **kw))
    assert tt is not None
    assert et is tt, (et, tt)


def test_dtype_mismatch_errors():
    x, w = ember.zeros(2, 3, 8, 8), ember.zeros(4, 3, 3, 3)
    with pytest.raises(RuntimeError):
        EF.conv2d(x.double(), w)
    with pytest.raises(RuntimeError):
        EF.conv2d(x, w.double())
    with pytest.raises(RuntimeError, match="bias type"):
        EF.conv2d(x, w, ember.zeros(4, dtype=ember.float64))
    with pytest.raises(NotImplementedError):  # integer convolution is not implemented
        EF.conv2d(x.long(), w.long())


def test_channel_error_message():
    with pytest.raises(RuntimeError, match=r"expected input\[2, 5, 8, 8\] to have 3 channels, but got 5 channels"):
        EF.conv2d(ember.zeros(2, 5, 8, 8), ember.zeros(4, 3, 3, 3))


def test_thread_count_determinism():
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((16, 8, 12, 12)).astype("float32"), requires_grad=True)
    w = ember.tensor(rng.standard_normal((8, 8, 3, 3)).astype("float32"), requires_grad=True)
    n = ember.get_num_threads()
    grads = []
    for t in (1, 2):
        ember.set_num_threads(t)
        x.grad = w.grad = None
        EF.conv2d(x, w, padding=1).sum().backward()
        grads.append((x.grad.numpy().copy(), w.grad.numpy().copy()))
    ember.set_num_threads(n)
    assert (grads[0][1] == grads[1][1]).all()
    assert (grads[0][0] == grads[1][0]).all()


# ---- modules ----

CONV_MODULES = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, groups=2), (2, 4, 11)),
    ("Conv1d", (3, 5, 4), dict(padding="same", dilation=2, padding_mode="circular"), (2, 3, 9)),
    ("Conv2d", (3, 8, 3), dict(stride=2, padding=1, bias=False), (2, 3, 9, 9)),
    ("Conv2d", (3, 4, (3, 2)), dict(padding=(2, 1), padding_mode="reflect"), (2, 3, 7, 6)),
    ("Conv2d", (3, 4, 3), dict(padding=1, padding_mode="replicate", dilation=(1, 2)), (3, 7, 8)),
    ("Conv2d", (4, 4, 3), dict(padding="valid", groups=4), (2, 4, 6, 6)),
    ("Conv3d", (2, 4, 2), dict(stride=(1, 2, 1), padding=1), (1, 2, 4, 5, 4)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, output_padding=1, groups=2), (2, 4, 5)),
    ("ConvTranspose2d", (3, 4, 3), dict(stride=2, padding=1, dilation=(1, 2), bias=False), (2, 3, 4, 5)),
    ("ConvTranspose3d", (2, 2, 2), dict(stride=2), (1, 2, 3, 2, 3)),
]


@pytest.mark.parametrize("case", CONV_MODULES, ids=lambda c: f"{c[0]}{c[1]}{c[2]}")
def test_conv_modules_match_torch(case):
    cls, args, kw, shape = case
    me, mt = getattr(ember.nn, cls)(*args, **kw).double(), getattr(torch.nn, cls)(*args, **kw).double()
    assert repr(me) == repr(mt)
    sd_t = mt.state_dict()
    assert list(me.state_dict().keys()) == list(sd_t.keys())
    assert [tuple(v.shape) for v in me.state_dict().values()] == [tuple(v.shape) for v in sd_t.values()]
    me.load_state_dict({k: ember.tensor(v.numpy()) for k, v in sd_t.items()})
    a = np.random.default_rng(0).standard_normal(shape)
    xe = ember.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    ye, yt = me(xe), mt(xt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    for (n, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-9, atol=1e-9, err_msg=n)


def test_conv_transpose_output_size():
    me, mt = ember.nn.ConvTranspose2d(3, 2, 3, stride=2), torch.nn.ConvTranspose2d(3, 2, 3, stride=2)
    me.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    a = np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype("float32")
    for size in [(9, 9), (10, 10), (1, 2, 10, 9)]:
        ye, yt = me(ember.tensor(a), output_size=size), mt(torch.tensor(a), output_size=size)
        np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        me(ember.tensor(a), output_size=(12, 12))
    with pytest.raises(ValueError):
        me(ember.tensor(a), output_size=(9,))


def test_conv_default_init_bounds():
    ember.manual_seed(0)
    m = ember.nn.Conv2d(4, 8, 3)
    bound = 1 / np.sqrt(4 * 9)  # kaiming_uniform_(a=sqrt(5)) and the bias both give 1/sqrt(fan_in)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.8 * bound  # spread over the whole interval
    t = ember.nn.ConvTranspose2d(4, 8, 3)  # fan_in from weight.size(1) * 9
    assert tuple(t.weight.shape) == (4, 8, 3, 3)
    assert np.abs(t.bias.detach().numpy()).max() <= 1 / np.sqrt(8 * 9)


@pytest.mark.parametrize("kw", [
    dict(groups=0), dict(groups=2), dict(padding="foo"), dict(padding="same", stride=2), dict(padding_mode="bar"),
])
def test_conv_module_errors(kw):
    with pytest.raises(ValueError):
        torch.nn.Conv2d(3, 4, 3, **kw)
    with pytest.raises(ValueError):
        ember.nn.Conv2d(3, 4, 3, **kw)


def test_conv_transpose_padding_mode_error():
    with pytest.raises(ValueError):
        ember.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect")


def test_cnn_model_matches_torch():
    def build(nn):
        return nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding_mode="reflect", padding=1),
            nn.AvgPool2d(2), nn.ConvTranspose2d(8, 4, 2, stride=2), nn.AdaptiveMaxPool2d(2), nn.Flatten(),
            nn.Linear(16, 3))
    me, mt = build(ember.nn), build(torch.nn)
    assert repr(me) == repr(mt)
    me.load_state_dict({k: ember.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    a = np.random.default_rng(2).standard_normal((2, 1, 10, 10)).astype("float32")
    ye, yt = me(ember.tensor(a)), mt(torch.tensor(a))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
    ye.sum().backward()
    yt.sum().backward()
    for (n, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-3, atol=1e-4, err_msg=n)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.LazyConv1d(4, 3, stride=2), (2, 3, 9)),
    (lambda nn: nn.LazyConv2d(8, 3, padding=1), (2, 3, 6, 6)),
    (lambda nn: nn.LazyConv3d(2, 2, bias=False), (3, 4, 4, 4)),
    (lambda nn: nn.LazyConvTranspose1d(4, 3, stride=2, groups=2), (2, 6, 5)),
    (lambda nn: nn.LazyConvTranspose2d(3, 2), (1, 2, 3, 3)),
    (lambda nn: nn.LazyConvTranspose3d(2, 2, stride=2), (1, 2, 2, 2, 2)),
])
def test_lazy_conv(make, shape):
    me, mt = make(ember.nn), make(torch.nn)
    assert repr(me) == repr(mt)
    ye, yt = me(ember.zeros(*shape)), mt(torch.zeros(*shape))
    assert type(me).__name__ == type(mt).__name__
    assert repr(me) == repr(mt)
    assert tuple(me.weight.shape) == tuple(mt.weight.shape)
    assert tuple(ye.shape) == tuple(yt.shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch, size, stride", [(23, 7, 1), (5, 4, 2), (3, 15, 1)])
def test_conv2d_batches_values_and_grads(dtype, batch, size, stride):
    # Batches of several sizes, small and strided maps, bias: values and
    # input, weight and bias gradients as torch's.
    rng = np.random.default_rng(batch)
    a = rng.standard_normal((batch, 6, size, size)).astype(dtype)
    wv = rng.standard_normal((5, 6, 3, 3)).astype(dtype)
    bv = rng.standard_normal(5).astype(dtype)
    xe, we, be = (ember.tensor(v).requires_grad_() for v in (a, wv, bv))
    xt, wt, bt = (torch.tensor(v).requires_grad_() for v in (a, wv, bv))
    ye = ember.nn.functional.conv2d(xe, we, be, stride=stride, padding=1)
    yt = torch.nn.functional.conv2d(xt, wt, bt, stride=stride, padding=1)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), **tol)
    g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    for e, t in ((xe, xt), (we, wt), (be, bt)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol)


# ---- oneDNN (float32 convolutions; ember.backends.mkldnn.enabled) against the im2col kernels ----

ONEDNN_CASES = [
    # name, functional, input shape, weight shape, kwargs
    ("3x3", "conv2d", (4, 16, 9, 9), (24, 16, 3, 3), dict(padding=1)),
    ("stride2_odd", "conv2d", (3, 32, 9, 9), (16, 32, 3, 3), dict(stride=2, padding=1)),
    ("1x1_stride2_unread_tail", "conv2d", (2, 16, 8, 8), (16, 16, 1, 1), dict(stride=2)),
    ("dilated_asym", "conv2d", (2, 16, 13, 11), (8, 16, 5, 3), dict(padding=(3, 1), dilation=(2, 1))),
    ("groups", "conv2d", (2, 32, 7, 7), (32, 16, 3, 3), dict(padding=1, groups=2)),
    ("depthwise", "conv2d", (2, 16, 7, 7), (16, 1, 3, 3), dict(padding=1, groups=16)),
    ("same", "conv2d", (2, 16, 8, 8), (8, 16, 4, 4), dict(padding="same")),
    ("conv1d", "conv1d", (3, 16, 20), (8, 16, 3), dict(stride=2, padding=1)),
    ("conv3d", "conv3d", (2, 16, 5, 6, 4), (8, 16, 3, 3, 3), dict(padding=1)),
    ("few_channels", "conv2d", (4, 3, 10, 10), (8, 3, 3, 3), dict(padding=1)),
    ("one_channel", "conv2d", (4, 1, 10, 10), (8, 1, 3, 3), dict(padding=1)),
    ("transposed", "conv_transpose2d", (2, 16, 5, 5), (16, 8, 3, 3), dict(stride=2, padding=1, output_padding=1)),
]


def _conv_all(fn, x, w, b, kwargs):
    x = x.detach().requires_grad_(True)
    w = w.detach().requires_grad_(True)
    b = b.detach().requires_grad_(True)
    y = getattr(EF, fn)(x, w, b, **kwargs)
    gy = ember.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)).astype("float32"))
    y.backward(gy)
    return [t.detach().numpy().copy() for t in (y, x.grad, w.grad, b.grad)]


@pytest.mark.parametrize("name,fn,xs,ws,kwargs", ONEDNN_CASES, ids=[c[0] for c in ONEDNN_CASES])
def test_onednn_matches_im2col_and_torch(name, fn, xs, ws, kwargs):
    rng = np.random.default_rng(3)
    xa, wa = rng.standard_normal(xs).astype("float32"), rng.standard_normal(ws).astype("float32")
    out_ch = ws[1] * kwargs.get("groups", 1) if fn.startswith("conv_transpose") else ws[0]
    ba = rng.standard_normal(out_ch).astype("float32")
    x, w, b = ember.tensor(xa), ember.tensor(wa), ember.tensor(ba)
    assert ember.backends.mkldnn.enabled
    fast = _conv_all(fn, x, w, b, kwargs)
    with ember.backends.mkldnn.flags(enabled=False):
        assert not ember.backends.mkldnn.enabled
        ref = _conv_all(fn, x, w, b, kwargs)
    assert ember.backends.mkldnn.enabled
    # torch in float64 is the reference for both paths
    xt, wt, bt = (torch.tensor(a.astype("float64"), requires_grad=True) for a in (xa, wa, ba))
    yt = getattr(TF, fn)(xt, wt, bt, **kwargs)
    yt.backward(torch.tensor(np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype("float32")).double())
    want = [t.detach().numpy() for t in (yt, xt.grad, wt.grad, bt.grad)]
    for got_fast, got_ref, exp in zip(fast, ref, want):
        scale = np.abs(exp).max() + 1
        assert np.abs(got_fast - exp).max() <= 2e-5 * scale
        assert np.abs(got_ref - exp).max() <= 2e-5 * scale


def test_onednn_thread_count_determinism():
    """float32 through oneDNN: output and both gradients bit-identical with 1 and 2 threads."""
    rng = np.random.default_rng(6)
    x = ember.tensor(rng.standard_normal((20, 32, 9, 9)).astype("float32"), requires_grad=True)
    w = ember.tensor(rng.standard_normal((32, 32, 3, 3)).astype("float32"), requires_grad=True)
    n = ember.get_num_threads()
    results = []
    try:
        for t in (1, 2, 1):
            ember.set_num_threads(t)
            x.grad = w.grad = None
            y = EF.conv2d(x, w, padding=1)
            y.square().sum().backward()
            results.append([a.numpy().copy() for a in (y.detach(), x.grad, w.grad)])
    finally:
        ember.set_num_threads(n)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert (a == b).all()


def test_mkldnn_flag_module_attribute():
    old = ember.backends.mkldnn.enabled
    assert ember.backends.mkldnn.is_available()
    try:
        ember.backends.mkldnn.enabled = False
        assert ember.backends.mkldnn.enabled is False
        with ember.backends.mkldnn.flags(enabled=True):
            assert ember.backends.mkldnn.enabled is True
        assert ember.backends.mkldnn.enabled is False
    finally:
        ember.backends.mkldnn.enabled = old
