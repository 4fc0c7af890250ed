"""ember.utils.tensorboard: SummaryWriter for TensorBoard, without TensorFlow or protobuf.

Event files are TFRecord files (length, masked CRC32C, data, masked CRC32C) of Event protobufs
encoded by hand (_proto.py); images are PNG (zlib). View them with `tensorboard --logdir runs`.
"""
from ember.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: F401

__all__ = ["FileWriter", "SummaryWriter"]
