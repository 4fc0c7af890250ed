"""DistributedSampler: each of num_replicas processes reads its own share of the dataset."""
import math

import ember
from ember.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices for one rank: the (shuffled, per-epoch) index list padded or trimmed to divide evenly."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            try:
                import ember.distributed as dist  # noqa: PLC0415
            except ImportError:
                dist = None
            if dist is None or not dist.is_available() or not dist.is_initialized():
                raise RuntimeError("Requires distributed package to be available (or pass num_replicas and rank)")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ember.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch so each one shuffles differently (same order on every rank)."""
        self.epoch = epoch
