"""``ember.compiler``, as ``torch.compiler``: the queries and decorators library code calls.

ember runs everything eagerly (``ember.compile``), so nothing is ever being compiled and the
decorators return what they are given.
"""
__all__ = ["is_compiling", "is_dynamo_compiling", "disable", "allow_in_graph", "assume_constant_result", "reset"]


def is_compiling():
    """False: ember never traces a program into a graph."""
    return False


def is_dynamo_compiling():
    return False


def disable(fn=None, recursive=True):
    """The function (or module) itself: there is no compilation to turn off."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def reset():
    """Nothing is cached by a compiler."""
