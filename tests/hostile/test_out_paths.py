"""A bad ``--out`` (a missing folder, a directory, a full device) is exit 2 and one ``Error:``
line on scan, report, paste and parquet, never a traceback (issue 12, section 2)."""
from __future__ import annotations

import os

import pytest

from tests.hostile.clirun import cli, no_traceback

BUS = "RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error.\n"
COMMANDS = {
    "scan-json": (["-f", "json"], None),
    "scan-typer": (["scan", "--redact", "-f", "json"], None),
    "scan-parquet": (["-f", "parquet"], None),
    "report": (["report"], None),
    "paste": (["paste", "-f", "md"], BUS.encode()),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("where", ["missing-folder", "directory"])
def test_bad_out_is_exit_2_and_one_error_line(tmp_path, name, where):
    log = tmp_path / "job.log"
    log.write_text(BUS)
    out = tmp_path / "nope" / "x.json" if where == "missing-folder" else tmp_path
    args, stdin = COMMANDS[name]
    target = [] if stdin else [str(log)]
    proc = cli(*args, *target, "--out", str(out), stdin=stdin) if args[0] in ("report", "paste", "scan") \
        else cli(*target, *args, "--out", str(out))
    err = no_traceback(proc)
    assert proc.returncode == 2, err
    assert err.splitlines() == [f"Error: --out {out}: " + ("is a directory; name a file" if where == "directory"
                                                           else f"the folder {out.parent} does not exist")]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", COMMANDS)
def test_a_failing_write_is_exit_2(tmp_path, name):
    log = tmp_path / "job.log"
    log.write_text(BUS)
    args, stdin = COMMANDS[name]
    proc = cli(*args, *([] if stdin else [str(log)]), "--out", "/dev/full", stdin=stdin)
    err = no_traceback(proc)
    assert proc.returncode == 2, err
    assert err.startswith("Error: --out /dev/full: cannot write:") and len(err.splitlines()) == 1
