"""nn.functional ops that are short compositions of ember ops (their gradients come from the parts).

softmax/log_softmax are the C++ kernels with torch's Python argument handling (implicit dim,
dtype=); the rest (glu, prelu, rrelu, shrinks, normalize, one_hot, cosine_similarity,
pairwise_distance, pixel/channel shuffles) are compositions, as several are in torch itself.
"""
import warnings

import ember
from ember import _C
from ember._argcheck import torch_type_name

__all__ = [
    "softmax", "log_softmax", "softmin", "glu", "prelu", "rrelu", "rrelu_", "hardshrink", "softshrink", "normalize",
    "one_hot", "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "native_channel_shuffle", "gumbel_softmax", "celu_", "selu_", "pdist",
]


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  "argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (computed in dtype when given)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along dim, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _C.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _C.softmax(-input, dim, dtype)


def glu(input, dim=-1):
    """a * sigmoid(b) where a, b are the two halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.dim() if dim < 0 else dim
    if not 0 <= d < input.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         f"but got {dim})")
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.split(n // 2, d)
    return a * _C.sigmoid(b)


def prelu(input, weight):
    """input where positive, else weight * input (weight: one value or one per channel, dim 1)."""
    lowered = ember.amp._lower_if_autocast(input, weight)  # Note [Autocast]: a lower-precision op
    if lowered is not None:
        with ember.autocast("cpu", enabled=False):
            return prelu(*lowered)
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                               f"and channel size = {channels}.")
        w = weight.reshape([1, n] + [1] * (input.dim() - 2))
    else:
        w = weight.reshape([])
    return ember.where(input > 0, input, w * input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative slopes ~ U(lower, upper) in training, (lower + upper) / 2 otherwise."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        slope = (lower + upper) / 2
        return _C.leaky_relu_(input, slope) if inplace else _C.leaky_relu(input, slope)
    noise = ember.empty(input.shape, dtype=input.dtype).uniform_(lower, upper)
    factor = ember.where(input >= 0, ember.ones((), dtype=input.dtype), noise)
    return input.mul_(factor) if inplace else input * factor


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, inplace=True)


def _check_float(input, name):
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_legacy_name(input.dtype)}'")


def _legacy_name(dtype):
    return torch_type_name(dtype)


def hardshrink(input, lambd=0.5):
    """input where |input| > lambd, else 0 (NaN stays NaN)."""
    _check_float(input, "hardshrink")
    inside = (input >= -lambd) & (input <= lambd)
    return ember.where(inside, ember.zeros((), dtype=input.dtype), input)


def softshrink(input, lambd=0.5):
    """input - lambd above lambd, input + lambd below -lambd, else 0."""
    _check_float(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return ember.where(input > lambd, input - lambd, ember.where(input < -lambd, input + lambd, input * 0))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return ember.div(input, denom, out=out)


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape (*, num_classes) with a 1 at each index (num_classes=-1: max + 1)."""
    if tensor.dtype != ember.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return ember.zeros(tuple(tensor.shape) + (num_classes,), dtype=ember.int64)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1
    elif int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == ember.arange(num_classes)).long()


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim (inputs broadcast)."""
    common = ember.result_type(x1, x2)
    if not common.is_floating_point:  # complex too, as torch
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_legacy_name(common)}")
    x1, x2 = ember.broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    oc = c // (r * r)
    n = len(batch)
    x = input.reshape(batch + [oc, r, r, h, w])
    x = x.permute(list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]).reshape(batch + [oc, h * r, w * r])
    return x.clone() if x._is_view() else x  # new memory, as torch's (r = 1 was input's own)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                           f"{h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                           f"{w} is not divisible by {r}")
    n = len(batch)
    x = input.reshape(batch + [c, h // r, r, w // r, r])
    x = x.permute(list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]).reshape(batch + [c * r * r, h // r, w // r])
    return x.clone() if x._is_view() else x  # new memory, as torch's (r = 1 was input's own)


def channel_shuffle(input, groups):
    """(N, C, *) with channels regrouped: (N, g, C/g, *) -> (N, C/g, g, *) -> (N, C, *)."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = list(input.shape[2:])
    x = input.reshape([n, groups, c // groups] + rest).transpose(1, 2)
    return x.reshape([n, c] + rest)


native_channel_shuffle = channel_shuffle


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau); hard=True gives one-hot samples with the soft gradient."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    gumbels = -ember.empty_like(logits).exponential_().log()
    y_soft = _C.softmax((logits + gumbels) / tau, dim, None)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = ember.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def celu_(input, alpha=1.0):
    """In-place celu."""
    return _C.celu_(input, alpha)


def selu_(input):
    """In-place selu."""
    return _C.selu_(input)


def pdist(input, p=2):
    """Pairwise p-norm distances between the rows of a 2-D input (upper triangle, row-major)."""
    return ember.pdist(input, p)

from ember._argcheck import tensor_args as _tensor_args  # noqa: E402

_tensor_args(globals(), ["hardshrink"])
_tensor_args(globals(), ["pairwise_distance"], positions=(0, 1))
