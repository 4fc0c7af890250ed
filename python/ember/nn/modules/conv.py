"""Conv1d/2d/3d and ConvTranspose1d/2d/3d over the C++ convolution ops (ember.nn.functional.conv*)."""
import math

import ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn.parameter import Parameter
from ember.nn.modules.module import Module
from ember.nn.modules.utils import _single, _pair, _triple, _reverse_repeat_tuple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _factory(device, dtype):
    if device is not None and str(device).split(":")[0] != "cpu":
        raise NotImplementedError(f"Ember was built without CUDA support; cannot create parameters on {device}")
    return {"dtype": dtype} if dtype is not None else {}


class _ConvNd(Module):
    """Shared state of the convolution modules; attribute names and checks as torch's."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        kw = _factory(device, dtype)
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zero padding modes (last dim first, each side).
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(ember.empty(shape, **kw))
        if bias:
            self.bias = Parameter(ember.empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a=sqrt(5): U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias the same bound.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


def _conv_padding(padding, tuple_fn):
    return padding if isinstance(padding, str) else tuple_fn(padding)


class _Conv(_ConvNd):
    _nd = 2
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), _conv_padding(padding, t), t(dilation),
                         False, t(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return self._fn(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, self._tuple(0), self.dilation, self.groups)
        return self._fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) or (C_in, L)."""
    _nd = 1
    _tuple = staticmethod(_single)
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W)."""
    _nd = 2
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""
    _nd = 3
    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _nd = 2
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding), t(dilation), True,
                         t(output_padding), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return self.output_padding
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial + num_spatial_dims:
            output_size = output_size[num_non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial + num_spatial_dims} elements "
                             f"(got {len(output_size)})")
        res = []
        for d in range(num_spatial_dims):
            dil = 1 if dilation is None else dilation[d]
            lo = (input.size(d + num_non_spatial) - 1) * stride[d] - 2 * padding[d] + dil * (kernel_size[d] - 1) + 1
            hi = lo + stride[d] - 1
            if not lo <= output_size[d] <= hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{[(input.size(i + num_non_spatial) - 1) * stride[i] - 2 * padding[i] + (1 if dilation is None else dilation[i]) * (kernel_size[i] - 1) + 1 for i in range(num_spatial_dims)]} "  # noqa: E501
                                 f"to {[(input.size(i + num_non_spatial) - 1) * stride[i] - 2 * padding[i] + (1 if dilation is None else dilation[i]) * (kernel_size[i] - 1) + stride[i] for i in range(num_spatial_dims)]} "  # noqa: E501
                                 f"(for an input of {list(input.shape[num_non_spatial:])})")
            res.append(output_size[d] - lo)
        return res

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._nd, self.dilation)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                        self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution (the gradient of Conv1d with respect to its input)."""
    _nd = 1
    _tuple = staticmethod(_single)
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution."""
    _nd = 2
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution."""
    _nd = 3
    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.conv_transpose3d)


# ---- Lazy variants: in_channels read from the first input ----
from ember.nn.modules.lazy import LazyModuleMixin  # noqa: E402
from ember.nn.parameter import UninitializedParameter  # noqa: E402

__all__ += ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d"]


class _LazyConvXdMixin(LazyModuleMixin):
    def _lazy_init(self, out_channels, bias, kw):
        self.weight = UninitializedParameter(**kw)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(**kw)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        nsd = len(self.kernel_size)
        if input.dim() not in (nsd + 1, nsd + 2):
            raise RuntimeError(f"Expected {nsd + 1}D (unbatched) or {nsd + 2}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {list(input.shape)}")
        return input.shape[1] if input.dim() == nsd + 2 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with ember.no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(base, nd):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            self._lazy_init(out_channels, bias, _factory(device, dtype))

    LazyConv.__name__ = LazyConv.__qualname__ = f"LazyConv{nd}d"
    LazyConv.__doc__ = f"A Conv{nd}d whose in_channels is read from the first input; it then becomes a Conv{nd}d."
    return LazyConv


def _lazy_conv_transpose(base, nd):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode)
            self._lazy_init(out_channels, bias, _factory(device, dtype))

    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = f"LazyConvTranspose{nd}d"
    LazyConvTranspose.__doc__ = f"A ConvTranspose{nd}d whose in_channels is read from the first input."
    return LazyConvTranspose


LazyConv1d = _lazy_conv(Conv1d, 1)
LazyConv2d = _lazy_conv(Conv2d, 2)
LazyConv3d = _lazy_conv(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, 3)
