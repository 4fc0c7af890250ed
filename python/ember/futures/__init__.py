"""ember.futures: torch.futures.Future, a result that a thread delivers later.

Distributed work handles give one through ``Work.get_future()``; DDP communication hooks return
them. Callbacks (``then``, ``add_done_callback``) run on the thread that completes the future, or
right away on the caller's thread when it is already complete.
"""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value (or an exception) that becomes available once; ``wait()`` blocks until it does."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._exc = None
        self._callbacks = []

    def done(self):
        """True once a result or an exception has been set."""
        with self._cond:
            return self._done

    def wait(self):
        """Blocks until complete; returns the value or raises the exception."""
        with self._cond:
            while not self._done:
                self._cond.wait()
        return self.value()

    def value(self):
        """The value of a completed future (raises its exception); RuntimeError if not complete."""
        with self._cond:
            if not self._done:
                raise RuntimeError("Future.value() called on a future that is not complete yet")
            if self._exc is not None:
                raise self._exc
            return self._value

    def _complete(self, value, exc):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once")
            self._done = True
            self._value, self._exc = value, exc
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result):
        """Completes the future with result and runs its callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Completes the future with an exception: wait() and value() raise it."""
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._complete(None, result)

    def add_done_callback(self, callback):
        """Calls callback(self) once complete (now, if it already is)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A new future completed with callback(self) once this one completes."""
        out = Future()

        def run(fut):
            try:
                r = callback(fut)
            except BaseException as e:  # noqa: BLE001 - delivered through the new future
                out.set_exception(e)
            else:
                out.set_result(r)

        self.add_done_callback(run)
        return out

    def __repr__(self):
        state = "done" if self.done() else "pending"
        return f"ember.futures.Future({state})"


def collect_all(futures):
    """A future completed (with the list of futures) once all of them are complete."""
    futures = list(futures)
    out = Future()
    if not futures:
        out.set_result([])
        return out
    left = [len(futures)]
    lock = threading.Lock()

    def one(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures):
    """Waits for every future; the list of their values (the first exception is raised)."""
    return [f.wait() for f in futures]
