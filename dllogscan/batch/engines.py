"""Run chunks of work and yield records as they finish: in this process, on a local process
pool (the default), or on a Dask cluster. Each keeps only a few chunks in flight, so the path
walk stays lazy and memory bounded however many sources there are."""
from __future__ import annotations

import itertools
import os
from types import SimpleNamespace
from typing import Callable, Iterable, Iterator

from ..core.errors import UsageError
from .archives import archive_kind
from .worker import Config, Record, error_record, iter_chunk, process_chunk, warm

ENGINES = ("local", "dask")
#: the error of a source whose spawned worker (no fork: Windows) died running it alone
EXECUTOR_DIED = "its batch worker process ended before it finished (killed: out of memory?)"
#: the error of a source whose Dask workers died running it, every time Dask tried (KilledWorker)
DASK_DIED = "its Dask worker processes ended before it finished, each time it was tried (killed: out of memory?)"
#: seconds a ``--scheduler`` has to answer, connecting and in its handshake; the environment
#: variable ``SCHEDULER_TIMEOUT_ENV`` gives another (a scheduler across a slow tunnel)
SCHEDULER_TIMEOUT = 5.0
SCHEDULER_TIMEOUT_ENV = "DLLOGSCAN_SCHEDULER_TIMEOUT"


#: ``--jobs`` is held at this many worker processes per usable core: scanning is CPU work, and
#: past a few per core (a slow shared file system) more only cost memory, forks and descriptors
JOBS_PER_CORE = 4


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def jobs_ceiling() -> int:
    """The most worker processes a local batch runs, whatever ``--jobs`` asks."""
    return JOBS_PER_CORE * default_jobs()


def run_inline(chunks: Iterable[list[str]], config: Config) -> Iterator[Record]:
    for chunk in chunks:
        yield from iter_chunk(chunk, config)


def _tasks(chunks: Iterable[list[str]], config: Config) -> Iterator[Record | tuple]:
    """Pool tasks, ``(function, argument)``: a chunk of files, or a batch of one archive's
    members read here (``members.py``); records made here come as they are."""
    from .members import batches, scan_shipped

    for chunk in chunks:
        if len(chunk) == 1 and archive_kind(chunk[0]) and os.path.isfile(chunk[0]):
            for item in batches(chunk[0], config):
                yield item if isinstance(item, Record) else (scan_shipped, item)
        else:
            yield process_chunk, chunk


def run_pool(chunks: Iterable[list[str]], config: Config, jobs: int) -> Iterator[Record]:
    """A local process pool with at most ``2 * jobs`` tasks in flight: forked workers and pipes
    (``forkpool.py``) where the system can fork, else ``ProcessPoolExecutor``."""
    warm(config)
    if not hasattr(os, "fork"):
        yield from _executor_pool(chunks, config, jobs)
        return
    from . import forkpool

    for item in forkpool.run(_tasks(chunks, config), config, jobs, lambda task: isinstance(task, tuple), _lost):
        if isinstance(item, Record):
            yield item
        else:
            yield from item


def _lost(task: tuple, died: object) -> list[Record | tuple]:
    """What takes the place of a task whose worker died (killed: out of memory?): each of its
    sources again as a task of its own, so that only a source that kills its worker again is
    lost; a task of one source, a row saying why it has no result."""
    function, sources = task
    if len(sources) > 1:
        return [(function, [one]) for one in sources]
    reason = getattr(died, "reason", str(died))
    return [error_record(s, None, reason) if isinstance(s, str) else error_record(s.path, s.name, reason)
            for s in sources]


def _rows_or_retries(task: tuple, reason: str) -> tuple[list[Record], list[tuple]]:
    """``_lost`` for the engines that keep their own queue: the rows of a task whose worker died
    (``reason`` in each), and the tasks to try again, in their order."""
    rows: list[Record] = []
    again: list[tuple] = []
    for item in _lost(task, SimpleNamespace(reason=reason)):
        (rows if isinstance(item, Record) else again).append(item)  # type: ignore[arg-type]
    return rows, again


def _executor_pool(chunks: Iterable[list[str]], config: Config, jobs: int) -> Iterator[Record]:
    """``ProcessPoolExecutor`` (spawned workers), where ``os.fork`` is missing. A worker that dies
    breaks the whole pool: a fresh one takes its place, and the tasks that were in flight are run
    again one at a time, so that the one that kills its worker is known (``_lost`` then splits it
    source by source) and none of the others is lost."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    def fresh() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"))

    pool = fresh()
    todo = _tasks(chunks, config)
    suspects: list[tuple] = []  # in flight when a worker died: each is run alone
    running: dict = {}  # future -> (task, whether it runs alone)
    try:
        while True:
            alone = bool(suspects) or any(solo for _, solo in running.values())
            while len(running) < (1 if alone else 2 * jobs):
                task = suspects.pop(0) if suspects else next(todo, None)
                if task is None:
                    break
                if isinstance(task, Record):
                    yield task
                    continue
                running[pool.submit(task[0], task[1], config)] = (task, alone)
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            broken = []
            for fut in done:
                task, solo = running.pop(fut)
                try:
                    records = fut.result()
                except BrokenProcessPool:
                    broken.append((task, solo))
                    continue
                yield from records
            if broken:
                broken += running.values()  # the pool is gone: what still ran is lost with it
                running.clear()
                pool.shutdown(wait=False, cancel_futures=True)
                pool = fresh()
                if len(broken) == 1 and broken[0][1]:  # it ran alone: it killed its worker
                    rows, again = _rows_or_retries(broken[0][0], EXECUTOR_DIED)
                    yield from rows
                    suspects[:0] = again
                else:
                    suspects.extend(task for task, _ in broken)
    finally:
        for fut in running:
            fut.cancel()
        pool.shutdown(wait=not running, cancel_futures=True)  # stopped early: do not wait for the workers


def run_dask(chunks: Iterable[list[str]], config: Config, jobs: int, scheduler: str | None,
             function: Callable[[list[str], Config], list[Record]] = process_chunk) -> Iterator[Record]:
    """A Dask ``distributed`` cluster: ``scheduler`` (tcp://HOST:PORT) or a LocalCluster of at
    most ``jobs`` single-threaded worker processes, no more than the chunks found first. A chunk
    whose workers Dask gave up on (they died
    running it: ``KilledWorker``) is tried again source by source, as the local pool does
    (``_lost``), and a source alone given up on is tried once more: a worker's death counts against
    every task queued on it, so an innocent source queued beside one that kills its workers may be
    given up on once. Only a source given up on twice becomes an error row."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError:
        raise UsageError("--engine dask needs the dask extra: pip install 'dllogscan[dask]'") from None
    cluster = None
    todo = iter(chunks)
    if scheduler:
        client = _connect(Client, scheduler)
    else:  # no more workers than the chunks a first look finds (one chunk holds 128 files)
        first = _take(todo, jobs)
        todo = itertools.chain(first, todo)
        cluster = _local_cluster(LocalCluster, max(1, len(first)))
        client = Client(cluster)
    chunk_of: dict[str, list[str]] = {}
    given_up_once: set[str] = set()  # sources alone that Dask gave up on once

    def submit(chunk: list[str]):
        fut = client.submit(function, chunk, config, pure=False)
        chunk_of[fut.key] = chunk
        return fut

    try:
        limit = 2 * max(1, sum(client.nthreads().values()))
        queue = as_completed([submit(c) for c in _take(todo, limit)])
        for fut in queue:
            chunk = chunk_of.pop(fut.key)
            try:
                records = fut.result()
            except KilledWorker:
                if len(chunk) == 1 and chunk[0] not in given_up_once:
                    given_up_once.add(chunk[0])
                    records, again = [], [(function, chunk)]
                else:
                    records, again = _rows_or_retries((function, chunk), DASK_DIED)
                for _, sources in again:
                    queue.add(submit(sources))
            yield from records
            fut.release()
            for c in _take(todo, 1):
                queue.add(submit(c))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _local_cluster(factory: Callable, jobs: int):
    """A LocalCluster of ``jobs`` single-threaded worker processes, started with SIGINT ignored
    (a disposition that a spawned worker keeps, unlike a blocked mask), so a Ctrl-C at the
    terminal, which reaches the whole process group, ends the batch here alone (one
    "interrupted") and not in a traceback from each worker. SIGINT is also blocked meanwhile:
    a Ctrl-C during the start stays pending (Linux keeps a blocked signal even while it is
    ignored) and arrives once the cluster is up and the handler is back."""
    import signal
    import threading

    def start():
        return factory(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None,
                       silence_logs=40)

    if threading.current_thread() is not threading.main_thread():  # signal.signal: main thread only
        return start()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return start()
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def scheduler_timeout() -> float:
    """Seconds a ``--scheduler`` has to answer: ``DLLOGSCAN_SCHEDULER_TIMEOUT``, else
    ``SCHEDULER_TIMEOUT``; a value that is not a number of seconds above 0 is a ``UsageError``."""
    text = os.environ.get(SCHEDULER_TIMEOUT_ENV, "").strip()
    if not text:
        return SCHEDULER_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise UsageError(f"{SCHEDULER_TIMEOUT_ENV}={text[:40]}: give the seconds a --scheduler has to answer, "
                         "a number above 0")
    return seconds


def _connect(client: type, scheduler: str):
    """A Dask client of ``scheduler``; an address Dask cannot read (``foo://x``, no port), one where
    no scheduler answers within ``scheduler_timeout()`` (connecting or in its handshake, which
    Dask itself does not bound: a port that accepts and says nothing held a batch until the peer
    closed), and one where something else answers are each a one-line ``UsageError``."""
    seconds = scheduler_timeout()

    class Bounded(client):  # type: ignore[misc,valid-type]
        def start(self, **kwargs):  # the whole start, handshake included, within the timeout
            return super().start(callback_timeout=seconds, **kwargs)

    name = f"--scheduler {scheduler}"
    try:
        return Bounded(scheduler, timeout=seconds)
    except ValueError as exc:
        raise UsageError(f"{name}: not a Dask scheduler address ({exc}); give tcp://HOST:PORT") from None
    except OSError as exc:
        # a timeout: the start's (a silent peer), or Dask's own connect, which retries a refused port
        if not isinstance(exc, TimeoutError) and not str(exc).startswith("Timed out"):  # closed, reset
            raise UsageError(f"{name}: the connection failed: {_first_line(exc)}") from None
        raise UsageError(f"{name}: no Dask scheduler answered within {seconds:g} s; "
                         f"{SCHEDULER_TIMEOUT_ENV}=SECONDS waits longer") from None
    except Exception as exc:  # noqa: BLE001 - a reply that is not Dask's (an HTTP server, a proxy)
        raise UsageError(f"{name}: what answers there is not a Dask scheduler ({_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _take(it: Iterator[list[str]], n: int) -> list[list[str]]:
    out = []
    for _ in range(n):
        item = next(it, None)
        if item is None:
            break
        out.append(item)
    return out


def run(chunks: Iterable[list[str]], config: Config, engine: str = "local", jobs: int | None = None,
        scheduler: str | None = None) -> Iterator[Record]:
    """Records of every chunk, in the order they finish; ``jobs`` (default: the usable cores) is
    held at ``jobs_ceiling()``, and a local pool forks its workers as chunks need them."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if scheduler is not None and not scheduler.strip():  # "$SCHED" unset: not the local engine unasked
        raise UsageError("--scheduler is empty (an unset shell variable?): give tcp://HOST:PORT")
    if scheduler and engine != "dask":
        engine = "dask"
    jobs = min(jobs or default_jobs(), jobs_ceiling())
    if engine == "dask":
        return run_dask(chunks, config, jobs, scheduler)
    if jobs <= 1:
        return run_inline(chunks, config)
    return run_pool(chunks, config, jobs)
