"""Summaries: values -> encoded Summary messages (scalars, histograms, PNG images, text, hparams)."""
import math
import struct
import zlib

from ember.utils.tensorboard import _proto


def make_np(x):
    """A NumPy array from an ember Tensor, an array, a number or a list."""
    import numpy as np
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return x.detach().numpy()
    if isinstance(x, (int, float, bool)):
        return np.array([x])
    return np.asarray(x)


def scalar_value(x):
    import numpy as np
    a = make_np(x)
    if a.size != 1:
        raise ValueError(f"scalar should have exactly one element, got shape {tuple(a.shape)}")
    return float(np.asarray(a).reshape(-1)[0])


# ---- histograms ----

def _tensorflow_bins():
    """TensorFlow's default bucket edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0.0] + pos


_TF_BINS = None


def histogram(tag, values, bins, max_bins=None):
    import numpy as np
    global _TF_BINS
    values = make_np(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    if isinstance(bins, str) and bins == "tensorflow":
        if _TF_BINS is None:
            _TF_BINS = np.array(_tensorflow_bins())
        bins = _TF_BINS
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        # Merge groups of `group` neighbouring buckets (the last group padded with empty ones).
        group = len(counts) // max_bins
        pad = (-len(counts)) % group
        counts = np.concatenate([counts, np.zeros(pad, counts.dtype)]).reshape(-1, group).sum(axis=1)
        edges = np.concatenate([edges[:-1:group], edges[-1:]])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("The histogram is empty (no value fell inside the bins)")
    first, last = int(nonzero[0]), int(nonzero[-1])
    # One empty bucket before the first filled one marks its left edge; trailing empty ones go.
    bucket = np.concatenate([[0], counts[first:last + 1]])
    limits = edges[first:last + 2]
    histo = _proto.histogram(float(values.min()), float(values.max()), float(values.size), float(values.sum()),
                             float(values.dot(values)), limits.tolist(), bucket.astype(float).tolist())
    return _proto.summary([_proto.summary_value(tag, histo=histo)])


# ---- images ----

def _png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(hwc):
    """PNG bytes of an (H, W, C) uint8 array, C = 1 (gray), 3 (RGB) or 4 (RGBA)."""
    import numpy as np
    h, w, c = hwc.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    rows = np.concatenate([np.zeros((h, 1), np.uint8), np.ascontiguousarray(hwc).reshape(h, w * c)], axis=1)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _png_chunk(b"IEND", b""))


def make_grid(nchw, ncols=8):
    """Tiles N images (N, C, H, W) into one (C, H * rows, W * cols) image, row by row; gray becomes RGB."""
    import numpy as np
    if nchw.shape[1] == 1:
        nchw = np.concatenate([nchw] * 3, axis=1)
    n, c, h, w = nchw.shape
    ncols = min(n, ncols)
    nrows = int(math.ceil(n / ncols))
    canvas = np.zeros((c, h * nrows, w * ncols), dtype=nchw.dtype)
    for i in range(n):
        r, col = divmod(i, ncols)
        canvas[:, r * h:(r + 1) * h, col * w:(col + 1) * w] = nchw[i]
    return canvas


def to_hwc(a, dataformats):
    """An image array in the given layout ('CHW', 'HWC', 'HW', 'NCHW', ...) as (H, W, C); gray as RGB."""
    import numpy as np
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW"):
        raise ValueError(f"dataformats must be letters from NCHW without repeats, got {dataformats!r}")
    if a.ndim != len(fmt):
        raise ValueError(f"the image has {a.ndim} dims but dataformats is {dataformats!r}")
    if "N" in fmt:
        if "C" not in fmt:  # NHW: add a channel
            a = a[:, None] if fmt.index("N") == 0 else np.expand_dims(a, -1)
            fmt = fmt + "C" if fmt.index("N") else "NC" + fmt[1:]
        nchw = a.transpose([fmt.index(x) for x in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if fmt == "HW":
        return np.stack([a] * 3, axis=2)
    hwc = a.transpose([fmt.index(x) for x in "HWC"])
    if hwc.shape[2] == 1:
        hwc = np.concatenate([hwc] * 3, axis=2)
    return hwc


def image(tag, img, dataformats="CHW"):
    """Float images are taken as [0, 1] and scaled to 0..255; uint8 images as they are."""
    import numpy as np
    a = make_np(img)
    hwc = to_hwc(a, dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = hwc.shape
    if c not in (1, 3, 4):
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {c}")
    img_msg = _proto.image(h, w, c, encode_png(hwc))
    return _proto.summary([_proto.summary_value(tag, image=img_msg)])


def figure_to_image(figures, close=True):
    """A matplotlib figure (or list of them) as CHW uint8 RGB array(s)."""
    import numpy as np
    from matplotlib.backends import backend_agg

    def render(fig):
        canvas = backend_agg.FigureCanvasAgg(fig)
        canvas.draw()
        w, h = canvas.get_width_height()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)
        if close:
            import matplotlib.pyplot as plt
            plt.close(fig)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


# ---- text and hparams ----

def text(tag, text_string):
    value = _proto.summary_value(tag + "/text_summary", tensor=_proto.string_tensor([text_string]),
                                 metadata=_proto.summary_metadata("text"))
    return _proto.summary([value])


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The hparams plugin's three summaries: experiment, session start, session end."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionaries")
    domains = hparam_domain_discrete or {}
    for k, vals in domains.items():
        if k not in hparam_dict or not isinstance(vals, list) or \
                not all(isinstance(v, type(hparam_dict[k])) for v in vals):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos, values = [], {}
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, (int, float)):  # bools too, as torch: they are ints
            values[k] = float(v)
            dtype = _proto.DATA_TYPE_FLOAT64
        elif isinstance(v, str):
            values[k] = v
            dtype = _proto.DATA_TYPE_STRING
        elif hasattr(v, "numel") or hasattr(v, "__array__"):
            values[k] = scalar_value(v)
            dtype = _proto.DATA_TYPE_FLOAT64
        else:
            raise ValueError("value should be one of int, float, str, bool, or ember.Tensor")
        dom = domains.get(k)
        infos.append(_proto.hparam_info(k, dtype, [float(d) if dtype == _proto.DATA_TYPE_FLOAT64 else d
                                                   for d in dom] if dom is not None else None))
    exp = _proto.experiment(infos, [_proto.metric_info(k) for k in metric_dict])

    def wrap(tag, content):
        return _proto.summary([_proto.summary_value(tag, metadata=_proto.summary_metadata("hparams", content))])

    return (wrap("_hparams_/experiment", _proto.hparams_plugin_data(experiment=exp)),
            wrap("_hparams_/session_start_info",
                 _proto.hparams_plugin_data(session_start_info=_proto.session_start_info(values))),
            wrap("_hparams_/session_end_info",
                 _proto.hparams_plugin_data(session_end_info=_proto.session_end_info(_proto.STATUS_SUCCESS))))
