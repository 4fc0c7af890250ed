"""transforms.v2-style names: the same tensor transforms plus ToImage and ToDtype."""
from ember.vision.transforms import (  # noqa: F401
    CenterCrop, Compose, Lambda, Normalize, Pad, RandomApply, RandomCrop, RandomHorizontalFlip, RandomRotation,
    RandomVerticalFlip, _convert_dtype, _to_chw_tensor,
)


class ToImage:
    """HWC/HW array, PIL image or tensor -> (C, H, W) tensor (dtype unchanged)."""

    def __call__(self, pic):
        return _to_chw_tensor(pic)


class ToDtype:
    """Converts the dtype; with scale=True rescales uint8 [0, 255] <-> float [0, 1]."""

    def __init__(self, dtype, scale=False):
        self.dtype, self.scale = dtype, scale

    def __call__(self, img):
        return _convert_dtype(img, self.dtype, self.scale)
