"""The reproduction ladder against real DataLoaders on the CPU (tiny datasets, <= 2 workers)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("psutil")

from dllogscan.live.conclude import conclude, render  # noqa: E402
from dllogscan.live.repro import Rung, Settings, ladder  # noqa: E402
from dllogscan.core.models import Diagnosis, Evidence  # noqa: E402
from tests.live_helpers import scanner, signature_args  # noqa: E402

DS = "tests.live_datasets"


def run(factory: str, workers=(0, 1), timeout: float = 40, **kw):
    rungs = ladder(Settings(factory=f"{DS}:{factory}", workers=workers, batches=4, timeout=timeout, **kw),
                   scanner())
    return rungs, conclude(rungs)


def test_raising_getitem_concludes_dataset_code():
    rungs, verdict = run("raising", workers=(0, 2))
    assert [r.result for r in rungs] == ["fail", "skipped"]
    assert verdict["verdict"] == "dataset-code"
    assert "KeyError: 'label missing for sample 3'" in verdict["traceback"]
    assert "in hook" in verdict["traceback"]
    assert rungs[0].evidence() == "KeyError: 'label missing for sample 3'"


def test_a_frame_as_evidence_gives_way_to_the_exception_line():
    frame = '  File "/usr/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54, in fetch'
    diagnosis = Diagnosis(cls="B", subclass="getitem", title="t", confidence=0.8,
                          evidence=(Evidence(line=5, text=frame.strip()),), signatures=("B.getitem.x",))
    output = f"Traceback (most recent call last):\n{frame}\n    data = [...]\nKeyError: 3\n"
    assert Rung(workers=0, result="fail", output=output, diagnosis=diagnosis).evidence() == "KeyError: 3"
    caught = Diagnosis(cls="B", subclass="getitem", title="t", confidence=0.9,
                       evidence=(Evidence(line=1, text="Caught KeyError in DataLoader worker process 0."),))
    assert Rung(workers=1, result="fail", output=output, diagnosis=caught).evidence().startswith("Caught KeyError")


def test_sigkill_is_b_oom_and_measured():
    rungs, verdict = run("sigkill", workers=(0, 1))
    assert [r.result for r in rungs] == ["pass", "fail"]
    assert (rungs[1].cls, rungs[1].subclass) == ("B", "oom")
    assert verdict["verdict"] == "multiprocessing" and "class B/oom" in verdict["text"]
    assert "killed by signal: Killed" in rungs[1].evidence()


def test_sigsegv_is_b_crash():
    rungs, _ = run("sigsegv", workers=(1,))
    assert rungs[0].result == "fail"
    assert rungs[0].cls == "B" and rungs[0].subclass.startswith("crash")
    assert "segmentation fault" in rungs[0].evidence().lower()


def test_descriptor_limit_in_the_child_is_class_c():
    rungs, verdict = run("many_tensors", workers=(2,), timeout=15, nofile=128,
                         sharing_strategy="file_descriptor")
    assert rungs[0].result in ("fail", "hang")
    assert rungs[0].cls == "C", rungs[0].output[-2000:]


def test_lock_inherited_across_fork_hangs_as_e_with_the_lock_named():
    rungs, verdict = run("locked_at_fork", workers=(0, 1), timeout=12)
    assert [r.result for r in rungs] == ["pass", "hang"]
    hang = rungs[1]
    assert hang.cls == "E"
    assert "lock acquire" in hang.cause[0] and "with _LOCK:" in hang.cause[2]
    text = render(rungs, verdict)
    assert "with _LOCK:" in text and "in hook" in text


def test_cli_healthy_ladder_json_and_measurements():
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "repro", f"{DS}:healthy", "--workers", "1",
                           "--batches", "3", "--format", "json",
                           *[a for s in signature_args() for a in ("-s", s)]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["conclusion"]["verdict"] == "no-failure"
    peak = doc["rungs"][0]["worker_peak"]
    assert peak["rss"] > 10 << 20 and peak["fds"] > 3
    assert "per worker" in doc["conclusion"]["measured"]
    # cut at --batches 3 of 8: the counts are not the whole dataset's
    assert doc["rungs"][0]["yielded"] == {"iterable": False, "batches": 3, "samples": 6, "exhausted": False}


@pytest.mark.parametrize("args, message", [
    (["nocolon"], "expected module:factory"),
    (["a:b", "--workers", "x"], "expected numbers"),
    # before: each rung failed on torch's AssertionError, 'the bug is in multiprocessing', exit 1
    (["a:b", "--sharing-strategy", "file-system"], "choose file_descriptor or file_system"),
    # before: typer's boxed 'not a valid float' for a duration, or 'not in the range x>=1'
    (["a:b", "--timeout", "soon"], "--timeout takes a duration of at least 1s such as 90s, 30m or 2h (got 'soon')"),
    (["a:b", "--timeout", "500ms"], "--timeout takes a duration of at least 1s such as 90s, 30m or 2h (got '500ms')"),
    (["a:b", "--timeout", "-3"], "--timeout takes a duration of at least 1s"),
    (["a:b", "--format", "yaml"], "Error: unknown format 'yaml'; choose text or json"),
])
def test_cli_usage_errors_are_one_line(args, message):
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "repro", *args], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.timeout(240)
@pytest.mark.parametrize("timeout", ["3s", "3", "0.05m"])
def test_cli_timeout_takes_a_duration_as_watch_does(timeout):
    """Before: --timeout 3s was typer's 'not a valid float' (exit 2); a plain number still works."""
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "repro", f"{DS}:hanging_factory", "--workers", "0",
                           "--timeout", timeout, "--format", "json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    rung = json.loads(proc.stdout)["rungs"][0]
    assert rung["result"] == "hang" and rung["evidence"].startswith("the factory did not return in 3 s;"), rung


def test_each_rung_counts_what_it_yields():
    """Before: a rung said only pass or fail, not how much its loader yielded."""
    rungs = ladder(Settings(factory=f"{DS}:unsharded_stream", workers=(0, 1, 2), batches=400, timeout=60),
                   scanner())
    assert [r.result for r in rungs] == ["pass"] * 3
    counts = [(r.yielded.samples, r.yielded.batches, r.yielded.exhausted, r.yielded.iterable) for r in rungs]
    assert counts == [(300, 150, True, True), (300, 150, True, True), (600, 300, True, True)]
    assert len(rungs[2].yielded.fingerprints) == 64
    # the second worker's first batch is the first worker's: the same fingerprint
    assert rungs[2].yielded.fingerprints[:2] == [rungs[0].yielded.fingerprints[0]] * 2
    assert rungs[2].to_dict()["yielded"] == {"iterable": True, "batches": 300, "samples": 600, "exhausted": True}


def test_cli_warns_of_an_iterable_dataset_every_worker_yields_whole():
    """Before: every rung passed and nothing was said, though num_workers=2 yielded each sample twice."""
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "repro", f"{DS}:unsharded_stream", "--workers",
                           "0,1,2", "--batches", "400", "--format", "json",
                           *[a for s in signature_args() for a in ("-s", s)]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr  # a warning beside the verdict, not a failure
    doc = json.loads(proc.stdout)
    assert doc["conclusion"]["verdict"] == "no-failure"
    [warning] = doc["conclusion"]["warnings"]
    assert warning["kind"] == "unsharded-iterable"
    assert warning["evidence"] == [
        "num_workers=0: 300 samples, the whole stream",
        "num_workers=1: 300 samples",
        "num_workers=2: 600 samples, 2.0 times num_workers=0's; 32 of its first 64 batches repeat earlier ones "
        "(num_workers=0's first batch arrived 2 times)"]
    assert warning["rungs"] == [{"workers": 2, "times": 2.0, "repeated_batches": 32, "first_batch_arrivals": 2}]
    assert "get_worker_info()" in warning["fix"] and "info.id, None, info.num_workers" in warning["fix"]
    assert [r["yielded"]["samples"] for r in doc["rungs"]] == [300, 300, 600]


def test_an_endless_iterable_dataset_every_worker_yields_whole_is_told_by_its_repeats():
    """Cut at --batches, every rung yields 8 batches however the stream is split: the counts say
    nothing, the same first batches arriving from both workers do."""
    rungs, verdict = run("endless_unsharded", workers=(0, 2))
    assert [r.yielded.exhausted for r in rungs] == [False, False]
    [warning] = verdict["warnings"]
    assert warning["evidence"] == [
        "num_workers=0: cut at --batches 4 (8 samples), all 4 different",
        "num_workers=2: cut at --batches 4 (8 samples); 2 of its first 4 batches repeat earlier ones "
        "(num_workers=0's first batch arrived 2 times)"]
    text = render(rungs, verdict)
    assert "\nWarning: the IterableDataset is not split between workers" in text
    assert "def __iter__(self):" in text and "worker_init_fn" in text


@pytest.mark.parametrize("factory, workers, batches", [
    ("sharded_stream", (0, 1, 2), 400),  # 301 items: shards of 151 and 150, each worker's last batch short
    ("endless_sharded", (0, 2), 4),
    ("healthy", (0, 2), 400),  # map-style: the sampler splits it
])
def test_a_split_stream_or_a_map_style_dataset_is_not_warned(factory, workers, batches):
    rungs = ladder(Settings(factory=f"{DS}:{factory}", workers=workers, batches=batches, timeout=60), scanner())
    assert {r.result for r in rungs} == {"pass"}
    if batches == 400:
        assert {r.yielded.samples for r in rungs} == {301 if factory == "sharded_stream" else 16}
    verdict = conclude(rungs)
    assert verdict["warnings"] == [] and "Warning" not in render(rungs, verdict)


def test_the_readme_example_of_an_unsplit_stream_is_warned():
    rungs = ladder(Settings(factory="examples.repro_dataset:unsplit_stream", workers=(0, 2), batches=200,
                            timeout=60), scanner())
    [warning] = conclude(rungs)["warnings"]
    assert warning["evidence"][0] == "num_workers=0: 100 samples, the whole stream"
    assert warning["evidence"][1].startswith("num_workers=2: 200 samples, 2.0 times num_workers=0's")


@pytest.mark.timeout(240)
def test_the_timeout_counts_from_when_the_rung_has_started_not_its_interpreter_start_up(tmp_path, monkeypatch):
    """Before: --timeout ran from the fresh interpreter's launch, so a slow start (importing torch
    on a loaded machine; here 8 s, forced by a sitecustomize) made a healthy dataset 'hang with
    num_workers=0 ... the bug is in the dataset code', its stack in torch's import."""
    (tmp_path / "sitecustomize.py").write_text("import os, time\nif os.environ.get('SLOW_START'):\n    time.sleep(8)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", ""), os.getcwd()]))
    monkeypatch.setenv("SLOW_START", "1")
    rungs, verdict = run("healthy", workers=(0,), timeout=5)
    assert [r.result for r in rungs] == ["pass"], rungs[0].output[-2000:]
    assert verdict["verdict"] == "no-failure"
    rungs, _ = run("hanging_init_loader", workers=(1,), timeout=5)  # a real hang is still cut at the timeout
    assert [r.result for r in rungs] == ["hang"] and rungs[0].seconds < 60


@pytest.mark.timeout(240)
def test_a_hangs_seconds_count_from_what_it_waited_for():
    """Before: 'no batch in N s' counted from the rung's launch (torch's import, the factory's 3 s
    included): here at least the 5 s timeout, for a loader that had waited 2 s for its batch."""
    rungs, _ = run("slow_then_hanging", workers=(0,), timeout=5)
    assert rungs[0].result == "hang" and rungs[0].seconds >= 5
    assert rungs[0].waiting_for == "batch" and rungs[0].waited <= 2.5
    assert rungs[0].evidence().startswith(f"no batch in {rungs[0].waited:.0f} s; stuck at ")
    rungs, _ = run("hanging_after_two_batches", workers=(0,), timeout=5)
    assert rungs[0].evidence().startswith("no batch in ") and " s after batch 2; stuck at " in rungs[0].evidence()
    rungs, _ = run("hanging_factory", workers=(0,), timeout=3)
    assert rungs[0].evidence().startswith("the factory did not return in 3 s; stuck at live_datasets.py")
    assert rungs[0].to_dict()["waiting_for"] == "factory"
