"""ember.nn.functional.pad: constant, reflect, replicate and circular padding.

All in C++ (ember::pad, ops/nn_pad.cpp): constant as one pass of fill and copy (Note [Constant
pad]); the other modes as one gather through per-dim source position maps, whose backward adds
into the sources. torch's checks, messages and exception types.
"""
from ember import _C


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad) // 2 dims of input; pad = (left_last, right_last, left_prev, ...)."""
    return _C._pad(input, pad, mode, value)
