"""A source that kills its batch worker (the OOM killer) is an error row and the batch goes on, on
the engines whose workers are spawned (``ProcessPoolExecutor`` where there is no fork: Windows)
or Dask's; the forked local pool's case is in test_forkpool.py. Before: ``BrokenProcessPool`` or
Dask's ``KilledWorker`` ended the batch, the rows not yet written lost."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dllogscan.batch.engines import DASK_DIED, EXECUTOR_DIED
from tests.conftest import FIXTURES

ROOT = FIXTURES.parent.parent


@pytest.mark.timeout(240)
@pytest.mark.parametrize("engine, reason", [("executor", EXECUTOR_DIED), ("dask", DASK_DIED)], ids=["executor", "dask"])
def test_a_source_that_kills_its_worker_is_an_error_row_and_the_batch_goes_on(tmp_path, engine, reason):
    if engine == "dask":
        pytest.importorskip("dask.distributed")
    names = [f"{i:02d}.log" for i in range(12)] + ["oom.log"]
    for name in names:
        (tmp_path / name).write_text("epoch 1 step 1 loss 0.5\n")
    proc = subprocess.run([sys.executable, "-m", "tests.killed_workers", engine, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=220)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(proc.stdout.splitlines()[-1])
    assert sorted(name for name, _ in rows) == sorted(names)  # one row each, none lost, none twice
    errors = dict(rows)
    assert errors.pop("oom.log") == f"{tmp_path / 'oom.log'}: {reason}"
    assert set(errors.values()) == {None}
