"""torch.profiler's profile on ember's recorder: activities, schedules, steps, trace handlers."""
import enum
import gzip
import json
import os
import socket
import time
import warnings

from ember.autograd import profiler as _legacy
from ember.autograd.profiler_util import _chrome_trace

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What to record. ember records CPU activity; the device kinds are accepted with a warning."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a schedule asks for at one step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A schedule for profile(schedule=...): skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last one saves: on_trace_ready), `repeat` times
    (0: until the profiler stops). skip_first_wait=1 drops the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments: need wait >= 0, warmup >= 0, active > 0, "
                         "repeat >= 0, skip_first >= 0")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"profiler step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes each trace to dir_name as WORKER.TIME_NS.pt.trace.json[.gz]
    (TensorBoard's profiler plugin reads this layout)."""
    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


class _KinetoProfile:
    """Start/stop recording and read the results (the part of profile without schedules)."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        unsupported = self.activities - supported_activities()
        if unsupported:
            warnings.warn(f"ember's profiler records CPU activity only; ignoring {sorted(a.name for a in unsupported)}",
                          stacklevel=3)
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules  # accepted; module ranges are not recorded
        self.acc_events = acc_events
        self.profiler = None
        self._metadata = {}

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        if self.profiler is None or not self.acc_events:
            self.profiler = _legacy.profile(record_shapes=self.record_shapes, with_flops=self.with_flops,
                                            profile_memory=self.profile_memory, with_stack=self.with_stack,
                                            acc_events=self.acc_events)

    def start_trace(self):
        self.profiler._start()
        self.profiler.entered = True

    def stop_trace(self):
        if self.profiler is not None and self.profiler.entered:
            self.profiler._stop()
            self.profiler.entered = False

    def events(self):
        """The recorded events (an EventList of FunctionEvent)."""
        if self.profiler is None or self.profiler.function_events is None:
            raise RuntimeError("Profiler didn't finish running: no events yet")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        if self.profiler is None:
            raise RuntimeError("Profiler didn't finish running: no events yet")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Writes the trace as Chrome trace JSON (gzipped when path ends in .gz); opens in Perfetto."""
        events = self.events()
        trace = _chrome_trace(events, events._raw, path)
        trace.update(self._metadata)
        if str(path).endswith(".gz"):
            with gzip.open(path, "wt") as f:
                json.dump(trace, f)
        else:
            with open(path, "w") as f:
                json.dump(trace, f)
        return path

    def export_stacks(self, path, metric="self_cpu_time_total"):
        return self.profiler.export_stacks(path, metric)

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError("export_memory_timeline is not implemented in ember; use profile_memory=True "
                                  "and the [memory] events of export_chrome_trace")

    def add_metadata(self, key, value):
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        self._metadata[key] = json.loads(value)


class profile(_KinetoProfile):
    """Profiler context manager, as torch.profiler.profile.

    activities: [ProfilerActivity.CPU] (the default); schedule: a callable step -> ProfilerAction
    (see schedule()); on_trace_ready: called with this profiler when a recorded cycle ends;
    record_shapes: input shapes per op; profile_memory: bytes allocated per op; with_stack: the Python
    stack of each op; with_flops: FLOPs of matrix products and convolutions. Call step() once per
    iteration when using a schedule.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        activities = set(activities) if activities else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config, acc_events=acc_events)
        if schedule is not None:
            self.schedule = schedule
            self.record_steps = True  # ProfilerStep#N ranges in the results
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _legacy.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Marks the end of one iteration: moves along the schedule."""
        if self.record_steps and self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _legacy.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit_action(self, prev, cur):
        A = ProfilerAction
        recording = (A.RECORD, A.RECORD_AND_SAVE)
        if prev == A.NONE:
            if cur == A.WARMUP:
                self.prepare_trace()
            elif cur in recording:
                self.prepare_trace()
                self.start_trace()
        elif prev == A.WARMUP:
            if cur in recording:
                self.start_trace()
            elif cur == A.NONE or cur is None:
                if cur == A.NONE:
                    warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
                self.start_trace()
                self.stop_trace()
        elif prev == A.RECORD:
            if cur in (A.NONE, A.WARMUP):
                warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}", stacklevel=3)
                self.stop_trace()
            elif cur is None:
                self.stop_trace()
                self._trace_ready()
        elif prev == A.RECORD_AND_SAVE:
            if cur is None or cur == A.NONE:
                self.stop_trace()
                self._trace_ready()
            elif cur == A.WARMUP:
                self.stop_trace()
                self._trace_ready()
                self.prepare_trace()
            elif cur in recording:
                self.stop_trace()
                self._trace_ready()
                self.prepare_trace()
                self.start_trace()
