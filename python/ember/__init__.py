"""Ember: tensors and autograd with PyTorch's API on a C++ core."""
import builtins as _builtins  # this module shadows max, sum, abs, ... with tensor functions
import os as _os


def _choose_openblas_kernels():
    # Note [OpenBLAS kernels on newer CPUs]: the OpenBLAS that Ember links (Debian 12's 0.3.21,
    # also what the wheel bundles) picks its GEMM kernels by CPU model and falls back to its
    # generic SSE3 ("Prescott") kernels on models it predates (Sapphire Rapids and later): 5x
    # slower GEMM than its AVX-512 kernels there. OPENBLAS_CORETYPE, read when the library loads
    # (with ember._C, just below), names the kernels to use instead; chosen from the CPU's
    # features (CPUID, ember._cpu_probe), so known CPUs get the kernels OpenBLAS would pick for
    # them anyway. A value the user set is kept; ours is removed again once the library has
    # read it (other libraries and child processes see the environment as it was).
    if "OPENBLAS_CORETYPE" in _os.environ:
        return False
    try:
        from ember._cpu_probe import openblas_coretype
    except ImportError:  # a build without the probe: OpenBLAS chooses by itself
        return False
    core = openblas_coretype()
    if core is None:
        return False
    _os.environ["OPENBLAS_CORETYPE"] = core
    return True


_set_openblas_coretype = _choose_openblas_kernels()
try:
    from ember import _C  # noqa: E402
finally:
    if _set_openblas_coretype:
        del _os.environ["OPENBLAS_CORETYPE"]


def _point_at_mkl():
    # Note [MKL GEMM]: PyPI's mkl wheel puts libmkl_rt.so.2 in the environment's lib directory
    # (<prefix>/local/lib for a Debian system Python, ~/.local/lib for --user), off the loader's
    # search path; the core loads it (or not) on the first product that wants it.
    import sys

    for lib in (_os.path.join(sys.prefix, "lib"), _os.path.join(sys.prefix, "local", "lib"),
                _os.path.expanduser("~/.local/lib")):
        path = _os.path.join(lib, "libmkl_rt.so.2")
        if _os.path.exists(path):
            _C._set_mkl_library_path(path)
            return


_point_at_mkl()
from ember._C import (  # noqa: F401
    Tensor, dtype, device,
    bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
    get_default_dtype, set_default_dtype, promote_types, can_cast, result_type,
    get_num_threads, set_num_threads,
    empty, zeros, ones, full, empty_strided, arange, linspace, logspace, eye,
    add, sub, mul, div, true_divide, floor_divide, remainder, pow, neg, relu,
    eq, ne, lt, le, gt, ge, sum, mean, matmul, mm, bmm,
    # views and shape functions
    reshape, ravel, permute, transpose, swapaxes, swapdims, t, adjoint, movedim, moveaxis, squeeze, unsqueeze,
    flatten, unflatten, narrow, select, as_strided, broadcast_to, clone,
    memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d, legacy_contiguous_format,
    Generator, default_generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
    rand, randn, randint, randperm, normal, bernoulli, multinomial, poisson, rand_like, randn_like, randint_like,
    binomial, _standard_gamma, _standard_gamma_grad, igamma, igammac,
)
from ember._C import (  # noqa: F401  (unary math, activations, pointwise ops)
    abs, abs_, absolute, sign, sgn, neg, neg_, negative, negative_, positive,
    exp, exp_, exp2, exp2_, expm1, expm1_, log, log_, log2, log2_, log10, log10_, log1p, log1p_,
    sqrt, sqrt_, rsqrt, rsqrt_, square, square_, sin, sin_, cos, cos_, tan, tan_,
    asin, asin_, acos, acos_, atan, atan_, arcsin, arcsin_, arccos, arccos_, arctan, arctan_,
    sinh, sinh_, cosh, cosh_, tanh, tanh_, asinh, asinh_, acosh, acosh_, atanh, atanh_,
    arcsinh, arcsinh_, arccosh, arccosh_, arctanh, arctanh_, sigmoid, sigmoid_, logit, logit_,
    erf, erf_, erfc, erfc_, erfinv, lgamma, digamma, polygamma, floor, floor_, ceil, ceil_, round, round_,
    trunc, trunc_, fix, fix_, frac, frac_, reciprocal, reciprocal_, nan_to_num, nan_to_num_,
    isnan, isinf, isfinite, isposinf, isneginf, signbit, logical_not, bitwise_not,
    relu_, selu, selu_, celu, celu_, threshold, threshold_,
    clamp, clamp_, clip, clip_, clamp_min, clamp_min_, clamp_max, clamp_max_,
    atan2, arctan2, maximum, minimum, fmax, fmin, hypot, copysign, fmod,
    logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor,
    bitwise_left_shift, bitwise_right_shift, lerp, addcmul, addcdiv, where, isclose, allclose, equal,
)
from ember._C import (  # noqa: F401  (interop: python/src/bind_interop.cpp)
    tensor, as_tensor, asarray, from_numpy, from_dlpack, empty_like, zeros_like, ones_like, full_like,
)
from ember._C import (  # noqa: F401  (reductions, scans, sorting: python/src/bind_reduce.cpp)
    nansum, nanmean, prod, max, min, amax, amin, aminmax, argmax, argmin, all, any,
    count_nonzero, var, std, var_mean, std_mean, norm, logsumexp, softmax, log_softmax,
    cumsum, cumprod, cummax, cummin, logcumsumexp, sort, argsort, msort, topk, kthvalue, median, nanmedian,
    mode, quantile, nanquantile, unique, unique_consecutive, bincount, histc,
)
from ember._C import (  # noqa: F401  (complex numbers: python/src/bind_complex.cpp)
    view_as_real, view_as_complex, real, imag, conj, conj_physical, resolve_conj, resolve_neg, is_conj, is_neg,
    angle, polar, complex,
)
from ember import return_types  # noqa: F401
from ember._size import Size  # noqa: F401
from ember._finfo import finfo, iinfo  # noqa: F401
from ember._C import (  # noqa: F401  (linear algebra: python/src/bind_linalg.cpp)
    mv, dot, vdot, addmm, addmv, baddbmm, addbmm, tensordot,
)
from ember.functional import einsum  # noqa: F401
from ember import linalg  # noqa: F401
from ember.linalg import _svd as svd, _cholesky as cholesky, _qr as qr, _slogdet as slogdet  # noqa: F401
inverse = linalg.inv
matrix_exp = linalg.matrix_exp
from ember.linalg import _geqrf as geqrf, _orgqr as orgqr  # noqa: F401,E402
det = linalg.det
from ember import autograd  # noqa: F401
from ember.autograd.grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled,
)
from ember import _tensor  # noqa: F401  (attaches Python-level Tensor methods)
from ember import random  # noqa: F401
from ember import nn  # noqa: F401
from ember import special  # noqa: F401
from ember import backends  # noqa: F401  (backends.cpu.get_cpu_capability)

# PyTorch's dtype aliases.
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

from ember.version import __version__  # noqa: E402,F401  (ember.version, as torch.version)

from ember._tensor_str import set_printoptions, get_printoptions, printoptions  # noqa: E402,F401


def is_tensor(obj):
    """True if obj is an ember Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def numel(input):
    return input.numel()


# Indexing, assembly and shape ops (python/src/bind_index.cpp).
from ember._C import (  # noqa: F401,E402
    cat, concat, concatenate, stack, hstack, vstack, row_stack, dstack, broadcast_tensors, meshgrid, cartesian_prod,
    combinations, atleast_1d, atleast_2d, atleast_3d, split, split_with_sizes, chunk, tensor_split, unbind, flip,
    fliplr, flipud, roll, tile, repeat_interleave, rot90, narrow_copy, tril, triu, diagonal, diag_embed, diag, trace,
    outer, ger, kron, index_select, gather, scatter, scatter_add, scatter_reduce, index_add, index_copy, index_fill,
    index_put, index_put_, masked_fill, masked_select, masked_scatter, take, take_along_dim, put, nonzero, argwhere,
    searchsorted, bucketize,
)


def broadcast_shapes(*shapes):
    """The shape that tensors of the given shapes broadcast to (RuntimeError when they do not)."""
    out = []
    for s in shapes:
        s = (s,) if hasattr(s, "__index__") else tuple(s)
        for x in s:
            if x < 0:
                raise RuntimeError("Trying to create tensor with negative dimension " + str(x) + ": " + str(list(s)))
        n = _builtins.max(len(out), len(s))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(s)) + list(s)
        res = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                   f"between arg 0 and arg 1.")
            res.append(y if x == 1 else x)
        out = res
    return Size(out)


broadcast_shapes.__module__ = "ember"


from ember._composite import (  # noqa: E402,F401  (aliases and compositions written in Python)
    divide, multiply, subtract, greater, greater_equal, less, less_equal, not_equal, cross, diff, logaddexp,
    logaddexp2, xlogy, isin, heaviside, hsplit, vsplit, dsplit, column_stack, block_diag, tril_indices,
    triu_indices, deg2rad, rad2deg, sinc, inner, float_power, dist, diagflat, trapezoid, trapz, logdet, is_nonzero,
    isreal, addr, cdist, matrix_power, pinverse, cov, corrcoef, vander, unravel_index, gcd, lcm, slice_scatter,
    select_scatter, diagonal_scatter, renorm, ldexp, frexp, cumulative_trapezoid, pdist,
)

# ---- nn ops at top level, as torch has them (convolution: python/src/bind_nn_conv.cpp) ----
from ember._C import (  # noqa: E402,F401
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, convolution,
)
from ember.nn.functional import (  # noqa: E402,F401  (pooling at top level, as torch.max_pool2d etc.)
    max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices, avg_pool1d, adaptive_avg_pool1d,
)
from ember import amp  # noqa: E402
from ember.amp import autocast  # noqa: E402,F401


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for device_type (no argument: CUDA, as torch)."""
    return _C._is_autocast_enabled(device_type or "cuda")


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # the older one-argument form set CUDA's
        device_type, enabled = "cuda", device_type
    _C._set_autocast_enabled(device_type, enabled)


def get_autocast_dtype(device_type):
    return _C._get_autocast_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    _C._set_autocast_dtype(device_type, dtype)


def is_autocast_cpu_enabled():
    return _C._is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _C._set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    return _C._get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    _C._set_autocast_dtype("cpu", dtype)


from ember._C import (  # noqa: E402,F401
    _is_autocast_cache_enabled as is_autocast_cache_enabled, _set_autocast_cache_enabled as set_autocast_cache_enabled,
    _clear_autocast_cache as clear_autocast_cache, _autocast_increment_nesting as autocast_increment_nesting,
    _autocast_decrement_nesting as autocast_decrement_nesting,
)

from ember._threads_determinism import (  # noqa: E402,F401
    use_deterministic_algorithms, are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, get_deterministic_debug_mode, get_num_interop_threads, set_num_interop_threads,
)
# recurrent cells (ops/nn_rnn.cpp) and layers (nn/modules/rnn.py) as functions
from ember._C import lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell  # noqa: E402,F401
from ember.nn.modules.rnn import lstm, gru, rnn_tanh, rnn_relu  # noqa: E402,F401


def adaptive_max_pool1d(input, output_size):
    """torch.adaptive_max_pool1d: (values, indices)."""
    return nn.functional.adaptive_max_pool1d(input, output_size, return_indices=True)

# ---- optim and serialization (issue 12) ----


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj in torch.save's zip format (see ember.serialization.save)."""
    from ember.serialization import save as _save
    return _save(obj, f, pickle_module, pickle_protocol, _use_new_zipfile_serialization, _disable_byteorder_record)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads a file written by ember.save or torch.save (see ember.serialization.load)."""
    from ember.serialization import load as _load
    return _load(f, map_location, pickle_module, weights_only=weights_only, mmap=mmap, **pickle_load_args)


_symbolic_names = frozenset(("SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not",
                             "sym_sqrt", "sym_ite", "sym_sum"))


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError (torch.cuda.OutOfMemoryError): an accelerator allocation failed. A CPU
    allocation that fails raises RuntimeError, as torch's does."""


def __getattr__(name):  # submodules imported on first use (import time)
    if name in ("optim", "serialization", "profiler", "cpu", "distributions", "distributed", "futures", "func"):
        import importlib
        return importlib.import_module("ember." + name)
    if name in ("jit", "testing", "compiler", "cuda", "hub", "__config__", "types"):
        import importlib
        return importlib.import_module("ember." + name)
    if name == "compile":  # torch.compile's interface, run eagerly (python/ember/_compile.py)
        import importlib
        return importlib.import_module("ember._compile").compile
    if name == "cond":  # torch.cond, eager (python/ember/_compile.py)
        import importlib
        return importlib.import_module("ember._compile").cond
    if name == "GradScaler":  # torch.GradScaler is torch.amp.GradScaler
        import importlib
        return importlib.import_module("ember.amp").GradScaler
    if name in _symbolic_names:  # torch.sym_int and friends on plain numbers (python/ember/_symbolic.py)
        import importlib
        return getattr(importlib.import_module("ember._symbolic"), name)
    if name == "has_mkl":  # torch's build flags: MKL is ember's when installed (Note [MKL GEMM])
        return backends.mkl.is_available()
    if name in ("has_lapack", "has_openmp", "has_spectral"):
        return True
    if name in ("Stream", "Event"):  # torch.Stream / torch.Event, device-generic (python/ember/_stream.py)
        import importlib
        return getattr(importlib.import_module("ember._stream"), name)
    if name == "vmap":  # torch.vmap is torch.func.vmap
        import importlib
        return importlib.import_module("ember.func").vmap
    raise AttributeError(f"module 'ember' has no attribute {name!r}")

# Anomaly-mode queries (torch.is_anomaly_enabled): process-wide, as torch's.
from ember._C import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: F401,E402

# Frames under this directory are ember's own in profiler and memory-history stacks.
_C._profiler._set_package_dir(__import__("os").path.dirname(__file__) + __import__("os").sep)
# ---- Fourier transforms and windows: ember.fft, ember.signal, stft/istft (python/ember/_spectral.py) ----
from ember import fft  # noqa: E402,F401
from ember import signal  # noqa: E402,F401
from ember._spectral import (  # noqa: E402,F401
    stft, istft, hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window,
)
Tensor.stft = stft
Tensor.istft = istft

# ---- issue 18, API breadth: aten-style nn entry points, *_copy forms, utilities (python/ember/_api_extra.py),
# math compositions (python/ember/_api_math.py), layouts and storages (python/ember/_storage.py) ----
from ember._storage import layout, strided, UntypedStorage, TypedStorage  # noqa: E402,F401
from ember._api_extra import (  # noqa: E402,F401
    dropout, dropout_, alpha_dropout, alpha_dropout_, feature_dropout, feature_dropout_, feature_alpha_dropout,
    feature_alpha_dropout_, native_dropout, batch_norm, instance_norm, layer_norm, group_norm, rms_norm,
    native_layer_norm, native_batch_norm, native_group_norm, norm_except_dim, embedding, embedding_bag,
    slice_inverse, prepare_multiprocessing_environment,
    embedding_renorm_, bilinear, cosine_similarity, pairwise_distance, pixel_shuffle, pixel_unshuffle,
    channel_shuffle, native_channel_shuffle, prelu, hardshrink, rrelu, rrelu_, constant_pad_nd, conv_tbc,
    grid_sampler, grid_sampler_2d, grid_sampler_3d, affine_grid_generator, kl_div, binary_cross_entropy_with_logits,
    margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss, triplet_margin_loss, poisson_nll_loss,
    ctc_loss, alias_copy, as_strided_copy, detach_copy, diagonal_copy, expand_copy, permute_copy, select_copy,
    slice_copy, split_copy, split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy, unbind_copy, unfold_copy,
    unsqueeze_copy, view_copy, view_as_real_copy, view_as_complex_copy, unsafe_chunk, unsafe_split,
    unsafe_split_with_sizes, as_strided_scatter, as_strided_, addmv_, conj_physical_, deg2rad_, rad2deg_, gcd_,
    lcm_, ldexp_, sinc_, xlogy_, fill_, zero_, detach_, resize_as_, i0_, fill, detach, is_inference, is_same_size,
    is_signed, rsub, scalar_tensor, range, empty_permuted, chain_matmul, frobenius_norm, nuclear_norm, typename,
    is_storage, is_distributed, get_device, set_default_device, get_default_device, set_float32_matmul_precision,
    get_float32_matmul_precision, set_flush_denormal, set_warn_always, is_warn_always_enabled, init_num_threads,
    compiled_with_cxx11_abi, set_anomaly_enabled, set_default_tensor_type, get_device_module, thread_safe_generator,
    to_dlpack, nonzero_static, frombuffer, from_file,
)
from ember._lobpcg import lobpcg  # noqa: E402,F401
from ember._api_math import (  # noqa: E402,F401
    i0, mvlgamma, nextafter, histogram, histogramdd, gradient, index_reduce, triangular_solve, cholesky_solve,
    cholesky_inverse, lu, lu_unpack, lu_solve, ormqr, svd_lowrank, pca_lowrank,
    segment_reduce,
)
import math as _math  # noqa: E402

e, pi, inf, nan, newaxis = _math.e, _math.pi, _math.inf, _math.nan, None


def _attach_api_methods():
    from ember import _api_math as m, _api_extra as x
    T = Tensor

    from ember._argcheck import check_out_overlap

    def inplace(fn, elementwise=False):
        def method(self, *args, **kwargs):
            r = fn(self, *args, **kwargs)
            if elementwise:  # self is the written-to tensor: an operand partially overlapping it is refused
                check_out_overlap(self, args)
            return self.copy_(r)
        method.__name__ = fn.__name__ + "_"
        return method
    for name, fn in [("i0", m.i0), ("mvlgamma", m.mvlgamma), ("nextafter", m.nextafter),
                     ("index_reduce", m.index_reduce), ("cholesky_solve", m.cholesky_solve),
                     ("cholesky_inverse", m.cholesky_inverse), ("triangular_solve", m.triangular_solve),
                     ("hardshrink", x.hardshrink), ("prelu", x.prelu), ("unsafe_chunk", x.unsafe_chunk),
                     ("unsafe_split", x.unsafe_split), ("unsafe_split_with_sizes", x.unsafe_split_with_sizes),
                     ("as_strided_scatter", x.as_strided_scatter), ("lu", m.lu), ("lu_solve", m.lu_solve),
                     ("ormqr", m.ormqr), ("slice_inverse", x.slice_inverse)]:
        if not hasattr(T, name):
            setattr(T, name, fn)
    for name in ("i0", "mvlgamma", "nextafter", "index_reduce"):
        if not hasattr(T, name + "_"):
            setattr(T, name + "_", inplace(getattr(m, name), name in ("i0", "nextafter")))

    def histogram_method(self, bins=100, *, range=None, weight=None, density=False):
        return m.histogram(self, bins, range=range, weight=weight, density=density)
    T.histogram = histogram_method


_attach_api_methods()


def _attach_device_context():
    # `with ember.device("cpu"):` as torch's: the default device inside the block (ember's is the CPU).
    def enter(self):
        set_default_device(self)
        return self

    def exit_(self, *exc):
        set_default_device(None)
    device.__enter__, device.__exit__ = enter, exit_


_attach_device_context()


def _tensor_cuda(self, device=None, non_blocking=False, memory_format=None):
    """Tensor.cuda(): ember has no GPU (ember.cuda.CudaUnavailableError, an AssertionError as torch's)."""
    from ember.cuda import _unavailable
    _unavailable()


Tensor.cuda = _tensor_cuda

# torch's legacy constructors: ember.Tensor(...), FloatTensor and the other typed classes.
from ember import _legacy  # noqa: E402

globals().update(_legacy.TENSOR_TYPES)
