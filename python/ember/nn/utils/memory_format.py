"""Convolution weights in a memory format (torch.nn.utils.convert_conv2d/3d_weight_memory_format)."""
from ember.nn.modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lays out the weights of module's Conv2d/ConvTranspose2d layers (module itself and nested ones)
    in memory_format (channels_last: NHWC), leaving the other layers alone; returns module."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """As convert_conv2d_weight_memory_format, for Conv3d/ConvTranspose3d (channels_last_3d)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
