"""One golden file per output format for the shipped example; `DLLOGSCAN_BLESS=1 pytest
tests/test_golden_formats.py` rewrites them, and the diff shows what changed."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import dllogscan
from dllogscan import report

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden"
EXAMPLE = "examples/docker-shm-bus-error.log"
FORMATS = ["text", "json", "jsonl", "md", "csv", "github"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_format_matches_its_golden_file(fmt, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = dllogscan.scan(Path(EXAMPLE))
    text = report.render([result], fmt)
    path = GOLDEN / f"docker-shm-bus-error.{fmt}"
    if os.environ.get("DLLOGSCAN_BLESS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file: run DLLOGSCAN_BLESS=1 pytest {__file__}"
    assert text == path.read_text(encoding="utf-8"), f"{fmt} output changed; re-bless if intended"
