"""F.interpolate / nn.Upsample against torch 2.13: every mode, align_corners, scale_factor,
recompute_scale_factor, gradients, gradgradcheck, argument errors by class, reprs."""
import numpy as np
import pytest

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

CASES = [
    ((2, 3, 5), dict(scale_factor=2.5, mode="nearest")),
    ((2, 3, 5, 7), dict(size=(9, 4), mode="nearest")),
    ((2, 3, 5, 7), dict(size=(9, 4), mode="nearest-exact")),
    ((2, 3, 5, 7), dict(scale_factor=1.7, mode="nearest-exact")),
    ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 5), dict(size=8, mode="linear")),
    ((2, 3, 5), dict(size=8, mode="linear", align_corners=True)),
    ((2, 3, 9), dict(size=4, mode="linear")),  # downsampling
    ((2, 3, 5, 7), dict(scale_factor=(1.5, 0.6), mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=(1.5, 0.6), mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 5, 7), dict(size=(11, 3), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 7), dict(size=(11, 3), mode="bicubic")),
    ((2, 3, 5, 7), dict(scale_factor=2.3, mode="bicubic", align_corners=True)),
    ((2, 3, 5, 7), dict(scale_factor=2.3, mode="bicubic")),
    ((1, 2, 3, 4, 5), dict(size=(5, 3, 7), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="trilinear", align_corners=True)),
    ((2, 3, 6, 7), dict(size=(4, 3), mode="area")),
    # big enough to split the rows of the last dim's kernel over threads
    ((4, 8, 33, 150), dict(scale_factor=2, mode="bilinear")),
    ((4, 8, 33, 150), dict(size=(40, 333), mode="nearest")),
    # (an exact scale: torch computes float32 source coordinates in float, 1e-4 off its float64
    # result at x ~ 300 for scale 2.5; ember computes them in double for every dtype)
    ((2, 8, 17, 150), dict(scale_factor=(1, 2), mode="bicubic")),
    ((2, 3, 6, 7), dict(scale_factor=0.5, mode="area")),
    ((2, 3, 6, 7), dict(size=(6, 7), mode="bilinear")),
    ((2, 3, 1, 1), dict(size=(3, 2), mode="bilinear", align_corners=True)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_interpolate_matches_torch(case, dtype):
    shape, kw = case
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    xe, xt = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ye, yt = EF.interpolate(xe, **kw), TF.interpolate(xt, **kw)
    assert tuple(ye.shape) == tuple(yt.shape)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=tol * 10, atol=tol * 10)


def test_non_contiguous_input():
    a = np.random.default_rng(1).standard_normal((2, 3, 7, 5))
    xe, xt = ember.tensor(a).transpose(2, 3), torch.tensor(a).transpose(2, 3)
    for mode in ("nearest", "bilinear", "bicubic"):
        np.testing.assert_allclose(EF.interpolate(xe, scale_factor=2, mode=mode).numpy(),
                                   TF.interpolate(xt, scale_factor=2, mode=mode).numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area"])
def test_gradcheck(mode):
    x = ember.randn(1, 2, 3, 4, dtype=ember.float64, requires_grad=True)
    f = lambda t: EF.interpolate(t, size=(5, 3), mode=mode)  # noqa: E731
    assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))


ERRORS = [
    ((2, 3, 4, 4), dict(size=4, scale_factor=2)),
    ((2, 3, 4, 4), dict()),
    ((2, 3, 4, 4), dict(size=(4,))),
    ((2, 3, 4, 4), dict(scale_factor=(2, 2, 2))),
    ((2, 3, 4, 4), dict(size=4, mode="nearest", align_corners=True)),
    ((2, 3, 4, 4), dict(size=4, recompute_scale_factor=True)),
    ((2, 3, 4, 4), dict(size=4, mode="linear")),
    ((2, 3, 4), dict(size=4, mode="bilinear")),
    ((2, 3, 4, 4), dict(size=4, mode="foo")),
    ((2, 3, 4, 4, 4), dict(size=4, mode="bicubic")),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_errors_match_torch(case):
    shape, kw = case

    def err(f):
        try:
            f()
        except Exception as ex:  # noqa: BLE001
            return type(ex)
        return None

    tt = err(lambda: TF.interpolate(torch.zeros(*shape), **kw))
    et = err(lambda: EF.interpolate(ember.zeros(*shape), **kw))
    assert tt is not None and et is tt, (et, tt)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2),
    lambda nn: nn.Upsample(size=(5, 6), mode="bilinear", align_corners=True),
    lambda nn: nn.Upsample(scale_factor=(2, 1.5), mode="bicubic"),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=3),
    lambda nn: nn.UpsamplingBilinear2d(size=7),
])
def test_upsample_modules(make):
    me, mt = make(ember.nn), make(torch.nn)
    assert repr(me) == repr(mt)
    a = np.random.default_rng(2).standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(me(ember.tensor(a)).numpy(), mt(torch.tensor(a)).numpy(), rtol=1e-12, atol=1e-12)


# ---- affine_grid / grid_sample ----

@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 5, 4), (2, 3, 3, 5, 4), (2, 1, 1, 3)])
def test_affine_grid(size, align_corners):
    rng = np.random.default_rng(0)
    th = rng.standard_normal((2, 2, 3) if len(size) == 4 else (2, 3, 4))
    te, tt = ember.tensor(th, requires_grad=True), torch.tensor(th, requires_grad=True)
    ge = EF.affine_grid(te, size, align_corners=align_corners)
    gt = TF.affine_grid(tt, size, align_corners=align_corners)
    np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(tuple(gt.shape))
    ge.backward(ember.tensor(g))
    gt.backward(torch.tensor(g))
    np.testing.assert_allclose(te.grad.numpy(), tt.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample(mode, padding_mode, align_corners):
    rng = np.random.default_rng(1)
    a, g = rng.standard_normal((2, 3, 5, 6)), rng.uniform(-1.4, 1.4, (2, 4, 7, 2))
    xe, xt = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ge, gt = ember.tensor(g, requires_grad=True), torch.tensor(g, requires_grad=True)
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    ye, yt = EF.grid_sample(xe, ge, **kw), TF.grid_sample(xt, gt, **kw)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    go = rng.standard_normal(tuple(yt.shape))
    ye.backward(ember.tensor(go))
    yt.backward(torch.tensor(go))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_fused_matches_torch(mode, padding_mode, dtype):
    """Note [Fused grid_sample]: a 3x16x33x20 input (channels-last view, so not contiguous) sampled at a
    3x17x9 grid reaching past the border, on 1 and 2 threads: torch's values, input and grid gradients (the
    grid alone requiring grad too), node name; a second derivative is refused as torch refuses it."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 33, 20, 16)).transpose(0, 3, 1, 2)
    g = rng.uniform(-1.3, 1.3, (3, 17, 9, 2))
    tol = 1e-12 if dtype == "float64" else 2e-5
    go = rng.standard_normal((3, 16, 17, 9))
    before = ember.get_num_threads()
    try:
        for threads, align in ((1, False), (2, True)):
            ember.set_num_threads(threads)
            kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
            xt = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
            gt = torch.tensor(g, dtype=getattr(torch, dtype), requires_grad=True)
            xe = ember.tensor(np.ascontiguousarray(a.transpose(0, 2, 3, 1)), dtype=getattr(ember, dtype))
            xe = xe.permute(0, 3, 1, 2).requires_grad_()
            ge = ember.tensor(g, dtype=getattr(ember, dtype), requires_grad=True)
            yt, ye = TF.grid_sample(xt, gt, **kw), EF.grid_sample(xe, ge, **kw)
            np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
            assert ye.grad_fn.name() == yt.grad_fn.name()
            yt.backward(torch.tensor(go, dtype=yt.dtype))
            ye.backward(ember.tensor(go, dtype=ye.dtype))
            np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
            # (float32 grid gradients: sums over channels of tap differences, rounded differently)
            np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), rtol=5 * tol, atol=100 * tol)
            ge2 = ember.tensor(g, dtype=getattr(ember, dtype), requires_grad=True)
            (gg,) = ember.autograd.grad(EF.grid_sample(xe.detach(), ge2, **kw).sum(), ge2)
            np.testing.assert_allclose(gg.numpy(), ember.autograd.grad(EF.grid_sample(xe, ge, **kw).sum(), ge)[0].numpy())
    finally:
        ember.set_num_threads(before)
    xe = ember.tensor(a, requires_grad=True)
    ge = ember.tensor(g, requires_grad=True)
    (gx,) = ember.autograd.grad(EF.grid_sample(xe, ge, mode=mode).pow(2).sum(), xe, create_graph=True)
    with pytest.raises(NotImplementedError, match="grid_sampler_2d_backward"):
        gx.sum().backward()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_special_values_as_torch(align, mode, padding_mode, dtype):
    """Note [Vectorized grid_sample taps]: inf and NaN in the input stay out of taps out of range but
    reach in-range bilinear taps of weight 0 (0 * inf is NaN, as torch); grid points at pixel centres,
    on the borders (the clip's derivative is 0 there), half-way between pixels (nearest rounds half
    to even), reflected several times, far outside, infinite or NaN; a block boundary (130 points);
    1-pixel planes. Values and, for finite inputs, both gradients against torch's."""
    rng = np.random.default_rng(11)
    tol = 1e-12 if dtype == "float64" else 2e-5
    for shape in ((2, 3, 5, 7), (1, 2, 1, 6), (1, 2, 4, 1), (1, 1, 1, 1)):
        a = rng.standard_normal(shape)
        special = a.copy()
        special[0, 0, 0, -1], special[0, -1, -1, 0], special[-1, -1, shape[2] // 2, shape[3] // 2] = np.inf, np.nan, -np.inf
        H, W = shape[2], shape[3]
        cx = (2 * np.arange(W) + 1) / W - 1 if not align else (np.linspace(-1, 1, W) if W > 1 else np.zeros(1))
        cy = (2 * np.arange(H) + 1) / H - 1 if not align else (np.linspace(-1, 1, H) if H > 1 else np.zeros(1))
        pts = [(x, y) for x in cx for y in cy]  # pixel centres: weight-0 neighbours
        pts += [((x0 + x1) / 2, cy[0]) for x0, x1 in zip(cx[:-1], cx[1:])]  # half-way: nearest's ties
        pts += [(np.nan, 0.0), (0.0, np.nan), (np.inf, 0.2), (-np.inf, -np.inf), (1e30, -1e30), (1.0, 1.0),
                (-1.0, -1.0), (1.05, 0.3), (-1.02, 0.99), (4.7, -3.3), (-9.1, 7.25), (2.0, -2.0)]
        pts += list(rng.uniform(-3.5, 3.5, (130 - len(pts), 2)))
        g = np.array(pts[:130]).reshape(1, 10, 13, 2).repeat(shape[0], 0)
        kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
        ye = EF.grid_sample(ember.tensor(special, dtype=getattr(ember, dtype)), ember.tensor(g, dtype=getattr(ember, dtype)),
                            **kw)
        yt = TF.grid_sample(torch.tensor(special, dtype=getattr(torch, dtype)),
                            torch.tensor(g, dtype=getattr(torch, dtype)), **kw)
        np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=tol, atol=tol)
        finite = np.isfinite(g).all(-1, keepdims=True) & (np.abs(g) < 1e6).all(-1, keepdims=True)
        gf = np.where(finite, g, 0.25)
        go = rng.standard_normal((shape[0], shape[1], 10, 13))
        grads = []
        for lib in (ember, torch):
            x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
            gr = lib.tensor(gf, dtype=getattr(lib, dtype), requires_grad=True)
            (EF if lib is ember else TF).grid_sample(x, gr, **kw).backward(lib.tensor(go, dtype=getattr(lib, dtype)))
            grads.append((x.grad.numpy(), gr.grad.numpy()))
        np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=tol, atol=tol)
        np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=5 * tol, atol=100 * tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d_matches_torch(mode, padding_mode, dtype):
    """5-d grid_sample through the kernels (Note [Vectorized grid_sample taps], 8 taps): a 2x3x5x6x7
    input (a permuted view) at a 2x4x5x7 grid reaching past the borders, plus special points (NaN, inf,
    voxel centres, half-way, borders) in a block of more than 128; values, both gradients, node name,
    on 1 and 2 threads (the same bits); a second derivative raises as torch's."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 5, 6, 7, 3)).transpose(0, 4, 1, 2, 3)
    g = rng.uniform(-1.6, 1.6, (2, 4, 5, 7, 3))
    g[0, 0, 0, :7] = [[np.nan, 0, 0], [0, np.inf, 0], [0, 0, -np.inf], [1, 1, 1], [-1, -1, -1], [0, 0, 0],
                      [1 / 7, -1 / 6, 0.2]]
    finite = np.where(np.isfinite(g), g, 0.3)
    tol = 1e-12 if dtype == "float64" else 2e-5
    go = rng.standard_normal((2, 3, 4, 5, 7))
    before = ember.get_num_threads()
    try:
        results = []
        for threads, align in ((1, False), (2, False), (2, True)):
            ember.set_num_threads(threads)
            kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
            xe = ember.tensor(np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1)), dtype=getattr(ember, dtype))
            xe = xe.permute(0, 4, 1, 2, 3)
            xt = torch.tensor(a, dtype=getattr(torch, dtype))
            np.testing.assert_allclose(
                EF.grid_sample(xe, ember.tensor(g, dtype=getattr(ember, dtype)), **kw).numpy(),
                TF.grid_sample(xt, torch.tensor(g, dtype=getattr(torch, dtype)), **kw).numpy(), rtol=tol, atol=tol)
            xe.requires_grad_(), xt.requires_grad_()
            ge = ember.tensor(finite, dtype=getattr(ember, dtype), requires_grad=True)
            gt = torch.tensor(finite, dtype=getattr(torch, dtype), requires_grad=True)
            ye, yt = EF.grid_sample(xe, ge, **kw), TF.grid_sample(xt, gt, **kw)
            assert ye.grad_fn.name() == yt.grad_fn.name() == "GridSampler3DBackward0"
            ye.backward(ember.tensor(go, dtype=ye.dtype))
            yt.backward(torch.tensor(go, dtype=yt.dtype))
            np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
            np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), rtol=5 * tol, atol=100 * tol)
            results.append(ye.detach().numpy().tobytes() + xe.grad.numpy().tobytes() + ge.grad.numpy().tobytes())
        assert results[0] == results[1]
    finally:
        ember.set_num_threads(before)
    xe = ember.tensor(a, requires_grad=True)
    (gx,) = ember.autograd.grad(EF.grid_sample(xe, ember.tensor(finite), mode=mode).pow(2).sum(), xe,
                                create_graph=True)
    with pytest.raises(NotImplementedError, match="grid_sampler_3d_backward"):
        gx.sum().backward()


@pytest.mark.parametrize("xs,gs", [((0, 3, 4, 4), (0, 2, 2, 2)), ((2, 3, 4, 4), (2, 0, 5, 2)), ((2, 0, 4, 4), (2, 3, 3, 2)),
                                   ((1, 1, 1, 1), (1, 2, 2, 2)), ((2, 3, 0, 4), (2, 2, 2, 2)),
                                   ((2, 3, 2, 2, 0), (2, 2, 2, 2, 3))])
def test_grid_sample_empty_and_tiny_shapes_as_torch(xs, gs):
    """Empty batches, grids and channels give empty results (and gradients); an empty spatial dim of
    the input is torch's RuntimeError."""
    outcome = []
    for lib, F in ((torch, TF), (ember, EF)):
        x, g = lib.ones(*xs, requires_grad=True), lib.zeros(*gs, requires_grad=True)
        try:
            y = F.grid_sample(x, g, align_corners=False)
            y.sum().backward()
            outcome.append(("ok", tuple(y.shape), float(x.grad.sum())))
        except RuntimeError as e:
            outcome.append(("RuntimeError", str(e)))
    assert outcome[0] == outcome[1]


def test_grid_sample_errors():
    x, g = ember.zeros(2, 3, 4, 4), ember.zeros(2, 3, 3, 2)
    with pytest.raises(ValueError):
        EF.grid_sample(x, g, mode="foo")
    with pytest.raises(ValueError):
        EF.grid_sample(x, g, padding_mode="foo")
    with pytest.raises(RuntimeError):
        EF.grid_sample(x, ember.zeros(3, 3, 3, 2))
    with pytest.raises(NotImplementedError):
        EF.grid_sample(x, g, mode="bicubic")
    with pytest.raises(ValueError):
        EF.affine_grid(ember.zeros(2, 3, 3), (2, 3, 4, 4))
    with pytest.raises(NotImplementedError):
        EF.affine_grid(ember.zeros(2, 2, 3), (2, 3, 4))
