"""PyObject preservation: one Python object per tensor while the tensor lives (as torch does)."""
import gc
import weakref

import pytest

import ember
from conftest import torch


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_grad_identity_and_attributes(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad is x.grad
    x.grad.foo = 1  # the Python object dies here, the grad tensor does not
    assert x.grad.foo == 1
    assert id(x.grad) == id(x.grad)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_methods_returning_self_return_the_same_object(lib):
    x = lib.ones(3)
    assert x.requires_grad_() is x
    y = lib.ones(3)
    assert y.add_(1) is y
    assert y.mul_(2) is y


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_view_base_is_the_base_object(lib):
    b = lib.ones(4)
    b.tag = "base"
    v = b[1:]
    del b
    assert v._base.tag == "base"


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_grad_fn_identity(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    assert y.grad_fn is y.grad_fn


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_hook_sees_tensor_attributes_of_saved_inputs(lib):
    seen = []

    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            seen.append((a is ctx_input[0], getattr(a, "tag", None)))
            return g * 2

    a = lib.ones(2, requires_grad=True)
    a.tag = "A"
    ctx_input = [a]
    F.apply(a).sum().backward()
    assert seen == [(True, "A")]


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_attributes_survive_in_graph(lib):
    x = lib.ones(3, requires_grad=True)
    x.grad = lib.zeros(3)
    x.grad.tag = "mine"
    gc.collect()
    assert x.grad.tag == "mine"
    # Leaving the graph: the grad object goes when the tensor does.
    r = weakref.ref(x.grad)
    x.grad = None
    gc.collect()
    assert r() is None


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_no_leak_when_tensor_dies(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    x.grad.tag = "g"
    r = weakref.ref(x.grad)
    rx = weakref.ref(x)
    assert r() is not None
    del x
    gc.collect()
    assert r() is None and rx() is None


def test_self_reference_cycle_is_collected():
    x = ember.ones(3, requires_grad=True)
    x.me = x
    r = weakref.ref(x)
    del x
    gc.collect()
    assert r() is None


def test_preserved_objects_release_memory():
    ember._C._cpu_empty_cache()
    before = ember._C._cpu_memory_stats()["allocated_bytes"]
    w = ember.ones(256, 256, requires_grad=True)
    for _ in range(3):
        h = (w * 2).exp()  # exp saves its result: the Python object of h outlives `del h`
        h.tag = "intermediate"
        loss = h.sum()
        del h
        loss.backward()
        del loss
        w.grad.tag = "grad"
    del w
    gc.collect()
    assert ember._C._cpu_memory_stats()["allocated_bytes"] == before


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_subclass_keeps_type_through_grad(lib):
    class MyT(lib.Tensor):
        pass

    m = lib.ones(3).as_subclass(MyT)
    assert type(m) is MyT
    x = lib.ones(3, requires_grad=True)
    x.grad = lib.zeros(3).as_subclass(MyT)
    x.grad.tag = 7
    gc.collect()
    assert type(x.grad) is MyT and x.grad.tag == 7
    p = MyT._make_subclass(MyT, lib.ones(2), True)
    assert type(p) is MyT and p.requires_grad and p.is_leaf


def test_subclass_object_freed_with_its_tensor():
    class MyT(ember.Tensor):
        pass

    x = ember.ones(3, requires_grad=True)
    x.grad = ember.zeros(3).as_subclass(MyT)
    r = weakref.ref(x.grad)
    gc.collect()
    assert r() is not None
    del x
    gc.collect()
    assert r() is None


def test_as_subclass_stays_in_graph():
    class MyT(ember.Tensor):
        pass

    x = ember.ones(3, requires_grad=True)
    m = (x * 3).as_subclass(MyT)
    m.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(TypeError):
        ember.ones(2).as_subclass(int)
