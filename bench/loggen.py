"""Deterministic, realistic training logs for the speed bench.

A log is mostly clean progress (tqdm bars with ``\\r`` redraws, ``[rankN]:`` step lines, INFO
records, NCCL chatter), with periodic warnings, config dumps that mention DataLoader settings
(``num_workers``, ``pin_memory`` ... keywords that are *not* failures), tracebacks that are not
DataLoader failures, and two real failures planted deep inside (at 61 % and 97 % of the file).
"""
from __future__ import annotations

import random
from pathlib import Path

BLOCKS = " ▏▎▍▌▋▊▉█"

CONFIG = (
    "2024-05-17 03:00:{s:02d},101 - INFO - config - data: {{'batch_size': 64, 'num_workers': 8, "
    "'pin_memory': True, 'persistent_workers': True, 'prefetch_factor': 2}}\n"
)
WARNING = (
    "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py:558: UserWarning: "
    "This DataLoader will create 16 worker processes in total. Our suggested max number of worker "
    "in current system is 8, which is smaller than what this DataLoader is going to create.\n"
    "  warnings.warn(_create_warning_msg(\n"
)
BENIGN_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/app/hooks/metrics.py", line 88, in compute_bleu\n'
    "    score = corpus_bleu(preds, refs)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/sacrebleu/compat.py", line 37, in corpus_bleu\n'
    "    return metric.corpus_score(hypotheses, references)\n"
    "ZeroDivisionError: division by zero\n"
    "{ts} - WARNING - hooks - metric bleu failed at step {step}; continuing\n"
)
FAILURES = (
    # 61 %: a worker killed by a bus error (shared memory exhausted) on rank 3
    "[rank3]: Traceback (most recent call last):\n"
    '[rank3]:   File "/app/train.py", line 212, in <module>\n'
    "[rank3]:     for batch in loader:\n"
    "[rank3]: RuntimeError: DataLoader worker (pid 48211) is killed by signal: Bus error. It is possible "
    "that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n",
    # 97 %: a worker that exited unexpectedly on rank 1
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/app/train.py", line 212, in <module>\n'
    "[rank1]:     for batch in loader:\n"
    "[rank1]: RuntimeError: DataLoader worker (pid(s) 4971) exited unexpectedly\n",
)
PLANT_AT = (0.61, 0.97)
#: the dense logs (``write_dense``): a failure printed on every line, or several taking turns
DENSE = {
    "one": ("RuntimeError: DataLoader worker (pid 1) exited unexpectedly\n",),
    "five": ("RuntimeError: DataLoader worker (pid 1) exited unexpectedly\n",
             "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
             "memory (shm).\n",
             "OSError: [Errno 24] Too many open files\n",
             "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
             "you must use the 'spawn' start method\n",
             "RuntimeError: DataLoader timed out after 120 seconds\n"),
}
UNIQUE = 24 << 20
#: the crash loop (``write_crash_loop``): failures appended to one log for days, each line one of
#: these with its own number (a pid, a port, a line of the loader's source)
CRASH_LOOP = (
    "RuntimeError: DataLoader worker (pid {}) is killed by signal: Killed.",
    "RuntimeError: DataLoader worker (pid(s) {}) exited unexpectedly",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "OSError: [Errno 24] Too many open files: '/tmp/pymp-{}/listener'",
    "RuntimeError: DataLoader timed out after {} seconds",
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line {}, in _try_get_data',
)


def _bar(rng: random.Random, epoch: int, i: int, total: int) -> str:
    frac = i / total
    full = int(frac * 10)
    part = BLOCKS[int((frac * 10 - full) * 8)] if full < 10 else ""
    bar = ("█" * full + part).ljust(10)
    rate = rng.uniform(3.5, 6.5)
    return (f"Epoch {epoch}: {int(frac * 100):3d}%|{bar}| {i}/{total} [{i // 300:02d}:{i % 60:02d}<"
            f"{(total - i) // 300:02d}:{(total - i) % 60:02d}, {rate:.2f}it/s, loss={rng.uniform(1.8, 2.6):.3f}, v_num=3]")


def _block(rng: random.Random, step: int) -> str:
    """About 4 KB of ordinary training output around ``step``."""
    ts = f"2024-05-17 {3 + step // 360000 % 20:02d}:{step // 6000 % 60:02d}:{step // 100 % 60:02d},{step % 1000:03d}"
    epoch, total = step // 10000, 10000
    out = []
    # tqdm redraws several times on one physical line, separated by carriage returns
    redraws = [_bar(rng, epoch, (step + k) % total + 1, total) for k in range(rng.randint(2, 6))]
    out.append("\r".join(redraws) + "\n")
    for rank in range(rng.randint(2, 8)):
        out.append(f"[rank{rank}]: step {step} | loss {rng.uniform(1.8, 2.6):.4f} | lr {3e-4 * rng.random():.2e} | "
                   f"grad_norm {rng.uniform(0.2, 1.4):.3f} | tokens/s {rng.randint(30000, 45000)}\n")
    out.append(f"{ts} - INFO - trainer - step {step}: throughput {rng.uniform(900, 1300):.1f} samples/s, "
               f"data time {rng.uniform(0.001, 0.02):.4f}s, gpu mem {rng.randint(30, 70)}.{rng.randint(0, 9)} GiB\n")
    if rng.random() < 0.3:
        out.append(f"node{rng.randint(0, 7)}:{rng.randint(1000, 9999)}:{rng.randint(1000, 9999)} [{rng.randint(0, 7)}] "
                   f"NCCL INFO Channel {rng.randint(0, 31):02d}/0 : {rng.randint(0, 7)}[{rng.randint(0, 7)}] -> "
                   f"{rng.randint(0, 7)}[{rng.randint(0, 7)}] via P2P/IPC/read\n")
    if rng.random() < 0.05:
        out.append(f"{ts} - INFO - checkpoint - saved /ckpt/run-17/step_{step:07d}.pt ({rng.randint(900, 1200)} MB)\n")
    if rng.random() < 0.004:
        out.append(WARNING)
    if rng.random() < 0.002:
        out.append(CONFIG.format(s=step % 60))
    if rng.random() < 0.001:
        out.append(BENIGN_TRACEBACK.format(ts=ts, step=step))
    return "".join(out)


def write_log(path: Path, size: int, seed: int = 5) -> Path:
    """Write a ``size``-byte (at least) training log with the planted failures to ``path``.

    ``UNIQUE`` bytes of fresh blocks are generated; the rest repeats them (generation in pure
    Python runs at ~8 MB/s, copying at disk speed), with the failures planted at ``PLANT_AT``."""
    rng = random.Random(seed)
    blocks, step, total = [], 0, 0
    while total < min(size, UNIQUE):
        block = _block(rng, step).encode("utf-8")
        blocks.append(block)
        total += len(block)
        step += 1
    plants = [int(size * p) for p in PLANT_AT]
    written, planted, i = 0, 0, 0
    with open(path, "wb", buffering=8 << 20) as fh:
        while written < size:
            batch = b"".join(blocks[i % len(blocks)] for i in range(i, i + 256))
            i += 256
            if planted < len(plants) and written + len(batch) > plants[planted]:
                batch += FAILURES[planted].encode("utf-8")
                planted += 1
            fh.write(batch)
            written += len(batch)
    return path


def write_one_line(path: Path, size: int) -> Path:
    """One ``size``-byte line (a tqdm bar that never printed a newline) with a failure inside."""
    rng = random.Random(7)
    unit = "\r".join(_bar(rng, 0, i + 1, 10000) for i in range(40)).encode("utf-8") + b"\r"
    failure = FAILURES[0].replace("\n", " ").encode("utf-8")
    big = unit * max(1, (4 << 20) // len(unit))
    with open(path, "wb", buffering=8 << 20) as fh:
        written = _fill(fh, big, size // 2)  # the failure sits in the middle, at any size
        fh.write(failure)
        _fill(fh, big, size - written - len(failure))
    return path


def write_dense(path: Path, size: int, shape: str) -> Path:
    """The ``DENSE[shape]`` lines in turn, ``size`` bytes rounded up to whole turns: every line
    holds a keyword, and the signatures it leads to reach their cap within the first round."""
    unit = "".join(DENSE[shape]).encode("utf-8")
    block = unit * max(1, (4 << 20) // len(unit))
    with open(path, "wb", buffering=8 << 20) as fh:
        _fill(fh, block, size + -size % len(unit))
    return path


def write_crash_loop(path: Path, size: int, seed: int = 2) -> Path:
    """At least ``size`` bytes of ``CRASH_LOOP`` lines drawn at random, each with a number of 4 or
    5 digits: every line holds a keyword, and no two lines in a row are likely to be the same."""
    rnd = random.Random(seed)
    written = 0
    with open(path, "w", buffering=8 << 20) as fh:
        while written < size:
            line = rnd.choice(CRASH_LOOP).format(rnd.randrange(1000, 99999)) + "\n"
            written += fh.write(line)
    return path


def _fill(fh, block: bytes, n: int) -> int:
    """Write ``n`` bytes of ``block`` repeated (the last copy cut short); return ``n``."""
    n = max(n, 0)
    for _ in range(n // len(block)):
        fh.write(block)
    fh.write(block[: n % len(block)])
    return n
