"""SummaryWriter: TensorBoard event files written without TensorFlow (as torch.utils.tensorboard)."""
import os
import socket
import struct
import time
from datetime import datetime

from ember import _C
from ember.utils.tensorboard import _proto, _summary

__all__ = ["FileWriter", "SummaryWriter"]

_global_uid = 0


def _masked_crc32c(data):
    crc = _C._crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _record(data):
    """TFRecord framing: length, masked CRC32C of the length, data, masked CRC32C of the data."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked_crc32c(header)) + data + struct.pack("<I", _masked_crc32c(data))


class FileWriter:
    """Appends Event records to one events.out.tfevents.* file in log_dir."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        global _global_uid
        self.log_dir = str(log_dir)
        os.makedirs(self.log_dir, exist_ok=True)
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.{_global_uid}"
        _global_uid += 1
        self.path = os.path.join(self.log_dir, name + filename_suffix)
        self._file = open(self.path, "wb")
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._pending = 0
        self._last_flush = time.time()
        self._write(_proto.event(time.time(), file_version="brain.Event:2", writer="ember.utils.tensorboard"))
        self.flush()

    def get_logdir(self):
        return self.log_dir

    def _write(self, event_bytes):
        if self._file is None:
            raise RuntimeError("the writer is closed")
        self._file.write(_record(event_bytes))
        self._pending += 1
        if self._pending >= self._max_queue or time.time() - self._last_flush >= self._flush_secs:
            self.flush()

    def add_summary(self, summary, global_step=None, walltime=None):
        self._write(_proto.event(time.time() if walltime is None else walltime,
                                 step=0 if global_step is None else int(global_step), summary=summary))

    def add_session_log_start(self, step):
        self._write(_proto.event(time.time(), step=int(step), session_log=_proto.session_log(_proto.SESSION_LOG_START)))

    def flush(self):
        if self._file is not None:
            self._file.flush()
            self._pending = 0
            self._last_flush = time.time()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None


class SummaryWriter:
    """Writes scalars, histograms, images, text and hparams for TensorBoard to log_dir
    (default runs/MONTHDAY_HH-MM-SS_HOSTNAME<comment>). Values may be ember tensors, NumPy arrays or
    numbers; records are flushed every max_queue events, after flush_secs, and on flush()/close()."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = None
        self.all_writers = {}
        self._get_file_writer()

    def _get_file_writer(self):
        if self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:  # TensorBoard drops earlier events at steps >= purge_step
                self.file_writer.add_session_log_start(self.purge_step)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One value of the curve `tag` at global_step."""
        value = _summary.scalar_value(scalar_value)
        summ = _proto.summary([_proto.summary_value(tag, simple_value=value)])
        self._get_file_writer().add_summary(summ, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several curves on one chart: each tag goes to its own run, log_dir/MAIN_TAG_TAG."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = os.path.join(base, main_tag.replace("/", "_") + "_" + tag)
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            summ = _proto.summary([_proto.summary_value(main_tag, simple_value=_summary.scalar_value(value))])
            fw.add_summary(summ, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """A histogram of `values`; bins: 'tensorflow' (TensorFlow's exponential buckets) or anything
        numpy.histogram takes."""
        self._get_file_writer().add_summary(_summary.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """One image (float in [0, 1] or uint8), layout given by dataformats ('CHW', 'HWC', 'HW')."""
        self._get_file_writer().add_summary(_summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images shown as one grid (8 per row)."""
        self._get_file_writer().add_summary(_summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, as a grid) rendered to an image."""
        img = _summary.figure_to_image(figure, close)
        self.add_image(tag, img, global_step, walltime, dataformats="NCHW" if isinstance(figure, list) else "CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """One run's hyperparameters and final metrics for the HPARAMS tab, in log_dir/RUN_NAME
        (default: the current time)."""
        exp, start, end = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            fw = w._get_file_writer()
            for s in (exp, start, end):
                fw.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def _not_implemented(self, what):
        raise NotImplementedError(f"SummaryWriter.{what} is not implemented in ember (scalars, histograms, images, "
                                  "figures, text and hparams are)")

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        self._not_implemented("add_graph")

    def add_audio(self, *args, **kwargs):
        self._not_implemented("add_audio")

    def add_video(self, *args, **kwargs):
        self._not_implemented("add_video")

    def add_embedding(self, *args, **kwargs):
        self._not_implemented("add_embedding")

    def add_pr_curve(self, *args, **kwargs):
        self._not_implemented("add_pr_curve")

    def add_mesh(self, *args, **kwargs):
        self._not_implemented("add_mesh")

    def flush(self):
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = None
        self.all_writers = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
