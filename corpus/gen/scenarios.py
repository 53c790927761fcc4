"""The variant table: every item ``python -m corpus.gen all`` writes.

A variant's ``scenario`` names its family (the held-out split groups by it); its
``name`` is the file stem. Variants change what the text looks like: worker
count, start method, persistent workers, pin_memory, sharing strategy,
progress style, rank prefix, Slurm lines, and how deep the failure sits.
"""
from corpus.gen.harness import Variant

CAUGHT = "in DataLoader worker process"
BUS = ("is killed by signal: Bus error", "Unexpected bus error encountered in worker")
KILLED = ("is killed by signal: Killed", "exited unexpectedly")
TIME_LIMIT = ("DUE TO TIME LIMIT",)


def _torchrun(nproc: int) -> list[str]:
    """``python -m torch.distributed.run`` (torchrun) arguments running ``nproc``
    DistributedDataParallel ranks of the training script, each rank's output prefixed by torchrun."""
    return ["--standalone", "--nproc-per-node", str(nproc), "--tee", "3", "-m", "corpus.gen.train", "--ddp"]


#: two ranks (gloo on the CPU unless --ddp-backend says otherwise)
TORCHRUN = _torchrun(2)


def _w(n, *extra):
    return ["--num-workers", str(n), *extra]


def long_plain(samples, batch=4):
    """A long run: one plain progress line per step."""
    return ["--samples", str(samples), "--batch-size", str(batch), "--progress", "plain",
            "--every", "1"]


SHM_CACHE = ["--image", "48", "--shm-cache", "/dev/shm/decoded_cache.u8", "--epochs", "3",
             "--batch-size", "16"]
GROW = ["--image", "16", "--big-image", "128", "--grow-epoch", "1", "--epochs", "3"]
BUS_NOTE = ("/dev/shm is a private 2 MiB tmpfs (unshare -m). The dataset keeps decoded images "
            "in a sparse memmap cache file in /dev/shm; when the tmpfs fills, the worker's "
            "write faults with a real SIGBUS and torch's worker signal handler reports it.")
GROW_NOTE = ("/dev/shm is a private 2 MiB tmpfs (unshare -m). Progressive resizing makes the "
             "batches grow from 16px to 128px images at epoch 1; torch cannot allocate the "
             "shared-memory segment for the batch in the worker (fallocate fails, ENOSPC).")


def class_a():
    out = []
    bus = [("w2-fork", _w(2, "--start-method", "fork", "--progress", "tqdm-lines", "--every", "4"), {}),
           ("w4-persistent", _w(4, "--persistent-workers", "--progress", "lightning"), {}),
           ("w1-spawn-slurm", _w(1, "--start-method", "spawn", "--progress", "plain", "--every", "2"),
            {"slurm": True}),
           ("w2-forkserver-rank", _w(2, "--start-method", "forkserver", "--progress", "tqdm"),
            {"rank": 0}),
           ("w2-filesystem", _w(2, "--sharing-strategy", "file_system", "--pin-memory",
                                "--progress", "tqdm-lines", "--every", "8"), {})]
    for tag, args, kw in bus:
        out.append(Variant(f"a-shm-bus-{tag}", "a-shm-bus", "A", "bus-error", SHM_CACHE + args,
                           BUS, notes=BUS_NOTE, shm="size=2m", **kw))
    out.append(Variant("a-shm-bus-long", "a-shm-bus", "A", "bus-error",
                       ["--image", "96", "--shm-cache", "/dev/shm/decoded_cache.u8", "--epochs", "1",
                        *long_plain(6000, batch=1), *_w(2)], BUS,
                       notes=BUS_NOTE.replace("2 MiB", "48 MiB")
                       + " Long log: thousands of progress lines before the failure.",
                       shm="size=48m", slurm=True, timeout=240))
    for strat, short in (("file_descriptor", "fd"), ("file_system", "fs")):
        grow = [("w2", _w(2, "--progress", "tqdm-lines", "--every", "8"), {}),
                ("w4-pin-slurm", _w(4, "--pin-memory", "--progress", "lightning"), {"slurm": True}),
                ("w2-spawn-rank", _w(2, "--start-method", "spawn", "--progress", "plain",
                                     "--every", "4"), {"rank": 1})]
        for tag, args, kw in grow:
            out.append(Variant(f"a-shm-nospace-{short}-{tag}", "a-shm-nospace", "A", "shm-full",
                               GROW + ["--sharing-strategy", strat] + args,
                               ("unable to allocate shared memory(shm) for file",
                                "No space left on device"),
                               notes=GROW_NOTE + f" Sharing strategy {strat}.", shm="size=2m", **kw))
    for tag, args, inodes in (("w2-fork", _w(2, "--progress", "tqdm-lines", "--every", "8"), 20),
                              ("w4-lightning", _w(4, "--progress", "lightning"), 30)):
        out.append(Variant(f"a-shm-inodes-fs-{tag}", "a-shm-inodes", "A", "shm-full",
                           ["--image", "16", "--epochs", "3", "--sharing-strategy", "file_system",
                            *args], ("unable to open shared memory object",),
                           notes=f"/dev/shm is a private tmpfs with only {inodes} inodes (unshare "
                                 f"-m, nr_inodes={inodes}); with the file_system strategy every "
                                 "batch is a file there, so shm_open fails with ENOSPC. When it "
                                 "fails in a worker's queue feeder thread the batch is lost and "
                                 "the loop hangs: the harness then kills it after 15s of silence.",
                           shm=f"size=64m,nr_inodes={inodes}", silence=15))
    out.append(Variant("a-shm-semaphore-w2", "a-shm-semaphore", "A", "shm-full-semaphore",
                       ["--image", "16", "--epochs", "2", *_w(2), "--print-config"],
                       ("No space left on device",),
                       notes="/dev/shm is a private tmpfs with 12 inodes (unshare -m, "
                             "nr_inodes=12): creating the DataLoader's queues fails because "
                             "POSIX semaphores live in /dev/shm too.",
                       shm="size=64m,nr_inodes=12"))
    return out


def getitem_faults():
    """Dataset faults of the getitem scenarios: (--fault, the plain exception line, the worker's
    'Caught ...' line)."""
    return {
        "keyerror": ("keyerror", "KeyError: 'sample_000037'", "Caught KeyError " + CAUGHT),
        "filenotfound": ("filenotfound", "FileNotFoundError: [Errno 2] No such file or directory",
                         "Caught FileNotFoundError " + CAUGHT),
        "valueerror": ("valueerror", "ValueError: cannot reshape array",
                       "Caught ValueError " + CAUGHT),
        "collate-stack": ("badshape", "stack expects each tensor to be equal size",
                          "Caught RuntimeError " + CAUGHT),
        "collate-field": ("missing-field", "KeyError: 'y'", "Caught KeyError " + CAUGHT),
    }


def getitem_shapes():
    """How each getitem fault is run: (tag, worker arguments, options); a ``w0`` tag runs no worker."""
    return {
        "keyerror": [("w0", _w(0, "--progress", "tqdm"), {}),
                     ("w2-fork", _w(2, "--start-method", "fork", "--progress", "tqdm-lines", "--every", "4"), {}),
                     ("w4-spawn-persistent", _w(4, "--start-method", "spawn", "--persistent-workers",
                                                 "--progress", "lightning"), {}),
                     ("w1-forkserver-rank", _w(1, "--start-method", "forkserver", "--progress",
                                                "plain", "--every", "4"), {"rank": 0}),
                     ("w2-long-slurm", [*long_plain(4000), "--epochs", "3", "--fail-epoch", "2",
                                        "--bad-index", "3000", *_w(2)], {"slurm": True})],
        "filenotfound": [("w0-slurm", _w(0, "--progress", "plain", "--every", "8"), {"slurm": True}),
                         ("w2", _w(2, "--shuffle", "--progress", "tqdm"), {}),
                         ("w4-pin", _w(4, "--pin-memory", "--progress", "tqdm-lines", "--every", "2"), {})],
        "valueerror": [("w0-lightning", _w(0, "--progress", "lightning"), {}),
                       ("w2-spawn", _w(2, "--start-method", "spawn", "--progress", "tqdm-lines",
                                       "--every", "8"), {}),
                       ("w2-persistent-rank", _w(2, "--persistent-workers", "--progress", "tqdm"),
                        {"rank": 3})],
        "collate-stack": [("w0", _w(0, "--progress", "tqdm-lines", "--every", "4"), {}),
                          ("w2-slurm", _w(2, "--progress", "plain", "--every", "4"), {"slurm": True})],
        "collate-field": [("w0", _w(0, "--collate", "fields", "--progress", "tqdm"), {}),
                          ("w4", _w(4, "--collate", "fields", "--progress", "lightning"), {})],
    }


def class_b():
    out = []
    hog_note = ("The workers join a memory cgroup (v1, memory.limit_in_bytes={mb} MiB) in "
                "worker_init_fn; sample {idx} leaks memory until the kernel OOM killer really "
                "SIGKILLs the worker.")
    oom = [("w1-fork", _w(1, "--progress", "tqdm-lines", "--every", "4"), {}),
           ("w2-persistent", _w(2, "--persistent-workers", "--progress", "tqdm"), {}),
           ("w2-spawn-lightning", _w(2, "--start-method", "spawn", "--progress", "lightning"), {}),
           ("w4-slurm-rank", _w(4, "--progress", "plain", "--every", "4"), {"slurm": True, "rank": 0}),
           ("w2-dmesg", _w(2, "--progress", "tqdm-lines", "--every", "8"), {"dmesg": True})]
    for tag, args, kw in oom:
        out.append(Variant(f"b-oom-cgroup-{tag}", "b-oom-cgroup", "B", "oom",
                           ["--fault", "hog", "--bad-index", "300", "--epochs", "2"] + args, KILLED,
                           notes=hog_note.format(mb=400, idx=300), cgroup_mb=400, **kw))
    sim = [("w2-fork", _w(2, "--progress", "tqdm-lines", "--every", "4"), {}),
           ("w4-pin-slurm", _w(4, "--pin-memory", "--progress", "lightning"), {"slurm": True}),
           ("w2-long-rank", [*long_plain(6000), *_w(2)], {"rank": 0})]
    for tag, args, kw in sim:
        marker = "epoch 1" if "long" not in tag else "step 1200/"
        out.append(Variant(f"b-oom-sigkill-{tag}", "b-oom-sigkill", "B", "oom-simulated",
                           ["--epochs", "3"] + args, KILLED, kill_worker_on=marker,
                           notes="No real OOM here: the harness SIGKILLs one DataLoader worker "
                                 "mid-run to simulate the kernel OOM killer.", **kw))
    for tag, fault, ev in (("bytes", "alloc-bytes", ("Caught MemoryError " + CAUGHT, "MemoryError")),
                           ("torch", "alloc-torch", ("DefaultCPUAllocator: can't allocate memory",))):
        out.append(Variant(f"b-getitem-memoryerror-{tag}-w2", "b-getitem-memoryerror", "B",
                           "getitem-memoryerror",
                           ["--fault", fault, "--bad-index", "200", "--rlimit-as-mb", "256",
                            *_w(2), "--progress", "tqdm-lines", "--every", "4"], ev,
                           notes="RLIMIT_AS set in worker_init_fn (current size + 256 MiB); a "
                                 "large allocation in __getitem__ fails and is raised as an "
                                 "exception in the worker. The text shows a dataset exception, "
                                 "not an OOM kill, so it is labelled getitem (memory-caused)."))
    getitem, shapes = getitem_faults(), getitem_shapes()
    for kind, (fault, plain_ev, caught_ev) in getitem.items():
        for tag, args, kw in shapes[kind]:
            if tag.startswith("w0"):  # no worker: class G (class_g)
                continue
            sub = "getitem-collate" if kind.startswith("collate") else "getitem"
            out.append(Variant(f"b-getitem-{kind}-{tag}", f"b-getitem-{kind}", "B", sub,
                               ["--fault", fault, "--epochs", "2"] + args, (caught_ev, plain_ev),
                               notes="The worker's exception is re-raised in the main process by torch.", **kw))
    crash = [("segv", "segv", "w2-fork", _w(2, "--progress", "tqdm-lines", "--every", "4"), {}, {}),
             ("segv", "segv", "w4-spawn-lightning", _w(4, "--start-method", "spawn", "--progress",
                                                        "lightning"), {}, {}),
             ("segv", "segv", "w2-faulthandler", _w(2, "--progress", "tqdm"), {"PYTHONFAULTHANDLER": "1"}, {}),
             ("segv", "segv", "w2-long-slurm", [*long_plain(3000), *_w(2), "--bad-index", "2500"], {},
              {"slurm": True}),
             ("segv", "segv-kill", "w1-rank", _w(1, "--progress", "plain", "--every", "4"), {}, {"rank": 0}),
             ("fpe", "fpe", "w2", _w(2, "--progress", "tqdm-lines", "--every", "4"), {}, {}),
             ("fpe", "fpe", "w4-persistent-slurm", _w(4, "--persistent-workers", "--progress", "tqdm"),
              {}, {"slurm": True}),
             ("abrt", "abrt", "w2", _w(2, "--progress", "tqdm-lines", "--every", "8"), {}, {}),
             ("abrt", "abrt", "w1-slurm-rank", _w(1, "--progress", "lightning"), {}, {"slurm": True, "rank": 2})]
    sig = {"segv": "Segmentation fault", "fpe": "Floating point exception", "abrt": "Aborted"}
    handler = {"segv": ("Unexpected segmentation fault encountered in worker",),
               "fpe": ("Unexpected floating-point exception encountered in worker",), "abrt": ()}
    how = {"segv": "ctypes.string_at(0) (a real NULL-pointer read)",
           "segv-kill": "os.kill(os.getpid(), SIGSEGV)",
           "fpe": "os.kill(os.getpid(), SIGFPE)", "abrt": "os.abort()"}
    for family, fault, tag, args, env, kw in crash:
        out.append(Variant(f"b-crash-{fault}-{tag}", f"b-crash-{family}", "B", f"crash-{family}",
                           ["--fault", fault, "--epochs", "2"] + args,
                           (f"is killed by signal: {sig[family]}", *handler[family],
                            "exited unexpectedly"), env=env,
                           notes=f"The worker dies in __getitem__ via {how[fault]}."
                                 + (" PYTHONFAULTHANDLER=1 is set." if env else ""), **kw))
    return out


def class_c():
    out = []
    anc = [("w2", _w(2, "--progress", "tqdm-lines", "--every", "4"), {}),
           ("w1-lightning", _w(1, "--progress", "lightning"), {}),
           ("w4-slurm", _w(4, "--progress", "plain", "--every", "2"), {"slurm": True}),
           ("w2-persistent-rank", _w(2, "--persistent-workers", "--progress", "tqdm"), {"rank": 0})]
    for tag, args, kw in anc:
        out.append(Variant(f"c-fd-ancdata-{tag}", "c-fd-ancdata", "C", "fd-ancdata",
                           ["--patches", "64", "--batch-size", "8", "--nofile", "512",
                            "--keep-batches", "--epochs", "2"] + args,
                           ("received 0 items of ancdata",),
                           notes="RLIMIT_NOFILE soft limit 512 set in the training process before "
                                 "the loader is made; file_descriptor strategy; each batch holds "
                                 "64 tensors and the loop keeps them alive (an epoch-end "
                                 "metric), so the main process runs out of descriptors.", **kw))
    for tag, args in (("w2", _w(2, "--progress", "tqdm-lines", "--every", "2")),
                      ("w1-spawn", _w(1, "--start-method", "spawn", "--progress", "plain"))):
        out.append(Variant(f"c-fd-toomany-{tag}", "c-fd-toomany", "C", "fd-too-many-open-files",
                           ["--patches", "300", "--batch-size", "8", "--nofile", "128", "--epochs",
                            "2"] + args, ("Too many open files",),
                           notes="RLIMIT_NOFILE soft limit 128 (inherited by the workers); "
                                 "file_descriptor strategy; a batch has 300 tensors, so the "
                                 "worker cannot open the shared-memory segments."))
    out.append(Variant("c-fd-feeder-hang-w2", "c-fd-toomany", "C", "fd-too-many-open-files",
                       ["--patches", "64", "--batch-size", "8", "--nofile", "128", "--keep-batches",
                        *_w(2), "--progress", "tqdm-lines"], ("Too many open files",),
                       notes="RLIMIT_NOFILE 128, file_descriptor strategy, batches kept alive: the "
                             "workers' queue feeder threads fail with EMFILE and the loop hangs; "
                             "the harness kills it after 12s of silence.",
                       silence=12, slurm=True))
    return out


REINIT = ("Cannot re-initialize CUDA in forked subprocess", "CUDA error: initialization error")
FORKED = "CUDA is initialised in the main process (the model is on the GPU) before the workers fork"


def class_d():
    """CUDA touched in a forked worker, four ways: ``__getitem__`` moves a tensor to the GPU, the
    dataset holds a table the main process put on the GPU, the collate function moves the batch,
    ``worker_init_fn`` seeds the GPU. Needs a GPU: skipped (no log written) where there is none."""
    out = []
    item = ["--fault", "cuda", "--device", "cuda"]
    for tag, args, kw in (("w2-fork", _w(2, "--start-method", "fork"), {}),
                          ("w4-rank-lightning", _w(4, "--start-method", "fork", "--progress", "lightning"),
                           {"rank": 0}),
                          ("w1-default-slurm", _w(1, "--progress", "plain", "--every", "4"), {"slurm": True})):
        out.append(Variant(f"d-cuda-in-worker-{tag}", "d-cuda-in-worker", "D", "cuda-in-forked-worker",
                           item + args, REINIT, needs_cuda=True,
                           notes=f"{FORKED}; __getitem__ calls .to('cuda') in a forked worker"
                                 + (" (the default start method on Linux: fork)." if "default" in tag else ".")))
    out.append(Variant("d-cuda-table-w2-tqdm", "d-cuda-table", "D", "cuda-in-forked-worker",
                       ["--fault", "cuda-table", "--device", "cuda", *_w(2, "--progress", "tqdm")],
                       REINIT, needs_cuda=True,
                       notes="The dataset holds a lookup table the main process put on the GPU; every "
                             "__getitem__ reads its row, so each forked worker touches CUDA at its first sample."))
    out.append(Variant("d-cuda-collate-w2-print-config", "d-cuda-collate", "D", "cuda-in-forked-worker",
                       ["--collate", "cuda", "--device", "cuda", "--print-config",
                        *_w(2, "--progress", "tqdm-lines", "--every", "4")],
                       REINIT, needs_cuda=True,
                       notes=f"{FORKED}; the collate_fn moves each batch to the GPU itself, in the worker."))
    out.append(Variant("d-cuda-worker-init-w4-slurm", "d-cuda-worker-init", "D", "cuda-in-forked-worker",
                       ["--worker-cuda-seed", "--device", "cuda", *_w(4, "--progress", "plain", "--every", "4")],
                       REINIT, needs_cuda=True, slurm=True,
                       notes=f"{FORKED}; worker_init_fn seeds the GPU's generator per worker and puts a "
                             "noise buffer on the GPU."))
    out.append(Variant("d-ddp-cuda-in-worker-nccl-w2", "d-ddp-cuda", "D", "cuda-in-forked-worker",
                       [*_torchrun(1), "--ddp-backend", "nccl", *item,
                        *_w(2, "--start-method", "fork", "--progress", "plain", "--every", "4")],
                       REINIT, needs_cuda=True, module="torch.distributed.run",
                       notes=f"{FORKED}; one DistributedDataParallel rank (NCCL) under torchrun, whose "
                             "prefixes and failure summary are in the log; __getitem__ calls .to('cuda') "
                             "in a forked worker."))
    lightning = ("PyTorch Lightning (corpus/gen/lightning_run.py): the Trainer moves the model to the GPU "
                 "before the fit loop forks the loader's workers")
    out.append(Variant("d-lightning-cuda-in-worker-w2", "d-lightning-cuda", "D", "cuda-in-forked-worker",
                       ["--fault", "cuda", "--num-workers", "2"], REINIT, needs_cuda=True,
                       module="corpus.gen.lightning_run",
                       notes=f"{lightning}; __getitem__ calls .to('cuda') in a forked worker."))
    out.append(Variant("d-lightning-cuda-table-w4-slurm", "d-lightning-cuda", "D", "cuda-in-forked-worker",
                       ["--fault", "cuda-table", "--num-workers", "4"], REINIT, needs_cuda=True, slurm=True,
                       module="corpus.gen.lightning_run",
                       notes=f"{lightning}; the dataset holds a table it put on the GPU, read per sample."))
    return out


def class_e():
    out = []
    lock = ["--fault", "lock", "--epochs", "3", "--checkpoint-thread-epoch", "0",
            "--start-method", "fork"]
    lock_note = ("After epoch 0 an async checkpoint thread holds a threading.Lock that "
                 "__getitem__ also takes; the epoch-1 workers (persistent_workers=False) are "
                 "forked while it is held and block forever.")
    for tag, args, kw in (("w2", _w(2, "--progress", "tqdm-lines", "--every", "8"), {}),
                          ("w4-slurm-lightning", _w(4, "--progress", "lightning"), {"slurm": True})):
        out.append(Variant(f"e-lock-timeout-{tag}", "e-lock-timeout", "E", "deadlock-timeout",
                           lock + ["--timeout", "5"] + args,
                           ("DataLoader timed out after 5 seconds",), notes=lock_note, **kw))
    for tag, args, kw in (("w2-tqdm", _w(2, "--progress", "tqdm"), {}),
                          ("w2-long-slurm", [*long_plain(4000), *_w(2)], {"slurm": True}),
                          ("w4-rank", _w(4, "--progress", "tqdm-lines", "--every", "4"), {"rank": 0})):
        out.append(Variant(f"e-lock-hang-{tag}", "e-lock-hang", "E", "hang", lock + args, TIME_LIMIT,
                           notes=lock_note + " No timeout: the log just stops.", silence=12, **kw))
    out.append(Variant("e-lock-sigint-w2", "e-lock-sigint", "E", "hang", lock + _w(2, "--progress",
                       "tqdm-lines", "--every", "8"), ("KeyboardInterrupt",),
                       notes=lock_note + " No timeout; the harness interrupts the stalled run.",
                       silence=10, on_silence="sigint"))
    out.append(Variant("e-lock-timeout-cuda-w2-rank", "e-lock-timeout", "E", "deadlock-timeout",
                       lock + ["--timeout", "5", "--device", "cuda"] + _w(2, "--progress", "tqdm-lines", "--every", "8"),
                       ("DataLoader timed out after 5 seconds",), rank=1, needs_cuda=True,
                       notes=lock_note + " The model trains on the GPU (CUDA initialised before the fork; the "
                                         "workers never touch it): a hang, not class D."))
    # a DistributedDataParallel job of two ranks (gloo, CPU) under torchrun, whose own
    # "[defaultN]:" / "[rankN]:" prefixes are in the log: only rank 1 starts the checkpoint
    # thread, so only rank 1's epoch-1 workers block, and rank 0 waits for it in the gradient
    # all-reduce (the field guide's hang of one rank that stalls the others)
    torchrun = TORCHRUN + ["--stall-rank", "1"]
    ddp_note = (lock_note + " Two ranks of a DistributedDataParallel job (gloo on the CPU) under "
                "torchrun; only rank 1 starts the checkpoint thread, so only its workers block, "
                "and rank 0 waits for it in the gradient all-reduce.")
    out.append(Variant("e-ddp-lock-timeout-gloo-w2", "e-ddp-lock", "E", "deadlock-timeout",
                       torchrun + ["--ddp-timeout", "120", "--timeout", "10"] + lock
                       + _w(2, "--progress", "plain", "--every", "4"),
                       ("DataLoader timed out after 10 seconds",), module="torch.distributed.run",
                       notes=ddp_note + " Rank 1's DataLoader has timeout=10 and raises; rank 0's all-reduce "
                                        "then fails as rank 1's connection closes.", timeout=180))
    out.append(Variant("e-ddp-lock-sigint-gloo-w2", "e-ddp-lock", "E", "hang",
                       torchrun + ["--ddp-timeout", "600"] + lock
                       + _w(2, "--progress", "plain", "--every", "4"),
                       ("KeyboardInterrupt",), module="torch.distributed.run", silence=12,
                       on_silence="sigint", timeout=180,
                       notes=ddp_note + " No timeouts hit: the harness interrupts torchrun, which "
                                        "passes SIGINT on to both ranks."))
    slow = ["--slow-init", "8", "--epochs", "3"]
    slow_note = ("worker_init_fn takes 8 s (building a file index) and persistent_workers=False, "
                 "so every epoch starts with a long silent stall: a slow epoch start, not a crash.")
    out.append(Variant("e-slow-start-timeout-w2", "e-slow-start", "E", "slow-start-timeout",
                       slow + ["--timeout", "5", *_w(2, "--progress", "tqdm-lines")],
                       ("DataLoader timed out after 5 seconds",),
                       notes=slow_note + " With timeout=5 it ends in the DataLoader's timeout "
                                         "error."))
    out.append(Variant("e-slow-start-hang-w2-slurm", "e-slow-start", "E", "slow-epoch-start",
                       ["--slow-init", "30", "--epochs", "3", *_w(2, "--progress", "tqdm-lines")],
                       TIME_LIMIT, silence=14, slurm=True,
                       notes=slow_note.replace("8 s", "30 s") + " The job hits its time limit "
                                                               "during a start-up stall."))
    return out


def class_f():
    """Workers that cannot start under spawn / forkserver: no main guard, an unpicklable collate_fn,
    a collate_fn the worker cannot import (defined in the main module only)."""
    guard_note = ("The training script has no `if __name__ == '__main__':` guard (corpus/gen/unguarded.py "
                  "runs it at import). Each spawned worker re-imports the main module, so it runs the "
                  "training again and tries to start workers of its own; CPython stops it with its "
                  "'bootstrapping phase' error and the main process reports the worker's exit.")
    pickle_note = ("The DataLoader's collate_fn is a lambda (--collate lambda). Under spawn the worker's "
                   "arguments are pickled; the lambda cannot be, w.start() raises in the main process and "
                   "torch warns about the pickle error first.")
    guard = [("w2-spawn", _w(2, "--start-method", "spawn", "--progress", "tqdm"), {}),
             ("w4-forkserver-slurm", _w(4, "--start-method", "forkserver", "--progress", "plain"),
              {"slurm": True})]
    out = [Variant(f"f-main-guard-{tag}", "f-main-guard", "F", "main-guard", args,
                   ("finished its bootstrapping phase",), notes=guard_note, module="corpus.gen.unguarded", **kw)
           for tag, args, kw in guard]
    pickling = [("w2-spawn", _w(2, "--start-method", "spawn", "--progress", "tqdm"), {}),
                ("w2-forkserver-rank", _w(2, "--start-method", "forkserver", "--progress", "lightning"),
                 {"rank": 0})]
    out += [Variant(f"f-pickling-lambda-{tag}", "f-pickling-lambda", "F", "pickling",
                    ["--collate", "lambda", *args],
                    ("Got pickle error when attempting to start a worker Process", "Can't pickle"),
                    notes=pickle_note, **kw) for tag, args, kw in pickling]
    module_note = ("The collate_fn is defined inside the `if __name__ == '__main__':` block of the script "
                   "(corpus/gen/notebook.py), as a notebook cell or `python -c` code defines it: in the parent "
                   "only. Each spawned worker re-imports the module without running that block and cannot "
                   "unpickle the function (CPython's \"Can't get attribute\"); the main process reports the "
                   "worker's exit.")
    main_module = [("w2-spawn", _w(2, "--start-method", "spawn", "--progress", "tqdm"), {}),
                   ("w4-spawn-slurm", _w(4, "--start-method", "spawn", "--progress", "plain"), {"slurm": True})]
    out += [Variant(f"f-main-module-{tag}", "f-main-module", "F", "main-module", args,
                    ("Can't get attribute",), notes=module_note, module="corpus.gen.notebook", **kw)
            for tag, args, kw in main_module]
    return out


def class_g():
    """The dataset code raises with num_workers=0: the main process loads the data itself, so the
    traceback runs through fetch.py with no 'Caught ... in DataLoader worker' wrapper and no worker
    is involved (class G, not one of A-E)."""
    out, shapes = [], getitem_shapes()
    for kind, (fault, plain_ev, _) in getitem_faults().items():
        for tag, args, kw in shapes[kind]:
            if tag.startswith("w0"):
                out.append(Variant(f"g-main-process-{kind}-{tag}", f"g-main-process-{kind}", "G", "main-process",
                                   ["--fault", fault, "--epochs", "2"] + args, (plain_ev,),
                                   notes="num_workers=0: the exception is raised in the main process, a plain "
                                         "traceback with no 'Caught ...' wrapper.", **kw))
    return out

def nearmisses():
    nm = [("healthy-config-w8", ["--num-workers", "8", "--print-config", "--epochs", "3",
                                  "--persistent-workers", "--progress", "tqdm-lines", "--every", "8"], {},
           "Healthy run; prints its DataLoader config; torch warns about 8 workers on 2 CPUs."),
          ("healthy-slurm-rank-pin", _w(4, "--pin-memory", "--persistent-workers", "--print-config",
                                       "--progress", "lightning"), {"slurm": True, "rank": 0},
           "Healthy run with pin_memory (torch warns no accelerator)."),
          ("healthy-long", [*long_plain(3000), *_w(2), "--epochs", "1"], {},
           "Healthy long run: thousands of progress lines."),
          ("healthy-filesystem-spawn", _w(2, "--sharing-strategy", "file_system", "--start-method",
                                          "spawn", "--print-config", "--progress", "tqdm"), {},
           "Healthy run with the file_system strategy and spawn."),
          ("healthy-timeout-set", _w(2, "--timeout", "30", "--print-config", "--progress", "plain",
                                     "--every", "8"), {}, "Healthy run with timeout=30 configured."),
          ("main-valueerror-w2", _w(2, "--main-error-step", "20", "--progress", "tqdm"), {},
           "ValueError raised by validation code in the main training loop, not in a worker."),
          ("main-valueerror-w0-slurm", _w(0, "--main-error-step", "40", "--progress",
                                          "tqdm-lines", "--every", "8"), {"slurm": True},
           "ValueError in the main loop with num_workers=0."),
          ("warnings-w2", _w(2, "--warnings", "--print-config", "--progress", "tqdm-lines",
                             "--every", "8"), {}, "Ends normally with UserWarnings."),
          ("skip-bad-samples-w2", _w(2, "--fault", "skip-bad", "--skip-bad", "--progress", "tqdm"), {},
           "A bad sample's KeyError is caught in the dataset wrapper, logged and skipped; the "
           "run finishes."),
          ("slow-start-completes-w2", _w(2, "--slow-init", "2", "--epochs", "3", "--progress",
                                         "tqdm-lines", "--every", "8"), {},
           "Slow worker start-up (2 s/epoch) that finishes normally."),
          ("lock-spawn-ok-w2", _w(2, "--fault", "lock", "--checkpoint-thread-epoch", "0",
                                  "--start-method", "spawn", "--epochs", "3", "--progress",
                                  "tqdm-lines", "--every", "8"), {},
           "The lock-at-fork setup with spawn: workers start with a fresh lock and the run "
           "finishes."),
          ("ddp-healthy-w2", TORCHRUN + _w(2, "--print-config", "--progress", "plain", "--every", "4"),
           {"module": "torch.distributed.run"},
           "Healthy two-rank DistributedDataParallel run (gloo, CPU) under torchrun, with its "
           "OMP_NUM_THREADS banner and both ranks' prefixed lines."),
          ("ddp-main-valueerror-w2", TORCHRUN + _w(2, "--main-error-step", "20", "--progress", "plain",
                                                  "--every", "4"),
           {"module": "torch.distributed.run"},
           "Both ranks of a DistributedDataParallel run under torchrun raise a ValueError in their "
           "validation code in the main loop; torchrun reports the failed ranks (ChildFailedError). "
           "No worker is involved.")]
    # on a GPU: CUDA used in workers the right way, and a plain GPU run (skipped where no GPU)
    gpu = [("cuda-spawn-ok-w2", ["--fault", "cuda", "--device", "cuda", *_w(2, "--start-method", "spawn",
                                 "--print-config", "--progress", "tqdm")], {},
            "__getitem__ calls .to('cuda') as in d-cuda-in-worker, but the workers are spawned: each "
            "starts its own CUDA context and the run finishes."),
           ("cuda-healthy-pin-w4", ["--device", "cuda", *_w(4, "--pin-memory", "--persistent-workers",
                                    "--print-config", "--progress", "lightning")], {"rank": 0},
            "Healthy training on the GPU with pin_memory and four forked workers that never touch CUDA."),
           ("cuda-oom-main-w4", ["--device", "cuda", "--gpu-oom-step", "12",
                                 *_w(4, "--print-config", "--progress", "tqdm-lines", "--every", "4")], {},
            "CUDA out of memory on the GPU in the main process's forward pass (a feature map of 256 GiB "
            "at step 12) while four forked workers load batches: GPU memory, not a DataLoader worker failure."),
           ("lightning-gpu-healthy-w2", ["--num-workers", "2"], {"module": "corpus.gen.lightning_run"},
            "Healthy PyTorch Lightning training on the GPU (corpus/gen/lightning_run.py), two forked workers "
            "that never touch CUDA.")]
    return [Variant(f"nearmiss-{tag}", f"nearmiss-{tag.rsplit('-w', 1)[0]}", "none", None, args,
                    kind="nearmiss", notes=note, needs_cuda=needs_cuda, **kw)
            for entries, needs_cuda in ((nm, False), (gpu, True)) for tag, args, kw, note in entries]


def all_variants():
    return class_a() + class_b() + class_c() + class_d() + class_e() + class_f() + class_g() + nearmisses()
