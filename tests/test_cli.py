"""The CLI end to end, in subprocesses as a user runs it: formats, exit codes, bad input."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import dllogscan
from tests.conftest import FIXTURES, progress_lines

SCHEMA = json.loads((FIXTURES / "diagnosis.schema.json").read_text())
BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible\n"


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", *args], input=stdin,
                          capture_output=True, timeout=120)


@pytest.fixture
def failing_log(tmp_path) -> Path:
    p = tmp_path / "job.log"
    p.write_text(progress_lines(3000) + BUS)
    return p


def test_json_follows_the_contract(failing_log):
    proc = cli(str(failing_log), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["source"] == str(failing_log)
    assert doc["diagnoses"][0]["class"] == "A"
    assert doc["diagnoses"][0]["evidence"][0]["line"] == 3001


def test_nothing_found_is_exit_0_and_empty_list(tmp_path):
    p = tmp_path / "ok.log"
    p.write_text(progress_lines(100))
    proc = cli(str(p), "--format", "json")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["diagnoses"] == []


def test_stdin_and_gzip(failing_log):
    proc = cli("-", "--format", "json", stdin=failing_log.read_bytes())
    assert proc.returncode == 1 and json.loads(proc.stdout)["source"] == "-"
    proc = cli("-", "--format", "json", stdin=gzip.compress(failing_log.read_bytes()))
    assert json.loads(proc.stdout)["diagnoses"][0]["class"] == "A"


def test_stdin_cut_at_max_bytes(failing_log):
    proc = cli("-", "--max-bytes", "1000", "--format", "json", stdin=failing_log.read_bytes())
    assert proc.returncode == 3
    assert b"cut at 1000 bytes" in proc.stderr and b"Traceback" not in proc.stderr


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "absent.log", b"no such file"),
    (lambda d: d, b"is a directory"),
])
def test_unreadable_input_is_one_line_and_exit_2(tmp_path, make, message):
    proc = cli(str(make(tmp_path)))
    assert proc.returncode == 2
    assert message in proc.stderr and b"Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_several_inputs_none_readable_is_exit_2_and_one_readable_is_3(tmp_path, failing_log):
    """Before: two unreadable files gave 3 ("part of the input could not be read"), one gave 2."""
    absent, binary = tmp_path / "absent.log", tmp_path / "weights.bin"
    binary.write_bytes(bytes(range(256)) * 100)
    proc = cli(str(absent), str(binary))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 2
    healthy = tmp_path / "ok.log"
    healthy.write_text("epoch 1 step 10 loss 0.5\n")
    assert cli(str(absent), str(healthy)).returncode == 3


def test_binary_and_truncated_gzip(tmp_path):
    b = tmp_path / "weights.bin"
    b.write_bytes(bytes(range(256)) * 100)
    proc = cli(str(b))
    assert proc.returncode == 2 and b"looks binary" in proc.stderr and b"Traceback" not in proc.stderr
    g = tmp_path / "cut.log.gz"
    blob = gzip.compress((progress_lines(50000)).encode())
    g.write_bytes(blob[: len(blob) // 3])
    proc = cli(str(g))
    assert proc.returncode == 3 and b"truncated" in proc.stderr and b"Traceback" not in proc.stderr


def test_bad_signature_file_is_one_line(tmp_path, failing_log):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[signature]]\nid = "x"\n')
    proc = subprocess.run([sys.executable, "-m", "dllogscan", str(failing_log), "-s", str(bad)],
                          capture_output=True, timeout=60)
    assert proc.returncode == 2 and b"bad.toml" in proc.stderr and b"Traceback" not in proc.stderr


def test_unknown_format_is_usage_error(failing_log):
    proc = cli(str(failing_log), "--format", "yaml")
    assert proc.returncode == 2 and b"unknown format" in proc.stderr


@pytest.mark.parametrize("fmt", ["md", "csv", "jsonl", "text"])
def test_text_formats(failing_log, fmt):
    proc = cli(str(failing_log), "--format", fmt)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "363" in out or "bus-error" in out
    if fmt == "jsonl":
        assert json.loads(out.splitlines()[0])["diagnoses"][0]["class"] == "A"
    if fmt == "csv":
        assert out.splitlines()[0].startswith("source,member,class,subclass")


def test_parquet_needs_out(failing_log, tmp_path):
    assert cli(str(failing_log), "--format", "parquet").returncode == 2
    out = tmp_path / "r.parquet"
    assert cli(str(failing_log), "--format", "parquet", "--out", str(out)).returncode == 1
    import pandas as pd
    assert pd.read_parquet(out)["class"].tolist() == ["A"]


def test_api_and_cli_agree(failing_log):
    proc = cli(str(failing_log), "--format", "json")
    api = dllogscan.scan(failing_log).to_dict()
    assert json.loads(proc.stdout) == json.loads(json.dumps(api))


def test_api_accepts_text_and_bad_paths():
    r = dllogscan.scan(progress_lines(10) + BUS)
    assert r.diagnoses[0].cls == "A" and r.source == "text"
    r = dllogscan.scan(Path("/nonexistent/x.log"))
    assert "no such file" in r.error and not r.diagnoses


def test_plain_scan_imports_no_heavy_packages(failing_log):
    code = ("import sys, dllogscan; dllogscan.scan(sys.argv[1]);"
            "print(sorted(m for m in ('torch','pandas','sklearn','numpy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code, str(failing_log)], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stderr


def test_cli_runs_with_torch_absent(failing_log, tmp_path):
    blocker = tmp_path / "torch"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('torch is absent here')\n")
    env_code = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); from dllogscan.cli.app import main; main()"
    proc = subprocess.run([sys.executable, "-c", env_code, str(failing_log), "--format", "json"],
                          capture_output=True, timeout=60)
    assert proc.returncode == 1 and json.loads(proc.stdout)["diagnoses"][0]["class"] == "A"


def test_every_command_has_help_with_an_example():
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    from dllogscan.cli.app import _register_commands
    for name in sorted(_register_commands()):
        sub = subprocess.run([sys.executable, "-m", "dllogscan", name, "--help"], capture_output=True,
                             text=True, timeout=60)
        assert sub.returncode == 0, name
        assert "Example" in sub.stdout, f"`dllogscan {name} --help` has no example"


def test_the_command_list_shows_each_command_in_one_sentence():
    """With rich markup the list keeps a docstring's line breaks, so a first paragraph wrapped over
    two source lines broke mid-sentence there; such a command says it in ``short_help``."""
    import inspect

    from dllogscan.cli.app import _register_commands, app

    _register_commands()
    for info in app.registered_commands:
        text = info.short_help or inspect.cleandoc(info.help or info.callback.__doc__ or "").split("\n\n")[0]
        assert text and "\n" not in text, (info.name, text)


def test_version():
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == f"dllogscan {dllogscan.__version__}"


def _closed_reader(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """``dllogscan ARGS`` writing into a pipe whose reader is already gone (``| true`` that always wins the race)."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "dllogscan", *args], input=stdin, stdout=write_end,
                              stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("args", [[], ["-f", "md"], ["-f", "json"], ["scan"], ["explain"], ["report"],
                                  ["paste", "-f", "md"], ["signatures"], ["summary"], ["summary", "-f", "md"],
                                  ["batch"], ["--help"]])
@pytest.mark.parametrize("found", [False, True])
def test_a_reader_gone_early_is_exit_141_in_every_command(tmp_path, args, found):
    """README's exit codes: 141 when the reader of the output closed the pipe early, whatever the
    command and format (typer and rich had turned it into exit 1)."""
    log = tmp_path / "job.log"
    log.write_text(progress_lines(200) + (BUS if found else ""))
    rows = tmp_path / "r.jsonl"
    assert cli("batch", str(log), "--out", str(rows)).returncode == (1 if found else 0)
    command = args[0] if args and not args[0].startswith("-") else None
    target = {"summary": [str(rows)], "signatures": [], "paste": []}.get(command, [str(log)])
    if args == ["--help"]:
        target = []
    argv = ([command] if command else []) + target + [a for a in args if a != command]
    proc = _closed_reader(*argv, stdin=log.read_bytes())
    assert proc.returncode == 141, (argv, proc.stderr)
    assert proc.stderr.count(b"Error") == 0 and b"Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("name, read", [
    ("out.parquet", lambda p: __import__("pandas").read_parquet(p)["class"].tolist() == ["A"]),
    ("out.json", lambda p: json.loads(p.read_text())["diagnoses"][0]["class"] == "A"),
    ("out.jsonl", lambda p: json.loads(p.read_text().splitlines()[0])["diagnoses"][0]["class"] == "A"),
    ("out.csv", lambda p: p.read_text().startswith("source,member,class,subclass")),
    ("out.md", lambda p: "Class A" in p.read_text() and "╭" not in p.read_text()),
    ("out.txt", lambda p: "Class A" in p.read_text()),
])
@pytest.mark.parametrize("lead", [[], ["scan", "--redact"]])
def test_out_extension_picks_the_format_as_in_batch(failing_log, tmp_path, name, read, lead):
    """``--out r.parquet`` without ``--format`` writes Parquet, as ``batch --out`` does (it had
    written the terminal report into the file); an extension that names no format keeps text."""
    out = tmp_path / name
    proc = cli(*lead, str(failing_log), "-o", str(out))
    assert proc.returncode == 1 and proc.stdout == b"", proc.stderr
    assert read(out)


@pytest.mark.parametrize("lead", [[], ["scan", "--redact"], ["paste"], ["report"]])
def test_out_dash_is_standard_output(failing_log, tmp_path, lead):
    """``--out -`` writes to standard output as leaving out ``--out`` does, through the plain
    scan, typer's scan, paste and report alike; it had written a file named ``-`` in the
    current folder (batch's ``--out -`` is tested with batch)."""
    target = [] if lead == ["paste"] else [str(failing_log)]
    fmt = [] if lead == ["report"] else ["--format", "json"]
    proc = subprocess.run([sys.executable, "-m", "dllogscan", *lead, *target, "--out", "-", *fmt],
                          input=failing_log.read_bytes(), capture_output=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert not (tmp_path / "-").exists()
    if lead == ["report"]:
        assert "class A" in proc.stdout.decode()
    else:
        assert json.loads(proc.stdout)["diagnoses"][0]["class"] == "A"


def test_out_dash_is_no_parquet_file(failing_log, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dllogscan", str(failing_log), "-o", "-", "-f", "parquet"],
                          capture_output=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.decode().splitlines() == ["Error: --format parquet needs --out FILE"]
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("args, message", [
    (["-f", "json", "--out", "{tmp}/r.parquet"], "--format json and --out {tmp}/r.parquet (parquet) disagree; "
                                                 "leave out --format to write parquet"),
    (["scan", "-f", "text", "--out", "{tmp}/r.csv"], "--format text and --out {tmp}/r.csv (csv) disagree; "
                                                     "leave out --format to write csv"),
    (["batch", "-f", "jsonl", "--out", "{tmp}/r.csv"], "--format jsonl and --out {tmp}/r.csv (csv) disagree; "
                                                       "leave out --format to write csv"),
    (["paste", "-f", "md", "--out", "{tmp}/r.json"], "--format md and --out {tmp}/r.json (json) disagree; "
                                                     "leave out --format to write json"),
])
def test_a_format_that_out_contradicts_is_a_usage_error(failing_log, tmp_path, args, message):
    """scan, paste and batch alike (batch had ignored --format when --out was given)."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    command = args[:1] if args[0] in ("scan", "batch", "paste") else []
    target = [] if command == ["paste"] else [str(failing_log)]
    proc = cli(*command, *target, *args[len(command):], stdin=failing_log.read_bytes())
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == ["Error: " + message.replace("{tmp}", str(tmp_path))]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("r.")]


def test_scan_reads_every_extension_batch_writes():
    from dllogscan.batch.writers import FORMATS
    from dllogscan.report import SUFFIXES

    assert FORMATS.items() <= SUFFIXES.items()
    assert set(FORMATS) == {".parquet", ".pq", ".csv", ".jsonl", ".ndjson"}


@pytest.mark.parametrize("typo, command", [("sumary", "summary"), ("batc", "batch"), ("explian", "explain")])
def test_a_mistyped_command_is_named(tmp_path, typo, command):
    """Before: ``dllogscan sumary r.parquet`` scanned both words as logs ("sumary: no such file",
    then "r.parquet: looks like a Parquet file"), exit 3."""
    results = tmp_path / "r.parquet"
    results.write_bytes(b"PAR1")
    proc = cli(typo, str(results))
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == f"Error: {typo}: no such file or command (did you mean `dllogscan {command}`?)\n"


def test_a_file_named_like_an_option_is_pointed_to(tmp_path, failing_log):
    """Before: ``dllogscan -job.log`` was typer's boxed "No such option: -j"."""
    dashed = tmp_path / "-job.log"
    dashed.write_bytes(failing_log.read_bytes())
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "-job.log"], cwd=tmp_path, capture_output=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stderr.decode() == (
        "Error: -job.log is a file, but a word starting with '-' is read as an option: "
        "give it as ./-job.log or after --\n")
    assert cli("--", str(dashed)).returncode == 1


@pytest.mark.parametrize("args", [[""], ["batch", ""], ["scan", "job.log", ""]])
def test_an_empty_argument_is_one_error_line(args):
    """``dllogscan "$LOG"`` with LOG unset. Before: ``.: is a directory (use `dllogscan batch .`)``,
    advice that scans the whole current folder; in a batch, a row named "" that could not be read."""
    proc = cli(*args)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr == b"Error: an empty argument (an unset shell variable?): give a log or a folder\n"


def _stdin_closed() -> None:
    import os

    os.close(0)


@pytest.mark.parametrize("args, name", [(["-"], "-"), (["paste"], "paste")])
def test_a_closed_standard_input_is_one_error_line(args, name):
    """``dllogscan - <&-``. Before: a traceback ending in ``AttributeError: 'NoneType' object has
    no attribute 'buffer'`` (``paste``: ``'isatty'``)."""
    proc = subprocess.run([sys.executable, "-m", "dllogscan", *args], capture_output=False, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, preexec_fn=_stdin_closed, timeout=120)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert proc.stderr.decode().splitlines()[-1] == f"Error: {name}: standard input is closed"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("args", [["--format", "json"], []])
def test_an_output_that_cannot_be_written_is_one_error_line(failing_log, args):
    """``dllogscan job.log > /dev/full``. Before: a traceback ending in ``OSError: [Errno 28] No
    space left on device``, exit 1."""
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "dllogscan", str(failing_log), *args], stdout=full,
                              stderr=subprocess.PIPE, timeout=120)
    assert (proc.returncode, proc.stderr) == (2, b"Error: cannot write the output: No space left on device\n")


@pytest.mark.parametrize("args", [[], ["--format", "md"], ["--format", "json"], ["--format", "csv"]])
def test_an_output_encoding_without_the_text_s_characters_does_not_crash(tmp_path, args):
    """Standard output in ASCII or a Windows code page (``PYTHONIOENCODING=ascii``, cp1252 when
    redirected on Windows). Before: a traceback ending in ``UnicodeEncodeError: 'ascii' codec
    can't encode character '\\u2014'`` (a fix's dash), or a log's own characters."""
    log = tmp_path / "job.log"
    log.write_text(BUS.rstrip("\n") + " — café ✓\n", encoding="utf-8")
    import os

    proc = subprocess.run([sys.executable, "-m", "dllogscan", str(log), *args], capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr[-300:]
    if args in (["--format", "json"], ["--format", "csv"]):  # what a program reads is UTF-8, as with --out
        assert "— café ✓" in proc.stdout.decode("utf-8")
    else:
        assert proc.stdout.isascii() and b"Class A" in proc.stdout and b"\\u2014 caf\\xe9 \\u2713" in proc.stdout
    if args == ["--format", "json"]:
        assert json.loads(proc.stdout)["diagnoses"][0]["class"] == "A"


def test_batch_rows_on_an_ascii_output_are_utf8_json(tmp_path):
    """``dllogscan batch logs/`` (JSONL on standard output) under ``PYTHONIOENCODING=ascii``.
    Before: a UnicodeEncodeError traceback at the first row that holds a non-ASCII character."""
    import os

    (tmp_path / "job.log").write_text(BUS.rstrip("\n") + " — café\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "dllogscan", "batch", str(tmp_path)], capture_output=True,
                          timeout=120, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr[-300:]
    row = json.loads(proc.stdout.decode("utf-8"))
    assert row["diagnoses"][0]["evidence"][0]["text"].endswith(" — café")
