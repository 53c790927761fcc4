"""The guard around a loader whose worker is killed by SIGKILL (needs torch and psutil).

From the repository root: ``python -m examples.guard_demo``. The guard prints the diagnosis with
live facts on stderr, then the loader's own RuntimeError propagates.
"""
from __future__ import annotations

from torch.utils.data import DataLoader

import dllogscan
from examples.repro_dataset import worker_killed


def main() -> None:
    loader = DataLoader(worker_killed(), batch_size=2, num_workers=2)
    with dllogscan.guard(loader, stall_after=300) as batches:
        for _ in batches:
            pass


if __name__ == "__main__":
    main()
