"""File and member names that are not UTF-8 (``bad\\xff.log``, ``café.log`` in a Latin-1 tar)
are data: kept, escaped, in every output; they used to stop ``batch --out`` with a
UnicodeEncodeError and lose every row after them."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tarfile

import pandas as pd
import pytest

from dllogscan.core.names import printable
from tests.hostile.zipcraft import raw_name_zip

BUS = b"RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.\n"


def _cli(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "dllogscan", *args], capture_output=True, timeout=120)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-1000:]
    return proc


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    with open(os.path.join(os.fsencode(root), b"bad\xff.log"), "wb") as fh:
        fh.write(BUS)
    with tarfile.open(root / "latin.tar", "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tf:
        for name in ("caf\xe9.log", "plain.log"):
            info = tarfile.TarInfo(name)
            info.size = len(BUS)
            tf.addfile(info, io.BytesIO(BUS))
    # Info-ZIP's ``zip`` stores a Linux name's bytes with no UTF-8 flag (zipfile reads them as cp437)
    (root / "infozip.zip").write_bytes(raw_name_zip({"jöb.log".encode(): BUS, b"bad\xff.log": BUS}))
    (root / "zz-after.log").write_text("hello\n")
    return root


WANT = {("bad\\xff.log", None), ("latin.tar", "caf\\xe9.log"), ("latin.tar", "plain.log"), ("zz-after.log", None),
        ("infozip.zip", "jöb.log"), ("infozip.zip", "bad\\xff.log")}


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_batch_out_keeps_every_row_with_names_escaped(tree, tmp_path, ext):
    out = tmp_path / f"x.{ext}"
    proc = _cli("batch", str(tree), "--out", str(out), "--jobs", "1")
    assert proc.returncode == 1
    if ext == "jsonl":
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        got = {(os.path.basename(r["path"]), r["member"]) for r in rows}
    elif ext == "csv":
        rows = list(csv.DictReader(out.open(encoding="utf-8")))
        got = {(os.path.basename(r["source"]), r["member"] or None) for r in rows}
    else:
        df = pd.read_parquet(out)
        got = {(os.path.basename(s), m if isinstance(m, str) else None) for s, m in zip(df["source"], df["member"])}
    assert got == WANT


def test_batch_to_standard_output(tree):
    proc = _cli("batch", str(tree), "--jobs", "1")
    rows = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert {r["source"][len(str(tree)) + 1:] for r in rows} == {
        "bad\\xff.log", "latin.tar!/caf\\xe9.log", "latin.tar!/plain.log", "zz-after.log",
        "infozip.zip!/jöb.log", "infozip.zip!/bad\\xff.log"}


@pytest.mark.parametrize("fmt", ["json", "csv", "md", "parquet"])
def test_scan_out_with_a_non_utf8_name(tree, tmp_path, fmt):
    out = tmp_path / f"s.{fmt}"
    proc = _cli(os.fsdecode(os.path.join(os.fsencode(tree), b"bad\xff.log")), "--format", fmt, "--out", str(out))
    assert proc.returncode == 1
    text = pd.read_parquet(out)["source"][0] if fmt == "parquet" else out.read_text(encoding="utf-8")
    assert "bad\\xff.log" in text.replace("\\\\", "\\")


def test_printable():
    assert printable("ok.log") == "ok.log"
    assert printable("bad\udcff.log") == "bad\\xff.log"
    assert printable("caf\udce9.log") == "caf\\xe9.log"
    assert printable("odd\ud800") == "odd\\ud800"
    printable("x\udcff" * 1000).encode("utf-8")
