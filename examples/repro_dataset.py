"""Small datasets for ``dllogscan repro`` that fail the way real ones do (needs torch).

From the repository root::

    dllogscan repro examples.repro_dataset:missing_label --workers 0,1,2
    dllogscan repro examples.repro_dataset:locked_at_fork --workers 0,1 --timeout 15
    dllogscan repro examples.repro_dataset:worker_killed --workers 0,1
    dllogscan repro examples.repro_dataset:unsplit_stream
    dllogscan repro examples.repro_dataset:file_loader --workers 0,2

``missing_label``: sample 3 has no label, so ``__getitem__`` raises KeyError; the ladder fails at
num_workers=0 and concludes the bug is in the dataset code.
``locked_at_fork``: a background thread holds a lock while the DataLoader forks its workers; each
worker inherits the lock held with no thread left to release it, so it hangs (class E).
``worker_killed``: a worker is killed by SIGKILL at sample 2, as the kernel's OOM killer does (class B).
``unsplit_stream``: an IterableDataset that does not split its stream between workers: nothing
fails, but each worker yields every record, so each arrives num_workers times (a warning).
``file_loader``: a DataLoader, as a training script configures it, whose worker_init_fn gives each
worker its own files of a stream; repro rebuilds it at each rung with all its settings.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from typing import Iterator

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

_LOCK = threading.Lock()


class Labelled(Dataset):
    """Sixteen small feature tensors with integer labels looked up in a dict."""

    def __init__(self, missing: frozenset[int] = frozenset()) -> None:
        self.labels = {i: i % 4 for i in range(16) if i not in missing}

    def __len__(self) -> int:
        return 16

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        label = self.labels[i]  # KeyError for a missing label
        return torch.full((8,), float(i)), label


class CachedLabels(Labelled):
    """Reads its labels under a lock that a background refresher thread also takes."""

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        with _LOCK:
            label = self.labels[i]
        return torch.full((8,), float(i)), label


class KilledInWorker(Labelled):
    """Healthy in the main process; a worker loading sample 2 is killed the way the OOM killer does."""

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        if i == 2 and get_worker_info() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__getitem__(i)


class Records(IterableDataset):
    """A hundred (features, label) records streamed as from a file, the whole stream in every worker."""

    def __iter__(self) -> Iterator[tuple[torch.Tensor, int]]:
        for i in range(100):
            yield torch.full((8,), float(i)), i % 4


class Files(IterableDataset):
    """A hundred records streamed from four files (here: ranges), every file read unless a
    worker_init_fn leaves a worker its own (``split_files``)."""

    def __init__(self) -> None:
        self.files = [range(start, start + 25) for start in range(0, 100, 25)]

    def __iter__(self) -> Iterator[tuple[torch.Tensor, int]]:
        for file in self.files:
            for i in file:
                yield torch.full((8,), float(i)), i % 4


def split_files(worker_id: int) -> None:
    """worker_init_fn: each worker reads every num_workers-th file, set on its copy of the dataset."""
    info = get_worker_info()
    info.dataset.files = info.dataset.files[info.id::info.num_workers]


def _refresh(seconds: float) -> None:
    with _LOCK:
        time.sleep(seconds)  # still holding the lock when the DataLoader forks


def missing_label() -> Dataset:
    return Labelled(missing=frozenset({3}))


def locked_at_fork() -> Dataset:
    threading.Thread(target=_refresh, args=(1.5,), daemon=True).start()
    time.sleep(0.05)
    return CachedLabels()


def worker_killed() -> Dataset:
    return KilledInWorker()


def unsplit_stream() -> IterableDataset:
    return Records()


def file_loader() -> DataLoader:
    return DataLoader(Files(), batch_size=4, num_workers=4, worker_init_fn=split_files, prefetch_factor=4,
                      persistent_workers=True)
