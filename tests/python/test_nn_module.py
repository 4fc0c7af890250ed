"""nn.Module, Parameter, containers, Linear/Bilinear/Flatten and nn.init against torch 2.13."""
import copy
import math
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
tnn = torch.nn


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def to_np(x):
    return np.asarray(x.detach().tolist(), dtype=np.float64)


def close(e, t, tol=1e-5):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(to_np(e).reshape(tuple(e.shape)), t.detach().double().numpy(), rtol=tol, atol=tol)


def copy_weights(em, tm):
    """Loads torch module tm's state into ember module em (same definitions)."""
    sd = OrderedDict((k, to_ember(v)) for k, v in tm.state_dict().items())
    em.load_state_dict(sd)


def same_errors(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    return str(ee.value), str(te.value)


class Net:
    """One model definition built with either library: nested containers and every base module."""

    @staticmethod
    def build(nn):
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.register_buffer("running", torch_or_ember(nn).zeros(4))
                self.register_buffer("scratch", torch_or_ember(nn).ones(2), persistent=False)

            def forward(self, x):
                return self.fc(x) + self.running

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Linear(3, 4)
                self.blocks = nn.ModuleList([Block() for _ in range(2)])
                self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 2, bias=False)})
                self.seq = nn.Sequential(nn.Identity(), nn.Flatten(0, -1), nn.Unflatten(0, (2, 2)))
                self.bil = nn.Bilinear(2, 2, 3)
                self.scale = nn.Parameter(torch_or_ember(nn).ones(1))

            def forward(self, x):
                h = self.inp(x)
                for b in self.blocks:
                    h = b(h)
                a = self.heads["a"](h)
                return self.bil(a, self.heads["b"](h)) * self.scale

        return Model()


def torch_or_ember(nn):
    return torch if nn is tnn else ember


# ---- Parameter, Buffer ----

def test_parameter_basics():
    p = enn.Parameter(ember.randn(2, 3))
    assert isinstance(p, ember.Tensor) and isinstance(p, enn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not enn.Parameter(ember.randn(2), requires_grad=False).requires_grad
    assert tuple(enn.Parameter().shape) == tuple(tnn.Parameter().shape) == (0,)
    t = torch.tensor([[1.0, -2.5], [3.0, 4.0]])
    e = enn.Parameter(to_ember(t))
    assert repr(e) == repr(tnn.Parameter(t))
    assert type(e * 2) is ember.Tensor and type(e.detach()) is ember.Tensor
    # A Parameter aliases its data's storage.
    base = ember.zeros(3)
    q = enn.Parameter(base)
    base.add_(1)
    assert q.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError):
        enn.Parameter([1.0, 2.0])


def test_parameter_deepcopy_and_grad():
    p = enn.Parameter(ember.randn(3))
    p.grad = ember.ones(3)
    p.extra = "tag"
    q = copy.deepcopy(p)
    assert type(q) is enn.Parameter and q.requires_grad and q.tolist() == p.tolist()
    tp = tnn.Parameter(torch.randn(3))
    tp.grad = torch.ones(3)
    tp.extra = "tag"
    tq = copy.deepcopy(tp)
    assert (q.grad is None) == (tq.grad is None) and hasattr(q, "extra") == hasattr(tq, "extra")
    # A plain tensor's deepcopy keeps grad and attributes (as torch's).
    x = ember.ones(2).requires_grad_()
    x.grad = ember.ones(2)
    x.tag = 1
    y = copy.deepcopy(x)
    assert y.grad.tolist() == [1.0, 1.0] and y.tag == 1 and y.requires_grad
    q.data.add_(1)
    assert q.tolist() != p.tolist()
    # The non-leaf error of torch.
    with pytest.raises(RuntimeError):
        copy.deepcopy(p * 2)


def test_buffer_marker():
    b = enn.Buffer(ember.ones(2), persistent=False)
    assert isinstance(b, enn.Buffer) and isinstance(b, ember.Tensor)
    assert not isinstance(ember.ones(2), enn.Buffer)

    class M(enn.Module):
        def __init__(self):
            super().__init__()
            self.a = enn.Buffer(ember.ones(2))
            self.b = enn.Buffer(ember.zeros(1), persistent=False)

    class T(tnn.Module):
        def __init__(self):
            super().__init__()
            self.a = tnn.Buffer(torch.ones(2))
            self.b = tnn.Buffer(torch.zeros(1), persistent=False)

    assert list(M().state_dict()) == list(T().state_dict()) == ["a"]
    assert [n for n, _ in M().named_buffers()] == [n for n, _ in T().named_buffers()]


def test_uninitialized_parameter():
    u = enn.UninitializedParameter()
    assert enn.parameter.is_lazy(u) and u.requires_grad
    with pytest.raises(RuntimeError):
        u.shape
    u.materialize((2, 3))
    assert type(u) is enn.Parameter and tuple(u.shape) == (2, 3)
    b = enn.UninitializedBuffer(dtype=ember.float64)
    b.materialize((4,))
    assert type(b) is ember.Tensor and b.dtype == ember.float64


# ---- registration and iteration ----

def test_names_state_dict_and_repr_match_torch():
    e, t = Net.build(enn), Net.build(tnn)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    esd, tsd = e.state_dict(), t.state_dict()
    assert list(esd) == list(tsd)
    assert [tuple(v.shape) for v in esd.values()] == [tuple(v.shape) for v in tsd.values()]
    assert dict(esd._metadata) == dict(tsd._metadata)
    assert repr(e) == repr(t)
    assert [n for n, _ in e.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in t.named_parameters(prefix="m", recurse=False)]
    assert [n for n, _ in e.named_modules(prefix="root")] == [n for n, _ in t.named_modules(prefix="root")]


def test_forward_backward_with_copied_weights():
    e, t = Net.build(enn), Net.build(tnn)
    copy_weights(e, t)
    x = torch.randn(5, 3)
    out_t = t(x)
    out_e = e(to_ember(x))
    close(out_e, out_t)
    out_t.sum().backward()
    out_e.sum().backward()
    for (n, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
        close(pe.grad, pt.grad, 1e-4)


def test_shared_and_duplicate_members():
    for nn in (enn, tnn):
        lin = nn.Linear(2, 2)
        m = nn.Sequential(lin, lin)
        assert len(list(m.parameters())) == 2
        assert len(list(m.named_parameters(remove_duplicate=False))) == 4
        assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1"]
        assert len(list(m.modules())) == 2
    e = enn.Sequential(enn.Linear(2, 2))
    e.tied = e[0]
    assert [n for n, _ in e.named_modules()] == ["", "0"]


def test_setattr_getattr_delattr_rules():
    for nn, lib in ((enn, ember), (tnn, torch)):
        m = nn.Module()
        m.p = nn.Parameter(lib.ones(1))
        m.register_buffer("b", lib.zeros(1))
        m.child = nn.Linear(1, 1)
        assert "p" in m._parameters and "b" in m._buffers and "child" in m._modules
        assert "p" not in m.__dict__
        m.b = lib.ones(2)  # reassigning a buffer keeps it a buffer
        assert tuple(m._buffers["b"].shape) == (2,)
        with pytest.raises(TypeError):
            m.p = lib.ones(1)  # a plain tensor cannot replace a parameter
        with pytest.raises(TypeError):
            m.child = 3
        m.p = None
        assert m._parameters["p"] is None and m.p is None
        m.child = None
        assert m.child is None
        del m.b
        assert "b" not in m._buffers
        with pytest.raises(AttributeError, match="has no attribute 'nope'"):
            m.nope
        with pytest.raises(KeyError):
            m.register_parameter("a.b", None)
        with pytest.raises(KeyError):
            m.register_buffer("", None)
        with pytest.raises(TypeError):
            m.register_buffer("x", 3)
        with pytest.raises(TypeError):
            m.register_parameter("x", lib.ones(1))
        with pytest.raises(TypeError):
            m.add_module("x", 3)
        m.plain = 5
        with pytest.raises(KeyError):
            m.register_buffer("plain", lib.ones(1))
        # Assigning a Parameter over a buffer name moves it.
        m.register_buffer("c", lib.zeros(1))
        m.c = nn.Parameter(lib.zeros(1))
        assert "c" in m._parameters and "c" not in m._buffers
        with pytest.raises(ValueError):
            m.register_parameter("nonleaf", nn.Parameter(lib.ones(1)) * 2 if False else _nonleaf_param(nn, lib))


def _nonleaf_param(nn, lib):
    p = nn.Parameter(lib.ones(1))
    q = p * 2
    # A Parameter-typed non-leaf: torch checks grad_fn in register_parameter.
    return q.as_subclass(nn.Parameter) if nn is tnn else ember.Tensor.as_subclass(q, enn.Parameter)


def test_assign_before_init_errors():
    for nn, lib in ((enn, ember), (tnn, torch)):
        class Bad(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(lib.ones(1))
        with pytest.raises(AttributeError):
            Bad()


def test_dir_and_get_helpers():
    e, t = Net.build(enn), Net.build(tnn)
    de, dt = set(dir(e)), set(dir(t))
    for name in ("inp", "blocks", "scale", "forward", "heads"):
        assert name in de and name in dt
    assert e.get_submodule("blocks.1.fc") is e.blocks[1].fc
    assert e.get_parameter("blocks.0.fc.bias") is e.blocks[0].fc.bias
    assert e.get_buffer("blocks.0.running") is e.blocks[0].running
    for target in ("blocks.7", "inp.nothing"):
        same_errors(lambda: e.get_submodule(target), lambda: t.get_submodule(target))
    same_errors(lambda: e.get_parameter("blocks.0.running"), lambda: t.get_parameter("blocks.0.running"))
    same_errors(lambda: e.get_buffer("inp.weight"), lambda: t.get_buffer("inp.weight"))
    e.set_submodule("heads.a", enn.Identity())
    assert isinstance(e.heads.a, enn.Identity)


# ---- state dict ----

def test_load_state_dict_strict_and_messages():
    e, t = Net.build(enn), Net.build(tnn)
    sd_t = t.state_dict()
    sd_e = OrderedDict((k, to_ember(v)) for k, v in sd_t.items())
    res = e.load_state_dict(sd_e)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == repr(t.load_state_dict(sd_t)) == "<All keys matched successfully>"
    close(e.inp.weight, t.inp.weight)

    del sd_t["inp.bias"], sd_e["inp.bias"]
    sd_t["extra.w"] = torch.ones(1)
    sd_e["extra.w"] = ember.ones(1)
    sd_t["blocks.0.fc.zzz"] = torch.ones(1)
    sd_e["blocks.0.fc.zzz"] = ember.ones(1)
    me, mt = same_errors(lambda: e.load_state_dict(sd_e), lambda: t.load_state_dict(sd_t))
    assert me == mt
    re_, rt = e.load_state_dict(sd_e, strict=False), t.load_state_dict(sd_t, strict=False)
    assert re_.missing_keys == rt.missing_keys and re_.unexpected_keys == rt.unexpected_keys
    assert repr(re_) == repr(rt)

    sd_t = t.state_dict()
    sd_e = OrderedDict((k, to_ember(v)) for k, v in sd_t.items())
    sd_t["inp.weight"] = torch.ones(2, 2)
    sd_e["inp.weight"] = ember.ones(2, 2)
    me, mt = same_errors(lambda: e.load_state_dict(sd_e), lambda: t.load_state_dict(sd_t))
    assert me == mt
    sd_e["inp.weight"] = "not a tensor"
    with pytest.raises(RuntimeError, match="expected torch.Tensor or Tensor-like"):
        e.load_state_dict(sd_e)
    with pytest.raises(TypeError):
        e.load_state_dict([1, 2])


def test_load_state_dict_assign_and_identity():
    e = enn.Linear(3, 2)
    w = e.weight
    new = OrderedDict(weight=ember.ones(2, 3), bias=ember.zeros(2))
    e.load_state_dict(new)
    assert e.weight is w and e.weight.tolist() == [[1.0] * 3] * 2
    e.load_state_dict(new, assign=True)
    assert e.weight is not w and isinstance(e.weight, enn.Parameter) and e.weight.requires_grad
    e.weight.data.add_(1)
    assert new["weight"].tolist() == [[2.0] * 3] * 2  # assign=True keeps the given storage


def test_state_dict_keep_vars_prefix_and_hooks():
    e = enn.Sequential(enn.Linear(2, 2))
    assert e.state_dict(keep_vars=True)["0.weight"] is e[0].weight
    assert not e.state_dict()["0.weight"].requires_grad
    assert list(e.state_dict(prefix="net.")) == ["net.0.weight", "net.0.bias"]
    calls = []
    e.register_state_dict_pre_hook(lambda m, prefix, keep_vars: calls.append(("pre", prefix)))
    e.register_state_dict_post_hook(lambda m, sd, prefix, meta: calls.append(("post", len(sd))))
    e.register_load_state_dict_pre_hook(lambda m, sd, prefix, *a: calls.append(("lpre", prefix)))
    e.register_load_state_dict_post_hook(lambda m, keys: calls.append(("lpost", tuple(keys.missing_keys))))
    sd = e.state_dict()
    e.load_state_dict(sd)
    assert calls == [("pre", ""), ("post", 2), ("lpre", ""), ("lpost", ())]

    def bad_post(m, sd, prefix, meta):
        return {}
    h = e.register_state_dict_post_hook(bad_post)
    with pytest.raises(RuntimeError, match="must return None"):
        e.state_dict()
    h.remove()


def test_versioned_load_from_state_dict():
    """_load_from_state_dict sees each module's saved version through local_metadata."""
    seen = []

    class V(enn.Module):
        _version = 3

        def __init__(self):
            super().__init__()
            self.w = enn.Parameter(ember.zeros(1))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            seen.append(local_metadata.get("version"))
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)

    m = enn.Sequential(V())
    sd = m.state_dict()
    assert sd._metadata["0"] == {"version": 3}
    m.load_state_dict(sd)
    assert seen == [3]


def test_extra_state():
    class S(enn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = S(), S()
    a.value = 7
    sd = a.state_dict()
    assert list(sd) == ["_extra_state"]
    b.load_state_dict(sd)
    assert b.value == 7
    with pytest.raises(RuntimeError, match="Missing key"):
        b.load_state_dict({})


# ---- modes, grads, conversions ----

def test_train_eval_zero_grad_requires_grad():
    e = Net.build(enn)
    assert e.training and all(m.training for m in e.modules())
    e.eval()
    assert not any(m.training for m in e.modules())
    e.train()
    assert all(m.training for m in e.modules())
    with pytest.raises(ValueError):
        e.train("yes")
    e(ember.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in e.parameters())
    e.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum()) == 0 for p in e.parameters())
    e.zero_grad()
    assert all(p.grad is None for p in e.parameters())
    e.requires_grad_(False)
    assert not any(p.requires_grad for p in e.parameters())


def test_to_dtype_and_apply():
    e = Net.build(enn)
    w = e.inp.weight
    assert e.float() is e and e.inp.weight is w
    e.double()
    assert all(p.dtype == ember.float64 for p in e.parameters())
    assert all(b.dtype == ember.float64 for b in e.buffers())
    assert isinstance(e.inp.weight, enn.Parameter) and e.inp.weight.requires_grad
    out = e(ember.randn(2, 3, dtype=ember.float64))
    assert out.dtype == ember.float64
    e.to(ember.float32)
    assert e.inp.weight.dtype == ember.float32
    e.to("cpu", ember.float16)
    assert e.inp.weight.dtype == ember.float16
    e.to(dtype=ember.bfloat16)
    assert e.inp.weight.dtype == ember.bfloat16
    e.to(ember.zeros(1, dtype=ember.float64))
    assert e.inp.weight.dtype == ember.float64
    e.half()
    assert e.inp.weight.dtype == ember.float16
    e.bfloat16()
    assert e.inp.weight.dtype == ember.bfloat16
    with pytest.raises(TypeError):
        e.to(ember.int32)
    with pytest.raises(NotImplementedError):
        e.cuda()
    names = []
    e.apply(lambda m: names.append(type(m).__name__))
    t_names = []
    Net.build(tnn).apply(lambda m: t_names.append(type(m).__name__))
    assert names == t_names
    # Integer buffers are not cast.
    m = enn.Module()
    m.register_buffer("count", ember.zeros(1, dtype=ember.int64))
    m.double()
    assert m.count.dtype == ember.int64
    # Gradients follow a same-dtype conversion.
    lin = enn.Linear(2, 2)
    lin(ember.randn(1, 2)).sum().backward()
    lin.double()
    assert lin.weight.grad.dtype == ember.float64


def test_module_deepcopy_and_pickle_state():
    e = Net.build(enn)
    c = copy.deepcopy(e)
    assert repr(c) == repr(e)
    for (n1, p1), (n2, p2) in zip(e.named_parameters(), c.named_parameters()):
        assert n1 == n2 and p1 is not p2 and p1.tolist() == p2.tolist() and isinstance(p2, enn.Parameter)
    x = ember.randn(2, 3)
    close(c(x), torch.tensor(e(x).tolist()))
    st = e.__getstate__()
    fresh = Net.build(enn).__class__.__new__(type(e))
    fresh.__setstate__(st)
    assert fresh.inp is e.inp


# ---- hooks ----

def test_forward_hooks_order_kwargs_and_prepend():
    for nn, lib in ((enn, ember), (tnn, torch)):
        m = nn.Linear(2, 2)
        log = []
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)

        def pre_kw(mod, args, kwargs):
            log.append("prekw")
            return (args[0] * 0,), kwargs
        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append("post1"))

        def post_kw(mod, args, kwargs, out):
            log.append("postkw")
            return out + 1
        m.register_forward_hook(post_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append("post0"), prepend=True)
        x = lib.ones(1, 2)
        y = m(x)
        assert np.allclose(np.asarray(y.tolist()), np.asarray((m.bias + 1).tolist()))
        assert log == ["pre0", "pre1", "prekw", "post0", "post1", "postkw"]
        h1.remove()
        log.clear()
        m(x)
        assert log == ["pre0", "prekw", "post0", "post1", "postkw"]
        with h1:
            pass


def test_forward_pre_hook_replaces_args_and_errors():
    for nn, lib in ((enn, ember), (tnn, torch)):
        m = nn.Identity()
        m.register_forward_pre_hook(lambda mod, args: lib.zeros(3))
        assert tuple(m(lib.ones(1)).shape) == (3,)
        m2 = nn.Identity()
        m2.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        with pytest.raises(RuntimeError):
            m2(lib.ones(1))


def test_always_call_forward_hook():
    for nn, lib in ((enn, ember), (tnn, torch)):
        class Boom(nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        m = Boom()
        called = []
        m.register_forward_hook(lambda mod, args, out: called.append("always"), always_call=True)
        m.register_forward_hook(lambda mod, args, out: called.append("normal"))
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        assert called == ["always"]


def test_full_backward_hooks_match_torch():
    def run(nn, lib, x_np):
        m = nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 10, dtype=lib.float32))
            m.bias.fill_(0.5)
        rec = {}

        def pre(mod, grad_out):
            rec["pre"] = [g.tolist() for g in grad_out]
            return (grad_out[0] * 2,)

        def hook(mod, grad_in, grad_out):
            rec["in"] = [None if g is None else g.tolist() for g in grad_in]
            rec["out"] = [g.tolist() for g in grad_out]
            return (grad_in[0] * 3,)
        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(hook)
        x = lib.tensor(x_np, dtype=lib.float32, requires_grad=True)
        y = m(x)
        (y * lib.tensor([[1.0, 2.0]])).sum().backward()
        rec["x.grad"] = x.grad.tolist()
        rec["w.grad"] = m.weight.grad.tolist()
        return rec

    x_np = np.array([[1.0, -1.0, 2.0]])
    re_, rt = run(enn, ember, x_np), run(tnn, torch, x_np)
    for k in rt:
        np.testing.assert_allclose(np.asarray(re_[k], dtype=float), np.asarray(rt[k], dtype=float), rtol=1e-6)


def test_full_backward_hook_inputs_without_grad():
    for nn, lib in ((enn, ember), (tnn, torch)):
        m = nn.Linear(2, 2)
        got = []
        m.register_full_backward_hook(lambda mod, gi, go: got.append((gi, len(go))))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            m(lib.ones(1, 2)).sum().backward()
        assert len(got) == 1 and got[0][0] == (None,) and got[0][1] == 1


def test_global_hooks():
    from ember.nn.modules import module as emod
    log = []
    h1 = emod.register_module_forward_pre_hook(lambda m, a: log.append(("pre", type(m).__name__)))
    h2 = emod.register_module_forward_hook(lambda m, a, o: log.append(("post", type(m).__name__)))
    try:
        enn.Sequential(enn.Identity())(ember.ones(1))
    finally:
        h1.remove()
        h2.remove()
    assert log == [("pre", "Sequential"), ("pre", "Identity"), ("post", "Identity"), ("post", "Sequential")]
    log.clear()
    enn.Identity()(ember.ones(1))
    assert log == []


# ---- containers ----

def test_sequential_ops_match_torch():
    def build(nn):
        return nn.Sequential(nn.Linear(1, 2), nn.Identity(), nn.Linear(2, 3), nn.Flatten())

    e, t = build(enn), build(tnn)
    assert len(e) == len(t) == 4
    assert repr(e[1:3]) == repr(t[1:3]) and repr(e[-1]) == repr(t[-1])
    assert type(e[1:]) is enn.Sequential
    same_errors(lambda: e[4], lambda: t[4])
    for f in (lambda s, nn: s.append(nn.Identity()), lambda s, nn: s.insert(1, nn.Flatten()),
              lambda s, nn: s.insert(-1, nn.Identity()), lambda s, nn: s.extend([nn.Identity()]),
              lambda s, nn: s.pop(0), lambda s, nn: s.__delitem__(slice(0, 2)),
              lambda s, nn: s.__setitem__(0, nn.Identity())):
        f(e, enn)
        f(t, tnn)
        assert repr(e) == repr(t)
        assert list(e._modules) == list(t._modules)
    assert repr(e + e) == repr(t + t)
    assert repr(e * 2) == repr(t * 2)
    assert repr(2 * e) == repr(2 * t)
    same_errors(lambda: e + enn.Identity(), lambda: t + tnn.Identity())
    same_errors(lambda: e * 0, lambda: t * 0)
    same_errors(lambda: e.insert(10, enn.Identity()), lambda: t.insert(10, tnn.Identity()))
    od_e = enn.Sequential(OrderedDict([("first", enn.Identity()), ("second", enn.Linear(1, 1))]))
    od_t = tnn.Sequential(OrderedDict([("first", tnn.Identity()), ("second", tnn.Linear(1, 1))]))
    assert repr(od_e) == repr(od_t)
    e2, t2 = build(enn), build(tnn)
    e2 += build(enn)
    t2 += build(tnn)
    assert repr(e2) == repr(t2)


def test_sequential_forward_matches_torch():
    t = tnn.Sequential(tnn.Linear(3, 5), tnn.Linear(5, 2))
    e = enn.Sequential(enn.Linear(3, 5), enn.Linear(5, 2))
    copy_weights(e, t)
    x = torch.randn(4, 3)
    close(e(to_ember(x)), t(x))


def test_module_list_and_dict():
    def build(nn):
        return nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Identity(), nn.Linear(2, 2)])

    e, t = build(enn), build(tnn)
    assert repr(e) == repr(t)
    for f in (lambda s, nn: s.append(nn.Identity()), lambda s, nn: s.insert(1, nn.Flatten()),
              lambda s, nn: s.extend([nn.Identity(), nn.Identity()]), lambda s, nn: s.pop(-1),
              lambda s, nn: s.__delitem__(slice(1, 3)), lambda s, nn: s.__setitem__(-1, nn.Flatten()),
              lambda s, nn: s.__iadd__([nn.Identity()])):
        f(e, enn)
        f(t, tnn)
        assert repr(e) == repr(t)
    assert repr(e[1:]) == repr(t[1:]) and type(e[1:]) is enn.ModuleList
    assert repr(e + e) == repr(t + t)
    assert repr(enn.ModuleList()) == repr(tnn.ModuleList())
    same_errors(lambda: e[10], lambda: t[10])
    same_errors(lambda: e.extend(enn.Identity()), lambda: t.extend(tnn.Identity()))
    with pytest.raises(NotImplementedError):
        e(ember.ones(1))

    de = enn.ModuleDict({"b": enn.Linear(1, 1), "a": enn.Identity()})
    dt = tnn.ModuleDict({"b": tnn.Linear(1, 1), "a": tnn.Identity()})
    assert list(de.keys()) == list(dt.keys()) and repr(de) == repr(dt)
    de.update([("c", enn.Flatten())])
    dt.update([("c", tnn.Flatten())])
    assert repr(de) == repr(dt) and "c" in de and len(de) == 3
    assert repr(de.pop("b")) == repr(dt.pop("b"))
    assert list(de) == list(dt)
    same_errors(lambda: de.update([("x",)]), lambda: dt.update([("x",)]))
    same_errors(lambda: de.update(5), lambda: dt.update(5))
    de.clear()
    assert len(de) == 0


def test_parameter_list_and_dict():
    pe = enn.ParameterList([enn.Parameter(ember.ones(2, 3)), ember.zeros(4)])
    pt = tnn.ParameterList([tnn.Parameter(torch.ones(2, 3)), torch.zeros(4)])
    assert isinstance(pe[1], enn.Parameter) and len(pe) == 2
    assert [n for n, _ in pe.named_parameters()] == [n for n, _ in pt.named_parameters()]
    assert repr(pe).replace("ember.", "torch.") == repr(pt)
    pe.append(ember.ones(1))
    pt.append(torch.ones(1))
    pe[0] = ember.zeros(1)
    pt[0] = torch.zeros(1)
    assert repr(pe).replace("ember.", "torch.") == repr(pt)
    assert len(pe[1:]) == 2
    same_errors(lambda: pe[5], lambda: pt[5])
    same_errors(lambda: pe(), lambda: pt())

    de = enn.ParameterDict({"b": ember.ones(1), "a": enn.Parameter(ember.zeros(2))})
    dt = tnn.ParameterDict({"b": torch.ones(1), "a": tnn.Parameter(torch.zeros(2))})
    assert list(de.keys()) == list(dt.keys())
    assert [n for n, _ in de.named_parameters()] == [n for n, _ in dt.named_parameters()]
    assert repr(de).replace("ember.", "torch.") == repr(dt)
    de["c"] = ember.ones(3)
    dt["c"] = torch.ones(3)
    assert list(de) == list(dt) and isinstance(de["c"], enn.Parameter)
    assert de.popitem()[0] == dt.popitem()[0]
    assert de.get("zz", 1) == 1 and "a" in de
    assert list(de.setdefault("d", ember.ones(1)).shape) == [1]
    u = de | enn.ParameterDict({"e": ember.ones(1)})
    assert list(u) == list(de) + ["e"]
    same_errors(lambda: de[1], lambda: dt[1])
    de.clear()
    assert len(de) == 0


# ---- Linear / Bilinear / Flatten ----

@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 5, 3), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_module_matches_torch(shape, bias):
    t = tnn.Linear(3, 6, bias=bias)
    e = enn.Linear(3, 6, bias=bias)
    copy_weights(e, t)
    assert repr(e) == repr(t)
    x = torch.randn(*shape, requires_grad=True)
    xe = to_ember(x).requires_grad_()
    yt, ye = t(x), e(xe)
    close(ye, yt)
    g = torch.randn(yt.shape)
    yt.backward(g)
    ye.backward(to_ember(g))
    close(xe.grad, x.grad)
    close(e.weight.grad, t.weight.grad)
    if bias:
        close(e.bias.grad, t.bias.grad)


def test_linear_default_init_bounds_and_dtype():
    e = enn.Linear(50, 40, dtype=ember.float64)
    assert e.weight.dtype == ember.float64 and e.bias.dtype == ember.float64
    bound = 1 / math.sqrt(50)
    assert float(e.weight.abs().max()) <= bound and float(e.bias.abs().max()) <= bound
    assert float(e.weight.std()) > bound / 3  # not a constant fill
    z = enn.Linear(0, 3)  # zero fan-in: torch warns and leaves the bias at U(0, 0)
    assert tuple(z.weight.shape) == (3, 0)


def test_functional_linear_non_contiguous_and_broadcast_bias():
    x = torch.randn(4, 3, 5).transpose(0, 2)  # (5, 3, 4), non-contiguous
    w = torch.randn(6, 4)[:, :]
    b = torch.randn(1)
    close(EF.linear(to_ember(x).transpose(0, 2).transpose(0, 2), to_ember(w), to_ember(b)),
          torch.nn.functional.linear(x, w, b))
    wt = torch.randn(4, 6).t()  # a transposed weight
    close(EF.linear(to_ember(x), to_ember(wt)), torch.nn.functional.linear(x, wt))
    w1 = torch.randn(4)
    close(EF.linear(to_ember(x), to_ember(w1)), torch.nn.functional.linear(x, w1))
    close(EF.linear(to_ember(x[0, 0]), to_ember(torch.randn(2, 4)[:, :]) * 0 + to_ember(w[:2]), to_ember(b)),
          torch.nn.functional.linear(x[0, 0], w[:2], b))
    b2 = torch.randn(3, 6)
    close(EF.linear(to_ember(x), to_ember(w), to_ember(b2)), torch.nn.functional.linear(x, w, b2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_functional_linear_dtypes(dtype):
    x, w, b = torch.randn(3, 4), torch.randn(2, 4), torch.randn(2)
    tdt, edt = getattr(torch, dtype), getattr(ember, dtype)
    out_e = EF.linear(to_ember(x).to(edt), to_ember(w).to(edt), to_ember(b).to(edt))
    out_t = torch.nn.functional.linear(x.to(tdt), w.to(tdt), b.to(tdt))
    assert str(out_e.dtype).split(".")[-1] == dtype
    close(out_e, out_t, 1e-5 if dtype in ("float32", "float64") else 5e-2)


def test_functional_linear_errors_match_torch():
    F = torch.nn.functional
    cases = [((2, 3), (4, 5), None), ((2, 2, 3), (4, 5), None), ((2, 3), (3,), ()), ((), (4, 3), None),
             ((2, 3), (4, 3), (5,)), ((2, 3), (2, 4, 3), None), ((3,), (4, 3), (2, 4)), ((2, 2, 3), (4, 3), (3, 4))]
    for xs, ws, bs in cases:
        x, w = torch.randn(xs), torch.randn(ws)
        b = None if bs is None else torch.randn(bs)
        eb = None if b is None else to_ember(b)
        me, mt = same_errors(lambda: EF.linear(to_ember(x), to_ember(w), eb), lambda: F.linear(x, w, b))
        assert me.endswith(mt)  # ember may prefix the op name ("add: ...")
    same_errors(lambda: EF.linear(ember.randn(2, 3), ember.randn(4, 3, dtype=ember.float64)),
                lambda: F.linear(torch.randn(2, 3), torch.randn(4, 3).double()))
    with pytest.raises(TypeError):
        EF.linear(ember.randn(2, 3), [[1.0, 2.0, 3.0]])


def test_functional_linear_gradcheck():
    x = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    b = ember.randn(5, dtype=ember.float64, requires_grad=True)
    assert gradcheck(EF.linear, (x, w, b))
    assert gradgradcheck(EF.linear, (x, w, b))
    assert gradcheck(lambda x, w: EF.linear(x, w), (x, w))
    w1 = ember.randn(4, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x, w: EF.linear(x, w), (x, w1))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_bilinear_matches_torch(shape):
    t = tnn.Bilinear(4, 5, 3)
    e = enn.Bilinear(4, 5, 3)
    copy_weights(e, t)
    assert repr(e) == repr(t)
    x1 = torch.randn(*shape, requires_grad=True)
    x2 = torch.randn(*shape[:-1], 5, requires_grad=True)
    e1, e2 = to_ember(x1).requires_grad_(), to_ember(x2).requires_grad_()
    yt, ye = t(x1, x2), e(e1, e2)
    close(ye, yt)
    yt.sum().backward()
    ye.sum().backward()
    close(e1.grad, x1.grad, 1e-4)
    close(e2.grad, x2.grad, 1e-4)
    close(e.weight.grad, t.weight.grad, 1e-4)
    close(e.bias.grad, t.bias.grad, 1e-4)
    nb_t, nb_e = tnn.Bilinear(4, 5, 3, bias=False), enn.Bilinear(4, 5, 3, bias=False)
    assert repr(nb_e) == repr(nb_t)


def test_bilinear_gradcheck_and_errors():
    d = ember.float64
    x1 = ember.randn(3, 2, dtype=d, requires_grad=True)
    x2 = ember.randn(3, 4, dtype=d, requires_grad=True)
    w = ember.randn(5, 2, 4, dtype=d, requires_grad=True)
    b = ember.randn(5, dtype=d, requires_grad=True)
    assert gradcheck(EF.bilinear, (x1, x2, w, b))
    assert gradgradcheck(EF.bilinear, (x1, x2, w, b))
    F = torch.nn.functional
    for s1, s2, sw, sb in [((2, 3), (3, 4), (5, 3, 4), None), ((2, 3), (2, 2, 4), (5, 3, 4), None),
                           ((2, 3), (2, 4), (5, 2, 4), None), ((2, 3), (2, 4), (5, 3, 5), None),
                           ((2, 3), (2, 4), (5, 3, 4), (4,))]:
        a, c, ww = torch.randn(s1), torch.randn(s2), torch.randn(sw)
        bb = None if sb is None else torch.randn(sb)
        me, mt = same_errors(lambda: EF.bilinear(to_ember(a), to_ember(c), to_ember(ww),
                                                 None if bb is None else to_ember(bb)),
                             lambda: F.bilinear(a, c, ww, bb))
        assert me == mt


def test_identity_flatten_unflatten():
    for args in [(), (1, 2), ()]:
        assert repr(enn.Identity(*args)) == repr(tnn.Identity(*args))
    x = torch.randn(2, 3, 4, 5)
    for a in [(), (0, -1), (1, 2), (2, 3)]:
        e, t = enn.Flatten(*a), tnn.Flatten(*a)
        assert repr(e) == repr(t)
        close(e(to_ember(x)), t(x))
    for dim, size in [(1, (3, 1)), (-1, (5, 1)), (2, (2, -1)), (0, [1, 2])]:
        e, t = enn.Unflatten(dim, size), tnn.Unflatten(dim, size)
        assert repr(e) == repr(t)
        close(e(to_ember(x)), t(x))
    same_errors(lambda: enn.Unflatten(1, (2, 2.0)), lambda: tnn.Unflatten(1, (2, 2.0)))
    same_errors(lambda: enn.Unflatten(1, 3), lambda: tnn.Unflatten(1, 3))


def test_lazy_linear():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, t = enn.LazyLinear(4), tnn.LazyLinear(4)
    assert repr(e) == repr(t)
    assert enn.parameter.is_lazy(e.weight)
    y = e(ember.randn(3, 7))
    assert tuple(y.shape) == (3, 4) and type(e) is enn.Linear
    assert repr(e) == repr(tnn.Linear(7, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = enn.LazyLinear(4)
    f.load_state_dict(e.state_dict())
    assert tuple(f.weight.shape) == (4, 7)
    assert f(ember.ones(1, 7)).tolist() == e(ember.ones(1, 7)).tolist()


# ---- nn.init ----

def test_calculate_gain_matches_torch():
    for nl in ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]:
        assert enn.init.calculate_gain(nl) == tnn.init.calculate_gain(nl)
    assert enn.init.calculate_gain("leaky_relu", 0.2) == tnn.init.calculate_gain("leaky_relu", 0.2)
    assert enn.init.calculate_gain("leaky_relu", 1) == tnn.init.calculate_gain("leaky_relu", 1)
    same_errors(lambda: enn.init.calculate_gain("leaky_relu", True),
                lambda: tnn.init.calculate_gain("leaky_relu", True))
    same_errors(lambda: enn.init.calculate_gain("nope"), lambda: tnn.init.calculate_gain("nope"))


def test_fan_computation_and_errors():
    for shape in [(3, 4), (8, 2, 3, 3), (5, 4, 2)]:
        assert enn.init._calculate_fan_in_and_fan_out(ember.empty(shape)) == \
            tnn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    for fn in ["xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_"]:
        same_errors(lambda: getattr(enn.init, fn)(ember.empty(3)), lambda: getattr(tnn.init, fn)(torch.empty(3)))
    same_errors(lambda: enn.init.kaiming_uniform_(ember.empty(3, 4), mode="fan_bad"),
                lambda: tnn.init.kaiming_uniform_(torch.empty(3, 4), mode="fan_bad"))
    same_errors(lambda: enn.init.eye_(ember.empty(3)), lambda: tnn.init.eye_(torch.empty(3)))
    same_errors(lambda: enn.init.dirac_(ember.empty(3, 3)), lambda: tnn.init.dirac_(torch.empty(3, 3)))
    same_errors(lambda: enn.init.dirac_(ember.empty(3, 3, 3), 2), lambda: tnn.init.dirac_(torch.empty(3, 3, 3), 2))
    same_errors(lambda: enn.init.sparse_(ember.empty(3), 0.1), lambda: tnn.init.sparse_(torch.empty(3), 0.1))


def _bound_and_std(fn, shape, **kw):
    e = ember.empty(shape)
    getattr(enn.init, fn)(e, **kw)
    return to_np(e)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nl,a", [("relu", 0), ("leaky_relu", 0.2), ("tanh", 0), ("linear", 0)])
def test_kaiming_statistics(mode, nl, a):
    shape = (200, 100, 3)
    fan = 100 * 3 if mode == "fan_in" else 200 * 3
    std = tnn.init.calculate_gain(nl, a) / math.sqrt(fan)
    u = _bound_and_std("kaiming_uniform_", shape, a=a, mode=mode, nonlinearity=nl)
    assert np.abs(u).max() <= math.sqrt(3) * std * (1 + 1e-6)
    assert abs(u.std() / std - 1) < 0.03
    n = _bound_and_std("kaiming_normal_", shape, a=a, mode=mode, nonlinearity=nl)
    assert abs(n.std() / std - 1) < 0.03 and abs(n.mean()) < 0.03 * std * 10


def test_xavier_trunc_normal_uniform_normal_constant():
    shape = (300, 200)
    std = 1.5 * math.sqrt(2 / 500)
    u = _bound_and_std("xavier_uniform_", shape, gain=1.5)
    assert np.abs(u).max() <= math.sqrt(3) * std * (1 + 1e-6) and abs(u.std() / std - 1) < 0.03
    n = _bound_and_std("xavier_normal_", shape, gain=1.5)
    assert abs(n.std() / std - 1) < 0.03
    tn = _bound_and_std("trunc_normal_", shape, mean=1.0, std=2.0, a=0.0, b=3.0)
    assert tn.min() >= 0.0 and tn.max() <= 3.0
    ref = torch.empty(shape)
    tnn.init.trunc_normal_(ref, mean=1.0, std=2.0, a=0.0, b=3.0)
    assert abs(tn.mean() - ref.mean().item()) < 0.03 and abs(tn.std() - ref.std().item()) < 0.03
    un = _bound_and_std("uniform_", shape, a=-2.0, b=-1.0)
    assert un.min() >= -2.0 and un.max() <= -1.0
    nn_ = _bound_and_std("normal_", shape, mean=3.0, std=0.5)
    assert abs(nn_.mean() - 3.0) < 0.01 and abs(nn_.std() - 0.5) < 0.01
    for fn, val in [("ones_", 1.0), ("zeros_", 0.0)]:
        t = ember.empty(2, 2)
        getattr(enn.init, fn)(t)
        assert t.tolist() == [[val] * 2] * 2
    t = ember.empty(2)
    assert enn.init.constant_(t, 2.5) is t and t.tolist() == [2.5, 2.5]
    with pytest.warns(UserWarning):
        enn.init.trunc_normal_(ember.empty(3), mean=10.0)


def test_init_keeps_requires_grad_and_generator():
    p = enn.Parameter(ember.empty(10, 10))
    for fn in ["uniform_", "normal_", "xavier_uniform_", "kaiming_normal_", "orthogonal_", "trunc_normal_"]:
        out = getattr(enn.init, fn)(p)
        assert out is p and p.requires_grad and p.grad_fn is None
    g1, g2 = ember.Generator(), ember.Generator()
    g1.manual_seed(3)
    g2.manual_seed(3)
    a, b = ember.empty(5, 5), ember.empty(5, 5)
    for fn in ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
               "trunc_normal_", "orthogonal_"]:
        getattr(enn.init, fn)(a, generator=g1)
        getattr(enn.init, fn)(b, generator=g2)
        assert a.tolist() == b.tolist()
    enn.init.sparse_(a, 0.4, generator=g1)
    enn.init.sparse_(b, 0.4, generator=g2)
    assert a.tolist() == b.tolist()


def test_deterministic_inits_match_torch():
    for shape, groups in [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((2, 4, 3, 3, 3), 1), ((4, 2, 5), 2)]:
        e, t = ember.empty(shape), torch.empty(shape)
        enn.init.dirac_(e, groups)
        tnn.init.dirac_(t, groups)
        assert e.tolist() == t.tolist()
    for shape in [(3, 5), (5, 3)]:
        e, t = ember.empty(shape), torch.empty(shape)
        enn.init.eye_(e)
        tnn.init.eye_(t)
        assert e.tolist() == t.tolist()


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 2, 2)])
def test_orthogonal(shape):
    t = ember.empty(shape)
    enn.init.orthogonal_(t, gain=2.0)
    m = to_np(t).reshape(shape[0], -1)
    if m.shape[0] <= m.shape[1]:
        np.testing.assert_allclose(m @ m.T, 4 * np.eye(m.shape[0]), atol=1e-4)
    else:
        np.testing.assert_allclose(m.T @ m, 4 * np.eye(m.shape[1]), atol=1e-4)


def test_sparse_zero_count():
    t = ember.empty(10, 6)
    enn.init.sparse_(t, 0.3)
    zeros = (to_np(t) == 0).sum(axis=0)
    assert (zeros >= 3).all()


def test_deprecated_init_aliases_warn():
    with pytest.warns(FutureWarning):
        enn.init.uniform(ember.empty(2))
    with pytest.warns(FutureWarning):
        tnn.init.uniform(torch.empty(2))


def test_zero_element_kaiming_warns():
    with pytest.warns(UserWarning):
        enn.init.kaiming_uniform_(ember.empty(0, 3))


# ---- error path: module path note ----

def test_error_names_module_path():
    class Layer(enn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = enn.Linear(4, 4)

        def forward(self, x):
            return self.linear1(x)

    class Encoder(enn.Module):
        def __init__(self):
            super().__init__()
            self.layers = enn.ModuleList([Layer() for _ in range(3)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    class Model(enn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x):
            return self.encoder(x)

    m = Model()
    m.encoder.layers[2].linear1 = enn.Linear(5, 4)
    with pytest.raises(RuntimeError) as ei:
        m(ember.randn(2, 4))
    t_msg = None
    try:
        torch.nn.functional.linear(torch.randn(2, 4), torch.randn(4, 5))
    except RuntimeError as e:
        t_msg = str(e)
    assert str(ei.value) == t_msg  # the message itself is torch's
    assert ei.value.__notes__ == ["in model.encoder.layers.2.linear1 (Linear)"]
    # Called again: a fresh exception, a fresh note.
    with pytest.raises(RuntimeError) as ei2:
        m.encoder(ember.randn(2, 4))
    assert ei2.value.__notes__ == ["in model.layers.2.linear1 (Linear)"]
    # A module called directly names itself.
    with pytest.raises(RuntimeError) as ei3:
        enn.Linear(2, 2)(ember.randn(3))
    assert ei3.value.__notes__ == ["in model (Linear)"]


def test_error_path_with_hooks_and_exception_types():
    m = enn.Sequential(enn.Identity(), enn.Linear(2, 2))
    m.register_forward_hook(lambda *a: None)
    with pytest.raises(RuntimeError) as ei:
        m(ember.randn(3, 3))
    assert ei.value.__notes__ == ["in model.1 (Linear)"]

    class Raises(enn.Module):
        def forward(self, x):
            raise IndexError("bad index")
    with pytest.raises(IndexError, match="bad index") as ei:
        enn.Sequential(Raises())(ember.ones(1))
    assert ei.value.__notes__ == ["in model.0 (Raises)"]


def test_forward_missing_raises():
    same_errors(lambda: enn.Module()(1), lambda: tnn.Module()(1))


def test_module_init_rejects_arguments():
    same_errors(lambda: enn.Module(foo=1), lambda: tnn.Module(foo=1))


def test_pickle_module_without_tensors_roundtrip():
    m = enn.Sequential(enn.Identity(), enn.Flatten())
    m2 = pickle.loads(pickle.dumps(m))
    assert repr(m2) == repr(m)


def test_share_memory_and_extra_repr_multiline():
    class Multi(enn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    class MultiT(tnn.Module):
        def extra_repr(self):
            return "a=1\nb=2"
    e, t = Multi(), MultiT()
    e.sub = enn.Linear(1, 1)
    t.sub = tnn.Linear(1, 1)
    assert repr(e).replace("Multi(", "X(") == repr(t).replace("MultiT(", "X(")
