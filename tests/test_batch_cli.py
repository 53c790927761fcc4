"""``dllogscan batch`` and ``dllogscan summary`` as a user runs them."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.batch_data import BUS, build
from tests.conftest import process_group
from tests.test_batch import SIGS


def cli(*args: str) -> subprocess.CompletedProcess:
    sig_args = [a for s in SIGS for a in ("-s", s)] + ["--no-default-signatures", "--classifier", "off"] if args[0] == "batch" else []
    return subprocess.run([sys.executable, "-m", "dllogscan", *args, *sig_args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    paths, expected = build(root)
    out = root / "results.parquet"
    proc = cli("batch", *paths, "--out", str(out), "--jobs", "2")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"{len(expected)} sources, ")
    return out, paths, expected


def test_jsonl_on_standard_output(results):
    _, paths, expected = results
    proc = cli("batch", *paths, "--jobs", "1")
    assert proc.returncode == 1 and proc.stderr == ""
    objs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert sorted(o["source"] for o in objs) == sorted(expected)


def test_summary_tables(results):
    out, _, _ = results
    proc = cli("summary", str(out), "--format", "md")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    for title in ("## class x node", "## class x day", "## top signatures", "## jobs per class"):
        assert title in text
    assert "| node07 | 0 | 3 |" in text  # node07: the getitem pod, the cross-file OOM pod, its kernel log
    assert "| B / oom | 3 |" in text     # jobs 1001, 1002, 1006 (its .out and .err count once)
    assert "| unreadable | 5 |" in text
    assert "| links not followed | 3 |" in text  # the folder link, the tar's symbolic and hard links
    csv_out = cli("summary", str(out), "--format", "csv").stdout
    assert "# class x day" in csv_out and "2026-11-30" in csv_out
    rich_out = cli("summary", str(out)).stdout
    assert "class x node" in rich_out and "node01" in rich_out


def test_summary_is_the_same_whatever_order_the_rows_came_in(results, tmp_path):
    """Rows are written as they finish, in another order on each run (and on Dask): equal counts
    in "top signatures" and "jobs per class" are in name order. Before, in the rows' order: the
    same 10 000 rows as JSONL and as CSV gave two summaries."""
    _, paths, _ = results
    rows = cli("batch", *paths, "--jobs", "1").stdout.splitlines(keepends=True)
    forward, backward = tmp_path / "f.jsonl", tmp_path / "b.jsonl"
    forward.write_text("".join(rows))
    backward.write_text("".join(reversed(rows)))
    first, second = (cli("summary", str(f), "--format", "csv").stdout for f in (forward, backward))
    assert first == second and "# top signatures" in first
    verdicts = first.split("# jobs per class\nverdict,jobs\n")[1].splitlines()
    counted = [(-int(v.rsplit(",", 1)[1]), v.rsplit(",", 1)[0]) for v in verdicts if v]
    assert counted == sorted(counted) and len(counted) > 2


def test_summary_csv_has_no_row_number_column(results):
    """Before: ``,status,sources`` / ``0,scanned,25``: pandas' index as a nameless first column."""
    out, _, _ = results
    csv_out = cli("summary", str(out), "--format", "csv").stdout
    assert "# sources\nstatus,sources\nscanned," in csv_out
    assert "# top signatures\nsignature,sources\n" in csv_out and "# jobs per class\nverdict,jobs\n" in csv_out
    assert "# class x node\nnode," in csv_out  # a crosstab keeps its labels
    assert not re.search(r"^(,|\d+,[^\d])", csv_out, re.M)  # no ``,status`` header, no ``0,scanned`` row


@pytest.mark.parametrize("fmt, missing", [
    ("csv", "missing columns status, node, job, first_failure_time, ..."),
    ("parquet", "missing columns status, node, job, first_failure_time, ..."),
    ("jsonl", "line 1: missing fields path, status"),
])
def test_summary_of_a_scans_output_names_what_is_missing(tmp_path, fmt, missing):
    """Before: ``Error: s.csv: cannot read results: 'diagnoses'`` (a KeyError's text)."""
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: DataLoader worker (pid 12) is killed by signal: Killed.\n")
    out = tmp_path / f"s.{fmt}"
    assert cli("scan", str(log), "--format", fmt, "--out", str(out)).returncode == 1
    proc = cli("summary", str(out))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr == (f"Error: {out}: not a results file of `dllogscan batch --out`: {missing} "
                           "(a scan's own output is not one)\n")


def test_summary_of_a_file_that_is_not_json_lines(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text("[1]\n")
    proc = cli("summary", str(out))
    assert proc.returncode == 2 and proc.stderr.endswith(
        'line 1: a row must be a JSON object with "path", "status", "diagnoses" and "error", not a list\n')


@pytest.mark.parametrize("data", [bytes(range(128, 256)) * 20, "status,class\nok,A\n".encode("utf-16")])
def test_summary_of_a_csv_file_that_is_not_utf8(tmp_path, data):
    """Before: ``cannot read results: 'utf-8' codec can't decode byte 0xff in position 0: ...``,
    Python's text, its position one of pandas' chunk."""
    out = tmp_path / "r.csv"
    out.write_bytes(data)
    proc = cli("summary", str(out))
    assert proc.returncode == 2 and proc.stderr == (
        f"Error: {out}: not a results file of `dllogscan batch --out`: it is not UTF-8 text "
        "(a binary file, or one saved in another encoding?)\n")


def test_summary_of_a_csv_file_with_a_byte_order_mark(results, tmp_path):
    _, paths, _ = results
    out = tmp_path / "rows.csv"
    assert cli("batch", *paths, "--out", str(out), "--jobs", "1").returncode == 1
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + out.read_bytes())
    proc = cli("summary", str(bom), "--format", "csv")
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == cli("summary", str(out), "--format", "csv").stdout


@pytest.mark.parametrize("args, message", [
    (["batch", "x", "--out", "r.xlsx"], "unknown output type"),
    # batch's rows are a table: before, md was "needs --out" and with --out r.csv "disagree"
    (["batch", "x", "--format", "md"], "unknown --format 'md'; choose one of jsonl, csv, parquet"),
    (["batch", "x", "--format", "xx", "--out", "r.csv"], "unknown --format 'xx'"),
    (["batch", "x", "--format", "csv"], "--format csv needs --out FILE"),
    (["batch", "x", "--engine", "spark"], "unknown engine"),
    # before: a traceback ending in distributed's ValueError, exit 1
    (["batch", "x", "--scheduler", "foo://h:1"], "Error: --scheduler foo://h:1: not a Dask scheduler address "
                                                 "(unknown address scheme 'foo'"),
    (["batch", "x", "--scheduler", "tcp://h:port"], "Error: --scheduler tcp://h:port: not a Dask scheduler address"),
    # standard output a pipe; before: "Error: lseek failed"
    (["batch", "x", "--out", "/dev/stdout", "--format", "parquet"],
     "Error: --out /dev/stdout: is not a regular file, and Parquet is written to one"),
    # before: the local engine, unasked
    (["batch", "x", "--scheduler", ""], "Error: --scheduler is empty (an unset shell variable?): give tcp://HOST:PORT"),
    (["summary", "missing.parquet"], "no such file"),
    # before: "examples: no such file" and "job.log: unknown output type; name it .parquet, .csv or .jsonl"
    (["summary", "examples"], "Error: examples: is a directory; give the results file a batch wrote"),
    (["summary", "examples/docker-shm-bus-error.log"],
     "Error: examples/docker-shm-bus-error.log: not a results file of `dllogscan batch --out`: "
     "its name ends in none of .parquet, .csv, .jsonl"),
    # before: "Error: [Errno 2] No such file or directory: '/nonexist/o.jsonl'"
    (["batch", "x", "--out", "/nonexist/o.jsonl"], "Error: --out /nonexist/o.jsonl: the folder /nonexist does not exist"),
    # before: exit 0, no row and no message
    (["batch", "nomatch/*.log"], "Error: no input files found in nomatch/*.log"),
])
def test_usage_errors_are_one_line(args, message, tmp_path):
    proc = cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("Error: ") and message in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("out", [None, "r.jsonl", "r.parquet"])
def test_an_empty_folder_is_a_usage_error(tmp_path, out):
    """Before: exit 0 with no row and no message. A folder holding only the batch's own output
    has no input either."""
    (tmp_path / "empty").mkdir()
    args = ["--out", str(tmp_path / "empty" / out)] if out else []
    proc = cli("batch", str(tmp_path / "empty"), *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"Error: no input files found in {tmp_path / 'empty'}\n"


@pytest.mark.parametrize("out", ["r.jsonl", "r.csv", "r.parquet"])
def test_no_input_leaves_no_output_behind(tmp_path, out):
    """Before: ``batch 'nomatch/*.log' --out r.jsonl`` said "no input files" and left an empty
    r.jsonl (an earlier r.jsonl emptied). Now a new output is not created and an old one is kept."""
    target = tmp_path / out
    proc = cli("batch", str(tmp_path / "nomatch" / "*.log"), "--out", str(target))
    assert proc.returncode == 2 and "no input files found" in proc.stderr
    assert not target.exists()
    target.write_bytes(b"earlier results\n")
    proc = cli("batch", str(tmp_path / "nomatch" / "*.log"), "--out", str(target))
    assert proc.returncode == 2 and target.read_bytes() == b"earlier results\n"


def test_missing_path_is_a_row_not_a_crash(tmp_path):
    proc = cli("batch", str(tmp_path / "nope.log"))
    assert proc.returncode == 3
    obj = json.loads(proc.stdout)
    assert obj["error"].endswith("no such file or directory") or "cannot read" in obj["error"]


def test_links_alone_are_neither_read_nor_unreadable(tmp_path):
    """A folder of clean logs with a link to a folder (a run's ``latest``): nothing found is exit 0,
    the link a row of its own, counted apart."""
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "train.log").write_text("epoch 1 step 3 loss=0.5\n")
    (tmp_path / "latest").symlink_to(tmp_path / "run1", target_is_directory=True)
    out = tmp_path / "rows.csv"
    proc = cli("batch", str(tmp_path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "0 unreadable or skipped, 1 links not followed" in proc.stderr
    rows = json.loads(cli("batch", str(tmp_path)).stdout.splitlines()[0])
    assert rows["status"] == "link" and rows["error"].endswith("(links are not followed); not scanned")


def _typer_batch(*args: str) -> subprocess.CompletedProcess:
    """The same batch through the typer command (what the fast path stands in for)."""
    sig_args = [a for s in SIGS for a in ("-s", s)] + ["--no-default-signatures", "--classifier", "off"]
    code = "import sys; from dllogscan.cli.app import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, "batch", *args, *sig_args], capture_output=True, text=True,
                          timeout=120)


def test_fast_batch_is_the_typer_command_without_typer(results, tmp_path):
    """``dllogscan batch`` parses its options without typer (its start is a tenth of a second
    shorter) and gives the same rows, stderr and exit status as the typer command."""
    _, paths, _ = results
    fast, slow = cli("batch", *paths, "--jobs", "1"), _typer_batch(*paths, "--jobs", "1")
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr) == (1, "")
    assert sorted(fast.stdout.splitlines()) == sorted(slow.stdout.splitlines())
    for args in (["x", "--format", "md"], ["x", "--engine", "spark"], ["x", "--min-confidence", "7"]):
        fast, slow = cli("batch", *args), _typer_batch(*args)
        assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr), args
        assert fast.returncode == 2 and fast.stderr.startswith("Error: ")
    code = ("import sys; from dllogscan.cli.fast import main\n"
            "try:\n    main(['batch', sys.argv[1], '--jobs', '1'])\n"
            "except SystemExit as e:\n    print(e.code, sorted(m for m in ('typer', 'pydantic', 'rich') if m in sys.modules),"
            " file=sys.stderr)")
    (tmp_path / "job.log").write_text("step 1\n")  # a folder with no file is a usage error (exit 2)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.stderr.strip() == "0 []", proc.stderr


@pytest.mark.parametrize("args", [["--help"], ["x", "--jobs", "many"], ["x", "--bogus"]])
def test_help_and_bad_values_still_go_to_typer(args):
    proc = cli("batch", *args)
    if args == ["--help"]:
        assert proc.returncode == 0 and "--prefilter" in proc.stdout and "Examples" in proc.stdout
    else:
        assert proc.returncode == 2 and proc.stdout == "" and proc.stderr  # typer's usage error


def test_format_names_the_rows_of_an_out_with_another_extension(tmp_path):
    """``--format csv --out rows.txt`` writes CSV, as ``scan`` does. Before: "rows.txt: unknown
    output type; name it .parquet, .csv or .jsonl", the --format given ignored."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "job.log").write_text(BUS)
    out = tmp_path / "rows.txt"
    proc = cli("batch", str(tmp_path / "in"), "--format", "csv", "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    assert out.read_text().startswith("source,member,")
    proc = cli("batch", str(tmp_path / "in"), "--format", "csv", "--out", str(tmp_path / "rows.md"))
    assert proc.returncode == 2 and "disagree" in proc.stderr  # an extension of another format still contradicts


#: what the generated cluster's names and first lines hold that a shared table must not
CLUSTER_NAMES = re.compile(r"node0\d|\b[123]00\d\b|trainer-[01]|\bml_")


@pytest.fixture(scope="module")
def redacted(results, tmp_path_factory):
    """The same batch, ``--jobs 1`` (rows in one order), plain and ``--redact``, in each format."""
    _, paths, _ = results
    root = tmp_path_factory.mktemp("redact")
    out = {}
    for fmt in ("jsonl", "csv", "parquet"):
        for redact in ((), ("--redact",)):
            path = root / f"{'r' if redact else 'p'}.{fmt}"
            proc = cli("batch", *paths, "--jobs", "1", "--out", str(path), *redact)
            assert proc.returncode == 1, proc.stderr
            out[fmt, bool(redact)] = path
    return out


def _table(path):
    import pandas as pd

    from dllogscan.batch import read_results

    return read_results(path).astype(object).where(lambda df: pd.notna(df), None)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_redact_hides_the_names_in_every_format_with_one_numbering(redacted, fmt):
    """Before: batch had no --redact (typer: 'No such option'), so a table shared outside the
    cluster held its node, pod, namespace and job names in every column."""
    path = redacted[fmt, True]
    text = path.read_text(errors="replace") if fmt != "parquet" else _table(path).to_csv()
    assert not CLUSTER_NAMES.search(text), CLUSTER_NAMES.search(text)
    plain, hidden = _table(redacted[fmt, False]), _table(path)
    assert len(plain) == len(hidden)
    for col, kind in (("node", "host"), ("job", "job"), ("pod", "pod"), ("namespace", "namespace")):
        pairs = {(a, b) for a, b in zip(plain[col], hidden[col]) if a is not None}
        assert pairs, col
        assert all(re.fullmatch(rf"<{kind}-\d+>", b) for _, b in pairs), pairs
        # one value, one placeholder, in every row it is in: a mapping each way
        assert len({a for a, _ in pairs}) == len({b for _, b in pairs}) == len(pairs), pairs
    for col in ("class", "subclass", "status", "signatures", "confidence", "lines", "rank", "first_time"):
        assert list(plain[col]) == list(hidden[col]), col
    rows = hidden.to_dict("records")
    cross = [r for r in rows if r["method"] == "cross-file"]
    assert cross and all(not CLUSTER_NAMES.search(str(r["cross_file_source"])) for r in cross)
    pod_rows = [r for r in rows if r["kind"] == "pod"]
    assert all(r["member"].startswith(f"{r['node']}/var/log/pods/{r['namespace']}_{r['pod']}_") for r in pod_rows), pod_rows


def test_redacted_links_hide_their_target_before_its_own_row(redacted):
    """A link's row comes before its target's row: the target's names are learnt from it."""
    rows = [json.loads(line) for line in redacted["jsonl", True].read_text().splitlines()]
    links = [r for r in rows if r["status"] == "link" and "link to a directory" not in r["error"]]
    assert len(links) == 2
    pod = next(r for r in rows if r["pod"] and r["member"].endswith("/trainer/0.log") and r["diagnoses"]
               and r["diagnoses"][0]["subclass"] == "getitem")
    for link in links:
        assert pod["member"] in link["error"], (link["error"], pod["member"])


def test_summary_of_a_redacted_table_counts_as_the_plain_one(redacted):
    plain = cli("summary", str(redacted["parquet", False]), "--format", "md").stdout
    hidden = cli("summary", str(redacted["parquet", True]), "--format", "md").stdout
    assert "| `<host-" in hidden and not CLUSTER_NAMES.search(hidden)  # a code span: no HTML tag on GitHub

    def counts(text: str) -> dict[str, list[str]]:
        """Each table's rows, a node's own name left out (the order of nodes too)."""
        tables = {}
        for part in text.split("## ")[1:]:
            title, _, body = part.partition("\n")
            rows = [line for line in body.splitlines() if line.startswith("| ")]
            if title == "class x node":
                rows = [re.sub(r"^\| [^|]*\|", "|", line) for line in rows]
            tables[title] = sorted(rows)
        return tables

    assert counts(plain) == counts(hidden)
    assert "| B / oom | 3 |" in hidden


def test_redact_hides_a_node_whose_folder_name_is_shown_with_escapes(tmp_path):
    """A folder name with an undecodable byte and a control is written escaped (``gpu\\xff07``)
    while the node read off it is the raw text: both are the one placeholder."""
    folder = bytes(tmp_path) + b"/nodes/gpu\xff07\x1b]0;x\x07/var"
    os.makedirs(folder)
    with open(folder + b"/slurm-4242.out", "wb") as f:
        f.write(BUS.encode())
    proc = cli("batch", str(tmp_path), "--redact")
    assert proc.returncode == 1, proc.stderr
    (row,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert row["node"] == "<host-1>" and row["job"] == "<job-1>"
    assert row["source"] == f"{tmp_path}/nodes/<host-1>/var/slurm-<job-1>.out"


def test_summary_lists_nodes_in_counting_order():
    """A crosstab orders its nodes by their characters (``gpu10`` before ``gpu2``, and so a redacted
    table's ``<host-10>`` before ``<host-2>``); the summary lists them as people count."""
    import pandas as pd

    from dllogscan.batch.summary import summaries

    nodes = ["gpu10", "gpu2", "<host-10>", "<host-2>", "gpu1"]
    df = pd.DataFrame({"node": nodes, "class": ["A"] * 5, "subclass": [None] * 5, "status": ["ok"] * 5,
                       "signatures": ["A.x"] * 5, "job": [None] * 5, "first_failure_time": [None] * 5,
                       "first_time": [None] * 5, "last_time": [None] * 5})
    assert list(summaries(df)["class x node"].index) == ["<host-2>", "<host-10>", "gpu1", "gpu2", "gpu10"]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_sigterm_leaves_a_finished_output_and_says_it_is_partial(tmp_path, suffix):
    """``kill``/``timeout``/a scheduler's cancel end a batch as Ctrl-C does: exit 130, the rows
    finished so far in a valid file (a Parquet file with its footer) and a line saying so.
    Before, SIGTERM killed the process: exit 143, nothing said, a Parquet file without a footer."""
    import signal

    logs = [tmp_path / f"{i}.log" for i in range(3)]
    for log in logs:
        log.write_text(BUS)
    slow = tmp_path / "slow.log"
    slow.write_text("step 1\n")
    out = tmp_path / f"rows{suffix}"
    code = (
        "import sys, time\n"
        "from dllogscan.batch import engines\n"
        "real = engines.iter_chunk\n"
        "def slow(chunk, config):\n"
        "    for path in chunk:\n"
        "        if path.endswith('slow.log'):\n"
        "            print('started', flush=True)\n"
        "            time.sleep(60)\n"
        "        yield from real([path], config)\n"
        "engines.iter_chunk = slow\n"
        "from dllogscan.cli.fast import main\n"
        "main(['batch', *sys.argv[2:], '--jobs', '1', '--out', sys.argv[1], '--no-progress'])\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out), *map(str, logs), str(slow)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "started\n"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err)
    assert err == f"partial: {out} holds the 3 rows finished before it stopped\nError: interrupted\n", err
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        sources = pq.read_table(out).column("source").to_pylist()
    else:
        import csv

        sources = [row["source"] for row in csv.DictReader(out.open())]
    assert sorted(sources) == sorted(map(str, logs))


def test_ctrl_c_ends_a_dask_batch_with_no_traceback_from_its_workers(tmp_path):
    """Ctrl-C at a terminal reaches the whole process group, the LocalCluster's workers too: they
    start with SIGINT ignored, so the batch ends in one "interrupted" (exit 130) and a finished
    output. Before, each worker printed a KeyboardInterrupt traceback (60-90 lines)."""
    import signal

    pytest.importorskip("dask.distributed")
    for i in range(3):
        (tmp_path / f"{i}.log").write_text(BUS)
    out = tmp_path / "rows.parquet"
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"  # a background job ignores it
        "from dllogscan.batch import writers\n"
        "real = writers.Writer.write\n"
        "def write(self, record):\n"
        "    real(self, record)\n"
        "    if self.count == 1:\n"
        "        print('started', flush=True)\n"
        "        time.sleep(60)\n"
        "writers.Writer.write = write\n"
        "from dllogscan.cli.fast import main\n"
        "main(['batch', sys.argv[1], '--engine', 'dask', '--jobs', '1', '--out', sys.argv[2], '--no-progress'])\n")
    proc = process_group(code, tmp_path, out)
    assert proc.stdout.readline() == "started\n"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err == f"partial: {out} holds the 1 row finished before it stopped\nError: interrupted\n", err


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_summary_of_a_results_file_cut_inside_a_row(results, tmp_path, suffix):
    """A batch killed while it wrote a row (SIGKILL, the OOM killer) leaves a last line without
    its newline: summary counts the whole rows before it and says so. Before, a JSONL file was
    "not a results file" (exit 2) and a CSV file's cut row was counted as scanned. A last row
    that is whole without its newline is still a row, with nothing said."""
    _, paths, expected = results
    out = tmp_path / f"rows{suffix}"
    assert cli("batch", *paths, "--out", str(out), "--jobs", "1").returncode == 1
    data = out.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(data[:last + (len(data) - last) // 2])  # half of the last row
    proc = cli("summary", str(cut), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == (f"partial: {cut} ends inside a row (its batch was killed?); "
                           f"summarized the {len(expected) - 1} whole rows before it\n")
    assert _sources(proc.stdout) == len(expected) - 1
    whole = tmp_path / f"whole{suffix}"
    whole.write_bytes(data.rstrip(b"\n"))
    proc = cli("summary", str(whole), "--format", "csv")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout == cli("summary", str(out), "--format", "csv").stdout and _sources(proc.stdout) == len(expected)


def _sources(summary_csv: str) -> int:
    """How many rows a summary's ``sources`` table counts (each row has one status)."""
    block = summary_csv.split("# sources\nstatus,sources\n")[1].split("\n#")[0]
    counts = dict(line.rsplit(",", 1) for line in block.splitlines() if line)
    return sum(int(n) for status, n in counts.items() if status != "with a failure")


def test_jobs_past_four_a_core_are_held_there_and_said_so(tmp_path):
    """``--jobs`` is a ceiling: a batch forks workers as its chunks need them, and never more
    than four per usable core (before, ``--jobs 600`` over 23 files forked 600: 2.5-5 s)."""
    for i in range(23):
        (tmp_path / f"{i}.log").write_text(BUS)
    ceiling = 4 * len(os.sched_getaffinity(0))
    proc = cli("batch", str(tmp_path), "--jobs", "100000")
    assert proc.returncode == 1 and len(proc.stdout.splitlines()) == 23
    assert proc.stderr == f"--jobs 100000: held at {ceiling} worker processes (4 per usable core)\n"
    proc = cli("batch", str(tmp_path), "--jobs", str(ceiling))
    assert proc.returncode == 1 and proc.stderr == ""


def _batch_with_env(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", "batch", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **env})


@pytest.fixture
def listener():
    """A local port that takes connections (the kernel's backlog) and never says a word, as a
    firewall's black hole or a stuck proxy does; ``serve(data)`` answers each with ``data``."""
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held: list[socket.socket] = []

    def serve(data: bytes) -> None:
        def answer():
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    return
                held.append(conn)
                conn.sendall(data)

        threading.Thread(target=answer, daemon=True).start()

    yield f"tcp://127.0.0.1:{sock.getsockname()[1]}", serve
    sock.close()
    for conn in held:
        conn.close()


def test_a_scheduler_that_never_answers_is_one_line_within_the_timeout(listener, tmp_path):
    """Before: Dask bounds the connect but not its handshake, so a port that took the connection
    and said nothing held the batch until the peer closed (60 s against a listener that closed
    then); ``--scheduler tcp://10.255.255.1:8786`` waited 20 s. Now the whole start has
    DLLOGSCAN_SCHEDULER_TIMEOUT seconds (default 5)."""
    import time

    pytest.importorskip("dask.distributed")
    address, _ = listener
    (tmp_path / "a.log").write_text(BUS)
    start = time.monotonic()
    proc = _batch_with_env({"DLLOGSCAN_SCHEDULER_TIMEOUT": "1"}, str(tmp_path), "--scheduler", address)
    assert time.monotonic() - start < 30
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"Error: --scheduler {address}: no Dask scheduler answered within 1 s; "
                           "DLLOGSCAN_SCHEDULER_TIMEOUT=SECONDS waits longer\n")


def test_a_scheduler_address_where_something_else_answers_is_one_line(listener, tmp_path):
    """Before: an HTTP server on the port was a traceback (numpy's MemoryError for a frame of
    3 EiB read off "HTTP/1.1"), exit 1."""
    pytest.importorskip("dask.distributed")
    address, serve = listener
    serve(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    (tmp_path / "a.log").write_text(BUS)
    proc = _batch_with_env({"DLLOGSCAN_SCHEDULER_TIMEOUT": "5"}, str(tmp_path), "--scheduler", address)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr.startswith(f"Error: --scheduler {address}: ") and proc.stderr.count("\n") == 1
    assert "not a Dask scheduler" in proc.stderr or "no Dask scheduler answered" in proc.stderr


@pytest.mark.parametrize("value", ["abc", "0", "-3", "inf", "nan"])
def test_a_scheduler_timeout_that_is_not_seconds_is_a_usage_error(value, tmp_path):
    pytest.importorskip("dask.distributed")
    (tmp_path / "a.log").write_text(BUS)
    proc = _batch_with_env({"DLLOGSCAN_SCHEDULER_TIMEOUT": value}, str(tmp_path), "--scheduler", "tcp://127.0.0.1:1")
    assert proc.returncode == 2 and proc.stderr == (
        f"Error: DLLOGSCAN_SCHEDULER_TIMEOUT={value}: give the seconds a --scheduler has to answer, a number above 0\n")


@pytest.mark.parametrize("fmt", [None, "jsonl"])
def test_out_dash_is_standard_output(fmt, tmp_path):
    """``--out -`` writes JSONL rows on standard output, as no ``--out`` does. Before, it was
    "Error: -: unknown output type", and with ``--format jsonl`` a file named "-" in the
    current folder."""
    (tmp_path / "a.log").write_text(BUS)
    args = [sys.executable, "-m", "dllogscan", "batch", "a.log", "--out", "-", *(["--format", fmt] if fmt else [])]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert (proc.returncode, proc.stderr) == (1, ""), proc.stderr
    assert [json.loads(line)["source"] for line in proc.stdout.splitlines()] == ["a.log"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.log"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_out_dash_takes_only_jsonl(fmt, tmp_path):
    (tmp_path / "a.log").write_text(BUS)
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "batch", "a.log", "--out", "-", "--format", fmt],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"Error: --format {fmt} needs --out FILE; standard output (no --out, or --out -) "
                           "takes jsonl\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.log"]


def test_an_out_name_with_controls_is_shown_escaped_in_every_line(tmp_path):
    """Before: a newline in --out's name cut the error at it ("Error: --out missing/r", the
    reason lost), and an escape sequence went raw to the terminal in the closing line and in
    summary's "partial:" line."""
    (tmp_path / "a.log").write_text(BUS)
    proc = cli("batch", str(tmp_path / "a.log"), "--out", str(tmp_path / "missing" / "r\n.jsonl"))
    assert proc.returncode == 2
    assert proc.stderr == f"Error: --out {tmp_path}/missing/r\\x0a.jsonl: the folder {tmp_path}/missing does not exist\n"
    out = tmp_path / "r\x1b[31m.jsonl"
    proc = cli("batch", str(tmp_path / "a.log"), "--out", str(out))
    assert proc.returncode == 1 and "\x1b" not in proc.stderr
    assert proc.stderr.endswith(f" -> {tmp_path}/r\\x1b[31m.jsonl\n"), proc.stderr
    out.write_bytes(out.read_bytes()[:-10])  # cut inside its row
    proc = cli("summary", str(out), "--format", "csv")
    assert proc.returncode == 0 and proc.stderr.startswith(f"partial: {tmp_path}/r\\x1b[31m.jsonl ends inside a row")
