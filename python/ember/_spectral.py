"""ember.stft / ember.istft and the window functions (hann_window, hamming_window, blackman_window,
bartlett_window, kaiser_window), with torch's arguments, defaults, results and errors.

stft frames the (centre-padded) signal with an unfold view, multiplies by the window and runs one
batched r2c (or c2c) primitive over the frames; istft runs the inverse primitive on every frame,
multiplies by the window and overlap-adds the frames with index_add, dividing by the overlap-added
squared window. Both are compositions of differentiable ops, so gradients come from the parts.
Windows are computed in float64 and rounded to the requested dtype.
"""
import math
import operator
import warnings

import ember
from ember import _C
from ember.fft import _on_device, _type_name

_BY_ROOT_N, _BY_N = 1, 2


# ---- windows ----

def _window_length(window_length, name):
    if isinstance(window_length, (bool, float)) or not hasattr(window_length, "__index__"):
        raise TypeError(f"{name}(): argument 'window_length' must be int, not {type(window_length).__name__}")
    window_length = operator.index(window_length)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    return window_length


def _window_dtype(dtype, name):
    dtype = ember.get_default_dtype() if dtype is None else dtype
    if dtype.is_complex:
        raise NotImplementedError(f"{name} is not implemented for complex dtypes, got: {dtype}")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    return dtype


def _finish_window(w, dtype, requires_grad, device=None):
    w = _on_device(w.to(dtype), device)
    return w.requires_grad_() if requires_grad else w


def _periodic_positions(window_length, periodic):
    """(n, N): positions 0 .. window_length - 1 in float64 and the symmetric window's span N - 1
    (a periodic window is the first window_length points of a symmetric one of window_length + 1)."""
    span = window_length if periodic else window_length - 1
    return ember.arange(window_length, dtype=ember.float64), span


def _cosine_window(name, window_length, periodic, coeffs, dtype, requires_grad, device):
    """sum_k (-1)^k coeffs[k] cos(2 pi k n / span)."""
    window_length = _window_length(window_length, name)
    dtype = _window_dtype(dtype, name)
    if window_length <= 1:
        return _finish_window(ember.ones(window_length, dtype=ember.float64), dtype, requires_grad, device)
    n, span = _periodic_positions(window_length, periodic)
    w = ember.zeros(window_length, dtype=ember.float64)
    for k, a in enumerate(coeffs):
        term = ember.cos(n * (2 * math.pi * k / span)) * a
        w = w + term if k % 2 == 0 else w - term
    return _finish_window(w, dtype, requires_grad, device)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """Hann window: 0.5 - 0.5 cos(2 pi n / (N - 1)); periodic drops the last point of N + 1."""
    return _cosine_window("hann_window", window_length, periodic, (0.5, 0.5), dtype, requires_grad, device)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """Hamming window: alpha - beta cos(2 pi n / (N - 1))."""
    return _cosine_window("hamming_window", window_length, periodic, (alpha, beta), dtype, requires_grad, device)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """Blackman window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _cosine_window("blackman_window", window_length, periodic, (0.42, 0.5, 0.08), dtype, requires_grad, device)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """Bartlett (triangular) window: 1 - |2 n / (N - 1) - 1|."""
    window_length = _window_length(window_length, "bartlett_window")
    dtype = _window_dtype(dtype, "bartlett_window")
    if window_length <= 1:
        return _finish_window(ember.ones(window_length, dtype=ember.float64), dtype, requires_grad, device)
    n, span = _periodic_positions(window_length, periodic)
    return _finish_window(1 - ember.abs(n * (2.0 / span) - 1), dtype, requires_grad, device)


def _kaiser(n, span, beta):
    """I0(beta sqrt(1 - ((n - span / 2) / (span / 2))^2)) / I0(beta) over float64 positions n."""
    t = (n - span / 2) / (span / 2)
    r = ember.sqrt(ember.clamp(1 - t * t, min=0.0)) * beta
    return _C._bessel("i0", r) / _C._bessel("i0", ember.tensor([float(beta)], dtype=ember.float64))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """Kaiser window with shape parameter beta."""
    window_length = _window_length(window_length, "kaiser_window")
    dtype = _window_dtype(dtype, "kaiser_window")
    if window_length <= 1:
        return _finish_window(ember.ones(window_length, dtype=ember.float64), dtype, requires_grad, device)
    n, span = _periodic_positions(window_length, periodic)
    return _finish_window(_kaiser(n, span, beta), dtype, requires_grad, device)


# ---- stft / istft ----

def _pad_signal(x, pad, mode):
    """Pads the last dim of a 3-d view by `pad` on both sides (stft's centring); F.pad raises
    torch's errors."""
    return x if pad == 0 else ember.nn.functional.pad(x, [pad, pad], mode)


def _int_or_none(v, fname, argname):
    if v is None:
        return None
    if isinstance(v, (bool, float)) or not hasattr(v, "__index__"):
        raise TypeError(f"{fname}(): argument '{argname}' must be int, not {type(v).__name__}")
    return operator.index(v)


def _real_dtype(dt):
    return ember.float64 if dt in (ember.float64, ember.complex128) else ember.float32


def _padded_window(window, win_length, n_fft, dtype):
    """The window (ones when None) zero-padded on both sides to n_fft."""
    w = ember.ones(win_length, dtype=dtype) if window is None else window
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = ember.cat([ember.zeros(left, dtype=w.dtype), w, ember.zeros(n_fft - win_length - left, dtype=w.dtype)])
    return w


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """Short-time Fourier transform: (B?, N, T) complex, N = n_fft // 2 + 1 when onesided."""
    if not isinstance(input, ember.Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    n_fft = operator.index(n_fft)
    hop_length = _int_or_none(hop_length, "stft", "hop_length")
    win_length = _int_or_none(win_length, "stft", "win_length")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied, which is known to cause "
                      "spectral leakage. Other windows such as ember.hann_window or ember.hamming_window are "
                      "recommended to reduce spectral leakage. To suppress this warning and use a rectangular "
                      "window, explicitly set `window=ember.ones(n_fft)`.", UserWarning, stacklevel=2)
    if center:
        if align_to_window is not None:
            raise RuntimeError("stft align_to_window should only be set when center = false")
        signal_dim = input.dim()
        x = input.reshape([1] * (3 - signal_dim) + list(input.shape))
        x = _pad_signal(x, n_fft // 2, pad_mode)
        input = x.reshape(x.shape[-signal_dim:]) if signal_dim else x
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    elif not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call ember.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    dt = input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("stft: expected a tensor of floating point or complex values")
    if dt in (ember.float16, ember.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_type_name(dt)}")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got a {input.dim()}D tensor")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    length = x.shape[1]
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if align_to_window:
        # Frames of win_length samples from t * hop_length, the window centred in the n_fft buffer.
        frames = x.unfold(1, win, hop)
        if window is not None:
            frames = frames * window
        left = (n_fft - win) // 2
        if win < n_fft:
            b, t = frames.shape[0], frames.shape[1]
            frames = ember.cat([ember.zeros(b, t, left, dtype=frames.dtype), frames,
                                ember.zeros(b, t, n_fft - win - left, dtype=frames.dtype)], 2)
    else:
        frames = x.unfold(1, n_fft, hop)  # (B, T, n_fft), a view
        if window is not None or win < n_fft:
            frames = frames * _padded_window(window, win, n_fft, _real_dtype(dt))
    complex_fft = frames.is_complex()
    onesided = (not complex_fft) if onesided is None else bool(onesided)
    if onesided and complex_fft:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    mode = _BY_ROOT_N if normalized else 0
    if complex_fft:
        out = _C._fft_c2c(frames, [2], mode, True)
    else:
        out = _C._fft_r2c(frames, [2], mode, onesided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex else ember.view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """Inverse short-time Fourier transform: overlap-add of the inverse transforms of the frames,
    divided by the overlap-added squared window (least-squares inverse of stft)."""
    if not isinstance(input, ember.Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    n_fft = operator.index(n_fft)
    hop_length = _int_or_none(hop_length, "istft", "hop_length")
    win_length = _int_or_none(win_length, "istft", "win_length")
    length = _int_or_none(length, "istft", "length")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied. Please provide the same "
                      "window used by stft to make the inversion lossless. To suppress this warning and use a "
                      "rectangular window, explicitly set `window=ember.ones(n_fft)`.", UserWarning, stacklevel=2)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input.dim() < 2:  # torch reads size(-3) of the (..., 2) real view
        d = input.dim() + 1
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d}, {d - 1}], but got -3)")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected_len = n_fft + hop * (n_frames - 1)
    if input.numel() == 0:
        raise RuntimeError("istft: input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 3 or 4 dimensions, but got {input.dim() + 1}")
    x = (input if input.dim() == 3 else input.unsqueeze(0)).transpose(1, 2)  # (B, T, fft_size)
    onesided = (fft_size != n_fft) if onesided is None else bool(onesided)
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                               f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    elif n_fft != fft_size:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError("istft: expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError("istft: Invalid window shape. window has to be 1D and length of `win_length`")
    w = _padded_window(window, win, n_fft, _real_dtype(input.dtype))
    mode = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _C._fft_c2c(x, [2], mode, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(2, 0, n_fft // 2 + 1)
        frames = _C._fft_c2r(x, [2], mode, n_fft)
    frames = frames * w  # (B, T, n_fft)
    # Overlap-add: sample k of frame t lands at t * hop + k.
    positions = (ember.arange(n_frames).unsqueeze(1) * hop + ember.arange(n_fft)).reshape(-1)
    b = frames.shape[0]
    y = ember.zeros(b, expected_len, dtype=frames.dtype).index_add(1, positions, frames.reshape(b, -1))
    w2 = (w * w).expand(n_frames, n_fft).reshape(-1)
    envelope = ember.zeros(expected_len, dtype=w2.dtype).index_add(0, positions, w2)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = expected_len - n_fft // 2
    else:
        end = expected_len
    y = y[:, start:end]
    envelope = envelope[start:end]
    if envelope.numel() == 0 or bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min: 1")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected_len:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        y = ember.cat([y, ember.zeros(*y.shape[:-1], end - expected_len, dtype=y.dtype)], -1)
    return y
