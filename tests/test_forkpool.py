"""The forked worker pool (``batch/forkpool.py``): answers in any size both ways, errors carried
back, a worker that dies is replaced and its task's sources become rows (or, without a way to
make them rows, one error line), and no worker outlives the batch."""
from __future__ import annotations

import os
import signal

import pytest

from dllogscan.batch import engines, forkpool
from tests.conftest import process_group

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


#: Ctrl-C handled as in a terminal's foreground job, whatever this run inherited (a shell starts
#: a background job, e.g. `bash .ci/run &`, with SIGINT ignored, and Python then keeps it so)
FOREGROUND = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def sigint_state(argument, config):
    """In a worker: (SIGINT ignored, SIGINT blocked)."""
    return [(signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
             signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))]


def is_task(item):
    return isinstance(item, tuple)


def no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_workers_ignore_ctrl_c_and_the_gathering_process_gets_it_again():
    """SIGINT is blocked only while the workers are forked: each worker ignores it and no longer
    blocks it, and the gathering process blocks it no more once the workers are started."""
    handler = signal.getsignal(signal.SIGINT)
    out = list(forkpool.run(iter([(sigint_state, i) for i in range(4)]), None, 2, is_task))
    assert out == [[(True, False)]] * 4
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.getsignal(signal.SIGINT) is handler and no_children_left()


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


def lost_as_text(task, died):
    return [f"lost {task[1]}: {died.reason}"]


def test_a_dead_workers_task_goes_to_lost_and_a_fresh_worker_runs_the_rest():
    """Before: the first death stopped the batch (WorkerDied), every task after it unanswered."""
    items = [(echo, 0), (dies, 1)] + [(echo, i) for i in range(2, 30)]
    out = list(forkpool.run(iter(items), None, 2, is_task, lost_as_text))
    assert sorted(x[0][1] for x in out if isinstance(x, list)) == [0] + list(range(2, 30))
    assert [x for x in out if isinstance(x, str)] == [
        "lost 1: its batch worker process ended before it finished (killed by signal 9: out of memory?)"]
    assert no_children_left()


def test_lost_may_give_tasks_to_try_again():
    def split(task, died):
        return [(echo, f"again {task[1]}")]

    out = list(forkpool.run(iter([(dies, 1), (echo, 2)]), None, 2, is_task, split))
    assert sorted(str(x[0][1]) for x in out) == ["2", "again 1"] and no_children_left()


def test_workers_stop_being_replaced_after_the_budget_and_no_task_is_dropped():
    out = list(forkpool.run(iter([(dies, i) for i in range(12)]), None, 2, is_task, lost_as_text, respawns=3))
    assert sorted(int(x.split(":")[0].split()[1]) for x in out) == list(range(12))
    assert sum("killed by signal 9" in x for x in out) == 5  # 2 workers + 3 fresh ones died
    assert all("no more were started" in x for x in out if "killed by signal 9" not in x)
    assert no_children_left()


def dies_once(argument, config):
    """SIGKILL the first worker that runs it (a marker file says it happened), as an OOM killer
    that picks a worker once would."""
    marker = config
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return list(argument)
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_task_killed_once_is_answered_by_a_fresh_worker(tmp_path):
    from dllogscan.batch.engines import _lost

    marker = str(tmp_path / "killed")
    out = list(forkpool.run(iter([(dies_once, [f"{i}.log" for i in range(5)])]), marker, 2, is_task, _lost))
    assert sorted(x for chunk in out for x in chunk) == [f"{i}.log" for i in range(5)]
    assert os.path.exists(marker) and no_children_left()


def _batch(tmp_path, names, monkeypatch=None):
    from dllogscan.cli.batch_run import run

    logs = tmp_path / "logs"
    logs.mkdir()
    for name in names:
        text = "RuntimeError: DataLoader worker (pid 12) is killed by signal: Killed.\n" if "fail" in name else "step 1\n"
        (logs / name).write_text(text)
    code = run([str(logs)], out=tmp_path / "rows.jsonl", jobs=2, progress=False)
    import json

    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    return code, {os.path.basename(r["source"]): r for r in rows}


def test_a_source_that_kills_its_worker_is_an_error_row_and_the_batch_goes_on(tmp_path, monkeypatch, capsys):
    """Before: exit 2, "Error: a batch worker process (pid ...) ended ...", the rows of the dead
    worker's chunk and of every chunk after it missing. Now the chunk is tried again source by
    source: the one that kills its worker again is an error row, every other source is scanned."""
    from dllogscan.batch import worker

    scan = worker._file

    def oom(path, config):
        if path.endswith("oom.log"):
            os.kill(os.getpid(), signal.SIGKILL)
        return scan(path, config)

    monkeypatch.setattr(worker, "_file", oom)
    names = [f"{i:03d}.log" for i in range(300)] + ["oom.log", "z-fail.log"]
    code, rows = _batch(tmp_path, names)
    assert sorted(rows) == sorted(names) and capsys.readouterr().err.count("Error") == 0
    assert rows["oom.log"]["status"] == "error"
    assert rows["oom.log"]["error"].endswith(
        "oom.log: its batch worker process ended before it finished (killed by signal 9: out of memory?)")
    assert {r["status"] for n, r in rows.items() if n != "oom.log"} == {"ok"}
    assert rows["z-fail.log"]["diagnoses"] and code == 1  # failures found (README's exit codes)
    assert no_children_left()


def test_when_every_worker_dies_every_source_is_an_error_row(tmp_path, monkeypatch):
    """Exit 3: nothing found, part of the input not read (README's exit codes), never a lost row."""
    monkeypatch.setattr(engines, "process_chunk", dies)
    code, rows = _batch(tmp_path, [f"{i}.log" for i in range(4)])
    assert code == 3 and sorted(rows) == [f"{i}.log" for i in range(4)]
    assert all(r["status"] == "error" and "killed by signal 9" in r["error"] for r in rows.values())
    assert no_children_left()


def test_ctrl_c_ends_the_batch_with_one_line_and_no_worker_left(tmp_path):
    """Ctrl-C reaches the whole process group: the workers ignore it, the gathering process says
    "interrupted" (exit 130) and ends them; no traceback from anyone."""
    import subprocess
    import time

    for i in range(8):
        (tmp_path / f"{i}.log").write_text("step 1\n")
    code = (
        FOREGROUND +
        "import sys, time\n"
        "from dllogscan.batch import engines\n"
        "def slow(paths, config):\n"
        "    print('started', flush=True)\n"
        "    time.sleep(60)\n"
        "engines.process_chunk = slow\n"
        "from dllogscan.cli.fast import main\n"
        "main(['batch', sys.argv[1], '--jobs', '2', '--out', sys.argv[2], '--no-progress'])\n")
    proc = process_group(code, tmp_path, tmp_path / "rows.jsonl")
    assert proc.stdout.readline() == "started\n"
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == "Error: interrupted\n", err
    assert subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True).stdout == b""


def test_an_interrupt_while_a_row_is_written_ends_the_workers_at_once(tmp_path):
    """Ctrl-C while the gathering process writes a row (outside the pool's own loop): the batch
    ends with the interrupt at once and no worker left (the one on its slow chunk would
    otherwise hold the terminal's pipe for a minute)."""
    import subprocess
    import time

    for name in ("a-quick.log", "b-slow.log"):
        (tmp_path / name).write_text("step 1\n")
    code = (
        FOREGROUND +
        "import sys, time\n"
        "from dllogscan.batch import engines, runner, walk\n"
        "from dllogscan.batch.worker import Config\n"
        "walk.chunks.__defaults__ = (1, walk.CHUNK_BYTES)  # a chunk per file\n"
        "quick = engines.process_chunk\n"
        "def chunk(paths, config):\n"
        "    if 'slow' in paths[0]:\n"
        "        time.sleep(60)\n"
        "    return quick(paths, config)\n"
        "engines.process_chunk = chunk\n"
        "def sink(rec):\n"
        "    raise KeyboardInterrupt\n"
        "try:\n"
        "    runner.run_batch([sys.argv[1]], sink, Config(), jobs=2, progress=False)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(130)\n")
    start = time.monotonic()
    proc = process_group(code, tmp_path)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None else None
    assert proc.returncode == 130 and out == "interrupted\n", err
    assert time.monotonic() - start < 20
    assert subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True).stdout == b""


def test_workers_are_forked_as_tasks_need_them_never_more_than_jobs(monkeypatch):
    """``jobs`` is a ceiling: three tasks fork three workers at most, however many jobs are
    allowed. Before, every one of ``jobs`` was forked first (``batch --jobs 600`` over 23 files:
    600 processes, 5 s)."""
    real, forks = os.fork, []

    def counted():
        pid = real()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    out = list(forkpool.run(iter([(pids, i) for i in range(3)]), None, 50, is_task))
    assert len(out) == 3 and 1 <= len(forks) <= 3 and no_children_left()
    forks.clear()
    out = list(forkpool.run(iter([(pids, i) for i in range(40)]), None, 2, is_task))
    assert len(out) == 40 and len(forks) == 2 and len({x[0] for x in out}) == 2


def test_a_sigterm_to_the_group_while_a_worker_forks_never_runs_the_callers_code_in_it(tmp_path):
    """``timeout`` and Slurm's ``scancel`` send SIGTERM to the whole process group, which the
    batch turns into KeyboardInterrupt. A worker that got it between its fork and its own
    SIGTERM disposition raised that KeyboardInterrupt in the caller's code (before: the child
    went on to finish the caller's output a second time and said "interrupted"). SIGTERM is now
    blocked across the fork: such a worker ends by it, and its task goes to ``lost``."""
    import subprocess
    import sys

    code = (
        "import os, signal, sys\n"
        "from dllogscan.batch import forkpool\n"
        "from dllogscan.cli.output import sigterm_as_ctrl_c\n"
        "real, parent = os.fork, os.getpid()\n"
        "def fork():\n"
        "    pid = real()\n"
        "    if pid == 0:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)  # the group's signal, just after the fork\n"
        "    return pid\n"
        "os.fork = fork\n"
        "def echo(argument, config):\n"
        "    return [argument]\n"
        "def lost(task, died):\n"
        "    return [f'lost {task[1]}: {died.reason}']\n"
        "try:\n"
        "    with sigterm_as_ctrl_c():\n"
        "        for item in forkpool.run(iter([(echo, i) for i in range(3)]), None, 2,\n"
        "                                 lambda t: isinstance(t, tuple), lost, respawns=1):\n"
        "            print(item, flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted in', 'the caller' if os.getpid() == parent else 'a worker', flush=True)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "interrupted in" not in proc.stdout, proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == [f"lost {i}: its batch worker process ended before it finished "
                                                "(killed by signal 15: out of memory?)" for i in range(3)]


def test_sigterm_to_the_process_group_ends_a_forked_batch_with_the_rows_done(tmp_path):
    """``timeout``/``scancel`` signal the workers too: the batch still ends with exit 130, the
    output holds the rows finished (as many as stderr says) and no row of a worker it killed."""
    import json
    import time

    for name in ("a-quick.log", "b-quick.log", "c-slow.log"):
        (tmp_path / name).write_text("RuntimeError: DataLoader worker (pid 12) is killed by signal: Killed.\n")
    out = tmp_path / "rows.jsonl"
    code = (
        "import sys, time\n"
        "from dllogscan.batch import engines, walk\n"
        "walk.chunks.__defaults__ = (1, walk.CHUNK_BYTES)  # a chunk per file\n"
        "quick = engines.process_chunk\n"
        "def chunk(paths, config):\n"
        "    if 'slow' in paths[0]:\n"
        "        print('started', flush=True)\n"
        "        time.sleep(60)\n"
        "    return quick(paths, config)\n"
        "engines.process_chunk = chunk\n"
        "from dllogscan.cli.fast import main\n"
        "main(['batch', sys.argv[1], '--jobs', '3', '--out', sys.argv[2], '--no-progress'])\n")
    proc = process_group(code, tmp_path, out)
    try:
        assert proc.stdout.readline() == "started\n"
        deadline = time.monotonic() + 30
        while (not out.exists() or out.read_text().count("\n") < 2) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None else None
    assert proc.returncode == 130, err
    assert err == f"partial: {out} holds the 2 rows finished before it stopped\nError: interrupted\n", err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(os.path.basename(r["source"]) for r in rows) == ["a-quick.log", "b-quick.log"]
    assert all(r["error"] is None and r["diagnoses"] for r in rows)


def test_jobs_past_four_a_core_are_held_there(monkeypatch):
    """``--jobs 600`` on a machine of two usable cores runs 8 workers at most."""
    seen = []
    monkeypatch.setattr(engines, "default_jobs", lambda: 2)
    monkeypatch.setattr(forkpool, "run", lambda tasks, config, jobs, *rest: seen.append(jobs) or iter(()))
    monkeypatch.setattr(engines, "warm", lambda config: None)
    for asked, runs in ((600, 8), (8, 8), (3, 3), (None, 2)):
        list(engines.run(iter([["a.log"]]), None, "local", asked))
    assert seen == [8, 8, 3, 2]


def test_a_local_dask_cluster_has_no_more_workers_than_the_chunks_found_first(monkeypatch):
    """Before: ``--engine dask --jobs 600`` over one chunk started 600 worker processes."""
    pytest.importorskip("dask.distributed")

    class Started(Exception):
        pass

    def cluster(factory, jobs):
        raise Started(jobs)

    monkeypatch.setattr(engines, "_local_cluster", cluster)
    for chunks, workers in (([["a.log"]], 1), ([["a.log"], ["b.tar"], ["c.zip"]], 3), ([[f"{i}.zip"] for i in range(40)], 8)):
        with pytest.raises(Started) as started:
            list(engines.run_dask(iter(chunks), None, 8, None))
        assert started.value.args == (workers,)
