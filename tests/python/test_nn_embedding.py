"""embedding and embedding_bag of ember.nn.functional against torch 2.13: values, weight (and
per_sample_weights) gradients, padding_idx, max_norm, scale_grad_by_freq, offsets modes,
gradcheck/gradgradcheck in float64, and torch's exception classes."""
import numpy as np
import pytest

import ember
import ember.nn.functional as EF
from conftest import assert_same, torch
from nn_ref import gradchecks, randn, run_both, same_exception, to_ember

IDX = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_embedding(padding_idx, scale, dtype):
    w = randn(10, 3, dtype=dtype)
    run_both(lambda lib, F, i, w: F.embedding(i, w, padding_idx=padding_idx, scale_grad_by_freq=scale), IDX, w)
    run_both(lambda lib, F, i, w: F.embedding(i, w), IDX.to(torch.int32)[:, ::2], w)  # int32, non-contiguous
    run_both(lambda lib, F, i, w: F.embedding(i, w), torch.tensor(3), w)  # 0-d indices


def test_embedding_max_norm_renormalizes_weight():
    w_t = randn(10, 3, rg=False) * 3
    w_e = to_ember(w_t)
    out_t = torch.nn.functional.embedding(IDX, w_t, max_norm=1.5, norm_type=1.0)
    out_e = EF.embedding(to_ember(IDX), w_e, max_norm=1.5, norm_type=1.0)
    assert_same(out_e, out_t)
    assert_same(w_e, w_t)


def test_embedding_gradcheck():
    i = to_ember(IDX)
    # padding_idx and scale_grad_by_freq change the gradient on purpose (compared with torch above)
    gradchecks(lambda lib, F, w: F.embedding(i, w), randn(10, 3))


def test_embedding_sparse_not_implemented():
    with pytest.raises(NotImplementedError):
        EF.embedding(ember.tensor([1]), ember.randn(3, 2), sparse=True)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_offsets(mode, include_last_offset, padding_idx):
    w = randn(10, 3)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 4])
    offs = torch.tensor([0, 2, 2, 5, 9]) if include_last_offset else torch.tensor([0, 2, 2, 5])
    run_both(lambda lib, F, i, w, o: F.embedding_bag(i, w, o, mode=mode, include_last_offset=include_last_offset,
                                                     padding_idx=padding_idx), idx, w, offs)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d(mode):
    run_both(lambda lib, F, i, w: F.embedding_bag(i, w, mode=mode), IDX, randn(10, 4))


def test_embedding_bag_per_sample_weights_and_gradcheck():
    idx, offs = torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 3])
    psw = randn(6, seed=3)
    run_both(lambda lib, F, i, w, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p), idx,
             randn(10, 3), offs, psw)
    ie, oe = to_ember(idx), to_ember(offs)
    gradchecks(lambda lib, F, w, p: F.embedding_bag(ie, w, oe, mode="sum", per_sample_weights=p), randn(10, 3), psw)
    gradchecks(lambda lib, F, w: F.embedding_bag(ie, w, oe, mode="mean"), randn(10, 3))


@pytest.mark.parametrize("D", [1, 8, 16, 32, 64, 100, 128, 136, 200, 264])
@pytest.mark.parametrize("mode", ["sum", "mean", "sum_weighted"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_embedding_bag_fused_widths(D, mode, dtype):
    """Note [Fused embedding bags]: the register pieces (128, 64 and 8 columns) and the tail of the bag sums over 600
    bags of 0-9 rows (parallel on 2 threads), with padding entries and per-sample weights: torch's
    values and weight / per_sample_weights gradients (float16 ones against float64), and its node name."""
    g = torch.Generator().manual_seed(D)
    lengths = torch.randint(0, 10, (600,), generator=g)
    offs = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    idx = torch.randint(0, 50, (int(lengths.sum()),), generator=g)
    w = randn(50, D, dtype=dtype)
    psw = randn(idx.numel(), seed=5, dtype=dtype) if mode == "sum_weighted" else None
    m = "sum" if mode == "sum_weighted" else mode
    half = dtype == torch.float16
    tol = dict(rtol=1e-2, atol=1e-2) if half else {}
    # float16 gradients: ember accumulates them in float; torch's weighted weight gradient adds in float16 (up to
    # 5e-2 off float64 here), so they are checked against float64 below instead
    if psw is None:
        eo, to = run_both(lambda lib, F, i, w, o: F.embedding_bag(i, w, o, mode=m, padding_idx=7), idx, w, offs,
                          grad=not half, **tol)
    else:
        eo, to = run_both(lambda lib, F, i, w, o, p: F.embedding_bag(i, w, o, mode=m, per_sample_weights=p), idx, w,
                          offs, psw, grad=not half, **tol)
    if half:
        ins = [w] if psw is None else [w, psw]
        ref = [t.detach().double().requires_grad_() for t in ins]
        mine = [to_ember(t.detach()).requires_grad_() for t in ins]
        kw = dict(mode=m, padding_idx=7) if psw is None else dict(mode=m)
        r = torch.nn.functional.embedding_bag(idx, ref[0], offs, per_sample_weights=ref[1] if psw is not None else None,
                                              **kw)
        e = EF.embedding_bag(to_ember(idx), mine[0], to_ember(offs),
                             per_sample_weights=mine[1] if psw is not None else None, **kw)
        r.sum().backward()
        e.float().sum().backward()
        for a, b in zip(mine, ref):
            assert_same(a.grad.double(), b.grad, rtol=1e-2, atol=1e-2)
    assert eo.grad_fn.name() == to.grad_fn.name() == "EmbeddingBagBackward0"


@pytest.mark.parametrize("fn", [
    lambda lib, F, w: F.embedding(lib.tensor([10]), w),
    lambda lib, F, w: F.embedding(lib.tensor([-1]), w),
    lambda lib, F, w: F.embedding(lib.tensor([0]), w[0]),
    lambda lib, F, w: F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([1])),
    lambda lib, F, w: F.embedding_bag(lib.tensor([0, 1]), w, lib.tensor([0, 5])),
    lambda lib, F, w: F.embedding_bag(lib.tensor([0, 12]), w, lib.tensor([0])),
    lambda lib, F, w: F.embedding(lib.tensor([1.0]), w),
    lambda lib, F, w: F.embedding_bag(lib.tensor([1, 2]), w),
    lambda lib, F, w: F.embedding_bag(lib.tensor([[1, 2]]), w, lib.tensor([0])),
    lambda lib, F, w: F.embedding_bag(lib.tensor([1, 2]), w, lib.tensor([0]), mode="prod"),
    lambda lib, F, w: F.embedding_bag(lib.tensor([1, 2]), w, lib.tensor([0]), mode="mean",
                                      per_sample_weights=lib.ones(2)),
    lambda lib, F, w: F.embedding_bag(lib.tensor([1, 2]), w, lib.tensor([0]), mode="max", scale_grad_by_freq=True),
])
def test_errors(fn):
    same_exception(fn, torch.randn(10, 3))


# ---- modules ----

def test_embedding_modules_repr_state_dict_forward():
    for args, kw in [((10, 3), {}), ((10, 3), {"padding_idx": -2, "max_norm": 2.0, "norm_type": 1.0,
                                                "scale_grad_by_freq": True})]:
        t = torch.nn.Embedding(*args, **kw).double()
        e = ember.nn.Embedding(*args, **kw).double()
        assert repr(e) == repr(t)
        assert list(e.state_dict()) == list(t.state_dict())
        if "padding_idx" in kw:
            assert bool((e.weight[kw["padding_idx"]] == 0).all())
        e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
        run_both(lambda lib, F, i: (t if lib is torch else e)(i), IDX)
        assert_same(e.weight.grad, t.weight.grad)
    for kw in [{}, {"mode": "max", "padding_idx": 2}, {"mode": "sum", "include_last_offset": True}]:
        t = torch.nn.EmbeddingBag(10, 3, **kw).double()
        e = ember.nn.EmbeddingBag(10, 3, **kw).double()
        assert repr(e) == repr(t)
        e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
        idx, offs = torch.tensor([1, 2, 4, 5, 2, 3]), torch.tensor([0, 2, 6] if kw.get("include_last_offset") else [0, 2])
        run_both(lambda lib, F, i, o: (t if lib is torch else e)(i, o), idx, offs)


def test_from_pretrained():
    w = randn(4, 3, rg=False)
    t = torch.nn.Embedding.from_pretrained(w, padding_idx=1)
    e = ember.nn.Embedding.from_pretrained(to_ember(w), padding_idx=1)
    assert repr(e) == repr(t) and e.weight.requires_grad == t.weight.requires_grad
    assert_same(e(ember.tensor([0, 3])), t(torch.tensor([0, 3])))
    e2 = ember.nn.EmbeddingBag.from_pretrained(to_ember(w), freeze=False, mode="sum")
    t2 = torch.nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="sum")
    assert repr(e2) == repr(t2) and e2.weight.requires_grad
    assert_same(e2(ember.tensor([[0, 3]])), t2(torch.tensor([[0, 3]])))
    with pytest.raises(AssertionError):
        ember.nn.Embedding.from_pretrained(ember.zeros(3))


def test_embedding_bag_indices_changed_before_backward_raise_as_torch():
    # the backward reads the saved indices (as torch's): changing them in place is caught
    for lib in (torch, ember):
        w = lib.ones(10, 4, requires_grad=True)
        i, o = lib.tensor([1, 2, 3, 4]), lib.tensor([0, 2])
        y = lib.nn.functional.embedding_bag(i, w, o, mode="mean")
        i[0] = 5
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


@pytest.mark.parametrize("D", [8, 16, 64, 100, 128, 200])
@pytest.mark.parametrize("mode", ["sum", "mean", "sum_weighted"])
def test_embedding_bag_bfloat16_widths(D, mode):
    # 16-bit rows converted to float in registers (AVX-512) or in blocks, summed in float, rounded once
    g = torch.Generator().manual_seed(D)
    lengths = torch.randint(0, 10, (300,), generator=g)
    offs = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    idx = torch.randint(0, 50, (int(lengths.sum()),), generator=g)
    w = torch.randn(50, D, generator=g)
    psw = torch.rand(idx.numel(), generator=g) if mode == "sum_weighted" else None
    m = "sum" if mode == "sum_weighted" else mode

    def run(lib, to_lib):
        kw = dict(mode=m, per_sample_weights=None if psw is None else to_lib(psw).to(lib.bfloat16))
        if psw is None:
            kw["padding_idx"] = 7
        return lib.nn.functional.embedding_bag(to_lib(idx), to_lib(w).to(lib.bfloat16), to_lib(offs), **kw).float()

    t = run(torch, lambda x: x)
    e = run(ember, to_ember)
    # both sum in float and round once; the division of a mean rounds the same way
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-2, atol=1e-2)
