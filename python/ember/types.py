"""``ember.types``, as ``torch.types``: the aliases annotations use."""
from typing import Sequence, Tuple, Union

import ember

__all__ = ["Number", "Device", "Storage", "_dtype", "_device", "_size", "_bool", "_int", "_float", "_complex"]

_bool, _int, _float, _complex = bool, int, float, complex
Number = Union[int, float, bool]
_dtype = ember.dtype
_device = ember.device
_size = Union[ember.Size, Sequence[int], Tuple[int, ...]]
Device = Union[_device, str, int, None]
Storage = ember.UntypedStorage
