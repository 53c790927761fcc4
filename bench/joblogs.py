"""Job logs for the batch bench, from several generators that print like real training code.

Each generator writes the progress lines of one kind of trainer: a Lightning/tqdm bar, mmdetection
(``data_time: 0.021``), detectron2's event writer, a plain script with ``batch_time=... data_time=...``
key=value pairs (a hard case for a byte-probe prefilter: ``data_time`` shares ``ata`` with the
keywords ``ancdata`` and ``_get_data``), the Hugging Face Trainer, and a DDP run with ``[rankN]:``
prefixes and NCCL chatter (``bench/loggen.py``). Every log opens with Slurm's environment lines and
a config dump that names ``num_workers``/``pin_memory`` (keyword hits that are not failures); one
log in ten ends with a real DataLoader failure.
"""
from __future__ import annotations

import random
from typing import Callable

import loggen

FAILURES = (
    "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that "
    "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n",
    "RuntimeError: DataLoader worker (pid(s) 1234, 1235) exited unexpectedly\n",
    "RuntimeError: DataLoader worker (pid 99) is killed by signal: Killed.\n",
    "KeyError: Caught KeyError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 349, in _worker_loop\n'
    "    data = fetcher.fetch(index)\nKeyError: 'sample_000037'\n",
)
POOL = 4000  # distinct lines per generator; a log samples its body from them


def _ts(rng: random.Random) -> str:
    return f"2024-05-17 {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d},{rng.randint(0, 999):03d}"


def tqdm(rng: random.Random, n: int) -> str:
    return (f"Epoch {n // 500}: {n % 100:3d}%|{'#' * (n % 10):<10}| {n}/50000 [00:{n % 60:02d}<01:00, "
            f"{rng.uniform(5, 9):.2f}it/s, loss={rng.random():.4f}, v_num=7]\n")


def mmdet(rng: random.Random, n: int) -> str:
    return (f"{_ts(rng)} - mmdet - INFO - Epoch [{n // 1833 + 1}][{n % 1833}/1833]\tlr: 2.000e-02, "
            f"eta: {rng.randint(0, 20)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}, time: {rng.uniform(0.3, 0.6):.3f}, "
            f"data_time: {rng.uniform(0.005, 0.05):.3f}, memory: {rng.randint(5000, 9000)}, loss_rpn_cls: {rng.random() / 10:.4f}, "
            f"loss_rpn_bbox: {rng.random() / 10:.4f}, loss_cls: {rng.random() / 3:.4f}, acc: {rng.uniform(85, 98):.4f}, "
            f"loss_bbox: {rng.random() / 3:.4f}, loss: {rng.random():.4f}\n")


def detectron2(rng: random.Random, n: int) -> str:
    return (f"[05/17 {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} d2.utils.events]:  "
            f"eta: 0:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}  iter: {n * 20 + 19}  total_loss: {rng.uniform(0.5, 2):.4f}  "
            f"loss_cls: {rng.random() / 2:.4f}  loss_box_reg: {rng.random() / 2:.4f}  loss_rpn_cls: {rng.random() / 10:.4f}  "
            f"time: {rng.uniform(0.3, 0.5):.4f}  last_time: {rng.uniform(0.3, 0.5):.4f}  data_time: {rng.uniform(0.001, 0.02):.4f}  "
            f"last_data_time: {rng.uniform(0.001, 0.02):.4f}  lr: 0.02  max_mem: {rng.randint(3000, 9000)}M\n")


def keyvalue(rng: random.Random, n: int) -> str:
    return (f"{_ts(rng)} train step={n} epoch={n // 2000} loss={rng.uniform(1.5, 3):.4f} "
            f"batch_time={rng.uniform(0.2, 0.6):.3f} data_time={rng.uniform(0.001, 0.05):.3f} "
            f"lr={3e-4 * rng.random():.3e} grad_norm={rng.uniform(0.1, 2):.3f} throughput={rng.uniform(400, 900):.1f}/s\n")


def hf_trainer(rng: random.Random, n: int) -> str:
    if n % 4:
        return (f"{{'loss': {rng.uniform(1, 3):.4f}, 'grad_norm': {rng.uniform(0.1, 3):.4f}, "
                f"'learning_rate': {5e-5 * rng.random():.4e}, 'epoch': {n / 4000:.2f}}}\n")
    return (f" {n % 100:3d}%|{'█' * (n % 10):<10}| {n}/40000 [{n // 60:02d}:{n % 60:02d}<4:12:00, "
            f"{rng.uniform(2, 3):.2f}it/s]\n")


def ddp(rng: random.Random, n: int) -> str:
    return loggen._block(rng, n)  # noqa: SLF001 - a block of [rankN]: lines, NCCL, config dumps


GENERATORS: dict[str, Callable[[random.Random, int], str]] = {
    "tqdm": tqdm, "mmdet": mmdet, "detectron2": detectron2, "keyvalue": keyvalue, "hf": hf_trainer, "ddp": ddp,
}


def pools(seed: int = 7) -> dict[str, list[str]]:
    rng = random.Random(seed)
    return {name: [gen(rng, n) for n in range(POOL)] for name, gen in GENERATORS.items()}


def job_log(i: int, size: int, generator: str, pool: list[str], rng: random.Random) -> bytes:
    """One job log of about ``size`` bytes whose body comes from ``pool``."""
    head = (f"SLURM_JOB_ID={100000 + i}\nSLURMD_NODENAME=node{i % 64:02d}\n"
            f"{_ts(rng)} - INFO - config - generator={generator} data: {{'batch_size': 64, 'num_workers': 8, "
            f"'pin_memory': True, 'persistent_workers': True, 'prefetch_factor': 2}}\n")
    parts = [head]
    total = len(head)
    start = rng.randrange(len(pool))
    k = 0
    while total < size - 400:
        line = pool[(start + k) % len(pool)]
        parts.append(line)
        total += len(line)
        k += 1
    if i % 10 == 0:
        parts.append(FAILURES[(i // 10) % len(FAILURES)])
    return "".join(parts).encode()
