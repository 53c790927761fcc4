"""User signature files: wrong types are one clear error naming file, entry and field; a pattern
that backtracks for minutes on a hostile line is refused at load, and any user pattern runs with
a time budget while scanning."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from dllogscan.signatures import probes as sigprobe
from dllogscan.core.errors import SignatureError
from dllogscan.pipeline.runner import get_scanner
from dllogscan.scan.scanner import Scanner
from dllogscan.signatures.database import Database
from dllogscan.signatures.loader import load_database, parse_signature
from dllogscan.sources.streams import from_bytes

GOOD = '''
[[signature]]
id = "A.shm-full.user"
class = "A"
subclass = "shm-full"
title = "user"
role = "failure"
keywords = ["shmfail"]
pattern = 'shmfail (?P<path>\\S+)'
examples = ["shmfail /dev/shm/a", "x shmfail /dev/shm/b", "shmfail c"]
counter_examples = ["shm fail x"]

[[fix]]
key = "A"
title = "t"
why = "w"
commands = ["df -h /dev/shm"]
'''
SLOW_PATTERN = "pattern = '''shmfail (.*?,){15}P'''"
SLOW_EXAMPLES = 'examples = ["shmfail a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,P", "shmfail ,,,,,,,,,,,,,,,P"]'
COMMAS = b"shmfail " + b"," * 4000 + b"\n"


def _write(tmp_path, text):
    path = tmp_path / "user.toml"
    path.write_text(text)
    return path


def _slow(text: str) -> str:
    return (text.replace("pattern = 'shmfail (?P<path>\\S+)'", SLOW_PATTERN)
            .replace('examples = ["shmfail /dev/shm/a", "x shmfail /dev/shm/b", "shmfail c"]', SLOW_EXAMPLES))


def test_good_user_file_loads(tmp_path):
    db = load_database([_write(tmp_path, GOOD)], include_default=False)
    assert [s.id for s in db.signatures] == ["A.shm-full.user"]


@pytest.mark.parametrize("old, new, message", [
    ('role = "failure"', 'role = "failure"\npriority = "high"', "priority must be an integer, not str 'high'"),
    ("pattern = 'shmfail (?P<path>\\S+)'", "pattern = 5", "pattern must be a string, not int 5"),
    ('keywords = ["shmfail"]', 'keywords = "shmfail"', "keywords must be a list of strings"),
    ('role = "failure"', 'role = "failure"\nweight = true', "weight must be a number"),
    ('role = "failure"', 'role = "failure"\nrequires = [{ ids = "A.x" }]', "requires: ids must be a list of strings"),
    ('role = "failure"', 'role = "failure"\ncapture_after = 2.5', "capture_after must be an integer"),
    ('examples = ["shmfail /dev/shm/a", "x shmfail /dev/shm/b", "shmfail c"]', "", "needs at least one example"),
    ('examples = ["shmfail /dev/shm/a", "x shmfail /dev/shm/b", "shmfail c"]', "examples = []", "needs at least one example"),
    ('examples = ["shmfail /dev/shm/a", "x shmfail /dev/shm/b", "shmfail c"]', 'examples = "shmfail a"', "examples must be a list of strings"),
])
def test_wrong_types_name_file_entry_and_field(tmp_path, old, new, message):
    assert old in GOOD
    with pytest.raises(SignatureError) as info:
        load_database([_write(tmp_path, GOOD.replace(old, new, 1))], include_default=False)
    text = str(info.value)
    assert text.startswith("user.toml: signature 'A.shm-full.user': ") and message in text, text


@pytest.mark.parametrize("old, new, message", [
    ('commands = ["df -h /dev/shm"]', 'commands = "df -h /dev/shm"', "fix 'A': commands must be a list of strings"),
    ('why = "w"', 'why = "w"\nrank = "1"', "fix 'A': rank must be an integer"),
])
def test_wrong_fix_types(tmp_path, old, new, message):
    with pytest.raises(SignatureError, match=message):
        load_database([_write(tmp_path, GOOD.replace(old, new, 1))], include_default=False)


@pytest.mark.parametrize("text, message", [
    ('signature = "abc"\n', "signature must be an array of tables ([[signature]]), not str 'abc'"),
    ("signature = [1, 2]\n", "signature must be an array of tables"),
    ('fix = { key = "A" }\n', "fix must be an array of tables"),
])
def test_wrong_top_level_types(tmp_path, text, message):
    with pytest.raises(SignatureError) as info:
        load_database([_write(tmp_path, text)], include_default=False)
    assert "user.toml" in str(info.value) and message in str(info.value)


def test_cli_wrong_type_is_one_error_line(tmp_path):
    sig = _write(tmp_path, GOOD.replace('role = "failure"', 'role = "failure"\npriority = "high"'))
    log = tmp_path / "job.log"
    log.write_text("hello\n")
    proc = subprocess.run([sys.executable, "-m", "dllogscan", str(log), "-s", str(sig)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "Error: user.toml: signature 'A.shm-full.user': priority must be an integer, not str 'high'"]


def test_backtracking_pattern_refused_at_load(tmp_path):
    sig = _write(tmp_path, _slow(GOOD))
    log = tmp_path / "commas.log"
    log.write_bytes(COMMAS)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dllogscan", str(log), "-s", str(sig)],
                          capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("Error: user.toml: signature 'A.shm-full.user': pattern runs past its")
    assert elapsed < 10  # interpreter start included; before the budget the scan ran > 60 s


def test_budget_bounds_a_scan_with_a_slow_user_pattern():
    """A pattern that slipped past the probe still costs at most MAX_TIMEOUTS budgets per process."""
    raw = {"id": "A.shm-full.slow", "class": "A", "subclass": "shm-full", "title": "t", "role": "failure",
           "keywords": ["shmfail"], "pattern": "shmfail (.*?,){15}P", "examples": ["shmfail ,,,,,,,,,,,,,,,P"]}
    sig = parse_signature(raw, "user.toml", user=True)
    assert isinstance(sig.compiled, sigprobe.BudgetedPattern)
    scanner = Scanner(Database(signatures=[sig], fixes=[]), engine="python")
    start = time.perf_counter()
    # 50 different lines, each searched on its own (a copy of the line before would take its
    # outcome, and lines this long are not joined to a neighbour as a wrapped message)
    out = scanner.scan(from_bytes(b"".join(COMMAS[:-1] + b" %d\n" % i for i in range(50))).open())
    elapsed = time.perf_counter() - start
    assert out.lines == 50 and out.hits == []
    assert elapsed < 3, elapsed  # MAX_TIMEOUTS budgets (0.5 s), not 50 lines x minutes
    assert sig.compiled.timeouts == sigprobe.MAX_TIMEOUTS
    assert scanner.scan(from_bytes(b"shmfail ,,,,,,,,,,,,,,,P\n").open()).hits == []  # switched off


def test_shipped_patterns_run_without_the_budget_wrapper():
    db = get_scanner().db
    assert not any(s.user for s in db.signatures)
    assert not any(isinstance(s.compiled, sigprobe.BudgetedPattern) for s in db.signatures)


def test_probe_passes_every_shipped_pattern_quickly():
    """The load-time probe would not refuse a shipped pattern (they meet the same bar)."""
    start = time.perf_counter()
    for sig in get_scanner().db.signatures:
        assert sigprobe.probe(sig.compiled, sig.examples, sig.keywords) is None, sig.id
    assert time.perf_counter() - start < 10
