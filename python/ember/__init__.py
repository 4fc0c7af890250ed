"""Ember: tensors and autograd with PyTorch's API on a C++ core."""

from ember import _C
from ember._C import (  # noqa: F401
    Tensor, dtype, device,
    bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
    get_default_dtype, set_default_dtype, promote_types, can_cast, result_type,
    get_num_threads, set_num_threads,
    empty, zeros, ones, full, empty_strided, arange, linspace, logspace, eye,
    add, sub, mul, div, true_divide, floor_divide, remainder, pow, neg, relu,
    eq, ne, lt, le, gt, ge, sum, mean, matmul, mm,
    # views and shape functions
    reshape, ravel, permute, transpose, swapaxes, swapdims, t, adjoint, movedim, moveaxis, squeeze, unsqueeze,
    flatten, unflatten, narrow, select, as_strided, broadcast_to, clone,
    memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d,
)
from ember._size import Size  # noqa: F401
from ember import _tensor  # noqa: F401  (attaches Python-level Tensor methods)

# PyTorch's dtype aliases.
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

__version__ = "0.1.0"
