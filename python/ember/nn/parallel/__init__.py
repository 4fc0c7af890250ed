"""ember.nn.parallel: DistributedDataParallel (data-parallel training over ember.distributed)."""
from ember.nn.parallel.distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
