"""``ember.cuda``, as ``torch.cuda`` in a build without CUDA (ember is CPU-only).

What programs query runs as on such a torch: ``is_available()`` is False, ``device_count()`` 0,
the memory statistics 0, seeding and ``empty_cache`` do nothing. Whatever needs a GPU
(``synchronize``, ``current_device``, ``set_device``, ``get_device_name``, streams) raises
``CudaUnavailableError``, which is an AssertionError (torch's type for "Torch not compiled with
CUDA enabled") and a NotImplementedError (ember's for what it does not have).
"""
from ember.cuda import amp  # noqa: F401

__all__ = ["is_available", "device_count", "is_initialized", "init", "current_device", "set_device",
           "synchronize", "get_device_name", "get_device_properties", "get_device_capability", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "is_bf16_supported",
           "CudaUnavailableError", "device", "Stream", "Event", "stream", "current_stream"]


class CudaUnavailableError(AssertionError, NotImplementedError):
    """Raised by what needs a GPU: ember has no CUDA build."""


from ember import OutOfMemoryError  # noqa: E402,F401  (torch.cuda.OutOfMemoryError is torch.OutOfMemoryError)


def _unavailable(*args, **kwargs):
    raise CudaUnavailableError("Torch not compiled with CUDA enabled (ember is CPU-only)")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


init = current_device = set_device = synchronize = _unavailable
get_device_name = get_device_properties = get_device_capability = _unavailable
current_stream = default_stream = stream = _unavailable


class _NeedsGpu:
    def __init__(self, *args, **kwargs):
        _unavailable()


class device(_NeedsGpu):  # noqa: N801  (torch's name)
    """torch.cuda.device(i): selecting a GPU, which ember does not have."""


class Stream(_NeedsGpu):
    pass


class Event(_NeedsGpu):
    pass


def manual_seed(seed):
    """Nothing to seed: there is no CUDA generator (torch queues the seed until CUDA starts)."""


def manual_seed_all(seed):
    """Nothing to seed (see manual_seed)."""


def seed():
    pass


def seed_all():
    pass


def empty_cache():
    """Nothing is cached without a GPU."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def reset_peak_memory_stats(device=None):
    _unavailable()
