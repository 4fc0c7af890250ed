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

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize", "memory_stats", "memory_allocated",
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
