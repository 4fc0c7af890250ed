"""Backend settings, as ``torch.backends``: ``cpu``, ``mkl`` and ``mkldnn`` (ember's CPU libraries), and
``cuda``, ``cudnn`` and ``mps``, whose flags programs set (ember has no GPU build)."""
from ember.backends import cpu, cuda, cudnn, mkl, mkldnn, mps  # noqa: F401
