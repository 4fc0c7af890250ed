"""torch.nn.functional's losses, normalization, dropout and embedding.

cross_entropy, nll_loss, batch_norm, layer_norm, group_norm, instance_norm, rms_norm, the dropout
family, embedding and embedding_bag are C++ ops (csrc/ember/ops/nn.h); this module adds the
argument handling torch itself does in Python (legacy size_average/reduce, batch-size checks,
padding_idx wrapping). The remaining losses are short compositions of ember ops, as in torch.
"""
import math
import warnings

import ember
from ember import _C

__all__ = [
    "cross_entropy", "nll_loss", "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
    "local_response_norm", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "embedding", "embedding_bag", "l1_loss", "mse_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "smooth_l1_loss", "huber_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss",
]



def _fp32_under_autocast(fn):
    """Note [Autocast] (csrc/ember/core/autocast.h): under CPU autocast the losses run in float32,
    their 16-bit float tensor arguments cast up (torch's fp32 op list)."""
    import functools  # noqa: PLC0415

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _C._is_autocast_enabled("cpu"):
            up = lambda v: v.float() if isinstance(v, ember.Tensor) and v.dtype in (ember.bfloat16, ember.float16) \
                else v  # noqa: E731
            args = tuple(up(a) for a in args)
            kwargs = {k: up(v) for k, v in kwargs.items()}
            with ember.autocast("cpu", enabled=False):
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return wrapper

def _legacy_reduction(size_average, reduce, reduction):
    """torch's mapping of the deprecated size_average/reduce flags onto reduction."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.")
    return ret


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input, target, stacklevel=3):
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=stacklevel)


# ---- class-index losses (C++) ----

def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits over dim 1 (class indices or probabilities), one fused C++ pass."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C._nn_cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of log-probabilities over dim 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C._nn_nll_loss(input, target, weight, reduction, ignore_index)


# ---- normalization ----

def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    """Batch normalization over (N, *) per channel; updates running stats in training."""
    if training:
        _verify_batch_size(input.size())
    return _C._nn_batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05):
    """Normalization of each (sample, channel) map over its spatial dims."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _C._nn_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalization over the trailing dims normalized_shape."""
    return _C._nn_layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalization over groups of channels."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _C._nn_group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over normalized_shape, times weight."""
    return _C._nn_rms_norm(input, normalized_shape, weight, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalization by the mean of squares over `size` neighbouring channels."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    front, back = size // 2, (size - 1) // 2
    shape = list(sq.shape)
    parts = []
    if front:
        parts.append(ember.zeros([shape[0], front] + shape[2:], dtype=sq.dtype))
    parts.append(sq)
    if back:
        parts.append(ember.zeros([shape[0], back] + shape[2:], dtype=sq.dtype))
    padded = ember.cat(parts, 1) if len(parts) > 1 else sq
    avg = padded.unfold(1, size, 1).sum(-1) / size
    div = (avg * alpha + k) ** beta
    return input / div


# ---- dropout ----

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p and scales the rest by 1 / (1 - p)."""
    _check_p(p)
    return _C._nn_dropout(input, p, training, inplace)


def _feature_dropout_nd(name, input, p, training, inplace, batched_dim, alpha=False):
    _check_p(p)
    d = input.dim()
    if d not in (batched_dim - 1, batched_dim):
        raise RuntimeError(f"{name}: Expected {batched_dim - 1}D or {batched_dim}D input, but received a {d}D input. "
                           f"Note that {name} exists to provide channel-wise dropout on inputs with "
                           f"{batched_dim - 2} spatial dimension{'s' if batched_dim > 3 else ''}, a channel dimension, "
                           "and an optional batch dimension (i.e. "
                           f"{batched_dim - 1}D or {batched_dim}D inputs).")
    f = _C._nn_feature_alpha_dropout if alpha else _C._nn_feature_dropout
    if d == batched_dim - 1:
        if inplace:
            f(input.unsqueeze(0), p, training, True)
            return input
        return f(input.unsqueeze(0), p, training, False).squeeze(0)
    return f(input, p, training, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) input."""
    return _feature_dropout_nd("dropout1d", input, p, training, inplace, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) input (3-D input: channel-wise 1-D dropout, as torch)."""
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).")
    if d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This "
                      "behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.")
    return _C._nn_feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        warnings.warn(f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).")
    if d == 4:
        if inplace:
            _C._nn_feature_dropout(input.unsqueeze(0), p, training, True)
            return input
        return _C._nn_feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    return _C._nn_feature_dropout(input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalizing mean and variance."""
    _check_p(p)
    return _C._nn_alpha_dropout(input, p, training, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    _check_p(p)
    return _C._nn_feature_alpha_dropout(input, p, training, inplace)


# ---- embedding ----

def _wrap_padding_idx(padding_idx, num):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < num, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
        padding_idx = num + padding_idx
    return padding_idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of weight at the integer indices in input."""
    padding_idx = _wrap_padding_idx(padding_idx, weight.size(0))
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported by ember")
    if max_norm is not None:
        input = input.contiguous()
        with ember.no_grad():
            _C._nn_embedding_renorm_(weight, input, max_norm, norm_type)
    return _C._nn_embedding(weight, input, padding_idx, scale_grad_by_freq)


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows."""
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse=True (sparse gradients) is not supported by ember")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq=True is not supported by ember yet")
    padding_idx = _wrap_padding_idx(padding_idx, weight.size(0))
    if max_norm is not None:
        with ember.no_grad():
            _C._nn_embedding_renorm_(weight, input, max_norm, norm_type)
    return _C._nn_embedding_bag(weight, input, offsets, _BAG_MODES[mode], per_sample_weights, include_last_offset,
                                padding_idx)


# ---- elementwise losses (compositions of ember ops) ----

def _weighted(loss, weight):
    return loss if weight is None else loss * weight


@_fp32_under_autocast
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce(_weighted((input - target).abs(), weight), reduction)


@_fp32_under_autocast
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    d = input - target
    return _reduce(_weighted(d * d, weight), reduction)


@_fp32_under_autocast
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if input.numel() and bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        weight = weight.expand(input.shape) if weight.dim() <= input.dim() else weight
    loss = -(target * ember.clamp(ember.log(input), min=-100) + (1 - target) * ember.clamp(ember.log(1 - input),
                                                                                            min=-100))
    return _reduce(_weighted(loss, weight), reduction)


@_fp32_under_autocast
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) computed stably from the logits."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    from ember.nn.functional import logsigmoid
    # log(1 + exp(-x)) = -logsigmoid(x): stable, and with the right gradient (-1/2) at x = 0, where
    # log1p(exp(-|x|)) + relu(-x) has a kink in each term.
    softplus_neg = -logsigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    return _reduce(_weighted(loss, weight), reduction)


@_fp32_under_autocast
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log(target) - input) with input (and, with log_target, target) in log space."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = ember.exp(target) * (target - input)
    else:
        loss = ember.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.size(0) if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def _fusable_pair(input, target):
    # the fused C++ losses take one shape and one floating dtype; the compositions do the rest
    return (isinstance(input, ember.Tensor) and isinstance(target, ember.Tensor) and input.shape == target.shape
            and input.dtype == target.dtype and input.dtype.is_floating_point)


@_fp32_under_autocast
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta > 0 and _fusable_pair(input, target):  # Note [Fused regression losses]
        return _C._nn_smooth_l1_loss(input, target, reduction, beta)
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(ember.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


@_fp32_under_autocast
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _warn_size(input, target)
    _check_reduction(reduction)
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None and _fusable_pair(input, target):  # Note [Fused regression losses]
        return _C._nn_huber_loss(input, target, reduction, delta)
    d = (input - target).abs()
    loss = ember.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(_weighted(loss, weight), reduction)


@_fp32_under_autocast
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08, reduce=None,
                     reduction="mean"):
    """Poisson negative log likelihood (optionally with Stirling's term)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = ember.exp(input) - target * input
    else:
        loss = input - target * ember.log(input + eps)
    if full:
        stirling = target * ember.log(target) - target + 0.5 * ember.log(2 * math.pi * target)
        loss = loss + ember.where(target > 1, stirling, ember.zeros_like(stirling))
    return _reduce(loss, reduction)


@_fp32_under_autocast
def gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction="mean"):
    """0.5 (log(var) + (input - target)^2 / var), var clamped below at eps (without stopping its gradient)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ember.full_like(input, float(var))
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.size()[:-1] == var.size()[:-1] and var.size(-1) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with ember.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (ember.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@_fp32_under_autocast
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce(ember.clamp(-target * (input1 - input2) + margin, min=0), reduction)


@_fp32_under_autocast
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zero = ember.zeros_like(input)
    out_margin = ember.where(target != 1, ember.clamp(margin - input, min=0), zero)
    out_self = ember.where(target != -1, input, zero)
    return _reduce(out_margin + out_self, reduction)


@_fp32_under_autocast
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input))."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    # log1p(exp(-|z|)) + relu(z) with z = -target * input is -logsigmoid(target * input): the fused
    # logsigmoid in one pass each way instead of six element ops (1.44x torch's time on one thread)
    from ember.nn.functional import logsigmoid
    loss = logsigmoid(target * input)
    return ember.neg(loss) if reduction == "none" else ember.neg(_reduce(loss, reduction))


@_fp32_under_autocast
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Mean over classes of the binary logistic losses."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    from ember.nn.functional import logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    cdim = input.dim() - 1
    loss = loss.sum(dim=cdim) / input.size(cdim)
    return _reduce(loss, reduction)


@_fp32_under_autocast
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Hinge loss between each target class (target's prefix before -1) and each non-target class."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input.dim() > 2 or target.dim() > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{input.shape}")
    if input.shape != target.shape:
        raise RuntimeError(f"inconsistent target size: {target.shape} for input of size: {input.shape}")
    one = input.dim() <= 1
    x = input.reshape(1, -1) if one else input
    t = target.reshape(1, -1) if one else target
    C = x.size(1)
    if t.numel() and bool(((t < -1) | (t >= C)).any()):
        raise RuntimeError(f"multilabel_margin_loss: target values must lie in [-1, {C})")
    valid = ember.cumprod((t != -1).to(ember.int64), 1)  # the prefix before the first -1
    count = ember.zeros(x.shape, dtype=ember.int64).scatter_add(1, t.clamp(min=0), valid)  # repeats count again
    margins = ember.clamp(1 - (x.unsqueeze(2) - x.unsqueeze(1)), min=0)  # [n, j, k] = 1 - (x_j - x_k)
    pair = count.unsqueeze(2).to(x.dtype) * (count == 0).unsqueeze(1).to(x.dtype)
    loss = (margins * pair).sum((1, 2)) / C
    if one:
        loss = loss.reshape(()) if input.dim() == 1 or input.dim() == 0 else loss
    return _reduce(loss, reduction)


@_fp32_under_autocast
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-class hinge loss: sum over j != y of max(0, margin - x[y] + x[j])^p / C."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    one = input.dim() <= 1
    x = input.reshape(1, -1) if one else input
    t = target.reshape(-1)
    C = x.size(1)
    if t.numel() and bool(((t < 0) | (t >= C)).any()):
        raise RuntimeError("target out of range")
    xy = x.gather(1, t.unsqueeze(1))
    m = ember.clamp(margin - xy + x, min=0)
    if p == 2:
        m = m * m
    if weight is not None:
        m = m * weight[t].unsqueeze(1)
    not_y = ember.arange(C).unsqueeze(0) != t.unsqueeze(1)
    loss = (m * not_y.to(x.dtype)).sum(1) / C
    if one:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@_fp32_under_autocast
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.dim() != input2.dim():
        raise RuntimeError(f"cosine_embedding_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    d = input1.dim() - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    mag = ((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps)
    cos = prod / ember.sqrt(mag)
    zero = ember.zeros_like(cos)
    pos = ember.where(target == 1, 1 - cos, zero)
    neg = ember.where(target == -1, ember.clamp(cos - margin, min=0), zero)
    return _reduce(pos + neg, reduction)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6):
    return ember.linalg.vector_norm(x1 - x2 + eps, p, dim=-1)


@_fp32_under_autocast
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with p-norm distances."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ember.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce(ember.clamp(margin + d_pos - d_neg, min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """triplet_margin_loss with any distance function (default: pairwise L2 distance)."""
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
    _check_reduction(reduction)
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ember.minimum(d_neg, dist(positive, negative))
    return _reduce(ember.clamp(margin + d_pos - d_neg, min=0), reduction)


def _safe_logsumexp(stacked):
    """logsumexp over dim 0 whose gradient stays finite when every entry is -inf (unreachable CTC
    states): the sum gets a tiny floor, far below anything a reachable state adds."""
    m = stacked.amax(0)
    m = ember.where(ember.isinf(m), ember.zeros_like(m), m).detach()
    tiny = 1e-300 if stacked.dtype == ember.float64 else 1e-37
    return m + ember.log(ember.exp(stacked - m).sum(0) + tiny)


@_fp32_under_autocast
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss: the forward (alpha) recursion over the
    blank-extended targets in log space, composed from ember ops (the gradient comes from the parts)."""
    _check_reduction(reduction)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got {tuple(log_probs.shape)}")
    T, N, C = log_probs.shape
    to_list = (lambda v: [int(u) for u in (v.reshape(-1).tolist() if ember.is_tensor(v) else v)])
    in_lens, tg_lens = to_list(input_lengths), to_list(target_lengths)
    if len(in_lens) != N or len(tg_lens) != N:
        raise RuntimeError(f"ctc_loss: expected input_lengths and target_lengths of size {N}")
    flat = targets.dim() == 1
    neg_inf = float("-inf")
    losses, offset = [], 0
    for n in range(N):
        Tn, L = in_lens[n], tg_lens[n]
        if Tn > T or Tn < 0:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {Tn}")
        lab = targets[offset:offset + L] if flat else targets[n, :L]
        offset += L
        lab = [int(v) for v in lab.tolist()]
        ext = [blank]
        for v in lab:
            ext += [v, blank]
        S = len(ext)
        repeats = sum(1 for i in range(1, L) if lab[i] == lab[i - 1])
        if Tn == 0 or Tn < L + repeats:
            lp_sum = log_probs[:max(Tn, 1), n, 0].sum() * 0  # keeps the graph, value 0
            loss = lp_sum + float("inf")
        else:
            lp = log_probs[:Tn, n, :].index_select(1, ember.tensor(ext, dtype=ember.int64))  # (Tn, S)
            skip = ember.tensor([s >= 2 and ext[s] != blank and ext[s] != ext[s - 2] for s in range(S)])
            ninf1 = ember.full((1,), neg_inf, dtype=lp.dtype)
            ninf2 = ember.full((min(2, S),), neg_inf, dtype=lp.dtype)
            init_mask = ember.tensor([s < 2 for s in range(S)])
            alpha = ember.where(init_mask, lp[0], ember.full((S,), neg_inf, dtype=lp.dtype))
            for t in range(1, Tn):
                a1 = ember.cat([ninf1, alpha[:-1]])
                a2 = ember.cat([ninf2, alpha[:-2]])[:S]
                a2 = ember.where(skip, a2, ember.full((S,), neg_inf, dtype=lp.dtype))
                alpha = _safe_logsumexp(ember.stack([alpha, a1, a2])) + lp[t]
            loss = -_safe_logsumexp(alpha[-2:] if S > 1 else alpha)
        if zero_infinity:
            loss = ember.where(ember.isinf(loss), ember.zeros_like(loss), loss)
        losses.append(loss)
    out = ember.stack(losses) if losses else ember.zeros(0, dtype=log_probs.dtype)
    if reduction == "mean":
        lens = ember.tensor([max(v, 1) for v in tg_lens], dtype=out.dtype)
        return (out / lens).mean()
    if reduction == "sum":
        return out.sum()
    return out[0] if unbatched else out
