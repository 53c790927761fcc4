"""CSV cells that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR at
the start) are neutralised in ``--format csv``, ``batch --out x.csv`` and ``summary -f csv``,
and read back unchanged by ``read_results`` (issue 12, section 3)."""
from __future__ import annotations

import csv
import io
import re

import pytest

from dllogscan.batch import read_results
from dllogscan.report.table import csv_cell, csv_value
from tests.hostile.clirun import cli, no_traceback

BUS = "RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error."
FORMULAS = ['=HYPERLINK("http://evil","x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\t=1", "\n=1", "'=1",
            " =1+1", "\u00a0@SUM(1)", "\u200b-2+3"]  # blanks first: an importer or a user may trim them


def formula_like(cell: str) -> bool:
    return len(cell) > 1 and re.match(r"[\s\u200b\ufeff]*[=+\-@\t\r\n]", cell) is not None


@pytest.mark.timeout(10)
@pytest.mark.parametrize("value", FORMULAS + ["-", "=", "plain", "", "a=b"])
def test_cell_round_trip(value):
    cell = csv_cell(value)
    assert not formula_like(cell)
    assert csv_value(cell) == value


@pytest.mark.timeout(10)
def test_a_carriage_return_is_a_newline_and_neutralised():
    assert csv_cell("\r=1") == "'\n=1" and csv_value(csv_cell("\r=1")) == "\n=1"


@pytest.fixture
def logs(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "=cmd.log").write_text(f"{FORMULAS[0]} {BUS}\nSLURMD_NODENAME=@node\n")
    (folder / "-x.log").write_text(f"{BUS}\n")
    (folder / " =HYPERLINK(1).log").write_text(f"{BUS}\n")
    return folder


def cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row]


@pytest.mark.timeout(60)
def test_scan_csv(logs):
    proc = cli(str(logs / "=cmd.log"), "-f", "csv", cwd=str(logs))
    no_traceback(proc)
    proc = cli("=cmd.log", "-f", "csv", cwd=str(logs))
    out = cells(proc.stdout.decode())
    assert "'=cmd.log" in out and "'" + FORMULAS[0] + " " + BUS in out
    assert not any(formula_like(c) for c in out)
    spaced = cells(cli(" =HYPERLINK(1).log", "-f", "csv", cwd=str(logs)).stdout.decode())
    assert "' =HYPERLINK(1).log" in spaced and not any(formula_like(c) for c in spaced)


@pytest.mark.timeout(60)
def test_batch_csv_and_summary(logs, tmp_path):
    out = tmp_path / "r.csv"
    proc = cli("batch", ".", "--out", str(out), cwd=str(logs))
    no_traceback(proc)
    assert not any(formula_like(c) for c in cells(out.read_text()))
    df = read_results(out)
    assert sorted(df["source"]) == ["./ =HYPERLINK(1).log", "./-x.log", "./=cmd.log"]
    assert f"{FORMULAS[0]} {BUS}" in set(df["evidence_text"])
    summary = cli("summary", str(out), "-f", "csv")
    no_traceback(summary)
    assert not any(formula_like(c) for c in cells(summary.stdout.decode()))


@pytest.mark.timeout(30)
def test_summary_csv_of_a_crafted_results_file():
    """A crosstab's columns are the results file's classes: header cells are neutralised too."""
    pd = pytest.importorskip("pandas")
    from dllogscan.batch.summary import render, summaries

    df = pd.DataFrame([{"status": "ok", "class": "=HYPERLINK(1)", "subclass": None, "node": "@n1", "job": None,
                        "signatures": "", "first_failure_time": None, "last_time": None, "first_time": None}])
    out = cells(render(summaries(df), "csv"))
    assert "'=HYPERLINK(1)" in out and not any(formula_like(c) for c in out)
