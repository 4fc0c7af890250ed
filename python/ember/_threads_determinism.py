"""Thread-pool and determinism settings with torch's API.

Note [Determinism on CPU]: every ember CPU kernel is deterministic: reductions run in a fixed
blocking that does not depend on the number of threads (sum, norms, the convolution weight
gradient in fixed batch chunks, scatter/index_add in index order), so results are bit-identical
run to run and, as tested, for 1 and 2 threads. `use_deterministic_algorithms(True)` is therefore
honoured by construction: no CPU op needs to raise or switch implementation. The setting is
kept (and reported) so programs written for torch run unchanged.
"""
import os


_deterministic = False
_warn_only = False
_interop_threads = None


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Asks ops to use deterministic algorithms (Note [Determinism on CPU]: ember's are)."""
    global _deterministic, _warn_only
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _deterministic, _warn_only = mode, warn_only if mode else False


def are_deterministic_algorithms_enabled():
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0/"default": off; 1/"warn": deterministic, warn only; 2/"error": deterministic."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _deterministic:
        return 0
    return 1 if _warn_only else 2


def get_num_interop_threads():
    """Threads for running independent ops concurrently. Ember runs ops one after another on the
    calling thread (intra-op parallelism only, get_num_threads), so this is the value set, or by
    default the number of CPUs, as torch reports."""
    return _interop_threads if _interop_threads is not None else (os.cpu_count() or 1)


def set_num_interop_threads(nthreads):
    """Sets the inter-op thread count once, before any parallel work (torch's rule)."""
    global _interop_threads
    if not isinstance(nthreads, int) or isinstance(nthreads, bool):
        raise TypeError(f"set_num_interop_threads(): argument 'num' must be int, not {type(nthreads).__name__}")
    if nthreads <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop_threads = nthreads


