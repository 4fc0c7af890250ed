"""ember.tensor / as_tensor / asarray, Tensor.new_*, and *_like, checked against PyTorch.

Every case is written once with ``M`` standing for the module, then run with ``M = torch`` and
``M = ember``: both must give the same dtype, shape, strides and values, or raise the same
exception type (and, where PyTorch's wording is well known, the same message).
"""

import math
import warnings

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
import ember  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _dtype_name(dt):
    return str(dt).split(".")[-1]


def _values(t):
    """tolist() with NaN made comparable."""

    def fix(v):
        if isinstance(v, list):
            return [fix(x) for x in v]
        return "nan" if isinstance(v, float) and math.isnan(v) else v

    return fix(t.tolist())


def _run(expr, mod, env=None):
    scope = {"M": mod, "np": np, "math": math}
    scope.update(env or {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(expr, scope), None
        except Exception as e:  # noqa: BLE001  (the type is what we compare)
            return None, e


def assert_same(expr, env=None, strides=True, message=False):
    """Runs `expr` with torch and with ember and compares the results."""
    tr, te = _run(expr, torch, env)
    er, ee = _run(expr, ember, env)
    if te is not None:
        assert ee is not None, f"{expr}: torch raised {type(te).__name__}({te}), ember returned {er!r}"
        assert type(ee) is type(te), f"{expr}: torch raised {type(te).__name__}({te}), ember {type(ee).__name__}({ee})"
        if message:
            assert str(ee) == str(te), f"{expr}: messages differ:\n torch: {te}\n ember: {ee}"
        return
    assert ee is None, f"{expr}: torch returned {tr!r}, ember raised {type(ee).__name__}({ee})"
    if isinstance(tr, torch.Tensor):
        assert isinstance(er, ember.Tensor), expr
        assert _dtype_name(er.dtype) == _dtype_name(tr.dtype), f"{expr}: dtype {er.dtype} vs {tr.dtype}"
        assert tuple(er.shape) == tuple(tr.shape), f"{expr}: shape {tuple(er.shape)} vs {tuple(tr.shape)}"
        if strides:
            assert er.stride() == tr.stride(), f"{expr}: strides {er.stride()} vs {tr.stride()}"
        assert _values(er) == _values(tr), f"{expr}: values {er.tolist()} vs {tr.tolist()}"
    elif isinstance(tr, torch.dtype):
        assert _dtype_name(er) == _dtype_name(tr), f"{expr}: {er!r} vs {tr!r}"
    else:
        assert er == tr, f"{expr}: {er!r} vs {tr!r}"


# ---- ember.tensor: inference from Python data ----
INFERENCE = [
    "M.tensor(1)", "M.tensor(-2**63)", "M.tensor(2.5)", "M.tensor(True)", "M.tensor(False)",
    "M.tensor([])", "M.tensor([[]])", "M.tensor([[], []])", "M.tensor([[[]]])", "M.tensor([[], [1]])",
    "M.tensor([1, 2, 3])", "M.tensor([1., 2, 3])", "M.tensor([True, False])", "M.tensor([True, 1])",
    "M.tensor([True, 1.5])", "M.tensor([1.5, True, 2])", "M.tensor((1, 2))", "M.tensor([[1, 2], (3, 4)])",
    "M.tensor([[1., 2.], [3., 4.]])", "M.tensor([[[1], [2]], [[3], [4]]])", "M.tensor(range(5))",
    "M.tensor(range(0))", "M.tensor([range(2), range(2)])", "M.tensor(bytearray(b'ab'))",
    "M.tensor(memoryview(b'ab'))", "M.tensor([2**40 + 1, 1.5])", "M.tensor([1.5, 2**70])", "M.tensor([1e300])",
    "M.tensor([float('nan'), float('inf'), -float('inf'), -0.0])", "M.tensor([2**63 - 1, -2**63])",
    "M.tensor([[0.1, 0.2, 0.3]] * 4)",
    "M.tensor([0, 1, -1, 2**30 - 1, 2**30, -2**30, -2**30 - 1, 2**31, 2**60, -2**62, 2**63 - 1])",
    # NumPy scalars keep their dtype, and promote with Python numbers as tensors do
    "M.tensor(np.float32(1.5))", "M.tensor(np.float64(1.5))", "M.tensor(np.float16(1.5))", "M.tensor(np.int8(3))",
    "M.tensor(np.int16(3))", "M.tensor(np.int32(3))", "M.tensor(np.int64(3))", "M.tensor(np.uint8(200))",
    "M.tensor(np.bool_(True))", "M.tensor([np.float32(1), 2.5])", "M.tensor([np.int32(1), 2])",
    "M.tensor([np.float16(1), 1])", "M.tensor([np.uint8(200), np.int8(1)])", "M.tensor([np.float16(1), np.int64(1)])",
    "M.tensor([True, np.int8(1)])", "M.tensor([True, np.int8(1), 300])", "M.tensor([1.5, np.float64(2)])",
    "M.tensor([np.float32(0.1), np.float64(0.1)])", "M.tensor([0.1, np.float64(0.1)])", "M.tensor([[np.float64(1)]])",
    "M.tensor([np.float32(1), 2**40 + 1])",
    # tensors inside the data
    "M.tensor([M.tensor(1), M.tensor(2.)])", "M.tensor([M.tensor(1, dtype=M.int8), 1])",
    "M.tensor([M.tensor(1, dtype=M.int8), M.tensor(2, dtype=M.int16)])", "M.tensor([M.tensor([1])])",
    "M.tensor([M.tensor(1.5)])", "M.tensor([M.tensor([[1.5]])])", "M.tensor([M.tensor(True), 2.5])",
    "M.tensor([[1.], M.tensor([2.])])", "M.tensor([M.tensor(1., dtype=M.float16), 2])",
    # arrays inside the data
    "M.tensor([np.array([1, 2], dtype=np.int16), np.array([3, 4], dtype=np.int16)])",
    "M.tensor([np.array([1., 2.], dtype=np.float32), [3, 4]])",
]


@pytest.mark.parametrize("expr", INFERENCE)
def test_tensor_inference(expr):
    assert_same(expr)


def test_default_dtype_drives_float_inference():
    for mod in (torch, ember):
        mod.set_default_dtype(mod.float64)
    try:
        for expr in ["M.tensor(1.5)", "M.tensor([1, 2.5])", "M.tensor([])", "M.tensor([np.float32(1), 2.5])",
                     "M.tensor([[1, 2], [3, 4]])", "M.tensor([True, 0.5])"]:
            assert_same(expr)
    finally:
        for mod in (torch, ember):
            mod.set_default_dtype(mod.float32)


# ---- ember.tensor with dtype= ----
DTYPE_DATA = ["[[1, 2], [3, 4]]", "[1.5, -2.7, 0.0]", "[True, False]", "[0, 1, -1, 127]", "2.5", "7", "[[]]",
              "[np.float64(1.5), 2]", "[1e40, -1e40, 65520.0]", "[2**62, 3]", "[0.5, float('nan')]", "[-1, -255]"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("data", DTYPE_DATA)
def test_tensor_with_dtype(data, dtype):
    assert_same(f"M.tensor({data}, dtype=M.{dtype})")


OVERFLOW = [
    "M.tensor([300], dtype=M.uint8)", "M.tensor([-256], dtype=M.uint8)", "M.tensor([256.0], dtype=M.uint8)",
    "M.tensor([-0.5], dtype=M.uint8)", "M.tensor([255.9], dtype=M.uint8)", "M.tensor([129], dtype=M.int8)",
    "M.tensor([127.9], dtype=M.int8)", "M.tensor([-128.9], dtype=M.int8)", "M.tensor([40000], dtype=M.int16)",
    "M.tensor([2**31], dtype=M.int32)", "M.tensor([3e9], dtype=M.int32)", "M.tensor([float('nan')], dtype=M.int32)",
    "M.tensor([float('inf')], dtype=M.int64)", "M.tensor([1e19], dtype=M.int64)",
    "M.tensor([np.int64(300)], dtype=M.uint8)", "M.tensor(np.int64(300), dtype=M.uint8)",
    "M.tensor(300, dtype=M.uint8)", "M.tensor(300.0, dtype=M.int8)", "M.tensor([M.tensor(300)], dtype=M.uint8)",
    "M.tensor([1, np.float64(2**70)], dtype=M.int64)",
]


@pytest.mark.parametrize("expr", OVERFLOW)
def test_tensor_range_checks(expr):
    assert_same(expr, message=True)


def test_python_int_overflow():
    for expr in ["M.tensor([1, 2**63])", "M.tensor([2**64])", "M.tensor(2**63)", "M.tensor([[1], [-2**63 - 1]])"]:
        assert_same(expr, message=True)
    with pytest.raises(ValueError, match="Overflow when unpacking long"):
        ember.tensor([[0, 1], [2, 10**30]])


ERRORS = [
    # ragged data, as PyTorch words it
    "M.tensor([[1, 2], [3]])", "M.tensor([[1, 2], [3, 4, 5]])", "M.tensor([[1], []])",
    "M.tensor([[[1, 2], [3, 4]], [[5, 6], [7]]])", "M.tensor([[1, 2], 3])", "M.tensor([[1., 2], 3.])",
    "M.tensor([1, [2, 3]])", "M.tensor([1., [2, 3]])",
    "M.tensor([M.tensor([1., 2.])])", "M.tensor([M.tensor([1, 2]), M.tensor([3, 4])])",
    "M.tensor([M.tensor(1.5)], dtype=M.int64)",
    "M.tensor([np.array(1.5)])", "M.tensor([np.float32(1.5)], dtype=M.int64)",
    # data that is not numbers
    "M.tensor(None)", "M.tensor([None])", "M.tensor('ab')", "M.tensor(b'ab')", "M.tensor(['a'])", "M.tensor([1, 'a'])",
    "M.tensor([b'ab'])", "M.tensor([[1, 2], 'ab'])", "M.tensor([[1, 2], 'ab'], dtype=M.float32)",
    "M.tensor({1})", "M.tensor({1: 2})", "M.tensor(object())", "M.tensor([None], dtype=M.float32)",
    "M.tensor(None, dtype=M.int64)",
    # arguments
    "M.tensor([1, 2], requires_grad=True)", "M.tensor([1, 2], pin_memory=True)", "M.tensor([1], M.int32)",
    "M.tensor(np.arange(6)[::-2])", "M.tensor(np.ones(3, dtype='>f4'))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_tensor_errors(expr):
    assert_same(expr, message=not any(s in expr for s in ("object()", "M.int32)", "pin_memory")))


def test_unsupported_numpy_dtypes_in_tensor():
    for kind in ("object", "U1", "M8[D]", "longdouble", "V4"):
        assert_same(f"M.tensor(np.zeros(2, dtype={kind!r}))")
    with pytest.raises(TypeError, match=r"can't convert np.ndarray of type numpy.object_\. The only supported"):
        ember.tensor(np.array([1, "a"], dtype=object))


# ---- ember.tensor from arrays and tensors: always a copy, layout as PyTorch's clone ----
ARRAYS = [
    "np.arange(6.).reshape(2, 3)", "np.arange(6, dtype=np.float32).reshape(2, 3).T", "np.ones((2, 3), np.float32)[:, ::2]",
    "np.broadcast_to(np.arange(3.), (2, 3))", "np.zeros((2, 0, 3))", "np.ones((0, 3))", "np.array(1.5)",
    "np.array(True)", "np.arange(24, dtype=np.int16).reshape(2, 3, 4).transpose(1, 0, 2)",
    "np.ones((4, 1)).T", "np.ones((3, 4), order='F')[1:, :]",
] + [f"np.arange(6).astype({d!r}).reshape(3, 2)" for d in
     ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")]


@pytest.mark.parametrize("arr", ARRAYS)
def test_tensor_from_array_copies(arr):
    assert_same(f"M.tensor({arr})")
    assert_same(f"M.tensor({arr}, dtype=M.float64)")
    a = eval(arr)
    t = ember.tensor(a)
    if a.size:
        assert t.data_ptr() != a.ctypes.data


@pytest.mark.parametrize("src", ["M.arange(6.).reshape(2, 3)", "M.arange(6.).reshape(2, 3).t()",
                                 "M.arange(12).reshape(3, 4)[:, ::2]", "M.ones(3).expand(2, 3)",
                                 "M.empty_strided((2, 0, 3), (5, 7, 1))", "M.tensor(2.5)"])
@pytest.mark.parametrize("dtype", [None, "int32", "float16"])
def test_tensor_from_tensor_copies(src, dtype):
    kw = "" if dtype is None else f", dtype=M.{dtype}"
    assert_same(f"M.tensor({src}{kw})", message=False)
    t = eval(src, {"M": ember})
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        c = ember.tensor(t)
    if t.numel():
        assert c.data_ptr() != t.data_ptr()


def test_tensor_copy_is_independent():
    a = np.arange(4.)
    t = ember.tensor(a)
    a[0] = 100
    assert t.tolist() == [0., 1., 2., 3.]
    src = ember.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = ember.tensor(src)
    src += 1
    assert c.tolist() == [1., 1., 1.]


def test_tensor_keyword_and_device():
    assert_same("M.tensor(data=[1, 2])")
    assert_same("M.tensor([1, 2], device='cpu')")
    assert_same("M.tensor([1, 2], device=M.device('cpu'))")
    assert_same("M.tensor([1, 2], dtype=None)")
    with pytest.raises(NotImplementedError):
        ember.tensor([1, 2], device="cuda")


def test_tensor_requires_grad_checks_dtype():
    # Integer tensors cannot require gradients (the float case needs autograd in the build).
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        ember.tensor([1, 2], requires_grad=True)


def test_tensor_custom_sequence_and_number_types():
    class Seq:
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    class MyFloat(float):
        pass

    class MyInt(int):
        pass

    env = {"Seq": Seq, "MyFloat": MyFloat, "MyInt": MyInt}
    assert_same("M.tensor(Seq([1, 2, 3]))", env)
    assert_same("M.tensor([Seq([1., 2.]), Seq([3., 4.])])", env)
    assert_same("M.tensor([MyFloat(1.5), MyInt(2)])", env)
    assert_same("M.tensor([MyInt(2), 3])", env)
    assert_same("M.tensor([MyInt(2)], dtype=M.int8)", env)


def test_tensor_large_nested_list_matches_torch():
    rows = [[(i * 31 + j * 17) % 1000 / 7.0 for j in range(100)] for i in range(300)]
    ints = [[(i * 31 + j * 17) % 1000 - 500 for j in range(100)] for i in range(300)]
    env = {"rows": rows, "ints": ints}
    for expr in ["M.tensor(rows)", "M.tensor(ints)", "M.tensor(rows, dtype=M.float64)", "M.tensor(ints, dtype=M.int16)",
                 "M.tensor(rows, dtype=M.bfloat16)", "M.tensor(rows, dtype=M.float16)", "M.tensor(ints, dtype=M.float32)",
                 "M.tensor(rows, dtype=M.int32)", "M.tensor(ints, dtype=M.bool)"]:
        assert_same(expr, env)


def test_tensor_is_faster_than_torch_on_nested_lists():
    import timeit

    rows = [[float(i * 100 + j) for j in range(100)] for i in range(1000)]
    t_torch = min(timeit.repeat(lambda: torch.tensor(rows), number=1, repeat=3))
    t_ember = min(timeit.repeat(lambda: ember.tensor(rows), number=1, repeat=3))
    assert t_ember < t_torch, (t_ember, t_torch)


# ---- as_tensor ----
def test_as_tensor_shares_when_it_can():
    a = np.arange(6.).reshape(2, 3)
    t = ember.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data and t.dtype == ember.float64
    t[0, 0] = 42
    assert a[0, 0] == 42
    c = ember.as_tensor(a, dtype=ember.float32)
    assert c.data_ptr() != a.ctypes.data and c.dtype == ember.float32
    e = ember.ones(3)
    assert ember.as_tensor(e) is e
    assert ember.as_tensor(e, dtype=ember.float32) is e
    assert ember.as_tensor(e, dtype=ember.int32).dtype == ember.int32


AS_TENSOR = ["M.as_tensor([1, 2], dtype=M.int8)", "M.as_tensor([[1.5, 2]])", "M.as_tensor(3)", "M.as_tensor(np.float32(2))",
             "M.as_tensor(np.arange(4.)[::-1])", "M.as_tensor(np.arange(6).reshape(2, 3).T)",
             "M.as_tensor(M.ones(2, 3).t(), dtype=M.float64)", "M.as_tensor(np.ones(3), dtype=M.int32)",
             "M.as_tensor(np.ones(3, dtype=object))"]


@pytest.mark.parametrize("expr", AS_TENSOR)
def test_as_tensor(expr):
    assert_same(expr, message="[::-1]" in expr)


# ---- asarray ----
def test_asarray_sharing_and_copies():
    e = ember.arange(6.)
    assert ember.asarray(e) is e
    assert ember.asarray(e, dtype=ember.float32) is e
    assert ember.asarray(e, copy=True).data_ptr() != e.data_ptr()
    a = np.arange(4.)
    t = ember.asarray(a)
    assert t.data_ptr() == a.ctypes.data
    t += 1
    assert a.tolist() == [1., 2., 3., 4.]
    assert ember.asarray(a, copy=True).data_ptr() != a.ctypes.data
    tt = torch.arange(3.)
    assert ember.asarray(tt).data_ptr() == tt.data_ptr()  # through __dlpack__
    buf = bytearray(b"abcd")
    u = ember.asarray(buf, dtype=ember.uint8)
    assert u.tolist() == [97, 98, 99, 100]
    u[0] = 65
    assert buf == bytearray(b"Abcd")


ASARRAY = ["M.asarray(M.arange(3.), dtype=M.float64, copy=False)", "M.asarray(np.arange(3.), dtype=M.float32, copy=False)",
           "M.asarray(M.arange(3.), dtype=M.float64)", "M.asarray(np.arange(3.), dtype=M.float32)",
           "M.asarray([1, 2])", "M.asarray([1.5])", "M.asarray(3)", "M.asarray(np.float32(2))",
           "M.asarray(np.arange(4.)[::-1])", "M.asarray(b'abcd')", "M.asarray(bytearray(b'abcd'), dtype=M.uint8)",
           "M.asarray([M.ones(2), M.ones(2)])"]


@pytest.mark.parametrize("expr", ASARRAY)
def test_asarray(expr):
    assert_same(expr, message="copy=False" in expr)


# ---- Tensor.new_* ----
NEW = ["M.tensor([1, 2]).new_tensor([1.5, 2])", "M.tensor([1.]).new_tensor([1, 2])",
       "M.ones(2, dtype=M.int8).new_tensor([[1, 2]], dtype=M.float16)", "M.ones(2).new_tensor(3)",
       "M.ones(2).new_tensor(np.arange(3))",
       "M.ones(2).new_zeros(3)", "M.ones(2, dtype=M.int8).new_zeros((2, 3))", "M.ones(2).new_zeros(2, 3, dtype=M.int16)",
       "M.ones(2).new_ones(2, 3, dtype=M.int8)", "M.ones(2, dtype=M.bool).new_ones([2])", "M.ones(2).new_ones(())",
       "M.ones(2).new_full((2,), 3)", "M.ones(2, dtype=M.int32).new_full((2,), 3.7)", "M.ones(2).new_full([2, 2], True)",
       "M.ones(2).new_full((2,), 3, dtype=M.float64)", "M.ones(2).new_empty(3).shape", "M.ones(2).new_empty([]).shape",
       "M.ones(2, dtype=M.float16).new_empty((2, 3)).dtype", "M.ones(2).new_empty(2, 3, dtype=M.int64).stride()",
       "M.ones(2).new_zeros(-1)"]


@pytest.mark.parametrize("expr", NEW)
def test_new_methods(expr):
    assert_same(expr)


# ---- *_like keep dtype, shape and (dense) layout ----
LIKE_SOURCES = ["M.ones(2, 3)", "M.ones(2, 3).t()", "M.ones(2, 3)[:, ::2]", "M.ones(4, 6)[:, ::2].t()",
                "M.ones(3).expand(2, 3)", "M.tensor(2.5)", "M.ones(0, 3)", "M.empty_strided((2, 0, 3), (5, 7, 1))",
                "M.empty_strided((2, 1, 3), (5, 7, 1))", "M.ones(2, 3, 4).permute(2, 0, 1)",
                "M.ones(2, 3, dtype=M.int16).permute(1, 0)", "M.ones(1, 3).t()", "M.empty_strided((3, 2), (1, 1))"]


@pytest.mark.parametrize("src", LIKE_SOURCES)
def test_like_functions(src):
    for fn in ("zeros_like", "ones_like"):
        assert_same(f"M.{fn}({src})")
        assert_same(f"M.{fn}({src}, dtype=M.int32)")
    assert_same(f"M.full_like({src}, 2.5)")
    assert_same(f"M.full_like({src}, 7, dtype=M.float64)")
    assert_same(f"M.empty_like({src}).stride()")
    assert_same(f"M.empty_like({src}, dtype=M.float16).dtype")


def test_like_strides_random_layouts():
    """empty_like's preserve_format layout on random strided views (dense, gapped, overlapping)."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        ndim = int(rng.integers(1, 5))
        sizes = [int(rng.integers(0, 4)) for _ in range(ndim)]
        strides = [int(rng.integers(0, 13)) for _ in range(ndim)]
        if rng.random() < 0.5:  # a permuted dense layout
            perm = rng.permutation(ndim)
            acc = 1
            for d in perm[::-1]:
                strides[d] = acc
                acc *= max(sizes[d], 1)
        env = {"sizes": tuple(sizes), "strides": tuple(strides)}
        assert_same("M.empty_like(M.empty_strided(sizes, strides)).stride()", env)


def test_full_like_int_truncates():
    assert_same("M.full_like(M.ones(2, dtype=M.int32), 2.5)")
    assert_same("M.full_like(M.ones(2), True)")


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64", "bfloat16"])
def test_long_arange_and_linspace_split_over_threads(dtype):
    """arange/linspace past the parallel grain: each element from its index alone, so one and two
    threads give the same values (and arange torch's, bfloat16 aside: torch rounds differently)."""
    n = 300_001
    floats = dtype in ("float32", "float64", "bfloat16")
    calls = [lambda L, a=a: L.arange(*a, dtype=getattr(L, dtype))
             for a in ((n,), (-5, n, 3), (0.5, n / 7, 0.25) if floats else (7, n))]
    if floats:
        calls.append(lambda L: L.linspace(-3.0, 7.5, n, dtype=getattr(L, dtype)))
    threads = ember.get_num_threads()
    for k, call in enumerate(calls):
        e = call(ember).double().numpy()
        ember.set_num_threads(1)
        try:
            one = call(ember).double().numpy()
        finally:
            ember.set_num_threads(threads)
        assert np.array_equal(e, one)
        if k < 3 and dtype != "bfloat16":
            assert np.array_equal(e, call(torch).double().numpy())


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_match_torch(name):
    # rows as runs of their column ranges (ember/_composite.py): every offset regime, both dtypes
    for row, col in [(512, 512), (5, 7), (7, 5), (1, 1), (0, 3), (3, 0), (0, 0), (6, 3)]:
        for offset in (-10, -3, -1, 0, 1, 2, 10, 2**62, -2**62):
            for dt in ("int64", "int32"):
                e = getattr(ember, name)(row, col, offset, dtype=getattr(ember, dt))
                t = getattr(torch, name)(row, col, offset, dtype=getattr(torch, dt))
                assert e.dtype == getattr(ember, dt) and tuple(e.shape) == tuple(t.shape)
                assert (e.numpy() == t.numpy()).all(), (row, col, offset)
    with pytest.raises(RuntimeError):
        getattr(ember, name)(-1, 3)
    with pytest.raises(NotImplementedError):
        getattr(ember, name)(3, 3, dtype=ember.float32)


def _factory_calls(lib):
    E = lib.empty
    return {
        "arange_requires_grad": lambda: lib.arange(4.0, requires_grad=True),
        "arange3_requires_grad": lambda: lib.arange(0, 4, 1, dtype=lib.float32, requires_grad=True),
        "arange_out_float64": lambda: lib.arange(5, out=E(0, dtype=lib.float64)),
        "arange_out_int64": lambda: lib.arange(5, out=E(2, dtype=lib.int64)),
        "arange_keywords": lambda: lib.arange(start=1, end=5),
        "arange_end_keyword": lambda: lib.arange(end=5),
        "arange_layout": lambda: lib.arange(3, layout=lib.strided),
        "arange_int_requires_grad": lambda: lib.arange(3, requires_grad=True),
        "linspace_requires_grad": lambda: lib.linspace(0, 1, 5, requires_grad=True),
        "linspace_out": lambda: lib.linspace(0, 1, 5, out=E(5, dtype=lib.float64)),
        "logspace_requires_grad": lambda: lib.logspace(0, 1, 5, requires_grad=True),
        "full_requires_grad": lambda: lib.full((3,), 2.0, requires_grad=True),
        "full_out": lambda: lib.full((2, 2), 7, out=E(4, dtype=lib.int32)),
        "full_int_requires_grad": lambda: lib.full((3,), 2, requires_grad=True),
        "full_layout_pin": lambda: lib.full((3,), 2.0, layout=lib.strided, pin_memory=False),
        "eye_requires_grad": lambda: lib.eye(3, requires_grad=True),
        "eye_out": lambda: lib.eye(2, 3, out=E(0)),
        "empty_strided_requires_grad": lambda: lib.empty_strided((2, 2), (2, 1), requires_grad=True).zero_(),
        "zeros_layout": lambda: lib.zeros(2, layout=lib.strided),
        "zeros_pin_false": lambda: lib.zeros(2, pin_memory=False),
        "zeros_out": lambda: lib.zeros(2, 3, out=E(1)),
        "ones_out_dtype_mismatch": lambda: lib.ones(2, dtype=lib.int64, out=E(2)),
        "zeros_int_requires_grad": lambda: lib.zeros(2, dtype=lib.int64, requires_grad=True),
        "zeros_pin_true": lambda: lib.zeros(2, pin_memory=True),  # no accelerator: refused by both
    }


@pytest.mark.parametrize("name", sorted(_factory_calls(ember)))
def test_factory_keywords_as_torch(name):
    # torch's keyword tail on every factory: out=, layout=, pin_memory=, requires_grad=
    import torch

    def run(lib):
        try:
            r = _factory_calls(lib)[name]()
        except (RuntimeError, TypeError) as err:  # ember's NotImplementedError is a RuntimeError
            return ("raised", isinstance(err, TypeError))
        return (str(r.dtype).split(".")[-1], r.tolist(), r.requires_grad, r.is_leaf)

    assert run(ember) == run(torch)
