"""The few protobuf messages TensorBoard's event files hold, encoded by hand (no protobuf runtime).

Wire format: each field is a varint key (field_number << 3 | wire_type) and its value: varint (0),
8 bytes little-endian (1), length-delimited bytes/string/message/packed list (2), 4 bytes (5).
Field numbers follow tensorboard/compat/proto (event.proto, summary.proto, tensor.proto) and the
hparams plugin's api.proto / plugin_data.proto. Fields at their default value are left out, as
proto3 encoders do.
"""
import struct


def _varint(n):
    if n < 0:
        n += 1 << 64  # negative int32/int64: ten-byte two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint_field(num, value):
    return _varint(num << 3) + _varint(int(value)) if value else b""


def double_field(num, value):
    return _varint(num << 3 | 1) + struct.pack("<d", value) if value else b""


def float_field(num, value):
    # simple_value 0.0 is still written: TensorBoard reads an absent value as 0 too, but keep it explicit.
    return _varint(num << 3 | 5) + struct.pack("<f", value)


def bytes_field(num, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _varint(num << 3 | 2) + _varint(len(data)) + data if data else b""


def message_field(num, data):
    """A sub-message (written even when empty: presence matters for oneofs)."""
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def packed_doubles(num, values):
    values = list(values)
    return bytes_field(num, struct.pack(f"<{len(values)}d", *values)) if values else b""


# ---- messages ----

def event(wall_time, step=0, file_version=None, summary=None, session_log=None, writer=None):
    out = double_field(1, wall_time) + varint_field(2, step)
    if file_version is not None:
        out += bytes_field(3, file_version)
    if summary is not None:
        out += message_field(5, summary)
    if session_log is not None:
        out += message_field(7, session_log)
    if writer is not None:
        out += message_field(10, bytes_field(1, writer))  # SourceMetadata.writer
    return out


SESSION_LOG_START = 1


def session_log(status):
    return varint_field(1, status)


def summary(values):
    return b"".join(message_field(1, v) for v in values)


def summary_value(tag, simple_value=None, image=None, histo=None, tensor=None, metadata=None):
    out = bytes_field(1, tag)
    if simple_value is not None:
        out += float_field(2, simple_value)
    if image is not None:
        out += message_field(4, image)
    if histo is not None:
        out += message_field(5, histo)
    if tensor is not None:
        out += message_field(8, tensor)
    if metadata is not None:
        out += message_field(9, metadata)
    return out


def image(height, width, colorspace, png):
    return varint_field(1, height) + varint_field(2, width) + varint_field(3, colorspace) + bytes_field(4, png)


def histogram(vmin, vmax, num, total, sum_squares, bucket_limit, bucket):
    return (double_field(1, vmin) + double_field(2, vmax) + double_field(3, num) + double_field(4, total)
            + double_field(5, sum_squares) + packed_doubles(6, bucket_limit) + packed_doubles(7, bucket))


def summary_metadata(plugin_name, content=b""):
    return message_field(1, bytes_field(1, plugin_name) + bytes_field(2, content))


DT_STRING = 7


def string_tensor(strings):
    shape = message_field(2, varint_field(1, len(strings)))  # TensorShapeProto.dim { size }
    return varint_field(1, DT_STRING) + message_field(2, shape) + b"".join(
        message_field(8, s.encode("utf-8") if isinstance(s, str) else s) for s in strings)


# ---- hparams plugin (plugin_data.proto, api.proto) ----
DATA_TYPE_STRING, DATA_TYPE_BOOL, DATA_TYPE_FLOAT64 = 1, 2, 3
STATUS_SUCCESS = 1


def pb_value(v):
    """google.protobuf.Value: number (1), string (3) or bool (4)."""
    if isinstance(v, str):
        return message_field(3, v.encode("utf-8"))
    if isinstance(v, bool):
        return _varint(4 << 3) + _varint(int(v))
    return _varint(2 << 3 | 1) + struct.pack("<d", float(v))


def hparam_info(name, dtype, domain_discrete=None):
    out = bytes_field(1, name) + varint_field(4, dtype)
    if domain_discrete is not None:
        out += message_field(5, b"".join(message_field(1, pb_value(d)) for d in domain_discrete))  # ListValue
    return out


def metric_info(tag):
    return message_field(1, bytes_field(2, tag))  # MetricName { tag }


def experiment(hparam_infos, metric_infos):
    return b"".join(message_field(4, h) for h in hparam_infos) + b"".join(message_field(5, m) for m in metric_infos)


def session_start_info(hparams):
    entries = b"".join(message_field(1, bytes_field(1, k) + message_field(2, pb_value(v))) for k, v in hparams.items())
    return entries


def session_end_info(status):
    return varint_field(1, status)


def hparams_plugin_data(experiment=None, session_start_info=None, session_end_info=None, version=0):
    out = varint_field(1, version)
    if experiment is not None:
        out += message_field(2, experiment)
    if session_start_info is not None:
        out += message_field(3, session_start_info)
    if session_end_info is not None:
        out += message_field(4, session_end_info)
    return out
