"""A batch's JSONL results read back by ``summary`` / ``read_results`` whatever a line holds: a
line that is no row is skipped, counted and named in words; a file with no row at all is one
``Error:`` line naming its file and line. Before, each shape below was Python's own text
(``'int' object is not iterable``, ``maximum recursion depth exceeded ...``), exit 2, or passed
unchecked (NaN, a path of null)."""
from __future__ import annotations

import codecs
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dllogscan.batch import read_results
from dllogscan.batch.results_jsonl import MAX_ROW
from dllogscan.batch.summary import summaries
from dllogscan.core.errors import UsageError
from tests.hostile.test_properties import LIMIT, RUN

ROW = {"schema_version": "1.0", "source": "n1/a.log", "path": "n1/a.log", "member": None, "status": "ok",
       "error": None, "lines": 1, "bytes": 80, "node": "n1", "job": "7", "notes": [],
       "diagnoses": [{"class": "A", "subclass": "bus-error", "title": "t", "confidence": 0.97,
                      "evidence": [{"line": 1, "text": "killed by signal: Bus error.", "signature": "A.x"}],
                      "fixes": [{"rank": 1, "title": "f", "why": "w", "commands": ["df -h /dev/shm"]}],
                      "signatures": ["A.x"], "facts": {"pid": "1"}, "count": 1, "method": "signatures",
                      "notes": []}]}
GOOD = json.dumps(ROW)


def _with(path: tuple, value) -> str:
    """``ROW`` as a JSON line with the field at ``path`` set to ``value``."""
    obj = json.loads(GOOD)
    inner = obj
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return json.dumps(obj)


def summary(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", "summary", str(path), "--format", "csv"],
                          capture_output=True, text=True, timeout=120)


BAD_LINES = [
    ("5", 'a row must be a JSON object with "path", "status", "diagnoses" and "error", not the number 5'),
    ("[1, 2]", "not a list"),
    ("null", "not null"),
    ("[" * 10_000 + "]" * 10_000, "JSON nested too deep"),
    (GOOD[:-1] + ', "x": ' + "[" * 10_000 + "]" * 10_000 + "}", "JSON nested too deep"),
    (_with(("diagnoses",), 5), '"diagnoses" must be a list of objects, not the number 5'),
    (_with(("diagnoses",), {"a": 1}), '"diagnoses" must be a list of objects, not an object'),
    (_with(("diagnoses",), [1]), '"diagnoses" must be a list of objects; item 1 is the number 1'),
    (_with(("diagnoses", 0, "confidence"), "high"),
     'diagnosis 1: "confidence" must be a number from 0 to 1, not the text "high"'),
    (GOOD.replace('"confidence": 0.97', '"confidence": NaN'), '"confidence" must be a number from 0 to 1, not NaN'),
    (_with(("diagnoses", 0, "evidence"), [{"line": "x"}]), 'diagnosis 1: evidence 1: no "text" field'),
    (_with(("diagnoses", 0, "facts"), [1]), '"facts" must be an object of text, number, true/false or null values, '
                                             'not a list'),
    (_with(("diagnoses", 0, "facts"), {"pid": {"a": 1}}), '"facts" must be an object of text, number'),
    (_with(("path",), None), '"path" must be text, not null'),
    (_with(("node",), [1]), '"node" must be text, a number or null, not a list'),
    (_with(("lines",), "many"), '"lines" must be a whole number (0 or more), not the text "many"'),
    # a key given twice: the last counts
    (GOOD[:-1] + ', "diagnoses": 7}', '"diagnoses" must be a list of objects, not the number 7'),
    ('{"source": "a.log", "diagnoses": [], "error": null}',
     "missing fields path, status (a scan's own output is not one)"),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("line, why", BAD_LINES)
def test_a_line_that_is_no_row_is_skipped_counted_and_named(tmp_path, line, why):
    path = tmp_path / "results.jsonl"
    path.write_text(f"{GOOD}\n{line}\n{GOOD}\n")
    table = read_results(path)
    assert len(table) == 2 and table.attrs["skipped"] == 1 and table.attrs["fault"].startswith("line 2")
    assert why in table.attrs["fault"]
    alone = tmp_path / "alone.jsonl"
    alone.write_text(f"{line}\n")
    with pytest.raises(UsageError) as err:
        read_results(alone)
    assert str(err.value).startswith(f"{alone}: not a results file of `dllogscan batch --out`: line 1")
    assert why in str(err.value)


@pytest.mark.timeout(120)
def test_summary_says_how_many_lines_it_skipped_and_why_the_first(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(f"{GOOD}\n5\n".encode() + b"\xff\xfe garbage\n" + f"{GOOD}\n".encode())
    proc = summary(path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == (f"skipped: {path}: 2 lines are not rows of a batch (the first, line 2: a row must be a "
                           'JSON object with "path", "status", "diagnoses" and "error", not the number 5); '
                           "summarized the 2 rows\n")
    assert "scanned,2\n" in proc.stdout


@pytest.mark.timeout(120)
@pytest.mark.parametrize("data, why", [
    (bytes(range(128, 256)) * 4, "line 1 is not UTF-8 text (binary data?)"),
    (b"\x00" * 100 + b"\n", "line 1 is not a JSON object"),
    (b"[" * 10_000 + b"\n", "line 1: JSON nested too deep"),
])
def test_a_file_with_no_row_is_one_error_line_naming_file_and_line(tmp_path, data, why):
    path = tmp_path / "results.jsonl"
    path.write_bytes(data + b"\n")
    proc = summary(path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"Error: {path}: not a results file of `dllogscan batch --out`: {why}\n"


@pytest.mark.timeout(120)
def test_a_line_longer_than_any_row_is_skipped_without_being_held(tmp_path):
    path = tmp_path / "results.jsonl"
    with open(path, "wb") as fh:
        fh.write(f"{GOOD}\n".encode())
        fh.write(b'{"path": "' + b"x" * (MAX_ROW + 10) + b'"}\n')
        fh.write(f"{GOOD}\n".encode())
    table = read_results(path)
    assert len(table) == 2 and table.attrs["skipped"] == 1
    assert table.attrs["fault"] == "line 2 is longer than 16 MiB: no batch writes such a row"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("encode", [
    lambda text: codecs.BOM_UTF8 + text.encode(),  # a Windows editor, PowerShell 7's Out-File -Encoding utf8BOM
    lambda text: text.encode("utf-16"),  # Windows PowerShell 5.1's `>`: a BOM, then UTF-16-LE
    lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    lambda text: text.encode("utf-32"),
])
def test_a_byte_order_mark_and_utf16_are_read(tmp_path, encode):
    """Before: a BOM was "line 1 is not a JSON object", UTF-16 Python's codec error."""
    path = tmp_path / "results.jsonl"
    path.write_bytes(encode(f"{GOOD}\r\n{GOOD}\r\n"))
    table = read_results(path)
    assert len(table) == 2 and not table.attrs["skipped"] and list(table["node"]) == ["n1", "n1"]
    assert summary(path).stderr == ""


@pytest.mark.timeout(120)
def test_a_fact_that_is_a_number_or_a_flag_keeps_its_row(tmp_path):
    """A batch writes facts as text; a row whose fact is a number, a flag or null (another tool's,
    or a later version's) is still read and summarized, not skipped."""
    path = tmp_path / "results.jsonl"
    facts = ({"pid": 363}, {"pin_memory": True, "time": None}, {"rss_kb": 1.5e6, "time": True})
    path.write_text("".join(_with(("diagnoses", 0, "facts"), f) + "\n" for f in facts), encoding="utf-8")
    table = read_results(path)
    assert len(table) == 3 and not table.attrs["skipped"]
    summaries(table)


def test_a_cut_inside_a_character_is_the_cut_row(tmp_path):
    """A batch killed inside a row's multi-byte character: the cut row, not binary data."""
    path = tmp_path / "results.jsonl"
    row = GOOD.replace('"node": "n1"', '"node": "nœud"').encode()
    path.write_bytes(f"{GOOD}\n".encode() + row[:row.index("œ".encode()) + 1])
    table = read_results(path)
    assert len(table) == 1 and table.attrs["cut"] and not table.attrs["skipped"]


FIELDS = [("path",), ("status",), ("error",), ("diagnoses",), ("member",), ("lines",), ("node",), ("rank",),
          ("first_time",), ("notes",), ("diagnoses", 0), ("diagnoses", 0, "class"), ("diagnoses", 0, "subclass"),
          ("diagnoses", 0, "confidence"), ("diagnoses", 0, "evidence"), ("diagnoses", 0, "evidence", 0),
          ("diagnoses", 0, "evidence", 0, "line"), ("diagnoses", 0, "facts"), ("diagnoses", 0, "facts", "time"),
          ("diagnoses", 0, "fixes", 0), ("diagnoses", 0, "fixes", 0, "commands"), ("diagnoses", 0, "signatures"),
          ("diagnoses", 0, "count"), ("diagnoses", 0, "notes")]
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=12),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=8)


@LIMIT
@RUN
@given(st.sampled_from(FIELDS), JSON_VALUES)
def test_any_value_in_any_field_is_a_row_or_a_skipped_line(field, value):
    """Whatever JSON value stands in any field a summary reads: the row is read and summarized, or
    skipped and named; never an exception of Python's own."""
    with tempfile.TemporaryDirectory() as folder:
        _one_row_or_skipped(Path(folder) / "results.jsonl", field, value)


def _one_row_or_skipped(path: Path, field: tuple, value) -> None:
    path.write_text(f"{GOOD}\n{_with(field, value)}\n", encoding="utf-8", errors="surrogatepass")
    table = read_results(path)
    assert len(table) + table.attrs["skipped"] == 2
    assert table.attrs["skipped"] == 0 or table.attrs["fault"].startswith("line 2")
    summaries(table)
