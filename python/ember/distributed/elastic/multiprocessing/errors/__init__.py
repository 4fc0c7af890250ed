"""@record: a worker's uncaught exception is written to its error file for the launcher's report
(ember's launcher records it for every script anyway; the decorator exists for torch scripts)."""
import functools
import traceback

__all__ = ["record"]


def record(fn=None, error_handler=None):
    """Decorates a worker's entry point: an exception it raises is recorded, then re-raised."""
    def wrap(f):
        @functools.wraps(f)
        def inner(*args, **kwargs):
            try:
                return f(*args, **kwargs)
            except SystemExit:
                raise
            except BaseException as e:
                from ember.distributed._launch_worker import write_error_file  # noqa: PLC0415

                write_error_file(traceback.format_exc(), f"{type(e).__name__}: {e}")
                raise
        return inner

    return wrap(fn) if fn is not None else wrap
