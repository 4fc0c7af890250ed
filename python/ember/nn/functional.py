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


def softsign(input):
    """input / (1 + |input|)."""
    return _C.softsign(input)


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
    return input - _C.tanh(input)

from ember.nn._pad import pad  # noqa: E402,F401

# ---- linear layers (C++: csrc/ember/ops/nn_linear.cpp) ----
from ember._C import linear, bilinear  # noqa: E402,F401

# ---- losses, normalization, dropout, embedding (python/ember/nn/_functional_norm.py) ----
from ember.nn._functional_norm import *  # noqa: E402,F401,F403
from ember.nn._functional_norm import __all__ as _norm_all  # noqa: E402

__all__ = __all__ + _norm_all
# ---- end of losses, normalization, dropout, embedding ----
