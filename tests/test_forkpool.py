"""The forked worker pool (``batch/forkpool.py``): answers in any size both ways, errors carried
back, a worker that dies is one error line, and no worker outlives the batch."""
from __future__ import annotations

import os
import signal

import pytest

from dllogscan.batch import engines, forkpool

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks")


def echo(argument, config):
    return [(config, argument)]


def big(argument, config):
    index, payload = argument
    return [bytes([index]) * len(payload)]


def fails(argument, config):
    raise ValueError(f"task {argument} failed")


def dies(argument, config):
    os.kill(os.getpid(), signal.SIGKILL)


def pids(argument, config):
    return [os.getpid()]


def is_task(item):
    return isinstance(item, tuple)


def no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_every_task_is_answered_and_other_items_pass_at_once():
    items = [(echo, i) if i % 3 else f"record {i}" for i in range(40)]
    out = list(forkpool.run(iter(items), "cfg", 2, is_task))
    answers = sorted(x[0] for x in out if isinstance(x, list))
    assert answers == [("cfg", i) for i in range(40) if i % 3]
    assert [x for x in out if isinstance(x, str)] == [f"record {i}" for i in range(0, 40, 3)]
    assert no_children_left()


def test_megabytes_both_ways_do_not_block_either_side():
    """A task of 3 MB (an archive's members) is written while the worker writes a 3 MB answer."""
    items = [(big, (i, bytes(3 << 20))) for i in range(8)] + [(echo, b"x" * (3 << 20))] * 4
    out = list(forkpool.run(iter(items), None, 2, is_task))
    assert sorted(len(x[0]) if isinstance(x[0], bytes) else len(x[0][1]) for x in out) == [3 << 20] * 12


def test_the_work_is_shared_by_the_workers():
    out = list(forkpool.run(iter([(pids, i) for i in range(30)]), None, 2, is_task))
    assert len({x[0] for x in out}) == 2 and os.getpid() not in {x[0] for x in out}


def test_an_error_in_a_task_is_raised_here_and_the_workers_end():
    with pytest.raises(ValueError, match="task 5 failed"):
        list(forkpool.run(iter([(echo, 1), (fails, 5), (echo, 2)]), None, 2, is_task))
    assert no_children_left()


def test_a_worker_that_dies_is_one_clear_error():
    with pytest.raises(forkpool.WorkerDied, match=r"ended before it finished its task \(killed by signal 9"):
        list(forkpool.run(iter([(echo, 1), (dies, 2)] + [(echo, i) for i in range(10)]), None, 2, is_task))
    assert no_children_left()


def test_a_batch_stopped_early_ends_its_workers():
    run = forkpool.run(iter([(echo, i) for i in range(100)]), None, 2, is_task)
    next(run)
    run.close()
    assert no_children_left()


def test_the_command_line_says_a_worker_died_in_one_line(tmp_path, monkeypatch, capsys):
    from dllogscan.cli.batch_run import run

    for i in range(4):
        (tmp_path / f"{i}.log").write_text("step 1\n")
    monkeypatch.setattr(engines, "process_chunk", dies)
    code = run([str(tmp_path)], out=tmp_path / "rows.jsonl", jobs=2, progress=False)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("Error: a batch worker process (pid ") and len(err.splitlines()) == 1
    assert "killed by signal 9" in err and no_children_left()
