"""Memory-overlap checks (Note [Memory overlap]): writes into an expanded tensor, or into memory
an input partly shares, raise torch's RuntimeError; full overlap is allowed where torch allows it.
Each case runs in torch and in ember and must give the same outcome (exception class and
message, or equal values)."""
import warnings

import pytest
import torch

import ember

INTERNAL = "unsupported operation: more than one element of the written-to tensor refers to a single memory location"
PARTIAL = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single"


def _cases(L):
    def ar():
        return L.arange(6.0)

    def exp33():
        return L.zeros(3).expand(3, 3)

    def idx(*v):
        return L.tensor(list(v))

    c = {
        # internal overlap of the written-to tensor
        "add_": lambda: exp33().add_(1),
        "exp_": lambda: exp33().exp_(),
        "clamp_": lambda: exp33().clamp_(0, 1),
        "addcmul_": lambda: exp33().addcmul_(L.ones(3), L.ones(3)),
        "lerp_": lambda: exp33().lerp_(L.ones(3), 0.5),
        "copy_": lambda: exp33().copy_(L.ones(3, 3)),
        "uniform_": lambda: exp33().uniform_(),
        "fill_": lambda: exp33().fill_(1),
        "zero_": lambda: exp33().zero_(),
        "scatter_": lambda: exp33().scatter_(0, idx([0]), L.ones(1, 1)),
        "scatter_add_": lambda: exp33().scatter_add_(0, idx([0]), L.ones(1, 1)),
        "scatter_reduce_": lambda: exp33().scatter_reduce_(0, idx([0]), L.ones(1, 1), "sum"),
        "index_add_": lambda: exp33().index_add_(0, idx(0), L.ones(1, 3)),
        "index_copy_": lambda: exp33().index_copy_(0, idx(0), L.ones(1, 3)),
        "masked_scatter_": lambda: exp33().masked_scatter_(L.ones(3, 3, dtype=L.bool), L.ones(9)),
        "put_": lambda: exp33().put_(idx(0), L.ones(1)),
        "add_out": lambda: L.add(L.ones(3, 3), 1, out=exp33()),
        "mul_out_number": lambda: L.mul(L.ones(3, 3), 2, out=exp33()),
        "pow_out": lambda: L.pow(L.ones(3, 3), 2, out=exp33()),
        "neg_out": lambda: L.neg(L.ones(3, 3), out=exp33()),
        "where_out": lambda: L.where(L.ones(3, 3, dtype=L.bool), L.ones(3, 3), L.ones(3, 3), out=exp33()),
        "clamp_out": lambda: L.clamp(L.ones(3, 3), 0, 1, out=exp33()),
        "cumsum_out": lambda: L.cumsum(L.ones(3, 3), 0, out=exp33()),
        "cat_out": lambda: L.cat([L.ones(3), L.ones(3)], out=L.zeros(1).expand(6)),
        "stack_out": lambda: L.stack([L.ones(3), L.ones(3)], out=exp33()[:2]),
        "index_select_out": lambda: L.index_select(L.ones(3, 3), 0, idx(0, 1), out=L.zeros(3).expand(2, 3)),
        "gather_out": lambda: L.gather(L.ones(3, 3), 0, L.tensor([[0, 1, 2]]), out=L.zeros(1).expand(1, 3)),
        "take_out": lambda: L.take(L.ones(3, 3), idx(0, 1), out=L.zeros(1).expand(2)),
        # allowed: an expanded input, or overlap that is too hard to tell (non-dense layouts)
        "expanded_input": lambda: L.ones(3).add_(L.ones(1).expand(3)),
        "expanded_input_alias": lambda: (lambda a: a[:3].add_(a[2:3].expand(3)))(L.ones(6)),
        "strided_2d_slices": lambda: (lambda a: a[:, 1:].add_(a[:, :-1]))(L.ones(3, 3)),
        "as_strided_overlap": lambda: L.ones(10).as_strided((3, 3), (2, 1)).add_(1),
        # partial overlap between the written-to tensor and an input
        "slice_add_": lambda: (lambda a: a[1:].add_(a[:-1]))(ar()),
        "slice_mul_": lambda: (lambda a: a[1:].mul_(a[:-1]))(ar()),
        "slice_copy_": lambda: (lambda a: a[1:].copy_(a[:-1]))(ar()),
        "slice_addcmul_": lambda: (lambda a: a[1:].addcmul_(a[:-1], a[:-1]))(ar()),
        "slice_lerp_": lambda: (lambda a: a[1:].lerp_(a[:-1], 0.5))(ar()),
        "slice_clamp_tensor": lambda: (lambda a: a[1:].clamp_(a[:-1]))(ar()),
        "clamp_0d_bound": lambda: (lambda a: a[1:].clamp_(a[0], a[5]))(ar()),
        "transpose_add_": lambda: (lambda a: a.add_(a.t()))(L.ones(3, 3)),
        "transpose_out": lambda: (lambda a: L.add(a, 1, out=a.t()))(L.ones(3, 3)),
        "add_out": lambda: (lambda a: L.add(a[:-1], 1, out=a[1:]))(ar()),
        "exp_out": lambda: (lambda a: L.exp(a[:-1], out=a[1:]))(ar()),
        "abs_out": lambda: (lambda a: L.abs(a[:-1], out=a[1:]))(ar()),
        "sigmoid_out": lambda: (lambda a: L.sigmoid(a[:-1], out=a[1:]))(ar()),
        "pow_out": lambda: (lambda a: L.pow(a[:-1], 2, out=a[1:]))(ar()),
        "lt_out_cast": lambda: (lambda a: L.lt(a[:-1], 2, out=a[1:]))(ar()),
        "logical_not_out": lambda: (lambda a: L.logical_not(a[:-1], out=a[1:]))(L.zeros(6, dtype=L.bool)),
        "where_out": lambda: (lambda a: L.where(a[:-1] > 2, a[:-1], a[1:], out=a[1:]))(ar()),
        "cumsum_out": lambda: (lambda a: L.cumsum(a[:-1], 0, out=a[1:]))(ar()),
        "cat_out": lambda: (lambda a: L.cat([a[:2], a[2:3]], out=a[1:4]))(ar()),
        "cat_out_full": lambda: (lambda a: L.cat([a], out=a))(ar()),
        "stack_out": lambda: (lambda a: L.stack([a[:2], a[2:4]], out=a[1:5].view(2, 2)))(ar()),
        "index_select_out": lambda: (lambda a: L.index_select(a[:-1], 0, idx(0, 1, 2, 3, 4), out=a[1:]))(ar()),
        "index_select_out_full": lambda: (lambda a: L.index_select(a, 0, L.arange(6), out=a))(ar()),
        "gather_out": lambda: (lambda a: L.gather(a[:-1], 0, idx(0, 1, 2, 3, 4), out=a[1:]))(ar()),
        "gather_out_full": lambda: (lambda a: L.gather(a, 0, L.arange(6), out=a))(ar()),
        "gather_out_index": lambda: (lambda a: L.gather(L.arange(6), 0, a[:3], out=a[1:4]))(L.arange(6)),
        "take_out": lambda: (lambda a: L.take(a[:-1], idx(0, 1, 2, 3, 4), out=a[1:]))(ar()),
        "take_out_index": lambda: (lambda a: L.take(L.arange(6), a[:3], out=a[1:4]))(L.arange(6)),
        "masked_select_out_full": lambda: (lambda a: L.masked_select(a, a > 0, out=a))(ar()),
        "index_add_": lambda: (lambda a: a.index_add_(0, idx(0, 1), a[:2]))(ar()),
        "index_add_full": lambda: (lambda a: a.index_add_(0, L.arange(6), a))(ar()),
        "index_add_index": lambda: (lambda a: a.index_add_(0, a[:2], L.ones(2, dtype=L.long)))(L.arange(6)),
        "index_copy_": lambda: (lambda a: a.index_copy_(0, idx(0, 1), a[:2]))(ar()),
        "index_copy_full": lambda: (lambda a: a.index_copy_(0, L.arange(6), a))(ar()),
        "scatter_": lambda: (lambda a: a.scatter_(0, idx(0, 1), a[2:4]))(ar()),
        "scatter_full": lambda: (lambda a: a.scatter_(0, L.arange(6), a))(ar()),
        "scatter_index": lambda: (lambda a: a.scatter_(0, a[:2], 1))(L.arange(6)),
        "scatter_add_": lambda: (lambda a: a.scatter_add_(0, idx(0, 1), a[2:4]))(ar()),
        "scatter_reduce_": lambda: (lambda a: a.scatter_reduce_(0, idx(0, 1), a[2:4], "sum"))(ar()),
        "scatter_reduce_full": lambda: (lambda a: a.scatter_reduce_(0, L.arange(6), a, "sum"))(ar()),
        "index_put_": lambda: (lambda a: a.index_put_((idx(1, 2),), a[:2]))(ar()),
        "index_put_full": lambda: (lambda a: a.index_put_((L.arange(6),), a))(ar()),
        "index_put_accumulate": lambda: (lambda a: a.index_put_((L.arange(6),), a, accumulate=True))(ar()),
        "setitem_advanced": lambda: (lambda a: a.__setitem__(idx(1, 2), a[:2]))(ar()),
        "setitem_slice": lambda: (lambda a: a.__setitem__(slice(1, None), a[:-1]))(ar()),
        "put_": lambda: (lambda a: a.put_(idx(1, 2), a[:2]))(ar()),
        "put_full": lambda: (lambda a: a.put_(L.arange(6), a))(ar()),
        # found by fuzz_ops.py's overlap cases: the overlap is with the input before its dtype conversion
        "logical_or_out_complex": lambda: (lambda c: L.logical_or(c[1:], c[1:], out=c[:-1]))(
            L.arange(7.0).to(L.complex128)),
        "exp_out_int_input": lambda: (lambda a: L.exp(a[1:], out=a.view(L.float32)[:-1]))(L.arange(7, dtype=L.int32)),
        "outer_out": lambda: (lambda o: L.outer(o[1:4], o[1:4], out=o[0:9].view(3, 3)))(L.arange(20.0)),
        # full overlap: allowed for elementwise ops, masked_scatter_, sort
        "full_add_out": lambda: (lambda a: L.add(a, 1, out=a))(ar()),
        "full_view_add_out": lambda: (lambda a: L.add(a, 1, out=a[:]))(ar()),
        "full_add_": lambda: (lambda a: a.add_(a))(ar()),
        "full_cumsum_out": lambda: (lambda a: L.cumsum(a, 0, out=a))(ar()),
        "full_masked_scatter_": lambda: (lambda a: a.masked_scatter_(L.ones(6, dtype=L.bool), a))(ar()),
        "full_sort_out": lambda: (lambda a: L.sort(a, out=(a, L.zeros(6, dtype=L.long))))(ar()),
        "disjoint_slices": lambda: (lambda a: a[:3].add_(a[3:]))(ar()),
        # autograd's in-place path checks the same
        "grad_expand_add_": lambda: L.zeros(3, requires_grad=True).clone().expand(3, 3).add_(1),
        "grad_slice_add_": lambda: (lambda g: g[1:].add_(g[:-1]))(L.zeros(6, requires_grad=True).clone()),
        "grad_slice_mul_": lambda: (lambda g: g[1:].mul_(g[:-1]))(L.zeros(6, requires_grad=True).clone()),
        "grad_slice_atan2_": lambda: (lambda g: g[1:].atan2_(g[:-1]))(L.zeros(6, requires_grad=True).clone()),
        "grad_slice_lerp_": lambda: (lambda g: g[1:].lerp_(g[:-1], 0.5))(L.zeros(6, requires_grad=True).clone()),
    }
    return c


NAMES = list(_cases(torch))


def _outcome(L, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = _cases(L)[name]()
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return type(e).__name__, str(e).split("\n")[0]
    if isinstance(r, tuple):
        r = r[0]
    return "ok", None if r is None else r.detach().tolist()


@pytest.mark.parametrize("name", NAMES)
def test_overlap_matches_torch(name):
    t_kind, t_val = _outcome(torch, name)
    e_kind, e_val = _outcome(ember, name)
    assert e_kind == t_kind, (t_kind, t_val, e_kind, e_val)
    if t_kind == "RuntimeError" and ("unsupported operation" in t_val):
        assert e_val == t_val
    if t_kind == "ok" and t_val is not None and name not in ("uniform_",):
        assert e_val == t_val


def test_overlap_messages_are_torchs():
    with pytest.raises(RuntimeError, match=INTERNAL):
        ember.zeros(3).expand(3, 3).add_(1)
    x = ember.arange(6.0)
    with pytest.raises(RuntimeError, match=PARTIAL):
        x[1:].add_(x[:-1])
    assert x.tolist() == list(range(6))  # nothing was written


def test_overlap_cpp_helpers():
    # full overlap keeps working and gives the element-wise result
    x = ember.arange(6.0)
    ember.mul(x, x, out=x)
    assert x.tolist() == [float(i * i) for i in range(6)]


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_out_growing_a_storage_its_input_shares(lib):
    # libFuzzer find (tests/fuzz/corpus/regress-out-resize-moves-shared-storage): a real out= of a
    # complex op, an empty view at the end of the input's own storage, is resized past the end;
    # the storage moves, and the kernel must read the input from where it now lives.
    c = lib.tensor([3 + 4j, 1 + 0j, 0 + 2j, 6 + 8j], dtype=lib.complex128)
    out = lib.view_as_real(c).flatten()[8:]
    r = lib.abs(c, out=out)
    assert r.tolist() == [5.0, 1.0, 2.0, 10.0]
    assert c.tolist() == [3 + 4j, 1 + 0j, 2j, 6 + 8j]
