"""What programs written for torch call around the math: torch.compile, torch.jit's run-time
helpers, torch.testing, torch.cuda on a CPU-only build, torch.backends flags and device contexts.
Each behaves as torch 2.13's CPU build does, except that compile runs eagerly and TorchScript
raises NotImplementedError."""
import pytest

import ember
from conftest import torch


def _linear_pair():
    tm = torch.nn.Linear(3, 2)
    em = ember.nn.Linear(3, 2)
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, em


def test_compile_module_wraps_the_original_as_torch():
    tm, em = _linear_pair()
    tc, ec = torch.compile(tm, backend="eager"), ember.compile(em)
    assert type(ec).__name__ == type(tc).__name__ == "OptimizedModule"
    assert ec._orig_mod is em and tc._orig_mod is tm
    assert list(ec.state_dict()) == list(tc.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert ec.weight is em.weight and ec.in_features == 3  # attributes reach the original
    x = torch.randn(4, 3)
    ye = ec(ember.from_numpy(x.numpy().copy()))
    assert ember.allclose(ye, ember.from_numpy(tc(x).detach().numpy().copy()))
    ye.sum().backward()  # autograd through the wrapper reaches the original's parameters
    assert em.weight.grad is not None and ec.training
    ec.eval()
    assert not em.training  # train/eval reach the original


def test_compile_functions_and_decorator_forms():
    def f(a, scale=2.0):
        return a * scale

    cf = ember.compile(f)
    assert cf.__name__ == "f" and ember.equal(cf(ember.ones(2), scale=3.0), ember.full((2,), 3.0))

    @ember.compile
    def g(a):
        return a + 1

    @ember.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def h(a):
        return a - 1

    assert ember.equal(g(ember.zeros(2)), ember.ones(2)) and ember.equal(h(ember.ones(2)), ember.zeros(2))
    assert ember.compile(f, disable=True) is f


@pytest.mark.parametrize("kwargs", [dict(mode="fastest"), dict(mode="default", options={"a": 1})])
def test_compile_argument_errors_as_torch(kwargs):
    with pytest.raises(RuntimeError):
        torch.compile(lambda a: a, **kwargs)
    with pytest.raises(RuntimeError):
        ember.compile(lambda a: a, **kwargs)


def test_jit_runtime_helpers_and_torchscript_refusal():
    class M(ember.nn.Module):
        @ember.jit.ignore
        def helper(self, a):
            return a * 2

        @ember.jit.unused
        def unused(self, a):
            return a

        @ember.jit.export
        def exported(self, a):
            return a + 1

        def forward(self, a):
            if not ember.jit.is_scripting() and not ember.jit.is_tracing():
                return self.exported(self.helper(a))
            return a

    assert ember.equal(M()(ember.ones(2)), ember.full((2,), 3.0))
    assert ember.jit.ignore(drop=True)(len) is len and ember.jit.annotate(int, 3) == 3
    for call in (lambda: ember.jit.script(M()), lambda: ember.jit.trace(M(), ember.ones(2)),
                 lambda: ember.jit.save(M(), "m.pt"), lambda: ember.jit.load("m.pt")):
        with pytest.raises(NotImplementedError, match="TorchScript"):
            call()
    assert not ember.compiler.is_compiling() and ember.compiler.disable(len) is len


_CLOSE_CASES = [
    ("equal", lambda L: (L.ones(3), L.ones(3)), {}),
    ("within_default_tol", lambda L: (L.ones(3), L.ones(3) + 1e-7), {}),
    ("one_off", lambda L: (L.ones(3), L.tensor([1.0, 2.0, 1.0])), {}),
    ("all_off_2d", lambda L: (L.zeros(2, 2), L.ones(2, 2)), {}),
    ("custom_tol", lambda L: (L.ones(3), L.ones(3) * 1.01), dict(rtol=0.02, atol=0.0)),
    ("nan_unequal", lambda L: (L.tensor([float("nan")]), L.tensor([float("nan")])), {}),
    ("nan_equal", lambda L: (L.tensor([float("nan")]), L.tensor([float("nan")])), dict(equal_nan=True)),
    ("dtype", lambda L: (L.ones(2), L.ones(2, dtype=L.float64)), {}),
    ("dtype_unchecked", lambda L: (L.ones(2), L.ones(2, dtype=L.float64)), dict(check_dtype=False)),
    ("shape", lambda L: (L.ones(2), L.ones(3)), {}),
    ("ints", lambda L: (L.tensor([1, 2]), L.tensor([1, 3])), {}),
    ("half_tol", lambda L: (L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16) * 1.0005), {}),
    ("scalar", lambda L: (L.tensor(1.0), L.tensor(2.0)), {}),
    ("int_scalar", lambda L: (L.tensor(1), L.tensor(3)), {}),
    ("float_numbers", lambda L: (1.0, 2.0), {}),
    ("irrational", lambda L: (L.tensor([1.0, 1.1]), L.tensor([1.0, 1.3])), {}),
    ("sequence", lambda L: ([L.ones(2), L.zeros(1)], [L.ones(2), L.ones(1)]), {}),
    ("mapping", lambda L: ({"a": L.ones(2)}, {"a": L.ones(2)}), {}),
    ("numbers", lambda L: (1.0, 1.0 + 1e-9), {}),
    ("number_types", lambda L: (1, 1.0), {}),
]


@pytest.mark.parametrize("name", [c[0] for c in _CLOSE_CASES])
def test_assert_close_as_torch(name):
    make, kwargs = next((m, k) for n, m, k in _CLOSE_CASES if n == name)
    outcome = {}
    for L in (torch, ember):
        try:
            L.testing.assert_close(*make(L), **kwargs)
            outcome[L.__name__] = None
        except AssertionError as e:
            outcome[L.__name__] = str(e).replace("torch.", "ember.")
    assert outcome["ember"] == outcome["torch"]


def test_assert_close_argument_errors_as_torch():
    for L in (torch, ember):
        with pytest.raises(ValueError):
            L.testing.assert_close(L.ones(1), L.ones(1), rtol=0.1)
        with pytest.raises(AssertionError, match="custom"):
            L.testing.assert_close(L.ones(1), L.zeros(1), msg="custom")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool",
                                   "complex64"])
def test_make_tensor(dtype):
    dt = getattr(ember, dtype)
    t = ember.testing.make_tensor(3, 4, dtype=dt, low=-2, high=5)
    assert t.shape == (3, 4) and t.dtype == dt
    if dtype not in ("bool", "complex64"):
        assert bool((t >= (0 if dtype == "uint8" else -2)).all()) and bool((t <= 5).all())
    nc = ember.testing.make_tensor((2, 5), dtype=dt, noncontiguous=True, exclude_zero=True)
    assert nc.shape == (2, 5) and not nc.is_contiguous() and bool((nc != 0).all())
    if dt.is_floating_point or dt.is_complex:
        assert ember.testing.make_tensor(2, dtype=dt, requires_grad=True).requires_grad
    else:
        with pytest.raises(ValueError):
            ember.testing.make_tensor(2, dtype=dt, requires_grad=True)


def test_cuda_module_as_torch_without_cuda():
    c = ember.cuda
    assert c.is_available() is torch.cuda.is_available() is False
    assert c.device_count() == torch.cuda.device_count() == 0 and not c.is_initialized()
    assert c.memory_allocated() == torch.cuda.memory_allocated() == 0
    c.manual_seed(0), c.manual_seed_all(0), c.empty_cache()  # no-ops, as torch's here
    for call in (c.synchronize, c.current_device, lambda: c.set_device(0), c.get_device_name,
                 lambda: ember.ones(1).cuda(), lambda: c.Stream()):
        with pytest.raises(AssertionError, match="CUDA"):
            call()
        with pytest.raises(NotImplementedError):
            call()
    with pytest.raises(AssertionError):
        torch.cuda.synchronize()
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = ember.cuda.amp.GradScaler()
    assert not scaler.is_enabled()
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with ember.cuda.amp.autocast():
            assert not ember.is_autocast_enabled()


def test_backends_flags_and_device_context_as_torch():
    for L in (torch, ember):
        assert L.backends.mps.is_available() is False and L.backends.cudnn.is_available() is False
        assert L.backends.cuda.matmul.allow_tf32 is False and L.backends.cudnn.allow_tf32 is True
        L.backends.cudnn.benchmark = True
        L.backends.cudnn.benchmark = False
        L.backends.cuda.enable_flash_sdp(False)
        assert not L.backends.cuda.flash_sdp_enabled()
        L.backends.cuda.enable_flash_sdp(True)
        d = L.device("cpu")
        assert L.device(d) == d
        with d as entered:
            assert entered == d and L.zeros(1).device == d and L.get_default_device() == d


def test_format_version_config_and_small_wrappers_as_torch():
    for L in (torch, ember):
        assert f"{L.tensor(1.23456):.2f}" == "1.23" and f"{L.tensor(7):>3d}" == "  7"
        assert format(L.ones(2), "") == str(L.ones(2))
        with pytest.raises(TypeError):
            f"{L.ones(2):.2f}"
        assert L.version.cuda is None and isinstance(L.__config__.show(), str)
        assert "threads" in L.__config__.parallel_info()
        dp = L.nn.DataParallel(L.nn.Linear(2, 3))
        assert dp.device_ids == [] and list(dp.state_dict()) == ["module.weight", "module.bias"]
        assert dp(L.ones(4, 2)).shape == (4, 3)
        with pytest.raises(RuntimeError, match="device type"):
            L.nn.parallel.data_parallel(L.nn.Linear(2, 3), L.ones(1, 2))
    assert ember.version.__version__ == ember.__version__
    with pytest.raises(NotImplementedError, match="sparse"):
        ember.optim.SparseAdam(ember.nn.Linear(2, 2).parameters())


_LEGACY_CASES = {
    "Tensor_list": lambda L: L.Tensor([1, 2, 3]),
    "Tensor_nested": lambda L: L.Tensor([[1, 2], [3, 4]]),
    "Tensor_sizes": lambda L: L.Tensor(2, 3).shape,
    "Tensor_size_obj": lambda L: L.Tensor(L.Size([4])).shape,
    "Tensor_empty": lambda L: L.Tensor().shape,
    "Tensor_numpy": lambda L: L.Tensor(__import__("numpy").array([1, 2])),
    "FloatTensor": lambda L: L.FloatTensor([1.5, 2]),
    "LongTensor_sizes": lambda L: (L.LongTensor(3).dtype, L.LongTensor(3).shape),
    "ByteTensor": lambda L: L.ByteTensor([1, 255]),
    "BoolTensor": lambda L: L.BoolTensor([True, False]),
    "DoubleTensor": lambda L: L.DoubleTensor([[1]]),
    "isinstance_float": lambda L: (isinstance(L.ones(1), L.FloatTensor), isinstance(L.ones(1), L.LongTensor),
                                   isinstance(L.ones(1, dtype=L.int64), L.LongTensor), isinstance(3, L.FloatTensor)),
    "type_cast": lambda L: L.ones(2).type(L.DoubleTensor).dtype,
    "Variable": lambda L: (L.autograd.Variable(L.ones(2), requires_grad=True).requires_grad,
                           isinstance(L.ones(1), L.autograd.Variable)),
    "parameter_of_Tensor": lambda L: L.nn.Parameter(L.Tensor(3, 2)).shape,
}


def _plain(v, L):
    if isinstance(v, L.Tensor):
        return (str(v.dtype).split(".")[-1], v.tolist())
    if isinstance(v, tuple):
        return tuple(_plain(x, L) for x in v)
    if isinstance(v, L.dtype):
        return str(v).split(".")[-1]
    return v


@pytest.mark.parametrize("name", sorted(_LEGACY_CASES))
def test_legacy_constructors_as_torch(name):
    got = {L.__name__: _plain(_LEGACY_CASES[name](L), L) for L in (torch, ember)}
    if name.endswith("sizes") or name == "Tensor_size_obj" or name == "Tensor_empty":
        got = {k: tuple(v) if not isinstance(v, tuple) or not v or not isinstance(v[0], str) else v
               for k, v in got.items()}
    assert got["ember"] == got["torch"]


def test_legacy_constructor_aliases_and_errors_as_torch():
    for L in (torch, ember):
        t = L.ones(2)
        a = L.Tensor(t)
        a[0] = 5
        assert t[0].item() == 5 and a is not t  # an alias of a tensor of the default dtype
        assert L.Tensor(L.ones(2, dtype=L.int64)).dtype == L.int64  # an alias whatever its dtype
        for bad, exc in ((lambda: L.FloatTensor(L.ones(2, dtype=L.int64)), TypeError), (lambda: L.Tensor(-1), RuntimeError),
                         (lambda: L.Tensor("ab"), TypeError)):
            with pytest.raises(exc):
                bad()
    x = ember.Tensor([3.0])
    assert not x._is_view() and x.grad_fn is None
    x.requires_grad_()
    (x * x).sum().backward()
    assert x.grad.tolist() == [6.0]

    class Sub(ember.Tensor):
        pass
    s = Sub([1.0, 2.0])
    assert type(s) is Sub and s.tolist() == [1.0, 2.0]


def test_pickle_tensors_modules_and_devices():
    import copy
    import pickle
    cases = [ember.ones(2, 3), ember.arange(6).reshape(2, 3).t(), ember.tensor(True), ember.zeros(0, 2),
             ember.randn(3, dtype=ember.bfloat16), ember.randn(2, dtype=ember.complex64),
             ember.ones(2, requires_grad=True), ember.tensor(2.5, dtype=ember.float64)]
    for t in cases:
        u = pickle.loads(pickle.dumps(t))
        assert u.dtype == t.dtype and u.shape == t.shape and u.requires_grad == t.requires_grad
        assert ember.equal(u.detach(), t.detach()) and u.is_leaf
        if u.numel():
            before = t.detach().clone()
            u.detach().zero_()  # its own memory
            assert ember.equal(t.detach(), before)
    m = pickle.loads(pickle.dumps(ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))))
    assert type(m[0].weight).__name__ == "Parameter" and list(m.state_dict())[0] == "0.weight"
    assert pickle.loads(pickle.dumps(ember.device("cpu"))) == ember.device("cpu")
    assert ember.equal(copy.copy(ember.arange(3)), ember.arange(3))


_IMPORTS = [
    "from {L}.nn.common_types import _size_2_t, _ratio_any_t",
    "from {L}.nn.attention import SDPBackend, sdpa_kernel",
    "from {L}.types import Number, Device",
    "from {L}.utils._pytree import tree_map, tree_flatten, tree_unflatten, tree_leaves",
]


@pytest.mark.parametrize("stmt", _IMPORTS)
def test_module_paths_import_as_torch(stmt):
    exec(stmt.format(L="torch"), {})
    exec(stmt.format(L="ember"), {})


def test_sdpa_kernel_and_pytree_as_torch():
    from ember.utils import _pytree as ep
    from torch.utils import _pytree as tp
    q = {"torch": torch.randn(1, 2, 3, 4)}
    q["ember"] = ember.from_numpy(q["torch"].numpy().copy())
    for L in (torch, ember):
        A = L.nn.attention
        x = q[L.__name__]
        with A.sdpa_kernel([A.SDPBackend.MATH]):
            assert L.nn.functional.scaled_dot_product_attention(x, x, x).shape == (1, 2, 3, 4)
        with A.sdpa_kernel(A.SDPBackend.EFFICIENT_ATTENTION):
            with pytest.raises(RuntimeError, match="No viable backend"):
                L.nn.functional.scaled_dot_product_attention(x, x, x)
        L.nn.functional.scaled_dot_product_attention(x, x, x)  # allowed again after the block
    tree = {"a": [1, (2, 3)], "b": {"c": 4}}
    for P in (tp, ep):
        assert P.tree_map(lambda v: v * 10, tree) == {"a": [10, (20, 30)], "b": {"c": 40}}
        assert P.tree_map(lambda u, v: u + v, tree, tree)["a"][1] == (4, 6)
        leaves, spec = P.tree_flatten(tree)
        assert leaves == [1, 2, 3, 4] and P.tree_unflatten([v + 1 for v in leaves], spec)["b"]["c"] == 5
        assert P.tree_leaves(tree, is_leaf=lambda v: isinstance(v, tuple)) == [1, (2, 3), 4]


_BAD_INPUT = {
    "Tensor_huge": lambda L: L.Tensor(2**62, 2**62),
    "FloatTensor_overflow": lambda L: L.FloatTensor(2**70),
    "Tensor_two_lists": lambda L: L.Tensor([1], [2]),
    "LongTensor_ragged": lambda L: L.LongTensor([[1], [2, 3]]),
    "Tensor_negative": lambda L: L.Tensor(2, -3),
    "make_tensor_huge": lambda L: L.testing.make_tensor(2**40, 2**40, dtype=L.float32, device="cpu"),
    "make_tensor_negative": lambda L: L.testing.make_tensor(-1, dtype=L.float32, device="cpu"),
    "make_tensor_low_high": lambda L: L.testing.make_tensor(2, dtype=L.float32, device="cpu", low=3, high=1),
    "prune_no_such_tensor": lambda L: L.nn.utils.prune.l1_unstructured(L.nn.Linear(2, 2), "nope", 1),
    "prune_structured_1d": lambda L: L.nn.utils.prune.ln_structured(L.nn.Linear(2, 2), "bias", 1, 2, 0),
    "prune_bad_dim": lambda L: L.nn.utils.prune.ln_structured(L.nn.Linear(2, 2), "weight", 1, 2, 5),
    "compile_not_callable": lambda L: L.compile(3),
    "sync_bn_wrong_channels": lambda L: L.nn.SyncBatchNorm(2)(L.ones(2, 3)),
    "assert_close_objects": lambda L: L.testing.assert_close(object(), object()),
    "sdpa_kernel_not_a_list": lambda L: L.nn.attention.sdpa_kernel("math").__enter__(),
}


@pytest.mark.parametrize("name", sorted(_BAD_INPUT))
def test_bad_input_raises_as_torch(name):
    import torch.nn.attention  # noqa: F401  (submodules torch does not import itself)
    import torch.nn.utils.prune  # noqa: F401
    raised = {}
    for L in (torch, ember):
        with pytest.raises(Exception) as info:
            _BAD_INPUT[name](L)
        raised[L.__name__] = type(info.value)
    assert raised["ember"] is raised["torch"], raised


_SYM_CASES = [("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_int", (True,)), ("sym_int", (7,)),
              ("sym_float", (3,)), ("sym_max", (2, 3.5)), ("sym_max", (3, 2.0)), ("sym_max", (2, 3)),
              ("sym_min", (2, 3)), ("sym_min", (True, 2)), ("sym_min", (1.5, 2)), ("sym_not", (True,)),
              ("sym_not", (0,)), ("sym_sqrt", (4,)), ("sym_sqrt", (2.25,)), ("sym_ite", (True, 1, 2)),
              ("sym_ite", (False, 1, 2)), ("sym_sum", ([1, 2, 3],)), ("sym_sum", ((1.5, 2),))]


@pytest.mark.parametrize("name,args", _SYM_CASES)
def test_sym_helpers_on_plain_numbers_as_torch(name, args):
    got, want = getattr(ember, name)(*args), getattr(torch, name)(*args)
    assert got == want and type(got) is type(want)


def test_sym_helpers_errors_and_classes_as_torch():
    from conftest import same_error
    same_error(lambda: ember.sym_int("a"), lambda: torch.sym_int("a"))
    same_error(lambda: ember.sym_ite(0, 1, 2), lambda: torch.sym_ite(0, 1, 2))
    same_error(lambda: ember.sym_not(ember.tensor([True, False])), lambda: torch.sym_not(torch.tensor([True, False])))
    assert ember.sym_not(ember.tensor(True)) is torch.sym_not(torch.tensor(True)) is False
    assert not isinstance(3, ember.SymInt) and not isinstance(1.0, (ember.SymFloat, ember.SymBool))


def test_top_level_names_of_amp_errors_and_build_flags():
    assert ember.GradScaler is ember.amp.GradScaler  # torch.GradScaler is torch.amp.GradScaler
    assert issubclass(ember.OutOfMemoryError, RuntimeError) and issubclass(torch.OutOfMemoryError, RuntimeError)
    assert ember.cuda.OutOfMemoryError is ember.OutOfMemoryError and torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
    for flag in ("has_lapack", "has_openmp", "has_spectral"):
        assert getattr(ember, flag) is getattr(torch, flag) is True
    assert ember.has_mkl is ember.backends.mkl.is_available()


def test_tensor_accelerator_flags_false_as_on_cpu_tensors():
    for flag in ("is_mps", "is_xpu", "is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_xla"):
        assert getattr(ember.ones(2), flag) is getattr(torch.ones(2), flag) is False


def test_cpu_streams_and_events_for_device_agnostic_code():
    for lib in (ember, torch):
        mod = lib.get_device_module("cpu")
        s = mod.current_stream()
        assert isinstance(s, mod.Stream) and mod.is_initialized()
        with mod.stream(s):
            e = mod.Event()
            e.record()
            assert e.query()
            e.synchronize()
            e.wait()
        mod.Stream(priority=0).wait_stream(s)
        mod.set_device("cpu")


def test_set_multithreading_enabled_restores_like_torch():
    from ember.autograd import grad_mode
    assert grad_mode._multithreading is True
    with ember.autograd.set_multithreading_enabled(False):
        assert grad_mode._multithreading is False
        x = ember.ones(3, requires_grad=True)
        (x * 2).sum().backward()  # backward runs the same (on the calling thread) either way
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert grad_mode._multithreading is True

    @ember.autograd.set_multithreading_enabled(False)
    def inner():
        return grad_mode._multithreading
    assert grad_mode._multithreading is True and inner() is False and grad_mode._multithreading is True
    # torch's decorates and restores the same way
    assert torch.autograd.set_multithreading_enabled(False)(lambda: 1)() == 1


def test_cond_runs_the_branch_pred_chooses_as_torch():
    x = ember.tensor([1.0, 2.0])
    assert ember.cond(ember.tensor(True), lambda a: a + 1, lambda a: a - 1, (x,)).tolist() == [2.0, 3.0]
    assert ember.cond(0, lambda a: a + 1, lambda a: a - 1, [x]).tolist() == [0.0, 1.0]
    assert ember.cond(2.5, lambda: 1, lambda: 2) == 1
    from conftest import same_error
    tx = torch.tensor([1.0, 2.0])
    for bad in ("a", None):
        same_error(lambda: ember.cond(bad, lambda: 1, lambda: 2), lambda: torch.cond(bad, lambda: 1, lambda: 2))
    same_error(lambda: ember.cond(ember.tensor([True, False]), lambda a: a, lambda a: a, (x,)),
               lambda: torch.cond(torch.tensor([True, False]), lambda a: a, lambda a: a, (tx,)))


def test_func_linearize_functionalize_and_batch_norm_replacement_as_torch():
    import numpy as np
    from conftest import same_error
    x = np.array([0.5, -1.0, 2.0])

    def f(a, b):
        return (a.sin() * b, a + b)
    e_out, e_jvp = ember.func.linearize(f, ember.tensor(x), ember.tensor(x))
    t_out, t_jvp = torch.func.linearize(f, torch.tensor(x), torch.tensor(x))
    for eo, to in zip(e_out, t_out):
        np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-12)
    for tangent in ([1.0, 0.0, 2.0], [0.0, 3.0, -1.0]):
        e_t = e_jvp(ember.tensor(tangent, dtype=ember.float64), ember.ones(3, dtype=ember.float64))
        t_t = t_jvp(torch.tensor(tangent, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
        for a, b in zip(e_t, t_t):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    for bad in (lambda L: (L.ones(4, dtype=L.float64), L.ones(3, dtype=L.float64)),
                lambda L: (L.ones(3), L.ones(3, dtype=L.float64)),
                lambda L: (L.ones(3, dtype=L.float64),)):
        same_error(lambda: e_jvp(*bad(ember)), lambda: t_jvp(*bad(torch)))

    def mutating(a):
        b = a.clone()
        b.add_(1)
        a.mul_(2)
        return b
    a_e, a_t = ember.tensor(x), torch.tensor(x)
    r_e, r_t = ember.func.functionalize(mutating)(a_e), torch.func.functionalize(mutating)(a_t)
    np.testing.assert_allclose(r_e.numpy(), r_t.numpy())
    np.testing.assert_allclose(a_e.numpy(), a_t.numpy())  # input mutations kept, as torch's
    same_error(lambda: ember.func.functionalize(mutating, remove="x"),
               lambda: torch.func.functionalize(mutating, remove="x"))
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.BatchNorm1d(3), lib.nn.InstanceNorm1d(3, track_running_stats=True))
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        assert m[0].running_mean is None and m[0].num_batches_tracked is None and not m[0].track_running_stats
        assert m[1].running_mean is not None and m[1].track_running_stats  # not a batch norm
        assert list(m.state_dict()) == ["0.weight", "0.bias", "1.running_mean", "1.running_var",
                                        "1.num_batches_tracked"]


def test_convert_conv_weight_memory_format_as_torch():
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Linear(2, 2),
                              lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 3), lib.nn.Conv3d(2, 2, 1)))
        before = m[0].weight.detach().clone()
        assert lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last) is m
        assert tuple(m[0].weight.stride()) == (27, 1, 9, 3) and tuple(m[2][0].weight.stride()) == (18, 1, 6, 2)
        assert type(m[0].weight).__name__ == "Parameter" and m[0].weight.requires_grad
        assert lib.equal(m[0].weight.detach(), before) and m[1].weight.is_contiguous()
        assert m[2][1].weight.is_contiguous()  # a 3d conv: only the 3d conversion touches it
        lib.nn.utils.convert_conv3d_weight_memory_format(m, lib.channels_last_3d)
        assert m[2][1].weight.is_contiguous(memory_format=lib.channels_last_3d)


def test_bad_inputs_to_this_sessions_entry_points_as_torch():
    from conftest import same_error
    for make in (lambda L: L.nn.utils.convert_conv2d_weight_memory_format(3, L.channels_last),
                 lambda L: L.nn.utils.convert_conv2d_weight_memory_format(L.nn.Conv2d(1, 1, 1), "x"),
                 lambda L: L.func.replace_all_batch_norm_modules_(3),
                 lambda L: L.func.linearize(lambda a: a * 2, 3.0),
                 lambda L: L.func.linearize(lambda a, b: a * b, L.ones(2), 3),
                 lambda L: L.func.linearize(3, L.ones(2)),
                 lambda L: L.cond(True, 3, lambda: 1),
                 lambda L: L.optim.Adafactor([]),
                 lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 2 ** 62, [5]),
                 lambda L: L.sym_sqrt(-1)):
        same_error(lambda: make(ember), lambda: make(torch))


def test_device_generic_stream_and_event_as_torch_on_the_cpu():
    """ember.Stream / ember.Event (torch.Stream / torch.Event): the CPU's stream is complete and in program
    order; recording or waiting on events raises torch's RuntimeError; CUDA devices and accelerator
    indices raise as on a torch without CUDA."""
    for L in (torch, ember):
        s, e = L.Stream("cpu"), L.Event("cpu")
        assert s == L.Stream() and hash(s) == hash(L.Stream(L.device("cpu"), priority=3))
        assert (s.device_type, s.device_index, s.stream_id, str(s.device)) == (0, -1, 0, "cpu")
        assert s.query() and e.query() and not s.is_capturing() and e.event_id == 0
        assert s.synchronize() is None and s.wait_event(e) is None and e.synchronize() is None and e.wait(s) is None
        assert repr(s).endswith("Stream device_type=cpu, device_index=-1, stream_id=0")
        for f in (lambda: s.record_event(), lambda: s.wait_stream(s), lambda: e.record(), lambda: s.native_handle,
                  lambda: L.Stream("cuda"), lambda: L.Event("cuda"), lambda: L.Stream(0)):
            with pytest.raises(RuntimeError):
                f()
        with pytest.raises(ValueError):
            e.elapsed_time(e)
        with pytest.raises(NotImplementedError):
            e.ipc_handle()
