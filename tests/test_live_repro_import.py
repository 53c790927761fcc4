"""``dllogscan repro`` with a factory (or collate function) that cannot be imported: a usage
error, exit 2, one line; not "the bug is in the dataset code" (the rung's ModuleNotFoundError had
been read as the dataset failing at num_workers=0)."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("psutil")

from dllogscan.core.errors import UsageError  # noqa: E402
from dllogscan.live.repro import Settings, ladder  # noqa: E402
from tests.live_helpers import scanner  # noqa: E402

DS = "tests.live_datasets"


def repro(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", "repro", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("args, message", [
    (["nosuch:thing", "--workers", "0"],
     "nosuch:thing: cannot import the factory: ModuleNotFoundError: No module named 'nosuch'"),
    ([f"{DS}:nothing", "--workers", "0,1"],
     f"{DS}:nothing: cannot import the factory: AttributeError: module '{DS}' has no attribute 'nothing'"),
    ([f"{DS}:healthy", "--workers", "1", "--collate", "nosuch:collate"],
     "nosuch:collate: cannot import the collate function: ModuleNotFoundError: No module named 'nosuch'"),
    # a file's path where the module's name goes; before: "No module named 'tests/live_datasets'"
    (["tests/live_datasets.py:healthy", "--workers", "0"],
     "tests/live_datasets.py:healthy: cannot import the factory: ValueError: name the module as Python "
     "imports it, tests.live_datasets:healthy, not by its file"),
])
def test_an_unimportable_factory_is_a_usage_error(args, message):
    proc = repro(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and proc.stderr.splitlines() == [f"Error: {message}"]


@pytest.mark.timeout(120)
def test_the_ladder_raises_a_usage_error_for_it():
    with pytest.raises(UsageError, match="cannot import the factory"):
        ladder(Settings(factory="nosuch:thing", workers=(0, 1), batches=1, timeout=60), scanner())


@pytest.mark.timeout(120)
def test_a_factory_that_raises_is_still_the_dataset_code():
    """Importing worked: the factory's own failure is the dataset's (exit 1, the ladder's verdict)."""
    proc = repro(f"{DS}:raising", "--workers", "0", "--batches", "2")
    assert proc.returncode == 1 and "the bug is in the dataset code" in proc.stdout


@pytest.mark.timeout(180)
@pytest.mark.parametrize("factory, message", [
    ("sized", f"{DS}:sized: the factory needs arguments (n: 'int', size: 'int' = 64) -> 'Dataset'; give "
              "repro a function that takes none and calls it with yours"),
    ("not_a_dataset", f"{DS}:not_a_dataset: the factory returned int, not a Dataset or DataLoader"),
    ("empty", f"{DS}:empty: the dataset is empty (len 0): there is nothing to load"),
    ("exiting", f"{DS}:exiting: the factory called exit('usage: train.py --data DIR') instead of returning a "
                "Dataset or DataLoader"),
])
def test_a_factory_that_makes_nothing_to_load_is_a_usage_error(factory, message):
    """Before: the TypeError of calling ``sized()`` and the ``len()`` of 42 were 'the bug is in the
    dataset code' (exit 1), and an empty dataset passed every rung, 0 batches loaded (exit 0)."""
    proc = repro(f"{DS}:{factory}", "--workers", "0,1", "--batches", "2")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and proc.stderr.splitlines() == [f"Error: {message}"]


@pytest.mark.timeout(180)
def test_a_module_that_exits_as_it_is_imported_is_a_usage_error(tmp_path):
    """Before: a script whose argparse runs at import (exit 2) was a rung that failed with the
    ladder's own banner line as its evidence, and 'the bug is in the dataset code' (exit 1)."""
    (tmp_path / "train.py").write_text("import sys\nsys.exit(2)\n")
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "repro", "train:make", "--workers", "0,1"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and proc.stderr.splitlines() == [
        "Error: train:make: cannot import the factory: its module called exit(2) while being imported"]


@pytest.mark.timeout(120)
def test_a_rung_of_more_workers_than_any_machine_runs_is_refused():
    """Before: --workers 0,99999 started 99999 worker processes at the second rung."""
    proc = repro(f"{DS}:healthy", "--workers", "0,99999")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == ["Error: --workers: 99999 workers in one rung; at most 1024 (each is a "
                                        "process that torch forks at once)"]
