"""ember.utils: helpers with PyTorch's layout (``ember.utils.dlpack``, ``ember.utils.data``, ...), and
``ember.utils.safetensors`` (the API of ``safetensors.torch``)."""
import importlib

_LAZY_SUBMODULES = {"data", "dlpack", "checkpoint", "tensorboard", "benchmark", "safetensors"}


def __getattr__(name):
    # `ember.utils.data.DataLoader` after a bare `import ember`, without paying for it at import.
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"ember.utils.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
