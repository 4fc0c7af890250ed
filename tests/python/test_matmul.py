"""matmul/mm against torch for every broadcasting case, dtypes, layouts and errors."""
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
    for shape in ((0,), (1, 1), (7,)):  # any shape: resized
        out, tout = ember.empty(*shape), torch.empty(*shape)
        r = getattr(ember, name)(a, b, out=out)
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
