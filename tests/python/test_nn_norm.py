"""Normalization and dropout of ember.nn.functional against torch 2.13: values, gradients of input,
weight and bias, running-stat updates, train/eval, non-contiguous and empty inputs,
gradcheck/gradgradcheck in float64, and torch's exception classes."""
import pytest

import ember
import ember.nn.functional as EF
from conftest import assert_same, torch
from nn_ref import gradchecks, randn, run_both, same_exception, to_ember


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (3, 4, 2, 3), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_training_updates_running_stats(shape, dtype, affine):
    C = shape[1]
    x = randn(*shape, dtype=dtype)
    w, b = randn(C, dtype=dtype, seed=1), randn(C, dtype=dtype, seed=2)
    rm_t, rv_t = torch.rand(C, dtype=dtype), torch.rand(C, dtype=dtype) + 0.5
    rm_e, rv_e = to_ember(rm_t), to_ember(rv_t)
    state = {}

    def f(lib, F, x, w, b):
        rm, rv = (rm_t, rv_t) if lib is torch else (rm_e, rv_e)
        state[lib.__name__] = (rm, rv)
        return F.batch_norm(x, rm, rv, w if affine else None, b if affine else None, training=True, momentum=0.3,
                            eps=1e-3)

    rtol = 1e-4 if dtype == torch.float32 else 1e-10
    run_both(f, x, w, b, rtol=rtol, atol=rtol)
    assert_same(rm_e, rm_t, rtol=rtol, atol=rtol)
    assert_same(rv_e, rv_t, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batch_norm_eval_and_noncontiguous(dtype):
    x = randn(5, 4, 3, dtype=dtype)
    rm, rv = torch.randn(4, dtype=dtype), torch.rand(4, dtype=dtype) + 0.5
    w, b = randn(4, dtype=dtype, seed=1), randn(4, dtype=dtype, seed=2)
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    run_both(lambda lib, F, x, rm, rv, w, b: F.batch_norm(x, rm, rv, w, b, training=False), x, rm, rv, w, b,
             rtol=rtol, atol=rtol)
    # channels-last style permuted input, and training without running stats
    run_both(lambda lib, F, x, w, b: F.batch_norm(x.permute(0, 2, 1).contiguous().permute(0, 2, 1), None, None, w, b,
                                                  training=True), x, w, b, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(64, 600), (3, 7), (300, 1), (8, 6, 5, 7), (4, 3, 33)])
def test_batch_norm_column_blocks_and_16bit_planes_as_torch(dtype, shape):
    # (N, C) input: columns in blocks of 256 on the threads, 16-bit rows through float pieces;
    # (N, C, ...) input: float16 planes through float buffers
    import numpy as np
    C = shape[1]
    g = torch.Generator().manual_seed(5)
    x, gy = torch.randn(*shape, generator=g) * 2 + 1, torch.randn(*shape, generator=g)
    w, b = torch.randn(C, generator=g), torch.randn(C, generator=g)

    def run(lib, t, x, w, b, gy):
        xx = x.to(t).detach().requires_grad_()
        y = lib.nn.functional.batch_norm(xx, None, None, w.to(t), b.to(t), training=True)
        y.backward(gy.to(t))
        return np.array(y.double().tolist()), np.array(xx.grad.double().tolist())

    e = run(ember, getattr(ember, dtype), *[to_ember(v) for v in (x, w, b, gy)])
    t = run(torch, getattr(torch, dtype), x, w, b, gy)
    if dtype in ("float32", "float64"):
        tol = 1e-4 if dtype == "float32" else 1e-10
        for a, r in zip(e, t):
            np.testing.assert_allclose(a, r, rtol=tol, atol=tol)
    else:  # at least torch's accuracy against float64 on the same rounded inputs (torch rounds more often)
        r = run(torch, torch.float64, *[v.to(getattr(torch, dtype)) for v in (x, w, b, gy)])
        for a, tt, rr in zip(e, t, r):
            scale = max(np.abs(rr).max(), 1.0)
            assert np.abs(a - rr).max() <= 1.5 * np.abs(tt - rr).max() + 1e-3 * scale
    # the same bits on 1 and 2 threads, forward and input gradient
    xe = to_ember(x).to(getattr(ember, dtype)).detach().requires_grad_()
    threads = ember.get_num_threads()
    outs = []
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            xe.grad = None
            y = EF.batch_norm(xe, None, None, training=True)
            y.backward(to_ember(gy).to(y.dtype))
            outs.append((y, xe.grad))
    finally:
        ember.set_num_threads(threads)
    assert ember.equal(outs[0][0], outs[1][0]) and ember.equal(outs[0][1], outs[1][1])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("N", [1000, 7, 64])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_16bit_as_torch(dtype, N, affine):
    # 16-bit rows through float buffers (norm_kernels.cpp ln_backward): values and the gradients of
    # x, w and b at least as accurate as torch's against float64 on the same rounded inputs
    import numpy as np
    g = torch.Generator().manual_seed(11)
    x, gy = torch.randn(33, N, generator=g) * 3 + 1, torch.randn(33, N, generator=g)
    w, b = torch.randn(N, generator=g), torch.randn(N, generator=g)

    def run(lib, t, x, w, b, gy):
        xx = x.to(t).detach().requires_grad_()
        ww, bb = (w.to(t).detach().requires_grad_(), b.to(t).detach().requires_grad_()) if affine else (None, None)
        y = lib.nn.functional.layer_norm(xx, (N,), ww, bb)
        y.backward(gy.to(t))
        outs = [y, xx.grad] + ([ww.grad, bb.grad] if affine else [])
        return [np.array(o.double().tolist()) for o in outs]

    e = run(ember, getattr(ember, dtype), *[to_ember(v) for v in (x, w, b, gy)])
    t = run(torch, getattr(torch, dtype), x, w, b, gy)
    r = run(torch, torch.float64, *[v.to(getattr(torch, dtype)) for v in (x, w, b, gy)])
    for a, tt, rr in zip(e, t, r):
        scale = max(np.abs(rr).max(), 1.0)
        assert np.abs(a - rr).max() <= 1.5 * np.abs(tt - rr).max() + 2e-3 * scale


def test_batch_norm_empty():
    run_both(lambda lib, F, x: F.batch_norm(x, lib.zeros(3), lib.ones(3)), randn(0, 3, 2, dtype=torch.float32))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck(training):
    x, w, b = randn(4, 3, 2), randn(3, seed=1), randn(3, seed=2)
    rm, rv = to_ember(torch.zeros(3, dtype=torch.float64)), to_ember(torch.ones(3, dtype=torch.float64))
    gradchecks(lambda lib, F, x, w, b: F.batch_norm(x, rm, rv, w, b, training=training), x, w, b)


@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 4, 5), (4, 5)), ((3, 2, 7), (7,)), ((0, 4), (4,))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(shape, ns, dtype, affine):
    x = randn(*shape, dtype=dtype)
    w, b = randn(*ns, dtype=dtype, seed=1), randn(*ns, dtype=dtype, seed=2)
    rtol = 1e-4 if dtype == torch.float32 else 1e-10
    run_both(lambda lib, F, x, w, b: F.layer_norm(x, ns, w if affine else None, b if affine else None, eps=1e-4),
             x, w, b, rtol=rtol, atol=rtol)


def test_layer_norm_noncontiguous_and_gradcheck():
    x, w, b = randn(5, 4), randn(5, seed=1), randn(5, seed=2)
    run_both(lambda lib, F, x, w, b: F.layer_norm(x.t(), (5,), w, b), x, w, b)
    gradchecks(lambda lib, F, x, w, b: F.layer_norm(x, (3, 2), w, b), randn(2, 3, 2), randn(3, 2, seed=1),
               randn(3, 2, seed=2))


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm(groups):
    x, w, b = randn(3, 4, 5), randn(4, seed=1), randn(4, seed=2)
    run_both(lambda lib, F, x, w, b: F.group_norm(x, groups, w, b, eps=1e-3), x, w, b)
    run_both(lambda lib, F, x: F.group_norm(x, groups), randn(2, 4, 3, 2, dtype=torch.float32), rtol=1e-4)
    gradchecks(lambda lib, F, x, w, b: F.group_norm(x, groups, w, b), randn(2, 4, 3), w, b)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm(use_input_stats):
    x, w, b = randn(3, 4, 5), randn(4, seed=1), randn(4, seed=2)
    rm_t, rv_t = torch.rand(4, dtype=torch.float64), torch.rand(4, dtype=torch.float64) + 0.5
    rm_e, rv_e = to_ember(rm_t), to_ember(rv_t)

    def f(lib, F, x, w, b):
        rm, rv = (rm_t, rv_t) if lib is torch else (rm_e, rv_e)
        return F.instance_norm(x, rm, rv, w, b, use_input_stats=use_input_stats, momentum=0.2)

    run_both(f, x, w, b)
    assert_same(rm_e, rm_t)
    assert_same(rv_e, rv_t)
    run_both(lambda lib, F, x: F.instance_norm(x), randn(2, 3, 4, 2))
    gradchecks(lambda lib, F, x, w, b: F.instance_norm(x, weight=w, bias=b), randn(2, 4, 3), w, b)


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(eps):
    x, w = randn(3, 4, 5), randn(4, 5, seed=1)
    run_both(lambda lib, F, x, w: F.rms_norm(x, (4, 5), w, eps=eps), x, w)
    run_both(lambda lib, F, x: F.rms_norm(x, [5], eps=eps), randn(3, 5, dtype=torch.float32), rtol=1e-5)
    gradchecks(lambda lib, F, x, w: F.rms_norm(x, (5,), w[0], eps=eps), randn(2, 5), w)


def test_local_response_norm():
    run_both(lambda lib, F, x: F.local_response_norm(x, 3, alpha=0.1, beta=0.6, k=2.0), randn(2, 5, 3))
    run_both(lambda lib, F, x: F.local_response_norm(x, 2), randn(2, 4, 3, 2))


@pytest.mark.parametrize("fn", [
    lambda lib, F, x: F.batch_norm(x, lib.zeros(5), lib.ones(5)),
    lambda lib, F, x: F.batch_norm(x[:1], None, None, training=True),
    lambda lib, F, x: F.layer_norm(x, (5,)),
    lambda lib, F, x: F.layer_norm(x, (4,), lib.ones(3)),
    lambda lib, F, x: F.group_norm(x, 3),
    lambda lib, F, x: F.group_norm(x[0], 2),
    lambda lib, F, x: F.instance_norm(x.reshape(1, 12, 1)),
    lambda lib, F, x: F.rms_norm(x, (5,)),
    lambda lib, F, x: F.local_response_norm(x, 2),
    lambda lib, F, x: F.dropout(x, 1.5),
    lambda lib, F, x: F.dropout1d(x.reshape(1, 1, 3, 4), 0.5),
    lambda lib, F, x: F.dropout(x.to(lib.int64), 0.5),
    lambda lib, F, x: F.batch_norm(x[0], None, None, training=True),
    lambda lib, F, x: F.batch_norm(x.to(lib.int64), lib.zeros(4), lib.ones(4)),
    lambda lib, F, x: F.group_norm(x, 0),
    lambda lib, F, x: F.rms_norm(x, ()),
    lambda lib, F, x: F.layer_norm(x, (-1,)),
])
def test_errors(fn):
    same_exception(fn, torch.randn(3, 4))


def test_layer_norm_double_backward_matches_torch():
    x, w = randn(3, 4), randn(4, seed=1)
    xt, wt = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    xe, we = to_ember(x), to_ember(w)
    gt = torch.autograd.grad(torch.nn.functional.layer_norm(xt, (4,), wt).pow(2).sum(), xt, create_graph=True)[0]
    ge = ember.autograd.grad(EF.layer_norm(xe, (4,), we).pow(2).sum(), xe, create_graph=True)[0]
    assert_same(ge, gt)
    gt.sum().backward()
    ge.sum().backward()
    assert_same(xe.grad, xt.grad, rtol=1e-10, atol=1e-10)
    assert_same(we.grad, wt.grad, rtol=1e-10, atol=1e-10)


# ---- dropout ----

@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
                                  "dropout3d"])
def test_dropout_eval_is_identity(name):
    x = ember.randn(2, 3, 4, 5)
    if name == "dropout1d":
        x = x[0]
    y = getattr(EF, name)(x, 0.3, training=False)
    assert bool((y == x).all())


def test_dropout_statistics_and_gradient():
    ember.manual_seed(0)
    x = ember.ones(200, 300, requires_grad=True)
    y = EF.dropout(x, 0.3)
    kept = (y != 0)
    frac = kept.to(ember.float32).mean().item()
    assert abs(frac - 0.7) < 0.01
    assert bool((y[kept] - 1 / 0.7).abs().max() < 1e-6)
    y.sum().backward()
    assert bool((x.grad == y.detach()).all())  # the gradient is the scaled mask
    assert bool((EF.dropout(x, 1.0) == 0).all())
    assert EF.dropout(x, 0.0) is x or bool((EF.dropout(x, 0.0) == x).all())


def test_dropout_inplace():
    x = ember.ones(50, 40)
    y = EF.dropout(x, 0.5, inplace=True)
    assert y is x
    assert 0 < (x == 0).to(ember.float32).mean().item() < 1
    leaf = ember.ones(30, 20, requires_grad=True)
    h = leaf * 2
    out = EF.dropout(h, 0.5, inplace=True)
    out.sum().backward()
    assert bool((leaf.grad == out.detach()).all())


def test_feature_dropout_masks_whole_channels():
    x = ember.ones(8, 16, 5, 5)
    y = EF.dropout2d(x, 0.5)
    per_map = y.reshape(8, 16, 25)
    assert bool(((per_map == 0).all(-1) | (per_map == 2).all(-1)).all())
    y1 = EF.dropout1d(ember.ones(16, 7), 0.5)  # unbatched (C, L)
    assert tuple(y1.shape) == (16, 7) and bool(((y1 == 0).all(-1) | (y1 == 2).all(-1)).all())
    y3 = EF.dropout3d(ember.ones(4, 2, 3, 3), 0.5)  # unbatched (C, D, H, W)
    assert tuple(y3.shape) == (4, 2, 3, 3)


def test_alpha_dropout_keeps_moments():
    ember.manual_seed(1)
    x = ember.randn(400, 500)
    y = EF.alpha_dropout(x, 0.2, training=True)
    assert abs(y.mean().item()) < 0.02
    assert abs(y.std().item() - 1) < 0.02
    z = EF.feature_alpha_dropout(ember.randn(64, 32, 20), 0.2, training=True)
    assert abs(z.mean().item()) < 0.05 and abs(z.std().item() - 1) < 0.05


# ---- modules ----

def _pair(name, *args, **kw):
    t = getattr(torch.nn, name)(*args, **kw).double()
    e = getattr(ember.nn, name)(*args, **kw).double()
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return t, e


def _state_same(e, t, rtol=1e-10):
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    for k, v in t.state_dict().items():
        assert_same(e.state_dict()[k], v, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name,shape,kw", [
    ("BatchNorm1d", (6, 3), {}), ("BatchNorm1d", (4, 3, 5), {"momentum": None}),
    ("BatchNorm2d", (3, 3, 4, 4), {"affine": False}), ("BatchNorm3d", (2, 3, 2, 3, 2), {"bias": False}),
    ("BatchNorm2d", (3, 3, 2, 2), {"track_running_stats": False}),
    ("InstanceNorm1d", (3, 3, 5), {"affine": True, "track_running_stats": True}),
    ("InstanceNorm2d", (3, 4, 4), {}), ("InstanceNorm3d", (2, 3, 2, 3, 2), {"affine": True}),
])
def test_norm_modules_train_eval(name, shape, kw):
    t, e = _pair(name, 3, **kw)
    assert repr(e) == repr(t)
    for step in range(3):  # running statistics and num_batches_tracked over a few steps
        x = randn(*shape, seed=step)
        run_both(lambda lib, F, x: (t if lib is torch else e)(x), x)
        _state_same(e, t)
    t.eval()
    e.eval()
    run_both(lambda lib, F, x: (t if lib is torch else e)(x), randn(*shape, seed=7))


@pytest.mark.parametrize("name,args,kw,shape", [
    ("LayerNorm", ((4, 5),), {}, (3, 4, 5)), ("LayerNorm", (5,), {"bias": False}, (2, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (2, 5)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)), ("GroupNorm", (1, 4), {"affine": False}, (3, 4, 2, 2)),
    ("RMSNorm", ([5],), {}, (3, 5)), ("RMSNorm", ((2, 5),), {"eps": 1e-3, "elementwise_affine": False}, (3, 2, 5)),
    ("LocalResponseNorm", (3,), {"alpha": 0.01}, (2, 5, 4)),
])
def test_normalization_modules(name, args, kw, shape):
    t, e = _pair(name, *args, **kw)
    assert repr(e) == repr(t)
    _state_same(e, t)
    run_both(lambda lib, F, x: (t if lib is torch else e)(x), randn(*shape))
    for (n, pt), (_, pe) in zip(t.named_parameters(), e.named_parameters()):
        assert_same(pe.grad, pt.grad)


def test_batchnorm_module_errors_and_legacy_state_dict():
    with pytest.raises(ValueError):
        ember.nn.BatchNorm2d(3)(ember.randn(2, 3))
    with pytest.raises(ValueError):
        ember.nn.BatchNorm1d(3)(ember.randn(1, 3))
    with pytest.raises(ValueError):
        ember.nn.GroupNorm(3, 4)
    with pytest.raises(ValueError):
        ember.nn.InstanceNorm1d(3, affine=True)(ember.randn(2, 4, 5))
    m = ember.nn.BatchNorm1d(3)
    sd = m.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1
    m.load_state_dict(sd)  # a pre-num_batches_tracked state dict still loads strictly


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"])
def test_dropout_modules(name):
    t, e = getattr(torch.nn, name)(0.3), getattr(ember.nn, name)(0.3)
    assert repr(e) == repr(t)
    x = ember.randn(2, 3, 4, 5)[0] if name == "Dropout1d" else ember.randn(2, 3, 4, 5, 2)[0]
    e.eval()
    assert bool((e(x) == x).all())
    e.train()
    y = e(x)
    assert tuple(y.shape) == tuple(x.shape) and not bool((y == x).all())
    with pytest.raises(ValueError):
        getattr(ember.nn, name)(1.5)


# ---- forward-mode AD and 16-bit floats ----

FWD = [
    ("cross_entropy", lambda lib, F, x: F.cross_entropy(x, lib.tensor([1, 2, 3, 0]), label_smoothing=0.1)),
    ("nll_loss", lambda lib, F, x: F.nll_loss(x, lib.tensor([1, 2, 3, 0]))),
    ("layer_norm", lambda lib, F, x: F.layer_norm(x, (5,))),
    ("batch_norm", lambda lib, F, x: F.batch_norm(x, None, None, training=True)),
    ("group_norm", lambda lib, F, x: F.group_norm(x.reshape(4, 5, 1), 5)),
]


@pytest.mark.parametrize("name,f", FWD)
def test_forward_ad_matches_torch(name, f):
    import ember.autograd.forward_ad as efw
    import torch.autograd.forward_ad as tfw
    x, v = randn(4, 5, rg=False), randn(4, 5, rg=False, seed=1)
    with tfw.dual_level():
        ot = tfw.unpack_dual(f(torch, torch.nn.functional, tfw.make_dual(x, v))).tangent
    with efw.dual_level():
        oe = efw.unpack_dual(f(ember, EF, efw.make_dual(to_ember(x), to_ember(v)))).tangent
    assert_same(oe, ot, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,f", [
    ("layer_norm", lambda lib, F, x: F.layer_norm(x, (5,))),
    ("batch_norm", lambda lib, F, x: F.batch_norm(x, None, None, training=True)),
    ("cross_entropy", lambda lib, F, x: F.cross_entropy(x, lib.zeros(4, 5, dtype=lib.int64), reduction="none")),
    ("group_norm", lambda lib, F, x: F.group_norm(x, 2)),
])
def test_half_precision(dtype, name, f):
    xt = torch.randn(4, 6, 5, generator=torch.Generator().manual_seed(0)).to(getattr(torch, dtype))
    xe = ember.tensor(xt.float().tolist()).to(getattr(ember, dtype))
    tol = 2e-3 if dtype == "float16" else 2e-2
    assert_same(f(ember, EF, xe), f(torch, torch.nn.functional, xt), rtol=tol, atol=tol)


@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_half_layer_norm_float_rows(affine):
    # float16 rows are normalized in float blocks (cpu/norm_kernels.cpp): the float32 computation on
    # the same values, rounded once, for every weight/bias combination
    import numpy as np
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((37, 300)) * 4).half()
    w = ember.tensor(rng.standard_normal(300)).half() if affine in ("both", "weight") else None
    b = ember.tensor(rng.standard_normal(300)).half() if affine in ("both", "bias") else None
    got = ember.nn.functional.layer_norm(x, (300,), w, b)
    want = ember.nn.functional.layer_norm(x.float(), (300,), None if w is None else w.float(),
                                          None if b is None else b.float()).half()
    diff = np.abs(got.float().numpy() - want.float().numpy())
    ulp = np.abs(want.float().numpy()) * 2.0**-10 + 2.0**-24
    assert (diff <= ulp).all()
    tw = None if w is None else torch.from_numpy(w.float().numpy()).half()
    tb = None if b is None else torch.from_numpy(b.float().numpy()).half()
    ref = torch.nn.functional.layer_norm(torch.from_numpy(x.float().numpy()).half(), (300,), tw, tb)
    np.testing.assert_allclose(got.float().numpy(), ref.float().numpy(), rtol=2e-3, atol=2e-3)


# ---- Note [Fused group norm] ----

@pytest.mark.parametrize("shape,groups", [((3, 4, 5), 2), ((2, 6), 3), ((2, 8, 3, 4), 1), ((2, 8, 3, 4), 8),
                                          ((1, 6, 2, 3, 2), 3), ((4, 32, 7, 7), 8)])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_fused_group_norm_matches_torch(shape, groups, affine):
    C = shape[1]
    x = randn(*shape)
    w = randn(C, seed=1) if affine in ("both", "weight") else None
    b = randn(C, seed=2) if affine in ("both", "bias") else None
    args = [t for t in (x, w, b) if t is not None]

    def f(lib, F, *ts):
        it = iter(ts)
        xx = next(it)
        ww = next(it) if w is not None else None
        bb = next(it) if b is not None else None
        return F.group_norm(xx, groups, ww, bb, eps=1e-4)

    # torch 2.13's backward fails for a bias without a weight ("tensor does not have a device"):
    # there the gradients are compared with torch's for a weight of ones
    run_both(f, *args, rtol=1e-9, atol=1e-9, grad=affine != "bias")
    if affine == "bias":
        xe, be = to_ember(x), to_ember(b)
        EF.group_norm(xe, groups, None, be, eps=1e-4).sum().backward()
        xt, bt = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        torch.nn.functional.group_norm(xt, groups, torch.ones(C, dtype=x.dtype), bt, eps=1e-4).sum().backward()
        assert_same(xe.grad, xt.grad, rtol=1e-9, atol=1e-9)
        assert_same(be.grad, bt.grad, rtol=1e-9, atol=1e-9)
    ye = f(ember, EF, *[to_ember(t) for t in args])
    assert ye.grad_fn.name() == type(f(torch, torch.nn.functional, *args).grad_fn).__name__ == "NativeGroupNormBackward0"


def test_fused_group_norm_layouts_dtypes_and_create_graph():
    # a channels-last (permuted) input, a constant group (variance 0), float32 within float32 rounding
    x = randn(2, 3, 4, 6).permute(0, 3, 1, 2).detach()
    x[0, :3] = 0.25
    x.requires_grad_()
    w, b = randn(6, seed=1), randn(6, seed=2)
    run_both(lambda lib, F, x, w, b: F.group_norm(x, 2, w, b), x, w, b, rtol=1e-8, atol=1e-8)
    x32, w32, b32 = (t.detach().float().requires_grad_() for t in (x, w, b))
    run_both(lambda lib, F, x, w, b: F.group_norm(x, 3, w, b), x32, w32, b32, rtol=2e-4, atol=2e-4)
    # create_graph: second derivatives through the composed formula
    gradchecks(lambda lib, F, x, w, b: F.group_norm(x, 2, w, b), randn(2, 4, 3), randn(4, seed=1), randn(4, seed=2))
    # an empty batch takes the composition
    run_both(lambda lib, F, x: F.group_norm(x, 2), randn(0, 4, 3), grad=False)
    # torch's mixed-dtype rule: float32 parameters for a 16-bit input (the result in the input's dtype), else errors
    for xd, wd in [("float32", "float64"), ("float64", "float32"), ("bfloat16", "float64"), ("float32", "bfloat16")]:
        same_exception(lambda lib, F, x: F.group_norm(x.to(getattr(lib, xd)), 2, lib.ones(4, dtype=getattr(lib, wd))),
                       torch.randn(2, 4, 3))
    for xd in ["bfloat16", "float16"]:
        xt = torch.randn(2, 4, 3).to(getattr(torch, xd))
        wt, bt = torch.randn(4), torch.randn(4)
        ye = EF.group_norm(ember.tensor(xt.float().tolist()).to(getattr(ember, xd)), 2, to_ember(wt), to_ember(bt))
        assert_same(ye, torch.nn.functional.group_norm(xt, 2, wt, bt), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_group_norm_half_with_affine(dtype):
    g = torch.Generator().manual_seed(0)
    xt = torch.randn(3, 8, 5, 5, generator=g).to(getattr(torch, dtype)).requires_grad_()
    wt = torch.randn(8, generator=g).to(getattr(torch, dtype)).requires_grad_()
    bt = torch.randn(8, generator=g).to(getattr(torch, dtype)).requires_grad_()
    conv = [ember.tensor(t.detach().float().tolist()).to(getattr(ember, dtype)).requires_grad_() for t in (xt, wt, bt)]
    yt = torch.nn.functional.group_norm(xt, 4, wt, bt)
    ye = EF.group_norm(conv[0], 4, conv[1], conv[2])
    tol = 2e-3 if dtype == "float16" else 2e-2
    assert_same(ye, yt, rtol=tol, atol=tol)
    gy = torch.randn(yt.shape, generator=g).to(getattr(torch, dtype))
    yt.backward(gy)
    ye.backward(ember.tensor(gy.float().tolist()).to(getattr(ember, dtype)))
    for e, t in zip(conv, (xt, wt, bt)):
        # float16 sums of 75 products, rounded once: within a few units in the last place of the largest
        assert_same(e.grad, t.grad, rtol=4 * tol, atol=4 * tol * float(t.grad.abs().max()))


def test_fused_group_norm_many_groups_and_threads():
    # Note [Fused group norm]: statistics and output per (n, group) in one step of the parallel loop;
    # 80 groups of 555 (odd) elements span several steps, with a large mean against the spread
    g = torch.Generator().manual_seed(3)
    xt = torch.randn(20, 12, 37, 15, generator=g) * 3 + 50
    wt, bt = torch.randn(12, generator=g), torch.randn(12, generator=g)
    xe, we, be = to_ember(xt), to_ember(wt), to_ember(bt)
    ye = EF.group_norm(xe, 4, we, be)
    assert_same(ye, torch.nn.functional.group_norm(xt, 4, wt, bt), rtol=1e-4, atol=1e-4)
    threads = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = EF.group_norm(xe, 4, we, be)
    finally:
        ember.set_num_threads(threads)
    assert ember.equal(one, ye)
