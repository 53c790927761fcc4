"""The guard's overhead on a healthy loader: batches/s with and without, median of repeats.

    python bench/guard_bench.py [--batches 400] [--repeats 5] [--workers 2]
"""
from __future__ import annotations

import argparse
import io
import statistics
import time

import torch
from torch.utils.data import DataLoader, Dataset

import dllogscan


class Small(Dataset):
    def __len__(self) -> int:
        return 1 << 20

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.full((256,), float(i))


def rate(loader: DataLoader, batches: int, guarded: bool) -> float:
    start = time.perf_counter()
    if guarded:
        with dllogscan.guard(loader, stall_after=300, out=io.StringIO()) as it:
            for n, _ in enumerate(it, start=1):
                if n >= batches:
                    break
    else:
        for n, _ in enumerate(loader, start=1):
            if n >= batches:
                break
    return batches / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    results: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.repeats):
        for guarded in (False, True):  # interleaved so drift hits both alike
            loader = DataLoader(Small(), batch_size=args.batch_size, num_workers=args.workers)
            results[guarded].append(rate(loader, args.batches, guarded))
    plain, with_guard = (statistics.median(results[k]) for k in (False, True))
    print(f"healthy loader: {args.workers} workers, batch_size {args.batch_size}, {args.batches} batches, "
          f"median of {args.repeats}")
    print(f"  without guard: {plain:8.1f} batches/s  {sorted(round(r) for r in results[False])}")
    print(f"  with guard:    {with_guard:8.1f} batches/s  {sorted(round(r) for r in results[True])}")
    print(f"  difference:    {100 * (with_guard - plain) / plain:+.1f} %")


if __name__ == "__main__":
    main()
