"""ember.profiler: what torch.profiler offers on CPU (profile, schedule, record_function, trace handlers).

    with ember.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        model(x).sum().backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # open in https://ui.perfetto.dev
"""
from ember.autograd.profiler import record_function  # noqa: F401
from ember.profiler.profiler import (  # noqa: F401
    ProfilerAction, ProfilerActivity, _KinetoProfile, profile, schedule, supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "record_function"]
