"""``ember.__config__``, as ``torch.__config__``: how this build was configured."""


def show():
    """The build's configuration: version, CPU kernel levels, BLAS/oneDNN/MKL in use."""
    import ember
    from ember import _C
    lines = [f"Ember {ember.__version__} (CPU build)",
             f"  - CPU kernel level: {_C._get_cpu_capability()} (best this CPU supports: "
             f"{_C._get_cpu_capability_supported()})",
             f"  - MKL GEMM: {'in use' if ember.backends.mkl.is_available() else 'not in use'}",
             f"  - oneDNN (mkldnn): {'enabled' if ember.backends.mkldnn.is_available() else 'not available'}",
             "  - CUDA: not built"]
    return "\n".join(lines) + "\n"


def parallel_info():
    """Threads the kernels use (ember.get_num_threads) and how they run."""
    import ember
    return (f"ATen/Parallel:\n\tat::get_num_threads() : {ember.get_num_threads()}\n"
            f"\tat::get_num_interop_threads() : {ember.get_num_interop_threads()}\n"
            "\tParallel backend: OpenMP\n")
