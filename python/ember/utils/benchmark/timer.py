"""Timer: times a Python statement as torch.utils.benchmark.Timer does."""
import textwrap
import timeit

import ember
from ember.utils.benchmark.common import Measurement, TaskSpec

__all__ = ["Timer", "Language"]


class Language:
    PYTHON = 0
    CPP = 1


class Timer:
    """Times `stmt` (run after `setup`, both Python source) in a namespace built from `globals`.

    The namespace also holds `ember` and, unless globals gives another, `torch` bound to ember, so
    statements written for torch.utils.benchmark run unchanged. num_threads sets ember's intra-op
    threads while timing. label / sub_label / description name the result in Compare tables.
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timeit.default_timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("ember's Timer times Python statements only (language='cpp' is not supported)")
        if not isinstance(stmt, str):
            raise ValueError("stmt must be a string of Python source")
        if global_setup:
            raise ValueError("global_setup is for C++ timers only")
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads must be a positive int, got {num_threads!r}")
        namespace = {"ember": ember, "torch": ember}
        namespace.update(globals or {})
        self._globals = namespace
        stmt = textwrap.dedent(stmt).strip() or "pass"
        setup = textwrap.dedent(setup).strip() or "pass"
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=namespace)
        self._clock = timer
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup="", label=label, sub_label=sub_label,
                                   description=description, env=env, num_threads=num_threads)

    def _run(self, number):
        prev = ember.get_num_threads()
        ember.set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number=number)
        finally:
            ember.set_num_threads(prev)

    def timeit(self, number=1000000):
        """Runs stmt `number` times (after a short warm-up) and returns one measurement."""
        self._run(max(number // 100, 2))
        return Measurement(number, [self._run(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("Timer.repeat is not supported; use blocked_autorange or adaptive_autorange")

    def autorange(self, callback=None):
        raise NotImplementedError("Timer.autorange is not supported; use blocked_autorange")

    def _block_size(self, min_run_time):
        """Runs per block: enough that a block is long next to the timer's resolution and overhead."""
        number = 1
        target = max(min_run_time / 1000, 1e-4)
        while True:
            t = self._run(number)
            if t >= target or number >= 10 ** 9:
                return number
            number *= 10 if t < target / 10 else 2

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Times blocks of runs until min_run_time seconds have passed; one measurement per block."""
        number = self._block_size(min_run_time)
        times, total = [], 0.0
        start = self._clock()
        while total < min_run_time or len(times) < 1:
            t = self._run(number)
            times.append(t)
            total = self._clock() - start
            if callback is not None:
                callback(number, t)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Times blocks until the interquartile range is below `threshold` of the median (after at least
        min_run_time seconds and 3 blocks) or max_run_time seconds have passed."""
        number = self._block_size(min_run_time * 10)
        times = []
        start = self._clock()
        while True:
            t = self._run(number)
            times.append(t)
            if callback is not None:
                callback(number, t)
            elapsed = self._clock() - start
            if elapsed >= max_run_time:
                break
            if elapsed >= min_run_time and len(times) >= 3 and \
                    Measurement(number, times, self._task_spec).meets_confidence(threshold):
                break
        return Measurement(number, times, self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("collect_callgrind needs valgrind's instrumentation, which ember does not support")


