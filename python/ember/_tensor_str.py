"""Text formatting of tensors (``repr``/``str``) and the print options.

The output mirrors the format used by PyTorch, so that code and doctests
written against ``torch`` print identically under ``ember``.  The module is
duck-typed: :func:`tensor_repr` only relies on a small tensor interface
(``dtype``, ``shape``, ``dim()``, ``numel()``, ``requires_grad``,
``grad_fn``, ``device``, ``detach()``, ``cpu()``, basic indexing and
``tolist()``), so it works on ember tensors as well as on torch tensors.

Only the parts of a tensor that are actually displayed are converted to
Python values; a summarized tensor with 10**8 elements costs a handful of
small ``tolist()`` calls.
"""

import contextlib
import math

__all__ = [
    "PRINT_OPTS",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
    "tensor_repr",
]

_OPTION_NAMES = (
    "precision", "threshold", "edgeitems", "linewidth", "sci_mode")

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


class _PrintOptions:
    """Mutable holder of the current print options."""

    def __init__(self):
        self.__dict__.update(_PROFILES["default"], sci_mode=None)

    def __repr__(self):
        fields = ", ".join(
            "%s=%r" % (name, getattr(self, name)) for name in _OPTION_NAMES)
        return "PrintOptions(%s)" % fields


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None,
                     linewidth=None, profile=None, sci_mode=None):
    """Set options for printing tensors.

    Args:
        precision: number of digits after the decimal point for floats
            (default 4).
        threshold: total number of elements above which the tensor is
            summarized with ``...`` (default 1000).
        edgeitems: number of items shown at the start and end of each
            summarized dimension (default 3).
        linewidth: number of characters per line used for wrapping
            (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; applied first,
            then overridden by any explicit option.
        sci_mode: ``True`` forces scientific notation, ``False`` disables
            it, ``None`` (default) picks automatically.  Unlike the other
            options it is always assigned, so omitting it resets it.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError("unknown print profile %r; expected one of %s"
                             % (profile, ", ".join(sorted(_PROFILES))))
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """Return the current print options as a ``dict``."""
    return {name: getattr(PRINT_OPTS, name) for name in _OPTION_NAMES}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily applies :func:`set_printoptions`."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(PRINT_OPTS, name, value)


# --------------------------------------------------------------------------
# Gathering the displayed values
# --------------------------------------------------------------------------

class _Skip:
    """Marker for the elided middle part of a summarized dimension."""

    def __repr__(self):
        return "..."


_SKIP = _Skip()


def _gather(t, summarize, edge):
    """Return the displayed values of ``t`` (dim >= 1) as nested lists.

    Elided stretches are represented by the ``_SKIP`` marker.  Only the
    displayed sub-tensors are converted with ``tolist()``.
    """
    n = t.shape[0]
    if not summarize:
        return t.tolist()
    cut = n > 2 * edge
    if t.dim() == 1:
        if not cut:
            return t.tolist()
        return t[:edge].tolist() + [_SKIP] + t[n - edge:].tolist()
    if cut:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = range(n)
    return [_SKIP if i is None else _gather(t[i], summarize, edge)
            for i in rows]


def _flatten(data, out):
    """Append every displayed scalar of nested ``data`` to ``out``."""
    for item in data:
        if isinstance(item, list):
            _flatten(item, out)
        elif item is not _SKIP:
            out.append(item)
    return out


# --------------------------------------------------------------------------
# Scalar formatting
# --------------------------------------------------------------------------

def _dtype_name(dtype):
    """``torch.float32`` / ``ember.float32`` -> ``float32``."""
    return str(dtype).rsplit(".", 1)[-1]


def _value_formatter(kind, values):
    """Choose how the displayed ``values`` are written.

    Returns ``(fmt, width)``: ``fmt`` turns one scalar into its unpadded
    text and every element is right-aligned to ``width`` columns.

    Floats use one of three styles shared by the whole tensor: integral
    (``3.``), fixed point (``3.1416``) or scientific (``3.1416e+00``).  The
    choice and the column width depend only on the finite non-zero values;
    when there are none, the integral style with width 1 is used.
    """
    if kind == "complex":
        return _complex_formatter(values)
    if kind != "float":
        return str, max(len(str(v)) for v in values)
    prec = PRINT_OPTS.precision
    nonzero = [v for v in values if v != 0 and math.isfinite(v)]
    int_mode = all(v.is_integer() for v in nonzero)
    sci = False
    if nonzero:
        sci = PRINT_OPTS.sci_mode
        if sci is None:
            big = max(abs(v) for v in nonzero)
            small = min(abs(v) for v in nonzero)
            sci = big / small > 1000.0 or big > 1e8
            if not int_mode:
                sci = sci or small < 1e-4

    def fmt(v):
        if not math.isfinite(v):
            return str(v)  # 'nan', 'inf', '-inf'
        if sci:
            return "{:.{}e}".format(v, prec)
        if int_mode:
            return "{:.0f}.".format(v)
        return "{:.{}f}".format(v, prec)

    return fmt, max((len(fmt(v)) for v in nonzero), default=1)


def _complex_formatter(values):
    """Complex values: the real and imaginary parts each get a float formatter
    of their own (as PyTorch does); the imaginary part is padded, stripped and
    given a sign.  The text is not padded further, so ``width`` (used only to
    count elements per line) is real width + imaginary width + 1."""
    rfmt, rwidth = _value_formatter("float", [v.real for v in values])
    ifmt, iwidth = _value_formatter("float", [v.imag for v in values])

    def fmt(v):
        real = rfmt(v.real).rjust(rwidth)
        imag = (ifmt(v.imag).rjust(iwidth) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag

    fmt.padded = True
    return fmt, rwidth + iwidth + 1


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------

def _layout(data, ndim, indent, fmt, width):
    """Render nested ``data`` of rank ``ndim`` whose ``[`` sits at column
    ``indent``."""
    if ndim == 1:
        pad = 0 if getattr(fmt, "padded", False) else width
        items = [" ..." if v is _SKIP else fmt(v).rjust(pad) for v in data]
        per_line = max(1, (PRINT_OPTS.linewidth - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line])
                 for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    parts = ["..." if sub is _SKIP
             else _layout(sub, ndim - 1, indent + 1, fmt, width)
             for sub in data]
    return "[" + sep.join(parts) + "]"


def _is_default_dtype(name, default_dtype):
    """Whether a dtype named ``name`` is the default floating dtype or the
    complex dtype that goes with it."""
    default = _dtype_name(default_dtype()) if default_dtype is not None else "float32"
    complex_default = "complex128" if default == "float64" else "complex64"
    return name in (default, complex_default)


def tensor_repr(t, prefix_name="tensor", default_dtype=None):
    """Return the PyTorch-style ``repr`` of tensor ``t``.

    Args:
        t: a tensor (ember or torch) supporting the duck-typed interface
            described in the module docstring.
        prefix_name: name printed before the opening parenthesis.
        default_dtype: optional callable returning the current default
            floating dtype; when ``None`` it is assumed to be float32.
            Tensors of the default floating dtype, ``int64`` and ``bool``
            print no ``dtype=`` suffix (except empty ``int64``/``bool``
            tensors, which do).
    """
    opts = PRINT_OPTS
    name = _dtype_name(t.dtype)
    if name.startswith("complex"):
        kind = "complex"
    elif name == "bool":
        kind = "bool"
    elif name.startswith(("int", "uint")):
        kind = "int"
    else:
        kind = "float"

    prefix = prefix_name + "("
    indent = len(prefix)
    shape = tuple(t.shape)
    numel = t.numel()
    suffixes = []
    device = t.device
    if device.type != "cpu":
        suffixes.append("device='%s'" % (device,))

    # PyTorch quirk: with edgeitems=0 every non-empty tensor shows its size.
    show_size = t.dim() != 1 if numel == 0 else opts.edgeitems == 0
    if numel == 0:
        body = "[]"
    elif numel > opts.threshold and opts.edgeitems == 0 and t.dim() > 0:
        body = "[...]"  # nothing survives summarization
    else:
        vals = t.detach().cpu()
        if t.dim() == 0:
            value = vals.tolist()
            fmt, _ = _value_formatter(kind, [value])
            body = fmt(value)
        else:
            data = _gather(vals, numel > opts.threshold, opts.edgeitems)
            fmt, width = _value_formatter(kind, _flatten(data, []))
            body = _layout(data, t.dim(), indent, fmt, width)
    if show_size:
        suffixes.append("size=%r" % (shape,))

    is_default = _is_default_dtype(name, default_dtype)
    if numel == 0:
        show_dtype = not is_default
    else:
        show_dtype = not (is_default or name in ("int64", "bool"))
    if show_dtype:
        suffixes.append("dtype=%s" % (t.dtype,))

    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append("grad_fn=<%s>" % (grad_fn.name(),))
    elif t.requires_grad:
        suffixes.append("requires_grad=True")

    text = prefix + body
    # Each suffix goes on the current line if it fits, else on a new line.
    # PyTorch reserves two extra columns until the first suffix wraps.
    slack = 4
    for suffix in suffixes:
        last_line = len(text) - text.rfind("\n") - 1
        if last_line + len(suffix) + slack > opts.linewidth:
            text += ",\n" + " " * indent + suffix
            slack = 2
        else:
            text += ", " + suffix
    return text + ")"
