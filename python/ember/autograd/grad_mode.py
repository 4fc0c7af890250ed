"""Grad-mode context managers and decorators (thread-local, as in PyTorch)."""
import functools

from ember import _C


def _is_generator_function(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and bool(code.co_flags & 0x20)  # CO_GENERATOR; avoids importing inspect


class _DecoratorContextManager:
    """A context manager that can also decorate functions (and generator functions)."""

    def __call__(self, fn):
        if isinstance(fn, type):
            raise TypeError("grad-mode context managers cannot decorate classes")
        if _is_generator_function(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    try:
                        with self.clone():
                            sent = yield value
                            value = gen.send(sent)
                    except StopIteration as e:
                        return e.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disables gradient recording inside the block (or decorated function)."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording inside the block, e.g. within a no_grad region."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on or off; takes effect immediately, and as a context manager restores it."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, fn):
        _C._set_grad_enabled(self.prev)  # as a decorator it must not change the mode now
        return super().__call__(fn)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, for code that never needs autograd (inference)."""

    def __init__(self, mode=True):
        self.mode = mode
        self.prev = self.prev_inf = False

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        self.prev_inf = _C.is_inference_mode_enabled()
        if self.mode:
            _C._set_grad_enabled(False)
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        _C._set_inference_mode(self.prev_inf)

    def clone(self):
        return self.__class__(self.mode)


def is_grad_enabled():
    return _C.is_grad_enabled()


def is_inference_mode_enabled():
    return _C.is_inference_mode_enabled()


_multithreading = True


class set_multithreading_enabled(_DecoratorContextManager):  # noqa: N801  (torch's name)
    """torch's switch for running backward on per-device threads. Ember's backward runs on the
    calling thread in either setting (CPU graphs run there in torch too); the setting is kept, and
    restored on exit, for torch's interface."""

    def __init__(self, mode):
        global _multithreading
        self.prev, self.mode = _multithreading, bool(mode)
        _multithreading = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        global _multithreading
        _multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, fn):
        global _multithreading
        _multithreading = self.prev  # as a decorator it must not change the setting now
        return super().__call__(fn)
