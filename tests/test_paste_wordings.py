"""Wordings that pasted reports carry and logs do not: pids redacted by the reporter, a title's
capitalised first word, a localised Windows error with its code kept, a worker handler's words
quoted in a title without the handler's "ERROR: " prefix."""
from __future__ import annotations

import pytest

import dllogscan

CASES = [
    ("RuntimeError: DataLoader worker (pid xxx) is killed by signal: Bus error.", "A", "bus-error"),
    ("RuntimeError: DataLoader worker (pid N) is killed by signal: Killed.", "B", "oom"),
    ("RuntimeError: DataLoader worker (pid(s) XXXX) exited unexpectedly", "B", "oom-suspected"),
    ("RuntimeError: DataLoader worker (pid X) exited unexpectedly", "B", "crash"),  # cut before its exit code
    ("Received 0 items of ancdata", "C", "fd-exhausted"),
    ('OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "D:\\envs\\py\\lib\\site-packages\\torch\\lib\\'
     'cudnn_cnn_infer64_8.dll" or one of its dependencies.', "B", "oom-paging-file"),
    ("# Unexpected segmentation fault encountered in worker", "B", "crash"),
    ("# Unexpected bus error encountered in worker", "A", "bus-error"),
]


@pytest.mark.parametrize("line,cls,sub", CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_the_wording_gives_its_class_by_signature(line, cls, sub):
    d = dllogscan.scan(f"training with num_workers=4\n{line}\n", name="paste", classifier="off").diagnoses
    assert [(x.cls, x.subclass) for x in d][:1] == [(cls, sub)]


def test_a_redacted_pid_fills_no_pid_fact():
    d = dllogscan.scan("RuntimeError: DataLoader worker (pid xxx) is killed by signal: Killed.\n", name="p").diagnoses[0]
    assert "pid" not in d.facts


def test_the_exit_code_message_cut_short_is_the_same_worker_exit_without_its_code():
    cut = dllogscan.scan("RuntimeError: DataLoader worker (pid 58353) exited unexpectedly\n", name="p",
                         classifier="off").diagnoses[0]
    assert (cut.cls, cut.subclass, cut.facts.get("pid")) == ("B", "crash", "58353") and "exit_code" not in cut.facts
    assert cut.signatures == ("B.crash.exit-code",)
    small = dllogscan.scan("shm 64M 64M 0 100% /dev/shm\nRuntimeError: DataLoader worker (pid X) exited unexpectedly\n",
                           name="p", classifier="off").diagnoses[0]
    assert small.title.endswith("(and the /dev/shm shown is small)")  # a death with no cause named: shm first
    whole = dllogscan.scan("RuntimeError: DataLoader worker (pid 58353) exited unexpectedly with exit code 1. Details are "
                           "lost due to multiprocessing.\n", name="p", classifier="off").diagnoses[0]
    assert whole.subclass == "crash" and whole.facts["exit_code"] == "1"


def test_the_paging_file_error_has_windows_fixes():
    paging = next(line for line, _, sub in CASES if sub == "oom-paging-file")
    d = dllogscan.scan(f"import torch\n{paging}\n", name="paste", classifier="off").diagnoses[0]
    assert "paging file" in d.fixes[0].title and any("systeminfo" in c for c in d.fixes[0].commands)


def test_other_windows_errors_are_not_b():
    text = 'import torch\nOSError: [WinError 126] The specified module could not be found. Error loading "c10.dll"\n'
    assert dllogscan.scan(text, name="paste", classifier="off").diagnoses == ()
