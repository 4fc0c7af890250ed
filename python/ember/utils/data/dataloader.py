"""DataLoader: batches from a dataset, optionally loaded by worker processes (paper §4.2).

With num_workers > 0 each worker process fetches and collates whole batches into shared memory
(Note [Shared memory by memfd]); the main process receives them without copying the data and
returns them in sampler order (unless in_order=False).
"""
import itertools
import multiprocessing as python_multiprocessing
import os
import queue
import signal
import threading
import warnings

import ember
from ember.autograd.profiler import record_function as _record_function
from ember.utils.data import _utils
from ember.utils.data._utils import collate as _collate
from ember.utils.data._utils.worker import (
    MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration, _worker_loop,
    create_fetcher,
)
from ember.utils.data.dataset import IterableDataset
from ember.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_is_profiling = ember._C._profiler._is_profiling

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

default_collate = _collate.default_collate
default_convert = _collate.default_convert
get_worker_info = _utils.worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    """For an IterableDataset: the loader only needs a count of fetches, not indices."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Combines a dataset and a sampler into an iterable over batches, with torch's arguments."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind_iterable = True
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            self._dataset_kind_iterable = False
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        if pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.")
        self.pin_memory = False
        self.pin_memory_device = pin_memory_device
        self._iterator = None
        self.__initialized = True

    def __setattr__(self, attr, val):
        if self.__dict__.get("_DataLoader__initialized", False) and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                from math import ceil  # noqa: PLC0415
                length = length // self.batch_size if self.drop_last else ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        max_workers = len(os.sched_getaffinity(0))
        if self.num_workers > max_workers:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested "
                          f"max number of worker in current system is {max_workers}, which is smaller than what this "
                          "DataLoader is going to create. Please be aware that excessive worker creation might get "
                          "DataLoader running slow or even freeze, lower the worker number to avoid potential "
                          "slowness/freeze if necessary.")


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable = loader._dataset_kind_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(ember.empty((), dtype=ember.int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        if _is_profiling():  # one range per batch in the profiler, named as torch names it
            with _record_function(f"enumerate(DataLoader)#{type(self).__name__}.__next__"):
                return self._next()
        return self._next()

    def _next(self):
        if self._sampler_iter is None:
            self._reset(None)
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._is_iterable, self._dataset, self._auto_collation, self._collate_fn,
                                       self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        loader.check_worker_number_rationality()
        import ember.multiprocessing  # noqa: F401,PLC0415  (registers the shared-memory reducer)
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = python_multiprocessing
        elif isinstance(ctx, str):
            ctx = python_multiprocessing.get_context(ctx)
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        self._in_order = loader.in_order
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(target=_worker_loop,
                            args=(self._is_iterable, self._dataset, index_queue, self._worker_result_queue,
                                  self._workers_done_event, self._auto_collation, self._collate_fn, self._drop_last,
                                  self._base_seed, self._worker_init_fn, i, self._num_workers,
                                  self._persistent_workers, os.getpid()))
            w.daemon = True
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._data_queue = self._worker_result_queue
        self._shutdown = False
        _live_iterators.add(self)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}  # idx -> (worker_id,) while outstanding, (worker_id, data) once received
        self._tasks_outstanding = 0
        self._workers_status = [True for _ in range(self._num_workers)]
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: wait for each to acknowledge the new epoch
            for idx in range(self._num_workers):
                self._index_queues[idx].put(_ResumeIteration(None))
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, return_data = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [w for w in self._workers if w.exitcode is not None and w.exitcode != 0]
            if failed:
                self._shutdown_workers()
                raise RuntimeError("DataLoader worker " + ", ".join(_describe_exit(w) for w in failed)) from None
            return False, None
        except (FileNotFoundError, ConnectionRefusedError, EOFError) as e:
            # the worker that held a batch's shared memory died before handing it over
            failed = [w for w in self._workers if w.exitcode is not None and w.exitcode != 0]
            self._shutdown_workers()
            if failed:
                raise RuntimeError("DataLoader worker " + ", ".join(_describe_exit(w) for w in failed)) from e
            raise RuntimeError("DataLoader: lost the connection to a worker while receiving a batch") from e

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if success:
                return data

    def _next_data(self):
        while True:
            # skip indices of workers that already ended their IterableDataset
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._is_iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx] += (data,)
                continue
            worker_id = self._task_info.pop(idx)[0]
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process_data(data, worker_id)

    def _process_data(self, data, worker_id):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return  # no active worker left
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        q = self._index_queues[worker_id]
        q.put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        _live_iterators.discard(self)
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except (ValueError, OSError):
                    pass
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL * 5)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join()

    def __del__(self):
        self._shutdown_workers()


def _describe_exit(w):
    if w.exitcode < 0:
        try:
            name = signal.strsignal(-w.exitcode)
        except ValueError:
            name = f"signal {-w.exitcode}"
        return f"(pid {w.pid}) is killed by signal: {name}. "
    return f"(pid {w.pid}) exited unexpectedly with exit code {w.exitcode}. "


# Iterators with live workers, shut down at exit so no process is left behind.
import weakref  # noqa: E402
import atexit  # noqa: E402

_live_iterators = weakref.WeakSet()


@atexit.register
def _clean_up_workers():
    for it in list(_live_iterators):
        it._shutdown_workers()
