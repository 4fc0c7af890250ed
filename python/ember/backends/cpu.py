"""CPU backend queries, as ``torch.backends.cpu``."""
from ember import _C

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The instruction set the CPU kernels run with: ``"DEFAULT"``, ``"AVX2"`` or ``"AVX512"``.

    It is the best one the CPU supports, or a lower one forced with the environment variable
    ``EMBER_CPU_CAPABILITY=default|avx2|avx512`` (read once, at the first kernel call).
    """
    return _C._get_cpu_capability()
