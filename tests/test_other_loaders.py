"""Worker deaths and timeouts of loaders built like PyTorch's (nnU-Net's batchgenerators,
PaddlePaddle, MXNet Gluon, DGL): the same classes as PyTorch's own texts, and a shared-memory
failure printed above a bare worker death still decides class A."""
from __future__ import annotations

import pytest

import dllogscan


def verdict(text: str) -> list[tuple[str, str | None]]:
    """The signatures' verdict (independent of the shipped text classifier, which is retrained often)."""
    return [(d.cls, d.subclass) for d in dllogscan.scan(text, name="job.log", classifier="off").diagnoses]


@pytest.mark.parametrize("text", [
    "nnUNetv2_train 004 3d_fullres 0\nRuntimeError: One or more background workers are no longer alive. "
    "Exiting. Please check the print statements above for the actual error message\n",
    "RuntimeError: Background workers died. Look for the error message further up! If there is none then "
    "your RAM was full and the worker was killed by the OS. Use fewer workers or get more RAM in that case!\n",
    "Exception in thread Thread-10:\nRuntimeError: DataLoader 2 workers exit unexpectedly, pids: 3348, 3349\n",
])
def test_a_bare_worker_death_of_another_loader_is_b_with_the_cause_unknown(text):
    assert verdict(text) == [("B", "oom-suspected")]


def test_the_paddle_worker_pids_are_facts():
    r = dllogscan.scan("RuntimeError: DataLoader 2 workers exit unexpectedly, pids: 3348, 3349\n",
                       name="job.log", classifier="off")
    assert "3348" in r.diagnoses[0].facts.get("pids", "")


def test_a_shared_memory_failure_above_the_worker_death_is_class_a():
    text = ("RuntimeError: unable to write to file </torch_8289_606636967_0>: No space left on device (28)\n"
            "RuntimeError: One or more background workers are no longer alive. Exiting. Please check the "
            "print statements above for the actual error message\n")
    assert verdict(text)[0][0] == "A"


@pytest.mark.parametrize("text", [
    "Worker timed out after 120 seconds. This might be caused by \n - Slow transform.\n",
    "RuntimeError: Prefetcher thread timed out at 30 seconds.\n",
])
def test_another_loader_timeout_is_e_timeout(text):
    assert verdict(text) == [("E", "timeout")]


def test_a_generic_worker_timeout_is_nothing():
    assert verdict("RuntimeError: worker timed out after 30 seconds\n") == []
