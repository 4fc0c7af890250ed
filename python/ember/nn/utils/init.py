"""skip_init: build a module without running its parameter initialisation's results (torch.nn.utils.skip_init)."""
import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with uninitialized parameters and buffers (values left unset).

    torch builds the module on the meta device; ember has none, so the module is built normally
    and its tensors are then replaced by empty ones of the same shape (to_empty).
    """
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs).to_empty(device=final_device)
