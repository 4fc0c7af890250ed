"""The older profiler API (torch.autograd.profiler): profile and record_function.

ember.profiler.profile builds on the same recorder (csrc/ember/profiler/profiler.h): ops called
through the bindings, autograd backward nodes, and record_function ranges (optimizer steps and
DataLoader fetches label themselves this way).
"""
import contextlib
import functools
import warnings

from ember import _C
from ember.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg, _events_from_raw  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]

_P = _C._profiler


def _is_profiling():
    return _P._is_profiling()


class record_function(contextlib.ContextDecorator):
    """Labels a block (``with record_function("name"):``) or a function (``@record_function("name")``)
    as one range in the profiler's results. Costs one C++ call when no profiler runs."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args  # accepted for torch's signature; not recorded
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_P._record_function_enter(self.name))
        return self

    def __exit__(self, *exc):
        if self._tokens:
            _P._record_function_exit(self._tokens.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            token = _P._record_function_enter(self.name)
            try:
                return fn(*args, **kwargs)
            finally:
                _P._record_function_exit(token)
        return wrapper


class profile:
    """Records ember ops, backward nodes and record_function ranges while active (the legacy API).

    After the block: ``function_events``, ``key_averages()``, ``table()``, ``export_chrome_trace()``.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        if use_cuda or (use_device not in (None, "cpu")):
            warnings.warn("ember's profiler records CPU activity only; device events are not collected", stacklevel=2)
        if not use_cpu:
            raise NotImplementedError("ember's profiler needs use_cpu=True (it records CPU activity only)")
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.function_events = None
        self._raw = None
        self.entered = False

    def _start(self):
        # FLOPs come from shapes, so with_flops records them too (shown only with record_shapes).
        _P._start(self.record_shapes or self.with_flops, self.profile_memory, self.with_stack)

    def _stop(self):
        raw = _P._stop()
        events = _events_from_raw(raw, record_shapes=self.record_shapes, with_flops=self.with_flops,
                                  profile_memory=self.profile_memory)
        if self.acc_events and self.function_events is not None:
            events = EventList(list(self.function_events) + list(events), profile_memory=self.profile_memory,
                               with_flops=self.with_flops, raw=raw)
        self._raw = raw
        self.function_events = events

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        self._stop()
        self.entered = False
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise RuntimeError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("group_by_input_shape=True needs the profiler run with record_shapes=True")
        if group_by_stack_n and not self.with_stack:
            raise RuntimeError("group_by_stack_n needs the profiler run with with_stack=True")
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        self._check_finish()
        return str(self.function_events)

    __repr__ = __str__
