"""ember.random: seeding and state of the default CPU generator (as torch.random)."""

import contextlib

from ember._C import (  # noqa: F401
    Generator, default_generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
)

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cpu"):
    """Restores the default generator's state on exit, so draws inside do not affect those after.

    Only the CPU generator exists, so `devices` must be empty or None.
    """
    if not enabled:
        yield
        return
    if devices:
        raise NotImplementedError("fork_rng: Ember was built without CUDA support; devices must be empty")
    if device_type != "cpu":
        raise NotImplementedError(f"fork_rng: device_type {device_type!r} is not supported")
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
