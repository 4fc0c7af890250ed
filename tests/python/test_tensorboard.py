"""ember.utils.tensorboard.SummaryWriter: files read back with the tensorboard package's reader,
compared with what torch.utils.tensorboard writes for the same calls."""
import glob
import io
import os
import struct

import numpy as np
import pytest
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.compat.proto import event_pb2
from tensorboard.plugins.hparams import plugin_data_pb2
from torch.utils.tensorboard import SummaryWriter as TorchWriter

import ember
from ember.utils.tensorboard import SummaryWriter

GUIDANCE = {"scalars": 0, "images": 0, "histograms": 0, "tensors": 0}


def _load(path):
    acc = EventAccumulator(str(path), size_guidance=GUIDANCE)
    acc.Reload()
    return acc


def _both(tmp_path, write):
    """Runs write(writer, lib) for ember and torch; returns the two accumulators and directories."""
    import torch
    dirs = []
    for name, cls, lib in (("ember", SummaryWriter, ember), ("torch", TorchWriter, torch)):
        d = tmp_path / name
        with cls(str(d)) as w:
            write(w, lib)
        dirs.append(d)
    return _load(dirs[0]), _load(dirs[1]), dirs


def test_scalars(tmp_path):
    def write(w, lib):
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_scalar("acc", lib.tensor(step / 10.0), step)
        w.add_scalar("nostep", 3.5)

    ours, ref, _ = _both(tmp_path, write)
    assert set(ours.Tags()["scalars"]) == set(ref.Tags()["scalars"]) == {"loss", "acc", "nostep"}
    for tag in ("loss", "acc", "nostep"):
        assert [(e.step, e.value) for e in ours.Scalars(tag)] == [(e.step, e.value) for e in ref.Scalars(tag)]
    assert [e.step for e in ours.Scalars("loss")] == list(range(5))
    assert ours.Scalars("loss")[1].value == pytest.approx(0.5)
    with SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(ValueError, match="one element"):
            w.add_scalar("x", ember.ones(2), 0)


def test_scalars_groups_runs(tmp_path):
    def write(w, lib):
        for step in range(3):
            w.add_scalars("run/loss", {"train": step * 1.0, "test": step * 2.0}, step)

    _, _, (ed, td) = _both(tmp_path, write)
    assert sorted(p for p in os.listdir(ed) if os.path.isdir(ed / p)) == \
        sorted(p for p in os.listdir(td) if os.path.isdir(td / p)) == ["run_loss_test", "run_loss_train"]
    for sub in ("run_loss_train", "run_loss_test"):
        ours, ref = _load(ed / sub), _load(td / sub)
        assert [(e.step, e.value) for e in ours.Scalars("run/loss")] == \
            [(e.step, e.value) for e in ref.Scalars("run/loss")]


@pytest.mark.parametrize("bins,max_bins", [("tensorflow", None), ("auto", None), (10, None), (40, 7)])
def test_histograms(tmp_path, bins, max_bins):
    values = np.random.default_rng(0).normal(size=1000).astype(np.float32)

    def write(w, lib):
        w.add_histogram("h", lib.tensor(values), 7, bins=bins, max_bins=max_bins)

    ours, ref, _ = _both(tmp_path, write)
    a, b = ours.Histograms("h")[0], ref.Histograms("h")[0]
    assert a.step == b.step == 7
    ha, hb = a.histogram_value, b.histogram_value
    for field in ("min", "max", "num", "sum", "sum_squares"):
        assert getattr(ha, field) == pytest.approx(getattr(hb, field), rel=1e-6)
    assert list(ha.bucket_limit) == pytest.approx(list(hb.bucket_limit))
    assert list(ha.bucket) == list(hb.bucket)
    assert sum(ha.bucket) == 1000


def _pixels(event):
    return np.asarray(Image.open(io.BytesIO(event.encoded_image_string)))


@pytest.mark.parametrize("shape,fmt", [((3, 8, 10), "CHW"), ((8, 10, 3), "HWC"), ((1, 6, 5), "CHW"),
                                       ((6, 5), "HW"), ((8, 10, 4), "HWC")])
def test_image(tmp_path, shape, fmt):
    img = np.random.default_rng(1).random(shape).astype(np.float32)

    def write(w, lib):
        w.add_image("img", lib.tensor(img), 2, dataformats=fmt)
        w.add_image("u8", lib.tensor((img * 255).astype(np.uint8)), 3, dataformats=fmt)

    ours, ref, _ = _both(tmp_path, write)
    for tag in ("img", "u8"):
        a, b = ours.Images(tag)[0], ref.Images(tag)[0]
        assert (a.step, a.width, a.height) == (b.step, b.width, b.height)
        np.testing.assert_array_equal(_pixels(a), _pixels(b))


def test_images_grid(tmp_path):
    imgs = np.random.default_rng(2).random((11, 1, 6, 7)).astype(np.float32)

    def write(w, lib):
        w.add_images("batch", lib.tensor(imgs), 0)
        w.add_images("nhwc", lib.tensor(imgs.transpose(0, 2, 3, 1)), 1, dataformats="NHWC")

    ours, ref, _ = _both(tmp_path, write)
    for tag in ("batch", "nhwc"):
        a, b = ours.Images(tag)[0], ref.Images(tag)[0]
        assert (a.width, a.height) == (b.width, b.height) == (8 * 7, 2 * 6)
        np.testing.assert_array_equal(_pixels(a), _pixels(b))


def test_figure(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", fig, 4)
    ev = _load(tmp_path).Images("fig")[0]
    assert (ev.step, ev.width, ev.height) == (4, 100, 50)
    assert _pixels(ev).shape == (50, 100, 3)


def test_text(tmp_path):
    def write(w, lib):
        w.add_text("note", "hello **tensorboard**", 3)

    ours, ref, _ = _both(tmp_path, write)
    assert ours.Tags()["tensors"] == ref.Tags()["tensors"] == ["note/text_summary"]
    a, b = ours.Tensors("note/text_summary")[0], ref.Tensors("note/text_summary")[0]
    assert a.step == b.step == 3 and a.tensor_proto == b.tensor_proto
    assert ours.SummaryMetadata("note/text_summary") == ref.SummaryMetadata("note/text_summary")


def test_hparams(tmp_path):
    def write(w, lib):
        w.add_hparams({"lr": 0.1, "bsize": 32, "opt": "sgd", "nesterov": True}, {"acc": 0.9, "loss": 0.25},
                      hparam_domain_discrete={"opt": ["sgd", "adam"]}, run_name="trial")

    _, _, (ed, td) = _both(tmp_path, write)
    ours, ref = _load(ed / "trial"), _load(td / "trial")
    content_a, content_b = ours.PluginTagToContent("hparams"), ref.PluginTagToContent("hparams")
    assert set(content_a) == set(content_b) == {"_hparams_/experiment", "_hparams_/session_start_info",
                                                "_hparams_/session_end_info"}
    for tag in content_a:
        a = plugin_data_pb2.HParamsPluginData.FromString(content_a[tag])
        b = plugin_data_pb2.HParamsPluginData.FromString(content_b[tag])
        assert a == b, tag
    assert [(e.step, e.value) for e in ours.Scalars("acc")] == [(e.step, e.value) for e in ref.Scalars("acc")]
    with SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(TypeError):
            w.add_hparams({"lr": 0.1}, [1])


def test_purge_step_drops_later_events(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for s in range(10):
            w.add_scalar("x", float(s), s)
    with SummaryWriter(str(tmp_path), purge_step=5) as w:
        for s in range(5, 8):
            w.add_scalar("x", 100.0 + s, s)
    events = _load(tmp_path).Scalars("x")
    assert [(e.step, e.value) for e in events] == [(s, float(s)) for s in range(5)] + \
        [(s, 100.0 + s) for s in range(5, 8)]


def _crc32c(data):
    """Bitwise CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): an independent reference."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_record_framing_and_file_layout(tmp_path):
    assert _crc32c(b"123456789") == 0xE3069283 == ember._C._crc32c(b"123456789")
    with SummaryWriter(str(tmp_path), filename_suffix=".v2") as w:
        w.add_scalar("x", 1.0, 1)
        w.add_text("t", "a", 1)
        logdir = w.get_logdir()
    assert logdir == str(tmp_path)
    files = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    assert len(files) == 1 and files[0].endswith(".v2")
    data = open(files[0], "rb").read()
    events, i = [], 0

    def masked(crc):
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    while i < len(data):
        header = data[i:i + 8]
        (n,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[i + 8:i + 12])[0] == masked(_crc32c(header))
        body = data[i + 12:i + 12 + n]
        assert struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0] == masked(_crc32c(body))
        events.append(event_pb2.Event.FromString(body))
        i += 16 + n
    assert events[0].file_version == "brain.Event:2"
    assert [e.step for e in events[1:]] == [1, 1]


def test_default_log_dir_and_unsupported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    with pytest.raises(NotImplementedError, match="add_graph"):
        w.add_graph(ember.nn.Linear(2, 2))
    w.close()
    assert os.path.isdir(w.get_logdir())
