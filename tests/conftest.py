"""Shared fixtures: the mini signature database and helpers that write test inputs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dllogscan.scan.scanner import Scanner
from dllogscan.signatures.loader import load_database

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini_signatures.toml"


@pytest.fixture(scope="session")
def mini_db():
    return load_database([MINI], include_default=False)


@pytest.fixture(scope="session", params=["python", "hyperscan"])
def mini_scanner(request, mini_db):
    if request.param == "hyperscan":
        pytest.importorskip("hyperscan")
    return Scanner(mini_db, engine=request.param)


def progress_lines(n: int, start: int = 0) -> str:
    """A realistic run of training progress lines."""
    return "".join(
        f"Epoch {i // 500}: {i % 100:3d}%|{'#' * (i % 10):<10}| {i}/50000 [00:{i % 60:02d}<01:00, 7.1it/s, loss={1 / (i + 1):.4f}]\n"
        for i in range(start, start + n))


@pytest.fixture
def top_of(tmp_path):
    """``top_of(text)``: the top diagnosis ``dllogscan.scan`` gives ``text`` pasted into a file, or None."""
    import dllogscan

    def top(text: str):
        path = tmp_path / "paste.txt"
        path.write_text(text)
        found = dllogscan.scan(path).diagnoses
        return found[0] if found else None
    return top


def process_group(code: str, *args: object) -> subprocess.Popen:
    """``python -c code ARGS`` in a session of its own (a process group to signal, as a terminal
    or a scheduler signals a job), its standard output and error read as text."""
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
