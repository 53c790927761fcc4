"""Advice kept to the platform the text shows (advise/platform.py): a pod gets kubectl, a Slurm
job sacct, neither a `docker run` flag; a log that shows no platform keeps every fix."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

import dllogscan
from dllogscan.advise.fixes import advise
from dllogscan.advise.platform import command_platform, fits, namespaced, runtime_platforms
from dllogscan.core.errors import SignatureError
from dllogscan.pipeline.runner import get_scanner
from dllogscan.signatures.loader import parse_fix

KILLED = "RuntimeError: DataLoader worker (pid 4121) is killed by signal: Killed."
BUS = ("RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that "
       "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.")
SLURM_OOM = ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.batch. Some of your processes "
             "may have been killed by the cgroup out-of-memory handler.")
K8S_EVENT = "12m   Warning   BackOff   pod/trainer-7c9d5b6f4-x2x9k   Back-off restarting failed container"
DESCRIBE = """Containers:
  trainer:
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
"""


def commands(diagnosis) -> list[str]:
    return [c for f in diagnosis.fixes for c in f.commands]


def titles(diagnosis) -> list[str]:
    return [f.title for f in diagnosis.fixes]


def top(text: str):
    result = dllogscan.scan_text(text, classifier="off")
    assert result.diagnoses, text
    return result.diagnoses[0]


def test_a_log_that_shows_no_platform_keeps_every_command():
    d = top(f"Epoch 1:  10%|#   | 10/100\n{KILLED}\n")
    assert (d.cls, d.subclass) == ("B", "oom")
    cmds = commands(d)
    assert any(c.startswith("dmesg") for c in cmds)
    assert "sacct -j <job_id> --format=JobID,MaxRSS,State" in cmds
    assert "kubectl describe pod POD | grep -A5 'Last State'" in cmds
    a = top(BUS)
    assert any(c.startswith("docker run --shm-size") for c in commands(a))
    assert any(t.startswith("Kubernetes") for t in titles(a))


def test_a_slurm_job_gets_sacct_with_its_id_and_no_kubectl():
    d = top(f"{KILLED}\n{SLURM_OOM}\n")
    assert (d.cls, d.subclass) == ("B", "oom") and d.facts["job_id"] == "4242"
    cmds = commands(d)
    assert "sacct -j 4242 --format=JobID,MaxRSS,State" in cmds
    assert not any(command_platform(c) == "kubernetes" for c in cmds)


def test_a_slurm_jobs_bus_error_gets_no_container_advice():
    d = top(f"SLURM_JOB_ID=98765\n{BUS}\n")
    assert d.cls == "A" and d.facts["job_id"] == "98765"
    cmds = commands(d)
    assert "df -h /dev/shm" in cmds
    assert not any(command_platform(c) in ("docker", "kubernetes") for c in cmds), cmds
    assert not any(t.startswith("Kubernetes") for t in titles(d))


def test_an_oomkilled_pod_gets_kubectl_and_no_sacct():
    d = top(f"{DESCRIBE}---\n{KILLED}\n")
    cmds = commands(d)
    assert "kubectl describe pod POD | grep -A5 'Last State'" in cmds
    assert not any(command_platform(c) == "slurm" for c in cmds), cmds


def test_a_pod_named_in_the_log_fills_the_commands_and_drops_docker():
    d = top(f"{K8S_EVENT}\n{KILLED}\n")
    assert d.facts["pod"] == "trainer-7c9d5b6f4-x2x9k"
    assert "kubectl describe pod trainer-7c9d5b6f4-x2x9k | grep -A5 'Last State'" in commands(d)
    assert not any(command_platform(c) == "slurm" for c in commands(d))
    a = top(f"{K8S_EVENT}\n{BUS}\n")
    assert a.cls == "A"
    assert not any(command_platform(c) == "docker" for c in commands(a)), commands(a)
    assert titles(a)[0].startswith("Raise /dev/shm") and any(t.startswith("Kubernetes") for t in titles(a))
    assert "kubectl describe pod trainer-7c9d5b6f4-x2x9k | grep -A3 -i shm" in commands(a)


def test_the_pods_namespace_goes_into_kubectl_when_known():
    d = top(f"{K8S_EVENT}\n{KILLED}\n")
    again = advise(dataclasses.replace(d, facts={**d.facts, "namespace": "ml"}, fixes=()), get_scanner().db)
    assert "kubectl -n ml describe pod trainer-7c9d5b6f4-x2x9k | grep -A5 'Last State'" in commands(again)
    assert namespaced("kubectl -n other get pod x", {"namespace": "ml"}) == "kubectl -n other get pod x"
    assert namespaced("df -h /dev/shm", {"namespace": "ml"}) == "df -h /dev/shm"


@pytest.mark.parametrize("command, platform", [
    ("sacct -j 1 --format=JobID,MaxRSS,State", "slurm"),
    ("SLURM_TIME_FORMAT=standard sacct -j 1", "slurm"),
    ("sudo docker run --shm-size=8g ...", "docker"),
    ("/usr/local/bin/kubectl exec POD -- df -h /dev/shm", "kubernetes"),
    ("df -h /dev/shm", "linux"),
    ("ssh NODE df -h /dev/shm", "linux"),
    ("dmesg -T | grep -i -E 'oom|killed process'", "linux"),
    ("grep -i kubectl notes.txt", "posix"),
    ("export TOKENIZERS_PARALLELISM=false", "posix"),
    ("sudo mount -o remount,size=8g /dev/shm", "linux"),     # a POSIX program on a path only Linux has
    ("lsof -p 42 | wc -l", "posix"),
    ("ls -l /proc/42/fd | grep -c torch_", "linux"),
    ("journalctl -k | grep -i oom", "linux"),
    ("py-spy dump --pid 42 --subprocesses", None),
    ("systeminfo | findstr /C:\"Virtual Memory\"", None),
])
def test_a_commands_platform_is_its_program(command, platform):
    assert command_platform(command) == platform


WINDOWS_EXIT = """Traceback (most recent call last):
  File "C:\\Users\\me\\train.py", line 40, in <module>
    for x in loader:
  File "C:\\Users\\me\\anaconda3\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 1133, in _try_get_data
    raise RuntimeError(f"DataLoader worker (pid(s) {pids_str}) exited unexpectedly") from e
RuntimeError: DataLoader worker (pid(s) 11234) exited unexpectedly
"""


def test_a_windows_worker_exit_gets_windows_checks_and_no_linux_commands():
    d = top(WINDOWS_EXIT)
    assert (d.cls, d.subclass, d.facts["windows"]) == ("B", "oom-suspected", "C")
    assert d.title.endswith("(cause not in this text: on Windows, check the commit limit first)")
    assert titles(d)[0] == "Check Windows' commit limit: RAM plus the paging file"
    assert any("findstr" in c for c in commands(d))
    assert not any(command_platform(c) for c in commands(d)), commands(d)  # no dmesg, sacct, kubectl
    assert any(n.startswith("Windows: the text shows a Windows machine (a path on drive C:)") for n in d.notes)
    linux = top(WINDOWS_EXIT.replace("C:\\Users\\me\\anaconda3\\lib", "/opt/conda/lib").replace("C:\\Users\\me\\", "/app/")
                .replace("\\", "/"))
    assert "windows" not in linux.facts and titles(linux)[0].startswith("Check the OOM killer first")
    assert any(c.startswith("dmesg") for c in commands(linux))
    # advised again, the title changes once
    again = advise(dataclasses.replace(d, fixes=()), get_scanner().db)
    assert again.title == d.title and sum(n.startswith("Windows:") for n in again.notes) == 1


def test_a_windows_error_number_leaves_linux_and_cluster_commands_out_of_any_class():
    hang = ("OSError: [WinError 1455] The paging file is too small for this operation to complete\n"
            "Training hangs at epoch 3 with num_workers=4, no error after this.\n"
            "  File \"/x/torch/utils/data/dataloader.py\", line 1133, in _try_get_data\n"
            "    data = self._data_queue.get(timeout=timeout)\n"
            "KeyboardInterrupt\n")
    for d in dllogscan.scan(hang, classifier="off").diagnoses:
        assert d.facts.get("windows") == "WinError"
        assert all(command_platform(c) is None for c in commands(d)), commands(d)
    assert fits("linux", frozenset()) and fits("linux", frozenset({"slurm"}))
    assert not fits("linux", frozenset({"windows"})) and not fits("docker", frozenset({"windows"}))
    assert fits(None, frozenset({"windows"}))
    assert not fits("posix", frozenset({"windows"})) and fits("posix", frozenset({"macos"}))
    assert not fits("linux", frozenset({"macos"})) and not fits("slurm", frozenset({"macos"}))


def test_a_fix_left_with_nothing_to_show_is_left_out():
    memory = ('  File "C:\\Users\\me\\train.py", line 40, in <module>\n'
              "Training uses more and more RAM with num_workers=8 until the DataLoader worker dies: out of memory\n"
              + KILLED + "\n")
    d = top(memory)
    assert (d.cls, d.subclass) == ("B", "oom") and d.facts["windows"] == "C"
    assert d.fixes and all(f.commands or f.code for f in d.fixes)
    assert not any("Confirm the OOM kill" in t for t in titles(d))  # dmesg / journalctl / sacct only
    assert any("Confirm the OOM kill" in t for t in titles(top(memory.replace("C:\\Users\\me\\", "/app/"))))


def test_what_the_doctor_sees_decides_for_it():
    assert runtime_platforms(["docker", "kubernetes", "containerd"]) == {"kubernetes"}
    assert runtime_platforms(["docker"]) == {"docker"}
    assert runtime_platforms(["slurm job 42"]) == {"slurm"}
    assert runtime_platforms(["lxc"]) == frozenset()
    assert fits("docker", frozenset()) and fits(None, frozenset({"slurm"}))
    assert not fits("kubernetes", frozenset({"docker"}))


def test_a_fix_for_an_unknown_platform_is_refused():
    with pytest.raises(SignatureError, match="platform 'nomad' is none of docker, kubernetes, slurm"):
        parse_fix({"key": "A", "title": "t", "why": "w", "platform": "nomad"}, "my.toml")


def test_redact_hides_the_pod_name_in_evidence_and_commands(tmp_path):
    log = tmp_path / "pod.log"
    log.write_text(f"{K8S_EVENT}\n{KILLED}\n")
    proc = subprocess.run([sys.executable, "-m", "dllogscan", str(log), "--redact", "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "trainer-7c9d5b6f4-x2x9k" not in proc.stdout
    d = json.loads(proc.stdout)["diagnoses"][0]
    assert any("describe pod <pod-1>" in c for f in d["fixes"] for c in f["commands"])


def test_a_hang_gets_py_spy_where_the_job_runs():
    progress = "".join(f"[2026-11-30 02:{m:02d}:00] Epoch 1: step {m * 10}/5000 loss=0.41\n" for m in range(12))
    slurm = top(progress + "slurmstepd: error: *** JOB 4242 ON node01 CANCELLED AT 2026-11-30T06:00:00 "
                "DUE TO TIME LIMIT ***\n")
    assert (slurm.cls, slurm.subclass) == ("E", "hang")
    cmds = commands(slurm)
    assert any(c.startswith("srun --jobid=4242 --overlap py-spy dump") for c in cmds), cmds
    assert not any(command_platform(c) == "kubernetes" for c in cmds)
    pod = advise(dataclasses.replace(slurm, facts={"pod": "trainer-0", "pid": "77"}, signatures=(), fixes=()),
                 get_scanner().db)
    assert "kubectl exec trainer-0 -- py-spy dump --pid 77 --subprocesses" in commands(pod)
    assert not any(command_platform(c) == "slurm" for c in commands(pod))


SEGFAULT = ("RuntimeError: DataLoader worker (pid 4121) is killed by signal: Segmentation fault.\n"
            "num_workers=4\n")


def test_windows_spawns_every_worker_so_no_fix_says_start_with_spawn():
    linux = top(SEGFAULT)
    assert linux.cls == "B" and "Start workers with spawn instead of fork" in titles(linux)
    frame = '  File "C:\\Users\\me\\train.py", line 40, in <module>\n'
    for shown in (frame, "OS: Microsoft Windows 10 Pro\n"):
        d = top(shown + SEGFAULT)
        assert d.cls == "B" and d.facts["windows"] in ("C", "Windows")
        assert not any("spawn" in t for t in titles(d)), titles(d)
        assert len(titles(d)) == len(titles(linux)) - 1  # only the spawn fix goes
    # a setting Windows does not fix stays, and a fix that makes none is never settled
    from dllogscan.advise.platform import settled
    db = get_scanner().db
    spawn_fix = next(f for f in db.fixes_for("B", "crash", frozenset()) if f.already)
    assert settled(spawn_fix, "spawn") and settled(spawn_fix, "forkserver") and not settled(spawn_fix, None)
    persistent = next(f for f in db.fixes_for("E", "slow-start", frozenset()) if f.already)
    assert not settled(persistent, "spawn")
    assert not any(settled(f, "spawn") for f in db.fixes_for("B", "", frozenset()))
    cuda_spawn = next(f for f in db.fixes_for("D", "cuda-fork", frozenset()) if f.already)
    assert settled(cuda_spawn, "spawn") and not settled(cuda_spawn, "forkserver")  # spawn only


@pytest.mark.parametrize("line, shown_by", [
    ("OS: Microsoft Windows 11 Home", "its environment report names the system"),
    ("- OS (e.g., Linux): Windows 10", "its environment report names the system"),
    ("sys.platform           win32", "its environment report names the system"),
    ('  File "D:\\work\\train.py", line 40, in <module>', "a path on drive D:"),
    ("PermissionError: [WinError 5] Access is denied: 'D:\\\\cache'",
     "a Windows error number"),
])
def test_an_environment_report_shows_windows_as_a_frame_does(line, shown_by):
    d = top(line + "\nRuntimeError: DataLoader worker (pid(s) 11234) exited unexpectedly\n")
    assert d.title.endswith("on Windows, check the commit limit first)")
    assert any(n.startswith(f"Windows: the text shows a Windows machine ({shown_by})") for n in d.notes), d.notes


@pytest.mark.parametrize("line", ["- OS: Windows 11 with WSL2 (Ubuntu 22.04)", "It fails on Windows, not on Linux.",
                                  "OS: Windows 10 host; the job runs in a Docker container"])
def test_windows_that_may_run_linux_or_is_only_said_is_not_enough(line):
    d = top(line + "\nRuntimeError: DataLoader worker (pid(s) 11234) exited unexpectedly\n")
    assert "windows" not in d.facts and d.title.endswith("check the OOM killer first)")


PY314_FRAME = '  File "/home/me/.venv/lib/python3.14/site-packages/torch/utils/data/dataloader.py", line 1180, in __init__\n'
TORCH_ADVICE = ("UserWarning: Got pickle error when attempting to start a worker Process. This might be because the "
                "worker Process arguments are not picklable. Python 3.14+ changed the multiprocessing start method in "
                "non-Mac POSIX platforms to 'forkserver', which requires the worker Process arguments to be picklable. "
                "You can also try multiprocessing.set_start_method('fork').\n")


@pytest.mark.parametrize("shown, forkserver", [
    (PY314_FRAME, True),
    ("Python version: 3.14.0 (main, Oct  7 2025, 09:34:52) [GCC 13.3.0] (64-bit runtime)\n", True),
    (PY314_FRAME + "A tip: You can also try multiprocessing.set_start_method('fork').\n", True),  # advice, no call
    ("Python version: 3.13.5\n", False),
    (PY314_FRAME + "loader = DataLoader(ds, num_workers=4, multiprocessing_context='fork')\n", False),
    (PY314_FRAME + "torch.multiprocessing.set_start_method('fork', force=True)\n", False),
])
def test_python_3_14_workers_start_with_forkserver_unless_the_text_sets_a_method(shown, forkserver):
    d = top(shown + SEGFAULT)
    assert d.cls == "B" and d.subclass == "crash"
    switch = "Start workers with spawn instead of fork"
    note = [n for n in d.notes if n.startswith("Start method:")]
    if forkserver:
        assert switch not in titles(d) and d.facts["python"] == "3.14"
        assert note == ["Start method: the workers started with forkserver (Python 3.14's default on Linux, and the "
                        "text sets no start method), not fork: the fix that switches away from fork is left out."]
    else:
        assert switch in titles(d) and not note


def test_python_3_14_keeps_what_forkserver_does_not_settle():
    # a CUDA re-initialisation in a forked worker shows fork was used; spawn is still the fix
    d = top(PY314_FRAME + "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
            "multiprocessing, you must use the 'spawn' start method\nnum_workers=4\n")
    assert d.cls == "D" and "Use multiprocessing_context='spawn'" in titles(d)
    # a worker that could not start: what changed with 3.14, and how to bring fork back
    f = dllogscan.scan(PY314_FRAME + TORCH_ADVICE + "AttributeError: Can't pickle local object "
                       "'main.<locals>.<lambda>'\nnum_workers=4\n", classifier="off").diagnoses[0]
    assert f.cls == "F"
    assert any(n.startswith("Start method: the workers started with forkserver (Python 3.14's default") and
               "multiprocessing_context='fork' brings fork back" in n for n in f.notes), f.notes
    older = dllogscan.scan(TORCH_ADVICE + "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\n"
                           "num_workers=4\n", classifier="off").diagnoses[0]
    assert older.cls == "F" and not any(n.startswith("Start method:") for n in older.notes)


def test_windows_is_not_told_to_start_its_workers_with_fork():
    pickling = TORCH_ADVICE + "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\nnum_workers=4\n"
    fork = "On Linux only: start the workers with fork, which pickles nothing"
    linux = dllogscan.scan(pickling, classifier="off").diagnoses[0]
    assert (linux.cls, linux.subclass) == ("F", "pickling") and fork in titles(linux)
    windows = dllogscan.scan("OS: Microsoft Windows 11 Pro\n" + pickling, classifier="off").diagnoses[0]
    assert windows.cls == "F" and fork not in titles(windows) and titles(windows) == titles(linux)[:-1]
    # where the text shows fork made, the fix goes last and says so (it did not prevent this)
    made = dllogscan.scan(pickling + "loader = DataLoader(ds, multiprocessing_context='fork')\n",
                          classifier="off").diagnoses[0]
    assert titles(made)[-1].startswith(fork + " (the text already shows the fork start method")


MAC_FRAME = '  File "/Users/me/projects/seg/train.py", line 88, in <module>\n'


@pytest.mark.parametrize("shown", [
    MAC_FRAME,
    "OS: macOS 14.5 (arm64)\n",
    "- Platform: macOS-14.5-arm64-arm-64bit\n",
    "{'sys.platform': 'darwin', 'Python': '3.10.13 (main, Sep 11 2023) [Clang 14.0.6 ]'}\n",
    '  File "/opt/homebrew/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1133, in _next_data\n',
])
def test_a_mac_spawns_its_workers_so_no_fix_says_start_with_spawn(shown):
    linux = top(SEGFAULT)
    d = top(shown + SEGFAULT)
    assert d.cls == "B" and d.facts["macos"]
    assert titles(d) == [t for t in titles(linux) if t != "Start workers with spawn instead of fork"]
    assert [n for n in d.notes if n.startswith("Start method:")] == [
        "Start method: the workers started with spawn (macOS's default from Python 3.8, and the text sets no "
        "start method), not fork: the fix that switches away from fork is left out."]


@pytest.mark.parametrize("shown", [
    "OS: macOS 14.5 (arm64)\nPython version: 3.7.9\n",                     # fork was still the default
    MAC_FRAME + "torch.multiprocessing.set_start_method('fork', force=True)\n",
    MAC_FRAME + "loader = DataLoader(ds, num_workers=4, multiprocessing_context='fork')\n",
    MAC_FRAME + "/opt/conda/lib/python3.12/multiprocessing/popen_fork.py:66: DeprecationWarning: This process "
                "(pid=4242) is multi-threaded, use of fork() may lead to deadlocks in the child.\n",
    "- OS: macOS host, training in a Docker container\n",                   # the job runs Linux
    "It works on macOS but crashes on the cluster.\n",                      # prose
])
def test_a_mac_that_forked_or_is_only_said_keeps_the_spawn_fix(shown):
    d = top(shown + SEGFAULT)
    assert d.cls == "B" and "Start workers with spawn instead of fork" in titles(d)
    assert not any(n.startswith("Start method:") for n in d.notes)


HANG = ("Training freezes at the first batch, no error; __getitem__ reads with cv2.imread and augments with "
        "albumentations.\n^CTraceback (most recent call last):\n{frame}    for batch in loader:\n"
        '  File "/x/torch/utils/data/dataloader.py", line 1285, in _get_data\n    success, data = self._try_get_data()\n'
        "KeyboardInterrupt\n")


def test_a_mac_hang_names_no_fork_hazard_unless_the_text_shows_a_fork():
    linux = top(HANG.format(frame='  File "/home/me/train.py", line 20, in <module>\n'))
    assert (linux.cls, linux.subclass) == ("E", "fork-threads-likely")
    mac = top(HANG.format(frame='  File "/Users/me/train.py", line 20, in <module>\n'))
    assert (mac.cls, mac.subclass) == ("E", "hang")
    assert any(n.startswith("cause fork-threads not named:") and "started with spawn (macOS's default" in n
               for n in mac.notes), mac.notes
    forked = top(HANG.format(frame='  File "/Users/me/train.py", line 20, in <module>\n')
                 + "loader = DataLoader(ds, num_workers=8, multiprocessing_context='fork')\n")
    assert (forked.cls, forked.subclass) == ("E", "fork-threads-likely")


def test_a_line_only_a_forked_process_prints_shows_fork_under_any_default():
    # Python 3.14's forkserver default is overruled too: the CUDA error is printed in a forked worker
    d = top(PY314_FRAME + MAC_FRAME + "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
            "with multiprocessing, you must use the 'spawn' start method\nnum_workers=4\n")
    assert d.cls == "D" and "Use multiprocessing_context='spawn'" in titles(d)
    assert d.facts["start_method"] == "fork" and not any(n.startswith("Start method:") for n in d.notes)
    tokenizers = top(MAC_FRAME + "huggingface/tokenizers: The current process just got forked, after parallelism "
                     "has already been used. Disabling parallelism to avoid deadlocks...\n" + SEGFAULT)
    assert tokenizers.facts["start_method"] == "fork" and "Start workers with spawn instead of fork" in titles(tokenizers)


MAC_EXIT = MAC_FRAME + "RuntimeError: DataLoader worker (pid(s) 11234) exited unexpectedly\nnum_workers=8\n"


def test_a_macs_bare_worker_exit_checks_memory_the_macs_way():
    d = top(MAC_EXIT)
    assert (d.cls, d.subclass) == ("B", "oom-suspected")
    assert d.title.endswith("(cause not in this text: on a Mac, check memory pressure and swap first)")
    assert titles(d)[0] == "On a Mac, watch memory pressure and swap while the loader runs"
    assert commands(d) == ["sysctl vm.swapusage", "vm_stat 5"]
    assert any(n.startswith("macOS: the text shows a Mac (a path under /Users)") and "each spawned worker" in n
               for n in d.notes), d.notes
    forked = top(MAC_EXIT + "loader = DataLoader(ds, num_workers=8, multiprocessing_context='fork')\n")
    assert not any("spawned" in n for n in forked.notes) and titles(forked)[0] == titles(d)[0]
    killed = top(MAC_FRAME + "RuntimeError: DataLoader worker (pid 363) is killed by signal: Killed.\n")
    assert (killed.cls, killed.subclass) == ("B", "oom") and titles(killed)[0] == titles(d)[0]
    # advised again, the title changes once; on Linux, the OOM killer first
    again = advise(dataclasses.replace(d, fixes=()), get_scanner().db)
    assert again.title == d.title and sum(n.startswith("macOS:") for n in again.notes) == 1
    linux = top(MAC_EXIT.replace("/Users/me", "/home/me"))
    assert linux.title.endswith("check the OOM killer first)") and any(c.startswith("dmesg") for c in commands(linux))


def test_a_mac_keeps_the_posix_shell_and_loses_linux_own_commands():
    fd = "OSError: [Errno 24] Too many open files\nnum_workers=8\n"
    linux, mac = top(fd), top(MAC_FRAME + fd)
    assert mac.cls == linux.cls == "C"
    assert [c for c in commands(linux) if command_platform(c) not in ("linux", "docker")] == commands(mac)
    assert "ulimit -n 65536" in commands(mac) and any(c.startswith("lsof") for c in commands(mac))
    assert any("/proc/" in c for c in commands(linux)) and not any("/proc/" in c for c in commands(mac))
    bus = ("RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that "
           "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n")
    assert not any("/dev/shm" in c for c in commands(top(MAC_FRAME + bus)))


@pytest.mark.parametrize("text, shown_by", [
    (MAC_FRAME + BUS + "\n", "a path under /Users"),
    (BUS.replace("Bus error.", "Bus error: 10.") + "\n", "the worker's signal is named as macOS names it, 'Bus error: 10'"),
])
def test_a_macs_bus_error_names_shared_memory_not_dev_shm(text, shown_by):
    d = top(text)
    assert (d.cls, d.subclass) == ("A", "bus-error")
    assert d.title == "Worker killed by SIGBUS: shared memory could not hold the batches in flight"
    assert titles(d) == ["On a Mac, watch memory pressure and swap while the loader runs",
                         "Put fewer batches in flight: lower prefetch_factor and num_workers",
                         "Confirm it: rerun with num_workers=0 inside the main guard"]
    assert commands(d) == ["sysctl vm.swapusage", "vm_stat 5"]
    note = next(n for n in d.notes if n.startswith("macOS:"))
    assert f"({shown_by})" in note and "file_system" in note
    again = advise(dataclasses.replace(d, fixes=()), get_scanner().db)
    assert again.title == d.title and sum(n.startswith("macOS:") for n in again.notes) == 1
    linux = top(BUS + "\n")
    assert linux.title == "Worker killed by SIGBUS: /dev/shm too small for the batches in flight"
    windows = top('  File "C:\\Users\\me\\train.py", line 20, in <module>\n' + BUS + "\n")
    assert windows.title == d.title and titles(windows)[0].startswith("Give Windows a larger paging file")


@pytest.mark.parametrize("signal, title", [
    ("Killed: 9", "Worker killed by SIGKILL"),
    ("Trace/BPT trap: 5", "Worker crashed on a fatal signal"),
    ("Abort trap: 6", "Worker crashed on a fatal signal"),
    ("Segmentation fault: 11", "Worker crashed on a fatal signal"),
    ("Terminated: 15", "Worker killed by another signal"),
])
def test_a_signal_named_the_macos_way_shows_a_mac_and_its_own_crash(signal, title):
    d = top(f"RuntimeError: DataLoader worker (pid 6156) is killed by signal: {signal}. \n")
    assert d.cls == "B" and d.title.startswith(title) and d.facts["macos"] == signal
    glibc = top(f"RuntimeError: DataLoader worker (pid 6156) is killed by signal: {signal.split(':')[0]}. \n")
    assert glibc.cls == "B" and "macos" not in glibc.facts


OBJC = ("objc[41352]: +[__NSCFConstantString initialize] may have been in progress in another thread when fork() "
        "was called. We cannot safely call it or ignore it in the fork() child process. Crashing instead. Set a "
        "breakpoint on objc_initializeAfterForkError to debug.\n")


def test_a_worker_the_objective_c_runtime_stopped_after_fork_is_told_to_spawn():
    """The runtime's line shows fork (so no spawn default is assumed on the Mac) and names the
    crash: not memory pressure, the Mac's advice for a bare exit."""
    d = top(OBJC + MAC_EXIT)
    assert (d.cls, d.subclass) == ("B", "crash-fork-likely") and d.facts["start_method"] == "fork"
    assert titles(d) == ["Start the workers with spawn, macOS's default from Python 3.8",
                         "If fork must stay, let the Objective-C runtime skip its check (a workaround, not a fix)"]
    assert 1 in {e.line for e in d.evidence} and not any(n.startswith("macOS:") for n in d.notes)
    plain = top(MAC_EXIT)
    assert plain.subclass == "oom-suspected" and titles(plain)[0].startswith("On a Mac, watch memory pressure")


STUCK = ("Training hangs at epoch 2, no error.\n^CTraceback (most recent call last):\n{frame}"
         '  File "/x/torch/utils/data/dataloader.py", line 1285, in _get_data\n    success, data = self._try_get_data()\n'
         '  File "/x/dataset.py", line 40, in __getitem__\n    img = cv2.resize(img, (self.size, self.size))\n'
         "KeyboardInterrupt\n")


@pytest.mark.parametrize("frame, started", [
    ('  File "/Users/me/train.py", line 20, in <module>\n', "spawn (macOS's default from Python 3.8"),
    ('  File "C:\\\\Users\\\\me\\\\train.py", line 20, in <module>\n', "spawn (Windows has no fork)"),
    (PY314_FRAME, "forkserver (Python 3.14's default on Linux"),
])
def test_a_stack_frames_fork_hazard_is_taken_back_where_the_workers_did_not_fork(frame, started):
    linux = top(STUCK.format(frame='  File "/home/me/train.py", line 20, in <module>\n'))
    assert (linux.cls, linux.subclass) == ("E", "fork-threads") and "forked worker" in linux.title
    d = top(STUCK.format(frame=frame))
    assert (d.cls, d.subclass, d.title) == ("E", "hang", "The data pipeline hangs or stalls with no error")
    assert any(e.line == 7 for e in d.evidence)  # the frame stays cited: the worker was stuck there
    notes = [n for n in d.notes if n.startswith("cause fork-threads not named:")]
    assert len(notes) == 1 and notes[0].startswith("cause fork-threads not named: line 7 shows OpenCV")
    assert f"but the workers started with {started}" in notes[0]
    opencv = "Turn off OpenCV's thread pool and cap BLAS/OpenMP threads in the workers"
    assert opencv in titles(linux) and opencv not in titles(d)
    forked = top(STUCK.format(frame=frame) + "torch.multiprocessing.set_start_method('fork')\n")
    assert forked.subclass == ("hang" if "Windows" in started else "fork-threads")
