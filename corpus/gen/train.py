"""A small but real training run: ``python -m corpus.gen.train --help``.

A tiny MLP, SGD, epochs and steps, printed losses and a progress bar, fed by a
real ``torch.utils.data.DataLoader`` over ``ShardDataset``. The ``--fault``
options make a worker fail for real; the harness captures what torch prints.
"""
import argparse
import functools
import os
import resource
import sys
import threading
import time
import warnings

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, default_collate

from corpus.gen.bar import STYLES, Bar
from corpus.gen.datasets import (CACHE_LOCK, FAULTS, CudaCollate, FieldCollate, ShardDataset,
                                 SkipBadSamples, worker_init)


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m corpus.gen.train")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--samples", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shuffle", action="store_true")
    p.add_argument("--num-workers", type=int, default=2)
    p.add_argument("--persistent-workers", action="store_true")
    p.add_argument("--pin-memory", action="store_true")
    p.add_argument("--prefetch-factor", type=int, default=None)
    p.add_argument("--start-method", choices=("fork", "spawn", "forkserver"), default=None)
    p.add_argument("--sharing-strategy", choices=("file_descriptor", "file_system"), default=None)
    p.add_argument("--timeout", type=int, default=0)
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument("--bad-index", type=int, default=37)
    p.add_argument("--fail-epoch", type=int, default=0)
    p.add_argument("--image", type=int, default=0, help="side of a 3xSxS image per sample")
    p.add_argument("--big-image", type=int, default=0, help="image side from --grow-epoch on")
    p.add_argument("--grow-epoch", type=int, default=1)
    p.add_argument("--shm-cache", default=None, help="decoded-image cache file in /dev/shm")
    p.add_argument("--patches", type=int, default=0, help="small tensors per sample")
    p.add_argument("--keep-batches", action="store_true",
                   help="keep every batch's patches alive in the main process (epoch-end metric)")
    p.add_argument("--collate", choices=("default", "fields", "lambda", "cuda"), default="default",
                   help="lambda: a collate_fn written as a lambda (spawn cannot pickle it); "
                        "cuda: one that moves the batch to the GPU")
    p.add_argument("--worker-cuda-seed", action="store_true",
                   help="worker_init_fn seeds the GPU's generator and puts a buffer on the GPU")
    p.add_argument("--skip-bad", action="store_true", help="wrap the dataset to skip bad samples")
    p.add_argument("--nofile", type=int, default=0, help="RLIMIT_NOFILE soft limit")
    p.add_argument("--cgroup", default=None, help="memory cgroup the workers join")
    p.add_argument("--rlimit-as-mb", type=int, default=0, help="worker address-space headroom")
    p.add_argument("--slow-init", type=float, default=0.0, help="seconds of worker start-up")
    p.add_argument("--checkpoint-thread-epoch", type=int, default=-1,
                   help="after this epoch an async checkpoint thread holds the cache lock")
    p.add_argument("--gpu-oom-step", type=int, default=-1,
                   help="at this step the main process builds a feature map too large for the GPU")
    p.add_argument("--main-error-step", type=int, default=-1,
                   help="validation in the main loop raises ValueError at this global step")
    p.add_argument("--rank-signal", choices=("kill", "bus"), default=None,
                   help="the training process itself dies at --rank-signal-step: kill sends it "
                        "SIGKILL (as the OOM killer does), bus reads a mapped page whose file was "
                        "truncated (a genuine SIGBUS from the kernel)")
    p.add_argument("--rank-signal-step", type=int, default=-1)
    p.add_argument("--warnings", action="store_true", help="provoke real harmless warnings")
    p.add_argument("--ddp", action="store_true",
                   help="one rank of a DistributedDataParallel job (run under torchrun; --ddp-backend)")
    p.add_argument("--ddp-timeout", type=int, default=60, help="process-group timeout (s)")
    p.add_argument("--ddp-backend", choices=("gloo", "nccl"), default="gloo")
    p.add_argument("--stall-rank", type=int, default=-1,
                   help="with --ddp: only this rank starts the --checkpoint-thread-epoch thread")
    p.add_argument("--print-config", action="store_true")
    p.add_argument("--device", default="cpu")
    p.add_argument("--progress", choices=STYLES, default="tqdm")
    p.add_argument("--every", type=int, default=1, help="progress refresh interval (steps)")
    p.add_argument("--log-every", type=int, default=0, help="print a loss line every N steps")
    return p.parse_args(argv)


def checkpoint_async(epoch, model):
    """Flush the sample cache and write a checkpoint in the background (holds CACHE_LOCK)."""
    def run():
        with CACHE_LOCK:
            state = {k: v.clone() for k, v in model.state_dict().items()}
            # a slow network filesystem
            time.sleep(3600)
            del state
    print(f"saving checkpoint to /checkpoints/run-0/epoch_{epoch:03d}.pt (async)", flush=True)
    threading.Thread(target=run, name="ckpt-writer", daemon=True).start()
    time.sleep(0.2)


def validate(model, step):
    """A validation pass over an (accidentally) empty split, in the main process."""
    preds = [model(torch.zeros(1, 17)).detach().numpy() for _ in range(0)]
    return float(np.stack(preds).mean())


def die_by_signal(how: str) -> None:
    """End this (training) process by a signal, as the OOM killer or a full mapping would."""
    import mmap
    import signal
    import tempfile

    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    with tempfile.TemporaryFile() as fh:
        fh.write(b"\0" * mmap.PAGESIZE)
        fh.flush()
        page = mmap.mmap(fh.fileno(), mmap.PAGESIZE)
        fh.truncate(0)  # the mapped page now lies past the end of its file
        page[0]  # the kernel answers the read with SIGBUS
    raise RuntimeError("reading a mapped page past the end of its file did not raise SIGBUS here")


def main(argv=None, collate_fn=None):
    """One training run; ``collate_fn``, where given, replaces ``--collate``'s (corpus/gen/notebook.py
    passes one defined in its own ``__main__``)."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if args.nofile:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, hard))
    if args.sharing_strategy:
        torch.multiprocessing.set_sharing_strategy(args.sharing_strategy)

    if (args.device == "cuda" or args.fault == "cuda-table") and not torch.cuda.is_available():
        print("SKIP: CUDA asked for but torch.cuda.is_available() is False", flush=True)
        return
    rank = local_rank = 0
    if args.ddp:
        import datetime

        import torch.distributed as dist

        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if args.device == "cuda":
            torch.cuda.set_device(local_rank)
        dist.init_process_group(args.ddp_backend, timeout=datetime.timedelta(seconds=args.ddp_timeout))
        rank = dist.get_rank()
        print(f"initialized process group: backend={args.ddp_backend} rank={rank} "
              f"world_size={dist.get_world_size()} timeout={args.ddp_timeout}s", flush=True)
    print(f"torch {torch.__version__} | python {sys.version.split()[0]} | pid {os.getpid()}",
          flush=True)
    dataset = ShardDataset(n=args.samples, fault=args.fault, bad_index=args.bad_index,
                           fail_epoch=args.fail_epoch, image=args.image, big_image=args.big_image,
                           grow_epoch=args.grow_epoch, patches=args.patches,
                           shm_cache=args.shm_cache)
    if args.shm_cache:
        size = dataset.create_cache()
        print(f"decoded-image cache: {args.shm_cache} ({size / 2**20:.1f} MiB, sparse)",
              flush=True)
    base = dataset
    if args.skip_bad:
        dataset = SkipBadSamples(dataset)
    init = None
    if args.num_workers and (args.cgroup or args.rlimit_as_mb or args.slow_init or args.worker_cuda_seed):
        init = functools.partial(worker_init, cgroup=args.cgroup, rlimit_as_mb=args.rlimit_as_mb,
                                 slow_init=args.slow_init, cuda_seed=args.worker_cuda_seed)
    kwargs = dict(batch_size=args.batch_size, shuffle=args.shuffle,
                  num_workers=args.num_workers, pin_memory=args.pin_memory,
                  timeout=args.timeout, worker_init_fn=init,
                  generator=torch.Generator().manual_seed(args.seed))
    if args.ddp:
        from torch.utils.data.distributed import DistributedSampler

        kwargs.pop("generator")
        kwargs["sampler"] = DistributedSampler(dataset, shuffle=args.shuffle, seed=args.seed)
        kwargs["shuffle"] = False
    if args.num_workers:
        kwargs["persistent_workers"] = args.persistent_workers
        if args.prefetch_factor:
            kwargs["prefetch_factor"] = args.prefetch_factor
        if args.start_method:
            kwargs["multiprocessing_context"] = args.start_method
    if args.collate == "fields":
        kwargs["collate_fn"] = FieldCollate(["x", "y"])
    elif args.collate == "cuda":
        kwargs["collate_fn"] = CudaCollate()
    elif args.collate == "lambda":
        kwargs["collate_fn"] = lambda batch: default_collate(batch)  # noqa: E731 - the point of it
    if collate_fn is not None:
        kwargs["collate_fn"] = collate_fn
    loader = DataLoader(dataset, **kwargs)
    if args.print_config:
        shown = {k: v for k, v in kwargs.items() if k not in ("generator", "worker_init_fn")}
        shown["sharing_strategy"] = torch.multiprocessing.get_sharing_strategy()
        print("DataLoader config: " + ", ".join(f"{k}={v}" for k, v in shown.items()), flush=True)
        print(f"dataset: {type(dataset).__name__}(n={len(dataset)}) steps/epoch={len(loader)}",
              flush=True)

    device = torch.device(args.device)
    model = nn.Sequential(nn.Linear(17, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    if args.ddp:
        model = nn.parallel.DistributedDataParallel(
            model, device_ids=[local_rank] if args.device == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    if args.warnings:
        # stepped before optimizer.step(): torch warns about the order
        sched.step()
        warnings.warn("checkpoint directory /checkpoints/run-0 exists and is not empty",
                      UserWarning)
    loss_fn = nn.CrossEntropyLoss()
    print(f"model: {sum(p.numel() for p in model.parameters())} parameters, "
          f"optimizer: SGD(lr={args.lr}, momentum=0.9)", flush=True)

    gstep = 0
    t_run = time.monotonic()
    for epoch in range(args.epochs):
        base.set_epoch(epoch)
        if args.ddp:
            kwargs["sampler"].set_epoch(epoch)
        bar = Bar(len(loader), style=args.progress, desc=f"epoch {epoch}", epoch=epoch,
                  every=args.every)
        t0 = time.monotonic()
        first = None
        total, correct, seen = 0.0, 0, 0
        kept = []
        for step, batch in enumerate(loader):
            if args.keep_batches and "patches" in batch:
                kept.append(batch["patches"])
            if first is None:
                first = time.monotonic() - t0
            x = batch["x"]
            extra = batch["image"].mean(dim=(1, 2, 3)) if "image" in batch else x.sum(1) * 0
            if "patches" in batch:
                extra = extra + torch.stack(batch["patches"]).mean() * 0
            if gstep + 1 == args.gpu_oom_step:
                # a dense pairwise feature map over a batch grown 16-fold: 256 GiB on the GPU
                big = x.to(device).repeat(16, 1)
                pairwise = big[:, :, None, None] * big.new_ones(1, 1, 2 ** 14, 2 ** 10)
                extra = extra + pairwise.mean() * 0
            logits = model(torch.cat([x, extra[:, None]], dim=1).to(device))
            target = batch["y"].to(device)
            loss = loss_fn(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            gstep += 1
            total += loss.item() * len(x)
            correct += int((logits.argmax(1) == target).sum())
            seen += len(x)
            bar.update(1, loss=loss.item())
            if args.log_every and gstep % args.log_every == 0:
                print(f"step {gstep} loss {loss.item():.4f}", flush=True)
            if gstep == args.rank_signal_step and args.rank_signal:
                bar.close()
                die_by_signal(args.rank_signal)
            if gstep == args.main_error_step:
                bar.close()
                print(f"running validation at step {gstep}", flush=True)
                validate(model, gstep)
        bar.close()
        sched.step()
        print(f"epoch {epoch} | train_loss {total / max(seen, 1):.4f} | "
              f"acc {correct / max(seen, 1):.3f} | first batch {first or 0:.2f}s | "
              f"{time.monotonic() - t0:.1f}s", flush=True)
        if epoch == args.checkpoint_thread_epoch and args.stall_rank in (-1, rank):
            checkpoint_async(epoch, model)
    print(f"training finished: {args.epochs} epochs, {gstep} steps in "
          f"{time.monotonic() - t_run:.1f}s", flush=True)


if __name__ == "__main__":
    main()
