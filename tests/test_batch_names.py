"""Values a batch reads off names (node, namespace, pod, container) are names: their control and
bidi characters come out as visible escapes in every output of ``batch`` and ``summary``, as the
README promises for file names, never raw (a node directory named ``n1\\x1b]0;PWNED\\x07`` used
to retitle the terminal of whoever ran ``summary``)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from dllogscan.batch.summary import render, summaries

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
NODE = "n1\x1b]0;PWNED\x07\x1b[2J"
CONTAINER = "c\x1b[31m\u202eevil"
LINE = "RuntimeError: DataLoader worker (pid 12) is killed by signal: Killed.\n"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    (root / "nodes" / NODE).mkdir(parents=True)
    (root / "nodes" / NODE / "job.log").write_text(LINE)
    pod = root / "default_trainer-0_0123abcd-4567" / CONTAINER
    pod.mkdir(parents=True)
    (pod / "0.log").write_text(LINE)
    return root


def _clean(text: str) -> bool:
    return not UNSAFE.search(text.replace("\n", "").replace("\r", ""))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_node_and_container_are_escaped_in_every_results_file(tree, tmp_path, suffix):
    out = tmp_path / f"r{suffix}"
    proc = cli("batch", str(tree), "--out", str(out), "--jobs", "1")
    assert proc.returncode == 1, proc.stderr
    if suffix == ".jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    elif suffix == ".csv":
        assert _clean(out.read_text())
        rows = pd.read_csv(out, dtype=str, keep_default_na=False).to_dict("records")
    else:
        rows = pd.read_parquet(out).to_dict("records")
    values = {r[k] for r in rows for k in ("node", "container") if isinstance(r[k], str) and r[k]}
    assert values == {"n1\\x1b]0;PWNED\\x07\\x1b[2J", "c\\x1b[31m\\u202eevil"}
    for fmt in ("md", "csv", "text"):
        shown = cli("summary", str(out), "-f", fmt)
        assert shown.returncode == 0 and _clean(shown.stdout), repr(shown.stdout)
        assert "PWNED" in shown.stdout


def test_jsonl_on_standard_output(tree):
    proc = cli("batch", str(tree), "--jobs", "1")
    assert proc.returncode == 1 and _clean(proc.stdout) and "n1\\\\x1b]0;PWNED" in proc.stdout


def test_a_results_file_with_raw_controls_is_summarized_escaped():
    """A results file written before the escaping (or by hand) is escaped when shown."""
    df = pd.DataFrame([{"status": "ok", "class": "B", "subclass": "oom\x1b[2J", "node": NODE, "job": "7\x07",
                        "signatures": "B.oom\u202e", "first_failure_time": None, "last_time": None,
                        "first_time": None}])
    tables = summaries(df)
    for fmt in ("md", "csv"):
        text = render(tables, fmt)
        assert _clean(text) and "n1\\x1b]0;PWNED" in text, repr(text)


def test_a_results_file_whose_class_is_rich_markup_is_shown_as_written(capsys):
    """The terminal tables read no markup from a results file: a crosstab's columns are its classes."""
    from dllogscan.batch.summary import print_rich

    df = pd.DataFrame([{"status": "ok", "class": "[/x]", "subclass": None, "node": "n1", "job": None,
                        "signatures": "", "first_failure_time": None, "last_time": None, "first_time": None}])
    print_rich(summaries(df))
    assert "[/x]" in capsys.readouterr().out
