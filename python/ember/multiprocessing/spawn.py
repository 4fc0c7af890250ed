"""spawn(fn, args, nprocs): start processes running fn(i, *args) and propagate their failures."""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback


class ProcessException(Exception):
    """Base of the errors that spawn() raises for a failed process."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes started by spawn(); join() waits and raises the first failure."""

    def __init__(self, processes, error_queues):
        self.error_queues = error_queues
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Waits for one process to end; True when all have ended successfully. Raises on failure."""
        if len(self.sentinels) == 0:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return len(self.sentinels) == 0
        for p in self.processes:  # one failed: stop the rest
            if p.is_alive():
                p.terminate()
            p.join()
        failed = self.processes[error_index]
        if self.error_queues[error_index].empty():
            code = failed.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {error_index} terminated with signal {name}",
                                             error_index, failed.pid, code, name)
            raise ProcessExitedException(f"process {error_index} terminated with exit code {code}",
                                         error_index, failed.pid, code)
        tb = self.error_queues[error_index].get()
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n{tb}"
        raise ProcessRaisedException(msg, error_index, failed.pid)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts nprocs processes running fn(i, *args) with the given start method."""
    ctx = multiprocessing.get_context(start_method)
    error_queues, processes = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        error_queues.append(q)
        processes.append(p)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawns nprocs processes running fn(i, *args); with join=True waits and re-raises failures."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
