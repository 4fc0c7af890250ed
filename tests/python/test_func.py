"""ember.func (vmap, grad, vjp, jvp, jacrev, jacfwd, hessian, functional_call, stack_module_state)
against torch.func on the same inputs."""
import numpy as np
import pytest

import ember
from conftest import torch
from op_db import OPS

from ember._functorch import batched as _batched

B = 3


def E(x):
    """torch -> ember (same values and dtype); pytrees and non-tensors pass through."""
    if isinstance(x, torch.Tensor):
        return ember.from_dlpack(x.detach().contiguous()).clone()
    if isinstance(x, (list, tuple)):
        return type(x)(E(e) for e in x)
    if isinstance(x, dict):
        return {k: E(v) for k, v in x.items()}
    return x


def close(got, exp, rtol=1e-6, atol=1e-6):
    if isinstance(exp, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(exp)
        for g, e in zip(got, exp):
            close(g, e, rtol, atol)
        return
    if isinstance(exp, dict):
        assert set(got) == set(exp)
        for k in exp:
            close(got[k], exp[k], rtol, atol)
        return
    if not isinstance(exp, torch.Tensor):
        assert got == exp
        return
    assert isinstance(got, ember.Tensor), type(got)
    assert tuple(got.shape) == tuple(exp.shape), (tuple(got.shape), tuple(exp.shape))
    assert str(got.dtype).split(".")[-1] == str(exp.dtype).split(".")[-1]
    g = torch.from_dlpack(got.detach().contiguous()) if got.numel() else torch.empty(exp.shape, dtype=exp.dtype)
    if exp.dtype.is_floating_point or exp.is_complex():
        torch.testing.assert_close(g, exp.detach(), rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert torch.equal(g, exp)


# ---------------------------------------------------------------- vmap over the op table
def _shuffled(t, seed):
    if t.numel() <= 1:
        return t.clone()
    g = torch.Generator().manual_seed(seed)
    flat = t.contiguous().reshape(-1)
    return flat[torch.randperm(flat.numel(), generator=g)].reshape(t.shape)


def _dtype_for(op):
    for d in ("float64", "float32", "int64", "bool"):
        if d in op.dtypes:
            return d
    return op.dtypes[0]


def _vmap_cases():
    for op in OPS:
        dt = _dtype_for(op)
        for s in op.samples(dt):
            if not any(isinstance(a, torch.Tensor) for a in s.args):
                continue
            if any(isinstance(a, torch.Tensor) and a.numel() == 0 for a in s.args):
                continue
            yield pytest.param(op, s, id=f"{op.name}-{dt}-{s.name}")


_VMAP_CASES = list(_vmap_cases())
# Per-sample results of these vary in shape or need a data-dependent size: not vmappable (torch too).
_NOT_VMAPPABLE = {"nonzero", "nonzero_tuple", "argwhere", "masked_select", "masked_select_bcast", "where_cond",
                  "unique", "as_strided", "as_strided_overlap", "repeat_interleave_t", "repeat_interleave_flat", "histc", "bincount"}


# Known gaps, each with its reason (listed so that a fixed one is noticed: remove it here).
_VMAP_GAPS = {
    **{f"special.{n}": "Python composition that sizes its recurrence from n.max().item(), data-dependent control "
       "flow under vmap (torch runs a C++ kernel)" for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u",
                                                           "hermite_polynomial_h", "hermite_polynomial_he",
                                                           "laguerre_polynomial_l", "legendre_polynomial_p")},
}


def _batched_inputs(sample, which):
    """Stacked batch of B variants for the tensor args in `which` (others unbatched), and in_dims."""
    args, in_dims = [], []
    for i, a in enumerate(sample.args):
        if isinstance(a, torch.Tensor) and i in which:
            args.append(torch.stack([a] + [_shuffled(a, 10 * i + k) for k in range(1, B)]))
            in_dims.append(0)
        else:
            args.append(a)
            in_dims.append(None)
    return args, tuple(in_dims)


@pytest.mark.parametrize("op,sample", _VMAP_CASES)
def test_vmap_op_table(op, sample):
    if op.name in _NOT_VMAPPABLE:
        pytest.skip("data-dependent output shape")
    if op.name in _VMAP_GAPS:
        pytest.skip(_VMAP_GAPS[op.name])
    tensor_pos = [i for i, a in enumerate(sample.args) if isinstance(a, torch.Tensor)]
    for which in ({tensor_pos[0]}, set(tensor_pos)):
        args, in_dims = _batched_inputs(sample, which)
        try:
            per = [op.call(torch, *[a[i] if d == 0 else a for a, d in zip(args, in_dims)], **sample.kwargs)
                   for i in range(B)]
            if isinstance(per[0], torch.Tensor):
                expected = torch.stack(per)
            elif isinstance(per[0], (tuple, list)) and all(isinstance(p, torch.Tensor) for p in per[0]):
                expected = tuple(torch.stack([p[j] for p in per]) for j in range(len(per[0])))
            else:
                pytest.skip("non-tensor result")
        except (RuntimeError, ValueError, IndexError, TypeError):
            continue  # the per-sample call itself is invalid (e.g. broadcasting against the batch)

        def fe(*a):
            return op.call(ember, *a, **sample.kwargs)

        got = ember.vmap(fe, in_dims=in_dims)(*[E(a) for a in args])
        if isinstance(got, list):
            got = tuple(got)
        close(got, expected, rtol=1e-5, atol=1e-6)
        try:  # torch.vmap agrees too (where torch has a rule or fallback for the op)
            tv = torch.vmap(lambda *a: op.call(torch, *a, **sample.kwargs), in_dims=in_dims)(*args)
        except Exception:
            continue
        if isinstance(tv, list):
            tv = tuple(tv)
        try:
            close(tv, expected, rtol=1e-5, atol=1e-6)
        except AssertionError:
            continue  # torch.vmap disagrees with torch's own loop (addmm with beta=0 and a nan input)
        close(got, tv, rtol=1e-5, atol=1e-6)


_COMMON = {
    "add": lambda t, x, y: t.add(x, y), "mul": lambda t, x, y: x * y, "sub": lambda t, x, y: x - y,
    "div": lambda t, x, y: x / (y.abs() + 1), "sin": lambda t, x, y: t.sin(x), "exp": lambda t, x, y: x.exp(),
    "tanh": lambda t, x, y: t.tanh(x), "relu": lambda t, x, y: t.nn.functional.relu(x),
    "sum": lambda t, x, y: x.sum(), "sum_dim": lambda t, x, y: x.sum(1, keepdim=True),
    "mean": lambda t, x, y: t.mean(x, dim=-1), "amax": lambda t, x, y: x.amax(0), "max_dim": lambda t, x, y: x.max(1),
    "var": lambda t, x, y: x.var(1), "matmul": lambda t, x, y: x @ y.T, "mm": lambda t, x, y: t.mm(x, y.t()),
    "mv": lambda t, x, y: t.mv(x, y[0]), "dot": lambda t, x, y: t.dot(x[0], y[0]),
    "linear": lambda t, x, y: t.nn.functional.linear(x, y, y[:, 0]),
    "einsum": lambda t, x, y: t.einsum("ij,kj->ik", x, y),
    "softmax": lambda t, x, y: t.softmax(x, -1), "log_softmax": lambda t, x, y: t.log_softmax(x, 0),
    "reshape": lambda t, x, y: x.reshape(-1), "view": lambda t, x, y: x.view(4, 3),
    "transpose": lambda t, x, y: x.transpose(0, 1), "permute": lambda t, x, y: x.permute(1, 0),
    "unsqueeze": lambda t, x, y: x.unsqueeze(-1), "squeeze": lambda t, x, y: x[:1].squeeze(0),
    "flatten": lambda t, x, y: x.flatten(), "expand": lambda t, x, y: x[:, :1].expand(3, 4),
    "getitem": lambda t, x, y: x[1:, ::2], "select": lambda t, x, y: x[:, 1],
    "narrow": lambda t, x, y: x.narrow(1, 1, 2), "cat": lambda t, x, y: t.cat([x, y], 1),
    "stack": lambda t, x, y: t.stack([x, y], 0), "where": lambda t, x, y: t.where(x > 0, x, y),
    "clamp": lambda t, x, y: x.clamp(-0.5, 0.5), "cumsum": lambda t, x, y: x.cumsum(1),
    "pow": lambda t, x, y: x ** 2, "zeros_like": lambda t, x, y: t.zeros_like(x) + x,
    "mse": lambda t, x, y: t.nn.functional.mse_loss(x, y),
    "cross_entropy": lambda t, x, y: t.nn.functional.cross_entropy(x, y.argmax(1)),
    "layer_norm": lambda t, x, y: t.nn.functional.layer_norm(x, (4,)),
    "gather": lambda t, x, y: t.gather(x, 1, y.argsort(1)),
}


@pytest.mark.parametrize("name", list(_COMMON))
def test_vmap_common_ops_have_rules(name):
    f = _COMMON[name]
    x = torch.randn(5, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.randn(5, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    _batched.fallback_counts.clear()
    got = ember.vmap(lambda a, b: f(ember, a, b))(E(x), E(y))
    exp = torch.vmap(lambda a, b: f(torch, a, b))(x, y)
    close(tuple(got) if isinstance(got, tuple) else got, tuple(exp) if isinstance(exp, tuple) else exp)
    assert _batched.fallback_counts == {}, f"{name} used the fallback: {_batched.fallback_counts}"


def test_fallback_is_correct_and_counted():
    x = torch.randn(4, 5, dtype=torch.float64)
    _batched.fallback_counts.clear()
    # no rule for histc (torch.vmap loops over it too): the slow path
    got = ember.vmap(lambda a: ember.histc(a, bins=4, min=-1, max=1))(E(x))
    close(got, torch.vmap(lambda a: torch.histc(a, bins=4, min=-1, max=1))(x))
    assert _batched.fallback_counts.get("histc") == 1


# ---------------------------------------------------------------- in_dims / out_dims / pytrees
def test_in_dims_out_dims_variants():
    x = torch.randn(2, 3, 5, dtype=torch.float64)
    y = torch.randn(3, dtype=torch.float64)
    for in_dims, out_dims in [(0, 0), (1, 0), (-1, 1), (2, -1), ((0, None), 0), ((1, None), 1)]:
        def ft(a, b=None, t=torch):
            return a * 2 if b is None else a.sum(0) + b.sum()
        if isinstance(in_dims, tuple):
            exp = torch.vmap(lambda a, b: ft(a, b), in_dims=in_dims, out_dims=out_dims)(x, y)
            got = ember.vmap(lambda a, b: ft(a, b, ember), in_dims=in_dims, out_dims=out_dims)(E(x), E(y))
        else:
            exp = torch.vmap(ft, in_dims=in_dims, out_dims=out_dims)(x)
            got = ember.vmap(ft, in_dims=in_dims, out_dims=out_dims)(E(x))
        close(got, exp)


def test_pytree_inputs_and_outputs():
    x = torch.randn(4, 3, dtype=torch.float64)
    y = torch.randn(3, 4, dtype=torch.float64)

    def f(t):
        def g(d, lst):
            return {"s": d["a"] + lst[0], "p": (d["a"] * lst[1], lst[0].sum())}
        return g
    in_dims = ({"a": 0}, [1, None])
    exp = torch.vmap(f(torch), in_dims=in_dims, out_dims={"s": 0, "p": (1, 0)})({"a": x}, [y, x[0]])
    got = ember.vmap(f(ember), in_dims=in_dims, out_dims={"s": 0, "p": (1, 0)})({"a": E(x)}, [E(y), E(x[0])])
    close(got, exp)


def test_unbatched_output_is_expanded_and_out_dims_none():
    x = torch.randn(4, 3)
    c = torch.ones(2)
    exp = torch.vmap(lambda a: (a, c), out_dims=(0, None))(x)
    got = ember.vmap(lambda a: (a, E(c)), out_dims=(0, None))(E(x))
    close(got, exp)
    close(ember.vmap(lambda a: E(c))(E(x)), torch.vmap(lambda a: c)(x))


def test_nested_vmap():
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    y = torch.randn(3, 4, dtype=torch.float64)

    def f(t):
        return lambda a, b: t.matmul(a, b) + a.sum() * t.sin(b).mean()
    for in_dims in [(0, None), (0, 0)]:
        exp = torch.vmap(torch.vmap(f(torch), in_dims=(0, 0)), in_dims=in_dims)(x, y if in_dims[1] is None else x)
        got = ember.vmap(ember.vmap(f(ember), in_dims=(0, 0)), in_dims=in_dims)(E(x), E(y) if in_dims[1] is None
                                                                                  else E(x))
        close(got, exp)
    # inner function closing over an outer-batched value; different dims per level
    exp = torch.vmap(lambda a: torch.vmap(lambda r: r * a.sum() + a[:, 0], in_dims=1)(a))(x)
    got = ember.vmap(lambda a: ember.vmap(lambda r: r * a.sum() + a[:, 0], in_dims=1)(a))(E(x))
    close(got, exp)


def test_chunk_size():
    x = torch.randn(7, 5, dtype=torch.float64)
    for cs in (1, 2, 3, 7, 10):
        close(ember.vmap(lambda a: (a.exp().sum(), a * 2), chunk_size=cs, out_dims=(0, 1))(E(x)),
              torch.vmap(lambda a: (a.exp().sum(), a * 2), chunk_size=cs, out_dims=(0, 1))(x))
    with pytest.raises(ValueError):
        ember.vmap(lambda a: a, chunk_size=0)


def test_inplace_on_batched():
    x = torch.randn(4, 3, dtype=torch.float64)

    def f(t):
        def g(a):
            a = a.clone()
            a.mul_(2)
            a += 1
            a[0] = 5.0
            return a
        return g
    close(ember.vmap(f(ember))(E(x)), torch.vmap(f(torch))(x))
    # in-place into an unbatched tensor from a batched one: torch's error
    with pytest.raises(RuntimeError):
        torch.vmap(lambda a: torch.zeros(3).add_(a))(x)
    with pytest.raises(RuntimeError):
        ember.vmap(lambda a: ember.zeros(3).add_(a))(E(x))


def test_module_forward_under_vmap():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    em = ember.nn.Sequential(ember.nn.Linear(5, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2)).double()
    em.load_state_dict({k: E(v) for k, v in tm.state_dict().items()})
    x = torch.randn(6, 5, dtype=torch.float64)
    close(ember.vmap(em)(E(x)), torch.vmap(tm)(x))


def test_conv2d_under_vmap():
    x = torch.randn(3, 2, 4, 6, 6, dtype=torch.float64)
    w = torch.randn(5, 4, 3, 3, dtype=torch.float64)
    close(ember.vmap(lambda a: ember.nn.functional.conv2d(a, E(w), padding=1))(E(x)),
          torch.vmap(lambda a: torch.nn.functional.conv2d(a, w, padding=1))(x))
    close(ember.vmap(lambda a: ember.nn.functional.conv2d(a, E(w)), in_dims=1)(E(x)),
          torch.vmap(lambda a: torch.nn.functional.conv2d(a, w), in_dims=1)(x))


# ---------------------------------------------------------------- randomness
def test_randomness_modes():
    x = ember.ones(4, 100)
    with pytest.raises(RuntimeError, match="randomness"):
        ember.vmap(lambda a: a + ember.rand(100))(x)
    with pytest.raises(RuntimeError):
        torch.vmap(lambda a: a + torch.rand(100))(torch.ones(4, 100))
    with pytest.raises(RuntimeError, match="randomness"):
        ember.vmap(lambda a: ember.rand_like(a))(x)
    with pytest.raises(RuntimeError, match="randomness"):
        ember.vmap(lambda a: ember.nn.functional.dropout(a, 0.5))(x)
    for f in (lambda a: a * ember.rand(100), lambda a: ember.rand_like(a) * a, lambda a: a.clone().uniform_(),
              lambda a: ember.nn.functional.dropout(a, 0.5), lambda a: ember.randn(100) + 0 * a):
        same = ember.vmap(f, randomness="same")(x)
        diff = ember.vmap(f, randomness="different")(x)
        assert tuple(same.shape) == tuple(diff.shape) == (4, 100)
        assert all(ember.equal(same[0], same[i]) for i in range(1, 4))
        assert not any(ember.equal(diff[0], diff[i]) for i in range(1, 4))
    with pytest.raises(RuntimeError):
        ember.vmap(lambda a: a, randomness="bogus")


def test_randomness_nested():
    x = ember.ones(3, 2, 50)
    out = ember.vmap(ember.vmap(lambda a: ember.rand_like(a), randomness="same"), randomness="different")(x)
    assert ember.equal(out[0, 0], out[0, 1]) and not ember.equal(out[0, 0], out[1, 0])


# ---------------------------------------------------------------- errors
def _same_error(fe, ft):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(type(et.value)):
        fe()
    return et.value


def test_vmap_errors():
    xe, xt = ember.randn(3, 4), torch.randn(3, 4)
    ye, yt = ember.randn(2, 4), torch.randn(2, 4)
    err = _same_error(lambda: ember.vmap(ember.add)(xe, ye), lambda: torch.vmap(torch.add)(xt, yt))
    assert isinstance(err, ValueError)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        ember.vmap(ember.add)(xe, ye)
    _same_error(lambda: ember.vmap(ember.sin, in_dims=2)(xe), lambda: torch.vmap(torch.sin, in_dims=2)(xt))
    _same_error(lambda: ember.vmap(ember.add, in_dims=(0,))(xe, xe),
                lambda: torch.vmap(torch.add, in_dims=(0,))(xt, xt))
    _same_error(lambda: ember.vmap(ember.sin, in_dims="a")(xe), lambda: torch.vmap(torch.sin, in_dims="a")(xt))
    _same_error(lambda: ember.vmap(lambda a, n: a * n, in_dims=(0, 0))(xe, 2),
                lambda: torch.vmap(lambda a, n: a * n, in_dims=(0, 0))(xt, 2))
    _same_error(lambda: ember.vmap(ember.sin, in_dims=None)(xe), lambda: torch.vmap(torch.sin, in_dims=None)(xt))
    _same_error(lambda: ember.vmap(lambda a: 3)(xe), lambda: torch.vmap(lambda a: 3)(xt))
    _same_error(lambda: ember.vmap(lambda a: a, out_dims=None)(xe), lambda: torch.vmap(lambda a: a, out_dims=None)(xt))
    _same_error(lambda: ember.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(xe),
                lambda: torch.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(xt))
    _same_error(lambda: ember.vmap(lambda a: a.item())(xe), lambda: torch.vmap(lambda a: a.item())(xt))
    _same_error(lambda: ember.vmap(lambda a: a if a.sum() > 0 else -a)(xe),
                lambda: torch.vmap(lambda a: a if a.sum() > 0 else -a)(xt))
    _same_error(lambda: ember.vmap(lambda: 1)(), lambda: torch.vmap(lambda: 1)())


# ---------------------------------------------------------------- rules for indexed writes, kron, combinations, lstsq
F64, I64 = torch.float64, torch.int64


def _rand(*shape, dtype=F64, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(*shape, dtype=dtype, generator=g)
    return torch.randint(-5, 6, shape, dtype=dtype, generator=g)


def _per_sample(f, in_dims, args):
    """torch's f on each batch entry, stacked: the reference both vmaps must match."""
    B = next(a.shape[d] for a, d in zip(args, in_dims) if d is not None)
    outs = [f(torch, *[a if d is None else a.select(d, i) for a, d in zip(args, in_dims)]) for i in range(B)]
    if isinstance(outs[0], tuple):
        return tuple(torch.stack([o[j] for o in outs]) for j in range(len(outs[0])))
    return torch.stack(outs)


def _check_rule(f, in_dims, *args, against_torch_vmap=True):
    """ember.vmap(f) equals the per-sample loop (and torch.vmap) without taking the fallback."""
    expected = _per_sample(f, in_dims, args)
    if against_torch_vmap:
        tv = torch.vmap(lambda *a: f(torch, *a), in_dims=in_dims)(*args)
        torch.testing.assert_close(tuple(tv) if isinstance(expected, tuple) else tv, expected, rtol=1e-6, atol=1e-6)
    _batched.fallback_counts.clear()
    got = ember.vmap(lambda *a: f(ember, *a), in_dims=in_dims)(*E(args))
    assert _batched.fallback_counts == {}, f"the fallback ran: {_batched.fallback_counts}"
    close(tuple(got) if isinstance(got, tuple) else got, expected)


def _check_writes_through(f, in_dims, x, *rest):
    """An in-place op on a batched input changes the caller's tensor, as torch.vmap does."""
    xt, xe = x.clone(), E(x)
    torch.vmap(lambda *a: f(torch, *a), in_dims=in_dims)(xt, *rest)
    _batched.fallback_counts.clear()
    ember.vmap(lambda *a: f(ember, *a), in_dims=in_dims)(xe, *E(rest))
    assert _batched.fallback_counts == {}, f"the fallback ran: {_batched.fallback_counts}"
    assert not torch.equal(xt, x)
    close(xe, xt)


@pytest.mark.parametrize("dt", [F64, I64])
def test_vmap_kron_rule(dt):
    kron = lambda t, a, b: t.kron(a, b)  # noqa: E731
    _check_rule(kron, (0, 0), _rand(3, 2, 3, dtype=dt), _rand(3, 3, 2, dtype=dt, seed=1))
    # batched a (batch in dim 1) with an unbatched b of higher rank; the reverse with a negative in_dim
    _check_rule(kron, (1, None), _rand(2, 3, 4, dtype=dt), _rand(2, 1, 3, dtype=dt, seed=1))
    _check_rule(lambda t, a, b: a.kron(b), (None, -1), _rand(2, dtype=dt), _rand(2, 2, 3, dtype=dt, seed=1))
    _check_rule(kron, (0, 0), _rand(3, dtype=dt), _rand(3, dtype=dt, seed=1))  # 0-d samples
    _check_rule(kron, (0, None), _rand(3, 2, dtype=dt), _rand(2, dtype=F64, seed=1))  # promotes as kron does


def test_vmap_combinations_rule():
    x = _rand(3, 4)
    _check_rule(lambda t, a: t.combinations(a), (0,), x)
    _check_rule(lambda t, a: t.combinations(a, 3, with_replacement=True), (1,), _rand(4, 3, dtype=I64))
    _check_rule(lambda t, a: t.combinations(a, r=0), (0,), x)
    _check_rule(lambda t, a: t.combinations(a, 5), (0,), x)  # r > n: no combinations, shape (0, 5)
    _same_error(lambda: ember.vmap(ember.combinations)(E(_rand(3, 2, 2))),
                lambda: torch.vmap(torch.combinations)(_rand(3, 2, 2)))


def _idx(t, values):
    return t.tensor(values)


def _lib_dtype(t, dt):
    """The dtype named as the torch dtype `dt`, in library t."""
    return getattr(t, str(dt).split(".")[-1])


@pytest.mark.parametrize("dt", [F64, I64])
def test_vmap_index_put_rule(dt):
    one = lambda t: t.ones((), dtype=_lib_dtype(t, dt))  # noqa: E731
    # batched self, unbatched indices and values
    _check_rule(lambda t, a: a.index_put((_idx(t, [0, 2]), _idx(t, [1, -1])), one(t)), (0,), _rand(3, 4, 5, dtype=dt))
    # unbatched self with batched values; with a batched (2-D) index, the batch in its last dim
    _check_rule(lambda t, a, v: a.index_put((_idx(t, [0, 2]),), v), (None, 0), _rand(4, 5, dtype=dt),
                _rand(3, 5, dtype=dt, seed=1))
    index = torch.randint(-4, 4, (2, 2, 3), generator=torch.Generator().manual_seed(2))
    _check_rule(lambda t, a, i: t.index_put(a, (i, _idx(t, [[0], [4]])), one(t) * 7), (None, -1),
                _rand(4, 5, dtype=dt), index)
    # everything batched, accumulating over repeated indices
    index = torch.randint(-4, 4, (3, 6), generator=torch.Generator().manual_seed(3))
    _check_rule(lambda t, a, i, v: a.index_put((i,), v, accumulate=True), (0, 0, 1), _rand(3, 4, 5, dtype=dt),
                index, _rand(6, 3, 5, dtype=dt, seed=1))
    # unbatched boolean masks (1-D and 2-D): the same positions in every entry
    _check_rule(lambda t, a: a.index_put((_idx(t, [True, False, True, False]), _idx(t, [1, 3])), one(t)), (0,),
                _rand(3, 4, 5, dtype=dt))
    mask = _rand(4, 5, seed=4) > 0
    _check_rule(lambda t, a, v: a.index_put((E(mask) if t is ember else mask,), v), (0, None),
                _rand(3, 4, 5, dtype=dt), _rand(int(mask.sum()), dtype=dt, seed=1))
    # in place: on a batched self (a clone, and the caller's tensor itself, the batch in dim 1)
    _check_rule(lambda t, a, v: t.index_put_(a.clone(), (_idx(t, [1, 1]),), v, accumulate=True), (0, 0),
                _rand(3, 4, 5, dtype=dt), _rand(3, 5, dtype=dt, seed=1))
    _check_writes_through(lambda t, a, v: a.index_put_((_idx(t, [0, 3]),), v), (1, 0), _rand(4, 3, 5, dtype=dt),
                          _rand(3, 2, 5, dtype=dt, seed=1))


def test_vmap_index_put_errors():
    x, v = _rand(4, 5), _rand(3, 5)
    # in place into an unbatched self from batched values or indices
    err = _same_error(lambda: ember.vmap(lambda b: E(x).index_put_((ember.tensor([0]),), b))(E(v)),
                      lambda: torch.vmap(lambda b: x.clone().index_put_((torch.tensor([0]),), b))(v))
    assert isinstance(err, RuntimeError)
    _same_error(lambda: ember.vmap(lambda i: E(x).index_put_((i,), ember.tensor(1.0, dtype=ember.float64)))(
                    ember.tensor([[0], [1], [2]])),
                lambda: torch.vmap(lambda i: x.clone().index_put_((i,), torch.tensor(1.0, dtype=F64)))(
                    torch.tensor([[0], [1], [2]])))
    # a batched boolean mask selects a different count per entry
    masks = _rand(3, 4) > 0
    _same_error(lambda: ember.vmap(lambda m: E(x).index_put((m,), ember.tensor(1.0, dtype=ember.float64)))(E(masks)),
                lambda: torch.vmap(lambda m: x.index_put((m,), torch.tensor(1.0, dtype=F64)))(masks))
    xs = _rand(3, 4, 5)
    for f in (lambda t, a: a.index_put((_idx(t, [0, 2]),), t.ones(1, 2, 5, dtype=a.dtype)),  # values of too high rank
              lambda t, a: a.index_put((_idx(t, [4]),), t.ones((), dtype=a.dtype)),  # out of range
              lambda t, a: a.index_put((_idx(t, [0]),), t.ones(()))):  # values of another dtype
        _same_error(lambda: ember.vmap(lambda a: f(ember, a))(E(xs)), lambda: torch.vmap(lambda a: f(torch, a))(xs))


@pytest.mark.parametrize("dt", [F64, I64])
def test_vmap_put_rule(dt):
    _check_rule(lambda t, a: a.put(_idx(t, [0, 5, -1]), t.ones(3, dtype=_lib_dtype(t, dt))), (0,),
                _rand(3, 4, 5, dtype=dt))
    # unbatched self, batched source, accumulating over repeated indices
    _check_rule(lambda t, a, s: t.put(a, _idx(t, [1, 1, -20, 7]), s, accumulate=True), (None, 0),
                _rand(4, 5, dtype=dt), _rand(3, 4, dtype=dt, seed=1))
    # a batched 2-D index (batch in dim 1) into a batched self whose batch is in its last dim
    index = torch.randint(-20, 20, (2, 3, 2), generator=torch.Generator().manual_seed(2))
    _check_rule(lambda t, a, i: a.put(i, t.ones(2, 2, dtype=_lib_dtype(t, dt))), (-1, 1), _rand(4, 5, 3, dtype=dt),
                index)
    _check_rule(lambda t, a, i, s: a.clone().put_(i, s), (0, 0, 0), _rand(3, 4, 5, dtype=dt),
                torch.randint(0, 20, (3, 4), generator=torch.Generator().manual_seed(3)), _rand(3, 4, dtype=dt))
    # in place on the caller's tensor, batch in dim 1: the flattened view is a copy, written back
    _check_writes_through(lambda t, a, s: a.put_(_idx(t, [0, 19]), s), (1, 0), _rand(4, 3, 5, dtype=dt),
                          _rand(3, 2, dtype=dt, seed=1))


def test_vmap_put_errors():
    x, s = _rand(4, 5), _rand(3, 2)
    err = _same_error(lambda: ember.vmap(lambda b: E(x).put_(ember.tensor([0, 1]), b))(E(s)),
                      lambda: torch.vmap(lambda b: x.clone().put_(torch.tensor([0, 1]), b))(s))
    assert isinstance(err, RuntimeError)
    xs = _rand(3, 4, 5)
    for f in (lambda t, a: a.put(_idx(t, [20]), t.ones(1, dtype=a.dtype)),  # out of range
              lambda t, a: a.put(_idx(t, [-21]), t.ones(1, dtype=a.dtype)),
              lambda t, a: a.put(_idx(t, [0, 1]), t.ones(3, dtype=a.dtype)),  # index and source sizes differ
              lambda t, a: a.put(_idx(t, [0]), t.ones(1))):  # source of another dtype
        _same_error(lambda: ember.vmap(lambda a: f(ember, a))(E(xs)), lambda: torch.vmap(lambda a: f(torch, a))(xs))


@pytest.mark.parametrize("dt", [F64, I64])
def test_vmap_masked_scatter_rule(dt):
    row_mask = lambda t: _idx(t, [[True, False, True, True, False]])  # noqa: E731
    # batched self; unbatched mask broadcasting over it and unbatched source
    _check_rule(lambda t, a: a.masked_scatter(row_mask(t), t.arange(20).to(_lib_dtype(t, dt))), (0,),
                _rand(3, 4, 5, dtype=dt))
    # unbatched self, batched mask and source; batched source alone (2-D, batch in dim 1)
    masks = _rand(3, 4, 5, seed=2) > 0
    _check_rule(lambda t, a, m, s: t.masked_scatter(a, m, s), (None, 0, 0), _rand(4, 5, dtype=dt), masks,
                _rand(3, 20, dtype=dt, seed=1))
    _check_rule(lambda t, a, s: a.masked_scatter(row_mask(t), s), (None, 1), _rand(4, 5, dtype=dt),
                _rand(4, 3, 3, dtype=dt, seed=1))
    # a mask of higher rank than self: out of place, self broadcasts to it
    _check_rule(lambda t, a, m: a.masked_scatter(m, t.arange(40).to(_lib_dtype(t, dt))), (0, None),
                _rand(3, 4, 5, dtype=dt), masks[:2])
    _check_rule(lambda t, a, m, s: a.clone().masked_scatter_(m, s), (0, 0, None), _rand(3, 4, 5, dtype=dt), masks,
                _rand(20, dtype=dt, seed=1))
    _check_writes_through(lambda t, a, s: a.masked_scatter_(row_mask(t), s), (2, 0), _rand(4, 5, 3, dtype=dt),
                          _rand(3, 12, dtype=dt, seed=1))


def test_vmap_masked_scatter_errors():
    x, s = _rand(4, 5), _rand(3, 20)
    mask = _rand(4, 5, seed=2) > 0
    err = _same_error(lambda: ember.vmap(lambda b: E(x).masked_scatter_(E(mask), b))(E(s)),
                      lambda: torch.vmap(lambda b: x.clone().masked_scatter_(mask, b))(s))
    assert isinstance(err, RuntimeError)
    xs = _rand(3, 4, 5)
    for f in (lambda t, a: a.masked_scatter(t.ones(4, 5, dtype=t.bool), t.ones(3, dtype=a.dtype)),  # source too short
              lambda t, a: a.masked_scatter(t.ones(5, dtype=t.bool), t.ones(20)),  # source of another dtype
              lambda t, a: a.clone().masked_scatter_(t.ones(2, 4, 5, dtype=t.bool), a.flatten().repeat(2))):
        _same_error(lambda: ember.vmap(lambda a: f(ember, a))(E(xs)), lambda: torch.vmap(lambda a: f(torch, a))(xs))


@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
def test_vmap_lstsq_rule(driver):
    def lstsq(t, a, b):
        return tuple(t.linalg.lstsq(a, b, driver=driver))
    A, Bm = _rand(3, 5, 3), _rand(3, 5, 2, seed=1)
    _check_rule(lstsq, (0, 0), A, Bm)
    _check_rule(lstsq, (0, None), A, Bm[0])
    _check_rule(lstsq, (None, 2), A[0], Bm.permute(1, 2, 0))
    _check_rule(lstsq, (0, 0), A.mT, Bm[:, :3])  # wide: no residuals
    _check_rule(lstsq, (1, 1), _rand(2, 3, 5, 3), _rand(2, 3, 5, 2, seed=1))  # systems with a batch of their own
    # a vector right-hand side: torch.vmap reads the batched B as a matrix and raises; per sample it is a vector
    _check_rule(lstsq, (0, 0), A, Bm[..., 0], against_torch_vmap=False)


def test_vmap_nested_rules():
    """Rules at an inner level see physical values that are BatchedTensors of the outer one."""
    x, v = _rand(2, 3, 4, 5), _rand(2, 5)
    cases = [(lambda t, a, b: a.index_put((_idx(t, [0, 3]),), b), (0, None)),
             (lambda t, a, b: a.put(_idx(t, [1, -1]), b[:2]), (0, None)),
             (lambda t, a, b: a.masked_scatter(a > 0, b.repeat(4)), (0, None)),
             (lambda t, a, b: t.kron(a[0], b), (None, 0))]
    for f, inner in cases:
        exp = torch.vmap(torch.vmap(lambda a, b: f(torch, a, b), in_dims=inner), in_dims=(0, 0))(x, v)
        _batched.fallback_counts.clear()
        got = ember.vmap(ember.vmap(lambda a, b: f(ember, a, b), in_dims=inner), in_dims=(0, 0))(E(x), E(v))
        assert _batched.fallback_counts == {}, f"the fallback ran: {_batched.fallback_counts}"
        close(got, exp)


_ZERO_D = {
    "softmax": lambda t, a: t.softmax(a, 0), "log_softmax": lambda t, a: a.log_softmax(-1),
    "cumsum": lambda t, a: t.cumsum(a, 0), "cumprod": lambda t, a: a.cumprod(-1, dtype=t.float32),
    "cummax": lambda t, a: tuple(t.cummax(a, 0)), "cummin": lambda t, a: tuple(a.cummin(-1)),
    "logcumsumexp": lambda t, a: t.logcumsumexp(a, 0), "sort": lambda t, a: tuple(a.sort(descending=True)),
    "argsort": lambda t, a: t.argsort(a, dim=0), "mode": lambda t, a: tuple(t.mode(a, 0, keepdim=True)),
    "kthvalue": lambda t, a: tuple(a.kthvalue(1)), "flip": lambda t, a: t.flip(a, (0,)),
}


@pytest.mark.parametrize("name", list(_ZERO_D))
def test_vmap_zero_d_samples_of_dim_ops(name):
    """A 0-d sample runs as one of size 1 (dim 0 or -1), the results 0-d again."""
    # torch.vmap's flip raises IndexError on 0-d samples that torch.flip itself takes
    _check_rule(_ZERO_D[name], (0,), _rand(4), against_torch_vmap=name != "flip")


def test_vmap_zero_d_sample_dim_out_of_range():
    _same_error(lambda: ember.vmap(lambda a: ember.cumsum(a, 1))(E(_rand(4))),
                lambda: torch.vmap(lambda a: torch.cumsum(a, 1))(_rand(4)))
    _same_error(lambda: ember.vmap(lambda a: a.sort(-2))(E(_rand(4))),
                lambda: torch.vmap(lambda a: a.sort(-2))(_rand(4)))


# ---------------------------------------------------------------- autograd transforms vs torch.func
def _f1(t):
    return lambda x: (t.sin(x) * x).sum() + (x ** 3).mean()


def _f2(t):
    return lambda x, y: (t.tanh(x @ y) ** 2).sum() + x.exp().sum()


def test_grad_and_argnums():
    x = torch.randn(3, 4, dtype=torch.float64)
    y = torch.randn(4, 2, dtype=torch.float64)
    close(ember.func.grad(_f1(ember))(E(x)), torch.func.grad(_f1(torch))(x))
    for argnums in (0, 1, (0, 1), (1,)):
        close(ember.func.grad(_f2(ember), argnums=argnums)(E(x), E(y)),
              torch.func.grad(_f2(torch), argnums=argnums)(x, y))
    close(ember.func.grad_and_value(_f2(ember), argnums=1)(E(x), E(y)),
          torch.func.grad_and_value(_f2(torch), argnums=1)(x, y))
    got = ember.func.grad(_f1(ember))(E(x))
    assert not got.requires_grad


def test_grad_has_aux_and_pytree_input():
    x = torch.randn(5, dtype=torch.float64)

    def f(t):
        return lambda d: ((d["a"] * d["b"]).sum(), {"aux": d["a"] * 2})
    g, aux = ember.func.grad(f(ember), has_aux=True)({"a": E(x), "b": E(x.cos())})
    gt, auxt = torch.func.grad(f(torch), has_aux=True)({"a": x, "b": x.cos()})
    close(g, gt)
    close(aux, auxt)
    with pytest.raises(RuntimeError):
        ember.func.grad(lambda a: a * 2)(E(x))
    with pytest.raises(RuntimeError):
        torch.func.grad(lambda a: a * 2)(x)


def test_grad_of_grad():
    x = torch.randn(3, dtype=torch.float64)

    def f(t):
        return lambda a: (a.sin() * a ** 2).sum()
    close(ember.func.grad(lambda a: ember.func.grad(f(ember))(a).sum())(E(x)),
          torch.func.grad(lambda a: torch.func.grad(f(torch))(a).sum())(x))


def test_vjp_and_has_aux():
    x = torch.randn(3, 4, dtype=torch.float64)
    ct = torch.randn(4, dtype=torch.float64)

    def f(t):
        return lambda a: t.tanh(a).sum(0) * 2
    oe, fe = ember.func.vjp(f(ember), E(x))
    ot, ft = torch.func.vjp(f(torch), x)
    close(oe, ot)
    close(fe(E(ct)), ft(ct))
    oe, fe, ae = ember.func.vjp(lambda a: (f(ember)(a), a.sum()), E(x), has_aux=True)
    ot, ft, at = torch.func.vjp(lambda a: (f(torch)(a), a.sum()), x, has_aux=True)
    close((oe, fe(E(ct)), ae), (ot, ft(ct), at))


def test_jvp():
    x = torch.randn(3, 4, dtype=torch.float64)
    t = torch.randn(3, 4, dtype=torch.float64)

    def f(lib):
        return lambda a: (lib.sin(a) * a).sum(1)
    close(ember.func.jvp(f(ember), (E(x),), (E(t),)), torch.func.jvp(f(torch), (x,), (t,)))
    close(ember.func.jvp(lambda a: (f(ember)(a), a * 2), (E(x),), (E(t),), has_aux=True),
          torch.func.jvp(lambda a: (f(torch)(a), a * 2), (x,), (t,), has_aux=True))


def test_jacrev_jacfwd_hessian():
    x = torch.randn(4, dtype=torch.float64)
    y = torch.randn(4, 3, dtype=torch.float64)

    def f(t):
        return lambda a, b: t.tanh(a @ b) * a.sum()
    for jac in ("jacrev", "jacfwd"):
        for argnums in (0, 1, (0, 1)):
            close(getattr(ember.func, jac)(f(ember), argnums=argnums)(E(x), E(y)),
                  getattr(torch.func, jac)(f(torch), argnums=argnums)(x, y))
        close(getattr(ember.func, jac)(lambda a: (a.sin(), a.cos()), has_aux=True)(E(x)),
              getattr(torch.func, jac)(lambda a: (a.sin(), a.cos()), has_aux=True)(x))

    def s(t):
        return lambda a: (a.sin() * a.roll(1)).sum() + (a ** 3).sum()
    close(ember.func.hessian(s(ember))(E(x)), torch.func.hessian(s(torch))(x))
    close(ember.func.jacrev(ember.func.jacrev(s(ember)))(E(x)), torch.func.jacrev(torch.func.jacrev(s(torch)))(x))
    close(ember.func.jacrev(f(ember), chunk_size=2)(E(x), E(y)), torch.func.jacrev(f(torch))(x, y))


def test_vmap_of_jacrev_and_jvp():
    x = torch.randn(5, 3, dtype=torch.float64)

    def f(t):
        return lambda a: a.sin() * a.sum()
    close(ember.vmap(ember.func.jacrev(f(ember)))(E(x)), torch.vmap(torch.func.jacrev(f(torch)))(x))
    close(ember.vmap(ember.func.jacfwd(f(ember)))(E(x)), torch.vmap(torch.func.jacfwd(f(torch)))(x))
    close(ember.vmap(lambda a: ember.func.jvp(f(ember), (a,), (ember.ones_like(a),)))(E(x)),
          torch.vmap(lambda a: torch.func.jvp(f(torch), (a,), (torch.ones_like(a),)))(x))


# ---------------------------------------------------------------- per-sample gradients, ensembles
def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3)).double()


def test_per_sample_gradients_mlp():
    torch.manual_seed(0)
    tm, em = _mlp(torch), _mlp(ember)
    em.load_state_dict({k: E(v) for k, v in tm.state_dict().items()})
    x = torch.randn(10, 6, dtype=torch.float64)
    y = torch.randint(0, 3, (10,))

    def loss_of(lib, model):
        def loss(params, xi, yi):
            out = lib.func.functional_call(model, params, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))
        return loss
    tp = {k: v.detach() for k, v in tm.named_parameters()}
    ep = {k: v.detach() for k, v in em.named_parameters()}
    exp = torch.func.vmap(torch.func.grad(loss_of(torch, tm)), in_dims=(None, 0, 0))(tp, x, y)
    _batched.fallback_counts.clear()
    got = ember.func.vmap(ember.func.grad(loss_of(ember, em)), in_dims=(None, 0, 0))(ep, E(x), E(y))
    close(got, exp)
    assert _batched.fallback_counts == {}
    # not the batch sum: each row is that sample's own gradient
    one = ember.func.grad(loss_of(ember, em))(ep, E(x[3]), E(y[3]))
    close({k: v[3] for k, v in got.items()}, {k: torch.from_dlpack(v) for k, v in one.items()})
    # unbatched model, sample of a batch: in_dims on x only
    exp = torch.func.vmap(torch.func.grad(lambda p, xi: torch.func.functional_call(tm, p, (xi,)).pow(2).sum()),
                          in_dims=(None, 0))(tp, x)
    got = ember.func.vmap(ember.func.grad(lambda p, xi: ember.func.functional_call(em, p, (xi,)).pow(2).sum()),
                          in_dims=(None, 0))(ep, E(x))
    close(got, exp)


def test_ensemble_stack_module_state():
    torch.manual_seed(0)
    tms = [_mlp(torch) for _ in range(4)]
    ems = [_mlp(ember) for _ in range(4)]
    for t, e in zip(tms, ems):
        e.load_state_dict({k: E(v) for k, v in t.state_dict().items()})
    tparams, tbuf = torch.func.stack_module_state(tms)
    eparams, ebuf = ember.func.stack_module_state(ems)
    close(eparams, tparams)
    assert all(v.requires_grad for v in eparams.values())
    x = torch.randn(5, 6, dtype=torch.float64)
    base_t = tms[0].to("meta") if False else tms[0]

    def ft(p, b, xx):
        return torch.func.functional_call(base_t, (p, b), (xx,))

    def fe(p, b, xx):
        return ember.func.functional_call(ems[0], (p, b), (xx,))
    close(ember.vmap(fe, in_dims=(0, 0, None))(eparams, ebuf, E(x)),
          torch.vmap(ft, in_dims=(0, 0, None))(tparams, tbuf, x))
    xs = torch.randn(4, 5, 6, dtype=torch.float64)
    close(ember.vmap(fe)(eparams, ebuf, E(xs)), torch.vmap(ft)(tparams, tbuf, xs))


def test_namespace():
    import importlib
    assert ember.func.vmap is ember.vmap
    m = importlib.import_module("ember.func")
    for n in ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
              "stack_module_state"):
        assert callable(getattr(m, n))
    assert not np.isnan(1.0)


# ---------------------------------------------------------------- rules for Python compositions and more families
_POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
          "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
          "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
          "legendre_polynomial_p"]


@pytest.mark.parametrize("name", _POLYS)
def test_vmap_special_polynomials_have_rules(name):
    g = torch.Generator().manual_seed(3)
    x = torch.rand(4, 5, dtype=torch.float64, generator=g)
    n = torch.randint(0, 7, (4, 5), generator=g).double()
    n_row = torch.randint(0, 7, (5,), generator=g).double()
    cases = [  # (in_dims, args): x batched with n a number, a broadcast tensor or batched too; n alone batched
        ((0, None), (x, 4)), ((0, None), (x, n_row)), ((0, 0), (x, n)), ((1, 0), (x.t().contiguous(), n[:, :1])),
        ((None, 0), (x[0], n)),
    ]
    tf, ef = getattr(torch.special, name), getattr(ember.special, name)
    for in_dims, args in cases:
        _batched.fallback_counts.clear()
        got = ember.vmap(ef, in_dims=in_dims)(*E(args))
        assert _batched.fallback_counts == {}, (in_dims, _batched.fallback_counts)
        close(got, torch.vmap(tf, in_dims=in_dims)(*args), rtol=1e-9, atol=1e-9)
        # and the per-sample loop of ember's own op
        loop = [ef(*E([a if d is None else a.select(d, i) for a, d in zip(args, in_dims)])) for i in range(4)]
        close(got, torch.stack([torch.from_dlpack(r) for r in loop]), rtol=1e-12, atol=1e-12)
    # nested vmap: both levels batched
    x3 = torch.rand(2, 3, 4, dtype=torch.float64, generator=g)
    _batched.fallback_counts.clear()
    got = ember.vmap(ember.vmap(lambda a, k: ef(a, k)))(E(x3), E(n[:2, :3].long()))
    close(got, torch.vmap(torch.vmap(lambda a, k: tf(a, k)))(x3, n[:2, :3].long()), rtol=1e-9, atol=1e-9)
    assert _batched.fallback_counts == {}


_MORE = {
    "xlog1py": lambda t, x, y: t.special.xlog1py(x, y.abs()),
    "zeta": lambda t, x, y: t.special.zeta(x.abs() + 1.5, y.abs() + 0.5),
    "logaddexp": lambda t, x, y: t.logaddexp(x, y),
    "logaddexp2": lambda t, x, y: t.logaddexp2(x, y),
    "nextafter": lambda t, x, y: t.nextafter(x, y),
    "cosine_similarity": lambda t, x, y: t.nn.functional.cosine_similarity(x, y, 1),
    "bessel_j0": lambda t, x, y: t.special.bessel_j0(x * 10),
    "bessel_y1": lambda t, x, y: t.special.bessel_y1(x.abs() * 10 + 0.1),
    "fft": lambda t, x, y: t.fft.fft(x, dim=0).abs(), "rfft": lambda t, x, y: t.fft.rfft(x).abs(),
    "irfft": lambda t, x, y: t.fft.irfft(x, n=6),
    "logsigmoid": lambda t, x, y: t.nn.functional.logsigmoid(x),
    "broadcast_tensors": lambda t, x, y: t.broadcast_tensors(x, y[0], t.ones(1, 1, dtype=x.dtype)),
    "result_type": lambda t, x, y: x + t.zeros((), dtype=t.result_type(x, y[0, 0])),
    "view_dtype": lambda t, x, y: x.view(t.int64) & 255,
    "solve_triangular": lambda t, x, y: t.linalg.solve_triangular(x[:3, :3].triu() + 4 * t.eye(3, dtype=x.dtype),
                                                                  y[:3], upper=True),
    "lu_factor": lambda t, x, y: t.linalg.lu_factor(x[:3, :3])[0], "eigvals": lambda t, x, y: t.linalg.eigvals(
        x[:3, :3] + x[:3, :3].T).real.sort().values,
    "trace": lambda t, x, y: t.trace(x), "fliplr": lambda t, x, y: t.fliplr(x), "flipud": lambda t, x, y: t.flipud(x),
    "msort": lambda t, x, y: t.msort(x), "repeat": lambda t, x, y: x.repeat(2, 1, 3),
    "tile": lambda t, x, y: t.tile(x, (2,)), "rot90": lambda t, x, y: t.rot90(x, 3),
    "diag_embed": lambda t, x, y: t.diag_embed(x, 1, 0, 2),
}


@pytest.mark.parametrize("name", list(_MORE))
def test_vmap_more_ops_have_rules(name):
    f = _MORE[name]
    x = torch.randn(5, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.randn(5, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    for in_dims in ((0, 0), (0, None), (None, 0)):
        _batched.fallback_counts.clear()
        yy = y if in_dims[1] == 0 else y[0]
        xx = x if in_dims[0] == 0 else x[0]
        got = ember.vmap(lambda a, b: f(ember, a, b), in_dims=in_dims)(E(xx), E(yy))
        exp = torch.vmap(lambda a, b: f(torch, a, b), in_dims=in_dims)(xx, yy)
        tol = 1e-5 if name.startswith("bessel") else 1e-9  # torch's J/Y are good to ~1e-6 only
        close(tuple(got) if isinstance(got, tuple) else got, tuple(exp) if isinstance(exp, tuple) else exp,
              rtol=tol, atol=tol)
        assert _batched.fallback_counts == {}, f"{name} used the fallback: {_batched.fallback_counts}"


@pytest.mark.parametrize("f", [lambda t, a: t.stack(t.where(a > 0)), lambda t, a: t.nonzero(a),
                               lambda t, a: t.unique(a), lambda t, a: a.unique(return_counts=True)[1],
                               lambda t, a: t.masked_select(a, a > 0)])
def test_vmap_dynamic_shape_ops_raise_as_torch(f):
    x = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="vmap: ") as te:
        torch.vmap(lambda a: f(torch, a))(x)
    with pytest.raises(RuntimeError, match="vmap: ") as ee:
        ember.vmap(lambda a: f(ember, a))(E(x))
    assert str(ee.value).split(" Attempted")[0] == str(te.value).split(" Attempted")[0]


def test_vmap_masked_select_with_an_unbatched_mask():
    x = torch.randn(3, 4, dtype=torch.float64)
    mask = torch.tensor([True, False, True, True])
    exp = torch.vmap(lambda a: torch.masked_select(a, mask))(x)
    got = ember.vmap(lambda a: ember.masked_select(a, E(mask)))(E(x))
    assert got.tolist() == exp.tolist()


_MORE2 = {
    "sum_0d": lambda t, x, y: x[0, 0].sum(0), "mean_0d_keep": lambda t, x, y: x[0, 0].mean(-1, keepdim=True),
    "amax_0d": lambda t, x, y: x[0, 0].amax(), "max_0d_dim": lambda t, x, y: x[0, 0].max(0)[0],
    "aminmax": lambda t, x, y: t.aminmax(x), "aminmax_dim": lambda t, x, y: t.aminmax(x, dim=1, keepdim=True),
    "aminmax_keep": lambda t, x, y: t.aminmax(x, keepdim=True),
    "vector_norm": lambda t, x, y: t.linalg.vector_norm(x, 3, dim=1),
    "matrix_norm": lambda t, x, y: t.linalg.matrix_norm(x),
    "hstack": lambda t, x, y: t.hstack([x, y[0, :1].expand(3, 1)]), "vstack": lambda t, x, y: t.vstack([x, y[0]]),
    "dstack": lambda t, x, y: t.dstack([x, y]), "column_stack": lambda t, x, y: t.column_stack([x[:, 0], y]),
    "row_stack": lambda t, x, y: t.row_stack([x[0], y]), "hstack_1d": lambda t, x, y: t.hstack([x[0], y[1]]),
    "addmm": lambda t, x, y: t.addmm(x[:, 0], x, y.T, beta=0.5, alpha=2.0),
    "addmm_beta0": lambda t, x, y: t.addmm(x[:, :3] * float("nan"), x, y.T, beta=0),
    "addmv": lambda t, x, y: t.addmv(y[:, 0], x, y[0]), "baddbmm": lambda t, x, y: t.baddbmm(
        x[:1, :1], x.reshape(2, 3, 2), y.reshape(2, 2, 3)),
    "addbmm": lambda t, x, y: t.addbmm(x[:1, :1], x.reshape(2, 3, 2), y.reshape(2, 2, 3), alpha=3),
    "cross": lambda t, x, y: t.linalg.cross(x[:, :3], y[:, 1:]), "cross_dim0": lambda t, x, y: t.linalg.cross(
        x[:, :3], y[0, :3].unsqueeze(1).expand(3, 3), dim=0),
    "diag_vec": lambda t, x, y: t.diag(x[0], 1), "diag_mat": lambda t, x, y: t.diag(x, -1),
    "quantile": lambda t, x, y: t.quantile(x, 0.3), "quantile_dim": lambda t, x, y: t.quantile(x, 0.7, dim=1),
    "quantile_q": lambda t, x, y: t.quantile(x, t.tensor([0.2, 0.9], dtype=x.dtype), dim=0, keepdim=True),
    "quantile_q_all_keep": lambda t, x, y: t.quantile(x, t.tensor([0.2, 0.9], dtype=x.dtype), keepdim=True),
    "nanquantile": lambda t, x, y: t.nanquantile(x, 0.5, dim=-1),
    "index_add": lambda t, x, y: t.index_add(x, 1, t.tensor([0, 2]), y[:, :2], alpha=2),
    "index_copy": lambda t, x, y: t.index_copy(x, 0, t.tensor([2, 0]), y[:2]),
    "index_fill": lambda t, x, y: t.index_fill(x, 1, t.tensor([1, 3]), -1.0),
    "atleast_1d": lambda t, x, y: t.atleast_1d(x[0, 0]) + y[0, :1], "atleast_2d": lambda t, x, y: t.atleast_2d(x[0]),
    "atleast_2d_0d": lambda t, x, y: t.atleast_2d(x[0, 0]), "atleast_3d": lambda t, x, y: t.atleast_3d(x),
    "atleast_3d_1d": lambda t, x, y: t.atleast_3d(x[1]), "atleast_2d_same": lambda t, x, y: t.atleast_2d(x),
    "meshgrid_ij": lambda t, x, y: t.meshgrid(x[0], y[1, :3], indexing="ij"),
    "meshgrid_xy": lambda t, x, y: t.meshgrid(x[0], y[1, :3], x[2, :2], indexing="xy"),
    "cartesian_prod": lambda t, x, y: t.cartesian_prod(x[0], y[1, :3]),
    "solve": lambda t, x, y: t.linalg.solve(x[:, :3] + 3 * t.eye(3, dtype=x.dtype), y),
    "solve_vec": lambda t, x, y: t.linalg.solve(x[:, :3] + 3 * t.eye(3, dtype=x.dtype), y[:, 0]),
    "solve_batch_vec": lambda t, x, y: t.linalg.solve(x[:, :3].reshape(1, 3, 3) + 3 * t.eye(3, dtype=x.dtype),
                                                      y[:1, :3]),
    "geqrf": lambda t, x, y: t.geqrf(x)[0].abs(),
    "householder_product": lambda t, x, y: t.linalg.householder_product(x.T[:, :3], y[0, :2]),
    "lu_solve": lambda t, x, y: t.linalg.lu_solve(*t.linalg.lu_factor(x[:, :3] + 3 * t.eye(3, dtype=x.dtype)), y),
    "repeat_interleave": lambda t, x, y: x.repeat_interleave(2), "repeat_interleave_dim": lambda t, x, y:
        t.repeat_interleave(x, t.tensor([1, 0, 2]), dim=0),
    "repeat_interleave_size": lambda t, x, y: x.repeat_interleave(3, dim=-1, output_size=12),
    "take": lambda t, x, y: t.take(x, t.tensor([[0, -1], [5, 11]])),
    "take_batched_index": lambda t, x, y: t.take(x, (y.abs() * 3).long().clamp(max=11)),
    "tensordot": lambda t, x, y: t.tensordot(x, y, dims=([1], [1])), "tensordot_int": lambda t, x, y:
        t.tensordot(x, y.T, 1), "tensordot_2": lambda t, x, y: t.tensordot(x, y),
    "bucketize": lambda t, x, y: t.bucketize(x, t.tensor([-1.0, 0.0, 0.5]), right=True),
    "searchsorted": lambda t, x, y: t.searchsorted(t.tensor([-1.0, 0.0, 0.5]), y),
    "searchsorted_seq": lambda t, x, y: t.searchsorted(x[0].sort().values, y[1], side="right"),
    "linalg_norm": lambda t, x, y: t.linalg.norm(x), "linalg_norm_ord": lambda t, x, y: t.linalg.norm(x, 1),
    "linalg_norm_vec": lambda t, x, y: t.linalg.norm(x[0], 3), "linalg_norm_dim": lambda t, x, y: t.linalg.norm(
        x, float("inf"), dim=1, keepdim=True), "linalg_norm_keep": lambda t, x, y: t.linalg.norm(x, keepdim=True),
}


# torch.vmap differs from its own per-sample results here (aminmax(keepdim=True) without dim keeps one dim,
# addmm with beta=0 propagates input's nan) and has no rule for column_stack: checked against the loop
_LOOP_ONLY = {"aminmax_keep", "addmm_beta0", "column_stack"}


@pytest.mark.parametrize("name", list(_MORE2))
def test_vmap_more_families_have_rules(name):
    f = _MORE2[name]
    x = torch.randn(5, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.randn(5, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    for in_dims in ((0, 0), (0, None), (None, 0), (1, 2)):
        xx = x if in_dims[0] is not None else x[0]
        yy = y if in_dims[1] is not None else y[0]
        if in_dims == (1, 2):  # batch dims elsewhere than first
            xx, yy = x.movedim(0, 1), y.movedim(0, 2)
        _batched.fallback_counts.clear()
        got = ember.vmap(lambda a, b: f(ember, a, b), in_dims=in_dims)(E(xx), E(yy))
        if name in _LOOP_ONLY:
            outs = [f(torch, xx.select(in_dims[0], i) if in_dims[0] is not None else xx,
                      yy.select(in_dims[1], i) if in_dims[1] is not None else yy) for i in range(5)]
            exp = tuple(torch.stack(c) for c in zip(*outs)) if isinstance(outs[0], tuple) else torch.stack(outs)
        else:
            exp = torch.vmap(lambda a, b: f(torch, a, b), in_dims=in_dims)(xx, yy)
        close(tuple(got) if isinstance(got, tuple) else got, tuple(exp) if isinstance(exp, tuple) else exp,
              rtol=1e-9, atol=1e-9)
        assert _batched.fallback_counts == {}, f"{name} {in_dims} used the fallback: {_batched.fallback_counts}"
