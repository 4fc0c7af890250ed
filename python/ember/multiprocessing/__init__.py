"""ember.multiprocessing: Python's multiprocessing, with ember tensors moved through shared memory.

Everything in `multiprocessing` is available here. Tensors sent through its queues, pipes and
pools (or given as arguments to a spawned process) share memory with the sender instead of being
copied, so a model's parameters can be trained by several processes at once (Hogwild).
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from ember.multiprocessing.reductions import init_reductions
from ember.multiprocessing.spawn import (  # noqa: F401
    ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException, spawn, start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "init_reductions"] + list(multiprocessing.__all__)

init_reductions()

# One strategy: descriptors of anonymous memfd segments (nothing to leak in /dev/shm).
_sharing_strategy = "file_descriptor"


def get_all_sharing_strategies():
    """The sharing strategies this platform supports."""
    return {"file_descriptor"}


def get_sharing_strategy():
    """The strategy used to share tensors between processes."""
    return _sharing_strategy


def set_sharing_strategy(new_strategy):
    """Chooses the sharing strategy; only 'file_descriptor' exists in ember."""
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"invalid sharing strategy {new_strategy!r}; ember supports 'file_descriptor'")
