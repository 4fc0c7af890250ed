"""The loop a DataLoader worker process runs: fetch samples for index batches, collate, send back."""
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import ember

# How often (seconds) a waiting worker checks that the main process is still alive, and a waiting
# main process that its workers are.
MP_STATUS_CHECK_INTERVAL = 1.0

_worker_info = None


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset (its copy)."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__dict__.get("_WorkerInfo__initialized", False):
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info():
    """In a DataLoader worker process, its WorkerInfo; None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception from a worker, with its formatted traceback, re-raised in the main process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyError(msg)  # KeyError would repr the message
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int = None


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            if callable(getattr(self.dataset, "__getitems__", None)):
                data = self.dataset.__getitems__(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if is_iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers, persistent_workers, parent_pid):
    global _worker_info
    from ember.utils.data._utils import collate  # noqa: PLC0415
    import ember.multiprocessing  # noqa: F401,PLC0415  (registers the shared-memory reducer)
    try:
        ember.set_num_threads(1)  # workers share the machine with the main process and each other
        seed = base_seed + worker_id
        random.seed(seed)
        ember.manual_seed(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        collate._collate_into_shared_memory = True
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:  # the main process died: stop instead of lingering
                    break
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if r.seed is not None:
                    random.seed(r.seed + worker_id)
                    ember.manual_seed(r.seed + worker_id)
                fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
