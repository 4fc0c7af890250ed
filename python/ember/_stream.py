"""torch.Stream and torch.Event, the device-generic forms: on the CPU (ember's one device) a stream is the
program order itself and events are not supported, as on torch's CPU backend; CUDA devices raise, as on
a torch built without CUDA."""
import ember


def _device_of(device):
    if device is None:
        return ember.device("cpu")
    if isinstance(device, int):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    d = ember.device(device)
    if d.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return d


def _no_events():
    raise RuntimeError("cpu backend doesn't support events.")


class Stream:
    """A stream of `device` (the CPU's: work runs in program order; `priority` is accepted and unused)."""

    def __init__(self, device=None, *, priority=0):
        self.device = _device_of(device)
        self.device_type = 0  # c10's DeviceType number, as torch's attribute (CPU: 0)
        self.device_index = -1
        self.stream_id = 0

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        _no_events()

    def record_event(self, event=None):
        _no_events()

    def is_capturing(self):
        return False

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device_type, self.device_index, self.stream_id) == (
            other.device_type, other.device_index, other.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"ember.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """An event of `device`: on the CPU always complete; recording one raises, as torch's CPU backend."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _device_of(device)
        self.enable_timing = enable_timing
        self.event_id = 0

    def query(self):
        return True

    def record(self, stream=None):
        _no_events()

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def elapsed_time(self, end_event):
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        _no_events()

    def ipc_handle(self):
        raise NotImplementedError("ember.Event ipc is not supported")

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise NotImplementedError("ember.Event ipc is not supported")

    def __repr__(self):
        return f"ember.Event device_type={self.device.type}, device_index=-1, event_flag=0, event_id={self.event_id}"
