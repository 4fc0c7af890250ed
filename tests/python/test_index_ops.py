"""Advanced indexing (t[idx], t[idx] = v), in-place index ops, pad and errors, against torch."""
import numpy as np
import pytest

import ember
from conftest import assert_same, same_error, torch
from ember.nn._pad import pad as ember_pad


def pair(shape=(4, 5, 6), dtype="float64"):
    t = torch.arange(int(np.prod(shape)), dtype=getattr(torch, dtype)).reshape(shape)
    return t, ember.tensor(t.numpy())


def conv(lib, idx):
    """The index with torch tensors replaced by lib tensors."""
    if isinstance(idx, tuple):
        return tuple(conv(lib, i) for i in idx)
    if isinstance(idx, torch.Tensor):
        return lib.tensor(idx.numpy()) if lib is ember else idx
    return idx


L = lambda *v: torch.tensor(v)  # noqa: E731
M = lambda *v: torch.tensor(v, dtype=torch.bool)  # noqa: E731

INDICES = [
    [0, 2],
    [[0, 1], [2, 3]],
    ([0, 1], [1, 2]),
    (slice(None), [0, 4]),
    (slice(None), [0, 4], slice(1, 3)),
    ([0, 1], slice(None), [2, 3]),                 # non-adjacent: broadcast dims first
    (0, slice(None), [1, 2]),                      # int is a select (PyTorch), not an advanced index
    ([0, 1], 2),
    (Ellipsis, [0, 5]),
    (None, [1, 2], None),
    (L(0, 3), L(1, 0)),
    (L(-1, -4),),
    (L(0, 1).reshape(2, 1), slice(None), L(0, 1, 2)),
    (L(0, 1).reshape(2, 1), L(0, 1, 2)),
    (M(True, False, True, True),),
    (slice(None), M(False, True, True, False, True)),
    (M(True, False, True, False), L(0, 4)),
    (True,),
    (False,),
    (torch.tensor(True), 1),
    (Ellipsis, None, torch.tensor(False)),
    (torch.arange(30).reshape(5, 6) % 4 == 0,) and (slice(1, 2), torch.arange(30).reshape(5, 6) % 4 == 0),
    ([],),
    (np.array([3, 1]),),
    ([[True, False, True, False]],) and (np.array([True, False, True, False]),),
    (slice(None, None, 2), [1], [[0], [2]]),
]


@pytest.mark.parametrize("idx", INDICES, ids=[str(i)[:40] for i in range(len(INDICES))])
def test_getitem_matches_torch(idx):
    t, e = pair()
    expected = t[conv(torch, idx)]
    got = e[conv(ember, idx)]
    assert_same(got, expected)


@pytest.mark.parametrize("idx", INDICES, ids=[str(i)[:40] for i in range(len(INDICES))])
def test_setitem_matches_torch(idx):
    t, e = pair()
    shape = t[conv(torch, idx)].shape
    v = torch.arange(int(np.prod(shape[-1:] if shape else ())), dtype=torch.float64) + 1000
    t[conv(torch, idx)] = v
    e[conv(ember, idx)] = ember.tensor(v.numpy())
    assert_same(e, t)
    t[conv(torch, idx)] = -1.5
    e[conv(ember, idx)] = -1.5
    assert_same(e, t)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32"])
def test_index_all_dtypes(dtype):
    t = (torch.arange(12).reshape(3, 4) % 5).to(getattr(torch, dtype))
    e = ember.from_dlpack(t).clone()
    idx = ([2, 0], slice(None, 3))
    assert_same(e[idx], t[idx])
    t[[0, 2]] = t[[1, 1]]
    e[[0, 2]] = e[[1, 1]]
    assert_same(e, t)


@pytest.mark.parametrize("idx,exc", [
    ([0, 5], IndexError),
    ((slice(None), [7]), IndexError),
    ([-6], IndexError),
    ((M(True, False),), IndexError),
    (([0, 1], [0, 1, 2]), IndexError),
    ((torch.tensor([0.5]),), IndexError),
    ((0, 0, 0, [0]), IndexError),
])
def test_index_errors(idx, exc):
    t, e = pair()
    with pytest.raises(exc):
        t[conv(torch, idx)]
    with pytest.raises(exc):
        e[conv(ember, idx)]


def test_out_of_bounds_message():
    e = ember.zeros(3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        e[[5]]


def test_setitem_shape_mismatch_raises():
    t, e = pair((3, 4))
    with pytest.raises(RuntimeError):
        t[[0, 1]] = torch.zeros(3)
    with pytest.raises(RuntimeError):
        e[[0, 1]] = ember.zeros(3)


@pytest.mark.parametrize("idx", [([0, 2, 0],), (slice(None), [1, 1, 3]), (M(True, False, True),),
                                 ([[0], [2]], [1, 3])])
def test_getitem_gradient(idx):
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4).requires_grad_()
    e = ember.tensor(t.detach().numpy()).requires_grad_()
    ot, oe = t[conv(torch, idx)], e[conv(ember, idx)]
    w = torch.linspace(-1, 1, ot.numel(), dtype=torch.float64).reshape(ot.shape)
    (ot * w).sum().backward()
    (oe * ember.tensor(w.numpy())).sum().backward()
    assert_same(e.grad, t.grad)
    assert ember.autograd.gradcheck(lambda x: x[conv(ember, idx)], (e.detach().requires_grad_(),))


def test_setitem_gradient():
    def run(lib, x, v):
        y = x * 1
        y[lib.tensor([0, 2])] = v
        y[:, lib.tensor([1, 3])] = v[:1, :2] * 2
        return y
    xt = torch.rand(3, 4, dtype=torch.float64, requires_grad=True)
    vt = torch.rand(2, 4, dtype=torch.float64, requires_grad=True)
    xe = ember.tensor(xt.detach().numpy()).requires_grad_()
    ve = ember.tensor(vt.detach().numpy()).requires_grad_()
    w = torch.rand(3, 4, dtype=torch.float64)
    (run(torch, xt, vt) * w).sum().backward()
    (run(ember, xe, ve) * ember.tensor(w.numpy())).sum().backward()
    assert_same(xe.grad, xt.grad)
    assert_same(ve.grad, vt.grad)
    assert ember.autograd.gradcheck(lambda x, v: run(ember, x, v),
                                    (xe.detach().requires_grad_(), ve.detach().requires_grad_()))


def test_setitem_on_leaf_requiring_grad_raises():
    e = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        e[[0]] = 1.0


def test_index_put_accumulate_duplicates():
    t, e = pair((5,))
    t.index_put_((L(0, 0, 3),), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), accumulate=True)
    e.index_put_((ember.tensor([0, 0, 3]),), ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64), accumulate=True)
    assert_same(e, t)


INPLACE = [
    ("masked_fill_", lambda lib: (lib.tensor([True, False, True, False, False, True]), 7)),
    ("index_fill_", lambda lib: (1, lib.tensor([0, 3]), -2)),
    ("index_add_", lambda lib: (0, lib.tensor([1, 1]), lib.ones(2, 6, dtype=lib.float64))),
    ("index_copy_", lambda lib: (0, lib.tensor([2, 0]), lib.ones(2, 6, dtype=lib.float64))),
    ("scatter_", lambda lib: (1, lib.tensor([[0, 5]]), lib.ones(1, 2, dtype=lib.float64))),
    ("scatter_add_", lambda lib: (0, lib.tensor([[0, 2, 2]]), lib.ones(1, 3, dtype=lib.float64))),
    ("scatter_reduce_", lambda lib: (0, lib.tensor([[0, 2, 2]]), lib.ones(1, 3, dtype=lib.float64) * 9, "amax")),
    ("masked_scatter_", lambda lib: (lib.tensor([True, False, True, False, False, True]),
                                     lib.arange(20, dtype=lib.float64))),
    ("put_", lambda lib: (lib.tensor([0, 17]), lib.tensor([5.0, 6.0], dtype=lib.float64))),
    ("tril_", lambda lib: (1,)),
    ("triu_", lambda lib: ()),
]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_methods(name, args):
    t, e = pair((3, 6))
    rt = getattr(t, name)(*args(torch))
    re = getattr(e, name)(*args(ember))
    assert re is e and rt is t
    assert_same(e, t)


@pytest.mark.parametrize("name,args", [a for a in INPLACE if a[0] not in ("scatter_reduce_",)],
                         ids=[n for n, _ in INPLACE if n != "scatter_reduce_"])
def test_inplace_methods_gradient(name, args):
    def run(lib, x):
        y = x * 2
        getattr(y, name)(*args(lib))
        return y
    xt = torch.rand(3, 6, dtype=torch.float64, requires_grad=True)
    xe = ember.tensor(xt.detach().numpy()).requires_grad_()
    w = torch.rand(3, 6, dtype=torch.float64)
    (run(torch, xt) * w).sum().backward()
    (run(ember, xe) * ember.tensor(w.numpy())).sum().backward()
    assert_same(xe.grad, xt.grad)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [(1, 2), (2, 1, 1, 0), (0, 1, 2, 2)])
def test_pad_matches_torch(mode, padding):
    x = torch.arange(2 * 3 * 4, dtype=torch.float64).reshape(1, 2, 3, 4)
    if mode != "constant" and len(padding) == 2:
        x = x[0]
    xt = x.clone().requires_grad_()
    xe = ember.tensor(x.numpy()).requires_grad_()
    ot = torch.nn.functional.pad(xt, padding, mode=mode)
    oe = ember_pad(xe, padding, mode=mode)
    assert_same(oe, ot.detach())
    w = torch.rand(ot.shape, dtype=torch.float64)
    (ot * w).sum().backward()
    (oe * ember.tensor(w.numpy())).sum().backward()
    assert_same(xe.grad, xt.grad)


def test_pad_constant_value_and_negative():
    x = torch.arange(12.0).reshape(3, 4)
    e = ember.tensor(x.numpy())
    assert_same(ember_pad(e, (1, -1, -1, 2), value=3.5), torch.nn.functional.pad(x, (1, -1, -1, 2), value=3.5))


ERRORS = [
    lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(3, 4)], 1),
    lambda lib: lib.cat([]),
    lambda lib: lib.cat([lib.zeros(())]),
    lambda lib: lib.cat([lib.zeros(2, 3)], 2),
    lambda lib: lib.stack([lib.zeros(2), lib.zeros(3)]),
    lambda lib: lib.gather(lib.zeros(2, 3), 1, lib.tensor([[5]])),
    lambda lib: lib.gather(lib.zeros(2, 3), 1, lib.tensor([0])),
    lambda lib: lib.gather(lib.zeros(2, 3), 1, lib.tensor([[0.0]])),
    lambda lib: lib.index_select(lib.zeros(2, 3), 1, lib.tensor([3])),
    lambda lib: lib.index_select(lib.zeros(2, 3), 1, lib.tensor([[0]])),
    lambda lib: lib.take(lib.zeros(2, 3), lib.tensor([6])),
    lambda lib: lib.masked_fill(lib.zeros(2, 3), lib.tensor([1, 0, 1]), 1.0),
    lambda lib: lib.masked_fill(lib.zeros(2, 3), lib.tensor([True, False]), 1.0),
    lambda lib: lib.masked_fill(lib.zeros(2, 3), lib.tensor([True, False, True]), lib.ones(2)),
    lambda lib: lib.tril(lib.zeros(3)),
    lambda lib: lib.diag(lib.zeros(2, 2, 2)),
    lambda lib: lib.trace(lib.zeros(3)),
    lambda lib: lib.zeros(2, 3).repeat(2),
    lambda lib: lib.split(lib.zeros(5), [2, 2]),
    lambda lib: lib.chunk(lib.zeros(5), 0),
    lambda lib: lib.roll(lib.zeros(5), (1, 2), (0,)),
    lambda lib: lib.zeros(2, 3).scatter(1, lib.tensor([0, 1]), lib.ones(1, 4)),
    lambda lib: lib.zeros(2, 3).index_add(0, lib.tensor([0]), lib.ones(1, 3, dtype=lib.float64)),
    lambda lib: lib.searchsorted(lib.tensor([[1, 2]]), lib.tensor([[1], [2]])),
    lambda lib: lib.broadcast_tensors(lib.zeros(2), lib.zeros(3)),
    lambda lib: lib.meshgrid(lib.zeros(2, 2)),
    lambda lib: lib.flip(lib.zeros(2, 3), (0, 0)),
    lambda lib: lib.diagonal(lib.zeros(2, 3), 0, 1, 1),
]


@pytest.mark.parametrize("fn", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch_type(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)):
        fn(ember)


def test_cat_type_promotion_and_empty_rules():
    a = torch.tensor([[1, 2]], dtype=torch.int32)
    b = torch.tensor([[0.5, 1.5]], dtype=torch.float16)
    assert_same(ember.cat([ember.tensor(a.numpy()), ember.tensor(b.numpy())]), torch.cat([a, b]))
    assert_same(ember.cat([ember.zeros(0), ember.ones(2, 3)]), torch.cat([torch.zeros(0), torch.ones(2, 3)]))
    out = ember.empty(0)
    ember.cat([ember.ones(2), ember.zeros(1)], out=out)
    assert_same(out, torch.tensor([1.0, 1.0, 0.0]))


def test_views_share_storage():
    e = ember.arange(12.0).reshape(3, 4)
    d = e.diagonal()
    d[0] = 100
    assert e[0, 0].item() == 100
    parts = e.split(2, 1)
    parts[1][0, 0] = -1
    assert e[0, 2].item() == -1


def test_searchsorted_side_and_sorter():
    seq = torch.tensor([5, 1, 3, 3, 9])
    sorter = torch.argsort(seq, stable=True)
    v = torch.tensor([3, 0, 10])
    es, ev, eso = (ember.tensor(x.numpy()) for x in (seq, v, sorter))
    for side in ("left", "right"):
        assert_same(ember.searchsorted(es, ev, side=side, sorter=eso), torch.searchsorted(seq, v, side=side,
                                                                                           sorter=sorter))
    assert_same(ember.searchsorted(ember.tensor([1, 2, 3]), 2, out_int32=True),
                torch.searchsorted(torch.tensor([1, 2, 3]), 2, out_int32=True))


def test_nonzero_as_tuple_and_repeat_interleave_indices():
    x = torch.tensor([[0, 1], [2, 0]])
    e = ember.tensor(x.numpy())
    for a, b in zip(ember.nonzero(e, as_tuple=True), torch.nonzero(x, as_tuple=True)):
        assert_same(a, b)
    assert_same(ember.repeat_interleave(ember.tensor([2, 0, 1])), torch.repeat_interleave(torch.tensor([2, 0, 1])))


def test_broadcast_shapes():
    assert ember.broadcast_shapes((2, 1), (3,), 1) == torch.broadcast_shapes((2, 1), (3,), 1)
    with pytest.raises(RuntimeError):
        ember.broadcast_shapes((2,), (3,))


# Layouts the direct gather/scatter kernels (Note [Gather/scatter kernels]) walk: dims before and
# after the indexed one, an index smaller than self, a larger src, transposed self / index / src,
# int32 indices and a 0-d src. Each case builds (self, dim, index, src) with either library.
def _gs_cases():
    rng = np.random.default_rng(3)
    cases = []
    for dim in range(3):
        ishape = [3, 4, 5]
        ishape[dim] = 7
        x = rng.random((4, 5, 6))
        idx = rng.integers(0, (4, 5, 6)[dim], ishape)
        src = rng.random((8, 8, 8))
        cases.append(lambda lib, x=x, dim=dim, idx=idx, src=src: (lib.tensor(x), dim, lib.tensor(idx), lib.tensor(src)))
        cases.append(lambda lib, x=x, dim=dim, idx=idx, src=src: (
            lib.tensor(x.transpose(2, 1, 0).copy()).permute(2, 1, 0), dim,
            lib.tensor(idx.astype(np.int32)), lib.tensor(src).transpose(1, 2)))
    x, idx, src = rng.random((6, 5)), rng.integers(0, 6, (9, 5)), rng.random((5, 9))
    cases.append(lambda lib: (lib.tensor(x).t(), 1, lib.tensor(idx).t()[:, 2:7], lib.tensor(src)))
    cases.append(lambda lib: (lib.tensor(x).t(), 0, lib.tensor(idx)[:4, :] % 5, lib.tensor(src).t()))
    return cases


GS_CASES = _gs_cases()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_scatter_reject_negative_indices(dim):
    # torch 2.13's gather/scatter family raise for a negative index (advanced indexing wraps it)
    x, src = torch.arange(12.0).reshape(3, 4), torch.ones(3, 4)
    idx = torch.zeros(2, 2, dtype=torch.long)
    idx[1, 0] = -1
    ex, es, ei = ember.tensor(x.numpy()), ember.tensor(src.numpy()), ember.tensor(idx.numpy())
    calls = [
        lambda lib, a, i, s: lib.gather(a, dim, i),
        lambda lib, a, i, s: a.scatter(dim, i, s),
        lambda lib, a, i, s: a.scatter(dim, i, 2.5),
        lambda lib, a, i, s: a.scatter_add(dim, i, s),
        lambda lib, a, i, s: a.scatter_reduce(dim, i, s, "amax", include_self=False),
        lambda lib, a, i, s: a.scatter_reduce(dim, i, s, "mean"),
    ]
    for f in calls:
        with pytest.raises(RuntimeError) as te:
            f(torch, x, idx, src)
        with pytest.raises(RuntimeError) as ee:
            f(ember, ex, ei, es)
        assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("case", range(len(GS_CASES)))
def test_gather_scatter_layouts_match_torch(case):
    x, dim, idx, src = GS_CASES[case](torch)
    ex, _, ei, es = GS_CASES[case](ember)
    assert_same(ember.gather(ex, dim, ei), torch.gather(x, dim, idx))
    assert_same(ex.scatter(dim, ei, es), x.scatter(dim, idx, src))
    assert_same(ex.scatter(dim, ei, 2.5), x.scatter(dim, idx, 2.5))
    assert_same(ex.scatter_add(dim, ei, es), x.scatter_add(dim, idx, src))
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        for inc in [True, False]:
            assert_same(ex.scatter_reduce(dim, ei, es, red, include_self=inc),
                        x.scatter_reduce(dim, idx, src, red, include_self=inc))
    for red in ["add", "multiply"]:
        assert_same(ex.scatter(dim, ei, es, reduce=red), x.scatter(dim, idx, src, reduce=red))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "complex64"])
def test_gather_scatter_dtypes(dtype):
    g = torch.Generator().manual_seed(4)
    x = (torch.rand(6, 7, generator=g) * 5).to(getattr(torch, dtype))
    src = (torch.rand(6, 7, generator=g) * 5).to(getattr(torch, dtype))
    idx = torch.randint(0, 6, (5, 7), generator=g)
    conv = (lambda t: ember.tensor(t.float().numpy()).to(ember.bfloat16)) if dtype == "bfloat16" else \
        (lambda t: ember.tensor(t.numpy()))
    ex, es, ei = conv(x), conv(src), ember.tensor(idx.numpy())
    assert_same(ember.gather(ex, 0, ei), torch.gather(x, 0, idx))
    assert_same(ex.scatter(0, ei, es), x.scatter(0, idx, src))
    if dtype not in ("bool", "complex64"):  # ember has no complex scatter reductions
        assert_same(ex.scatter_add(0, ei, es), x.scatter_add(0, idx, src))


def test_gather_scatter_bad_index_raises_runtime_error():
    x = ember.zeros(3, 40000)
    for bad in [40000, -40001]:
        idx = ember.zeros(3, 40000, dtype=ember.int64)
        idx[2, 39999] = bad
        for f in [lambda: ember.gather(x, 1, idx), lambda: x.scatter_add(1, idx, x), lambda: x.scatter(1, idx, 1.0),
                  lambda: x.scatter_reduce(1, idx, x, "amax")]:
            with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 1 with size 40000"):
                f()


@pytest.mark.parametrize("dtype", ["float32", "complex64", "bool", "int16", "float64"])
def test_index_kernels_large_any_thread_count(dtype):
    # Sizes past the parallel grain, where the row-prefetching paths run; results must match torch
    # and not depend on the thread count.
    g = torch.Generator().manual_seed(7)
    x = (torch.rand(64, 700, generator=g) * 4).to(getattr(torch, dtype))
    src = (torch.rand(64, 900, generator=g) * 4).to(getattr(torch, dtype))
    idx1 = torch.randint(0, 700, (900,), generator=g)
    idx2 = torch.randint(0, 700, (64, 900), generator=g)
    ex, es = ember.tensor(x.numpy()), ember.tensor(src.numpy())
    ei1, ei2 = ember.tensor(idx1.numpy()), ember.tensor(idx2.numpy())
    before = ember.get_num_threads()
    try:
        for nt in (1, 2, 3):
            ember.set_num_threads(nt)
            assert_same(ex.index_select(1, ei1), x.index_select(1, idx1))
            assert_same(ex.t().index_select(0, ei1), x.t().index_select(0, idx1))
            assert_same(ex.t().contiguous().index_select(1, ei1[:64] % 64), x.t().contiguous().index_select(1, idx1[:64] % 64))
            assert_same(ember.gather(ex, 1, ei2), torch.gather(x, 1, idx2))
            assert_same(ember.take_along_dim(ex, ei2, 1), torch.take_along_dim(x, idx2, 1))
            if dtype != "bool":
                assert_same(ex.scatter_add(1, ei2, es), x.scatter_add(1, idx2, src))
                assert_same(ex.index_add(1, ei1, es), x.index_add(1, idx1, src))
                assert_same(ex.t().index_add(0, ei1, es.t()), x.t().index_add(0, idx1, src.t()))
    finally:
        ember.set_num_threads(before)


def test_index_backward_node_names_match_torch():
    def names(lib):
        x = lib.zeros(2, 3, requires_grad=True)
        i = lib.tensor([[0]])
        return [
            x.index_select(1, lib.tensor([0, 2])).grad_fn.name(),
            lib.tensor(3.0, requires_grad=True).index_select(0, lib.tensor([0])).grad_fn.name(),
            lib.gather(x, 1, i).grad_fn.name(),
            lib.take_along_dim(x, i, 1).grad_fn.name(),
            x.index_add(1, lib.tensor([0]), lib.ones(2, 1)).grad_fn.name(),
            x.scatter_add(1, i, lib.ones(2, 1)).grad_fn.name(),
        ]
    assert names(ember) == names(torch)


# ---- Note [Index accumulation in place] ----

@pytest.mark.parametrize("op", ["scatter_add_", "index_add_"])
def test_index_accumulation_in_place_writes_self(op):
    """Without autograd history, scatter_add_/index_add_ write into self itself (same storage, a
    version bump, a view's base updated), with torch's values; a transposed self, a leaf that
    requires grad and a non-leaf with history take torch's paths too."""
    import numpy as np
    rng = np.random.default_rng(0)
    base_np = rng.standard_normal((6, 40, 30)).astype(np.float32)
    idx_np = rng.integers(0, 30, (40, 12))
    src_np = rng.standard_normal((40, 12)).astype(np.float32)
    irow_np = rng.integers(0, 40, 25)
    isrc_np = rng.standard_normal((25, 30)).astype(np.float32)

    def run(lib, self_t):
        if op == "scatter_add_":
            return self_t.scatter_add_(1, lib.from_numpy(idx_np.copy()), lib.from_numpy(src_np.copy()))
        return self_t.index_add_(0, lib.from_numpy(irow_np.copy()), lib.from_numpy(isrc_np.copy()), alpha=1.5)

    eb, tb = ember.from_numpy(base_np.copy()), torch.from_numpy(base_np.copy())
    ev, tv = eb[2], tb[2]  # a contiguous view
    ptr, version = ev.data_ptr(), ev._version
    assert run(ember, ev) is ev
    run(torch, tv)
    assert ev.data_ptr() == ptr and ev._version > version
    np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=1e-6, atol=1e-6)  # the base sees it
    # a transposed (non-contiguous) self
    et, tt = ember.from_numpy(base_np[0].T.copy()).t(), torch.from_numpy(base_np[0].T.copy()).t()
    run(ember, et)
    run(torch, tt)
    np.testing.assert_allclose(et.numpy(), tt.numpy(), rtol=1e-6, atol=1e-6)
    # a leaf that requires grad: torch's error
    leaf_e, leaf_t = ember.zeros(40, 30, requires_grad=True), torch.zeros(40, 30, requires_grad=True)
    same_error(lambda: run(ember, leaf_e), lambda: run(torch, leaf_t))
    # a non-leaf with history: the gradient flows through the in-place op
    grads = []
    for lib in (ember, torch):
        w = lib.from_numpy(base_np[1].copy()).requires_grad_()
        y = w * 2
        run(lib, y)
        (y * y).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["scatter_add_", "index_add_"])
def test_index_accumulation_in_place_bad_input(op):
    e, t = ember.zeros(5, 4), torch.zeros(5, 4)
    if op == "scatter_add_":
        bad_e = lambda: e.scatter_add_(1, ember.tensor([[4]]), ember.ones(1, 1))  # noqa: E731
        bad_t = lambda: t.scatter_add_(1, torch.tensor([[4]]), torch.ones(1, 1))  # noqa: E731
        same_error(bad_e, bad_t)
        same_error(lambda: e.scatter_add_(1, ember.tensor([[0]]), ember.ones(1, 1, dtype=ember.float64)),
                   lambda: t.scatter_add_(1, torch.tensor([[0]]), torch.ones(1, 1, dtype=torch.float64)))
        same_error(lambda: e.scatter_add_(1, ember.tensor([[0]]), e[:1, :1]),
                   lambda: t.scatter_add_(1, torch.tensor([[0]]), t[:1, :1]))  # src overlaps self
    else:
        same_error(lambda: e.index_add_(0, ember.tensor([5]), ember.ones(1, 4)),
                   lambda: t.index_add_(0, torch.tensor([5]), torch.ones(1, 4)))
        same_error(lambda: e.index_add_(0, ember.tensor([0]), ember.ones(1, 3)),
                   lambda: t.index_add_(0, torch.tensor([0]), torch.ones(1, 3)))
        same_error(lambda: e.index_add_(0, ember.tensor([0]), e[:1]),
                   lambda: t.index_add_(0, torch.tensor([0]), t[:1]))  # source overlaps self
    assert bool((e == 0).all())


@pytest.mark.parametrize("shape", [(300000,), (700, 900), (40, 50, 300), (5, 0, 7), (1,)])
@pytest.mark.parametrize("density", [0.0, 0.16, 0.5, 1.0])
def test_nonzero_chunks_as_numpy(shape, density):
    # many fixed chunks, filled branch-free up to each chunk's last hit: the rows of a serial scan
    rng = np.random.default_rng(int(density * 100) + len(shape))
    x = (rng.random(shape) < density) * rng.integers(1, 5, shape)
    for dt in (np.bool_, np.float32, np.int64):
        got = ember.from_numpy(x.astype(dt)).nonzero().numpy()
        np.testing.assert_array_equal(got, np.argwhere(x.astype(dt)))
