"""matmul/mm against torch for every broadcasting case, dtypes, layouts and errors."""
import contextlib

import numpy as np
import pytest

import ember
from conftest import assert_same, same_error, torch

SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
    ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((4, 2, 3), (1, 3, 0)),
]


def pair(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(-4, 5, shape, generator=g).to(getattr(torch, dtype))
    n = t.numel()
    e = ember.arange(n, dtype=ember.float64).reshape(shape) if n else ember.zeros(*shape, dtype=ember.float64)
    flat = t.reshape(-1).tolist()
    ef = e.reshape(-1)
    for i, v in enumerate(flat):
        ef[i] = v
    return e.to(getattr(ember, dtype)), t


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_matmul_shapes(sa, sb, dtype):
    ea, ta = pair(sa, dtype, 1)
    eb, tb = pair(sb, dtype, 2)
    assert_same(ember.matmul(ea, eb), torch.matmul(ta, tb), rtol=1e-2 if dtype == "float16" else None)
    assert_same(ea @ eb, ta @ tb, rtol=1e-2 if dtype == "float16" else None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_and_strided_operands(dtype):
    ea, ta = pair((6, 5), dtype, 3)
    eb, tb = pair((4, 6), dtype, 4)
    assert_same(ea.t() @ eb.t(), ta.t() @ tb.t())
    assert_same(ea[::2, 1:] @ eb[:, ::2][:4], ta[::2, 1:] @ tb[:, ::2][:4])
    assert_same(ember.mm(ea.t(), ea), torch.mm(ta.t(), ta))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_expanded_operands(dtype):
    # stride-0 operands (a sum's gradient, expand) are copied once for BLAS, not run in a scalar loop
    ea, ta = pair((3, 40, 30), dtype, 7)
    ev, tv = pair((30,), dtype, 8)
    assert_same(ember.ones((), dtype=ea.dtype).expand(3, 20, 40) @ ea, torch.ones((), dtype=ta.dtype).expand(3, 20, 40) @ ta,
                rtol=1e-5, atol=1e-5)
    assert_same(ea @ ev[:, None].expand(30, 7), ta @ tv[:, None].expand(30, 7), rtol=1e-5, atol=1e-5)
    assert_same(ember.mm(ea[0], ev[:, None].expand(30, 5)), torch.mm(ta[0], tv[:, None].expand(30, 5)), rtol=1e-5,
                atol=1e-5)


def test_larger_gemm_uses_blas_correctly():
    g = torch.Generator().manual_seed(0)
    ta, tb = torch.randn(130, 70, generator=g), torch.randn(70, 90, generator=g)
    ea, eb = pair((130, 70), "float32", 5)[0], pair((70, 90), "float32", 6)[0]
    ta, tb = pair((130, 70), "float32", 5)[1], pair((70, 90), "float32", 6)[1]
    assert_same(ea @ eb, ta @ tb, rtol=1e-5, atol=1e-4)


def test_errors():
    same_error(lambda: ember.ones(2, 3) @ ember.ones(4, 5), lambda: torch.ones(2, 3) @ torch.ones(4, 5))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        ember.mm(ember.ones(2, 3), ember.ones(4, 5))
    same_error(lambda: ember.ones(3) @ ember.ones(4), lambda: torch.ones(3) @ torch.ones(4))
    same_error(lambda: ember.matmul(ember.ones(()), ember.ones(3)), lambda: torch.matmul(torch.ones(()), torch.ones(3)))
    same_error(lambda: ember.ones(2, 3) @ ember.ones(3, 2, dtype=ember.float64),
               lambda: torch.ones(2, 3) @ torch.ones(3, 2, dtype=torch.float64))
    same_error(lambda: ember.ones(2, 2, 3) @ ember.ones(3, 2, 5), lambda: torch.ones(2, 2, 3) @ torch.ones(3, 2, 5))


@pytest.mark.parametrize("name,sa,sb", [("mm", (3, 4), (4, 5)), ("bmm", (2, 3, 4), (2, 4, 5)),
                                        ("matmul", (2, 3, 4), (4, 5)), ("matmul", (4,), (4,))])
def test_products_out(name, sa, sb):
    a, b = ember.randn(*sa), ember.randn(*sb)
    ta, tb = torch.tensor(a.numpy()), torch.tensor(b.numpy())
    for shape in ((0,), (1, 1), (7,)):  # any shape: resized (with torch's warning when it had elements)
        out, tout = ember.empty(*shape), torch.empty(*shape)
        with pytest.warns(UserWarning, match="was resized") if shape != (0,) else contextlib.nullcontext():
            r = getattr(ember, name)(a, b, out=out)
        with pytest.warns(UserWarning, match="was resized") if shape != (0,) else contextlib.nullcontext():
            getattr(torch, name)(ta, tb, out=tout)
        assert r is out
        assert_same(out, tout)
    if name == "mm":  # out may alias an input: the product is computed first
        x = ember.randn(3, 3)
        y = x @ x
        ember.mm(x, x, out=x)
        assert_same(x, torch.tensor(y.numpy()))
    for bad in (ember.empty(0, dtype=ember.float64),):
        same_error(lambda: getattr(ember, name)(a, b, out=bad),
                   lambda: getattr(torch, name)(ta, tb, out=torch.empty(0, dtype=torch.float64)))
    same_error(lambda: getattr(ember, name)(a.requires_grad_(), b, out=ember.empty(0)),
               lambda: getattr(torch, name)(ta.requires_grad_(), tb, out=torch.empty(0)))


# mm/bmm write out= directly where they can (ops/gemm.h): every product path (tiny, BLAS, MKL, the
# transposed-left copy, 16-bit through float32, bfloat16 on oneDNN, integers, k = 0), out contiguous
# or not, resized or not, aliasing an input, under autocast (out= forms are not autocast), and the
# errors and warnings, all as torch.
OUT_CASES = [
    ("float32", (3, 4), (4, 5), False), ("float32", (128, 256), (256, 128), False),  # tiny; MKL/oneDNN
    ("float32", (256, 256), (256, 64), True),  # a = x^T with rows far apart: c^T = b^T a^T, then a copy
    ("float64", (70, 90), (90, 60), False), ("float64", (256, 130), (130, 70), True),
    ("bfloat16", (40, 64), (64, 48), False), ("float16", (40, 64), (64, 48), False),
    ("int64", (6, 7), (7, 5), False), ("complex64", (6, 7), (7, 5), False), ("float32", (6, 0), (0, 5), False),
]


def _operands(dtype, sa, sb, transposed_left, batch):
    g = torch.Generator().manual_seed(7)
    lead = (batch,) if batch else ()
    if dtype == "int64":
        ta, tb = torch.randint(-5, 6, lead + sa, generator=g), torch.randint(-5, 6, lead + sb, generator=g)
    else:
        t = getattr(torch, dtype)
        ta = (torch.randn(lead + sa[::-1], generator=g).to(t).transpose(-1, -2) if transposed_left
              else torch.randn(lead + sa, generator=g).to(t))
        tb = torch.randn(lead + sb, generator=g).to(t)
    ea = ember.from_numpy(ta.transpose(-1, -2).contiguous().numpy() if dtype not in ("bfloat16",) and transposed_left
                          else ta.contiguous().numpy()) if dtype != "bfloat16" else ember.tensor(ta.float().numpy())
    if dtype == "bfloat16":
        ea = ea.to(ember.bfloat16)
    elif transposed_left:
        ea = ea.transpose(-1, -2)
    eb = ember.tensor(tb.float().numpy()).to(ember.bfloat16) if dtype == "bfloat16" else ember.from_numpy(
        tb.numpy())
    return ea, eb, ta, tb


@pytest.mark.parametrize("batch", [0, 3])
@pytest.mark.parametrize("dtype,sa,sb,transposed_left", OUT_CASES)
def test_mm_bmm_out_every_path_as_torch(dtype, sa, sb, transposed_left, batch):
    import warnings
    name = "bmm" if batch else "mm"
    ea, eb, ta, tb = _operands(dtype, sa, sb, transposed_left, batch)
    # two correct float32 GEMMs (torch's MKL, ember's OpenBLAS/oneDNN on a non-Intel CPU) differ by
    # about sqrt(k) * eps * |terms|: up to 4e-5 at k = 256
    rtol = {"bfloat16": 2e-2, "float16": 2e-3, "float32": 1e-4}.get(dtype)
    te, tt = getattr(ember, dtype), getattr(torch, dtype)
    shape = ((batch,) if batch else ()) + (sa[0], sb[1])
    for out_kind in ("exact", "empty", "other_shape", "transposed"):
        if out_kind == "exact":
            eo, to = ember.full(shape, 9, dtype=te), torch.full(shape, 9, dtype=tt)
        elif out_kind == "empty":
            eo, to = ember.empty(0, dtype=te), torch.empty(0, dtype=tt)
        elif out_kind == "other_shape":
            eo, to = ember.zeros(2, 2, dtype=te), torch.zeros(2, 2, dtype=tt)
        else:  # right shape, not contiguous
            eo = ember.zeros(shape[:-2] + shape[-2:][::-1], dtype=te).transpose(-1, -2)
            to = torch.zeros(shape[:-2] + shape[-2:][::-1], dtype=tt).transpose(-1, -2)
        version = eo._version
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            r = getattr(ember, name)(ea, eb, out=eo)
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            getattr(torch, name)(ta, tb, out=to)
        assert r is eo and eo._version > version
        assert [str(w.message)[:60] for w in we] == [str(w.message)[:60] for w in wt], out_kind
        assert_same(eo, to, rtol=rtol)
        assert eo.stride() == to.stride(), out_kind
    # out aliasing an input (square operands): the product is computed first, as torch's
    if sa[0] == sa[1] == sb[0] == sb[1] and not transposed_left:
        ex, tx = ea.clone(), ta.clone()
        getattr(ember, name)(ex, ex, out=ex)
        getattr(torch, name)(tx, tx, out=tx)
        assert_same(ex, tx, rtol=rtol)
    # under autocast the out= forms compute in the operands' dtype (torch's)
    if dtype == "float32":
        eo, to = ember.empty(shape), torch.empty(shape)
        with ember.autocast("cpu"):
            getattr(ember, name)(ea, eb, out=eo)
        with torch.autocast("cpu"):
            getattr(torch, name)(ta, tb, out=to)
        assert_same(eo, to, rtol=rtol)
        bad_e, bad_t = ember.empty(shape, dtype=ember.bfloat16), torch.empty(shape, dtype=torch.bfloat16)
        with ember.autocast("cpu"), torch.autocast("cpu"):
            same_error(lambda: getattr(ember, name)(ea, eb, out=bad_e), lambda: getattr(torch, name)(ta, tb, out=bad_t))


@pytest.mark.parametrize("name", ["mm", "bmm", "matmul"])
def test_products_out_errors_as_torch(name):
    lead = (2,) if name == "bmm" else ()
    a, b = ember.randn(*lead, 3, 4), ember.randn(*lead, 4, 5)
    ta, tb = torch.tensor(a.numpy()), torch.tensor(b.numpy())
    cases = [
        (lambda: (a, b, ember.empty(0, dtype=ember.float64)), lambda: (ta, tb, torch.empty(0, dtype=torch.float64))),
        (lambda: (a, b, ember.zeros(*lead, 3, 5, requires_grad=True)),  # out itself requires grad
         lambda: (ta, tb, torch.zeros(*lead, 3, 5, requires_grad=True))),
        (lambda: (a.detach().requires_grad_(), b, ember.empty(0)),
         lambda: (ta.detach().requires_grad_(), tb, torch.empty(0))),
        (lambda: (a, ember.randn(*lead, 5, 4), ember.empty(0)),  # bad shapes: no warning, no resize
         lambda: (ta, torch.randn(*lead, 5, 4), torch.empty(0))),
        (lambda: (a, b.double(), ember.empty(0)), lambda: (ta, tb.double(), torch.empty(0))),
    ]
    for make_e, make_t in cases:
        ae, be, oe = make_e()
        at, bt, ot = make_t()
        with pytest.raises(Exception) as err_t:
            getattr(torch, name)(at, bt, out=ot)
        with pytest.raises(Exception) as err_e:
            getattr(ember, name)(ae, be, out=oe)
        assert type(err_e.value) is type(err_t.value), (err_e.value, err_t.value)
        # (mixed operand dtypes: torch's bmm names out's dtype, its mm resizes out first)
        if name != "matmul" and be.dtype == ae.dtype:
            assert str(err_e.value) == str(err_t.value), (err_e.value, err_t.value)
            assert tuple(oe.shape) == tuple(ot.shape)
    # under no_grad a leaf that requires grad may be written (torch's rule for in-place writes)
    with ember.no_grad():
        o = ember.zeros(*lead, 3, 5, requires_grad=True)
        getattr(ember, name)(a, b, out=o)
    assert_same(o.detach(), torch.tensor((a @ b).numpy()))


# ---- addmm with beta = alpha = 1 (nn.Linear): torch's AddmmBackward0, the bias inside the GEMM ----
@pytest.mark.parametrize("rows,cols,out", [(4, 3, 5), (2048, 256, 768)])  # the second takes the fused oneDNN path
def test_linear_records_addmm_backward_like_torch(rows, cols, out):
    res = {}
    for lib in (ember, torch):
        g = torch.Generator().manual_seed(0)
        xt, wt, bt, gt = (torch.randn(*s, generator=g) for s in ((rows, cols), (out, cols), (out,), (rows, out)))
        x, w, b, gy = (lib.tensor(t.tolist(), requires_grad=t is not gt) if lib is ember else
                       t.clone().requires_grad_(t is not gt) for t in (xt, wt, bt, gt))
        y = lib.nn.functional.linear(x, w, b)
        # (torch's accumulator node calls itself "torch::autograd::AccumulateGrad")
        names = [y.grad_fn.name()] + [f.name().split("::")[-1] if f is not None else None
                                      for f, _ in y.grad_fn.next_functions]
        y.backward(gy)
        res[lib.__name__] = (names, y, x.grad, w.grad, b.grad, w.grad.is_contiguous())
    e, t = res["ember"], res["torch"]
    assert e[0][0] == t[0][0] == "AddmmBackward0"
    assert e[0] == t[0]  # the bias and the input go straight to their accumulators, the weight through t()
    assert e[5] and t[5]  # the weight's gradient arrives contiguous (computed in the weight's layout)
    for a, b in zip(e[1:5], t[1:5]):
        assert_same(a.detach(), b.detach(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_addmm_gradcheck(dtype):
    dt = getattr(ember, dtype)
    a = ember.randn(3, dtype=dt, requires_grad=True)
    m1 = ember.randn(4, 2, dtype=dt, requires_grad=True)
    m2 = ember.randn(3, 2, dtype=dt, requires_grad=True)
    f = lambda a, m1, m2: ember.addmm(a, m1, m2.t())  # noqa: E731 - a transposed mat2, as nn.Linear
    assert ember.autograd.gradcheck(f, (a, m1, m2))
    assert ember.autograd.gradgradcheck(f, (a, m1, m2))
    full = ember.randn(4, 3, dtype=dt, requires_grad=True)
    assert ember.autograd.gradcheck(ember.addmm, (full, m1, m2.t().contiguous()))


def test_addmm_forward_ad():
    import ember.autograd.forward_ad as fwAD
    a, m1, m2 = (ember.randn(*s, dtype=ember.float64) for s in ((3,), (4, 2), (2, 3)))
    ta, t1, t2 = (ember.randn(*s, dtype=ember.float64) for s in ((3,), (4, 2), (2, 3)))
    with fwAD.dual_level():
        out = ember.addmm(fwAD.make_dual(a, ta), fwAD.make_dual(m1, t1), fwAD.make_dual(m2, t2))
        tangent = fwAD.unpack_dual(out).tangent
    assert ember.allclose(tangent, ta + t1 @ m2 + m1 @ t2)


@pytest.mark.parametrize("needs", ["weight", "input"])
def test_addmm_saved_tensors_checked_only_where_needed(needs):
    # torch saves mat1 only for mat2's gradient and mat2 only for mat1's: changing the other one in
    # place after the forward is fine, changing the needed one raises at backward.
    for lib in (ember, torch):
        x = lib.randn(4, 3, requires_grad=needs == "input")
        w = lib.randn(5, 3, requires_grad=needs == "weight")
        b = lib.randn(5, requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        with lib.no_grad():
            (w if needs == "weight" else x).add_(1)  # not needed for the wanted gradient
        y.sum().backward(retain_graph=True)
        with lib.no_grad():
            (x if needs == "weight" else w).add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_addmm_fused_bias_matches_float64():
    x, w, b = ember.randn(1024, 512), ember.randn(768, 512), ember.randn(768)
    ref = x.double() @ w.double().t() + b.double()
    for mat1 in (x, x[:, :].contiguous()):
        got = ember.addmm(b, mat1, w.t())
        assert (got.double() - ref).abs().max().item() < 1e-3
    got = ember.addmm(b, x, w.t().contiguous())  # row-major mat2
    assert (got.double() - ref).abs().max().item() < 1e-3


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_attention_head_operands_fold_with_their_layout(dtype):
    # q @ k^T and att @ v on head views of one (B, T, 3C) tensor: batch dims that do not merge, and
    # a column-major k^T (copied column-major when folded). Values and gradients as torch's.
    x = np.random.default_rng(0).standard_normal((2, 5, 3 * 12)).astype(dtype)

    def heads(lib, t):
        q, k, v = t.split(12, dim=2)
        q, k, v = (u.reshape(2, 5, 3, 4).transpose(1, 2) for u in (q, k, v))
        att = lib.matmul(q, k.transpose(-2, -1)).softmax(-1)
        return lib.matmul(att, v)

    xe = ember.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ye, yt = heads(ember, xe), heads(torch, xt)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


def test_mm_gradient_of_a_transposed_weight_comes_in_its_layout():
    # x @ w.t() (a Linear without bias): w's gradient is computed as (g^T x), so .grad is dense
    # without a transposing copy; values as torch's, complex included.
    for dtype in ("float64", "complex128"):
        x = np.random.default_rng(0).standard_normal((5, 3)).astype(dtype)
        w = np.random.default_rng(1).standard_normal((4, 3)).astype(dtype)
        g = np.random.default_rng(2).standard_normal((5, 4)).astype(dtype)
        we, wt = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        (ember.tensor(x) @ we.t()).backward(ember.tensor(g))
        (torch.tensor(x) @ wt.t()).backward(torch.tensor(g))
        assert we.grad.is_contiguous()
        np.testing.assert_allclose(we.grad.numpy(), wt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tiny_products_every_tile_shape(dtype):
    """Note [Tiny GEMM] (cpu/gemm_kernels.cpp): products of at most 64^3 multiply-adds run in register
    tiles of up to 4 rows by 3 vectors plus a column tail; every row count 1-9 and column count
    1-40 against float64 numpy, with transposed/strided left operands, expanded right rows, and
    the same bits for 1 and 2 threads."""
    rng = np.random.default_rng(0)
    tol = 1e-5 if dtype == "float32" else 1e-13
    for m in range(1, 10):
        for n in list(range(1, 26)) + [32, 40]:
            k = max(1, min(13, 4096 // (m * n)))
            a = rng.standard_normal((m, k)).astype(dtype)
            b = rng.standard_normal((k, n)).astype(dtype)
            ref = a.astype(np.float64) @ b.astype(np.float64)
            ea, eb = ember.tensor(a), ember.tensor(b)
            np.testing.assert_allclose((ea @ eb).numpy(), ref, rtol=tol, atol=tol * k)
            at = ember.tensor(np.ascontiguousarray(a.T)).t()  # column-major left operand
            np.testing.assert_allclose((at @ eb).numpy(), ref, rtol=tol, atol=tol * k)
    for m, n, k in ((64, 64, 64), (33, 61, 50), (63, 17, 64), (2, 100, 64)):  # up to the 64^3 bound
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose((ember.tensor(a) @ ember.tensor(b)).numpy(), ref, rtol=tol, atol=tol * k)
    # batches: strided batch, expanded rows of b (stride 0), 1 and 2 threads
    a = rng.standard_normal((64, 7, 2, 9)).astype(dtype)[:, :, 1, :]
    row = rng.standard_normal((64, 1, 11)).astype(dtype)
    ea, eb = ember.tensor(np.ascontiguousarray(a)), ember.tensor(row).expand(64, 9, 11)
    ref = np.einsum("bik,bkj->bij", a.astype(np.float64), np.broadcast_to(row, (64, 9, 11)).astype(np.float64))
    before = ember.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            ember.set_num_threads(threads)
            outs.append(ember.bmm(ea, eb).numpy())
    finally:
        ember.set_num_threads(before)
    np.testing.assert_allclose(outs[0], ref, rtol=tol, atol=tol * 9)
    assert np.array_equal(outs[0], outs[1])
    # gradients through the tiny path against torch
    ta = torch.randn(32, 5, 6, dtype=getattr(torch, dtype), requires_grad=True)
    tb = torch.randn(32, 6, 10, dtype=getattr(torch, dtype), requires_grad=True)
    ea2 = ember.tensor(ta.detach().numpy()).requires_grad_()
    eb2 = ember.tensor(tb.detach().numpy()).requires_grad_()
    torch.bmm(ta, tb).sum().backward()
    ember.bmm(ea2, eb2).sum().backward()
    np.testing.assert_allclose(ea2.grad.numpy(), ta.grad.numpy(), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(eb2.grad.numpy(), tb.grad.numpy(), rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("sa,sb", SHAPES[:10])
def test_products_are_not_views_and_take_in_place_ops(sa, sb):
    """As torch's (_unsafe_view): a product is never a view of a buffer, so an in-place op on it under
    grad mode works (mm's result, a view made under no_grad, refused one) and records the op itself;
    the gradients through it match torch's; mm / mv / dot / linear without bias likewise."""
    grads = []
    rng = np.random.default_rng(3)
    na, nb = rng.standard_normal(sa), rng.standard_normal(sb)
    for lib in (torch, ember):
        a, b = lib.tensor(na, requires_grad=True), lib.tensor(nb, requires_grad=True)
        y = lib.matmul(a, b)
        assert y._base is None
        y.mul_(2).relu_()
        assert y.grad_fn.name() == "ReluBackward0"
        y.sum().backward()
        grads.append((y.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    x = ember.randn(3, 5, requires_grad=True)
    for y in (ember.mm(x, ember.randn(5, 4)), ember.mv(x, ember.randn(5)), ember.dot(x[0], x[1]),
              ember.nn.functional.linear(x, ember.randn(4, 5))):
        assert y._base is None
        y.add_(1)
        y.sum().backward()
