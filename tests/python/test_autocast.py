"""CPU autocast (ember.autocast / ember.amp) and GradScaler against torch 2.13: output dtypes of
the listed ops, values and gradients within bfloat16 tolerance, region semantics (nesting,
enabled=False, decorator, dtype argument, warnings), custom_fwd/custom_bwd, GradScaler's steps."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def E(t):
    e = ember.tensor(t.detach().float().numpy())
    e = e.to(getattr(ember, str(t.dtype).split(".")[-1]))
    return e.requires_grad_() if t.requires_grad else e


def _ops(lib):
    F = lib.nn.functional
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    x, w, b = r(4, 8), r(6, 8), r(6)
    img, cw = r(2, 3, 8, 8), r(4, 3, 3, 3)
    conv_t = r(3, 4, 3, 3)
    if lib is ember:
        x, w, b, img, cw, conv_t = map(E, (x, w, b, img, cw, conv_t))
    xb = x.bfloat16()
    tgt = lib.tensor([0, 1, 2, 3])
    return {
        "linear": lambda: F.linear(x, w, b), "mm": lambda: x @ w.t(), "matmul": lambda: lib.matmul(x, w.t()),
        "addmm": lambda: lib.addmm(b, x, w.t()), "bmm": lambda: lib.bmm(x[None], w.t()[None]),
        "baddbmm": lambda: lib.baddbmm(lib.zeros(1, 4, 6), x[None], w.t()[None]),
        "addbmm": lambda: lib.addbmm(lib.zeros(4, 6), x[None], w.t()[None]),
        "conv2d": lambda: F.conv2d(img, cw), "conv1d": lambda: F.conv1d(img[:, :, 0], cw[:, :, 0]),
        "conv_transpose2d": lambda: F.conv_transpose2d(img, conv_t),
        "sdpa": lambda: F.scaled_dot_product_attention(x[None], x[None], x[None]),
        "prelu": lambda: F.prelu(x, lib.tensor([0.1])), "einsum": lambda: lib.einsum("ij,kj->ik", x, w),
        "relu_bf16": lambda: F.relu(xb), "softmax_bf16": lambda: F.softmax(xb, -1),
        "layer_norm_bf16": lambda: F.layer_norm(xb, (8,)), "sum_bf16": lambda: xb.sum(),
        "cross_entropy_bf16": lambda: F.cross_entropy(xb, tgt), "nll_bf16": lambda: F.nll_loss(xb, tgt),
        "mse_bf16": lambda: F.mse_loss(xb, xb), "l1_bf16": lambda: F.l1_loss(xb, xb),
        "bce_logits_bf16": lambda: F.binary_cross_entropy_with_logits(xb, xb.sigmoid()),
        "kl_div_bf16": lambda: F.kl_div(xb, xb, reduction="batchmean"), "smooth_l1_bf16": lambda: F.smooth_l1_loss(xb, xb),
        "add_mixed": lambda: x + xb, "cat_mixed": lambda: lib.cat([x, xb]),
        "embedding": lambda: F.embedding(lib.tensor([1, 2]), w),
    }


def test_op_dtypes_match_torch():
    tops, eops = _ops(torch), _ops(ember)
    with torch.autocast("cpu", dtype=torch.bfloat16), ember.autocast("cpu", dtype=ember.bfloat16):
        for name in tops:
            want, got = tops[name]().dtype, eops[name]().dtype
            assert str(got).split(".")[-1] == str(want).split(".")[-1], name


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_values_match_torch(dtype):
    tops, eops = _ops(torch), _ops(ember)
    with torch.autocast("cpu", dtype=getattr(torch, dtype)), ember.autocast("cpu", dtype=getattr(ember, dtype)):
        for name in ("linear", "mm", "addmm", "bmm", "conv2d", "conv1d", "conv_transpose2d", "sdpa", "prelu"):
            t, e = tops[name](), eops[name]()
            assert str(e.dtype).split(".")[-1] == dtype
            ref = t.float().detach().numpy()
            np.testing.assert_allclose(e.float().detach().numpy(), ref, rtol=2e-2, atol=2e-2 * np.abs(ref).max(),
                                       err_msg=name)


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 4 * 4, 10))


def test_training_step_grads_match_torch():
    torch.manual_seed(0)
    tm, em = _cnn(torch), _cnn(ember)
    em.load_state_dict({k: E(v) for k, v in tm.state_dict().items()})
    x = torch.randn(8, 3, 8, 8)
    y = torch.randint(0, 10, (8,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        tl = torch.nn.functional.cross_entropy(tm(x), y)
    with ember.autocast("cpu"):
        el = ember.nn.functional.cross_entropy(em(E(x)), E(y))
    assert tl.dtype == torch.float32 and el.dtype == ember.float32
    np.testing.assert_allclose(el.item(), tl.item(), rtol=2e-2)
    tl.backward()
    el.backward()
    for (name, tp), ep in zip(tm.named_parameters(), em.parameters()):
        assert ep.grad.dtype == ember.float32, name
        ref = tp.grad.numpy()
        np.testing.assert_allclose(ep.grad.numpy(), ref, rtol=5e-2, atol=5e-2 * np.abs(ref).max(), err_msg=name)


def test_weight_used_twice_gets_both_gradients():
    w = ember.randn(4, 4, requires_grad=True)
    x = ember.randn(2, 4)
    with ember.autocast("cpu"):
        y = (x @ w) @ w
    assert y.dtype == ember.bfloat16
    y.float().sum().backward()
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    xt = torch.tensor(x.numpy())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        yt = (xt @ wt) @ wt
    yt.float().sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=3e-2, atol=3e-2 * np.abs(wt.grad.numpy()).max())


def test_region_state_nesting_and_decorator():
    assert not ember.is_autocast_enabled("cpu") and not ember.is_autocast_enabled()
    x, w = ember.randn(2, 3), ember.randn(3, 3)
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and ember.is_autocast_cpu_enabled()
        assert ember.get_autocast_dtype("cpu") == ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert (x @ w).dtype == ember.float32
        with ember.autocast("cpu", dtype=ember.float16):
            assert (x @ w).dtype == ember.float16
        assert (x @ w).dtype == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")

    @ember.autocast("cpu")
    def f(a, b):
        return a @ b
    assert f(x, w).dtype == ember.bfloat16
    assert (x @ w).dtype == ember.float32
    with ember.amp.autocast(device_type="cpu"):
        assert (x @ w).dtype == ember.bfloat16


def test_warnings_and_errors_match_torch():
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            with lib.autocast("cpu", dtype=lib.float64):
                assert not lib.is_autocast_enabled("cpu")
        assert any("CPU Autocast only supports" in str(r.message) for r in rec)
        with pytest.raises(ValueError):
            lib.autocast(0)


def test_custom_fwd_bwd():
    class MyMM(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            assert not ember.is_autocast_enabled("cpu")
            return a.mm(b)

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g.mm(b.t()), a.t().mm(g)

    a = ember.randn(2, 3, requires_grad=True)
    b = ember.randn(3, 4, requires_grad=True)
    with ember.autocast("cpu"):
        out = MyMM.apply(a.bfloat16(), b)
    assert out.dtype == ember.float32
    out.sum().backward()
    assert a.grad is not None and b.grad.shape == (3, 4)


def test_grad_scaler_matches_torch():
    """Same scale sequence and skipped steps as torch.amp.GradScaler('cpu'), an inf injected once."""
    torch.manual_seed(0)
    tm = torch.nn.Linear(4, 2)
    em = ember.nn.Linear(4, 2)
    em.load_state_dict({k: E(v) for k, v in tm.state_dict().items()})
    topt, eopt = torch.optim.SGD(tm.parameters(), lr=0.1), ember.optim.SGD(em.parameters(), lr=0.1)
    ts = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    es = ember.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    x = torch.randn(3, 4)
    for step in range(6):
        for m, opt, sc, lib, xx in ((tm, topt, ts, torch, x), (em, eopt, es, ember, E(x))):
            opt.zero_grad()
            sc.scale(m(xx).sum()).backward()
            if step == 2:
                with lib.no_grad():
                    m.weight.grad[0, 0] = float("inf")
            sc.step(opt)
            sc.update()
        assert es.get_scale() == ts.get_scale()
        np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    assert es.state_dict()["scale"] == ts.state_dict()["scale"]


def test_cpu_amp_aliases():
    x, w = ember.randn(2, 3), ember.randn(3, 3)
    with pytest.warns(FutureWarning):
        ctx = ember.cpu.amp.autocast()
    with ctx:
        assert (x @ w).dtype == ember.bfloat16
    assert ember.cpu.amp.GradScaler().get_scale() == torch.cpu.amp.GradScaler().get_scale()
