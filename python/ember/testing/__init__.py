"""``ember.testing``, as ``torch.testing``: ``assert_close`` and ``make_tensor``."""
import math
from collections.abc import Mapping, Sequence

import ember

__all__ = ["assert_close", "make_tensor"]

# torch.testing's default (rtol, atol) by dtype; integers and bool compare exactly.
_TOLERANCES = {
    ember.float16: (1e-3, 1e-5), ember.bfloat16: (1.6e-2, 1e-5), ember.float32: (1.3e-6, 1e-5),
    ember.float64: (1e-7, 1e-7), ember.complex64: (1.3e-6, 1e-5), ember.complex128: (1e-7, 1e-7),
}
if hasattr(ember, "complex32"):
    _TOLERANCES[ember.complex32] = (1e-3, 1e-5)


def _fail(msg, default):
    if msg is None:
        raise AssertionError(default)
    raise AssertionError(msg(default) if callable(msg) else msg)


def _as_tensor(x):
    if isinstance(x, ember.Tensor):
        return x
    return ember.as_tensor(x)


def _index_str(flat_index, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat_index % s)
        flat_index //= s
    return "(" + ", ".join(str(i) for i in reversed(idx)) + ("," if len(shape) == 1 else "") + ")"


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_device, check_stride, msg, path):
    where = f" at {path}" if path else ""
    if actual.shape != expected.shape:
        _fail(msg, f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}{where}.")
    if check_dtype and actual.dtype != expected.dtype:
        _fail(msg, f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}{where}.")
    if check_device and actual.device != expected.device:
        _fail(msg, f"The values for attribute 'device' do not match: {actual.device} != {expected.device}{where}.")
    if check_stride and actual.stride() != expected.stride():
        _fail(msg, f"The values for attribute 'stride()' do not match: {actual.stride()} != {expected.stride()}"
                   f"{where}.")
    if rtol is None:
        dts = [actual.dtype, expected.dtype]
        rtol = max(_TOLERANCES.get(d, (0.0, 0.0))[0] for d in dts)
        atol = max(_TOLERANCES.get(d, (0.0, 0.0))[1] for d in dts)
    dtype = ember.promote_types(actual.dtype, expected.dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        a64, e64 = actual.to(ember.int64), expected.to(ember.int64)
        close = a64 == e64
    else:
        wide = ember.complex128 if dtype.is_complex else ember.float64
        a64, e64 = actual.detach().to(wide), expected.detach().to(wide)
        close = ember.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(close.all()):
        return
    exact = not (dtype.is_floating_point or dtype.is_complex)
    if actual.dim() == 0:  # torch's scalar message, in Python numbers
        av, ev = a64.item(), e64.item()
        diff = abs(av - ev)
        rel = diff / abs(ev) if ev != 0 else (math.nan if diff == 0 else math.inf)
        lines = [f"Scalars are not {'equal' if exact else 'close'}!", "", f"Expected {ev} but got {av}."]
        if exact:
            lines += [f"Absolute difference: {diff}", f"Relative difference: {rel}"]
        else:
            lines += [f"Absolute difference: {diff} (up to {atol} allowed)",
                      f"Relative difference: {rel} (up to {rtol} allowed)"]
    else:
        total = close.numel()
        bad = int((~close).sum())
        lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
                 f"Mismatched elements: {bad} / {total} ({100.0 * bad / total:.1f}%)"]
        # differences in the compared dtype (integers: the relative one as a default-dtype division)
        if exact:
            ap, ep = actual.to(ember.int64), expected.to(ember.int64)
        else:
            ap, ep = actual.detach().to(dtype), expected.detach().to(dtype)
        diff = (ap - ep).abs().reshape(-1)
        rel = (diff / ep.abs().reshape(-1)).to(ember.float64)
        diff = diff.to(ember.float64)
        keep = close.reshape(-1)
        diff = ember.where(keep, ember.zeros_like(diff), diff)
        rel = ember.where(keep, ember.zeros_like(rel), rel)
        i_abs, i_rel = int(diff.nan_to_num(math.inf).argmax()), int(rel.nan_to_num(math.inf).argmax())
        shape = list(actual.shape)
        d_abs = int(diff[i_abs]) if exact else float(diff[i_abs])
        at_abs, at_rel = _index_str(i_abs, shape), _index_str(i_rel, shape)
        if exact:
            lines += [f"Greatest absolute difference: {d_abs} at index {at_abs}",
                      f"Greatest relative difference: {float(rel[i_rel])} at index {at_rel}"]
        else:
            lines += [f"Greatest absolute difference: {d_abs} at index {at_abs} (up to {atol} allowed)",
                      f"Greatest relative difference: {float(rel[i_rel])} at index {at_rel} (up to {rtol} allowed)"]
    if path:
        lines += ["", f"The failure occurred for item {path}"]
    _fail(msg, "\n".join(lines))


def _compare(actual, expected, path, **kw):
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual.keys()) != set(expected.keys()):
            _fail(kw["msg"], f"The keys of the mappings do not match{' at ' + path if path else ''}: "
                             f"{sorted(map(repr, actual.keys()))} != {sorted(map(repr, expected.keys()))}")
        for k in actual:
            _compare(actual[k], expected[k], f"{path}[{k!r}]", **kw)
        return
    is_seq = (lambda x: isinstance(x, Sequence) and not isinstance(x, (str, bytes)))
    if is_seq(actual) and is_seq(expected):
        if len(actual) != len(expected):
            _fail(kw["msg"], f"The length of the sequences mismatch{' at ' + path if path else ''}: "
                             f"{len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{path}[{i}]", **kw)
        return
    numbers = (bool, int, float, complex)
    tensorish = (lambda x: isinstance(x, (ember.Tensor,) + numbers) or hasattr(x, "__array__"))
    if not (tensorish(actual) and tensorish(expected)):
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")
    if isinstance(actual, numbers) and isinstance(expected, numbers) and kw["check_dtype"] \
            and type(actual) is not type(expected):
        _fail(kw["msg"], f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    if isinstance(actual, ember.Tensor) != isinstance(expected, ember.Tensor) and not kw["allow_subclasses"]:
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")
    a, e = _as_tensor(actual), _as_tensor(expected)
    if isinstance(actual, float) and isinstance(expected, float):
        a, e = a.to(ember.float64), e.to(ember.float64)
    _compare_tensors(a, e, kw["rtol"], kw["atol"], kw["equal_nan"], kw["check_dtype"], kw["check_device"],
                     kw["check_stride"], kw["msg"], path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises AssertionError unless actual and expected are close: |a - e| <= atol + rtol * |e|
    elementwise (torch's default tolerances by dtype; exact for integers and bool), with equal
    shapes, dtypes and devices; sequences and mappings are compared item by item."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'} and {'atol' if rtol is None else 'rtol'}="
                         f"{atol if rtol is None else rtol}.")
    _compare(actual, expected, "", allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
             check_device=check_device, check_dtype=check_dtype, check_stride=check_stride, msg=msg)


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of the given shape and dtype with values drawn uniformly from [low, high) (default
    [-9, 9] for signed types, [0, 9] for unsigned; bool: random True/False)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, ember.Size)):
        shape = tuple(shape[0])
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"make_tensor: requires_grad=True is not supported for dtype {dtype}")
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    for name, v in (("low", low), ("high", high)):
        if v is not None and isinstance(v, float) and math.isnan(v):
            raise ValueError(f"`{name}` cannot be NaN, but got {name}=nan")
    if dtype == ember.bool:
        t = ember.randint(0, 2, shape).to(ember.bool)
    elif dtype.is_floating_point or dtype.is_complex:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        real = ember.float64 if dtype in (ember.float64, ember.complex128) else ember.float32
        if dtype.is_complex:
            t = ember.complex(ember.rand(shape, dtype=real) * (hi - lo) + lo,
                              ember.rand(shape, dtype=real) * (hi - lo) + lo).to(dtype)
        else:
            t = (ember.rand(shape, dtype=real) * (hi - lo) + lo).to(dtype)
    else:
        info = ember.iinfo(dtype)
        lo = (0 if info.min == 0 else -9) if low is None else max(math.ceil(low), info.min)
        hi = 10 if high is None else min(math.ceil(high) + (1 if high == math.ceil(high) else 0), info.max + 1)
        hi = max(hi, lo + 1)
        t = ember.randint(lo, hi, shape, dtype=ember.int64).to(dtype)
    if exclude_zero:
        eps = 1 if not (dtype.is_floating_point or dtype.is_complex) else ember.finfo(
            dtype if dtype.is_floating_point else ember.float32).tiny
        t = ember.where(t == 0, ember.full_like(t, eps), t)
    if noncontiguous and t.numel() > 1:
        t = ember.repeat_interleave(t, 2, dim=-1)[..., ::2]
    elif memory_format is not None:
        t = t.contiguous(memory_format=memory_format)
    if requires_grad:
        t.requires_grad_()
    return t
