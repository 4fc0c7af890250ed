"""torch.* names that are thin layers over ember ops: the aten-style entry points of nn ops (torch.dropout,
torch.batch_norm, ... with their positional signatures and integer reductions), *_copy forms of views,
in-place forms, and small utilities. Autograd flows through the ops they call. Checked against torch
in tests/python/test_api_names.py; tests/python/test_api_coverage.py lists what is still missing.
"""
import builtins
import math

import ember as _E
from ember import _C

# aten's Reduction enum; the torch.* loss entry points default to 0 (none), unlike torch.nn.functional.
_brange = builtins.range  # this module defines torch.range
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _F():
    import ember.nn.functional as F
    return F


def _red(reduction):
    if isinstance(reduction, str):
        return reduction
    return _REDUCTION.get(reduction, "sum")  # aten sums for any value other than none/mean


# ---- nn ops at top level, with aten's argument order ----

def dropout(input, p, train):
    return _F().dropout(input, p, train)


def dropout_(input, p, train):
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Zeroes whole channels (dim 1) with probability p, as torch.feature_dropout."""
    return _F().dropout2d(input, p, train) if input.dim() > 3 else _F().dropout1d(input, p, train)


def feature_dropout_(input, p, train):
    return input.copy_(feature_dropout(input, p, train)) if train and p > 0 else input


def feature_alpha_dropout(input, p, train):
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def native_dropout(input, p, train):
    """(output, mask): output = input * mask / (1 - p) in training, (input, all-true mask) otherwise."""
    if not train or p == 0:
        return input.clone(), _E.ones_like(input, dtype=_E.bool)
    if p == 1:
        return input * 0, _E.zeros_like(input, dtype=_E.bool)
    mask = _E.rand_like(input, dtype=_E.float32) >= p
    return input * mask / (1 - p), mask


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _F().group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F().rms_norm(input, normalized_shape, weight, eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(out, mean, rstd), mean and rstd keeping the normalized dims as size 1."""
    dims = tuple(_brange(input.dim() - len(normalized_shape), input.dim()))
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    mean = input.mean(dims, keepdim=True)
    rstd = _E.rsqrt(input.var(dims, correction=0, keepdim=True) + eps)
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(out, save_mean, save_invstd); the saved statistics are empty in evaluation mode."""
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = input.new_empty((0,))
        return out, empty, empty.clone()
    dims = [d for d in _brange(input.dim()) if d != 1]
    mean = input.mean(dims)
    return out, mean, _E.rsqrt(input.var(dims, correction=0) + eps)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(out, mean, rstd) with mean and rstd of shape (N, group)."""
    out = _F().group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, -1)
    return out, x.mean(-1), _E.rsqrt(x.var(-1, correction=0) + eps)


def norm_except_dim(v, pow=2, dim=0):
    """The p-norm of v over every dim but `dim` (kept as size 1, as weight_norm uses it); dim=-1: all dims."""
    from ember import linalg
    if dim == -1:
        return linalg.vector_norm(v, pow)
    dims = [d for d in _brange(v.dim()) if d != dim]
    return linalg.vector_norm(v, pow, dims, keepdim=True)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """The aten form of F.embedding_bag: (output, offset2bag, bag_size, max_indices), mode 0/1/2 = sum/mean/max.

    The three bookkeeping tensors are what torch's CPU kernel returns (its backward's inputs), in the
    indices' dtype: offset2bag is each index's bag, except empty for the sum of a float32/float16/bfloat16
    weight without padding_idx (torch's fast path keeps none); bag_size counts each bag's non-padding
    indices (zeros of len(offsets) for sum); max_indices is, for max, the weight row each output element
    came from (the first one on ties, 0 for an empty bag), bag_size again for mean and zeros for sum."""
    if not isinstance(offsets, _C.Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    if indices.dtype not in (_E.int64, _E.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {typename(indices)} instead (while checking arguments for "
                           "embedding_bag)")
    F = _F()
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                          mode=("sum", "mean", "max")[mode], sparse=sparse, per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    it = indices.dtype
    with _E.no_grad():
        n = indices.shape[0]
        nbags = offsets.shape[0] - (1 if include_last_offset else 0)
        starts = offsets[:nbags].to(_E.int64)
        # the bag of each position: the last bag whose start is at or before it (the last bag runs to the end)
        bag = (_E.searchsorted(starts, _E.arange(n), right=True) - 1).clamp_min(0)
        keep = _E.ones(n, dtype=_E.bool)
        if padding_idx is not None:
            pad = padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx
            keep = indices != pad
        if mode == 0:
            fast = padding_idx is None and weight.dtype in (_E.float32, _E.float16, _E.bfloat16)
            offset2bag = _E.empty(0, dtype=it) if fast else bag.to(it)
            zeros = _E.zeros(offsets.shape[0], dtype=it)
            return out, offset2bag, zeros, zeros.clone()
        size = _E.zeros(nbags, dtype=_E.int64).index_add_(0, bag, keep.to(_E.int64))
        if mode == 1:
            return out, bag.to(it), size.to(it), size.to(it)
        # max: for each bag and column, the first kept position holding the bag's maximum
        rows = weight.detach()[indices.to(_E.int64)]
        d = weight.shape[1]
        hit = (rows == out.detach()[bag]) & keep.unsqueeze(1)
        pos = _E.where(hit, _E.arange(n).unsqueeze(1).expand(n, d), _E.full((n, d), n))
        first = _E.full((nbags, d), n).scatter_reduce(0, bag.unsqueeze(1).expand(n, d), pos, "amin")
        ext = _E.cat([indices.to(_E.int64), _E.zeros(1, dtype=_E.int64)])  # position n: an empty bag, row 0
        return out, bag.to(it), size.to(it), ext[first].to(it)


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of the view src[..., start:end:step (on dim)] as functionalization uses it: a view of
    input's storage with src's sizes, strides and offset. Only src's geometry matters, as in torch (the
    slice arguments are type-checked but not used); input's storage must be large enough for it."""
    for pos, (name, v, opt) in enumerate((("dim", dim, False), ("start", start, True), ("end", end, True),
                                          ("step", step, False)), start=3):
        if not ((isinstance(v, int) and not isinstance(v, bool)) or (opt and v is None)):
            raise TypeError(f"slice_inverse(): argument '{name}' (position {pos}) must be int, not "
                            f"{type(v).__name__}")
    return input.as_strided(tuple(src.shape), src.stride(), src.storage_offset())


def prepare_multiprocessing_environment(path):
    """torch's hook run before worker processes start (torch.multiprocessing); torch's own does nothing
    with `path` on a CPU build, and neither does ember's (no process-wide state needs preparing)."""
    return None


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescales, in place, the rows of `input` named by `indices` whose norm exceeds max_norm."""
    from ember import linalg
    with _E.no_grad():
        rows = _E.unique(indices.reshape(-1))
        norms = linalg.vector_norm(input[rows], norm_type, dim=1, keepdim=True)
        scale = _E.where(norms > max_norm, max_norm / (norms + 1e-7), _E.ones_like(norms))
        input[rows] = input[rows] * scale
    return input


def bilinear(input1, input2, weight, bias=None):
    return _F().bilinear(input1, input2, weight, bias)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _F().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


def pixel_shuffle(input, upscale_factor):
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _F().pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    return _F().channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def prelu(input, weight):
    return _F().prelu(input, weight)


def hardshrink(input, lambd=0.5):
    return _F().hardshrink(input, lambd)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training, inplace=True)


def constant_pad_nd(input, pad, value=0):
    return _C._constant_pad_nd(input, pad, value)


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution on (time, batch, channel) input with a (width, in, out) weight."""
    if input.dim() != 3:
        raise RuntimeError(f"Input must have 3 dims: time, batch, in_channel (got {input.dim()})")
    if weight.dim() != 3:
        raise RuntimeError(f"Weight tensor must have 3 dims: kernel_width, in_channels, out_channels (got "
                           f"{weight.dim()})")
    if bias.dim() != 1:
        raise RuntimeError(f"Bias must be 1-D (got {bias.dim()})")
    out = _E.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return _F().grid_sample(input, grid, _GRID_MODES[interpolation_mode], _GRID_PADDING[padding_mode],
                            align_corners)


grid_sampler_2d = grid_sampler
grid_sampler_3d = grid_sampler


def affine_grid_generator(theta, size, align_corners):
    return _F().affine_grid(theta, list(size), align_corners)


# ---- losses with integer reductions ----

def kl_div(input, target, reduction=0, log_target=False):
    return _F().kl_div(input, target, reduction=_red(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_red(reduction),
                                                 pos_weight=pos_weight)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_red(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _F().hinge_embedding_loss(input, target, margin, reduction=_red(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_red(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_red(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_red(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    if isinstance(input_lengths, _E.Tensor):
        input_lengths = input_lengths.tolist()
    if isinstance(target_lengths, _E.Tensor):
        target_lengths = target_lengths.tolist()
    return _F().ctc_loss(log_probs, targets, list(input_lengths), list(target_lengths), blank, _red(reduction),
                         zero_infinity)


# ---- *_copy: the view ops' results in fresh (contiguous) memory ----

def _copy_of(view_name):
    def fn(input, *args, out=None, **kwargs):
        r = getattr(_E.Tensor, view_name)(input, *args, **kwargs)
        if isinstance(r, (tuple, list)):
            return [x.clone(memory_format=_E.contiguous_format) for x in r]
        r = r.clone(memory_format=_E.contiguous_format)
        if out is not None:
            out.resize_(r.shape).copy_(r)
            return out
        return r
    fn.__name__ = view_name + "_copy"
    fn.__doc__ = f"{view_name}(...) copied into new memory: the result shares no storage with input."
    return fn


_VIEW_COPIES = ["as_strided", "detach", "diagonal", "expand", "permute", "select", "split", "split_with_sizes",
                "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze", "view", "view_as_real",
                "view_as_complex"]
for _n in _VIEW_COPIES:
    globals()[_n + "_copy"] = _copy_of(_n)


def alias_copy(input, *, out=None):
    r = input.clone(memory_format=_E.contiguous_format)
    return r if out is None else out.resize_(r.shape).copy_(r)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    idx = (slice(None),) * (dim % max(input.dim(), 1)) + (slice(start, end, step),)
    r = input[idx].clone(memory_format=_E.contiguous_format)
    return r if out is None else out.resize_(r.shape).copy_(r)


def unsafe_chunk(input, chunks, dim=0):
    return _E.chunk(input, chunks, dim)


def unsafe_split(input, split_size, dim=0):
    return _E.split(input, split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _E.split_with_sizes(input, split_sizes, dim)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input (copied, contiguous) with the elements its as_strided(size, stride, storage_offset) view
    would show replaced by src; a scatter into the flat copy, so both inputs get gradients."""
    pos = _E.arange(input.numel()).as_strided(size, stride, storage_offset if storage_offset is not None else 0)
    if tuple(pos.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(pos.shape)}")
    flat = input.reshape(-1).scatter(0, pos.reshape(-1), src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)


def as_strided_(input, size, stride, storage_offset=None):
    return input.as_strided_(size, stride, storage_offset)


# ---- in-place forms of functions that exist as Tensor methods ----

def _inplace_fn(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"In-place form: input.{name}(...)."
    return fn


for _n in ["addmv_", "conj_physical_", "deg2rad_", "rad2deg_", "gcd_", "lcm_", "ldexp_", "sinc_", "xlogy_",
           "fill_", "zero_", "detach_", "resize_as_", "i0_"]:
    globals()[_n] = _inplace_fn(_n)


def fill(input, value):
    """A new tensor of input's shape and dtype filled with value (a number or a 0-d tensor)."""
    if isinstance(value, _E.Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               f"dimensions.")
        return value.to(input.dtype).expand(input.shape).clone()  # differentiable in value, as torch
    return _E.full_like(input, value)


def detach(input):
    return input.detach()


def is_inference(input):
    return input.is_inference()


def is_same_size(input, other):
    return input.is_same_size(other)


def is_signed(input):
    return input.is_signed()


def rsub(input, other, alpha=1):
    """other - alpha * input."""
    return _E.sub(other, input, alpha=alpha) if isinstance(other, _E.Tensor) else _E.sub(
        _E.full_like(input, other) if not isinstance(other, bool) else other, input, alpha=alpha)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """A 0-d tensor holding s, of the default float dtype unless dtype says otherwise."""
    if dtype is None:
        dtype = _E.complex128 if isinstance(s, complex) and _E.get_default_dtype() == _E.float64 else (
            _E.complex64 if isinstance(s, complex) else _E.get_default_dtype())
    return _E.tensor(s, dtype=dtype, device=device, requires_grad=requires_grad)


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Deprecated torch.range: like arange but the end is included; default float dtype."""
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dtype = dtype or _E.get_default_dtype()
    r = (_E.arange(n, dtype=_E.float64) * step + start).to(dtype)
    if out is not None:
        return out.resize_(r.shape).copy_(r)
    return r.requires_grad_(requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of logical shape `size` whose memory is laid out in physical_layout's dim order."""
    size, physical_layout = list(size), list(physical_layout)
    if sorted(physical_layout) != list(_brange(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"or physical_layout is not a permutation: {physical_layout}")
    phys = _E.empty([size[d] for d in physical_layout], dtype=dtype, device=device)
    inv = [physical_layout.index(d) for d in _brange(len(size))]
    return phys.permute(inv).requires_grad_(requires_grad)




def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices (deprecated in torch for linalg.multi_dot)."""
    from ember import linalg
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].dim() != 2:
            raise RuntimeError(f"chain_matmul(): Tensor 0 must have 2 dimensions, got {matrices[0].dim()}")
        return matrices[0].clone()
    for i, m in enumerate(matrices):
        if m.dim() != 2:
            raise RuntimeError(f"chain_matmul(): Tensor {i} must have 2 dimensions, got {m.dim()}")
    return linalg.multi_dot(matrices, out=out)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    from ember import linalg
    return linalg.vector_norm(input, 2, dim, keepdim, out=out)


def nuclear_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    from ember import linalg
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    return linalg.matrix_norm(input, "nuc", dim, keepdim, out=out)


# ---- small utilities ----

def typename(obj):
    """'torch.FloatTensor'-style name of a tensor's type; the qualified class name of anything else."""
    if isinstance(obj, _E.Tensor):
        names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "uint8": "ByteTensor", "int8": "CharTensor", "int16": "ShortTensor",
                 "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor",
                 "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}
        return "torch." + names[str(obj.dtype).split(".")[-1]]
    module = getattr(type(obj), "__module__", "") or ""
    qual = type(obj).__qualname__
    return qual if module in ("builtins", "") else f"{module}.{qual}"


def is_storage(obj):
    from ember._storage import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))


def is_distributed(input):
    return False


def get_device(input):
    """-1 for a CPU tensor (torch's convention), the device index otherwise."""
    return input.get_device() if hasattr(input, "get_device") else -1


_DEFAULT_DEVICE = [None]


def set_default_device(device):
    """Ember allocates on the CPU; 'cpu' (or None) is accepted, anything else raises."""
    if device is not None and _E.device(device).type != "cpu":
        raise NotImplementedError(f"set_default_device({device!r}): ember's default device can only be the CPU")
    _DEFAULT_DEVICE[0] = device


def get_default_device():
    return _E.device("cpu")


_MATMUL_PRECISION = ["highest"]


def set_float32_matmul_precision(precision):
    """'highest', 'high' or 'medium'; ember's CPU float32 GEMM is always full precision."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid float32_matmul_precision: {precision}; use 'highest', 'high' or 'medium'")
    _MATMUL_PRECISION[0] = precision


def get_float32_matmul_precision():
    return _MATMUL_PRECISION[0]


def set_flush_denormal(mode):
    """Ember does not change the CPU's denormal mode; returns False as torch does where unsupported."""
    return False


_WARN_ALWAYS = [False]


def set_warn_always(b):
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled():
    return _WARN_ALWAYS[0]


def init_num_threads():
    """Thread pools start on first use in ember; nothing to do."""


def compiled_with_cxx11_abi():
    return True


def set_anomaly_enabled(enabled, check_nan=True):
    from ember.autograd import set_detect_anomaly
    set_detect_anomaly(enabled, check_nan)


def set_default_tensor_type(t):
    """Only the floating CPU tensor types: sets the default dtype to float32 or float64."""
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    name = name.split(".")[-1]
    dt = {"FloatTensor": _E.float32, "DoubleTensor": _E.float64, "HalfTensor": _E.float16,
          "BFloat16Tensor": _E.bfloat16}.get(name)
    if dt is None:
        raise TypeError(f"only floating-point types are supported as the default type (got {name})")
    _E.set_default_dtype(dt)


def get_device_module(device=None):
    """The module of a device type: ember.cpu for the CPU (the only back end ember has)."""
    import ember.cpu
    d = "cpu" if device is None else (device if isinstance(device, str) else _E.device(device).type)
    if str(d).split(":")[0] != "cpu":
        raise RuntimeError(f"Device '{d}' does not have a corresponding module registered as 'torch.{d}'.")
    return ember.cpu


def thread_safe_generator():
    """A Generator seeded from the default one, for use in one thread (torch.thread_safe_generator)."""
    return _E.Generator().manual_seed(int(_E.randint(0, 2 ** 62, (1,)).item()))


def to_dlpack(tensor):
    return tensor.__dlpack__()


def nonzero_static(input, *, size, fill_value=-1):
    return input.nonzero_static(size=size, fill_value=fill_value)


_NP_DTYPES = {"bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
              "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64",
              "complex64": "complex64", "complex128": "complex128"}


def _np_dtype(dtype):
    name = str(dtype or _E.get_default_dtype()).split(".")[-1]
    if name not in _NP_DTYPES:
        raise NotImplementedError(f"{name} has no NumPy equivalent for frombuffer/from_file")
    return name


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor that shares memory with an object implementing the buffer protocol."""
    import numpy as np
    mv = memoryview(buffer)
    item = np.dtype(_np_dtype(dtype)).itemsize
    nbytes = mv.nbytes
    if nbytes == 0 or offset < 0 or offset >= nbytes:
        raise ValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be positive and offset must "
                         f"be less than buffer length" if nbytes else "both buffer length (0) and count (-1) must not "
                         "be 0")
    if count == 0 or (count < 0 and (nbytes - offset) % item):
        raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({item})")
    arr = np.frombuffer(mv, dtype=_np_dtype(dtype), count=count, offset=offset)
    if not arr.flags.writeable:
        import warnings
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors.",
                      UserWarning, stacklevel=2)
        arr = np.frombuffer(bytearray(mv.tobytes()), dtype=_np_dtype(dtype), count=count, offset=offset)
    return _E.from_numpy(arr).requires_grad_(requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False):
    """`size` elements read from a file; shared=True maps the file, so writes reach it."""
    import numpy as np
    dt = _np_dtype(dtype)
    need = size * np.dtype(dt).itemsize
    import os
    have = os.path.getsize(filename) if os.path.exists(filename) else 0
    if shared:
        if have < need:
            with open(filename, "ab") as f:
                f.truncate(need)
        arr = np.memmap(filename, dtype=dt, mode="r+", shape=(size,)) if size else np.zeros(0, dtype=dt)
        return _E.from_numpy(arr)
    if have < need:
        raise RuntimeError(f"unable to read {need} bytes from file {filename}: it holds {have} bytes")
    return _E.from_numpy(np.fromfile(filename, dtype=dt, count=size).copy())
