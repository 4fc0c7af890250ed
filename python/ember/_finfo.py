"""ember.finfo / ember.iinfo: the numerical limits of floating and integer dtypes (torch.finfo/iinfo)."""
from ember import _C

# bits, eps, max, smallest normal, resolution (10^-decimal digits), name
_FLOAT = {
    "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3),
    "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 1e-2),
    "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-6),
    "float64": (64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 1e-15),
}
_COMPLEX_PART = {"complex64": "float32", "complex128": "float64"}
_INT = {"uint8": (8, 0, 255), "int8": (8, -128, 127), "int16": (16, -32768, 32767),
        "int32": (32, -2 ** 31, 2 ** 31 - 1), "int64": (64, -2 ** 63, 2 ** 63 - 1)}


def _name(dtype):
    return str(dtype).split(".")[-1]


class finfo:
    """Limits of a floating (or complex: of its parts) dtype; the default dtype when none is given."""

    def __init__(self, type=None):
        if type is None:
            type = _C.get_default_dtype()
        name = _name(type)
        name = _COMPLEX_PART.get(name, name)
        if name not in _FLOAT:
            raise TypeError(f"ember.finfo() requires a floating point input type. Use ember.iinfo to handle "
                            f"'{_name(type)}'")
        self.bits, self.eps, self.max, self.smallest_normal, self.resolution = _FLOAT[name]
        self.min = -self.max
        self.tiny = self.smallest_normal
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype."""

    def __init__(self, type):
        name = _name(type)
        if name not in _INT:
            raise TypeError(f"ember.{name} is not supported by ember.iinfo")
        self.bits, self.min, self.max = _INT[name]
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
