"""NumPy and DLPack interop (paper §4.2): zero-copy in both directions, lifetimes, errors as
PyTorch raises them, and that ``import ember`` does not import NumPy."""

import gc
import subprocess
import sys
import time
import warnings
import weakref

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
import ember  # noqa: E402
import ember.utils.dlpack  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:__array_wrap__ must accept context:DeprecationWarning"),  # torch's
    pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning"),
]

NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
PYTHON = sys.executable
ENV_PATH = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "python")


def _name(dt):
    return str(dt).split(".")[-1]


def _sample(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    return (np.arange(n) % 7).astype(dtype).reshape(shape)


def _layouts(dtype):
    """Arrays of one dtype in assorted layouts: contiguous, transposed, sliced, broadcast, 0-d, empty."""
    base = _sample(dtype, (4, 6))
    return {
        "contiguous": base,
        "transposed": base.T,
        "sliced": base[1:, ::2],
        "column": base[:, 2],
        "broadcast": np.broadcast_to(base[0], (3, 6)),
        "zero_d": np.array(base[1, 1]),
        "empty": base[:0],
        "fortran": np.asfortranarray(base),
        "size_one_dims": base[:1, None, :],
    }


def _run_python(code):
    env = {"PYTHONPATH": ENV_PATH, "PATH": "/usr/bin:/bin"}
    return subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, timeout=120)


# ---------------------------------------------------------------- import cost
def test_import_does_not_import_numpy():
    r = _run_python("import ember, sys; assert 'numpy' not in sys.modules, 'numpy imported'")
    assert r.returncode == 0, r.stderr


def test_import_is_fast():
    code = "import time; t = time.perf_counter(); import ember; print(time.perf_counter() - t)"
    best = min(float(_run_python(code).stdout) for _ in range(3))
    assert best < 0.25, best  # ~0.02-0.05 s on a quiet machine (torch: over 1 s); CI machines may be loaded


def test_readme_example_prints_updated_array():
    r = _run_python("import ember, numpy as np; a=np.ones(3,dtype=np.float32); t=ember.from_numpy(a); t+=1; print(a)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[2. 2. 2.]"


# ---------------------------------------------------------------- from_numpy
@pytest.mark.parametrize("dtype", NP_DTYPES)
@pytest.mark.parametrize("layout", list(_layouts("int8")))
@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_from_numpy_matches_torch_and_shares(dtype, layout):
    a = _layouts(dtype)[layout]
    t = ember.from_numpy(a)
    ref = torch.from_numpy(a)
    assert _name(t.dtype) == _name(ref.dtype)
    assert tuple(t.shape) == tuple(ref.shape)
    assert t.stride() == ref.stride()
    assert t.tolist() == ref.tolist()
    if a.size:  # PyTorch reports 0 as the data_ptr of an empty tensor
        assert t.data_ptr() == ref.data_ptr() == a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_writes_are_visible_both_ways(dtype):
    a = _sample(dtype, (3, 4))
    v = a[:, 1::2]  # non-contiguous view
    t = ember.from_numpy(v)
    one = np.ones((), dtype=dtype).item()
    v[1, 1] = one if dtype == "bool" else 5
    assert t[1, 1].item() == v[1, 1].item()
    t[2, 0] = 0
    assert a[2, 1] == 0
    t.fill_(1)
    assert (v == 1).all() and a[0, 0] == _sample(dtype, (3, 4))[0, 0]


def test_inplace_add_updates_array():
    a = np.ones(3, dtype=np.float32)
    t = ember.from_numpy(a)
    t += 1
    assert a.tolist() == [2., 2., 2.]
    t.mul_(3)
    assert a.tolist() == [6., 6., 6.]


def test_from_numpy_readonly_and_unaligned():
    a = np.arange(4.)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data and t.tolist() == [0., 1., 2., 3.]
    buf = bytearray(13)
    u = np.ndarray((3,), dtype=np.float32, buffer=buf, offset=1, strides=(4,))
    u[:] = [1, 2, 3]
    assert ember.from_numpy(u).tolist() == torch.from_numpy(u).tolist() == [1., 2., 3.]


def test_from_numpy_subclasses():
    m = np.matrix([[1, 2]])
    assert tuple(ember.from_numpy(m).shape) == (1, 2)
    ma = np.ma.masked_array([1, 2])
    assert ember.from_numpy(ma).tolist() == [1, 2]


FROM_NUMPY_ERRORS = {
    "list": ([1], TypeError, "expected np.ndarray (got list)"),
    "numpy scalar": (np.float32(1), TypeError, "expected np.ndarray (got numpy.float32)"),
    "negative stride": (np.ones(3)[::-1], ValueError,
                        "At least one stride in the given numpy array is negative, and tensors with negative strides "
                        "are not currently supported. (You can probably work around this by making a copy of your "
                        "array  with array.copy().) "),
    "negative stride 2d": (np.ones((2, 3))[:, ::-1], ValueError, "At least one stride"),
    "misaligned stride": (np.lib.stride_tricks.as_strided(np.ones(4, np.float32), (2,), (6,)), ValueError,
                          "given numpy array strides not a multiple of the element byte size. Copy the numpy array "
                          "to reallocate the memory."),
    "byte order": (np.ones(3, dtype=">f4"), ValueError,
                   "given numpy array has byte order different from the native byte order. Conversion between byte "
                   "orders is currently not supported."),
    "object": (np.array([1, None]), TypeError, "can't convert np.ndarray of type numpy.object_. The only supported "
               "types are: "),
    "str": (np.array(["a"]), TypeError, "can't convert np.ndarray of type numpy.str_."),
    "datetime": (np.zeros(2, dtype="M8[D]"), TypeError, "can't convert np.ndarray of type numpy.datetime64."),
    "void": (np.zeros(2, dtype=[("a", "<f4")]), TypeError, "can't convert np.ndarray of type numpy.void."),
    "longdouble": (np.zeros(2, dtype=np.longdouble), TypeError, "can't convert np.ndarray of type numpy.longdouble."),
}


@pytest.mark.parametrize("case", list(FROM_NUMPY_ERRORS))
def test_from_numpy_errors_match_torch(case):
    obj, exc, msg = FROM_NUMPY_ERRORS[case]
    with pytest.raises(exc) as ee:
        ember.from_numpy(obj)
    with pytest.raises(exc) as te:
        torch.from_numpy(obj)
    assert str(ee.value).startswith(msg)
    assert str(te.value).startswith(msg)


def test_from_numpy_lists_supported_types():
    with pytest.raises(TypeError) as e:
        ember.from_numpy(np.array([1, None]))
    assert str(e.value).endswith(
        "The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
        "uint8, and bool.")
    # unsigned types wider than 8 bits have no ember dtype
    with pytest.raises(TypeError, match="numpy.uint16"):
        ember.from_numpy(np.ones(3, np.uint16))


def test_from_numpy_is_constant_time():
    small = np.ones(10, dtype=np.float32)
    big = np.ones(10_000_000, dtype=np.float32)  # 40 MB

    def best(a, reps=200):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            ember.from_numpy(a)
            times.append(time.perf_counter() - t0)
        return min(times)

    t_big = best(big)
    assert t_big < 1e-3, t_big
    assert t_big < 20 * best(small) + 50e-6


# ---------------------------------------------------------------- lifetimes
def test_array_deleted_while_tensor_alive():
    a = np.arange(1000, dtype=np.float64)
    ref = weakref.ref(a)
    t = ember.from_numpy(a)
    del a
    gc.collect()
    assert ref() is not None, "the tensor keeps the array alive"
    assert t[999].item() == 999.0
    v = t[10:20]
    del t
    gc.collect()
    assert ref() is not None, "a view keeps it alive too"
    assert v.tolist() == [float(i) for i in range(10, 20)]
    del v
    gc.collect()
    assert ref() is None, "the array is released with the last tensor"


def test_tensor_deleted_while_array_alive():
    t = ember.arange(12.).reshape(3, 4)
    a = t.numpy()
    del t
    gc.collect()
    a[0, 0] = 7  # memory still owned through the array's base
    assert a.sum() == sum(range(12)) + 7


def test_roundtrip_lifetime_and_identity():
    a = np.arange(6.)
    t = ember.from_numpy(a)
    b = t.numpy()
    assert np.shares_memory(a, b)
    del a, t
    gc.collect()
    assert b.tolist() == [0., 1., 2., 3., 4., 5.]


def test_tensor_freed_on_another_thread():
    import threading

    a = np.arange(10.)
    ref = weakref.ref(a)
    holder = [ember.from_numpy(a)]
    del a

    def drop():
        holder.clear()
        gc.collect()

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    gc.collect()
    assert ref() is None


def test_deleter_takes_the_gil():
    """A tensor over NumPy memory freed by a thread without the GIL (here: a DLPack consumer's
    deleter called through ctypes, which releases the GIL) must take the GIL to drop the array."""
    import ctypes
    import threading

    a = np.arange(10.)
    ref = weakref.ref(a)
    cap = ember.from_numpy(a).__dlpack__()
    del a
    gc.collect()
    assert ref() is not None
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    managed = api.PyCapsule_GetPointer(cap, b"dltensor")
    api.PyCapsule_SetName(cap, b"used_dltensor")  # we are the consumer now
    # DLManagedTensor: a 48-byte DLTensor, then manager_ctx, then deleter
    deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(ctypes.c_void_p.from_address(managed + 56).value)
    th = threading.Thread(target=deleter, args=(managed,))
    th.start()
    th.join()
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------- Tensor.numpy / __array__
EMBER_SOURCES = {
    "contiguous": "M.arange(24).reshape(4, 6)",
    "transposed": "M.arange(24).reshape(4, 6).t()",
    "sliced": "M.arange(24).reshape(4, 6)[1:, ::2]",
    "expanded": "M.arange(6).expand(3, 6)",
    "zero_d": "M.tensor(3)",
    "empty": "M.arange(24).reshape(4, 6)[:0]",
    "unsqueezed": "M.arange(6).reshape(1, 6)[:, None]",
}


@pytest.mark.parametrize("dtype", NP_DTYPES)
@pytest.mark.parametrize("src", list(EMBER_SOURCES))
def test_numpy_matches_torch_and_shares(dtype, src):
    e = eval(EMBER_SOURCES[src], {"M": ember}).to(getattr(ember, dtype))
    r = eval(EMBER_SOURCES[src], {"M": torch}).to(getattr(torch, dtype))
    a, ra = e.numpy(), r.numpy()
    assert a.dtype == ra.dtype and a.shape == ra.shape
    if a.size:  # PyTorch hands NumPy zero strides for empty tensors; any strides are right there
        assert a.strides == ra.strides
    assert a.tolist() == ra.tolist()
    # data_ptr() of an empty tensor is 0, as in torch: compare pointers only when there is data
    assert a.__array_interface__["data"][0] == e.data_ptr() or e.numel() == 0
    assert a.flags.writeable
    b = np.asarray(e)
    assert b.__array_interface__["data"][0] == e.data_ptr() or e.numel() == 0


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_numpy_writes_visible_both_ways(dtype):
    t = ember.zeros(3, 4, dtype=getattr(ember, dtype)).t()
    a = t.numpy()
    a[1, 2] = 1
    assert t[1, 2].item() == 1
    t[0, 0] = 1
    assert a[0, 0] == 1


def test_numpy_bfloat16_and_force():
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        ember.ones(2, dtype=ember.bfloat16).numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        torch.ones(2, dtype=torch.bfloat16).numpy()
    t = ember.ones(3)
    f = t.numpy(force=True)
    assert np.shares_memory(f, t.numpy())


def test_array_protocol():
    t = ember.arange(6.).reshape(2, 3)
    assert np.asarray(t).__array_interface__["data"][0] == t.data_ptr()
    d = np.asarray(t, dtype=np.float64)
    assert d.dtype == np.float64 and d.tolist() == [[0., 1., 2.], [3., 4., 5.]]
    c = np.array(t)  # np.array copies by default
    assert not np.shares_memory(c, np.asarray(t))
    assert t.__array__(copy=True).__array_interface__["data"][0] != t.data_ptr()
    with pytest.raises(ValueError):
        t.__array__(np.float64, copy=False)
    assert np.exp(ember.zeros(2)).tolist() == [1., 1.]


def _same_result(expr):
    e = eval(expr, {"M": ember, "np": np})
    r = eval(expr, {"M": torch, "np": np})
    assert isinstance(e, ember.Tensor), expr
    assert _name(e.dtype) == _name(r.dtype) and e.tolist() == r.tolist(), expr
    return e


def test_ndarray_operators_like_torch():
    # tensor (op) ndarray: the tensor gives way, NumPy computes, __array_wrap__ makes a tensor again
    for expr in ["M.ones(3) + np.ones(3)", "M.ones(3, dtype=M.int32) + np.ones(3)", "M.ones(3) * np.ones((2, 1))",
                 "M.ones(3) + np.array(2.)", "M.ones(3, dtype=M.float16) + np.array(2., dtype=np.float32)",
                 "M.ones(3, dtype=M.int32) / np.ones(3, dtype=np.int32)", "M.ones(2, dtype=M.bool) + np.ones(2, bool)",
                 "M.ones(3) - np.arange(3, dtype=np.int8)", "M.arange(6).reshape(2, 3).t() * np.arange(2)",
                 "np.float32(2) * M.ones(3)", "M.ones(3) + np.float32(2)", "np.exp(M.zeros(2))",
                 "np.add(M.ones(2), 1)"]:
        _same_result(expr)
    e, r = ember.ones(3), torch.ones(3)
    e += np.ones(3)
    r += np.ones(3)
    assert _name(e.dtype) == _name(r.dtype) == "float64" and e.tolist() == r.tolist()
    # ndarray (op) tensor: NumPy defers (__array_priority__) and PyTorch then refuses the array.
    assert ember.Tensor.__array_priority__ == torch.Tensor.__array_priority__ == 1000
    for mod in (torch, ember):
        with pytest.raises(TypeError):
            np.ones(3) * mod.ones(3)
        with pytest.raises(TypeError):
            np.ones(3) + mod.ones(3)


# ---------------------------------------------------------------- DLPack
DL_DTYPES = NP_DTYPES  # NumPy imports/exports all of these (bool and float16 included)


@pytest.mark.parametrize("dtype", DL_DTYPES)
@pytest.mark.parametrize("src", list(EMBER_SOURCES))
def test_dlpack_ember_to_numpy(dtype, src):
    e = eval(EMBER_SOURCES[src], {"M": ember}).to(getattr(ember, dtype))
    a = np.from_dlpack(e)
    assert a.shape == tuple(e.shape)
    assert tuple(s // a.itemsize for s in a.strides) == e.stride() or e.numel() <= 1
    assert a.tolist() == e.tolist()
    assert a.__array_interface__["data"][0] == e.data_ptr() or e.numel() == 0


@pytest.mark.parametrize("dtype", DL_DTYPES)
@pytest.mark.parametrize("layout", list(_layouts("int8")))
def test_dlpack_numpy_to_ember(dtype, layout):
    a = _layouts(dtype)[layout]  # read-only ones (broadcast) come as versioned DLPack with a flag
    e = ember.from_dlpack(a)
    assert tuple(e.shape) == a.shape and _name(e.dtype) == dtype
    assert e.tolist() == a.tolist()
    assert e.data_ptr() == a.__array_interface__["data"][0] or e.numel() == 0


def test_dlpack_numpy_readonly_versioned():
    a = np.arange(3.)
    a.flags.writeable = False
    e = ember.from_dlpack(a)
    assert e.data_ptr() == a.ctypes.data and e.tolist() == [0., 1., 2.]


TORCH_DTYPES = NP_DTYPES + ["bfloat16"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
@pytest.mark.parametrize("src", list(EMBER_SOURCES))
def test_dlpack_with_torch_both_ways(dtype, src):
    e = eval(EMBER_SOURCES[src], {"M": ember}).to(getattr(ember, dtype))
    t = torch.from_dlpack(e)
    assert t.data_ptr() == e.data_ptr() or e.numel() == 0
    assert tuple(t.shape) == tuple(e.shape) and _name(t.dtype) == dtype
    if e.numel() > 1:
        assert t.stride() == e.stride()
    assert t.tolist() == e.tolist()

    r = eval(EMBER_SOURCES[src], {"M": torch}).to(getattr(torch, dtype))
    back = ember.from_dlpack(r)
    assert back.data_ptr() == r.data_ptr() or r.numel() == 0
    assert tuple(back.shape) == tuple(r.shape) and back.stride() == r.stride()
    assert back.tolist() == r.tolist()


@pytest.mark.parametrize("dtype", ["bool", "float16", "bfloat16", "int32", "float32"])
def test_dlpack_writes_visible(dtype):
    e = ember.zeros(4, 6, dtype=getattr(ember, dtype))[:, 1::2]
    t = torch.from_dlpack(e)
    t[1, 1] = 1
    assert e[1, 1].item() == 1
    e[2, 2] = 1
    assert t[2, 2].item() == 1

    r = torch.zeros(4, 6, dtype=getattr(torch, dtype)).t()
    x = ember.from_dlpack(r)
    x[3, 1] = 1
    assert r[3, 1].item() == 1
    r[0, 3] = 1
    assert x[0, 3].item() == 1


def test_dlpack_capsules():
    t = ember.arange(4.)
    legacy = t.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    versioned = t.__dlpack__(max_version=(1, 0))
    assert '"dltensor_versioned"' in repr(versioned)
    assert '"dltensor"' in repr(t.__dlpack__(max_version=(0, 8)))
    for cap in (legacy, versioned):
        x = ember.from_dlpack(cap)
        assert x.data_ptr() == t.data_ptr() and x.tolist() == [0., 1., 2., 3.]
        assert "used_dltensor" in repr(cap)
        with pytest.raises(RuntimeError, match="consumed only once"):
            ember.from_dlpack(cap)
    assert t.__dlpack_device__() == (1, 0)
    assert torch.from_dlpack(t.__dlpack__(max_version=(1, 0))).data_ptr() == t.data_ptr()
    assert torch.from_dlpack(t.__dlpack__()).data_ptr() == t.data_ptr()
    assert ember.from_dlpack(torch.arange(3.).__dlpack__()).tolist() == [0., 1., 2.]


def test_dlpack_export_options():
    t = ember.arange(4.)
    c = ember.from_dlpack(t.__dlpack__(copy=True))
    assert c.data_ptr() != t.data_ptr() and c.tolist() == t.tolist()
    assert ember.from_dlpack(t.__dlpack__(copy=False)).data_ptr() == t.data_ptr()
    assert ember.from_dlpack(t.__dlpack__(dl_device=(1, 0))).data_ptr() == t.data_ptr()
    assert ember.from_dlpack(t.__dlpack__(stream=-1)).data_ptr() == t.data_ptr()
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError):
        t.__dlpack__(stream=1)
    assert ember.from_dlpack(t, copy=True).data_ptr() != t.data_ptr()
    with pytest.raises(NotImplementedError):
        ember.from_dlpack(t, device="cuda")
    with pytest.raises(TypeError):
        ember.from_dlpack([1, 2])


def test_dlpack_unsupported_dtype_releases_producer():
    r = torch.ones(4, dtype=torch.uint16)
    with pytest.raises(TypeError, match="unsupported DLPack dtype"):
        ember.from_dlpack(r)
    ember._C._cpu_empty_cache()
    before = ember._C._cpu_memory_stats()["allocated_bytes"]
    cap = ember.ones(1 << 20, dtype=ember.bfloat16).__dlpack__(max_version=(1, 0))
    with pytest.raises(RuntimeError, match="Unsupported dtype"):
        np.from_dlpack(_CapsuleHolder(cap))  # NumPy has no bfloat16: it refuses, and must not leak
    del cap
    gc.collect()
    assert ember._C._cpu_memory_stats()["allocated_bytes"] == before


class _CapsuleHolder:
    """Presents a ready-made capsule through the __dlpack__ protocol."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kwargs):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def test_dlpack_unconsumed_capsule_frees_tensor():
    ember._C._cpu_empty_cache()
    before = ember._C._cpu_memory_stats()["allocated_bytes"]
    cap = ember.ones(1 << 20).__dlpack__()
    assert ember._C._cpu_memory_stats()["allocated_bytes"] - before >= 4 << 20
    del cap
    gc.collect()
    assert ember._C._cpu_memory_stats()["allocated_bytes"] == before


def test_dlpack_lifetimes():
    ember._C._cpu_empty_cache()
    before = ember._C._cpu_memory_stats()["allocated_bytes"]
    e = ember.arange(1 << 20, dtype=ember.float32)
    t = torch.from_dlpack(e)
    del e
    gc.collect()
    assert t[-1].item() == float((1 << 20) - 1), "torch keeps ember's memory alive"
    del t
    gc.collect()
    assert ember._C._cpu_memory_stats()["allocated_bytes"] == before, "released when torch lets go"

    r = torch.arange(10.)
    x = ember.from_dlpack(r)
    del r
    gc.collect()
    assert x.tolist() == [float(i) for i in range(10)]

    a = np.arange(10.)
    ref = weakref.ref(a)
    y = ember.from_dlpack(a)
    del a
    gc.collect()
    assert ref() is not None and y[9].item() == 9.0
    del y
    gc.collect()
    assert ref() is None


def test_utils_dlpack_module():
    t = ember.arange(3.)
    cap = ember.utils.dlpack.to_dlpack(t)
    r = torch.utils.dlpack.from_dlpack(cap)
    assert r.data_ptr() == t.data_ptr()
    x = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(r))
    assert x.data_ptr() == t.data_ptr()
    assert ember.utils.dlpack.DLDeviceType.kDLCPU == 1
