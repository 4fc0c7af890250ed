"""The op table: one OpInfo per operator; test_ops.py runs generic checks over all of them.

Adding an op means adding one OpInfo: how to call it (for torch and ember alike), which sample
inputs to use and which dtypes it supports. The generic tests then check, against torch 2.13:
values, result dtype and shape over every dtype and layout (0-d, empty, non-contiguous,
broadcast); gradients with gradcheck in float64 and against torch's; errors against torch's
exception type.
"""
import itertools

import torch

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
NUMERIC = INTS + FLOATS
COMPLEX = ["complex64", "complex128"]


class Sample:
    """Positional args (torch tensors or plain values) and kwargs; `name` says what layout it tests."""

    def __init__(self, name, *args, **kwargs):
        self.name, self.args, self.kwargs = name, args, kwargs


class OpInfo:
    def __init__(self, name, call=None, samples=None, dtypes=NUMERIC, grad_dtypes=("float64",), grad=True,
                 errors=(), rtol=None, atol=None, domain=None, inplace=None, method=True, tol_per_dtype=None,
                 grad_rtol=None, grad_ref_create_graph=False):
        self.name = name
        self.call = call or (lambda lib, *a, **k: getattr(lib, name)(*a, **k))
        self.samples = samples
        self.dtypes = dtypes
        self.grad = grad
        self.grad_dtypes = grad_dtypes
        self.errors = errors  # callables lib -> None that must raise the same type in both
        self.rtol, self.atol = rtol, atol
        self.domain = domain  # (low, high) for inputs, e.g. (0.1, 10) for log
        self.inplace = inplace  # name of the in-place method, e.g. "exp_"
        self.method = method  # Tensor method of the same name exists
        self.tol_per_dtype = tol_per_dtype or {}
        self.grad_rtol = grad_rtol  # gradients vs torch's where torch's own formula is less accurate
        self.grad_ref_create_graph = grad_ref_create_graph  # torch's reference gradient: create_graph=True path

    def __repr__(self):
        return self.name


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def make_tensor(shape, dtype, seed=0, low=None, high=None):
    """A torch tensor with values suited to dtype (ints small, floats in [low, high))."""
    dt = getattr(torch, dtype)
    g = _gen(seed)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype in INTS:
        lo = int(low if low is not None else -9)
        if dtype == "uint8":
            lo = max(lo, 0)
        hi = int(high if high is not None else 10)
        return torch.randint(lo, hi, shape, generator=g).to(dt)
    lo = -3.0 if low is None else low
    hi = 3.0 if high is None else high
    if dtype in COMPLEX:  # real and imaginary parts both in [lo, hi)
        re = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
        im = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
        return torch.complex(re, im).to(dt)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dt)


def unary_samples(dtype, low=None, high=None):
    """0-d, empty, 1-d, 2-d, non-contiguous (transposed and strided), expanded."""
    mk = lambda shape, seed: make_tensor(shape, dtype, seed, low, high)  # noqa: E731
    return [
        Sample("0d", mk((), 1)),
        Sample("empty", mk((0, 3), 2)),
        Sample("1d", mk((7,), 3)),
        Sample("2d", mk((4, 5), 4)),
        Sample("transposed", mk((5, 4), 5).t()),
        Sample("strided", mk((6, 8), 6)[::2, 1::3]),
        Sample("expanded", mk((3, 1), 7).expand(3, 4)),
    ]


def binary_samples(dtype, low=None, high=None, other_low=None, other_high=None):
    """Same shapes, broadcasting both ways, 0-d with tensor, empty, non-contiguous, scalars."""
    a = lambda shape, seed: make_tensor(shape, dtype, seed, low, high)  # noqa: E731
    b = lambda shape, seed: make_tensor(shape, dtype, seed, other_low, other_high)  # noqa: E731
    scalar = 2 if dtype in INTS or dtype == "bool" else 1.5
    if dtype == "bool":
        scalar = True
    if dtype in COMPLEX:
        scalar = 1.5 - 0.5j
    return [
        Sample("same", a((3, 4), 1), b((3, 4), 2)),
        Sample("broadcast", a((3, 1), 3), b((4,), 4)),
        Sample("0d_tensor", a((3,), 5), b((), 6)),
        Sample("0d_both", a((), 7), b((), 8)),
        Sample("empty", a((0, 3), 9), b((3,), 10)),
        Sample("transposed", a((4, 3), 11).t(), b((3, 4), 12)),
        Sample("strided", a((6, 8), 13)[::2, ::3], b((3, 3), 14)),
        Sample("python_scalar", a((2, 3), 15), scalar),
    ]


def reduction_samples(dtype, low=None, high=None):
    mk = lambda shape, seed: make_tensor(shape, dtype, seed, low, high)  # noqa: E731
    out = [Sample("all", mk((3, 4), 1)), Sample("0d", mk((), 2))]
    for dim, keepdim in itertools.product([0, 1, -1, (0, 1)], [False, True]):
        out.append(Sample(f"dim{dim}_keep{keepdim}", mk((3, 4), 3), dim, keepdim=keepdim))
    out.append(Sample("transposed_dim0", mk((4, 3), 4).t(), 0))
    out.append(Sample("3d_dims", mk((2, 3, 4), 5), (0, 2)))
    return out


def _binary(name, **kw):
    return OpInfo(name, samples=lambda dt: binary_samples(dt), **kw)


OPS = [
    OpInfo("neg", samples=lambda dt: unary_samples(dt), dtypes=[d for d in NUMERIC if d != "uint8"] + COMPLEX,
           inplace="neg_", grad_dtypes=("float64", "complex128")),
    OpInfo("relu", samples=lambda dt: unary_samples(dt), dtypes=NUMERIC, inplace="relu_"),
    _binary("add", dtypes=ALL + COMPLEX, grad_dtypes=("float64", "complex128")),
    _binary("sub", dtypes=NUMERIC + COMPLEX, grad_dtypes=("float64", "complex128")),
    _binary("mul", dtypes=ALL + COMPLEX, grad_dtypes=("float64", "complex128")),
    OpInfo("div", samples=lambda dt: binary_samples(dt, other_low=0.5, other_high=3), dtypes=FLOATS + COMPLEX,
           grad_dtypes=("float64", "complex128")),
    OpInfo("remainder", samples=lambda dt: binary_samples(dt, other_low=1, other_high=5), dtypes=NUMERIC + COMPLEX,
           grad=False),
    OpInfo("floor_divide", samples=lambda dt: binary_samples(dt, other_low=1, other_high=5),
           dtypes=NUMERIC + COMPLEX,
           grad=False),
    OpInfo("pow", samples=lambda dt: [Sample("pos_base", make_tensor((3, 4), dt, 1, 0.5, 2),
                                             make_tensor((3, 4), dt, 2, 0, 3)),
                                      Sample("scalar_exp", make_tensor((3, 4), dt, 3, 0.5, 2), 2),
                                      Sample("broadcast", make_tensor((3, 1), dt, 4, 0.5, 2),
                                             make_tensor((4,), dt, 5, 0, 2))],
           dtypes=FLOATS + COMPLEX, grad_dtypes=("float64", "complex128")),
    OpInfo("sum", samples=lambda dt: reduction_samples(dt), dtypes=ALL + COMPLEX, grad_dtypes=("float64", "complex128")),
    OpInfo("mean", samples=lambda dt: reduction_samples(dt), dtypes=FLOATS + COMPLEX, grad_dtypes=("float64", "complex128")),
    OpInfo("matmul", samples=lambda dt: [
        Sample("mm", make_tensor((3, 4), dt, 1), make_tensor((4, 5), dt, 2)),
        Sample("mv", make_tensor((3, 4), dt, 3), make_tensor((4,), dt, 4)),
        Sample("bmm_broadcast", make_tensor((2, 3, 4), dt, 5), make_tensor((4, 2), dt, 6)),
        Sample("transposed", make_tensor((4, 3), dt, 7).t(), make_tensor((5, 4), dt, 8).t()),
    ], dtypes=["float32", "float64", "int64"] + COMPLEX, rtol=1e-4, grad_dtypes=("float64", "complex128")),
] + [OpInfo(n, samples=lambda dt: binary_samples(dt), dtypes=ALL + COMPLEX, grad=False)
     for n in ("eq", "ne", "lt", "le", "gt", "ge")]


def _load_families():
    """Op families live in op_db_<family>.py files beside this one, each defining OPS."""
    import importlib
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for f in sorted(os.listdir(here)):
        if f.startswith("op_db_") and f.endswith(".py"):
            OPS.extend(importlib.import_module(f[:-3]).OPS)


_load_families()
