"""ember.utils.benchmark: Timer, Measurement and Compare, as torch.utils.benchmark.

    t = Timer("x @ y", globals={"x": x, "y": y}, label="mm", sub_label="256", description="ember")
    m = t.blocked_autorange(min_run_time=0.5)   # median, iqr, mean, times
    Compare([m, ...]).print()
"""
from ember.utils.benchmark.common import Measurement, TaskSpec  # noqa: F401
from ember.utils.benchmark.compare import Compare  # noqa: F401
from ember.utils.benchmark.timer import Language, Timer  # noqa: F401

__all__ = ["Timer", "Measurement", "Compare", "TaskSpec", "Language"]
