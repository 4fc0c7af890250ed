"""torch.embedding_bag (the aten form): all four outputs against torch's."""
import pytest

import ember
from conftest import torch


def E(t):
    return None if t is None else ember.from_dlpack(t.contiguous()).clone()


def T(e):
    return torch.from_dlpack(e.detach().contiguous())


I8 = [1, 2, 4, 5, 4, 3, 2, 9]
# include_last_offset cases end with len(indices): for other last offsets torch itself differs by dtype and mode
CASES = [  # (weight dtype, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)
    ("float32", I8, [0, 4], 0, False, False, None),
    ("float64", I8, [0, 4], 0, False, False, None),
    ("float32", I8, [0, 4], 0, True, False, None),
    ("float32", I8, [0, 4], 0, False, False, 5),
    ("float32", I8, [0, 4, 8], 0, False, True, None),
    ("float64", I8, [0, 2, 8], 0, False, True, None),
    ("float32", I8, [0, 4, 4], 0, False, False, None),
    ("float32", I8, [0, 4], 1, False, False, None),
    ("float32", I8, [0, 4, 4], 1, False, False, None),
    ("float32", I8, [0, 2, 8], 1, False, True, None),
    ("float64", I8, [0, 4], 1, False, False, -1),
    ("float32", I8, [0, 4], 2, False, False, None),
    ("float32", I8, [0, 4, 4], 2, False, False, None),
    ("float64", I8, [0, 4], 2, False, False, 4),
    ("float32", [4, 4, 1], [0, 2], 2, False, False, 4),
    ("float32", I8, [0, 4, 8], 2, False, True, None),
    ("zeros", I8, [0, 4], 2, False, False, None),  # ties: the first row wins
]


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_embedding_bag_aten_outputs_match_torch(case, itype):
    wdt, idx, offs, mode, psw, last, pad = case
    g = torch.Generator().manual_seed(0)
    w = torch.zeros(10, 3) if wdt == "zeros" else torch.randn(10, 3, generator=g).to(getattr(torch, wdt))
    i = torch.tensor(idx, dtype=getattr(torch, itype))
    o = torch.tensor(offs, dtype=getattr(torch, itype))
    p = torch.rand(len(idx), generator=g, dtype=w.dtype) if psw else None
    exp = torch.embedding_bag(w, i, o, False, mode, False, p, last, pad)
    got = ember.embedding_bag(E(w), E(i), E(o), False, mode, False, E(p), last, pad)
    assert len(got) == 4
    torch.testing.assert_close(T(got[0]), exp[0])
    for g_, e_ in zip(got[1:], exp[1:]):
        assert str(g_.dtype).split(".")[-1] == str(e_.dtype).split(".")[-1]
        assert T(g_).tolist() == e_.tolist()


def test_embedding_bag_aten_gradient_flows_to_weight():
    w = torch.randn(10, 3, dtype=torch.float64)
    i, o = torch.tensor(I8), torch.tensor([0, 4])
    for mode in (0, 1, 2):
        wt, we = w.clone().requires_grad_(), E(w).requires_grad_()
        torch.embedding_bag(wt, i, o, False, mode)[0].sum().backward()
        ember.embedding_bag(we, E(i), E(o), False, mode)[0].sum().backward()
        torch.testing.assert_close(T(we.grad), wt.grad)


ERRS = [
    lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 3),
    lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 2, False, lib.ones(8)),
    lambda lib, w, i, o: lib.embedding_bag(w, i.float(), o, False, 0),
    lambda lib, w, i, o: lib.embedding_bag(w, i, None, False, 0),
]


@pytest.mark.parametrize("k", range(len(ERRS)))
def test_embedding_bag_aten_errors_match_torch(k):
    w, i, o = torch.randn(10, 3), torch.tensor(I8), torch.tensor([0, 4])
    with pytest.raises(Exception) as te:
        ERRS[k](torch, w, i, o)
    with pytest.raises(Exception) as ee:
        ERRS[k](ember, E(w), E(i), E(o))
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------- slice_inverse, prepare_multiprocessing_environment
def _slice_cases(lib):
    x = lib.arange(10.0)
    b = lib.arange(20.0).view(4, 5)[1:]
    y = lib.arange(30.0)
    return [
        (x[2:5], x, (0, 2, 5, 1)),
        (b[:, 1:3], b, (1, 1, 3, 1)),
        (y, b, (1, 0, 1, 1)),
        (y[3:], b, (0,)),
        (y[3:], lib.arange(5.0)[1:], (0, 1)),
        (x, x, (0,)),
    ]


def test_slice_inverse_matches_torch():
    for (tv, tb, a), (ev, eb, _) in zip(_slice_cases(torch), _slice_cases(ember)):
        t, e = torch.slice_inverse(tv, tb, *a), ember.slice_inverse(ev, eb, *a)
        assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
        assert e.storage_offset() == t.storage_offset()
        assert T(e).tolist() == t.tolist()
        assert e.data_ptr() == ev.data_ptr() - ev.storage_offset() * ev.element_size() + \
            t.storage_offset() * e.element_size()  # a view of input's storage
        m = ev.slice_inverse(eb, *a)
        assert T(m).tolist() == t.tolist()
    x = ember.arange(10.0)
    v = ember.slice_inverse(x[2:5], x, 0, 2, 5, 1)
    v[0] = 42.0  # writes through to x, as torch's view does
    assert x[0].item() == 42.0


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.slice_inverse(x[2:5].clone(), x, 0, 2, 5, 1),  # storage too small for src's geometry
    lambda lib, x: lib.slice_inverse(x[2:5], x, 0, 2.0),
    lambda lib, x: lib.slice_inverse(x[2:5], x, True),
    lambda lib, x: lib.slice_inverse(x[2:5], x, 0, 2, 5, None),
    lambda lib, x: lib.slice_inverse(x[2:5]),
])
def test_slice_inverse_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(torch, torch.arange(10.0))
    with pytest.raises(Exception) as ee:
        call(ember, ember.arange(10.0))
    assert type(ee.value) is type(te.value)


def test_prepare_multiprocessing_environment_is_torchs_no_op_hook():
    assert torch.prepare_multiprocessing_environment("/tmp") is None
    assert ember.prepare_multiprocessing_environment("/tmp") is None
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.prepare_multiprocessing_environment()
