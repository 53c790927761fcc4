"""Options before the path work; option values that would silently report nothing are refused;
``batch`` never scans the file it writes (issue 12, section 2)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.hostile.clirun import cli, no_traceback

BUS = "RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error.\n"
MY_SIG = '''
[[signature]]
id = "A.shm-full.my-runtime"
class = "A"
subclass = "shm-full"
title = "My runtime could not map a shared-memory batch"
role = "failure"
keywords = ["shm_map failed"]
pattern = \'\'\'shm_map failed for (?P<path>/dev/shm/\\S+)\'\'\'
weight = 0.9
examples = ["E shm_map failed for /dev/shm/torch_1_2", "[rank1]: E shm_map failed for /dev/shm/x", "> shm_map failed for /dev/shm/y"]
counter_examples = ["shm_map succeeded for /dev/shm/x", "map failed for /tmp/x"]
'''


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "job.log"
    path.write_text(BUS)
    return path


@pytest.mark.timeout(60)
@pytest.mark.parametrize("before", [["--format", "json"], ["-f", "json", "--exit-zero"], ["--redact", "-f", "json"],
                                    ["--min-confidence", "0.2", "-f", "json"]])
def test_options_before_the_path(log, before):
    proc = cli(*before, str(log))
    no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(proc.stdout)["diagnoses"][0]["class"] == "A"


@pytest.mark.timeout(60)
def test_signatures_before_the_path(tmp_path):
    sig = tmp_path / "my.toml"
    sig.write_text(MY_SIG)
    log = tmp_path / "job.log"
    log.write_text("E shm_map failed for /dev/shm/torch_9\n")
    proc = cli("-s", str(sig), str(log), "-f", "json")
    no_traceback(proc)
    assert json.loads(proc.stdout)["diagnoses"][0]["signatures"] == ["A.shm-full.my-runtime"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("args, message", [
    (["--min-confidence", "nan"], "--min-confidence must be between 0 and 1 (got nan)"),
    (["--min-confidence", "5"], "--min-confidence must be between 0 and 1 (got 5.0)"),
    (["--min-confidence", "-0.5", "--redact"], "--min-confidence must be between 0 and 1 (got -0.5)"),
    (["--max-bytes", "-5"], "--max-bytes must be a positive number of bytes (got -5)"),
    (["report", "--max-bytes", "0"], "--max-bytes must be a positive number of bytes (got 0)"),
    (["batch", "--min-confidence", "inf"], "--min-confidence must be between 0 and 1 (got inf)"),
])
def test_values_that_report_nothing_are_refused(log, args, message):
    proc = cli(*args, str(log))
    assert proc.returncode == 2
    assert no_traceback(proc).splitlines() == [f"Error: {message}"]


@pytest.mark.timeout(60)
def test_paste_refuses_a_bad_confidence():
    proc = cli("paste", "--min-confidence", "nan", stdin=BUS.encode())
    assert proc.returncode == 2 and no_traceback(proc).startswith("Error: --min-confidence")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["x.jsonl", "x.csv"])
def test_batch_does_not_scan_its_own_output(tmp_path, name):
    (tmp_path / "a.log").write_text(BUS)
    out = tmp_path / name
    for _ in range(2):  # the second run finds the first run's file in the folder
        proc = cli("batch", f"{tmp_path}/", "--out", str(out))
        no_traceback(proc)
        assert proc.returncode == 1
    assert no_traceback(proc).startswith("1 sources, 1 with failures")
    assert len(out.read_text().splitlines()) == (1 if name.endswith("jsonl") else 2)


def test_the_output_is_known_by_its_identity_under_any_name(tmp_path):
    """A link or a second hard link to the output names the same file: not a source either; a
    Parquet output that appears while the batch runs is caught from the next chunk on."""
    from dllogscan.batch.runner import without

    out = tmp_path / "rows.jsonl"
    out.write_text("")
    (tmp_path / "a.log").write_text(BUS)
    (tmp_path / "link.log").symlink_to(out)
    os.link(out, tmp_path / "hard.log")
    names = [str(tmp_path / n) for n in ("a.log", "link.log", "hard.log", "rows.jsonl", "missing.log")]
    assert list(without([names], [str(out)])) == [[names[0], names[-1]]]
    later = tmp_path / "later.parquet"
    chunks = iter([[str(later), names[0]], [str(later), names[0]]])
    kept = without(chunks, [str(later)])
    assert next(kept) == [str(later), names[0]]  # not there yet: nothing to leave out
    later.write_bytes(b"PAR1")
    assert next(kept) == [names[0]]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("named", ["the log", "the log and another", "their folder"])
def test_batch_refuses_an_output_that_is_a_link_to_an_input(tmp_path, named):
    """``--out`` a link to a log given (or under a folder given): before, the log was left out as
    the batch's own output and then written over with the rows (or, alone, "no input files found")."""
    log, other = tmp_path / "job.log", tmp_path / "a.log"
    log.write_text(BUS)
    other.write_text(BUS)
    out = tmp_path / "rows.jsonl"
    out.symlink_to(log)
    given = {"the log": [str(log)], "the log and another": [str(other), str(log)], "their folder": [str(tmp_path)]}[named]
    proc = cli("batch", *given, "--out", str(out))
    assert proc.returncode == 2
    assert no_traceback(proc).splitlines() == [
        f"Error: --out {out} (a link to {log}): is an input too ({given[-1]}); name another file"]
    assert log.read_text() == BUS


@pytest.mark.timeout(60)
def test_batch_whose_only_input_is_its_output_says_so(tmp_path):
    """A previous batch's rows given as the only input, and as ``--out``: before, "no input files
    found", as if the file were not there."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text("{}\n")
    proc = cli("batch", str(rows), "--out", str(rows))
    assert proc.returncode == 2
    assert no_traceback(proc).splitlines() == [
        f"Error: --out {rows}: the only input ({rows}) is this file; nothing else to scan; name another file"]


@pytest.mark.timeout(60)
def test_scan_many_does_not_read_its_own_output(tmp_path):
    import dllogscan

    (tmp_path / "a.log").write_text(BUS)
    for _ in range(2):
        df = dllogscan.scan_many([str(tmp_path)], out=tmp_path / "r.jsonl", jobs=1)
    assert list(df["source"]) == [str(tmp_path / "a.log")]


PREFILTERS = "auto, hyperscan, ahocorasick, python"
CLASSIFIERS = "auto, weak, on, off"


@pytest.fixture
def results(tmp_path, log):
    rows = tmp_path / "r.jsonl"
    assert cli("batch", str(log), "--out", str(rows)).returncode == 1
    return rows


@pytest.mark.timeout(300)
@pytest.mark.parametrize("args, message", [
    (["--prefilter", "foo"], f"unknown --prefilter 'foo'; choose one of {PREFILTERS}"),
    (["scan", "--prefilter", "foo", "-f", "json"], f"unknown --prefilter 'foo'; choose one of {PREFILTERS}"),
    (["--engine", "foo"], f"unknown --engine 'foo'; choose one of {PREFILTERS}"),
    (["--classifier", "foo"], f"unknown --classifier 'foo'; choose one of {CLASSIFIERS}"),
    (["batch", "--prefilter", "foo"], f"unknown --prefilter 'foo'; choose one of {PREFILTERS}"),
    (["batch", "--classifier", "foo"], f"unknown --classifier 'foo'; choose one of {CLASSIFIERS}"),
    (["batch", "--jobs", "-3"], "--jobs must be at least 1 (got -3)"),
    (["batch", "--jobs", "0", "--out", "{tmp}/r.csv"], "--jobs must be at least 1 (got 0)"),
    (["report", "--prefilter", "foo"], f"unknown --prefilter 'foo'; choose one of {PREFILTERS}"),
    (["paste", "--prefilter", "foo"], f"unknown --prefilter 'foo'; choose one of {PREFILTERS}"),
    (["k8s", "--classifier", "foo"], f"unknown --classifier 'foo'; choose one of {CLASSIFIERS}"),
    (["slurm", "--prefilter", "foo"], f"unknown --prefilter 'foo'; choose one of {PREFILTERS}"),
])
def test_unknown_option_values_are_refused_with_the_choices(tmp_path, log, args, message):
    """Like --format xml and --kernel foo: one Error line naming the allowed values, exit 2, before
    anything runs (these had run with the value ignored)."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    target = [] if args[0] == "paste" else ["42"] if args[0] in ("slurm", "k8s") else [str(log)]
    command = args[:1] if args[0] in ("scan", "batch", "report", "paste", "k8s", "slurm") else []
    proc = cli(*command, *target, *args[len(command):], stdin=BUS.encode())
    assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
    lines = [ln for ln in no_traceback(proc).splitlines() if not ln.startswith("dllogscan: --engine is deprecated")]
    assert lines == [f"Error: {message}"]
    assert not list(tmp_path.glob("r.csv"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("value", ["Z", "AB", ""])
def test_signatures_refuses_an_unknown_class(value):
    proc = cli("signatures", "--class", value)
    assert proc.returncode == 2 and proc.stdout == b""
    assert no_traceback(proc).splitlines() == [
        f"Error: unknown --class {value!r}; choose one of A, B, C, D, E, F, G, H, none"]


@pytest.mark.timeout(120)
def test_signatures_class_letters_and_h():
    """A lower-case letter is its class; H lists no entry (its verdicts are A-E ones that
    data/scope.toml moves), which the help and a line on stderr say."""
    upper, lower = cli("signatures", "--class", "A"), cli("signatures", "--class", "a")
    assert upper.returncode == lower.returncode == 0 and upper.stdout == lower.stdout
    assert {line.split()[1] for line in upper.stdout.decode().splitlines()} == {"A"}
    none = cli("signatures", "--class", "none")
    assert none.returncode == 0 and {line.split()[1] for line in none.stdout.decode().splitlines()} == {"none"}
    h = cli("signatures", "--class", "H")
    assert h.returncode == 0 and h.stdout == b""
    assert "scope.toml" in no_traceback(h) and len(h.stderr.splitlines()) == 1
    assert "scope.toml" in " ".join(cli("signatures", "--help").stdout.decode().split())


@pytest.mark.timeout(120)
@pytest.mark.parametrize("value", ["-1", "0"])
def test_summary_top_must_be_positive(results, value):
    proc = cli("summary", str(results), "--top", value)
    assert proc.returncode == 2 and proc.stdout == b""
    assert no_traceback(proc).splitlines() == [f"Error: --top must be at least 1 (got {value})"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("lead, out_of", [
    ([], lambda log: log),
    (["-f", "json"], lambda log: log),
    (["scan", "-f", "md"], lambda log: log.parent / "link.log"),  # a symbolic link to the input
    (["report"], lambda log: log.parent / "hard.log"),  # a second hard link to it
    (["-", "-f", "json"], lambda log: log),  # standard input redirected from it
    (["paste", "-"], lambda log: log),
])
def test_scan_refuses_to_overwrite_its_own_input(log, lead, out_of):
    """``batch`` leaves its output out of its sources; ``scan`` and ``report`` wrote over the log
    they had just read (``dllogscan same.log -f json --out same.log`` replaced it with JSON)."""
    (log.parent / "link.log").symlink_to(log)
    os.link(log, log.parent / "hard.log")
    out = out_of(log)
    command = lead[:1] if lead[:1] in (["scan"], ["report"], ["paste"]) else []
    inputs = [] if "-" in lead else [str(log)]
    args = [a for a in lead[len(command):] if command != ["paste"] or a != "-"]
    with open(log, "rb") as stdin:
        proc = subprocess.run([sys.executable, "-m", "dllogscan", *command, *inputs, *args,
                               "--out", str(out)], stdin=stdin, capture_output=True, timeout=120)
    name = "standard input" if "-" in lead else str(log)
    assert proc.returncode == 2
    assert no_traceback(proc).splitlines() == [f"Error: --out {out}: is an input too ({name}); name another file"]
    assert log.read_text() == BUS


@pytest.mark.timeout(60)
def test_scan_may_write_beside_its_input(log):
    out = log.parent / "new.json"
    proc = cli(str(log), "--out", str(out))
    assert proc.returncode == 1 and json.loads(out.read_text())["diagnoses"][0]["class"] == "A"
