"""Communication hooks for DistributedDataParallel.register_comm_hook."""
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: F401
