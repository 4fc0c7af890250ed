"""DLPack exchange, as ``torch.utils.dlpack``: ``to_dlpack(tensor)`` gives a capsule and
``from_dlpack(obj)`` accepts a capsule or any object with ``__dlpack__``; neither copies."""

import enum

from ember._C import _to_dlpack, from_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """Device codes of the DLPack specification (what ``__dlpack_device__`` reports)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """Returns an unversioned ("dltensor") DLPack capsule that shares ``tensor``'s memory."""
    return _to_dlpack(tensor)
