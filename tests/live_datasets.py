"""Tiny datasets that fail the way real ones do; the live tests load them by ``module:factory``."""
from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

_LOCK = threading.Lock()


class Squares(Dataset):
    """Healthy: item i is a small tensor; ``hook(i)`` runs first in __getitem__."""

    def __init__(self, n: int = 16, size: int = 64) -> None:
        self.n, self.size = n, size

    def __len__(self) -> int:
        return self.n

    def hook(self, i: int) -> None:
        pass

    def __getitem__(self, i: int):
        self.hook(i)
        return torch.full((self.size,), float(i * i))


class Raising(Squares):
    def hook(self, i: int) -> None:
        if i == 3:
            raise KeyError(f"label missing for sample {i}")


class SelfKill(Squares):
    def __init__(self, sig: int) -> None:
        super().__init__()
        self.sig = sig

    def hook(self, i: int) -> None:
        if get_worker_info() is not None and i == 2:
            os.kill(os.getpid(), self.sig)


class ManyTensors(Squares):
    """Each item is 64 tensors: with the file_descriptor strategy each costs a descriptor."""

    def __getitem__(self, i: int):
        return [torch.full((4,), float(i + k)) for k in range(64)]


class LockedAtFork(Squares):
    """A background thread holds a lock while the DataLoader forks its workers: the children
    inherit the lock held, with no thread left to release it."""

    def hook(self, i: int) -> None:
        with _LOCK:
            pass


def _hold_lock(seconds: float) -> None:
    with _LOCK:
        time.sleep(seconds)


def healthy() -> Dataset:
    return Squares()


def raising() -> Dataset:
    return Raising()


def sigkill() -> Dataset:
    return SelfKill(signal.SIGKILL)


def sigsegv() -> Dataset:
    return SelfKill(signal.SIGSEGV)


def many_tensors() -> Dataset:
    return ManyTensors(n=64)


def locked_at_fork() -> Dataset:
    threading.Thread(target=_hold_lock, args=(1.5,), daemon=True).start()
    time.sleep(0.05)
    return LockedAtFork()


def sized(n: int, size: int = 64) -> Dataset:
    """A factory that needs an argument: repro calls factories with none."""
    return Squares(n, size)


def not_a_dataset() -> int:
    return 42


def exiting() -> Dataset:
    """A training script's entry point given as the factory: its argparse exits."""
    sys.exit("usage: train.py --data DIR")


def empty() -> Dataset:
    return Squares(0)


class WorkerOnly(Squares):
    """Healthy in the main process; raises in any worker (as code that reads get_worker_info() does)."""

    def hook(self, i: int) -> None:
        if get_worker_info() is not None:
            raise ValueError(f"no shard for worker at sample {i}")


def worker_only() -> Dataset:
    return WorkerOnly()


class MakesTempFiles(Squares):
    """Healthy, but each item leaves a file in the temporary folder (a cache, a decoded image)."""

    def hook(self, i: int) -> None:
        import tempfile

        tempfile.mkstemp(prefix="item-")


def makes_temp_files() -> Dataset:
    return MakesTempFiles()


class Stream(IterableDataset):
    """Items 0, 1, ... as small tensors: ``n`` of them, or without end when ``n`` is None.
    ``sharded``: each worker takes every num_workers-th item (the split PyTorch's docs show);
    without it every worker yields the whole stream."""

    def __init__(self, n: int | None = 300, sharded: bool = False) -> None:
        self.n, self.sharded = n, sharded

    def __iter__(self):
        items = itertools.count() if self.n is None else iter(range(self.n))
        info = get_worker_info()
        if self.sharded and info is not None:
            items = itertools.islice(items, info.id, None, info.num_workers)
        return (torch.full((4,), float(i)) for i in items)


def unsharded_stream() -> IterableDataset:
    return Stream(300)


def sharded_stream() -> IterableDataset:
    """301 items: the two workers' shards differ by one, and the last batch of each is short."""
    return Stream(301, sharded=True)


def endless_unsharded() -> IterableDataset:
    return Stream(None)


def endless_sharded() -> IterableDataset:
    return Stream(None, sharded=True)


class Ranged(IterableDataset):
    """Items start, start + step, ... below ``n`` as small tensors: the whole stream until a
    worker_init_fn sets ``start`` and ``step`` on its worker's copy (``split_by_worker``)."""

    def __init__(self, n: int = 40) -> None:
        self.n, self.start, self.step = n, 0, 1

    def __iter__(self):
        return (torch.full((4,), float(i)) for i in range(self.start, self.n, self.step))


def split_by_worker(worker_id: int) -> None:
    """A worker_init_fn that gives each worker every num_workers-th item of its dataset copy."""
    info = get_worker_info()
    info.dataset.start, info.dataset.step = info.id, info.num_workers


def seed_only(worker_id: int) -> None:
    """A worker_init_fn that seeds and splits nothing."""
    torch.manual_seed(worker_id)


def raising_init(worker_id: int) -> None:
    raise OSError(f"cannot open the shard index in worker {worker_id}")


def hanging_init(worker_id: int) -> None:
    time.sleep(600)


class HangsAt(Squares):
    """Loads ``good`` items, then sleeps for ever."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good

    def hook(self, i: int) -> None:
        if i >= self.good:
            time.sleep(600)


def slow_then_hanging() -> Dataset:
    """The factory takes 3 s, then the first item hangs."""
    time.sleep(3)
    return HangsAt(0)


def hanging_after_two_batches() -> DataLoader:
    return DataLoader(HangsAt(4), batch_size=2)


def hanging_factory() -> Dataset:
    time.sleep(600)
    return Squares()


def ranged() -> IterableDataset:
    return Ranged()


def split_loader() -> DataLoader:
    """A DataLoader whose worker_init_fn splits the stream: 40 items, batches of 4."""
    return DataLoader(Ranged(), batch_size=4, worker_init_fn=split_by_worker)


def unsplit_loader() -> DataLoader:
    return DataLoader(Ranged(), batch_size=4)


def seeded_unsplit_loader() -> DataLoader:
    return DataLoader(Ranged(), batch_size=4, worker_init_fn=seed_only)


def raising_init_loader() -> DataLoader:
    return DataLoader(Squares(8), batch_size=2, worker_init_fn=raising_init)


def hanging_init_loader() -> DataLoader:
    return DataLoader(Squares(8), batch_size=2, worker_init_fn=hanging_init)


def workers_only_loader() -> DataLoader:
    """Settings torch refuses at num_workers=0: each rung but 0 keeps them."""
    return DataLoader(Squares(8), batch_size=2, num_workers=2, prefetch_factor=4, persistent_workers=True,
                      timeout=30, pin_memory=True, drop_last=True)


def batch_sampler_loader() -> DataLoader:
    """10 items in batches of 3, 3 and 4, from a batch_sampler of its own."""
    return DataLoader(Squares(10), batch_sampler=[[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]])


def _pipe(sharded: bool) -> DataLoader:
    """A DataPipe of 40 items in batches of 4, with or without a sharding_filter."""
    from torch.utils.data.datapipes.iter import IterableWrapper

    pipe = IterableWrapper(range(40))
    return DataLoader(pipe.sharding_filter() if sharded else pipe, batch_size=4)


def sharded_pipe_loader() -> DataLoader:
    return _pipe(sharded=True)


def unsharded_pipe_loader() -> DataLoader:
    return _pipe(sharded=False)


def _hold_lock_for_ever() -> None:
    with _LOCK:
        time.sleep(600)


def deadlocked_loader() -> DataLoader:
    """A thread named ``refresher`` takes the lock that every item needs and keeps it: the first
    item hangs in one process, no fork involved. The factory also holds what forked workers would
    inherit: an HDF5-named file open and a module registered as ``cv2`` (a stand-in, so that the
    test needs no OpenCV)."""
    import tempfile
    import types

    threading.Thread(target=_hold_lock_for_ever, daemon=True, name="refresher").start()
    while not _LOCK.locked():
        time.sleep(0.01)
    store = tempfile.NamedTemporaryFile(suffix=".h5")
    sys.modules.setdefault("cv2", types.ModuleType("cv2"))
    loader = DataLoader(LockedAtFork(), batch_size=2, num_workers=2)
    loader.store = store  # kept open while the loader lives
    return loader


class Spinning(Squares):
    def hook(self, i: int) -> None:
        while True:
            i += 1


def spinning() -> Dataset:
    return Spinning()
