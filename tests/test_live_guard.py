"""The guard on real DataLoaders: transparent when healthy, diagnoses a failure, names a stall."""
from __future__ import annotations

import io
import signal
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("psutil")

from torch.utils.data import DataLoader  # noqa: E402

import dllogscan  # noqa: E402
from tests import live_datasets as ds  # noqa: E402
from tests.live_helpers import scanner  # noqa: E402


def test_healthy_loader_passes_through_unchanged():
    loader = DataLoader(ds.Squares(n=8), batch_size=2, num_workers=1)
    out = io.StringIO()
    with dllogscan.guard(loader, stall_after=30, out=out, scanner=scanner()) as batches:
        got = [b[:, 0].tolist() for b in batches]
    assert got == [[0.0, 1.0], [4.0, 9.0], [16.0, 25.0], [36.0, 49.0]]
    assert out.getvalue() == ""
    assert [b.shape for b in dllogscan.guarded(DataLoader(ds.Squares(n=4), batch_size=2))] == [(2, 64)] * 2


def test_worker_killed_is_diagnosed_with_live_facts_and_reraised():
    loader = DataLoader(ds.SelfKill(signal.SIGKILL), batch_size=2, num_workers=1)
    out = io.StringIO()
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        with dllogscan.guard(loader, stall_after=30, out=out, scanner=scanner()) as g:
            for _ in g:
                pass
    text = out.getvalue()
    assert g.failure.diagnoses[0].cls == "B" and g.failure.diagnoses[0].subclass.startswith("oom")
    assert "killed by signal: Killed" in text
    assert "/dev/shm now:" in text and "worker pid" in text


def test_stall_dumps_worker_stacks_and_names_the_lock():
    dataset = ds.locked_at_fork()
    loader = DataLoader(dataset, batch_size=2, num_workers=1, timeout=6)
    out = io.StringIO()
    with pytest.raises(RuntimeError, match="timed out"):
        with dllogscan.guard(loader, stall_after=2, out=out, scanner=scanner(), check_every=0.2) as g:
            for _ in g:
                pass
    assert g.stalls, out.getvalue()
    cause = next(iter(g.stalls[0]["causes"].values()))
    assert cause and "lock acquire" in cause[0] and "with _LOCK:" in cause[2]
    assert "no batch for" in out.getvalue() and "class E" in out.getvalue()


def test_time_the_loop_spends_on_its_batches_is_no_stall():
    """Before: a training step (or an evaluation after the epoch, inside the guard) longer than
    stall_after was reported as 'no batch for N s (class E, stall)', the idle worker 'stuck in a
    queue get ... waits for data that never comes'."""
    loader = DataLoader(ds.Squares(n=4), batch_size=2, num_workers=1)
    out = io.StringIO()
    with dllogscan.guard(loader, stall_after=5, out=out, scanner=scanner(), check_every=0.2) as g:
        for _ in g:
            time.sleep(6)  # a slow step: the loader waits on the loop, not the loop on the loader
        time.sleep(6)  # after the epoch
    assert g.stalls == [] and out.getvalue() == ""


def test_the_guard_leaves_no_folder_and_gives_the_loader_back():
    """Before: every guard left /tmp/dllogscan-guard-XXXX (with a stack-PID.txt per worker) and its
    dumper on the loader, so a guard per epoch wrapped the last one's: its stall report read the
    folder the inner dumper did not write to."""
    import os

    def init(worker_id):
        pass

    loader = DataLoader(ds.Squares(n=4), batch_size=2, num_workers=1, worker_init_fn=init)
    folders = []
    for _epoch in range(2):
        with dllogscan.guard(loader, stall_after=30, out=io.StringIO(), scanner=scanner()) as g:
            assert loader.worker_init_fn.inner is init  # not the last epoch's dumper
            assert len(list(g)) == 2
            folders.append(g.folder)
            assert os.listdir(g.folder)  # the worker's stack file, while guarded
        assert loader.worker_init_fn is init
    assert not any(os.path.exists(f) for f in folders)
