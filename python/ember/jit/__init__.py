"""``ember.jit``, as ``torch.jit``, for the parts library code calls at run time.

ember has no TorchScript: ``script``, ``trace``, ``save`` and ``load`` raise
NotImplementedError. The queries and decorators models use to stay scriptable work:
``is_scripting()`` and ``is_tracing()`` are False, and ``ignore``, ``unused``, ``export`` and
``interface`` return what they decorate.
"""
__all__ = ["is_scripting", "is_tracing", "ignore", "unused", "export", "interface", "script", "trace", "save",
           "load", "Final", "annotate"]

from typing import Final  # noqa: F401  (torch.jit.Final is typing's)


def is_scripting():
    return False


def is_tracing():
    return False


def ignore(drop=False, **kwargs):
    if callable(drop):  # used bare: @ember.jit.ignore
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def annotate(the_type, the_value):
    return the_value


def _no_torchscript(what):
    raise NotImplementedError(f"ember.jit.{what}: ember has no TorchScript; run the model eagerly (ember.compile "
                              "accepts torch.compile's arguments), or export weights with ember.save")


def script(obj, *args, **kwargs):
    _no_torchscript("script")


def trace(func, *args, **kwargs):
    _no_torchscript("trace")


def save(m, f, *args, **kwargs):
    _no_torchscript("save")


def load(f, *args, **kwargs):
    _no_torchscript("load")
