"""doctor: the machine facts, the risk arithmetic, the CLI, and a real 1 MiB /dev/shm."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dllogscan.live import facts
from tests.live_helpers import signature_args

SIGS = [a for s in signature_args() for a in ("-s", s)]


def test_cgroup_v2_and_v1_limits(tmp_path):
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "memory.max").write_text("1073741824\n")
    own = tmp_path / "self"
    own.write_text("0::/job\n")
    assert facts.cgroup_memory_limit(tmp_path, own) == 1 << 30
    (tmp_path / "job" / "memory.max").write_text("max\n")
    assert facts.cgroup_memory_limit(tmp_path, own) is None
    (tmp_path / "memory" / "pod").mkdir(parents=True)
    (tmp_path / "memory" / "pod" / "memory.limit_in_bytes").write_text("536870912")
    own.write_text("4:memory:/pod\n")
    assert facts.cgroup_memory_limit(tmp_path, own) == 512 << 20


def test_assess_names_each_class():
    pytest.importorskip("torch")
    from dllogscan.live.doctor import assess
    from tests.live_helpers import scanner

    machine = {"shm": {"size": 64 << 20, "free": 60 << 20}, "nofile": {"soft": 1024, "hard": 4096},
               "memory_limit": 2 << 30, "memory": {}, "torch": {"sharing_strategy": "file_descriptor",
                                                               "cuda_initialized": True, "start_method": "fork"}}
    risks = assess(machine, {"num_workers": 8, "batch_bytes": 100 << 20, "tensors": 100}, scanner())
    assert [r.cls for r in risks] == ["A", "B", "C", "D"]
    assert "8 x 2 x 100.0 MiB = 1.6 GiB" in risks[0].message and risks[0].level == "high"
    assert "1664 exceeds ulimit -n 1024" in risks[2].message
    assert risks[1].message.endswith("approach the memory limit (cgroup) 2.0 GiB")
    no_cgroup = {**machine, "memory_limit": None, "memory": {"MemAvailable": 3 << 30}}
    [b] = [r for r in assess(no_cgroup, {"num_workers": 8, "batch_bytes": 100 << 20}, scanner()) if r.cls == "B"]
    assert b.message.endswith("approach the memory available (MemAvailable) 3.0 GiB")  # before: "the memory limit"
    assert risks[0].fixes and risks[0].fixes[0]["rank"] == 1
    assert assess(machine, {"num_workers": 0, "batch_bytes": 100 << 20}, scanner()) == []


def test_the_loader_line_counts_one_tensor_as_one():
    """Before: 'batch 32 B, 1 tensors' for a sample whose batch is one tensor."""
    from dllogscan.live.doctor import render

    machine = {"shm": None, "nofile": {"soft": 1024, "hard": 4096}, "runtime": [], "cpus": {"count": 2, "usable": 2},
               "torch": {"version": "2.13.0", "start_method": "fork", "sharing_strategy": "file_descriptor",
                         "cuda_initialized": False, "cuda_available": False}}
    for tensors, said in ((1, "batch 32 B, 1 tensor\n"), (3, "batch 32 B, 3 tensors\n")):
        assert said in render(machine, {"num_workers": 2, "batch_bytes": 32, "tensors": tensors}, [])


def test_predicted_shm_risk_gets_the_general_fixes_sized_to_the_demand():
    pytest.importorskip("torch")
    from dllogscan.live.doctor import assess
    from tests.live_helpers import scanner

    machine = {"shm": {"size": 64 << 20, "free": 64 << 20}, "nofile": {}, "memory": {}, "torch": {}}
    db = scanner()
    risk = assess(machine, {"num_workers": 8, "batch_bytes": 24 << 20}, db)[0]
    # nothing has died yet: the class's fixes, not A.bus-error's post-mortem ones
    assert [f["title"] for f in risk.fixes] == [f.title for f in db.db.fixes_for("A", None)]
    commands = [c for f in risk.fixes for c in f["commands"]]
    assert not any("{" in c or "<" in c for c in commands)
    if any("--shm-size" in c for c in commands):  # 384 MiB x 1.5 headroom -> 1g, not the 8g default
        assert any("--shm-size=1g" in c for c in commands), commands


def _doctor(*args: str, prefix: list[str] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "dllogscan", "doctor", *args, *SIGS],
                          capture_output=True, text=True, timeout=120)


def test_doctor_json_with_a_sampled_batch():
    pytest.importorskip("torch")
    proc = _doctor("--num-workers", "2", "--sample", "tests.live_datasets:many_tensors", "--batch-size", "4",
                   "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["loader"]["batch_bytes"] == 64 * 4 * 4 * 4 and doc["loader"]["tensors"] == 64
    assert doc["facts"]["shm"]["size"] > 0 and doc["facts"]["nofile"]["soft"]
    assert doc["facts"]["torch"]["start_method"] in ("fork", "spawn", "forkserver")


def test_doctor_in_a_1m_tmpfs_reports_class_a():
    pytest.importorskip("torch")
    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /dev/shm"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.strip()}")
    cmd = " ".join([sys.executable, "-m", "dllogscan", "doctor", "--num-workers", "4", "--batch-bytes", "1M",
                    *SIGS])
    proc = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs /dev/shm && {cmd}"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "/dev/shm        1.0 MiB size" in proc.stdout
    assert "class A/bus-error: shared-memory demand 4 x 2 x 1.0 MiB = 8.0 MiB" in proc.stdout


@pytest.mark.parametrize("command", ["doctor", "repro x:y"])
def test_missing_torch_is_one_line(command):
    code = ("import sys; sys.modules['torch'] = None; from dllogscan.cli.app import main; "
            f"main({command.split()!r})")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    name = command.split()[0]
    assert proc.returncode == 2
    assert proc.stderr.strip() == f'Error: dllogscan {name} needs torch: pip install "dllogscan[torch]"'


def test_missing_psutil_is_named_not_torch():
    """Before: with torch installed and psutil missing, 'needs torch: pip install ...'."""
    pytest.importorskip("torch")
    code = "import sys; sys.modules['psutil'] = None; from dllogscan.cli.app import main; main(['doctor'])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == 'Error: dllogscan doctor needs psutil: pip install "dllogscan[torch]"'


def test_doctor_sample_of_an_empty_dataset_says_so():
    """Before: 'Error: --sample tests.live_datasets:empty: StopIteration: '."""
    pytest.importorskip("torch")
    proc = _doctor("--num-workers", "2", "--sample", "tests.live_datasets:empty")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("Error: --sample tests.live_datasets:empty: ValueError: the dataset is empty: "
                                   "no batch to measure")


#: the line of tests/live_datasets.py where Raising raises
RAISES_AT = next(n for n, line in enumerate(Path(__file__).with_name("live_datasets.py").read_text().splitlines(), 1)
                 if "raise KeyError(f\"label missing" in line)


@pytest.mark.parametrize("factory, said", [
    ("raising", f"KeyError: 'label missing for sample 3', raised at live_datasets.py:{RAISES_AT} in hook; "
                "`dllogscan repro tests.live_datasets:raising --workers 0` shows the traceback"),
    ("nowhere", "cannot import the factory: AttributeError: module 'tests.live_datasets' has no attribute 'nowhere'"),
])
def test_doctor_sample_that_raises_says_where_or_that_it_cannot_be_imported(factory, said):
    """Before: 'KeyError: 'label missing for sample 3'' alone (no file, no line, no pointer to the
    traceback), and a factory that does not exist in the same words as an error of the dataset's."""
    pytest.importorskip("torch")
    proc = _doctor("--sample", f"tests.live_datasets:{factory}", "--batch-size", "4")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"Error: --sample tests.live_datasets:{factory}: {said}\n"


def test_importing_dllogscan_does_not_import_torch():
    code = "import sys, dllogscan; assert 'torch' not in sys.modules; print(callable(dllogscan.guard))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_doctor_on_a_mac_or_windows_shows_no_linux_command():
    pytest.importorskip("torch")
    from dllogscan.advise.platform import command_platform, host_platforms
    from dllogscan.live.doctor import assess
    from tests.live_helpers import scanner

    assert host_platforms("darwin") == {"macos"} and host_platforms("win32") == {"windows"}
    assert host_platforms("linux") == frozenset()
    machine = {"shm": None, "nofile": {"soft": 256, "hard": 4096}, "memory_limit": 2 << 30, "memory": {},
               "torch": {"sharing_strategy": "file_descriptor"}}
    loader = {"num_workers": 8, "batch_bytes": 300 << 20, "tensors": 100}
    linux = [c for r in assess(machine, loader, scanner()) for f in r.fixes for c in f["commands"]]
    assert any(command_platform(c) == "linux" for c in linux), linux
    for system, gone in (("darwin", ("linux", "docker", "slurm", "kubernetes")),
                         ("win32", ("linux", "posix", "docker", "slurm", "kubernetes"))):
        risks = assess({**machine, "system": system}, loader, scanner())
        assert [r.cls for r in risks] == ["B", "C"]
        commands = [c for r in risks for f in r.fixes for c in f["commands"]]
        assert not any(command_platform(c) in gone for c in commands), (system, commands)
    mac = [c for r in assess({**machine, "system": "darwin"}, loader, scanner()) for f in r.fixes for c in f["commands"]]
    assert "ulimit -n 65536" in mac


def test_doctor_samples_a_dataloader_with_its_own_settings():
    """A factory that returns its DataLoader (as repro takes one): the batch is the loader's own
    (batch_size 2 here), and its num_workers and prefetch_factor are the demand's where not given.
    Before: 'Error: --sample ...: TypeError: ...' (a DataLoader wrapped in another)."""
    pytest.importorskip("torch")
    proc = _doctor("--sample", "tests.live_datasets:workers_only_loader", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    loader = json.loads(proc.stdout)["loader"]
    assert (loader["num_workers"], loader["prefetch_factor"], loader["batch_bytes"]) == (2, 4, 2 * 64 * 4)
    one = json.loads(_doctor("--sample", "tests.live_datasets:workers_only_loader", "--batch-size", "1",
                             "--num-workers", "6", "--format", "json").stdout)["loader"]
    assert (one["num_workers"], one["prefetch_factor"]) == (6, 4) and one["batch_bytes"] * 2 == loader["batch_bytes"]
    proc = _doctor("--sample", "tests.live_datasets:batch_sampler_loader", "--batch-size", "4")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "batch_sampler" in proc.stderr


def test_doctor_sample_of_a_factory_that_exits_says_so():
    """Before: no output at all, and the factory's exit status (2, 3, ...) as doctor's."""
    pytest.importorskip("torch")
    proc = _doctor("--num-workers", "2", "--sample", "tests.live_datasets:exiting")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("Error: --sample tests.live_datasets:exiting: it called exit('usage: train.py --data "
                           "DIR') instead of returning a Dataset or DataLoader\n")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("factory, timeout, said", [
    ("slow_then_hanging", "5", r"no batch in [0-2] s; stuck at live_datasets\.py:\d+ in hook"),  # 3 s in the factory
    ("hanging_factory", "3", r"the factory did not return in [3-5] s; stuck at live_datasets\.py:\d+ in hanging_factory"),
    # before: '3s' was typer's 'not a valid float', exit 2
    ("hanging_factory", "3s", r"the factory did not return in [3-5] s; stuck at live_datasets\.py:\d+ in hanging_factory"),
])
def test_doctor_sample_that_hangs_is_cut_and_reported_as_class_e(factory, timeout, said):
    """Before: doctor loaded the sample in its own process with no time limit: a factory or a
    first item that hangs hung doctor for ever (killed at 40 s by timeout(1), exit 124, no output)."""
    pytest.importorskip("torch")
    proc = _doctor("--num-workers", "2", "--sample", f"tests.live_datasets:{factory}", "--timeout", timeout,
                   "--format", "json")
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr
    risk = json.loads(proc.stdout)["risks"][0]
    assert (risk["class"], risk["subclass"], risk["level"]) == ("E", "hang", "high")
    assert risk["message"].startswith(f"--sample tests.live_datasets:{factory} hangs without workers (num_workers=0): ")
    assert re.search(said, risk["message"]) and risk["message"].endswith(
        f"`dllogscan repro tests.live_datasets:{factory} --workers 0` shows the whole stack"), risk
    text = _doctor("--num-workers", "2", "--sample", f"tests.live_datasets:{factory}", "--timeout", timeout).stdout
    assert f"[high] class E/hang: --sample tests.live_datasets:{factory} hangs" in text and "? (--sample hung)" in text


def test_doctor_unknown_format_is_one_line():
    proc = _doctor("--format", "yaml")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "Error: unknown format 'yaml'; choose text or json\n"


@pytest.mark.parametrize("value", ["soon", "0.5", "2 weeks"])
def test_doctor_timeout_that_is_no_duration_is_one_line(value):
    """Before: typer's boxed 'not a valid float' or 'not in the range x>=1'."""
    proc = _doctor("--sample", "tests.live_datasets:healthy", "--timeout", value)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"Error: --timeout takes a duration of at least 1s such as 90s, 30m or 2h (got {value!r})\n"
