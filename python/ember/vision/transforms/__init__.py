"""Image transforms with torchvision.transforms' names, on ember tensors (and NumPy/PIL images).

Images are (..., C, H, W) tensors after ToTensor. Random transforms draw from ember's generator, so
ember.manual_seed (and each DataLoader worker's seed) makes them reproducible.
"""
import math
import numbers

import numpy as np

import ember

__all__ = ["Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "Normalize", "Lambda", "RandomCrop",
           "CenterCrop", "Pad", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "RandomApply"]


class Compose:
    """Applies transforms one after another."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


def _to_chw_tensor(pic):
    """A PIL image, an HWC/HW ndarray or an HW/HWC tensor as a (C, H, W) tensor of its own dtype."""
    if isinstance(pic, ember.Tensor):
        t = pic
    elif isinstance(pic, np.ndarray):
        t = ember.from_numpy(np.ascontiguousarray(pic))
    elif type(pic).__module__.startswith("PIL."):
        t = ember.from_numpy(np.array(pic, copy=True))
    else:
        raise TypeError(f"pic should be PIL Image, ndarray or Tensor. Got {type(pic)}")
    if t.dim() == 2:
        return t.unsqueeze(0)
    if t.dim() == 3:
        return t.permute(2, 0, 1).contiguous()
    raise ValueError(f"pic should be 2 or 3 dimensional (H x W or H x W x C). Got {t.dim()} dimensions.")


class ToTensor:
    """HWC (or HW) uint8 image -> (C, H, W) float32 tensor in [0, 1].

    Ember's datasets return uint8 tensors rather than PIL images, so tensors are accepted too.
    """

    def __call__(self, pic):
        t = _to_chw_tensor(pic)
        if t.dtype == ember.uint8:
            return t.to(ember.get_default_dtype()).div_(255)
        return t.to(ember.get_default_dtype()) if not t.is_floating_point() else t

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """HWC image -> (C, H, W) tensor, dtype unchanged."""

    def __call__(self, pic):
        return _to_chw_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ConvertImageDtype:
    """Converts an image tensor's dtype, rescaling values (uint8 [0, 255] <-> float [0, 1])."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, image):
        return _convert_dtype(image, self.dtype, scale=True)


def _convert_dtype(image, dtype, scale):
    if image.dtype == dtype:
        return image
    if not scale:
        return image.to(dtype)
    if image.is_floating_point() and not dtype.is_floating_point:
        return (image * 255).round().clamp(0, 255).to(dtype)
    if not image.is_floating_point() and dtype.is_floating_point:
        return image.to(dtype).div_(255)
    return image.to(dtype)


class Normalize:
    """(input - mean) / std per channel of a (..., C, H, W) tensor."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        if not isinstance(tensor, ember.Tensor):
            raise TypeError(f"Input tensor should be a torch tensor. Got {type(tensor)}.")
        if not tensor.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.dim() < 3:
            raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                             f"{tuple(tensor.shape)}")
        mean = ember.as_tensor(self.mean, dtype=tensor.dtype)
        std = ember.as_tensor(self.std, dtype=tensor.dtype)
        if (std == 0).any():
            raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
        if mean.dim() == 1:
            mean = mean.view(-1, 1, 1)
        if std.dim() == 1:
            std = std.view(-1, 1, 1)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return (tensor - mean) / std

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Lambda:
    """A user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


def _pair(size):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    return int(size[0]), int(size[1])


def _pad(img, padding, fill=0, padding_mode="constant"):
    """Pads the last two dims; padding is an int, (lr, tb) or (left, top, right, bottom)."""
    if isinstance(padding, numbers.Number):
        left = top = right = bottom = int(padding)
    elif len(padding) == 2:
        left, right, top, bottom = padding[0], padding[0], padding[1], padding[1]
    else:
        left, top, right, bottom = padding
    if padding_mode == "constant":
        h, w = img.shape[-2:]
        out = ember.full(tuple(img.shape[:-2]) + (h + top + bottom, w + left + right), fill, dtype=img.dtype)
        out[..., top:top + h, left:left + w] = img
        return out
    mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}.get(padding_mode)
    if mode is None:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    a = img.numpy()
    widths = [(0, 0)] * (a.ndim - 2) + [(top, bottom), (left, right)]
    return ember.from_numpy(np.pad(a, widths, mode=mode))


class Pad:
    """Pads the image borders."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def __call__(self, img):
        return _pad(img, self.padding, self.fill, self.padding_mode)


class CenterCrop:
    """Crops the centre (H, W) of the image."""

    def __init__(self, size):
        self.size = _pair(size)

    def __call__(self, img):
        h, w = img.shape[-2:]
        th, tw = self.size
        top, left = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
        return img[..., top:top + th, left:left + tw]


class RandomCrop:
    """Crops a random (H, W) window, after optional padding."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = _pair(size)
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    def __call__(self, img):
        if self.padding is not None:
            img = _pad(img, self.padding, self.fill, self.padding_mode)
        h, w = img.shape[-2:]
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = _pad(img, [tw - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = _pad(img, [0, th - h], self.fill, self.padding_mode)
        h, w = img.shape[-2:]
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        i = int(ember.randint(0, h - th + 1, size=(1,)).item())
        j = int(ember.randint(0, w - tw + 1, size=(1,)).item())
        return img[..., i:i + th, j:j + tw]

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Flips the image left-right with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return img.flip(-1) if ember.rand(1).item() < self.p else img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip:
    """Flips the image top-bottom with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return img.flip(-2) if ember.rand(1).item() < self.p else img


class RandomApply:
    """Applies a list of transforms with probability p."""

    def __init__(self, transforms, p=0.5):
        self.transforms, self.p = transforms, p

    def __call__(self, img):
        if self.p < ember.rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img


class RandomRotation:
    """Rotates by an angle drawn uniformly from `degrees` (nearest-neighbour sampling, same size)."""

    def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0):
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError("If degrees is a single number, it must be positive.")
            degrees = (-degrees, degrees)
        self.degrees = (float(degrees[0]), float(degrees[1]))
        if expand:
            raise NotImplementedError("RandomRotation(expand=True) is not supported by ember.vision")
        if str(getattr(interpolation, "value", interpolation)) != "nearest":
            raise NotImplementedError("RandomRotation supports only nearest interpolation in ember.vision")
        self.center, self.fill = center, fill

    def __call__(self, img):
        angle = float(ember.empty(1).uniform_(self.degrees[0], self.degrees[1]).item())
        h, w = img.shape[-2:]
        cx, cy = ((w - 1) * 0.5, (h - 1) * 0.5) if self.center is None else self.center
        a = math.radians(angle)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
        # inverse mapping: where each output pixel comes from (counter-clockwise rotation by `angle`)
        sx = math.cos(a) * (xs - cx) - math.sin(a) * (ys - cy) + cx
        sy = math.sin(a) * (xs - cx) + math.cos(a) * (ys - cy) + cy
        sxi, syi = np.rint(sx).astype(np.int64), np.rint(sy).astype(np.int64)
        valid = (sxi >= 0) & (sxi < w) & (syi >= 0) & (syi < h)
        src = img.numpy()
        out = np.full_like(src, self.fill)
        out[..., valid] = src[..., syi[valid], sxi[valid]]
        return ember.from_numpy(out)

    def __repr__(self):
        return f"{self.__class__.__name__}(degrees={list(self.degrees)}, interpolation=nearest, expand=False, fill={self.fill})"
