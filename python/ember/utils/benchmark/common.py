"""Measurement: the times one Timer run collected, with robust statistics (as torch.utils.benchmark)."""
import collections
import math
import statistics

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig"]

# Below this the timer's own noise dominates: no more significant figures are claimed.
_MIN_CONFIDENCE_INTERVAL = 25e-9
_MAX_SIGNIFICANT_FIGURES = 4
_IQR_WARN_THRESHOLD = 0.1


class TaskSpec(collections.namedtuple("TaskSpec", ["stmt", "setup", "global_setup", "label", "sub_label",
                                                   "description", "env", "num_threads"])):
    """What was timed (statement, setup) and how it is labelled in Compare tables."""

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + "\n".join(
            "  " + line for line in self.stmt.splitlines())


def select_unit(t):
    """(unit, scale) for a time in seconds: ns, us, ms or s."""
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        if t < scale * 1000:
            return unit, scale
    return "s", 1.0


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """x rounded to n significant figures."""
    if x == 0 or not math.isfinite(x):
        return x
    magnitude = int(math.floor(math.log10(abs(x))))
    return round(x, n - 1 - magnitude)


def _quantile(sorted_xs, q):
    """Linear interpolation between the closest ranks (numpy's default)."""
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = q * (len(sorted_xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


class Measurement:
    """The result of Timer.timeit / blocked_autorange / adaptive_autorange.

    raw_times are seconds per block of number_per_run runs; `times` are seconds per run. median and
    iqr are robust to the outliers a shared machine produces; mean is reported too."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        if not raw_times:
            raise ValueError("a Measurement needs at least one time")
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        self.times = [t / number_per_run for t in self.raw_times]
        s = sorted(self.times)
        self._median = _quantile(s, 0.5)
        self._p25, self._p75 = _quantile(s, 0.25), _quantile(s, 0.75)
        self._mean = statistics.fmean(self.times)

    # task spec fields
    def __getattr__(self, name):
        if name in TaskSpec._fields or name == "title":
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, state):
        self.__dict__.update(state)

    @property
    def median(self):
        return self._median

    @property
    def mean(self):
        return self._mean

    @property
    def iqr(self):
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """How many leading digits of the median the spread of the central half of the times supports
        (90% confidence interval of the mean of those times), from 1 to 4."""
        n = len(self.times)
        s = sorted(self.times)
        middle = s[n // 4:int(math.ceil(3 * n / 4))] or s
        std = statistics.pstdev(middle) if len(middle) > 1 else 0.0
        ci = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        figures = int(math.floor(math.log10(self._median / ci))) if self._median > 0 else 1
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        return bool(self._warnings())

    def _warnings(self):
        out = []
        rel_iqr = self.iqr / self._median if self._median > 0 else 0.0
        if len(self.times) >= 4 and rel_iqr > _IQR_WARN_THRESHOLD:
            out.append(f"WARNING: Interquartile range is {100 * rel_iqr:.1f}% of the median measurement.\n"
                       "           This suggests significant environmental influence.")
        if len(self.times) < 4 and len(self.times) > 1:
            out.append("WARNING: Not enough data points to reliably determine a median and IQR.")
        return out

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self._median < threshold if self._median > 0 else True

    def _time_str(self, t, unit, scale):
        return f"{t / scale:.3g} {unit}"

    def __repr__(self):
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self)]
        spec = self.task_spec
        lines.append(spec.title)
        if spec.description:
            lines.append(spec.description)
        elif spec.label is not None:
            lines.append(spec.stmt)
        if spec.env:
            lines.append(f"{spec.env}")
        n = len(self.times)
        threads = f"{spec.num_threads} thread{'s' if spec.num_threads != 1 else ''}"
        if n == 1:
            lines.append("  " + self._time_str(self._median, unit, scale))
            lines.append(f"  1 measurement, {self.number_per_run} runs, {threads}")
        else:
            lines.append("  Median: " + self._time_str(self._median, unit, scale))
            lines.append(f"  IQR:    {self._time_str(self.iqr, unit, scale)} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, {threads}")
        lines += ["  " + line for w in self._warnings() for line in w.splitlines()]
        return "\n".join(lines)

    __str__ = __repr__

    @staticmethod
    def merge(measurements):
        """One Measurement per task spec, pooling the per-run times of repeated measurements."""
        grouped = collections.OrderedDict()
        for m in measurements:
            grouped.setdefault(m.task_spec, []).append(m)
        out = []
        for spec, ms in grouped.items():
            if len(ms) == 1:
                out.append(ms[0])
            else:
                out.append(Measurement(1, [t for m in ms for t in m.times], spec))
        return out
