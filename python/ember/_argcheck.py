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
