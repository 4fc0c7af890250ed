"""ember.utils.data: datasets, samplers and the DataLoader, with torch.utils.data's names."""
from ember.utils.data.dataset import (  # noqa: F401
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from ember.utils.data.sampler import (  # noqa: F401
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)
from ember.utils.data.distributed import DistributedSampler  # noqa: F401
from ember.utils.data.dataloader import DataLoader, default_collate, default_convert, get_worker_info  # noqa: F401
from ember.utils.data._utils.worker import WorkerInfo  # noqa: F401

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
