"""ember.nn.functional.pad: constant, reflect, replicate and circular padding.

constant: slices and cats of ember ops; the other modes: one gather through per-dim source
position maps (C++ _pad_gather, ops/nn_pad.cpp), whose backward adds into the sources.
"""
import ember
from ember import _C


def _index(n, left, right, mode):
    """Source positions along a dim of size n for a padded dim of size n + left + right."""
    if 0 <= left < n and 0 <= right < n:  # the common case as ranges (a Python loop took 36 us for 230)
        if mode == "reflect":
            return [*range(left, 0, -1), *range(n), *range(n - 2, n - 2 - right, -1)]
        if mode == "replicate":
            return [0] * left + [*range(n)] + [n - 1] * right
        return [*range(n - left, n), *range(n), *range(right)]  # circular
    out = []
    for i in range(-left, n + right):
        if mode == "reflect":
            period = 2 * (n - 1)
            j = abs(i) % period if period else 0
            out.append(j if j < n else period - j)
        elif mode == "replicate":
            out.append(min(max(i, 0), n - 1))
        else:  # circular
            out.append(i % n)
    return out


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad) // 2 dims of input; pad = (left_last, right_last, left_prev, ...)."""
    pad = list(pad)
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    npairs = len(pad) // 2
    if npairs > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    # The padded shape is checked before anything is allocated (Note [Checked size arithmetic]).
    new_shape = list(input.shape)
    for k in range(npairs):
        d = input.dim() - 1 - k
        new_shape[d] += pad[2 * k] + pad[2 * k + 1]
        if new_shape[d] < 0:
            raise RuntimeError(f"The input size {input.shape[d]}, plus negative padding {pad[2 * k]} and "
                               f"{pad[2 * k + 1]} resulted in a negative output size, which is invalid. Check "
                               f"dimension {d} of your input.")
    nbytes = input.element_size()
    for s in new_shape:
        nbytes *= s
    if nbytes >= 2**63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={new_shape}")
    if mode == "constant":
        out = input
        for k in range(npairs):
            d = input.dim() - 1 - k
            left, right = pad[2 * k], pad[2 * k + 1]
            if left < 0:
                out = out.narrow(d, -left, out.shape[d] + left)
                left = 0
            if right < 0:
                out = out.narrow(d, 0, out.shape[d] + right)
                right = 0
            parts = []
            fill = 0 if value is None else value
            if left:
                s = list(out.shape)
                s[d] = left
                parts.append(ember.full(s, fill, dtype=out.dtype))
            parts.append(out)
            if right:
                s = list(out.shape)
                s[d] = right
                parts.append(ember.full(s, fill, dtype=out.dtype))
            if len(parts) > 1:
                out = ember.cat(parts, d)
        return out if out is not input else input.clone()
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if input.dim() - npairs not in (1, 2) and not (input.dim() == npairs and False):
        if not (npairs <= 3 and input.dim() in (npairs + 1, npairs + 2)):
            raise NotImplementedError(f"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now "
                                      f"(got input of dim {input.dim()} and pad of length {len(pad)})")
    # One gather over all padded dims (C++ _pad_gather): a source position per output position
    # of each dim. (Slices, flips and cats copied the tensor once per dim: reflect 2.5x torch's time.)
    out = input
    maps = [None] * npairs
    for k in range(npairs):
        d = input.dim() - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        n = out.shape[d]
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (left > n or right > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "circular" and (left < 0 or right < 0):
            # torch crops the negative sides first and wraps the positive ones around what is left
            out = out.narrow(d, max(-left, 0), n + min(left, 0) + min(right, 0))
            left, right, n = max(left, 0), max(right, 0), out.shape[d]
            if left > n or right > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and n == 0:
            raise RuntimeError("input tensor must have non-zero size in the padded dims")
        maps[npairs - 1 - k] = _index(n, left, right, mode)
    name = ("CopySlices" if mode == "circular" else
            f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{npairs}DBackward0")
    return _C._pad_gather(out, maps, name)
