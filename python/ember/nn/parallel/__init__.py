"""ember.nn.parallel: DistributedDataParallel (data-parallel training over ember.distributed) and
DataParallel (torch's single-process wrapper; without GPUs it runs the module as it is)."""
from ember.nn.parallel.data_parallel import DataParallel, data_parallel  # noqa: F401
from ember.nn.parallel.distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
