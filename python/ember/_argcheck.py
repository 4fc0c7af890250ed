"""Argument-type checks for ops written in Python: a wrong type raises TypeError naming the
argument, as torch's argument parser does, instead of an AttributeError from deep inside."""
import functools
import numbers

from ember._C import Tensor


def _type_name(a):
    return type(a).__name__


# torch's scalar type names, used in its messages.
_TORCH_NAMES = {
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
    "complex128": "ComplexDouble", "int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int",
    "int64": "Long", "bool": "Bool",
}


def torch_type_name(dtype):
    """torch's name of a dtype in its messages ('Half', 'ComplexFloat')."""
    name = str(dtype).split(".")[-1]
    return _TORCH_NAMES.get(name, name)


def tensor_args(module_globals, names, positions=(0,), any_of=False, api_prefix=""):
    """Wraps module_globals[name] for each name: the positional arguments at `positions` must be
    Tensors (with any_of, at least one of them; the others may be numbers)."""
    for name in names:
        fn = module_globals[name]

        def wrapper(*args, __fn=fn, __name=api_prefix + name, **kwargs):
            present = [i for i in positions if i < len(args)]
            bad = [i for i in present if not isinstance(args[i], Tensor)]
            # with any_of, the others may be numbers, not lists or strings
            wrong = [i for i in bad if not isinstance(args[i], numbers.Number)] if any_of else bad
            if wrong or (bad and len(bad) == len(present)):
                i = (wrong or bad)[0]
                raise TypeError(f"{__name}(): argument (position {i + 1}) must be Tensor, not {_type_name(args[i])}")
            return __fn(*args, **kwargs)

        module_globals[name] = functools.wraps(fn)(wrapper)


def _dense_span(t):
    """(first byte, end byte) of a non-overlapping and dense tensor; None where torch would not decide
    (empty, or with gaps or self-overlap: its overlap check gives up on those and lets them through)."""
    if t.numel() == 0:
        return None
    dims = sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1)
    expect = 1
    for st, sz in dims:
        if st != expect:
            return None
        expect *= sz
    start = t.data_ptr()
    return start, start + t.numel() * t.element_size()


def check_out_overlap(out, inputs, allow_full=True):
    """torch's refusal of an out= that shares memory with an input: partially (any op), or at all unless
    `allow_full` (elementwise ops may write over an input they read element by element)."""
    if not isinstance(out, Tensor):
        return
    o = _dense_span(out)
    if o is None:
        return
    base = out.untyped_storage().data_ptr()
    for t in inputs:
        if not isinstance(t, Tensor) or t.untyped_storage().data_ptr() != base:
            continue
        s = _dense_span(t)
        if s is None:
            continue
        full = s == o and tuple(t.shape) == tuple(out.shape) and t.stride() == out.stride()
        if (full and allow_full) or s[1] <= o[0] or o[1] <= s[0]:
            continue
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           "refer to a single memory location. Please clone() the tensor before performing the "
                           "operation.")
