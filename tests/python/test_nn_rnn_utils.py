"""nn.utils.rnn (pack/pad helpers, PackedSequence) against torch 2.13."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.nn.utils import rnn as ernn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def same(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(e.detach().tolist(), dtype=float).reshape(tuple(e.shape)),
                               t.detach().double().numpy(), rtol=1e-6, atol=1e-6)


def same_packed(pe, pt):
    same(pe.data, pt.data)
    same(pe.batch_sizes, pt.batch_sizes)
    for a, b in ((pe.sorted_indices, pt.sorted_indices), (pe.unsorted_indices, pt.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            same(a, b)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [5, 3, 3, 1]), (False, [2, 5, 1, 4])])
def test_pack_pad_round_trip_matches_torch(batch_first, enforce_sorted, lengths):
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    x = torch.randn(shape, requires_grad=True)
    xe = to_ember(x).requires_grad_()
    pt = trnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    pe = ernn.pack_padded_sequence(xe, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    same_packed(pe, pt)
    for total in (None, 7):
        yt, lt = trnn.pad_packed_sequence(pt, batch_first=batch_first, padding_value=-1.0, total_length=total)
        ye, le = ernn.pad_packed_sequence(pe, batch_first=batch_first, padding_value=-1.0, total_length=total)
        same(ye, yt)
        same(le, lt)
    g = torch.randn(yt.shape)
    yt.backward(g)
    ye.backward(to_ember(g))
    same(xe.grad, x.grad)


def test_pad_sequence_and_friends_match_torch():
    seqs = [torch.randn(n, 2) for n in (3, 1, 4)]
    es = [to_ember(s) for s in seqs]
    for bf in (False, True):
        for side in ("right", "left"):
            same(ernn.pad_sequence(es, batch_first=bf, padding_value=9.0, padding_side=side),
                 trnn.pad_sequence(seqs, batch_first=bf, padding_value=9.0, padding_side=side))
    for sorted_ in (False,):
        same_packed(ernn.pack_sequence(es, enforce_sorted=sorted_), trnn.pack_sequence(seqs, enforce_sorted=sorted_))
    out = ernn.unpack_sequence(ernn.pack_sequence(es, enforce_sorted=False))
    for a, b in zip(out, seqs):
        same(a, b)
    padded = trnn.pad_sequence(seqs)
    for a, b in zip(ernn.unpad_sequence(to_ember(padded), ember.tensor([3, 1, 4])),
                    trnn.unpad_sequence(padded, torch.tensor([3, 1, 4]))):
        same(a, b)
    with pytest.raises(RuntimeError):
        ernn.pad_sequence(es, padding_side="middle")
    with pytest.raises(RuntimeError):
        trnn.pad_sequence(seqs, padding_side="middle")


def test_pack_errors_match_torch():
    x = torch.randn(4, 3)
    for lengths, kw in [([1, 2, 3], {}), ([3, 0, 1], {"enforce_sorted": False}), ([3, 2], {})]:
        with pytest.raises(RuntimeError):
            trnn.pack_padded_sequence(x, lengths, **kw)
        with pytest.raises(RuntimeError):
            ernn.pack_padded_sequence(to_ember(x), lengths, **kw)
    p = ernn.pack_padded_sequence(to_ember(x), [4, 2, 1])
    with pytest.raises(ValueError):
        ernn.pad_packed_sequence(p, total_length=2)


def test_packed_sequence_methods_and_gradcheck():
    p = ernn.pack_sequence([ember.randn(3, 2), ember.randn(2, 2)])
    assert p.double().data.dtype == ember.float64 and p.to(ember.float64).data.dtype == ember.float64
    assert not p.is_cuda and p.cpu() is p
    assert ernn.invert_permutation(ember.tensor([2, 0, 1])).tolist() == \
        trnn.invert_permutation(torch.tensor([2, 0, 1])).tolist()
    x = ember.randn(4, 3, 2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a: ernn.pack_padded_sequence(a, [4, 2, 1]).data, (x,))
    assert gradcheck(lambda a: ernn.pad_sequence([a[:3, 0], a[:1, 1]]), (x,))
