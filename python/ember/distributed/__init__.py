"""ember.distributed: torch.distributed on Gloo (CPU tensors), across processes and machines.

Stores (TCPStore, FileStore, HashStore, PrefixStore) and process groups are C++ (libember's
csrc/ember/distributed/); this package is the Python API around them: init_process_group,
collectives, object collectives, and the launcher `python -m ember.distributed.run`.
"""
from ember._C._distributed import (  # noqa: F401
    DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore, HashStore, PrefixStore, Store,
    TCPStore,
)
from ember.distributed.distributed_c10d import *  # noqa: F401,F403
from ember.distributed.distributed_c10d import __all__ as _c10d_all
from ember.distributed.rendezvous import register_rendezvous_handler, rendezvous  # noqa: F401
from ember.nn.parallel.distributed import GradBucket  # noqa: F401

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError", "FileStore", "HashStore",
           "PrefixStore", "Store", "TCPStore", "GradBucket", "rendezvous", "register_rendezvous_handler"] + list(_c10d_all)
