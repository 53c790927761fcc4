"""A batch whose workers are killed, as by the OOM killer, on the engines whose workers are other
processes than the test's (spawned ``ProcessPoolExecutor``, Dask): run as
``python -m tests.killed_workers executor|dask DIR`` so that what those engines start (a
multiprocessing resource tracker, Dask's nannies) ends with this process, not the test run's.
Prints one JSON object: each source's base name and its error (null when it was scanned)."""
from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path


def chunk_killing_oom_log(paths: list[str], config):
    """A batch task (``worker.process_chunk``) whose process is SIGKILLed when its chunk holds a
    file named ``oom.log``."""
    from dllogscan.batch.worker import process_chunk

    if any(p.endswith("oom.log") for p in paths):
        os.kill(os.getpid(), signal.SIGKILL)
    return process_chunk(paths, config)


def main(engine: str, folder: str) -> None:
    from dllogscan.batch import engines
    from dllogscan.batch.worker import Config

    names = sorted(p.name for p in Path(folder).iterdir())
    chunks = [[os.path.join(folder, n) for n in names[i:i + 5]] for i in range(0, len(names), 5)]
    if engine == "executor":
        engines.process_chunk = chunk_killing_oom_log  # what _tasks hands the pool
        records = list(engines._executor_pool(iter(chunks), Config(), 2))
    else:
        from dask.distributed import LocalCluster

        # Dask's own retries (allowed-failures, 3) stay as they are: a worker's death counts
        # against every task queued on it, so with fewer, innocent tasks give up too
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=50) as cluster:
            records = list(engines.run_dask(iter(chunks), Config(), 2, cluster.scheduler_address,
                                            chunk_killing_oom_log))
    print(json.dumps([[os.path.basename(r.result.source), r.result.error] for r in records]))


if __name__ == "__main__":
    main(*sys.argv[1:3])
