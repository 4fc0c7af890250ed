"""Random number generation: seeding and state, shapes/dtypes against torch, distribution
statistics with fixed seeds, and errors of the same types torch raises.

Ember's generator is Philox4x32-10 and torch's CPU generator is mt19937, so values differ from
torch's; torch is the reference for shapes, dtypes and errors, and the statistics are checked
against the distributions themselves.
"""

import copy
import math
import pickle
import statistics

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def gen(seed=0):
    return ember.Generator().manual_seed(seed)


def values(t):
    return np.array(t.tolist(), dtype=np.float64)


def from_list(vals, dtype=ember.float32):
    t = ember.empty(len(vals), dtype=dtype)
    for i, v in enumerate(vals):
        t[i] = v
    return t


def tname(dtype):
    return str(dtype).split(".")[-1]


# ---- reproducibility and state ------------------------------------------------------------

DRAWS = {
    "rand": lambda g: ember.rand(5, 7, generator=g),
    "randn": lambda g: ember.randn(300, generator=g),
    "randn_f64": lambda g: ember.randn(33, dtype=ember.float64, generator=g),
    "randint": lambda g: ember.randint(-3, 1000, (50,), generator=g),
    "randperm": lambda g: ember.randperm(40, generator=g),
    "normal": lambda g: ember.normal(2.0, 3.0, (20,), generator=g),
    "bernoulli": lambda g: ember.bernoulli(ember.full((64,), 0.3), generator=g),
    "multinomial": lambda g: ember.multinomial(ember.ones(3, 10), 4, generator=g),
    "uniform_": lambda g: ember.empty(9).uniform_(-2, 2, generator=g),
    "exponential_": lambda g: ember.empty(9).exponential_(2.0, generator=g),
    "random_": lambda g: ember.empty(9, dtype=ember.int64).random_(generator=g),
    "_standard_gamma": lambda g: ember._standard_gamma(ember.full((40,), 0.7), generator=g),
    "binomial": lambda g: ember.binomial(ember.full((40,), 30.0), ember.full((40,), 0.4), generator=g),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_manual_seed_reproduces_every_op(name):
    draw = DRAWS[name]
    ember.manual_seed(1234)
    a = draw(None).tolist()
    b = draw(None).tolist()
    ember.manual_seed(1234)
    assert draw(None).tolist() == a
    assert draw(None).tolist() == b
    assert a != b, "consecutive draws differ"
    assert draw(gen(1234)).tolist() == a, "an explicit generator with the same seed gives the same stream"


def test_different_seeds_differ():
    assert ember.rand(10, generator=gen(1)).tolist() != ember.rand(10, generator=gen(2)).tolist()


def test_generator_is_independent_of_the_global_one():
    ember.manual_seed(7)
    expected_global = ember.rand(6).tolist()
    g = gen(99)
    expected_g = ember.rand(6, generator=g).tolist()

    ember.manual_seed(7)
    g = gen(99)
    ember.randn(100)  # advancing the global generator does not move g
    assert ember.rand(6, generator=g).tolist() == expected_g
    ember.manual_seed(7)
    ember.randn(100, generator=g)  # drawing from g does not move the global generator
    assert ember.rand(6).tolist() == expected_global


def test_rng_state_save_restore():
    ember.manual_seed(3)
    ember.rand(4)
    state = ember.get_rng_state()
    assert state.dtype == ember.uint8 and state.dim() == 1
    a = ember.randn(50).tolist()
    b = ember.randint(0, 10, (5,)).tolist()
    ember.set_rng_state(state)
    assert ember.randn(50).tolist() == a
    assert ember.randint(0, 10, (5,)).tolist() == b
    assert ember.random.get_rng_state is ember.get_rng_state


def test_generator_state_and_clone():
    g = gen(11)
    ember.rand(3, generator=g)
    state = g.get_state()
    a = ember.rand(8, generator=g).tolist()
    assert g.set_state(state) is g
    assert ember.rand(8, generator=g).tolist() == a

    other = ember.Generator()
    other.set_state(state)  # the state carries the seed too
    assert other.initial_seed() == 11
    assert ember.rand(8, generator=other).tolist() == a

    g.set_state(state)
    c = g.clone_state()
    assert ember.rand(8, generator=c).tolist() == a
    assert ember.rand(8, generator=g).tolist() == a

    g.set_state(state)
    for dup in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert dup.initial_seed() == 11
        assert ember.rand(8, generator=dup).tolist() == a


def test_generator_offset_counts_blocks():
    g = gen(5)
    assert g.get_offset() == 0
    a = ember.rand(8, generator=g).tolist()
    assert g.get_offset() > 0
    g.set_offset(0)
    assert ember.rand(8, generator=g).tolist() == a


def test_seed_functions_match_torch_semantics():
    g = ember.manual_seed(42)
    assert g is ember.default_generator
    assert ember.initial_seed() == 42
    assert ember.Generator().initial_seed() == torch.Generator().initial_seed()
    for seed in (-1, -5, 2**63, 2**64 - 1, 1.5, True):
        assert ember.manual_seed(seed).initial_seed() == torch.manual_seed(seed).initial_seed()
    for seed in (-1, -5, 2**63, 2**64 - 1):
        assert ember.Generator().manual_seed(seed).initial_seed() == torch.Generator().manual_seed(seed).initial_seed()
    for seed in (1.5, True):  # Generator.manual_seed takes ints only, as torch's
        with pytest.raises(RuntimeError):
            torch.Generator().manual_seed(seed)
        with pytest.raises(RuntimeError):
            ember.Generator().manual_seed(seed)
    s = ember.seed()
    assert isinstance(s, int) and ember.initial_seed() == s
    g2 = ember.Generator()
    assert g2.seed() != ember.Generator().seed()  # non-deterministic
    assert g2.device == ember.device("cpu") and str(ember.Generator("cpu").device) == "cpu"
    ember.manual_seed(0)


def test_random_module_mirrors_torch_random():
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"):
        assert hasattr(torch.random, name) and hasattr(ember.random, name)
    ember.random.manual_seed(8)
    assert ember.random.initial_seed() == 8
    before = ember.get_rng_state().tolist()
    with ember.random.fork_rng():
        ember.rand(100)
    assert ember.get_rng_state().tolist() == before


def test_thread_count_does_not_change_values():
    n_threads = ember.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            ember.set_num_threads(n)
            g = gen(77)
            out.append((ember.randn(100_001, generator=g).tolist(), ember.rand(70_001, generator=g).tolist()))
        assert out[0] == out[1]
    finally:
        ember.set_num_threads(n_threads)


def test_prefix_property():
    # An element depends only on its index in the op's stream.
    assert ember.randn(1000, generator=gen(4)).tolist()[:301] == ember.randn(301, generator=gen(4)).tolist()
    assert ember.rand(1000, generator=gen(4)).tolist()[:5] == ember.rand(5, generator=gen(4)).tolist()


# ---- shapes, dtypes and devices against torch -------------------------------------------

FACTORIES = [
    "M.rand(2, 3)", "M.rand((2, 3))", "M.rand([4])", "M.rand(size=(2, 3))", "M.rand(())", "M.rand(0, 3)",
    "M.rand(2, dtype=M.float64)", "M.rand(2, dtype=M.float16)", "M.rand(2, dtype=M.bfloat16)",
    "M.rand(2, device='cpu')", "M.randn(3, 1, 2)", "M.randn(2, dtype=M.float64)", "M.randn(5, dtype=M.bfloat16)",
    "M.randn(4, dtype=M.float16)", "M.randint(10, (3,))", "M.randint(3, 10, (2, 2))",
    "M.randint(low=3, high=10, size=(3,))", "M.randint(10, size=(3,))", "M.randint(0, 2, (3,), dtype=M.bool)",
    "M.randint(0, 10, (3,), dtype=M.float16)", "M.randint(-5, 5, (4,), dtype=M.int8)",
    "M.randint(0, 255, (4,), dtype=M.uint8)", "M.randint(0, 10, (2,), dtype=M.float64)", "M.randperm(5)",
    "M.randperm(0)", "M.randperm(5, dtype=M.int16)", "M.randperm(5, dtype=M.float16)",
    "M.randperm(6, dtype=M.float32)", "M.normal(0., 1., (3,))", "M.normal(2, 3, (2,))",
    "M.normal(0., 1., size=(2, 2), dtype=M.float64)", "M.normal(M.zeros(3), 1.)", "M.normal(M.zeros(3), M.ones(2, 1))",
    "M.normal(0., M.ones(3, dtype=M.float64))", "M.normal(mean=M.zeros(3))",
    "M.normal(M.zeros(3, dtype=M.float16), M.ones(3, dtype=M.float64))",
    "M.normal(M.zeros(3, dtype=M.float64), M.ones(3, dtype=M.float16))", "M.normal(M.zeros(2, 3), M.ones(3))",
    "M.normal(0., 1., (2,), out=M.empty(5))", "M.rand(2, out=M.empty(5, dtype=M.float64))",
    "M.randint(0, 5, (2,), out=M.empty(5))", "M.bernoulli(M.full((2, 3), 0.5))", "M.bernoulli(M.zeros(3), 0.5)",
    "M.bernoulli(M.zeros(3, dtype=M.int64), 0.5)", "M.bernoulli(M.zeros(3, dtype=M.float16))",
    "M.bernoulli(M.zeros(2), out=M.empty(2))", "M.zeros(3).bernoulli()", "M.zeros(3).bernoulli(0.3)",
    "M.multinomial(M.ones(3), 2)", "M.multinomial(M.ones(2, 3), 2)", "M.multinomial(M.ones(3), 5, True)",
    "M.multinomial(M.ones(3, dtype=M.float16), 2)", "M.multinomial(M.ones(0, 3), 2)", "M.ones(4).multinomial(2)",
    "M.rand_like(M.zeros(2, 3))", "M.rand_like(M.zeros(2, 3, dtype=M.float64))", "M.randn_like(M.zeros(4, 2).t())",
    "M.rand_like(M.zeros(2), dtype=M.float16)", "M.randint_like(M.zeros(2), 10)", "M.randint_like(M.zeros(2), 3, 10)",
    "M.randint_like(M.zeros(2, dtype=M.int8), low=3, high=10)", "M.zeros(2, 3).t().uniform_()",
    "M.zeros(3, dtype=M.float16).normal_()", "M.zeros(3, dtype=M.int32).random_()",
    "M.zeros(3, dtype=M.bool).bernoulli_(0.5)", "M.zeros(3, dtype=M.int64).bernoulli_(0.5)",
    "M.zeros(2, 3).bernoulli_(M.full((3,), 0.5))", "M.zeros(3, dtype=M.int32).geometric_(0.5)",
    "M.zeros(3, dtype=M.bfloat16).exponential_()", "M.zeros(3).cauchy_()", "M.zeros(3).log_normal_()",
]


@pytest.mark.parametrize("expr", FACTORIES)
def test_shape_dtype_device_match_torch(expr):
    e = eval(expr, {"M": ember})
    t = eval(expr, {"M": torch})
    assert tuple(e.shape) == tuple(t.shape)
    assert tname(e.dtype) == tname(t.dtype)
    assert e.device.type == t.device.type
    assert e.stride() == t.stride()


def test_out_and_inplace_return_the_same_object():
    out = ember.empty(7)
    assert ember.rand(2, 3, out=out) is out and tuple(out.shape) == (2, 3)
    x = ember.zeros(4)
    for method, args in (("uniform_", ()), ("normal_", ()), ("bernoulli_", (0.5,)), ("random_", (0, 5)),
                         ("exponential_", ()), ("cauchy_", ()), ("log_normal_", ()), ("geometric_", (0.5,))):
        assert getattr(x, method)(*args) is x, method


def test_requires_grad_makes_leaves():
    for make in (lambda: ember.rand(2, requires_grad=True), lambda: ember.randn(2, requires_grad=True),
                 lambda: ember.normal(0., 1., (2,), requires_grad=True),
                 lambda: ember.rand_like(ember.zeros(2), requires_grad=True)):
        t = make()
        assert t.requires_grad and t.is_leaf
    assert not ember.rand(2, requires_grad=False).requires_grad


# ---- statistics (fixed seeds, bounds several standard errors wide) ----------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_uniform_moments_and_range(dtype):
    n = 100_000
    x = values(ember.rand(n, dtype=getattr(ember, dtype), generator=gen(1)))
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.005  # standard error 0.0009
    assert abs(x.var() - 1 / 12) < 0.003
    hist, _ = np.histogram(x, bins=10, range=(0, 1))
    assert np.all(np.abs(hist / n - 0.1) < 0.01)
    y = values(ember.empty(n, dtype=getattr(ember, dtype)).uniform_(-3, 5, generator=gen(2)))
    assert y.min() >= -3 and y.max() <= 5
    assert abs(y.mean() - 1.0) < 0.05 and abs(y.var() - 64 / 12) < 0.1


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_normal_moments_and_shape(dtype):
    n = 100_000
    z = values(ember.randn(n, dtype=getattr(ember, dtype), generator=gen(3)))
    tol = 0.02 if dtype == "bfloat16" else 0.01
    assert abs(z.mean()) < tol and abs(z.std() - 1) < tol
    assert abs(np.mean(z**3)) < 0.05 and abs(np.mean(z**4) - 3) < 0.1  # skewness, kurtosis
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.01
    assert abs(np.mean(np.abs(z) < 2) - 0.9545) < 0.005
    w = values(ember.normal(2.0, 3.0, (n,), dtype=getattr(ember, dtype), generator=gen(4)))
    assert abs(w.mean() - 2) < 0.05 and abs(w.std() - 3) < 0.05


def test_normal_float32_matches_the_normal_cdf():
    # Kolmogorov-Smirnov distance of 200k float32 normals to the exact CDF, against the bound
    # a true normal sample exceeds with probability 0.001 (1.95 / sqrt(n)).
    n = 200_000
    z = np.sort(values(ember.randn(n, generator=gen(0))))
    cdf = np.array([statistics.NormalDist().cdf(v) for v in z[::20]])
    ecdf = (np.arange(0, n, 20) + 0.5) / n
    assert np.max(np.abs(cdf - ecdf)) < 1.95 / math.sqrt(n)
    assert z.min() < -4 and z.max() > 4  # tails reach out


def test_normal_with_tensor_mean_and_std_broadcasts():
    mean = ember.arange(0, 5, 1, dtype=ember.float32)  # (5,)
    std = ember.full((1000, 1), 0.5)  # (1000, 1)
    x = values(ember.normal(mean, std, generator=gen(6)))
    assert x.shape == (1000, 5)
    assert np.all(np.abs(x.mean(axis=0) - np.arange(5)) < 0.06)
    assert np.all(np.abs(x.std(axis=0) - 0.5) < 0.04)
    y = values(ember.normal(mean, 0.0, generator=gen(6)))
    assert y.tolist() == [0, 1, 2, 3, 4]  # std 0 gives the mean
    z = values(ember.normal(3.0, ember.full((20000,), 2.0), generator=gen(7)))
    assert abs(z.mean() - 3) < 0.05 and abs(z.std() - 2) < 0.05


@pytest.mark.parametrize("lambd", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exponential_moments(lambd, dtype):
    x = values(ember.empty(100_000, dtype=getattr(ember, dtype)).exponential_(lambd, generator=gen(8)))
    assert x.min() >= 0
    assert abs(x.mean() * lambd - 1) < 0.02 and abs(x.var() * lambd**2 - 1) < 0.05
    assert abs(np.mean(x * lambd > 1) - math.exp(-1)) < 0.01


def test_other_continuous_distributions():
    c = values(ember.empty(100_000).cauchy_(1.0, 2.0, generator=gen(9)))
    assert abs(np.median(c) - 1.0) < 0.05
    assert abs(np.mean(np.abs(c - 1.0) < 2.0) - 0.5) < 0.01  # half the mass within one scale
    ln = values(ember.empty(100_000, dtype=ember.float64).log_normal_(0.5, 0.25, generator=gen(10)))
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.005 and abs(np.log(ln).std() - 0.25) < 0.005
    g = values(ember.empty(100_000, dtype=ember.int64).geometric_(0.2, generator=gen(11)))
    assert g.min() >= 1 and abs(g.mean() - 5) < 0.1 and abs(np.mean(g == 1) - 0.2) < 0.01


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_bernoulli_frequency(dtype):
    n = 100_000
    for p in (0.0, 0.1, 0.5, 0.9, 1.0):
        x = values(ember.empty(n, dtype=getattr(ember, dtype)).bernoulli_(p, generator=gen(12)))
        assert set(np.unique(x)) <= {0.0, 1.0}
        assert abs(x.mean() - p) < 0.006
    probs = ember.linspace(0, 1, 11).unsqueeze(0).expand(20000, 11).contiguous()
    x = values(ember.bernoulli(probs, generator=gen(13)))
    assert np.all(np.abs(x.mean(axis=0) - np.linspace(0, 1, 11)) < 0.015)
    y = values(ember.zeros(20000, 11).bernoulli_(ember.linspace(0, 1, 11), generator=gen(14)))
    assert np.all(np.abs(y.mean(axis=0) - np.linspace(0, 1, 11)) < 0.015)


def test_multinomial_with_replacement_frequencies():
    p = np.array([0.1, 0.0, 0.2, 0.3, 0.4])
    probs = from_list([1, 0, 2, 3, 4])  # unnormalized weights
    s = values(ember.multinomial(probs, 100_000, replacement=True, generator=gen(15))).astype(int)
    freq = np.bincount(s, minlength=5) / len(s)
    assert freq[1] == 0, "a zero-weight category is never drawn"
    assert np.all(np.abs(freq - p) < 0.006)
    rows = values(ember.multinomial(_two_rows(probs), 50_000, True, generator=gen(16))).astype(int)
    assert rows.shape == (2, 50_000)
    assert np.all(np.abs(np.bincount(rows[0], minlength=5) / 50_000 - p) < 0.01)
    assert np.all(np.abs(np.bincount(rows[1], minlength=5) / 50_000 - 0.2) < 0.01)


def _two_rows(first):
    t = ember.ones(2, 5)
    t[0] = first
    return t


def test_multinomial_without_replacement():
    s = values(ember.multinomial(ember.ones(200, 10), 10, generator=gen(17))).astype(int)
    assert all(sorted(row) == list(range(10)) for row in s), "every row is a permutation"
    probs = from_list([1, 2, 3, 4])
    first = values(ember.multinomial(probs.unsqueeze(0).expand(40_000, 4).contiguous(), 2,
                                     generator=gen(18))).astype(int)
    assert np.all(first[:, 0] != first[:, 1])
    assert np.all(np.abs(np.bincount(first[:, 0], minlength=4) / 40_000 - np.array([.1, .2, .3, .4])) < 0.01)
    # Second draw given the first is p_j / (1 - p_i): P(second == 0 | first == 3) = 0.1 / 0.6.
    sel = first[first[:, 0] == 3, 1]
    assert abs(np.mean(sel == 0) - 1 / 6) < 0.02
    # Zero-weight categories come only after the positive ones.
    z = values(ember.multinomial(from_list([0, 5, 0, 1]), 4, generator=gen(19))).astype(int)
    assert set(z[:2]) == {1, 3} and set(z[2:]) == {0, 2}


def test_randperm_is_a_permutation():
    for n in (1, 2, 10, 1000, 100_000):
        p = values(ember.randperm(n, generator=gen(n))).astype(np.int64)
        assert np.array_equal(np.sort(p), np.arange(n))
    # Uniform over positions: element 0 lands in each of 5 slots about equally often.
    pos = [ember.randperm(5, generator=gen(1000 + i)).tolist().index(0) for i in range(2000)]
    assert np.all(np.abs(np.bincount(pos, minlength=5) / 2000 - 0.2) < 0.04)
    f = values(ember.randperm(2049, dtype=ember.float16, generator=gen(20)))
    assert np.array_equal(np.sort(f), np.arange(2049))


def test_randint_range_and_uniformity():
    x = values(ember.randint(-3, 7, (100_000,), generator=gen(21))).astype(int)
    assert x.min() == -3 and x.max() == 6
    assert np.all(np.abs(np.bincount(x + 3) / len(x) - 0.1) < 0.006)
    big = values(ember.randint(0, 2**40, (10_000,), generator=gen(22)))
    assert big.min() >= 0 and big.max() < 2**40 and big.max() > 2**39
    huge = ember.randint(-2**62, 2**62, (10_000,), generator=gen(23)).tolist()
    assert min(huge) < -2**61 and max(huge) > 2**61 and all(-2**62 <= v < 2**62 for v in huge)


@pytest.mark.parametrize("dtype,lo,hi", [
    ("bool", 0, 1), ("uint8", 0, 255), ("int8", 0, 127), ("int16", 0, 32767), ("int32", 0, 2**31 - 1),
    ("int64", 0, 2**63 - 1), ("float16", 0, 2**11), ("bfloat16", 0, 2**8), ("float32", 0, 2**24),
    ("float64", 0, 2**53),
])
def test_random_default_ranges_per_dtype(dtype, lo, hi):
    x = ember.empty(50_000, dtype=getattr(ember, dtype)).random_(generator=gen(24)).tolist()
    assert min(x) >= lo and max(x) <= hi
    assert min(x) <= lo + (hi - lo) * 0.01 and max(x) >= hi - (hi - lo) * 0.01, "the whole range is covered"
    assert all(float(v).is_integer() for v in x[:1000])


def test_random_from_to_forms():
    x = ember.empty(20_000, dtype=ember.int8).random_(-5, None, generator=gen(25)).tolist()
    assert min(x) == -5 and max(x) == 127
    y = ember.empty(20_000, dtype=ember.int64).random_(-2**63, None, generator=gen(26)).tolist()
    assert min(y) < -2**62 and max(y) > 2**62
    z = ember.empty(20_000).random_(5, generator=gen(27)).tolist()
    assert set(z) == {0.0, 1.0, 2.0, 3.0, 4.0}
    w = ember.empty(20_000, dtype=ember.int32).random_(2, to=5, generator=gen(28)).tolist()
    assert set(w) == {2, 3, 4}
    v = ember.empty(1000, dtype=ember.uint8).random_(255, None, generator=gen(29)).tolist()
    assert set(v) == {255}


def test_noncontiguous_inplace_fills_only_the_view():
    base = ember.zeros(6, 8)
    view = base[:, ::2]
    view.uniform_(1, 2, generator=gen(30))
    b = values(base)
    assert np.all(b[:, 1::2] == 0) and np.all((b[:, ::2] >= 1) & (b[:, ::2] < 2))
    assert b[:, ::2].tolist() == ember.empty(6, 4).uniform_(1, 2, generator=gen(30)).tolist()
    t = ember.zeros(50, 40).t()
    t.normal_(generator=gen(31))
    assert abs(values(t).mean()) < 0.1 and np.all(values(t) != 0)


def test_version_counter_bumped_by_inplace_ops():
    x = ember.zeros(4)
    v = x._version
    x.uniform_()
    x.bernoulli_(ember.full((4,), 0.5))
    assert x._version >= v + 2


# ---- errors: the exception type torch raises for the same call -----------------------------

ERRORS = [
    "M.randint(5, 5, (3,))", "M.randint(6, 5, (3,))", "M.randint(0, 300, (3,), dtype=M.uint8)",
    "M.randint(-1, 3, (3,), dtype=M.uint8)", "M.randint(0, 3, (3,), dtype=M.bool)", "M.randint(3, 10, 2)",
    "M.randint(0, 2.5, (3,))", "M.rand(2, dtype=M.int64)", "M.randn(2, dtype=M.int32)", "M.rand(2, dtype=M.bool)",
    "M.rand(-1)", "M.rand()", "M.rand(2, generator=3)", "M.randperm(-1)", "M.randperm(300, dtype=M.int8)",
    "M.randperm(257, dtype=M.uint8)", "M.randperm(3000, dtype=M.float16)", "M.randperm(3, dtype=M.bool)",
    "M.normal(0., -1., (3,))", "M.normal(0., float('nan'), (3,))", "M.normal(M.zeros(3), -1.)",
    "M.normal(M.zeros(3), M.full((3,), -1.))", "M.normal(M.zeros(3), M.ones(4))",
    "M.normal(M.zeros(3, dtype=M.int64), 1.)", "M.normal(0., M.ones(3, dtype=M.int64))",
    "M.normal(M.zeros(3), 1., (3,))", "M.normal(0., 1.)", "M.normal(2., 3., size=(2,), dtype=M.int64)",
    "M.zeros(3).normal_(0, -1)", "M.zeros(3, dtype=M.int64).normal_()", "M.zeros(3).uniform_(2, 1)",
    "M.zeros(3).uniform_(-3e38, 3e38)", "M.zeros(3).uniform_(0, float('inf'))", "M.zeros(3).uniform_(float('nan'), 1)",
    "M.zeros(3, dtype=M.int32).uniform_()", "M.zeros(3).exponential_(0)", "M.zeros(3).exponential_(-1)",
    "M.zeros(3, dtype=M.int64).exponential_()", "M.bernoulli(M.full((2,), 1.5))", "M.bernoulli(M.full((2,), -0.5))",
    "M.bernoulli(M.full((2,), float('nan')))", "M.bernoulli(M.zeros(2, dtype=M.int64))",
    "M.bernoulli(M.zeros(2, dtype=M.bool))", "M.bernoulli(M.zeros(3), 1.5)", "M.zeros(3).bernoulli_(1.5)",
    "M.zeros(3).bernoulli_(-0.1)", "M.zeros(3).bernoulli_(M.full((3,), 2.))", "M.zeros(3).bernoulli_(M.ones(2, 3))",
    "M.zeros(3).bernoulli_(M.ones(3, dtype=M.int64))", "M.multinomial(M.ones(2), 3)",
    "M.multinomial(M.full((2,), -0.5), 1)", "M.multinomial(M.zeros(2), 1)", "M.multinomial(M.ones(3), 0)",
    "M.multinomial(M.ones(3), -1)", "M.multinomial(M.full((2,), float('inf')), 1)",
    "M.multinomial(M.full((2,), float('nan')), 1)", "M.multinomial(M.ones(()), 1)", "M.multinomial(M.ones(2, 2, 2), 1)",
    "M.multinomial(M.ones(3, dtype=M.int64), 1)", "M.multinomial(M.ones(2, 0), 2)", "M.multinomial(M.zeros(2, 2), 1)",
    "M.multinomial(M.ones(2**24 + 1), 1)", "M.zeros(3, dtype=M.int8).random_(0, 300)",
    "M.zeros(3, dtype=M.int8).random_(-300, 3)", "M.zeros(3, dtype=M.int8).random_(0)",
    "M.zeros(3, dtype=M.int8).random_(-1)", "M.zeros(3, dtype=M.bool).random_(0, 3)",
    "M.zeros(3, dtype=M.float16).random_(0, 70000)", "M.zeros(2).random_(2**24 + 5, None)",
    "M.zeros(3, dtype=M.uint8).random_(256, None)", "M.zeros(3).random_(from_=2)",
    "M.zeros(2).cauchy_(0, 0)", "M.zeros(2, dtype=M.int32).cauchy_()", "M.zeros(2).log_normal_(1, 0)",
    "M.zeros(2, dtype=M.int32).log_normal_()", "M.zeros(2).geometric_(0)", "M.zeros(2).geometric_(1)",
    "M.zeros(2).geometric_(1.5)", "M.zeros(2, dtype=M.bool).geometric_(0.5)",
    "M.rand_like(M.zeros(2, dtype=M.int64))", "M.randint_like(M.zeros(2, dtype=M.int8), 300)",
    "M.randint(3, (2,), requires_grad=True)", "M.randperm(4, requires_grad=True)",
    "M.manual_seed(2**64)", "M.manual_seed(-2**63 - 1)", "M.manual_seed('a')",
    "M.Generator().set_state(M.zeros(3, dtype=M.uint8))", "M.Generator().set_state(M.zeros(16, dtype=M.int64))",
    "M.Generator().set_state([1, 2])", "M.set_rng_state(M.zeros(3, dtype=M.uint8))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch_exception_types(expr):
    with pytest.raises(Exception) as expected:
        eval(expr, {"M": torch})
    with pytest.raises(expected.type):
        eval(expr, {"M": ember})


def test_randint_error_message_matches_torch():
    with pytest.raises(RuntimeError, match=r"random_ expects 'from' to be less than 'to', but got from=5 >= to=5"):
        ember.randint(5, 5, (3,))
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        ember.normal(0., -1., (3,))
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"):
        ember.zeros(3).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        ember.multinomial(ember.ones(2), 3)


def test_cuda_is_refused():
    with pytest.raises(NotImplementedError):
        ember.rand(2, device="cuda")
    with pytest.raises(NotImplementedError):
        ember.Generator("cuda")


@pytest.mark.parametrize("rate", [0.0, 0.5, 3.0, 9.5, 10.0, 40.0, 1000.0])
def test_poisson_moments_and_reproducibility(rate):
    g = ember.Generator().manual_seed(7)
    n = 20000
    x = ember.poisson(ember.full((n,), rate, dtype=ember.float64), generator=g)
    assert x.dtype == ember.float64 and tuple(x.shape) == (n,)
    mean = x.mean().item()
    var = ((x - mean) * (x - mean)).mean().item()
    se = (rate / n) ** 0.5 if rate else 0
    assert abs(mean - rate) <= 5 * se + 1e-12
    assert abs(var - rate) <= 0.1 * rate + 1e-12
    assert (x == x.round()).sum().item() == n and (x >= 0).sum().item() == n
    g2 = ember.Generator().manual_seed(7)
    assert ember.poisson(ember.full((n,), rate, dtype=ember.float64), generator=g2).tolist() == x.tolist()


def test_poisson_errors_match_torch():
    import torch
    for bad in ([-1.0], [float("nan")]):
        with pytest.raises(RuntimeError):
            torch.poisson(torch.tensor(bad))
        with pytest.raises(RuntimeError):
            ember.poisson(ember.tensor(bad))
    r = ember.ones(3, requires_grad=True)
    y = ember.poisson(r)
    assert y.requires_grad and y.grad_fn.name() == "PoissonBackward0"
    y.sum().backward()
    assert r.grad.tolist() == [0.0, 0.0, 0.0]
