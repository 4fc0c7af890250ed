"""Attention against torch 2.13: F.scaled_dot_product_attention (masks, is_causal, scale, GQA,
query-block chunking, fully masked rows, dropout, errors, float64 gradcheck), F.multi_head_attention_forward
and nn.MultiheadAttention (outputs, weights, input and parameter gradients over the options,
init, repr, state_dict, errors), the Transformer family (forward and backward in eval mode with
identical weights, repr, state_dict keys, errors) and the Lazy batch/instance norms."""
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn._functional_attn as attn_impl
import ember.nn.functional as EF
from conftest import assert_same, torch
from nn_ref import same_exception

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")

TF = torch.nn.functional
TOL = {torch.float32: 2e-5, torch.float64: 1e-10}


def E(t, requires_grad=None):
    """The same tensor in ember (ember.tensor of the numpy values), requires_grad as t (or given)."""
    e = ember.tensor(t.detach().numpy())
    rg = t.requires_grad if requires_grad is None else requires_grad
    return e.requires_grad_() if rg else e


def close(e, t, tol):
    assert e is not None and t is not None
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def rnd(*shape, dtype=torch.float64, seed=0, rg=True):
    return torch.randn(*shape, generator=gen(seed), dtype=dtype).requires_grad_(rg)


def load(em, tm):
    """Copies torch module tm's state into ember module em (strict: same keys)."""
    em.load_state_dict({k: E(v) for k, v in tm.state_dict().items()})


# ---------------------------------------------------------------- scaled_dot_product_attention

def _bool_mask(shape, seed, dead_row=None):
    m = torch.rand(*shape, generator=gen(seed)) > 0.4
    if dead_row is not None:
        m[..., dead_row, :] = False
    return m


def _float_mask(shape, seed, dtype, dead_row=None):
    m = torch.randn(*shape, generator=gen(seed), dtype=dtype)
    m = m.masked_fill(torch.rand(*shape, generator=gen(seed + 1)) > 0.7, float("-inf"))
    if dead_row is not None:
        m[..., dead_row, :] = float("-inf")
    return m


# (name, q shape, k shape, v shape, mask factory(dtype) or None, kwargs)
SDPA_CASES = [
    ("plain4d", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), None, {}),
    ("plain3d_ev", (2, 5, 4), (2, 6, 4), (2, 6, 7), None, {}),
    ("plain2d", (5, 4), (6, 4), (6, 4), None, {}),
    ("plain5d", (2, 2, 2, 3, 4), (2, 2, 2, 5, 4), (2, 2, 2, 5, 4), None, {}),
    ("batch_bcast", (2, 3, 5, 4), (1, 3, 6, 4), (2, 1, 6, 4), None, {}),
    ("scale", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), None, dict(scale=0.3)),
    ("bool2d", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), lambda dt: _bool_mask((5, 6), 1), {}),
    ("bool_dead_row", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), lambda dt: _bool_mask((5, 6), 2, dead_row=1), {}),
    ("bool_bcast", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), lambda dt: _bool_mask((2, 1, 5, 6), 3, dead_row=4), {}),
    ("bool_1d", (2, 5, 4), (2, 6, 4), (2, 6, 4), lambda dt: _bool_mask((6,), 4), {}),
    ("bool_rowbcast", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), lambda dt: _bool_mask((3, 1, 6), 5), {}),
    ("float2d", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), lambda dt: _float_mask((5, 6), 6, dt), {}),
    ("float_dead_row", (2, 5, 4), (2, 6, 4), (2, 6, 4), lambda dt: _float_mask((2, 5, 6), 7, dt, dead_row=0), {}),
    ("float32_mask", (2, 5, 4), (2, 6, 4), (2, 6, 4), lambda dt: _float_mask((5, 6), 8, torch.float32), {}),
    ("causal_l_lt_s", (2, 3, 4, 4), (2, 3, 6, 4), (2, 3, 6, 4), None, dict(is_causal=True)),
    ("causal_l_gt_s", (2, 6, 4), (2, 4, 4), (2, 4, 4), None, dict(is_causal=True)),
    ("causal_square_scale", (2, 2, 5, 3), (2, 2, 5, 3), (2, 2, 5, 3), None, dict(is_causal=True, scale=1.7)),
    # longer than a causal block (64 query rows): each block stops at its last row's keys
    ("causal_blocks", (2, 2, 150, 8), (2, 2, 150, 8), (2, 2, 150, 5), None, dict(is_causal=True)),
    ("causal_blocks_l_gt_s", (1, 2, 150, 8), (1, 2, 70, 8), (1, 2, 70, 8), None, dict(is_causal=True)),
    ("causal_blocks_l_lt_s", (1, 2, 70, 8), (1, 2, 150, 8), (1, 2, 150, 8), None, dict(is_causal=True)),
    ("causal_one_entry", (129, 16), (129, 16), (129, 16), None, dict(is_causal=True)),
    ("gqa", (2, 6, 5, 4), (2, 2, 6, 4), (2, 3, 6, 4), None, dict(enable_gqa=True)),
    ("gqa_mask_3d", (6, 5, 4), (3, 6, 4), (3, 6, 4), lambda dt: _bool_mask((5, 6), 9), dict(enable_gqa=True)),
    ("gqa_causal", (1, 4, 5, 4), (1, 1, 5, 4), (1, 1, 5, 4), None, dict(enable_gqa=True, is_causal=True)),
    ("empty_s", (2, 3, 4), (2, 0, 4), (2, 0, 4), None, {}),
]


def _sdpa_both(case, dtype, mask_grad=False):
    name, qs, ks, vs, mk, kw = case
    q, k, v = rnd(*qs, dtype=dtype, seed=10), rnd(*ks, dtype=dtype, seed=11), rnd(*vs, dtype=dtype, seed=12)
    mask = mk(dtype) if mk else None
    if mask is not None and mask_grad and mask.is_floating_point():
        mask.requires_grad_()
    eq, ek, ev = E(q), E(k), E(v)
    emask = None if mask is None else E(mask)
    ot = TF.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
    oe = EF.scaled_dot_product_attention(eq, ek, ev, attn_mask=emask, **kw)
    return (q, k, v, mask, ot), (eq, ek, ev, emask, oe)


@pytest.fixture(params=["fused", "composite"])
def sdpa_path(request, monkeypatch):
    """Runs a test through the fused C++ op and through the composition of ops."""
    monkeypatch.setattr(attn_impl, "_FUSED", request.param == "fused")
    return request.param


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_values_and_grads(case, dtype, sdpa_path):
    (q, k, v, mask, ot), (eq, ek, ev, emask, oe) = _sdpa_both(case, dtype, mask_grad=True)
    tol = TOL[dtype]
    assert oe.dtype == getattr(ember, str(dtype).split(".")[-1])
    close(oe, ot, tol)
    if ot.numel() == 0 or q.shape[-2] * k.shape[-2] == 0:
        return
    w = torch.rand(ot.shape, generator=gen(3), dtype=dtype) + 0.5
    (ot * w).sum().backward()
    (oe * E(w)).sum().backward()
    pairs = [(eq, q), (ek, k), (ev, v)]
    if mask is not None and mask.requires_grad:
        pairs.append((emask, mask))
    for a, b in pairs:
        close(a.grad, b.grad, tol * 10)


def test_sdpa_fully_masked_rows_are_zero(sdpa_path):
    # torch 2.13 on CPU: a row with no admitted key gives 0 (not NaN), and no gradient
    q, k, v = rnd(1, 2, 3, 4, seed=1), rnd(1, 2, 5, 4, seed=2), rnd(1, 2, 5, 4, seed=3)
    m = torch.ones(3, 5, dtype=torch.bool)
    m[1] = False
    eq, ek, ev = E(q), E(k), E(v)
    oe = EF.scaled_dot_product_attention(eq, ek, ev, attn_mask=E(m))
    ot = TF.scaled_dot_product_attention(q, k, v, attn_mask=m)
    assert_same(oe, ot)
    assert not bool(oe[:, :, 1].abs().sum())
    oe.sum().backward()
    assert not bool(ember.isnan(eq.grad).any())
    assert not bool(eq.grad[:, :, 1].abs().sum())


@pytest.mark.parametrize("case", [c for c in SDPA_CASES if c[0] in (
    "plain4d", "bool_dead_row", "bool_bcast", "bool_1d", "bool_rowbcast", "float_dead_row", "causal_l_lt_s",
    "causal_l_gt_s", "gqa_causal", "batch_bcast")], ids=lambda c: c[0])
def test_sdpa_query_blocks(case, monkeypatch):
    """Small block budget: the queries run in blocks of rows; same values and gradients."""
    monkeypatch.setattr(attn_impl, "_FUSED", False)
    monkeypatch.setattr(attn_impl, "_SDPA_BLOCK_ELEMS", 20)
    calls = []
    orig = attn_impl._attention_block
    monkeypatch.setattr(attn_impl, "_attention_block", lambda *a: calls.append(a[0].shape[-2]) or orig(*a))
    (q, k, v, mask, ot), (eq, ek, ev, emask, oe) = _sdpa_both(case, torch.float64)
    assert len(calls) > 1 and sum(calls) == q.shape[-2]
    close(oe, ot, 1e-10)
    ot.sum().backward()
    oe.sum().backward()
    for a, b in ((eq, q), (ek, k), (ev, v)):
        close(a.grad, b.grad, 1e-9)


def test_sdpa_large_default_blocks(monkeypatch):
    # past the default budget (2**22 score elements) the queries are split; values as torch
    monkeypatch.setattr(attn_impl, "_FUSED", False)
    calls = []
    orig = attn_impl._attention_block
    monkeypatch.setattr(attn_impl, "_attention_block", lambda *a: calls.append(a[0].shape[-2]) or orig(*a))
    L, S = 2100, 2100
    q, k, v = rnd(1, L, 8, dtype=torch.float32, rg=False), rnd(1, S, 8, dtype=torch.float32, seed=1, rg=False), \
        rnd(1, S, 8, dtype=torch.float32, seed=2, rg=False)
    with ember.no_grad():
        oe = EF.scaled_dot_product_attention(E(q), E(k), E(v), is_causal=True)
    close(oe, TF.scaled_dot_product_attention(q, k, v, is_causal=True), 1e-5)
    assert len(calls) == 2 and sum(calls) == L


GRADCHECK_CASES = [
    # (id, q shape, k shape, v shape, mask or None, kwargs)
    ("bool_dead_row", (2, 3, 4), (2, 4, 4), (2, 4, 3), _bool_mask((3, 4), 2, dead_row=1), {}),
    ("float_dead_row", (2, 3, 4), (2, 4, 4), (2, 4, 4), _float_mask((2, 3, 4), 7, torch.float64, dead_row=0), {}),
    ("causal_l_gt_s", (2, 4, 3), (2, 3, 3), (2, 3, 3), None, dict(is_causal=True)),
    ("gqa_scale", (1, 4, 3, 2), (1, 2, 4, 2), (1, 1, 4, 2), None, dict(enable_gqa=True, scale=0.7)),
    ("bool_bcast", (2, 2, 3, 2), (2, 2, 4, 2), (2, 2, 4, 2), _bool_mask((2, 1, 3, 4), 3, dead_row=2), {}),
]


@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=[c[0] for c in GRADCHECK_CASES])
@pytest.mark.parametrize("blocks", [False, True, "fused"], ids=["whole", "blocks", "fused"])
def test_sdpa_gradcheck(case, blocks, monkeypatch):
    _, qs, ks, vs, mask, kw = case
    monkeypatch.setattr(attn_impl, "_FUSED", blocks == "fused")
    if blocks is True:
        monkeypatch.setattr(attn_impl, "_SDPA_BLOCK_ELEMS", 8)
    inputs = tuple(E(rnd(*s, seed=20 + i)) for i, s in enumerate((qs, ks, vs)))
    if mask is not None and mask.is_floating_point():
        inputs = inputs + (E(mask).requires_grad_(),)
        fn = lambda q, k, v, m: EF.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)  # noqa: E731
    else:
        emask = None if mask is None else E(mask)
        fn = lambda q, k, v: EF.scaled_dot_product_attention(q, k, v, attn_mask=emask, **kw)  # noqa: E731
    assert ember.autograd.gradcheck(fn, inputs)
    if blocks is not True and case[0] in ("bool_dead_row", "causal_l_gt_s", "gqa_scale", "bool_bcast"):
        assert ember.autograd.gradgradcheck(fn, inputs)


def test_sdpa_dropout():
    q, k = rnd(4, 64, 8, rg=False), rnd(4, 32, 8, seed=1, rg=False)
    v = torch.ones(4, 32, 5, dtype=torch.float64)
    eq, ek, ev = E(q), E(k), E(v)
    base = EF.scaled_dot_product_attention(eq, ek, ev)
    np.testing.assert_allclose(base.numpy(), 1.0, rtol=1e-12)  # weights sum to 1
    ember.manual_seed(0)
    d = EF.scaled_dot_product_attention(eq, ek, ev, dropout_p=0.5)
    dn = d.numpy()
    assert not np.allclose(dn, 1.0)  # dropout happened
    assert abs(dn.mean() - 1.0) < 0.1  # kept weights scaled by 1 / (1 - p)
    # every output element is a sum of kept weights * 2: the same across the Ev columns
    np.testing.assert_allclose(dn, dn[..., :1].repeat(5, -1))
    # p = 0 and p < 0 apply none; p = 1 drops everything (as torch)
    assert_same(EF.scaled_dot_product_attention(eq, ek, ev, dropout_p=-0.5), base.detach().clone())
    z = EF.scaled_dot_product_attention(eq, ek, ev, dropout_p=1.0)
    assert not bool(z.abs().sum())


def test_sdpa_gqa_head_order():
    # query head h uses key/value head h // (Hq / Hkv)
    q, k, v = rnd(1, 4, 3, 2, rg=False), rnd(1, 2, 5, 2, seed=1, rg=False), rnd(1, 2, 5, 2, seed=2, rg=False)
    out = EF.scaled_dot_product_attention(E(q), E(k), E(v), enable_gqa=True)
    for h in range(4):
        ref = TF.scaled_dot_product_attention(q[:, h], k[:, h // 2], v[:, h // 2])
        close(out[:, h], ref, 1e-12)


def _r(*s, dtype=torch.float32):
    return torch.randn(*s, generator=gen(0), dtype=dtype)


@pytest.mark.parametrize("args,kw", [
    ((_r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 4)), dict(attn_mask=torch.ones(3, 5, dtype=torch.bool), is_causal=True)),
    ((_r(2, 3, 4), _r(2, 5, 4, dtype=torch.float64), _r(2, 5, 4)), {}),
    ((_r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 4)), dict(attn_mask=torch.ones(3, 5, dtype=torch.int64))),
    ((_r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 4)), dict(attn_mask=torch.ones(3, 5, dtype=torch.float64))),
    ((_r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 4)), dict(attn_mask=torch.ones(4, 5, dtype=torch.bool))),
    ((_r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 4)), dict(attn_mask=torch.ones(1, 2, 3, 5, dtype=torch.bool))),
    ((_r(2, 3, 4), _r(2, 5, 3), _r(2, 5, 4)), {}),
    ((_r(2, 3, 4), _r(2, 5, 4), _r(2, 6, 4)), {}),
    ((_r(4), _r(4), _r(4)), {}),
    ((_r(2, 3, 3, 4), _r(3, 3, 5, 4), _r(3, 3, 5, 4)), {}),
    ((_r(2, 6, 3, 4), _r(2, 2, 5, 4), _r(2, 2, 5, 4)), {}),  # head mismatch without enable_gqa
    ((_r(2, 6, 3, 4), _r(2, 4, 5, 4), _r(2, 4, 5, 4)), dict(enable_gqa=True)),
    ((torch.ones(2, 3, 4, dtype=torch.int64),) * 3, {}),
])
def test_sdpa_errors(args, kw, sdpa_path):
    same_exception(lambda lib, F, *a: F.scaled_dot_product_attention(*a, **kw), *args)


# ---------------------------------------------------------------- MultiheadAttention

def _mha_pair(dtype=torch.float64, **kw):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(dtype=dtype, **kw)
    em = ember.nn.MultiheadAttention(dtype=getattr(ember, str(dtype).split(".")[-1]), **kw)
    with torch.no_grad():  # non-zero biases so their gradients and use are visible
        for n, p in tm.named_parameters():
            if "bias" in n:
                p.copy_(torch.randn(p.shape, generator=gen(len(n)), dtype=dtype) * 0.5)
    load(em, tm)
    return em, tm


def _kpm(n, s, kind, dtype, seed=5):
    m = torch.rand(n, s, generator=gen(seed)) > 0.7
    m[:, 0] = False  # every sequence keeps a key
    if kind == "bool":
        return m
    return torch.zeros(n, s, dtype=dtype).masked_fill(m, -1e4) + torch.rand(n, s, generator=gen(seed), dtype=dtype)


def _amask(shape, kind, dtype, seed=6):
    m = torch.rand(*shape, generator=gen(seed)) > 0.7
    m[..., 0] = False
    if kind == "bool":
        return m
    return torch.randn(*shape, generator=gen(seed), dtype=dtype).masked_fill(m, float("-inf"))


# (id, constructor kwargs, forward options)
E_, H_ = 8, 2
MHA_CASES = [
    ("self", dict(), dict(inputs="self")),
    ("self_noavg", dict(), dict(inputs="self", average_attn_weights=False)),
    ("cross_kv_same", dict(), dict(inputs="kv")),
    ("distinct_qkv", dict(), dict(inputs="qkv")),
    ("kdim_vdim", dict(kdim=5, vdim=3), dict(inputs="qkv")),
    ("kdim_only", dict(kdim=6), dict(inputs="qkv", need_weights=False)),
    ("nobias", dict(bias=False), dict(inputs="qkv")),
    ("bias_kv", dict(add_bias_kv=True), dict(inputs="qkv", kpm="bool", attn="bool2")),
    ("zero_attn", dict(add_zero_attn=True), dict(inputs="qkv", kpm="float", attn="float3")),
    ("bias_kv_zero_attn_sep", dict(add_bias_kv=True, add_zero_attn=True, kdim=4, vdim=6),
     dict(inputs="qkv", attn="bool3", need_weights=False)),
    ("batch_first", dict(batch_first=True), dict(inputs="self", kpm="bool")),
    ("batch_first_cross", dict(batch_first=True), dict(inputs="kv", attn="float2", need_weights=False)),
    ("kpm_bool", dict(), dict(inputs="qkv", kpm="bool")),
    ("kpm_float_noweights", dict(), dict(inputs="qkv", kpm="float", need_weights=False)),
    ("attn_bool2", dict(), dict(inputs="qkv", attn="bool2")),
    ("attn_float3_noweights", dict(), dict(inputs="qkv", attn="float3", need_weights=False)),
    ("both_masks", dict(), dict(inputs="qkv", attn="bool3", kpm="bool", average_attn_weights=False)),
    ("causal_hint", dict(), dict(inputs="self", attn="causal", is_causal=True, need_weights=False)),
    ("causal_hint_weights", dict(), dict(inputs="self", attn="causal", is_causal=True)),
    ("causal_hint_kpm", dict(), dict(inputs="self", attn="causal", is_causal=True, kpm="bool", need_weights=False)),
    ("unbatched", dict(), dict(inputs="qkv", unbatched=True, kpm="bool", attn="bool3")),
    ("unbatched_bf_noweights", dict(batch_first=True, kdim=5, vdim=3), dict(inputs="qkv", unbatched=True,
                                                                           need_weights=False, attn="float2")),
]


def _mha_run(em, tm, kw, dtype, opts):
    L, S, N = 4, 5, 3
    unbatched = opts.get("unbatched", False)
    kdim, vdim = kw.get("kdim") or E_, kw.get("vdim") or E_
    bf = kw.get("batch_first", False)
    if opts["inputs"] == "self":
        S = L

    def seq(length, dim, seed):
        if unbatched:
            return rnd(length, dim, dtype=dtype, seed=seed)
        return rnd(N, length, dim, dtype=dtype, seed=seed) if bf else rnd(length, N, dim, dtype=dtype, seed=seed)

    q = seq(L, E_, 1)
    if opts["inputs"] == "self":
        tin = (q, q, q)
    elif opts["inputs"] == "kv":
        kv = seq(S, kdim, 2)
        tin = (q, kv, kv)
    else:
        tin = (q, seq(S, kdim, 2), seq(S, vdim, 3))
    memo = {}
    ein = tuple(memo.setdefault(id(t), E(t)) for t in tin)  # keep "query is key" identities
    fkw = {k: v for k, v in opts.items() if k in ("need_weights", "average_attn_weights", "is_causal")}
    tk, ek = dict(fkw), dict(fkw)
    if "kpm" in opts:
        m = _kpm(N, S, opts["kpm"], dtype)
        if unbatched:
            m = m[0]
        tk["key_padding_mask"], ek["key_padding_mask"] = m, E(m)
    if "attn" in opts:
        a = opts["attn"]
        if a == "causal":
            m = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=dtype)
        elif a.endswith("2"):
            m = _amask((L, S), a[:-1], dtype)
        else:
            m = _amask(((1 if unbatched else N) * H_, L, S), a[:-1], dtype)
        tk["attn_mask"], ek["attn_mask"] = m, E(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to, tw = tm(*tin, **tk)
        eo, ew = em(*ein, **ek)
    return tin, ein, (to, tw), (eo, ew)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_mha_values_and_grads(case, dtype):
    _, kw, opts = case
    em, tm = _mha_pair(dtype, embed_dim=E_, num_heads=H_, **kw)
    tin, ein, (to, tw), (eo, ew) = _mha_run(em, tm, kw, dtype, opts)
    tol = TOL[dtype]
    close(eo, to, tol)
    if tw is None:
        assert ew is None
    else:
        close(ew, tw, tol)
    g = torch.rand(to.shape, generator=gen(9), dtype=dtype) + 0.5
    loss_t = (to * g).sum() + (0 if tw is None else (tw * tw).sum())
    loss_e = (eo * E(g)).sum() + (0 if ew is None else (ew * ew).sum())
    loss_t.backward()
    loss_e.backward()
    seen = set()
    for a, b in zip(ein, tin):
        if id(b) not in seen:
            seen.add(id(b))
            close(a.grad, b.grad, tol * 20)
    ep = dict(em.named_parameters())
    for n, p in tm.named_parameters():
        close(ep[n].grad, p.grad, tol * 20)


def test_mha_fully_masked_rows():
    # need_weights: explicit softmax, NaN rows as torch; need_weights=False: scaled_dot_product_attention's zeros
    em, tm = _mha_pair(torch.float64, embed_dim=E_, num_heads=H_)
    q = rnd(3, 2, E_, rg=False)
    kpm = torch.tensor([[True, True, True], [False, True, False]])
    for nw in (True, False):
        to, tw = tm(q, q, q, key_padding_mask=kpm, need_weights=nw)
        eo, ew = em(E(q), E(q), E(q), key_padding_mask=E(kpm), need_weights=nw)
        assert_same(eo, to.detach())
        if nw:
            assert_same(ew, tw.detach())
            assert bool(ember.isnan(eo[:, 0]).all())
        else:
            assert ew is None and not bool(ember.isnan(eo).any())


def test_mha_eval_no_grad():
    # torch takes its fused fast path here (eval, no grad, batch_first self-attention); values agree
    em, tm = _mha_pair(torch.float32, embed_dim=E_, num_heads=H_, batch_first=True)
    tm.eval()
    em.eval()
    x = rnd(2, 5, E_, dtype=torch.float32, rg=False)
    kpm = _kpm(2, 5, "bool", torch.float32)
    with torch.no_grad(), ember.no_grad():
        to, tw = tm(x, x, x, key_padding_mask=kpm)
        eo, ew = em(E(x), E(x), E(x), key_padding_mask=E(kpm))
    close(eo, to, 1e-5)
    close(ew, tw, 1e-5)


def test_mha_dropout_training_and_eval():
    em, _ = _mha_pair(torch.float64, embed_dim=E_, num_heads=H_, dropout=0.5)
    x = E(rnd(4, 2, E_, rg=False))
    em.train()
    _, w1 = em(x, x, x, average_attn_weights=False)
    assert bool((w1 == 0).any())  # dropped weights
    em.eval()
    _, w2 = em(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(w2.detach().sum(-1).numpy(), 1.0, rtol=1e-12)


def test_mha_functional_matches_torch():
    torch.manual_seed(1)
    tm = torch.nn.MultiheadAttention(E_, H_, add_bias_kv=True, dtype=torch.float64)
    q, k = rnd(3, 2, E_, seed=1), rnd(4, 2, E_, seed=2)
    args_t = (q, k, k, E_, H_, tm.in_proj_weight, tm.in_proj_bias, tm.bias_k, tm.bias_v, True, 0.0,
              tm.out_proj.weight, tm.out_proj.bias)
    args_e = tuple(E(a) if isinstance(a, torch.Tensor) else a for a in args_t)
    ot, wt = TF.multi_head_attention_forward(*args_t, training=False, average_attn_weights=False)
    oe, we = EF.multi_head_attention_forward(*args_e, training=False, average_attn_weights=False)
    close(oe, ot, 1e-10)
    close(we, wt, 1e-10)
    # static_k / static_v replace the projected key/value
    sk, sv = rnd(2 * H_, 6, E_ // H_, seed=3, rg=False), rnd(2 * H_, 6, E_ // H_, seed=4, rg=False)
    kw = dict(training=False, static_k=sk, static_v=sv)
    args_t = args_t[:7] + (None, None) + args_t[9:]
    args_e = args_e[:7] + (None, None) + args_e[9:]
    ot, wt = TF.multi_head_attention_forward(*args_t, **kw)
    oe, we = EF.multi_head_attention_forward(*args_e, **{**kw, "static_k": E(sk), "static_v": E(sv)})
    close(oe, ot, 1e-10)
    close(we, wt, 1e-10)


def test_mha_gradcheck():
    em, _ = _mha_pair(torch.float64, embed_dim=4, num_heads=2, add_bias_kv=True)
    q, k = E(rnd(3, 2, 4, seed=1)), E(rnd(2, 2, 4, seed=2))
    kpm = E(torch.tensor([[False, True], [False, False]]))

    def f(q, k):
        return em(q, k, k, key_padding_mask=kpm)

    assert ember.autograd.gradcheck(f, (q, k))


@pytest.mark.parametrize("kw", [
    dict(embed_dim=8, num_heads=2), dict(embed_dim=8, num_heads=2, kdim=4, vdim=6, bias=False),
    dict(embed_dim=6, num_heads=3, add_bias_kv=True, add_zero_attn=True, batch_first=True),
    dict(embed_dim=4, num_heads=1, vdim=2, add_bias_kv=True),
])
def test_mha_structure(kw):
    tm, em = torch.nn.MultiheadAttention(**kw), ember.nn.MultiheadAttention(**kw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert list(em._parameters) == list(tm._parameters)
    for a in ("embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads", "dropout", "batch_first", "head_dim",
              "add_zero_attn"):
        assert getattr(em, a) == getattr(tm, a), a
    assert (em.bias_k is None) == (tm.bias_k is None)
    assert type(em.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(em.out_proj, ember.nn.Linear)


def test_mha_default_init():
    E2 = 64
    m = ember.nn.MultiheadAttention(E2, 4, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6.0 / (E2 + 3 * E2))  # xavier_uniform_ on (3E, E)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()
    wo = m.out_proj.weight.detach().numpy()  # Linear's default: U(-1/sqrt(E), 1/sqrt(E))
    assert np.abs(wo).max() <= 1 / math.sqrt(E2) and np.abs(wo).max() > 0.9 / math.sqrt(E2)
    bk = m.bias_k.detach().numpy()  # xavier_normal_ on (1, 1, E): std sqrt(2 / (E + E))
    assert abs(bk.std() - math.sqrt(2.0 / (2 * E2))) < 0.5 * math.sqrt(2.0 / (2 * E2))
    sep = ember.nn.MultiheadAttention(E2, 4, kdim=16)
    kb = math.sqrt(6.0 / (E2 + 16))
    assert np.abs(sep.k_proj_weight.detach().numpy()).max() <= kb
    assert np.abs(sep.k_proj_weight.detach().numpy()).max() > 0.9 * kb


def _mha_call(kw, fkw):
    def fn(lib, F, *ts):
        m = lib.nn.MultiheadAttention(**kw)
        return m(*ts[:3], **{k: ts[3 + i] for i, k in enumerate(fkw)})
    return fn


@pytest.mark.parametrize("kw,tensors,fkw", [
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 6)] * 3, []),  # wrong embed dim
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 2, 8), _r(5, 2, 8)], []),  # key/value shapes
    (dict(embed_dim=8, num_heads=2), [_r(1, 3, 2, 8)] * 3, []),  # 4-D query
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 8), _r(4, 8)], []),
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 8), torch.zeros(3, 3)], ["attn_mask"]),
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 8), torch.zeros(2, 3, 4)], ["attn_mask"]),
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 8), torch.zeros(4)], ["attn_mask"]),
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 8), torch.zeros(2, 3, dtype=torch.bool)],
     ["key_padding_mask"]),
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 8), torch.zeros(2, 4, dtype=torch.long)],
     ["key_padding_mask"]),
    (dict(embed_dim=8, num_heads=2), [_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 8), torch.zeros(3, 4, dtype=torch.int32)],
     ["attn_mask"]),
    (dict(embed_dim=8, num_heads=2), [_r(3, 8), _r(4, 8), _r(4, 8), torch.zeros(3, 3, 4)], ["attn_mask"]),
    (dict(embed_dim=8, num_heads=2), [_r(3, 8), _r(4, 8), _r(4, 8), torch.zeros(1, 4, dtype=torch.bool)],
     ["key_padding_mask"]),
    (dict(embed_dim=8, num_heads=2, kdim=4, vdim=6), [_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 6)], []),
    (dict(embed_dim=8, num_heads=2, kdim=4, vdim=6), [_r(3, 2, 8), _r(4, 2, 4), _r(5, 2, 6)], []),
])
def test_mha_errors(kw, tensors, fkw):
    same_exception(_mha_call(kw, fkw), *tensors)


def test_mha_constructor_and_hint_errors():
    for args in [(8, 3), (0, 1), (8, 0)]:
        same_exception(lambda lib, F: lib.nn.MultiheadAttention(*args))
    x = _r(3, 2, 8)
    same_exception(lambda lib, F, x: lib.nn.MultiheadAttention(8, 2)(x, x, x, is_causal=True), x)


def test_mha_mismatched_mask_warning():
    m = ember.nn.MultiheadAttention(8, 2)
    x = E(_r(3, 2, 8))
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        m(x, x, x, attn_mask=ember.zeros(3, 3), key_padding_mask=ember.zeros(2, 3, dtype=ember.bool))


# ---------------------------------------------------------------- Transformer family

def _tf_pair(name, *args, **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kw)
    em = getattr(ember.nn, name)(*args, **kw)
    tm = tm.double()
    em = em.double()
    with torch.no_grad():  # perturb norms and biases away from their 1 / 0 init
        for n, p in tm.named_parameters():
            if p.dim() == 1:
                p.add_(torch.randn(p.shape, generator=gen(len(n)), dtype=p.dtype) * 0.3)
    load(em, tm)
    tm.eval()
    em.eval()
    return em, tm


def _check_fwd_bwd(em, tm, tin, ein, tkw, ekw, tol=1e-9):
    to = tm(*tin, **tkw)
    eo = em(*ein, **ekw)
    close(eo, to, tol)
    g = torch.rand(to.shape, generator=gen(4), dtype=to.dtype) + 0.5
    (to * g).sum().backward()
    (eo * E(g)).sum().backward()
    for a, b in zip(ein, tin):
        close(a.grad, b.grad, tol * 10)
    ep = dict(em.named_parameters())
    for n, p in tm.named_parameters():
        close(ep[n].grad, p.grad, tol * 10)


def _masks(kind, L, S, N, dtype=torch.float64, seed=0):
    """(attn_mask, key_padding_mask) pairs as torch tensors (bool: True = masked out)."""
    if kind is None:
        return None, None
    if kind == "causal":
        return torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=dtype), None
    am = _amask((L, S), "bool", dtype, seed)
    kpm = _kpm(N, S, "bool", dtype, seed + 1)
    if kind == "float":
        return _amask((L, S), "float", dtype, seed), _kpm(N, S, "float", dtype, seed + 1)
    return am, kpm


ENC_LAYER_CASES = [
    ("relu_post", dict(), None, False),
    ("gelu_str_norm_first", dict(activation="gelu", norm_first=True), "bool", False),
    ("gelu_fn_batch_first", dict(activation=TF.gelu, batch_first=True), "float", False),
    ("gelu_module_nobias", dict(activation="GELU", bias=False), "bool", False),
    ("causal", dict(norm_first=True), "causal", True),
    ("unbatched", dict(batch_first=True), "bool", False),
]


@pytest.mark.parametrize("case", ENC_LAYER_CASES, ids=[c[0] for c in ENC_LAYER_CASES])
def test_encoder_layer(case):
    name, kw, mk, causal = case
    d, L, N = 8, 5, 3
    kw = dict(kw)
    tkw_ctor, ekw_ctor = dict(kw), dict(kw)
    if kw.get("activation") == "GELU":
        tkw_ctor["activation"], ekw_ctor["activation"] = torch.nn.GELU(), ember.nn.GELU()
    elif kw.get("activation") is TF.gelu:
        ekw_ctor["activation"] = EF.gelu
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(d, 2, 16, dropout=0.2, **tkw_ctor).double()
    em = ember.nn.TransformerEncoderLayer(d, 2, 16, dropout=0.2, **ekw_ctor).double()
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert em.activation_relu_or_gelu == tm.activation_relu_or_gelu
    load(em, tm)
    tm.eval()
    em.eval()
    unb = name == "unbatched"
    shape = (L, d) if unb else ((N, L, d) if kw.get("batch_first") else (L, N, d))
    x = rnd(*shape, seed=1)
    am, kpm = _masks(mk, L, L, N)
    if unb and kpm is not None:
        kpm = kpm[0]
    tkw = dict(src_mask=am, src_key_padding_mask=kpm)
    ekw = {k: (None if v is None else E(v)) for k, v in tkw.items()}
    if causal:
        tkw["is_causal"] = ekw["is_causal"] = True
    _check_fwd_bwd(em, tm, (x,), (E(x),), tkw, ekw)


DEC_LAYER_CASES = [
    ("post", dict(), None),
    ("norm_first_gelu", dict(norm_first=True, activation="gelu"), "bool"),
    ("batch_first_float", dict(batch_first=True), "float"),
    ("nobias_causal", dict(bias=False), "causal"),
]


@pytest.mark.parametrize("case", DEC_LAYER_CASES, ids=[c[0] for c in DEC_LAYER_CASES])
def test_decoder_layer(case):
    name, kw, mk = case
    d, L, S, N = 8, 4, 6, 2
    em, tm = _tf_pair("TransformerDecoderLayer", d, 2, 12, **kw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    bf = kw.get("batch_first", False)
    tgt = rnd(*((N, L, d) if bf else (L, N, d)), seed=1)
    mem = rnd(*((N, S, d) if bf else (S, N, d)), seed=2)
    tam, tkpm = _masks(mk, L, L, N, seed=3)
    mam, mkpm = _masks("float" if mk == "float" else ("bool" if mk else None), L, S, N, seed=5)
    tkw = dict(tgt_mask=tam, memory_mask=mam, tgt_key_padding_mask=tkpm, memory_key_padding_mask=mkpm)
    ekw = {k: (None if v is None else E(v)) for k, v in tkw.items()}
    if mk == "causal":
        tkw["tgt_is_causal"] = ekw["tgt_is_causal"] = True
    _check_fwd_bwd(em, tm, (tgt, mem), (E(tgt), E(mem)), tkw, ekw)


@pytest.mark.parametrize("mk,norm,is_causal", [(None, True, None), ("bool", False, None), ("causal", True, None),
                                               ("causal", True, False), ("float", True, None)])
def test_encoder(mk, norm, is_causal):
    d, L, N = 8, 5, 2
    torch.manual_seed(0)
    tl = torch.nn.TransformerEncoderLayer(d, 2, 16, batch_first=True)
    el = ember.nn.TransformerEncoderLayer(d, 2, 16, batch_first=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(d) if norm else None).double()
    em = ember.nn.TransformerEncoder(el, 2, norm=ember.nn.LayerNorm(d) if norm else None).double()
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    with torch.no_grad():
        for n, p in tm.named_parameters():
            p.add_(torch.randn(p.shape, generator=gen(len(n)), dtype=p.dtype) * 0.1)
    load(em, tm)
    tm.eval()
    em.eval()
    x = rnd(N, L, d, seed=1)
    am, kpm = _masks(mk, L, L, N)
    tkw = dict(mask=am, src_key_padding_mask=kpm, is_causal=is_causal)
    ekw = {k: (E(v) if isinstance(v, torch.Tensor) else v) for k, v in tkw.items()}
    _check_fwd_bwd(em, tm, (x,), (E(x),), tkw, ekw)


def test_causal_mask_detection():
    """TransformerEncoder/Decoder pass is_causal=True to their layers when the mask is the square
    subsequent mask (float or bool) and is_causal is not given, as torch does."""
    L = 4
    fm = torch.nn.Transformer.generate_square_subsequent_mask(L)
    bm = torch.ones(L, L, dtype=torch.bool).triu(1)
    other = torch.zeros(L, L, dtype=torch.bool)
    other[0, 2] = True
    cases = [(None, None), (fm, None), (bm, None), (other, None), (fm, False), (other, True)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16), 1)
        tdec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16), 1)
    eenc = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(8, 2, 16), 1)
    edec = ember.nn.TransformerDecoder(ember.nn.TransformerDecoderLayer(8, 2, 16), 1)
    seen = {"t": [], "e": []}
    for key, mods in (("t", (tenc, tdec)), ("e", (eenc, edec))):
        for m in mods:
            m.eval()
            m.layers[0].register_forward_pre_hook(
                lambda mod, args, kwargs, key=key: seen[key].append(kwargs.get("is_causal",
                                                                               kwargs.get("tgt_is_causal"))),
                with_kwargs=True)
    x = _r(L, 2, 8)
    for mask, flag in cases:
        tenc(x, mask=mask, is_causal=flag)
        eenc(E(x), mask=None if mask is None else E(mask), is_causal=flag)
        tdec(x, x, tgt_mask=mask, tgt_is_causal=flag)
        edec(E(x), E(x), tgt_mask=None if mask is None else E(mask), tgt_is_causal=flag)
    assert seen["e"] == seen["t"]
    assert True in seen["t"] and False in seen["t"]


@pytest.mark.parametrize("mk", [None, "bool", "causal"])
def test_decoder(mk):
    d, L, S, N = 8, 4, 3, 2
    torch.manual_seed(0)
    tm = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(d, 2, 16, norm_first=True), 2,
                                     norm=torch.nn.LayerNorm(d)).double()
    em = ember.nn.TransformerDecoder(ember.nn.TransformerDecoderLayer(d, 2, 16, norm_first=True), 2,
                                     norm=ember.nn.LayerNorm(d)).double()
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    load(em, tm)
    tm.eval()
    em.eval()
    tgt, mem = rnd(L, N, d, seed=1), rnd(S, N, d, seed=2)
    tam, tkpm = _masks(mk, L, L, N)
    _, mkpm = _masks("bool" if mk else None, L, S, N, seed=7)
    tkw = dict(tgt_mask=tam, tgt_key_padding_mask=tkpm, memory_key_padding_mask=mkpm)
    ekw = {k: (None if v is None else E(v)) for k, v in tkw.items()}
    _check_fwd_bwd(em, tm, (tgt, mem), (E(tgt), E(mem)), tkw, ekw)


@pytest.mark.parametrize("kw,masks,unbatched", [
    (dict(), False, False),
    (dict(batch_first=True, norm_first=True, activation="gelu"), True, False),
    (dict(bias=False), True, False),
    (dict(batch_first=True), False, True),
])
def test_transformer(kw, masks, unbatched):
    d, S, L, N = 8, 5, 4, 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em, tm = _tf_pair("Transformer", d, 2, 2, 2, 16, **kw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    bf = kw.get("batch_first", False)

    def seq(n, seed):
        return rnd(*((n, d) if unbatched else ((N, n, d) if bf else (n, N, d))), seed=seed)

    src, tgt = seq(S, 1), seq(L, 2)
    tkw = {}
    if masks:
        tkw["tgt_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
        tkw["src_key_padding_mask"] = _kpm(N, S, "bool", torch.float64, 3)
        tkw["memory_key_padding_mask"] = tkw["src_key_padding_mask"]
        tkw["memory_mask"] = _amask((L, S), "bool", torch.float64, 4)
    ekw = {k: E(v) for k, v in tkw.items()}
    _check_fwd_bwd(em, tm, (src, tgt), (E(src), E(tgt)), tkw, ekw)


def test_transformer_default_init_and_mask():
    m = ember.nn.Transformer(16, 2, 1, 1, 32)
    w = m.encoder.layers[0].linear1.weight.detach().numpy()  # xavier_uniform_ over every >1-d weight
    bound = math.sqrt(6.0 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not m.decoder.layers[0].multihead_attn.in_proj_bias.detach().numpy().any()
    for dt in (None, torch.float64):
        em = ember.nn.Transformer.generate_square_subsequent_mask(4, dtype=None if dt is None else ember.float64)
        assert_same(em, torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=dt))
    assert (m.d_model, m.nhead, m.batch_first) == (16, 2, False)


@pytest.mark.parametrize("build", [
    lambda nn: nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU(), bias=False, norm_first=True),
    lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, layer_norm_eps=1e-6),
    lambda nn: nn.TransformerDecoderLayer(8, 4, 16, activation=nn.ReLU()),
    lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 3),
    lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2, norm=nn.LayerNorm(8)),
    lambda nn: nn.Transformer(8, 2, 1, 2, 16, bias=False),
    lambda nn: nn.Transformer(8, 2, custom_encoder=nn.Linear(8, 8), num_decoder_layers=1, dim_feedforward=4),
])
def test_transformer_structure(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = build(torch.nn)
    em = build(ember.nn)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [tuple(v.shape) for v in em.state_dict().values()] == [tuple(v.shape) for v in tm.state_dict().values()]


def test_transformer_errors():
    same_exception(lambda lib, F: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"))
    same_exception(lambda lib, F: lib.nn.TransformerDecoderLayer(8, 2, activation="swish"))
    same_exception(lambda lib, F: lib.nn.TransformerEncoderLayer(8, 3))

    def call(lib, F, src, tgt):
        return lib.nn.Transformer(8, 2, 1, 1, 16)(src, tgt)

    same_exception(call, _r(5, 2, 8), _r(4, 3, 8))  # batch sizes differ
    same_exception(call, _r(5, 2, 8), _r(4, 2, 6))  # feature size is not d_model
    same_exception(lambda lib, F, x: lib.nn.TransformerEncoderLayer(8, 2, 16)(x), _r(5, 2, 6))
    same_exception(lambda lib, F, x, m: lib.nn.TransformerEncoderLayer(8, 2, 16)(x, src_mask=m), _r(5, 2, 8),
                   torch.zeros(4, 4))


def test_transformer_train_dropout_changes_output():
    m = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = E(rnd(5, 2, 8, rg=False, dtype=torch.float32))
    m.eval()
    a, b = m(x), m(x)
    assert_same(a, b.detach().clone())
    m.train()
    assert not np.allclose(m(x).detach().numpy(), a.detach().numpy())


# ---------------------------------------------------------------- Lazy batch / instance norm

@pytest.mark.parametrize("name,kw,shape", [
    ("LazyBatchNorm1d", {}, (4, 3)),
    ("LazyBatchNorm1d", dict(affine=False, track_running_stats=False), (4, 3, 5)),
    ("LazyBatchNorm2d", dict(momentum=None), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", dict(bias=False), (2, 2, 3, 3, 3)),
    ("LazyInstanceNorm1d", {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", dict(affine=False), (2, 3, 4, 5)),
    ("LazyInstanceNorm3d", dict(track_running_stats=False), (2, 2, 3, 3, 3)),
])
def test_lazy_norm(name, kw, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = getattr(torch.nn, name)(**kw)
        em = getattr(ember.nn, name)(**kw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    x = rnd(*shape, dtype=torch.float32, seed=1, rg=False)
    to, eo = tm(x), em(E(x))
    assert type(em).__name__ == type(tm).__name__ == name[4:]
    assert repr(em) == repr(tm)
    close(eo, to, 1e-5)
    assert list(em.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        close(em.state_dict()[k], v, 1e-6)


def test_lazy_norm_load_before_forward():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.BatchNorm2d(3)
        em = ember.nn.LazyBatchNorm2d()
    with torch.no_grad():
        tm.weight.uniform_()
        tm.running_var.uniform_(1, 2)
    load(em, tm)
    assert tuple(em.weight.shape) == (3,)
    tm.eval()
    em.eval()
    x = rnd(2, 3, 2, 2, dtype=torch.float32, rg=False)
    close(em(E(x)), tm(x), 1e-5)
    assert type(em).__name__ == "BatchNorm2d"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_sdpa_fused_float_mask_and_node(dtype):
    """The fused op: a float mask that needs no grad, broadcast batch dims, one autograd node."""
    q, k, v = rnd(2, 3, 5, 4, dtype=dtype), rnd(1, 3, 6, 4, seed=1, dtype=dtype), rnd(2, 1, 6, 3, seed=2, dtype=dtype)
    mask = _float_mask((5, 6), 4, dtype, dead_row=2)
    eq, ek, ev = E(q), E(k), E(v)
    oe = EF.scaled_dot_product_attention(eq, ek, ev, attn_mask=E(mask), scale=0.3)
    ot = TF.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.3)
    names, todo = set(), [oe.grad_fn]
    while todo:  # the nodes within three steps of the output
        fn = todo.pop()
        names.add(fn.name())
        todo += [f for f, _ in fn.next_functions if f is not None and len(names) < 4]
    assert "ScaledDotProductFlashAttentionForCpuBackward0" in names
    close(oe, ot, TOL[dtype])
    w = torch.rand(ot.shape, generator=gen(5), dtype=dtype)
    (ot * w).sum().backward()
    (oe * E(w)).sum().backward()
    for a, b in ((eq, q), (ek, k), (ev, v)):
        close(a.grad, b.grad, TOL[dtype] * 10)
