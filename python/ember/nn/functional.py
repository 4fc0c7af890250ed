"""Activation functions with torch.nn.functional's signatures, bound to the C++ kernels.

`inplace=True` runs the in-place kernel (and returns the input), as PyTorch does.
"""
from ember import _C

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "celu", "gelu", "silu",
    "mish", "softplus", "softsign", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "logsigmoid",
    "threshold", "threshold_", "sigmoid", "tanh", "tanhshrink",
]


def relu(input, inplace=False):
    """max(input, 0) elementwise."""
    return _C.relu_(input) if inplace else _C.relu(input)


def relu_(input):
    """In-place relu."""
    return _C.relu_(input)


def relu6(input, inplace=False):
    """min(max(input, 0), 6) elementwise."""
    return _C.relu6_(input) if inplace else _C.relu6(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """input where positive, else input * negative_slope."""
    f = _C.leaky_relu_ if inplace else _C.leaky_relu
    return f(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place leaky_relu."""
    return _C.leaky_relu_(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """input where positive, else alpha * (exp(input) - 1)."""
    f = _C.elu_ if inplace else _C.elu
    return f(input, alpha)


def elu_(input, alpha=1.0):
    """In-place elu."""
    return _C.elu_(input, alpha)


def selu(input, inplace=False):
    """scale * elu(input, alpha) with the self-normalizing constants."""
    return _C.selu_(input) if inplace else _C.selu(input)


def celu(input, alpha=1.0, inplace=False):
    """max(0, input) + min(0, alpha * (exp(input / alpha) - 1))."""
    f = _C.celu_ if inplace else _C.celu
    return f(input, alpha)


def gelu(input, approximate="none"):
    """input * Phi(input), Phi the standard normal CDF; approximate='tanh' uses the tanh formula."""
    return _C.gelu(input, approximate)


def silu(input, inplace=False):
    """input * sigmoid(input)."""
    return _C.silu_(input) if inplace else _C.silu(input)


def mish(input, inplace=False):
    """input * tanh(softplus(input))."""
    return _C.mish_(input) if inplace else _C.mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * input)) / beta, linear where beta * input > threshold."""
    return _C.softplus(input, beta, threshold)


def _no_tensor_method(input, name):
    """torch's Python-level functionals call a Tensor method of input first: for anything else the
    error is that method's AttributeError (the caller re-raises a TypeError from a real tensor)."""
    return AttributeError(f"'{type(input).__name__}' object has no attribute '{name}'")


def softsign(input):
    """input / (1 + |input|)."""
    try:
        return _C.softsign(input)
    except TypeError:
        if isinstance(input, _C.Tensor):
            raise
        raise _no_tensor_method(input, "abs") from None


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clamped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    f = _C.hardtanh_ if inplace else _C.hardtanh
    return f(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place hardtanh."""
    return hardtanh(input, min_val, max_val, inplace=True)


def hardsigmoid(input, inplace=False):
    """relu6(input + 3) / 6."""
    return _C.hardsigmoid_(input) if inplace else _C.hardsigmoid(input)


def hardswish(input, inplace=False):
    """input * relu6(input + 3) / 6."""
    return _C.hardswish_(input) if inplace else _C.hardswish(input)


def logsigmoid(input):
    """log(sigmoid(input)), computed without overflow."""
    return _C.log_sigmoid(input)


def threshold(input, threshold, value, inplace=False):
    """input where input > threshold, else value."""
    f = _C.threshold_ if inplace else _C.threshold
    return f(input, threshold, value)


def threshold_(input, threshold, value):
    """In-place threshold."""
    return _C.threshold_(input, threshold, value)


def sigmoid(input):
    """1 / (1 + exp(-input))."""
    return _C.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return _C.tanh(input)


def tanhshrink(input):
    """input - tanh(input)."""
    try:
        t = _C.tanh(input)
    except TypeError:
        if isinstance(input, _C.Tensor):
            raise
        raise _no_tensor_method(input, "tanh") from None
    return input - t

from ember.nn._pad import pad  # noqa: E402,F401


# ---- convolution (C++ ops in csrc/ember/ops/nn_conv.cpp, bound in python/src/bind_nn_conv.cpp) ----
from ember._C import (  # noqa: E402,F401
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
)

__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


# ---- pooling, fold/unfold (C++ ops in csrc/ember/ops/nn_pool.cpp; argument handling as torch's Python) ----
import ember as _ember  # noqa: E402


def _tuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


def _stride(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    out, idx = _C._max_pool(input, nd, kernel_size, _stride(stride), padding, dilation, bool(ceil_mode))
    return (out, idx) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling over (N, C, L) or (C, L); return_indices also gives the argmax positions."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling over (N, C, H, W) or (C, H, W)."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W)."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling."""
    return _C._avg_pool(input, 1, kernel_size, _stride(stride), padding, bool(ceil_mode), bool(count_include_pad), None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-d average pooling; divisor_override replaces the window size as the divisor."""
    return _C._avg_pool(input, 2, kernel_size, _stride(stride), padding, bool(ceil_mode), bool(count_include_pad),
                        divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling."""
    return _C._avg_pool(input, 3, kernel_size, _stride(stride), padding, bool(ceil_mode), bool(count_include_pad),
                        divisor_override)


def _adaptive_size(input, output_size, nd):
    """output_size as nd ints; None entries keep the input's size (as torch)."""
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            return list(output_size)  # the C++ op raises torch's error
        return [input.shape[input.dim() - nd + i] if v is None else v for i, v in enumerate(output_size)]
    return [output_size] * nd


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length."""
    return _C._adaptive_avg_pool(input, 1, _adaptive_size(input, output_size, 1))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (H, W); None keeps that input size."""
    return _C._adaptive_avg_pool(input, 2, _adaptive_size(input, output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (D, H, W); None keeps that input size."""
    return _C._adaptive_avg_pool(input, 3, _adaptive_size(input, output_size, 3))


def _adaptive_max(nd, input, output_size, return_indices):
    out, idx = _C._adaptive_max_pool(input, nd, _adaptive_size(input, output_size, nd))
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed (H, W)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed (D, H, W)."""
    return _adaptive_max(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(2, input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(3, input, output_size, True)


def _unpool_output_size(input, kernel_size, stride, padding, output_size, nd):
    k = _tuple(kernel_size, nd)
    s = _tuple(stride if _stride(stride) is not None else kernel_size, nd)
    p = _tuple(padding, nd)
    default = [(input.shape[input.dim() - nd + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - s[d], default[d] + s[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool1d: scatters input to the positions in indices, zeros elsewhere."""
    return _C._max_unpool(input, indices, _unpool_output_size(input, kernel_size, stride, padding, output_size, 1))


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool2d."""
    return _C._max_unpool(input, indices, _unpool_output_size(input, kernel_size, stride, padding, output_size, 2))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool3d."""
    return _C._max_unpool(input, indices, _unpool_output_size(input, kernel_size, stride, padding, output_size, 3))


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    k = _tuple(kernel_size, nd)
    volume = 1
    for v in k:
        volume *= v
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    # The window's sum of x**p (the mean times the window size), then its p-th root; negative sums
    # (odd p) are clamped to zero as torch does.
    s = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode) * volume
    return (_ember.sign(s) * relu(_ember.abs(s))).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (sum over the window of x**p) ** (1/p)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-d power-average pooling."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# Fractional max pooling (Graham, 2014): window starts are pseudo-random increasing sequences drawn
# from one uniform sample per (batch, channel, spatial dim). A composition of gathers: the window
# elements' flat positions are built per plane, the maximum picked by index, so the gradient
# (scattered back by gather's backward, summed where windows overlap) reaches the chosen element.
_FRACTIONAL_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_starts(u, size, out, k):
    """Window starts (P, out) along one dim of length `size` for samples u (P, 1) in [0, 1): with
    alpha = (size - k) / (out - 1), start_i = int((i + u) alpha) - int(u alpha), the last one size - k.
    Computed in u's dtype, as torch does, so the same samples give the same windows."""
    last = _ember.full((u.shape[0], min(out, 1)), size - k, dtype=_ember.int64)
    if out <= 1:
        return last
    alpha = _ember.tensor(float(size - k), dtype=u.dtype) / _ember.tensor(float(out - 1), dtype=u.dtype)
    i = _ember.arange(out - 1, dtype=u.dtype)
    starts = ((i + u) * alpha).to(_ember.int64) - (u * alpha).to(_ember.int64)
    return _ember.cat([starts, last], dim=1)


def _fractional_max_pool(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.dim() < nd + 1:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         f"but got {-(nd + 1)})")
    if input.dim() > nd + 2:
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    k = _tuple(kernel_size, nd)
    if len(k) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of Ints")
    if any(v <= 0 for v in k):
        raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
    spatial = tuple(input.shape[-nd:])
    if output_size is None:
        ratio = _tuple(output_ratio, nd)
        out = tuple(int(spatial[d] * ratio[d]) for d in range(nd))
    else:
        out = _tuple(output_size, nd)
        if len(out) != nd:
            raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of Ints")
    x = input if input.dim() == nd + 2 else input.unsqueeze(0)
    N, C = x.shape[0], x.shape[1]
    for d in range(1, nd + 2):
        if x.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {d - (x.dim() - input.dim())} being empty.")
    if not (x.is_floating_point()):
        raise NotImplementedError(f'"{name}" not implemented for \'{str(x.dtype).replace("ember.", "")}\'')
    if any(v < 0 for v in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {[N, C, *out]}")
    prefix = name + ("_out()" if nd == 3 else "()")
    for d in range(nd):
        # torch's 3-d check is strict (out + k - 1 < size), its 2-d one is not.
        if out[d] + k[d] - 1 > spatial[d] - (nd == 3):
            dim = _FRACTIONAL_DIM_NAMES[nd][d]
            raise RuntimeError(f"{prefix}: pool {dim} {k[d]} too large relative to input {dim} {spatial[d]}")
    samples = _random_samples
    if samples is None:
        samples = _ember.rand(N, C, nd, dtype=x.dtype)
    else:
        if samples.requires_grad:
            raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument "
                               "'random_samples'. This input cannot have requires_grad True.")
        if samples.dtype != x.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        if samples.dim() != 3:
            raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
        if samples.shape[0] < N:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if samples.shape[1] != C:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if samples.shape[2] != nd:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    P = N * C
    # Sample slots: width first in 2-d, time first in 3-d (torch's layout of _random_samples).
    slots = (1, 0) if nd == 2 else (0, 1, 2)
    u = samples[:N].reshape(P, nd)
    # pos (P, *out, *k): flat position in the plane of every window element.
    pos = _ember.zeros((P,) + (1,) * (2 * nd), dtype=_ember.int64)
    plane_stride = 1
    for d in reversed(range(nd)):
        starts = _fractional_starts(u[:, slots[d]:slots[d] + 1], spatial[d], out[d], k[d])
        along = starts.unsqueeze(-1) + _ember.arange(k[d])  # (P, out_d, k_d)
        shape = [P] + [1] * (2 * nd)
        shape[1 + d], shape[1 + nd + d] = out[d], k[d]
        pos = pos + along.reshape(shape) * plane_stride
        plane_stride *= spatial[d]
    n_out, n_win = 1, 1
    for d in range(nd):
        n_out, n_win = n_out * out[d], n_win * k[d]
    pos = pos.expand((P,) + tuple(out) + tuple(k)).reshape(P, n_out, n_win)
    win = x.reshape(P, plane_stride).gather(1, pos.reshape(P, n_out * n_win)).reshape(P, n_out, n_win)
    # The first maximum in scan order; in a window holding NaN, its last NaN (as torch's kernel).
    nan = win.isnan()
    peak = win.amax(-1, keepdim=True).detach()
    first = (win == peak).to(_ember.int8).argmax(-1, keepdim=True)
    last_nan = (n_win - 1) - nan.flip(-1).to(_ember.int8).argmax(-1, keepdim=True)
    choice = _ember.where(nan.any(-1, keepdim=True), last_nan, first)
    values = win.gather(-1, choice).reshape((N, C) + tuple(out))
    indices = pos.gather(-1, choice).reshape((N, C) + tuple(out))
    if input.dim() == nd + 1:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, H, W) or (C, H, W): (values, indices into each H*W plane).
    _random_samples (N, C, 2) in [0, 1) fixes the windows (drawn uniformly when None)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W); samples (N, C, 3)."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Max over pseudo-random windows giving output_size (or input size * output_ratio)."""
    out = _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-d fractional max pooling."""
    out = _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding 2-d blocks: (N, C, H, W) -> (N, C * kh * kw, L)."""
    return _C.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding blocks back into an image: (N, C * kh * kw, L) -> (N, C, *output_size)."""
    return _C.col2im(input, output_size, kernel_size, dilation, padding, stride)


__all__ += [
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "unfold", "fold",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
]
# ---- linear layers (C++: csrc/ember/ops/nn_linear.cpp) ----
from ember._C import linear, bilinear  # noqa: E402,F401

# ---- softmax family, glu/prelu/rrelu/shrinks, normalize, one_hot, distances, shuffles (nn/_functional_extra.py) ----
from ember.nn._functional_extra import (  # noqa: E402,F401
    softmax, log_softmax, softmin, glu, prelu, rrelu, rrelu_, hardshrink, softshrink, normalize, one_hot,
    cosine_similarity, pairwise_distance, pixel_shuffle, pixel_unshuffle, channel_shuffle, native_channel_shuffle,
    gumbel_softmax, celu_, selu_, pdist,
)

# ---- interpolation (C++ op upsample in csrc/ember/ops/nn_upsample.cpp; argument handling as torch's Python) ----
_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes (N, C, *spatial) to `size` or by `scale_factor` with the given mode."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            output_size = list(size)
        else:
            output_size = [size] * dim
        scale_factors = None
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                                 f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                                 "format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        # The output size from the scales, then the scales are forgotten (in/out ratios are used).
        output_size = [int(float(input.shape[i + 2]) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if output_size is None:
        output_size = [int(float(input.shape[i + 2]) * scale_factors[i]) for i in range(dim)]
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as "
                         "input")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not implemented in ember yet")
    if mode in _INTERP_DIMS:
        want = _INTERP_DIMS[mode]
        if input.dim() != want + 2:
            if input.dim() in (3, 4, 5):
                raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want + 2}D input")
    if input.dim() not in (3, 4, 5) or mode not in ("nearest", "area", "nearest-exact") + tuple(_INTERP_DIMS):
        raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.dim()}D) for the modes: {_INTERP_MODES} (got {mode})")
    scales = [None] * dim if scale_factors is None else scale_factors
    return _C._upsample(input, mode, output_size, scales, bool(align_corners) if align_corners is not None else False)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ += ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]


# ---- affine_grid / grid_sample: compositions of ember ops (gradients from the parts); 4-d float
# grid_sample is one C++ op (Note [Fused grid_sample]) ----
def _linspace_from_neg_one(steps, align_corners, dtype):
    if steps <= 1:
        return _ember.zeros(steps, dtype=dtype)
    r = _ember.linspace(-1, 1, steps, dtype=dtype)
    return r if align_corners else r * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine maps theta (N, 2, 3) / (N, 3, 4)."""
    if align_corners is None:
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {list(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {list(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    if theta.shape[0] != n:
        raise RuntimeError(f"affine_grid: expected theta's batch size {theta.shape[0]} to match size[0] = {n}")
    dt = theta.dtype
    # Base grid (*spatial, nd + 1): x varies along the last dim, then y, then z; a trailing 1.
    axes = [_linspace_from_neg_one(s, align_corners, dt) for s in reversed(spatial)]  # x, y, (z)
    nd = len(spatial)
    cols = []
    for i, ax in enumerate(axes):
        shape = [1] * nd
        shape[nd - 1 - i] = spatial[nd - 1 - i]
        cols.append(ax.reshape(shape).expand(*spatial))
    cols.append(_ember.ones(*spatial, dtype=dt))
    base = _ember.stack(cols, -1).reshape(1, -1, nd + 1)
    grid = _ember.matmul(base, theta.transpose(1, 2))  # (N, prod(spatial), nd)
    return grid.reshape(n, *spatial, nd)


def _grid_unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect_coordinates(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return _ember.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - low).abs()
    extra = _ember.fmod(c, span)
    flips = _ember.floor(c / span).detach()
    return _ember.where(_ember.fmod(flips, 2) == 0, extra + low, span - extra + low)


def _grid_source(coord, size, padding_mode, align_corners):
    c = _grid_unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        c = c.clamp(0, size - 1)
    elif padding_mode == "reflection":
        c = _reflect_coordinates(c, 0, 2 * (size - 1)) if align_corners else _reflect_coordinates(c, -1, 2 * size - 1)
        c = c.clamp(0, size - 1)
    return c


_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _is_batched(*ts):
    return any(type(t).__name__ == "BatchedTensor" for t in ts)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) locations in [-1, 1] (x, y order)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        align_corners = False
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {d} being empty")
    if input.dim() == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode='bicubic' is not implemented in ember yet")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if input.dtype in (_ember.float32, _ember.float64) and not _is_batched(input, grid):
        # Note [Fused grid_sample] (ops/nn_grid_sample.cpp); the compositions below serve other dtypes and vmap
        fused = _C._grid_sample_3d if input.dim() == 5 else _C._grid_sample_2d
        return fused(input, grid, mode == "nearest", _GRID_PADDING[padding_mode], align_corners)
    if input.dim() == 5:
        return _grid_sample_3d(input, grid, mode, padding_mode, align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    x = _grid_source(grid[..., 0], w, padding_mode, align_corners)
    y = _grid_source(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)

    def tap(yi, xi, weight):
        valid = ((xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)).to(input.dtype)
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().reshape(n, 1, ho * wo).expand(n, c, ho * wo)
        v = flat.gather(2, idx)
        wt = valid if weight is None else weight * valid
        return v * wt.reshape(n, 1, ho * wo)

    if mode == "nearest":
        # The weight is a constant 1 that still depends on the grid, whose gradient is then zeros (as torch's).
        out = tap(_ember.round(y).detach(), _ember.round(x).detach(), x * 0 + 1)
    else:
        x0, y0 = _ember.floor(x).detach(), _ember.floor(y).detach()
        x1, y1 = x0 + 1, y0 + 1
        out = (tap(y0, x0, (x1 - x) * (y1 - y)) + tap(y0, x1, (x - x0) * (y1 - y)) +
               tap(y1, x0, (x1 - x) * (y - y0)) + tap(y1, x1, (x - x0) * (y - y0)))
    return out.reshape(n, c, ho, wo)


def _grid_sample_3d(input, grid, mode, padding_mode, align_corners):
    """grid_sample on (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3) locations (x, y, z order): trilinear or nearest."""
    n, c, d, h, w = input.shape
    m = grid.shape[1] * grid.shape[2] * grid.shape[3]
    x = _grid_source(grid[..., 0], w, padding_mode, align_corners)
    y = _grid_source(grid[..., 1], h, padding_mode, align_corners)
    z = _grid_source(grid[..., 2], d, padding_mode, align_corners)
    flat = input.reshape(n, c, d * h * w)

    def tap(zi, yi, xi, weight):
        valid = ((xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1) & (zi >= 0) & (zi <= d - 1)).to(input.dtype)
        lin = (zi.clamp(0, d - 1) * h + yi.clamp(0, h - 1)) * w + xi.clamp(0, w - 1)
        v = flat.gather(2, lin.long().reshape(n, 1, m).expand(n, c, m))
        return v * (weight * valid).reshape(n, 1, m)

    if mode == "nearest":
        out = tap(_ember.round(z).detach(), _ember.round(y).detach(), _ember.round(x).detach(), x * 0 + 1)
    else:
        x0, y0, z0 = _ember.floor(x).detach(), _ember.floor(y).detach(), _ember.floor(z).detach()
        out = 0
        for zi, wz in ((z0, z0 + 1 - z), (z0 + 1, z - z0)):
            for yi, wy in ((y0, y0 + 1 - y), (y0 + 1, y - y0)):
                for xi, wx in ((x0, x0 + 1 - x), (x0 + 1, x - x0)):
                    out = out + tap(zi, yi, xi, wz * wy * wx)
    return out.reshape((n, c) + tuple(grid.shape[1:4]))


__all__ += ["affine_grid", "grid_sample"]

# ---- losses, normalization, dropout, embedding (python/ember/nn/_functional_norm.py) ----
from ember.nn._functional_norm import *  # noqa: E402,F401,F403
from ember.nn._functional_norm import __all__ as _norm_all  # noqa: E402

__all__ = __all__ + _norm_all
# ---- end of losses, normalization, dropout, embedding ----

# ---- attention (compositions of ember ops, python/ember/nn/_functional_attn.py) ----
from ember.nn._functional_attn import (  # noqa: E402,F401
    scaled_dot_product_attention, multi_head_attention_forward, _canonical_mask, _none_or_dtype,
)

__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution over (time, batch, channel) input with a (width, in, out) weight (ember.conv_tbc)."""
    from ember._api_extra import conv_tbc as f
    return f(input, weight, bias, pad)


__all__ += ["conv_tbc"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...); `options` (torch's chunking
    settings) only tune memory use and are accepted as is."""
    if linear_weight.dim() != 2:
        raise NotImplementedError("linear_cross_entropy: only a 2-d linear_weight (classes x features) is supported")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]
