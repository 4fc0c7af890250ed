"""Recurrent layers (nn.RNN/LSTM/GRU and the cells) against torch 2.13 with identical weights:
outputs, final states, gradients of inputs, states and every parameter; packed sequences;
state_dict layout, repr, flat-weight bookkeeping, dropout, init, errors by exception class."""
import copy
import importlib
import io
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn as enn
from ember.autograd import gradcheck
from ember.nn.utils import rnn as ernn
from ember.nn.utils.stateless import functional_call

torch = pytest.importorskip("torch")
tnn = torch.nn
trnn = torch.nn.utils.rnn

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")


@pytest.fixture(autouse=True, scope="module")
def _torch_one_thread():
    # torch's reference RNN kernels oversubscribe a busy machine badly (seconds per tiny case); one
    # thread keeps the file fast. Restored afterwards.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

TOL = {"float32": 2e-5, "float64": 1e-11}


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def close(e, t, tol):
    assert e is not None and t is not None
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} vs {tuple(t.shape)}"
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def twin(name, args, kwargs, dtype="float32", seed=0):
    """The same module in torch and ember; ember's weights are loaded from torch's state_dict."""
    torch.manual_seed(seed)
    tm = getattr(tnn, name)(*args, **kwargs).to(getattr(torch, dtype))
    em = getattr(enn, name)(*args, **kwargs, dtype=getattr(ember, dtype))
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})
    return em, tm


def rand(shape, dtype, rng):
    t = torch.tensor(rng.standard_normal(shape).astype(dtype))
    return to_ember(t).requires_grad_(), t.requires_grad_()


def backward_both(pairs, rng):
    """sum(out_i * w_i) over the (ember, torch) output pairs with fixed random weights w_i."""
    le, lt = 0, 0
    for e, t in pairs:
        w = torch.tensor(rng.standard_normal(tuple(t.shape))).to(t.dtype)
        le = le + (e * to_ember(w)).sum()
        lt = lt + (t * w).sum()
    le.backward()
    lt.backward()


def same_param_grads(em, tm, tol):
    tgrads = dict(tm.named_parameters())
    names = [n for n, _ in em.named_parameters()]
    assert names == list(tgrads)
    for n, p in em.named_parameters():
        assert tgrads[n].grad is not None
        close(p.grad, tgrads[n].grad, tol * 10)


# ---- full layers ----

MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {})]
# (constructor kwargs, input kind, hx given)
CONFIGS = [
    ({}, "padded", False),
    ({"num_layers": 2}, "padded", True),
    ({"bidirectional": True}, "padded", True),
    ({"num_layers": 2, "bidirectional": True, "batch_first": True}, "padded", True),
    ({"batch_first": True, "bias": False}, "padded", False),
    ({"num_layers": 2}, "unbatched", False),
    ({"bidirectional": True, "batch_first": True}, "unbatched", True),
    ({"num_layers": 2, "bidirectional": True}, "packed_sorted", False),
    ({"bidirectional": True, "batch_first": True}, "packed_sorted", True),
    ({"num_layers": 2, "bidirectional": True}, "packed_unsorted", True),
    ({}, "packed_unsorted", False),
]
LSTM_PROJ = [
    ({"proj_size": 3}, "padded", True),
    ({"proj_size": 2, "num_layers": 2, "bidirectional": True}, "padded", False),
    ({"proj_size": 2, "bidirectional": True}, "unbatched", True),
    ({"proj_size": 3, "num_layers": 2, "bidirectional": True}, "packed_unsorted", True),
]
ALL = [(m, {**mk, **ck}, kind, hx) for m, mk in MODES for ck, kind, hx in CONFIGS] + \
      [("LSTM", ck, kind, hx) for ck, kind, hx in LSTM_PROJ]
IN, HID, T, B = 3, 5, 6, 4
LENGTHS = {"packed_sorted": [6, 4, 4, 1], "packed_unsorted": [2, 6, 1, 5]}


def run_layer(name, kwargs, kind, with_hx, dtype, seed=0, hid=HID):
    """Runs the twins on the same input and compares outputs and gradients; returns ember's outputs
    and gradients (input, states, parameters) as numpy arrays."""
    rng = np.random.default_rng(seed)
    HID = hid
    em, tm = twin(name, (IN, HID), kwargs, dtype, seed)
    bf = kwargs.get("batch_first", False)
    dirs = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    hsize = kwargs.get("proj_size", 0) or HID
    shape = (T, IN) if kind == "unbatched" else ((B, T, IN) if bf else (T, B, IN))
    xe, xt = rand(shape, dtype, rng)
    ins_e, ins_t = [xe], [xt]
    hx_e = hx_t = None
    if with_hx:
        hshape = (layers * dirs, hsize) if kind == "unbatched" else (layers * dirs, B, hsize)
        he, ht = rand(hshape, dtype, rng)
        ins_e.append(he)
        ins_t.append(ht)
        hx_e, hx_t = he, ht
        if name == "LSTM":
            ce, ct = rand(hshape[:-1] + (HID,), dtype, rng)
            ins_e.append(ce)
            ins_t.append(ct)
            hx_e, hx_t = (he, ce), (ht, ct)
    if kind.startswith("packed"):
        lengths = LENGTHS[kind]
        sorted_ = kind == "packed_sorted"
        in_e = ernn.pack_padded_sequence(xe, lengths, batch_first=bf, enforce_sorted=sorted_)
        in_t = trnn.pack_padded_sequence(xt, lengths, batch_first=bf, enforce_sorted=sorted_)
    else:
        in_e, in_t = xe, xt
    oe, he_n = em(in_e, hx_e)
    ot, ht_n = tm(in_t, hx_t)
    tol = TOL[dtype]
    if kind.startswith("packed"):
        assert isinstance(oe, ernn.PackedSequence)
        close(oe.batch_sizes, ot.batch_sizes, 0)
        for a, b in ((oe.sorted_indices, ot.sorted_indices), (oe.unsorted_indices, ot.unsorted_indices)):
            assert (a is None) == (b is None)
            if a is not None:
                close(a, b, 0)
        oe, ot = oe.data, ot.data
    close(oe, ot, tol)
    pairs = [(oe, ot)]
    if name == "LSTM":
        assert isinstance(he_n, tuple) and len(he_n) == 2
        close(he_n[0], ht_n[0], tol)
        close(he_n[1], ht_n[1], tol)
        pairs += [(he_n[0], ht_n[0]), (he_n[1], ht_n[1])]
    else:
        close(he_n, ht_n, tol)
        pairs.append((he_n, ht_n))
    backward_both(pairs, rng)
    for a, b in zip(ins_e, ins_t):
        close(a.grad, b.grad, tol * 10)
    same_param_grads(em, tm, tol)
    return [t.detach().numpy() for t, _ in pairs] + [a.grad.numpy() for a in ins_e] + \
        [p.grad.numpy() for p in em.parameters()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ALL, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-hx{int(c[3])}")
def test_layer_matches_torch(case, dtype):
    name, kwargs, kind, with_hx = case
    run_layer(name, kwargs, kind, with_hx, dtype)


# Note [Fused LSTM layer] (ops/nn_rnn.cpp): wide layers run each step in pieces of hidden units
# (2 pieces for 128 units at batch 4, 4 for 256), in parallel; results as torch's and bit-identical
# for 1 and 2 threads.
@pytest.mark.parametrize("name", ["LSTM", "GRU"])
@pytest.mark.parametrize("hid", [128, 256])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", [({"num_layers": 2, "bidirectional": True}, "padded", True),
                                    ({"bidirectional": True, "batch_first": True}, "packed_unsorted", True),
                                    ({"num_layers": 2}, "packed_sorted", False),
                                    ({"bidirectional": True}, "unbatched", True)],
                         ids=lambda c: f"{c[1]}-hx{int(c[2])}")
def test_fused_layer_in_pieces_matches_torch(config, dtype, hid, name):
    kwargs, kind, with_hx = config
    before = ember.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            ember.set_num_threads(threads)
            results.append(run_layer(name, kwargs, kind, with_hx, dtype, hid=hid))
    finally:
        ember.set_num_threads(before)
    for a, b in zip(*results):
        assert np.array_equal(a, b)


def _node_names(t):
    names, seen, todo = set(), set(), [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.add(fn.name())
        todo.extend(f for f, _ in fn.next_functions)
    return names


def test_fused_lstm_layer_is_one_node_and_16bit_runs_the_loop():
    m = enn.LSTM(3, 4)
    out, (h, c) = m(ember.randn(5, 2, 3))
    names = _node_names(out)
    assert "LstmLayerBackward0" in names and "FusedLstmCellBackward0" not in names
    for bias in (True, False):
        out, h = enn.GRU(3, 4, bias=bias)(ember.randn(5, 2, 3))
        names = _node_names(out)
        assert "GruLayerBackward0" in names and "FusedGruCellBackward0" not in names
    o16, _ = enn.GRU(3, 4, dtype=ember.bfloat16)(ember.randn(5, 2, 3).to(ember.bfloat16))
    assert o16.dtype == ember.bfloat16 and "FusedGruCellBackward0" in _node_names(o16)
    for dt in (ember.bfloat16, ember.float16):  # the per-step loop serves 16-bit floats
        m16 = enn.LSTM(3, 4, dtype=dt)
        o16, _ = m16(ember.randn(5, 2, 3).to(dt))
        assert o16.dtype == dt and tuple(o16.shape) == (5, 2, 4)
        mf = copy.deepcopy(m16).float()
        x = ember.randn(5, 2, 3).to(dt)
        np.testing.assert_allclose(m16(x)[0].float().detach().numpy(), mf(x.float())[0].detach().numpy(),
                                   atol=3e-2)


def test_fused_lstm_layer_double_backward():
    from ember.autograd import gradgradcheck
    m = enn.LSTM(2, 3, bidirectional=True, dtype=ember.float64)
    names = [n for n, _ in m.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in m.parameters()]
    x = ember.randn(3, 2, 2, dtype=ember.float64, requires_grad=True)
    h0 = ember.randn(2, 2, 3, dtype=ember.float64, requires_grad=True)
    c0 = ember.randn(2, 2, 3, dtype=ember.float64, requires_grad=True)

    def fn(x, h0, c0, *ps):
        out, (h, c) = functional_call(m, dict(zip(names, ps)), (x, (h0, c0)))
        return out, h, c

    assert gradcheck(fn, (x, h0, c0, *params))
    assert gradgradcheck(fn, (x, h0, c0, *params))
    # packed, reverse direction with sequences joining at their last step
    xs = ember.randn(4, 3, 2, dtype=ember.float64, requires_grad=True)

    def packed(x, h0, c0):
        out, (h, c) = m(ernn.pack_padded_sequence(x, [4, 2, 1]), (h0, c0))
        return out.data, h, c

    h0b = ember.randn(2, 3, 3, dtype=ember.float64, requires_grad=True)
    c0b = ember.randn(2, 3, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(packed, (xs, h0b, c0b))
    assert gradgradcheck(packed, (xs, h0b, c0b))


@pytest.mark.parametrize("bias", [True, False])
def test_fused_gru_layer_double_backward(bias):
    from ember.autograd import gradgradcheck
    m = enn.GRU(2, 3, bidirectional=True, bias=bias, dtype=ember.float64)
    names = [n for n, _ in m.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in m.parameters()]
    x = ember.randn(3, 2, 2, dtype=ember.float64, requires_grad=True)
    h0 = ember.randn(2, 2, 3, dtype=ember.float64, requires_grad=True)

    def fn(x, h0, *ps):
        return functional_call(m, dict(zip(names, ps)), (x, h0))

    assert gradcheck(fn, (x, h0, *params))
    assert gradgradcheck(fn, (x, h0, *params))

    def packed(x, h0):
        out, h = m(ernn.pack_padded_sequence(x, [4, 2, 1]), h0)
        return out.data, h

    xs = ember.randn(4, 3, 2, dtype=ember.float64, requires_grad=True)
    h0b = ember.randn(2, 3, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(packed, (xs, h0b))
    assert gradgradcheck(packed, (xs, h0b))


def test_fused_gru_layer_errors():
    f = ember._C._nn_gru_layer
    gi, h, w, b = ember.zeros(6, 6), ember.zeros(3, 2), ember.zeros(6, 2), ember.zeros(6)
    assert tuple(f(gi, [3, 3], h, w, b, False)[0].shape) == (6, 2)
    assert tuple(f(gi, [3, 3], h, w, None, True)[1].shape) == (3, 2)
    bad = [(gi, [3, 2], h, w, b, False), (gi, [2, 4], h, w, b, False), (gi, [], h, w, b, False),
           (gi, [3, 3], h, ember.zeros(8, 2), b, False), (gi, [3, 3], h, w, ember.zeros(5), False),
           (gi, [3, 3], h, w, b.double(), False), (gi.long(), [3, 3], h.long(), w.long(), None, False),
           (ember.zeros(6, 8), [3, 3], h, w, b, False)]
    for args in bad:
        with pytest.raises(RuntimeError):
            f(*args)


def test_fused_lstm_layer_errors():
    f = ember._C._nn_lstm_layer
    gi, h, w = ember.zeros(6, 8), ember.zeros(3, 2), ember.zeros(8, 2)
    assert tuple(f(gi, [3, 3], h, h, w, False)[0].shape) == (6, 2)
    bad = [((gi, [3, 2], h, h, w, False)),  # 6 rows for 5
           ((gi, [2, 4], h, h, w, False)),  # the first size is not the batch; sizes increase
           ((gi, [], h, h, w, False)),
           ((gi, [3, 3, 0], h, h, w, False)),
           ((gi, [3, 3], h, h, ember.zeros(8, 3), False)),
           ((gi, [3, 3], h, ember.zeros(3, 3), w, False)),
           ((gi, [3, 3], h.double(), h, w, False)),
           ((gi.long(), [3, 3], h.long(), h.long(), w.long(), False)),
           ((ember.zeros(6, 8, 1), [3, 3], h, h, w, False))]
    for args in bad:
        with pytest.raises(RuntimeError):
            f(*args)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_packed_output_pads_like_torch(name):
    # Padding the packed output gives torch's padded output (zeros past each length) and lengths.
    em, tm = twin(name, (IN, HID), {"bidirectional": True, "batch_first": True})
    x = torch.randn(B, T, IN)
    lengths = [3, 6, 2, 5]
    pe, _ = em(ernn.pack_padded_sequence(to_ember(x), lengths, batch_first=True, enforce_sorted=False))
    pt, _ = tm(trnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    ye, le = ernn.pad_packed_sequence(pe, batch_first=True)
    yt, lt = trnn.pad_packed_sequence(pt, batch_first=True)
    close(ye, yt, TOL["float32"])
    assert le.tolist() == lt.tolist()


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_packed_final_state_is_state_at_true_length(name):
    # h_n of a packed batch equals running each sequence alone, unpadded.
    em, _ = twin(name, (IN, HID), {})
    x = ember.randn(T, 3, IN)
    lengths = [2, 6, 4]
    _, h = em(ernn.pack_padded_sequence(x, lengths, enforce_sorted=False))
    h = h[0] if name == "LSTM" else h
    for b, n in enumerate(lengths):
        _, hb = em(x[:n, b:b + 1])
        hb = hb[0] if name == "LSTM" else hb
        np.testing.assert_allclose(h[:, b].detach().numpy(), hb[:, 0].detach().numpy(), rtol=1e-5, atol=1e-6)


# ---- cells ----

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}), ("LSTMCell", {}),
         ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [True, False])
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_cell_matches_torch(cell, with_hx, batched, dtype):
    name, kwargs = cell
    rng = np.random.default_rng(1)
    em, tm = twin(name, (IN, HID), kwargs, dtype)
    lead = (B,) if batched else ()
    xe, xt = rand(lead + (IN,), dtype, rng)
    ins_e, ins_t = [xe], [xt]
    hx_e = hx_t = None
    if with_hx:
        he, ht = rand(lead + (HID,), dtype, rng)
        ins_e.append(he)
        ins_t.append(ht)
        hx_e, hx_t = he, ht
        if name == "LSTMCell":
            ce, ct = rand(lead + (HID,), dtype, rng)
            ins_e.append(ce)
            ins_t.append(ct)
            hx_e, hx_t = (he, ce), (ht, ct)
    oe, ot = em(xe, hx_e), tm(xt, hx_t)
    tol = TOL[dtype]
    if name == "LSTMCell":
        assert isinstance(oe, tuple) and len(oe) == 2
        pairs = list(zip(oe, ot))
    else:
        pairs = [(oe, ot)]
    for e, t in pairs:
        close(e, t, tol)
    backward_both(pairs, rng)
    for a, b in zip(ins_e, ins_t):
        close(a.grad, b.grad, tol * 10)
    same_param_grads(em, tm, tol)


def test_cell_sequence_matches_layer():
    # An LSTMCell stepped by hand over a sequence gives nn.LSTM's output with the same weights.
    cell = enn.LSTMCell(IN, HID)
    layer = enn.LSTM(IN, HID)
    with ember.no_grad():
        for a, b in (("weight_ih", "weight_ih_l0"), ("weight_hh", "weight_hh_l0"), ("bias_ih", "bias_ih_l0"),
                     ("bias_hh", "bias_hh_l0")):
            getattr(layer, b).copy_(getattr(cell, a))
    x = ember.randn(T, B, IN)
    h = c = ember.zeros(B, HID)
    outs = []
    for t in range(T):
        h, c = cell(x[t], (h, c))
        outs.append(h)
    out, (hn, cn) = layer(x)
    np.testing.assert_allclose(ember.stack(outs).detach().numpy(), out.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cn[0].detach().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---- module layout ----

LAYOUTS = [("RNN", (3, 4), {}), ("RNN", (3, 4), {"nonlinearity": "relu", "num_layers": 2, "bias": False}),
           ("LSTM", (3, 4), {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
           ("LSTM", (3, 4), {"bias": False, "batch_first": True, "dropout": 0.5, "num_layers": 3}),
           ("GRU", (3, 4), {"bidirectional": True, "num_layers": 2, "dropout": 0.25}),
           ("RNNCell", (3, 4), {}), ("RNNCell", (3, 4), {"bias": False, "nonlinearity": "relu"}),
           ("LSTMCell", (3, 4), {"bias": False}), ("GRUCell", (2, 7), {})]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda c: f"{c[0]}-{c[2]}")
def test_state_dict_parameters_and_repr_match_torch(layout):
    name, args, kwargs = layout
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = getattr(tnn, name)(*args, **kwargs)
        em = getattr(enn, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    for attr in ("input_size", "hidden_size", "bias", "nonlinearity", "mode", "num_layers", "batch_first",
                 "dropout", "bidirectional", "proj_size", "_flat_weights_names", "_all_weights"):
        assert hasattr(em, attr) == hasattr(tm, attr), attr
        if hasattr(tm, attr):
            assert getattr(em, attr) == getattr(tm, attr), attr
            assert type(getattr(em, attr)) is type(getattr(tm, attr)), attr


def test_nn_utils_is_the_utils_package():
    # `nn.utils.rnn.pack_padded_sequence` as RNN programs write it (the star import of nn.modules
    # must not leave nn.utils bound to nn.modules.utils).
    assert enn.utils is importlib.import_module("ember.nn.utils")
    assert enn.utils.rnn.PackedSequence is ernn.PackedSequence
    assert callable(enn.utils.clip_grad_norm_)
    for name in ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"):
        assert getattr(enn, name) is getattr(enn.modules, name)
        assert issubclass(getattr(enn, name), enn.Module)


def test_repr_in_container_matches_torch():
    tm = tnn.Sequential(tnn.LSTM(3, 4, batch_first=True, bidirectional=True), tnn.GRUCell(3, 4, bias=False))
    em = enn.Sequential(enn.LSTM(3, 4, batch_first=True, bidirectional=True), enn.GRUCell(3, 4, bias=False))
    assert repr(em) == repr(tm)


def test_flat_weights_follow_the_parameters():
    m = enn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    t = tnn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    params = dict(m.named_parameters())
    assert [tuple(w.shape) for w in m._flat_weights] == [tuple(w.shape) for w in t._flat_weights]
    assert all(w is params[n] for w, n in zip(m._flat_weights, m._flat_weights_names))
    assert [[tuple(w.shape) for w in ws] for ws in m.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t.all_weights]
    assert m.all_weights[3][4] is m.weight_hr_l1_reverse
    new = enn.Parameter(ember.zeros(16, 3))
    m.weight_ih_l0 = new
    assert m._flat_weights[0] is new
    m.double()
    assert all(w.dtype == ember.float64 for w in m._flat_weights)
    assert all(w is p for w, p in zip(m._flat_weights, m.parameters()))
    out, _ = m(ember.randn(2, 1, 3, dtype=ember.float64))
    assert out.dtype == ember.float64
    assert m.flatten_parameters() is None
    c = copy.deepcopy(m)
    assert all(w is p for w, p in zip(c._flat_weights, c.parameters()))
    assert all(a is not b for a, b in zip(c._flat_weights, m._flat_weights))
    buf = io.BytesIO()
    ember.save(m, buf)
    buf.seek(0)
    p = ember.load(buf, weights_only=False)
    assert all(w is q for w, q in zip(p._flat_weights, p.parameters()))
    np.testing.assert_array_equal(p(ember.ones(2, 1, 3, dtype=ember.float64))[0].detach().numpy(),
                                  m(ember.ones(2, 1, 3, dtype=ember.float64))[0].detach().numpy())


def test_double_module_matches_torch():
    em, tm = twin("GRU", (IN, HID), {"num_layers": 2})
    em.double()
    tm.double()
    x = torch.randn(T, B, IN, dtype=torch.float64)
    oe, he = em(to_ember(x))
    ot, ht = tm(x)
    close(oe, ot, 1e-6)  # float32 weights widened: same values in both
    close(he, ht, 1e-6)


@pytest.mark.parametrize("name,args", [("RNN", (3, 9)), ("LSTM", (4, 16)), ("GRU", (2, 25)), ("RNNCell", (3, 9)),
                                       ("LSTMCell", (4, 16)), ("GRUCell", (2, 25))])
def test_default_init_is_uniform_in_one_over_sqrt_hidden(name, args):
    ember.manual_seed(0)
    m = getattr(enn, name)(*args)
    bound = 1 / math.sqrt(args[1])
    vals = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert np.all(np.abs(vals) <= bound)
    assert np.abs(vals).max() > 0.9 * bound  # spread over the whole interval, not a narrower one
    assert abs(vals.mean()) < 0.15 * bound
    for p in m.parameters():
        assert len(np.unique(p.detach().numpy())) > p.numel() // 2
    m.reset_parameters()
    vals2 = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert not np.array_equal(vals, vals2)


# ---- dropout ----

@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_dropout_eval_equals_no_dropout(name):
    em, tm = twin(name, (IN, HID), {"num_layers": 3, "dropout": 0.5})
    em.eval()
    tm.eval()
    x = torch.randn(T, B, IN)
    oe, _ = em(to_ember(x))
    ot, _ = tm(x)
    close(oe, ot, TOL["float32"])
    em.train()
    oe2, _ = em(to_ember(x))  # train mode drops between layers
    assert not np.allclose(oe2.detach().numpy(), ot.detach().numpy(), atol=1e-4)


def test_dropout_one_in_train_mode_matches_torch():
    # p=1 zeroes every input of layer 2 (deterministic), in torch as in ember.
    em, tm = twin("LSTM", (IN, HID), {"num_layers": 2, "dropout": 1.0})
    x = torch.randn(T, B, IN)
    oe, (he, ce) = em(to_ember(x))
    ot, (ht, ct) = tm(x)
    close(oe, ot, TOL["float32"])
    close(ce, ct, TOL["float32"])


def test_dropout_single_layer_warns_like_torch():
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        tnn.GRU(3, 4, dropout=0.2)
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        enn.GRU(3, 4, dropout=0.2)
    assert [w.category for w in we] == [w.category for w in wt] == [UserWarning]
    assert str(we[0].message) == str(wt[0].message)


# ---- gradcheck ----

def test_gradcheck_lstm_float64():
    m = enn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2, dtype=ember.float64)
    names = [n for n, _ in m.named_parameters()]
    x = ember.randn(3, 2, 2, dtype=ember.float64, requires_grad=True)
    h0 = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)
    c0 = ember.randn(4, 2, 3, dtype=ember.float64, requires_grad=True)
    params = [p.detach().clone().requires_grad_() for p in m.parameters()]

    def fn(x, h0, c0, *ps):
        out, (h, c) = functional_call(m, dict(zip(names, ps)), (x, (h0, c0)))
        return out, h, c

    assert gradcheck(fn, (x, h0, c0, *params))


def test_gradcheck_packed_gru_float64():
    m = enn.GRU(2, 3, bidirectional=True, dtype=ember.float64)
    x = ember.randn(4, 3, 2, dtype=ember.float64, requires_grad=True)
    h0 = ember.randn(2, 3, 3, dtype=ember.float64, requires_grad=True)

    def fn(x, h0):
        out, h = m(ernn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False), h0)
        return out.data, h

    assert gradcheck(fn, (x, h0))


# ---- errors ----

def same_exception(make, call):
    """make(nn) builds the module (or raises), call(lib, m) runs it; both libraries raise the same class."""
    errs = []
    for lib, nn in ((torch, tnn), (ember, enn)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = make(nn)
                if call is not None:
                    call(lib, m)
        except Exception as e:  # noqa: BLE001
            errs.append(e)
        else:
            errs.append(None)
    et, ee = errs
    assert et is not None, "torch did not raise"
    assert ee is not None, f"ember did not raise (torch: {type(et).__name__}: {et})"
    assert type(ee) is type(et), f"ember {type(ee).__name__}: {ee}; torch {type(et).__name__}: {et}"
    return ee, et


CTOR_ERRORS = [
    lambda nn: nn.RNN(3, 4, dropout=1.5), lambda nn: nn.LSTM(3, 4, dropout=True), lambda nn: nn.GRU(3, 4, dropout="a"),
    lambda nn: nn.RNN(3, 4, dropout=None), lambda nn: nn.RNN(3, 4.0), lambda nn: nn.RNN(3, 0), lambda nn: nn.LSTM(0, 4),
    lambda nn: nn.GRU(3.0, 4), lambda nn: nn.RNN(3, 4, 0), lambda nn: nn.RNN(3, 4, 2.0),
    lambda nn: nn.RNN(3, 4, bias=1), lambda nn: nn.LSTM(3, 4, batch_first=1), lambda nn: nn.LSTM(3, 4, proj_size=-1),
    lambda nn: nn.LSTM(3, 4, proj_size=4),
    lambda nn: nn.GRU(3, 4, proj_size=2), lambda nn: nn.RNN(3, 4, proj_size=1),
    lambda nn: nn.RNN(3, 4, nonlinearity="sigmoid"), lambda nn: nn.RNN(3, 4, 1, True),
    lambda nn: nn.RNNBase("FOO", 3, 4), lambda nn: nn.RNN(3), lambda nn: nn.LSTM(3, 4, hidden_size=3),
    lambda nn: nn.RNNCell(3.0, 4), lambda nn: nn.RNN(3, True),
]


@pytest.mark.parametrize("i", range(len(CTOR_ERRORS)))
def test_constructor_errors_match_torch(i):
    ee, et = same_exception(CTOR_ERRORS[i], None)
    if not isinstance(et, TypeError):
        assert str(ee) == str(et)


def _r(lib, *shape, dtype=None):
    return lib.randn(*shape, dtype=dtype or lib.float32)


FORWARD_ERRORS = [
    # (constructor, call)
    (lambda nn: nn.RNN(3, 4), lambda lib, m: m(_r(lib, 5, 2, 5))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_r(lib, 5))),
    (lambda nn: nn.GRU(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3, 1))),
    (lambda nn: nn.RNN(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3, dtype=lib.float64))),
    (lambda nn: nn.GRU(3, 4), lambda lib, m: m(_r(lib, 0, 2, 3))),
    (lambda nn: nn.RNN(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3), _r(lib, 1, 3, 4))),
    (lambda nn: nn.GRU(3, 4, 2), lambda lib, m: m(_r(lib, 5, 2, 3), _r(lib, 1, 2, 4))),
    (lambda nn: nn.RNN(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3), _r(lib, 2, 4))),
    (lambda nn: nn.GRU(3, 4), lambda lib, m: m(_r(lib, 5, 3), _r(lib, 1, 1, 4))),
    (lambda nn: nn.RNN(3, 4), lambda lib, m: m(_r(lib, 5, 3), _r(lib, 1, 5))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3), (_r(lib, 1, 3, 4), _r(lib, 1, 2, 4)))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3), (_r(lib, 1, 2, 4), _r(lib, 1, 2, 5)))),
    (lambda nn: nn.LSTM(3, 4, proj_size=2), lambda lib, m: m(_r(lib, 5, 2, 3), (_r(lib, 1, 2, 4), _r(lib, 1, 2, 4)))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3), (_r(lib, 2, 4), _r(lib, 1, 2, 4)))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_r(lib, 5, 3), (_r(lib, 1, 1, 4), _r(lib, 1, 1, 4)))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_r(lib, 5, 2, 3), (_r(lib, 1, 2, 4),))),
    (lambda nn: nn.RNN(3, 4), lambda lib, m: m(_pack(lib, _r(lib, 4, 2, 5)))),
    (lambda nn: nn.GRU(3, 4), lambda lib, m: m(_pack(lib, _r(lib, 4, 2, 3, dtype=lib.float64)))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_pack(lib, _r(lib, 4, 2, 5)))),
    (lambda nn: nn.LSTM(3, 4), lambda lib, m: m(_pack(lib, _r(lib, 4, 2, 3, dtype=lib.float64)))),
    (lambda nn: nn.GRU(3, 4), lambda lib, m: m(_pack(lib, _r(lib, 4, 2, 3)), _r(lib, 1, 3, 4))),
    (lambda nn: nn.RNNBase("LSTM", 3, 4), lambda lib, m: m(_r(lib, 5, 2, 3))),
    (lambda nn: nn.RNNCell(3, 4), lambda lib, m: m(_r(lib, 2, 5))),
    (lambda nn: nn.LSTMCell(3, 4), lambda lib, m: m(_r(lib, 5))),
    (lambda nn: nn.GRUCell(3, 4), lambda lib, m: m(_r(lib, 1, 2, 3))),
    (lambda nn: nn.RNNCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), _r(lib, 1, 2, 4))),
    (lambda nn: nn.LSTMCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), (_r(lib, 1, 2, 4), _r(lib, 2, 4)))),
    (lambda nn: nn.GRUCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), _r(lib, 3, 4))),
    (lambda nn: nn.RNNCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), _r(lib, 2, 5))),
    (lambda nn: nn.LSTMCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), (_r(lib, 2, 4), _r(lib, 3, 4)))),
    (lambda nn: nn.LSTMCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), (_r(lib, 2, 4), _r(lib, 2, 5)))),
    (lambda nn: nn.LSTMCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), _r(lib, 2, 4))),
    (lambda nn: nn.GRUCell(3, 4), lambda lib, m: m(_r(lib, 3), _r(lib, 1, 4))),
    (lambda nn: nn.RNNCell(3, 4), lambda lib, m: m(_r(lib, 2, 3), _r(lib, 4))),
    (lambda nn: nn.RNNCell(3, 2), lambda lib, m: m(_r(lib, 2, 3), _r(lib, 2))),
    (lambda nn: nn.GRUCell(3, 4), lambda lib, m: m(_r(lib, 2, 3, dtype=lib.float64))),
    (lambda nn: nn.RNNCell(3, 4, nonlinearity="sigmoid"), lambda lib, m: m(_r(lib, 2, 3))),
]


def _pack(lib, x):
    return lib.nn.utils.rnn.pack_padded_sequence(x, [4, 2])


@pytest.mark.parametrize("i", range(len(FORWARD_ERRORS)))
def test_forward_errors_match_torch(i):
    make, call = FORWARD_ERRORS[i]
    ee, et = same_exception(make, call)
    if "size" in str(et) or "Expected" in str(et):  # the messages we write are torch's
        assert str(ee).replace("ember", "torch") == str(et).split("\n")[0]


# ---- the fused cell ops (ops/nn_rnn.cpp) and the top-level functions torch.lstm/gru/rnn_*, *_cell ----

def _pair(shape, rng, dtype="float64"):
    a = rng.standard_normal(shape).astype(dtype)
    return ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(e, t, tol):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cell_functions_match_torch(kind, bias):
    rng = np.random.default_rng(11)
    B, I, H = 3, 5, 4
    chunks = {"lstm_cell": 4, "gru_cell": 3}.get(kind, 1)
    lead = (B,)
    x = _pair(lead + (I,), rng)
    h = _pair(lead + (H,), rng)
    c = _pair(lead + (H,), rng)
    w_ih, w_hh = _pair((chunks * H, I), rng), _pair((chunks * H, H), rng)
    b_ih, b_hh = (_pair((chunks * H,), rng), _pair((chunks * H,), rng)) if bias else ((None, None), (None, None))
    hx = lambda k: (h[k], c[k]) if kind == "lstm_cell" else h[k]  # noqa: E731
    out_e = getattr(ember, kind)(x[0], hx(0), w_ih[0], w_hh[0], b_ih[0], b_hh[0])
    out_t = getattr(torch, kind)(x[1], hx(1), w_ih[1], w_hh[1], b_ih[1], b_hh[1])
    outs_e = out_e if isinstance(out_e, tuple) else (out_e,)
    outs_t = out_t if isinstance(out_t, tuple) else (out_t,)
    seed = np.random.default_rng(2)
    loss_e, loss_t = 0, 0
    for oe, ot in zip(outs_e, outs_t):
        _close(oe, ot, 1e-12)
        g = seed.standard_normal(tuple(ot.shape))
        loss_e = loss_e + (oe * ember.tensor(g)).sum()
        loss_t = loss_t + (ot * torch.tensor(g)).sum()
    loss_e.backward()
    loss_t.backward()
    leaves = [x, h, w_ih, w_hh] + ([c] if kind == "lstm_cell" else []) + ([b_ih, b_hh] if bias else [])
    for e, t in leaves:
        _close(e.grad, t.grad, 1e-11)


@pytest.mark.parametrize("kind", ["lstm_cell", "gru_cell"])
def test_fused_cells_double_backward(kind):
    """Second derivatives through the fused ops (their backward under create_graph)."""
    from ember.autograd import gradgradcheck
    rng = np.random.default_rng(4)
    B, I, H = 2, 3, 2
    chunks = 4 if kind == "lstm_cell" else 3
    t = lambda *s: ember.tensor(rng.standard_normal(s), requires_grad=True)  # noqa: E731
    x, h, c, w_ih, w_hh, b = t(B, I), t(B, H), t(B, H), t(chunks * H, I), t(chunks * H, H), t(chunks * H)
    if kind == "lstm_cell":
        def f(x, h, c, w_ih, w_hh, b):
            return ember.lstm_cell(x, (h, c), w_ih, w_hh, b, b)
        args = (x, h, c, w_ih, w_hh, b)
    else:
        def f(x, h, w_ih, w_hh, b):
            return ember.gru_cell(x, h, w_ih, w_hh, b, b)
        args = (x, h, w_ih, w_hh, b)
    assert gradcheck(f, args)
    assert gradgradcheck(f, args)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_lstm_cell_16bit_matches_float32(dtype):
    rng = np.random.default_rng(9)
    gates = rng.standard_normal((4, 12)).astype("float32")
    cx = rng.standard_normal((4, 3)).astype("float32")
    dt = getattr(ember, dtype)
    h16, c16 = ember._C._nn_lstm_cell_fused(ember.tensor(gates).to(dt), ember.tensor(cx).to(dt))
    h32, c32 = ember._C._nn_lstm_cell_fused(ember.tensor(gates).to(dt).float(), ember.tensor(cx).to(dt).float())
    assert h16.dtype == dt and c16.dtype == dt
    np.testing.assert_allclose(h16.float().numpy(), h32.numpy(), atol=1e-2)
    np.testing.assert_allclose(c16.float().numpy(), c32.numpy(), atol=2e-2)


def test_fused_cell_errors():
    with pytest.raises(RuntimeError):
        ember._C._nn_lstm_cell_fused(ember.zeros(2, 7), ember.zeros(2, 2))  # 7 != 4 * 2
    with pytest.raises(RuntimeError):
        ember._C._nn_gru_cell_fused(ember.zeros(2, 6), ember.zeros(3, 6), ember.zeros(2, 2))
    with pytest.raises(RuntimeError):
        ember._C._nn_lstm_cell_fused(ember.zeros(2, 8), ember.zeros(2, 2, dtype=ember.float64))
    with pytest.raises(NotImplementedError):
        ember._C._nn_lstm_cell_fused(ember.zeros(2, 8, dtype=ember.int64), ember.zeros(2, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError):  # torch: RuntimeError for a mismatched hidden size
        torch.lstm_cell(torch.zeros(2, 3), (torch.zeros(2, 4), torch.zeros(2, 4)), torch.zeros(8, 3), torch.zeros(8, 2))
    with pytest.raises(RuntimeError):
        ember.lstm_cell(ember.zeros(2, 3), (ember.zeros(2, 4), ember.zeros(2, 4)), ember.zeros(8, 3), ember.zeros(8, 2))
    for lib in (torch, ember):  # no unbatched form in the functions (the modules add the batch dim)
        with pytest.raises(IndexError):
            lib.gru_cell(lib.zeros(3), lib.zeros(2), lib.zeros(6, 3), lib.zeros(6, 2))


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layout", ["padded", "batch_first", "packed"])
def test_rnn_functions_match_torch(mode, layout):
    """torch.lstm/gru/rnn_tanh/rnn_relu with a module's flat weights, both overloads."""
    torch.manual_seed(0)
    cls = {"lstm": tnn.LSTM, "gru": tnn.GRU, "rnn_tanh": tnn.RNN, "rnn_relu": tnn.RNN}[mode]
    kw = dict(nonlinearity="relu") if mode == "rnn_relu" else {}
    m = cls(3, 4, num_layers=2, bidirectional=True, batch_first=layout == "batch_first", **kw).double()
    params_t = [p.detach().clone().requires_grad_(True) for p in m._flat_weights]
    params_e = [ember.tensor(p.detach().numpy(), requires_grad=True) for p in params_t]
    rng = np.random.default_rng(1)
    T, B = 5, 3
    shape = (B, T, 3) if layout == "batch_first" else (T, B, 3)
    x_e, x_t = _pair(shape, rng)
    h_e, h_t = _pair((4, B, 4), rng)
    c_e, c_t = _pair((4, B, 4), rng)
    hx_e = (h_e, c_e) if mode == "lstm" else h_e
    hx_t = (h_t, c_t) if mode == "lstm" else h_t
    if layout == "packed":
        lengths = [5, 3, 2]
        pt = trnn.pack_padded_sequence(x_t, lengths)
        pe = ernn.pack_padded_sequence(x_e, lengths)
        out_t = getattr(torch, mode)(pt.data, pt.batch_sizes, hx_t, params_t, True, 2, 0.0, False, True)
        out_e = getattr(ember, mode)(pe.data, pe.batch_sizes, hx_e, params_e, True, 2, 0.0, False, True)
    else:
        bf = layout == "batch_first"
        out_t = getattr(torch, mode)(x_t, hx_t, params_t, True, 2, 0.0, False, True, bf)
        out_e = getattr(ember, mode)(x_e, hx_e, params_e, True, 2, 0.0, False, True, bf)
    assert len(out_e) == len(out_t) == (3 if mode == "lstm" else 2)
    loss_e = sum((o * o).sum() for o in out_e)
    loss_t = sum((o * o).sum() for o in out_t)
    for oe, ot in zip(out_e, out_t):
        _close(oe, ot, 1e-11)
    loss_e.backward()
    loss_t.backward()
    for (e, t) in [(x_e, x_t), (h_e, h_t)] + list(zip(params_e, params_t)):
        _close(e.grad, t.grad, 1e-10)


@pytest.mark.parametrize("lib", ["torch", "ember"])
def test_rnn_function_errors_match_torch(lib):
    m = torch if lib == "torch" else ember
    with pytest.raises(IndexError):  # 2-D input: the functions take no unbatched form
        m.gru(m.zeros(3, 2), m.zeros(1, 2, 4), [m.zeros(12, 2), m.zeros(12, 4)], False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="incorrect number of RNN parameters"):
        m.gru(m.zeros(3, 2, 2), m.zeros(1, 2, 4), [m.zeros(12, 2), m.zeros(12, 4), m.zeros(12)], False, 1, 0.0, False,
              False, False)


# Batches past the panel products (more than 48 rows) run each step's products on BLAS; with MKL, on
# weights packed once per call (RecurrentPack, ops/nn_rnn.cpp). Results as torch's, the same bits for
# 1, 2 and 3 threads, in inference and training.
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_fused_layer_wide_batch(name, dtype):
    rng = np.random.default_rng(4)
    em, tm = twin(name, (16, 256), {"num_layers": 2}, dtype, 0)
    xe, xt = rand((5, 64, 16), dtype, rng)
    tol = 1e-4 if dtype == "float32" else 1e-10
    want = tm(xt)[0].detach().numpy()
    before = ember.get_num_threads()
    try:
        outs = []
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            with ember.no_grad():
                inference = em(xe)[0].numpy()
            training = em(xe)[0]
            training.sum().backward()
            outs.append((inference, training.detach().numpy()))
    finally:
        ember.set_num_threads(before)
    np.testing.assert_allclose(outs[0][0], want, rtol=tol, atol=tol)
    for inference, training in outs:
        assert np.array_equal(inference, outs[0][0]) and np.array_equal(training, outs[0][0])


def _inference_on_1_and_2_threads(run):
    """run() under no_grad with 1 and then 2 threads."""
    before = ember.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            ember.set_num_threads(threads)
            with ember.no_grad():
                outs.append(run())
        return outs
    finally:
        ember.set_num_threads(before)


# Batches of up to 48 rows run each step's products on packed panels (Note [Recurrent GEMM]): at
# AVX-512 3 vectors of 16 floats wide and tiles of up to 8 rows, so batch sizes around 4 and 8 and
# widths past whole panels (4 H = 320: six panels of 48 and a part) take every tile shape.
@pytest.mark.parametrize("batch", [1, 3, 8, 13, 16, 29, 48])
@pytest.mark.parametrize("hid", [64, 80])
def test_fused_layer_panel_tiles(batch, hid):
    rng = np.random.default_rng(batch * 100 + hid)
    em, tm = twin("LSTM", (24, hid), {}, "float32", 0)
    xe, xt = rand((7, batch, 24), "float32", rng)
    want = tm(xt)[0].detach().numpy()
    outs = [y[0].numpy() for y in _inference_on_1_and_2_threads(lambda: em(xe))]
    np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(outs[0], outs[1])


def test_fused_lstm_layer_gates_scratch():
    # gates_scratch lets the layer write the activations over gi (nn.LSTM's own temporary) only where
    # no graph is recorded; otherwise gi is left as it was, and the results are the same either way
    rng = np.random.default_rng(8)
    gi = ember.from_numpy(rng.standard_normal((12, 64)).astype(np.float32))
    h0 = ember.zeros(3, 16)
    c0 = ember.zeros(3, 16)
    w = ember.from_numpy(rng.standard_normal((64, 16)).astype(np.float32) * 0.1)
    keep = gi.clone()
    want = ember._C._nn_lstm_layer(gi, [3, 3, 3, 3], h0, c0, w, False)
    assert ember.equal(gi, keep)
    wr = w.clone().requires_grad_()
    got = ember._C._nn_lstm_layer(gi, [3, 3, 3, 3], h0, c0, wr, False, gates_scratch=True)
    assert ember.equal(gi, keep)  # a graph is recorded: gi is saved for backward, never overwritten
    scratch = gi.clone()
    fast = ember._C._nn_lstm_layer(scratch, [3, 3, 3, 3], h0, c0, w, False, gates_scratch=True)
    for a, b, c in zip(want, got, fast):
        assert ember.equal(a, b.detach()) and ember.equal(a, c)


# Inference of a bidirectional LSTM runs both directions of a layer at once, a thread each
# (ember._C._nn_lstm_layer_pair): the same bits as the one-direction-at-a-time path with a graph,
# for 1 and 2 threads, padded and packed, with and without biases and initial states.
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["padded", "packed", "no_bias", "batch64"])
def test_bidirectional_lstm_inference_pair(dtype, kind):
    rng = np.random.default_rng(11)
    kwargs = {"num_layers": 2, "bidirectional": True, "bias": kind != "no_bias"}
    em, tm = twin("LSTM", (10, 96), kwargs, dtype, 3)
    batch = 64 if kind == "batch64" else 5
    xe, xt = rand((6, batch, 10), dtype, rng)
    h0 = to_ember(torch.tensor(rng.standard_normal((4, batch, 96)).astype(dtype)))
    c0 = to_ember(torch.tensor(rng.standard_normal((4, batch, 96)).astype(dtype)))
    inp = xe.detach()
    if kind == "packed":
        inp = enn.utils.rnn.pack_padded_sequence(inp, [6, 5, 5, 3, 1], enforce_sorted=False)
    with_graph = em(inp, (h0, c0))  # the parameters require grad: a graph, one direction at a time
    outs = _inference_on_1_and_2_threads(lambda: em(inp, (h0, c0)))
    for got in outs:
        y, (h, c) = got
        want_y, (want_h, want_c) = with_graph
        if kind == "packed":
            y, want_y = y.data, want_y.data
        for a, b in ((y, want_y), (h, want_h), (c, want_c)):
            assert np.array_equal(a.numpy(), b.detach().numpy())
    y, _ = tm(xt.detach(), (torch.tensor(h0.numpy()), torch.tensor(c0.numpy())))
    if kind != "packed":
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(outs[1][0].numpy(), y.detach().numpy(), rtol=tol, atol=tol)


def test_lstm_layer_pair_errors_come_back():
    # an error on a worker thread is raised on the caller's
    gi = ember.zeros(4, 16)
    h0, c0, w = ember.zeros(2, 4), ember.zeros(2, 4), ember.zeros(16, 4)
    with pytest.raises(RuntimeError):
        ember._C._nn_lstm_layer_pair(gi, gi, [2, 2], h0, c0, w, h0, c0, ember.zeros(16, 5))
    with pytest.raises(RuntimeError):
        ember._C._nn_lstm_layer_pair(gi, ember.zeros(4, 12), [2, 2], h0, c0, w, h0, c0, w)
