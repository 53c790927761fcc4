"""The dataset, collate functions and worker hooks the training runs use.

Faults are real: they raise, allocate, deadlock or signal inside a real
DataLoader worker. A fault fires on sample ``bad_index`` once the main process
has called ``set_epoch(fail_epoch)`` (workers forked later inherit the epoch;
persistent workers keep the one they were forked with).
"""
import ctypes
import os
import resource
import signal
import threading
import time

import numpy as np
import torch
from torch.utils.data import Dataset, default_collate, get_worker_info

# Taken by __getitem__ when the dataset "reads the cache"; the training loop's
# checkpoint thread holds it while flushing. A worker forked while it is held
# inherits it held, with no thread left to release it.
CACHE_LOCK = threading.Lock()

FAULTS = ("none", "keyerror", "filenotfound", "valueerror", "badshape", "segv", "segv-kill",
          "fpe", "abrt", "hog", "missing-field", "alloc-bytes", "alloc-torch", "lock", "cuda", "cuda-table", "skip-bad")


class ShardDataset(Dataset):
    """Feature vectors plus optional image / many-tensor payloads."""

    def __init__(self, n=512, dim=16, fault="none", bad_index=37, fail_epoch=0,
                 image=0, big_image=0, grow_epoch=0, patches=0, root="/datasets/shards",
                 shm_cache=None):
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        self.n, self.dim, self.fault = n, dim, fault
        self.bad_index, self.fail_epoch = bad_index, fail_epoch
        self.image, self.big_image, self.grow_epoch = image, big_image, grow_epoch
        self.patches, self.root = patches, root
        self.epoch = 0
        self.shm_cache, self._cache = shm_cache, None
        g = torch.Generator().manual_seed(1234)
        self.w = torch.randn(dim, generator=g)
        self.index = {f"sample_{i:06d}": i for i in range(n) if i != bad_index}
        # "cuda-table": a lookup table the main process put on the GPU (CUDA is initialised
        # there); every sample reads its row, so a forked worker touches CUDA at its first sample
        self.table = torch.randn(n, device="cuda") if fault == "cuda-table" else None

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return self.n

    def _is_bad(self, idx):
        return idx == self.bad_index and self.epoch >= self.fail_epoch

    def _features(self, idx):
        g = torch.Generator().manual_seed(idx)
        x = torch.randn(self.dim, generator=g)
        y = int((x @ self.w) > 0)
        return x, y

    def __getitem__(self, idx):
        if self.fault == "lock":
            # blocks forever in a worker forked while it was held
            with CACHE_LOCK:
                pass
        if self._is_bad(idx):
            self._decode(idx)
        x, y = self._features(idx)
        if self.table is not None:
            x = x + float(self.table[idx]) * 0
        item = {"x": x, "y": y}
        if self._is_bad(idx) and self.fault == "badshape":
            # a truncated record: default_collate cannot stack it
            item["x"] = x[:9]
        if self._is_bad(idx) and self.fault == "missing-field":
            # an unlabeled sample: the hand-written collate looks "y" up
            del item["y"]
        if self.image:
            side = self.big_image if (self.big_image and self.epoch >= self.grow_epoch) else self.image
            item["image"] = torch.rand(3, side, side)
        if self.shm_cache and "image" in item:
            self._cache_write(idx, item["image"])
            # the model sees a thumbnail
            item["image"] = item["image"][:, ::8, ::8].contiguous()
        if self.patches:
            item["patches"] = [torch.full((2,), float(i)) for i in range(self.patches)]
        return item

    def _cache_write(self, idx, image):
        """Keep the decoded uint8 image in a RAM-disk cache (a sparse file in /dev/shm)."""
        if self._cache is None:
            side = self.big_image or self.image
            self._cache = np.memmap(self.shm_cache, dtype=np.uint8, mode="r+",
                                    shape=(self.n, 3, side, side))
        im = (image * 255).to(torch.uint8).numpy()
        self._cache[idx, :, :im.shape[1], :im.shape[2]] = im

    def create_cache(self):
        side = self.big_image or self.image
        size = self.n * 3 * side * side
        with open(self.shm_cache, "wb") as fh:
            fh.truncate(size)
        return size

    def _decode(self, idx):
        fault = self.fault
        if fault == "keyerror":
            # the index has no entry for the bad sample
            record = self.index[f"sample_{idx:06d}"]
        elif fault == "filenotfound":
            path = os.path.join(self.root, f"train-{idx // 64:05d}", f"{idx:08d}.npy")
            with open(path, "rb") as fh:
                fh.read()
        elif fault == "valueerror":
            # a truncated record
            raw = np.arange(2048, dtype=np.float32)
            raw.reshape(3, 32, 32)
        elif fault in ("badshape", "missing-field"):
            # handled in __getitem__ / the collate function
            pass
        elif fault == "segv":
            # a real NULL-pointer read in C
            ctypes.string_at(0)
        elif fault == "segv-kill":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif fault == "fpe":
            os.kill(os.getpid(), signal.SIGFPE)
        elif fault == "abrt":
            os.abort()
        elif fault == "hog":
            hog = []
            # leak until the cgroup's OOM killer steps in
            while True:
                hog.append(torch.ones(8 * 1024 * 1024))
        elif fault == "alloc-bytes":
            buf = bytearray(4 * 1024 ** 3)
        elif fault == "alloc-torch":
            buf = torch.empty(1024 ** 3, dtype=torch.float32)
        elif fault == "cuda":
            torch.ones(4).to("cuda")
        elif fault == "skip-bad":
            raise KeyError(f"sample_{idx:06d}")


class SkipBadSamples(Dataset):
    """Wraps a dataset and replaces failing samples, logging a warning (a near miss)."""

    def __init__(self, inner):
        self.inner = inner

    def set_epoch(self, epoch):
        self.inner.set_epoch(epoch)

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, idx):
        try:
            return self.inner[idx]
        except KeyError as exc:
            print(f"WARNING: skipping sample {idx}: KeyError: {exc}", flush=True)
            return self.inner[(idx + 1) % len(self.inner)]


class CudaCollate:
    """A collate that stacks the batch and moves it to the GPU itself (to save the copy later)."""

    def __call__(self, batch):
        return {k: v.to("cuda", non_blocking=True) for k, v in default_collate(batch).items()}


class FieldCollate:
    """A hand-written collate that looks up the fields it was told to batch."""

    def __init__(self, fields):
        self.fields = fields

    def __call__(self, batch):
        return {f: torch.stack([torch.as_tensor(b[f]) for b in batch]) for f in self.fields}


def worker_init(worker_id, cgroup=None, rlimit_as_mb=0, slow_init=0.0, say=True, cuda_seed=False):
    """Per-worker start-up: join a memory cgroup, cap the address space, build an index, seed the
    GPU's generator per worker."""
    info = get_worker_info()
    if cuda_seed:
        torch.cuda.manual_seed(1234 + worker_id)
        # a per-worker noise buffer on the GPU for the augmentations
        info.dataset.noise = torch.randn(16, device="cuda")
    if cgroup:
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))
    if rlimit_as_mb:
        with open("/proc/self/statm") as fh:
            vm_pages = int(fh.read().split()[0])
        cap = vm_pages * resource.getpagesize() + rlimit_as_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
    if slow_init:
        if say:
            print(f"worker {worker_id}: building file index for {info.dataset.root} ...", flush=True)
        time.sleep(slow_init)
        if say:
            print(f"worker {worker_id}: index ready ({info.dataset.n} entries)", flush=True)
