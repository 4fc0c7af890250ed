"""torch's symbolic-shape helpers (torch.sym_int, sym_max, ...) on plain Python numbers.

Ember runs eagerly (ember.compile traces nothing), so sizes are always concrete ints: these
behave as torch's do outside tracing, and the Sym* classes exist for isinstance checks that model
code writes (`isinstance(n, (int, torch.SymInt))`), never made.
"""
import builtins
import math

__all__ = ["SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt",
           "sym_ite", "sym_sum"]


class _NeverMade:
    def __new__(cls, *args, **kwargs):
        raise TypeError(f"ember.{cls.__name__}: ember has no symbolic shapes (sizes are plain Python numbers)")


class SymInt(_NeverMade):
    """torch.SymInt's name: a symbolic int under tracing, which ember never does."""


class SymFloat(_NeverMade):
    """torch.SymFloat's name (see SymInt)."""


class SymBool(_NeverMade):
    """torch.SymBool's name (see SymInt)."""


def sym_int(a):
    """int(a), rounding toward zero."""
    return int(a)


def sym_float(a):
    return float(a)


def sym_max(a, b):
    """max(a, b); a float if either is (torch promotes)."""
    r = builtins.max(a, b)
    return float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_min(a, b):
    r = builtins.min(a, b)
    return float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_not(a):
    """not a (a one-element tensor's truth value too)."""
    return not a


def sym_sqrt(a):
    return math.sqrt(a)


def sym_ite(b, t, f):
    """t if b else f; b must be a bool (AssertionError otherwise, as torch's)."""
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    return t if b else f


def sym_sum(args):
    """sum(args) of an iterable of numbers."""
    return builtins.sum(args)
