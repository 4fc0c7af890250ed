"""ember.cpu: the CPU device as torch.cpu describes it, plus the CPU allocator's statistics.

The memory functions mirror torch.cuda's for ember's CPU caching allocator (the CUDA back end will
offer the same names): memory_stats(), memory_allocated(), max_memory_allocated(),
memory_reserved(), reset_peak_memory_stats(), empty_cache(), and in ember.cpu.memory the memory
history (_record_memory_history / _snapshot).
"""
from ember.cpu.memory import (  # noqa: F401
    empty_cache, max_memory_allocated, max_memory_reserved, memory_allocated, memory_reserved, memory_stats,
    memory_summary, reset_accumulated_memory_stats, reset_max_memory_allocated, reset_peak_memory_stats,
)

from ember.cpu import amp  # noqa: E402,F401  (torch.cpu.amp's older autocast/GradScaler names)

__all__ = ["amp", "Stream", "Event", "StreamContext", "current_stream", "stream", "set_device", "is_initialized",
           "is_available", "device_count", "current_device", "synchronize", "memory_stats", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "reset_accumulated_memory_stats", "empty_cache", "memory_summary"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """CPU work is synchronous: nothing to wait for."""


# Streams and events as torch.cpu has them, for device-agnostic code (torch.get_device_module(d).stream(...)):
# CPU work runs in program order on the calling thread, so there is one stream and nothing to wait for.
class Stream:
    """The CPU's one stream (work runs in program order)."""

    def __init__(self, priority=-1):
        self.priority = priority

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        pass


class Event:
    """An event on the CPU stream: complete as soon as it is recorded."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        pass

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()


def current_stream(device=None):
    return _default_stream


class StreamContext:
    """`with ember.cpu.stream(s):` selects s (the CPU has only the one stream)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        pass


def stream(stream):
    return StreamContext(stream)


def set_device(device):
    """The CPU is the one device: nothing to select."""


def is_initialized():
    return True
