"""One vocabulary: an option name means the same thing in every command. ``--prefilter`` is the
literal matcher everywhere, ``--engine`` / ``--scheduler`` is where ``batch`` runs, and the old
spellings still work for one release with one deprecation line on stderr."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from dllogscan.cli.app import _register_commands, app

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "examples" / "docker-shm-bus-error.log"
ENGINE_LINE = ("dllogscan: --engine is deprecated and goes in the next release; "
               "use --prefilter (--engine now names where batch runs)\n")


@pytest.fixture(scope="module")
def commands():
    _register_commands()
    group = typer.main.get_command(app)
    return {name: group.commands[name] for name in group.commands}


def _options(command, visible_only=True):
    """``{option string: param}`` of a click command."""
    found = {}
    for param in command.params:
        if visible_only and getattr(param, "hidden", False):
            continue
        for opt in list(param.opts) + list(getattr(param, "secondary_opts", [])):
            found[opt] = param
    return found


def test_the_matcher_is_prefilter_in_every_command(commands):
    matchers = {name for name, cmd in commands.items() if "--prefilter" in _options(cmd)}
    assert {"scan", "paste", "report", "slurm", "k8s", "batch"} <= matchers
    helps = {_options(commands[name])["--prefilter"].help for name in matchers}
    assert len(helps) == 1 and "auto | hyperscan | ahocorasick | python" in helps.pop()
    for name, cmd in commands.items():  # --engine is shown only where it names where batch runs
        if name != "batch":
            assert "--engine" not in _options(cmd), name
    assert "local" in _options(commands["batch"])["--engine"].help
    assert "--scheduler" in _options(commands["batch"])


def test_no_doubled_negations_and_one_spelling_per_meaning(commands):
    for name, cmd in commands.items():
        opts = _options(cmd)
        assert not [o for o in opts if o.startswith("--no-no-")], name
    assert "--no-default-signatures" in _options(commands["batch"])
    # options shared by several commands carry one help text wherever their meaning is the same
    for option in ("--redact", "--exit-zero", "--prefilter"):
        helps = {_options(cmd)[option].help for cmd in commands.values() if option in _options(cmd)}
        assert len(helps) == 1, (option, helps)


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", *args], capture_output=True, text=True,
                          input=stdin, timeout=120)


@pytest.mark.parametrize("lead", [[], ["scan"]], ids=["plain", "scan"])
def test_old_engine_spelling_still_scans_with_one_line(lead):
    new = _run(*lead, str(LOG), "-f", "json", "--prefilter", "python")
    old = _run(*lead, str(LOG), "-f", "json", "--engine", "python")
    assert new.returncode == old.returncode == 1
    assert new.stderr == ""
    assert old.stderr == ENGINE_LINE
    assert json.loads(old.stdout)["diagnoses"] == json.loads(new.stdout)["diagnoses"]


def test_old_engine_spelling_in_paste_and_report():
    text = LOG.read_text()
    paste = _run("paste", "-f", "json", "--engine", "python", stdin=text)
    assert paste.returncode == 1 and paste.stderr == ENGINE_LINE
    assert json.loads(paste.stdout)["diagnoses"][0]["class"] == "A"
    report = _run("report", str(LOG), "--engine", "python")
    assert report.returncode == 1 and report.stderr == ENGINE_LINE and "bus" in report.stdout.lower()


def test_old_and_new_spelling_that_disagree_is_a_usage_error():
    proc = _run(str(LOG), "--engine", "python", "--prefilter", "ahocorasick")
    assert proc.returncode == 2
    assert proc.stderr == ENGINE_LINE + ("Error: give --prefilter only (got --engine python and "
                                         "--prefilter ahocorasick)\n")


def test_batch_old_negation_still_runs(tmp_path):
    (tmp_path / "job.log").write_bytes(LOG.read_bytes())
    proc = _run("batch", str(tmp_path), "--no-no-default-signatures", "--jobs", "1")
    assert proc.returncode == 1
    assert proc.stderr == ("dllogscan: --no-no-default-signatures is deprecated and goes in the next release; "
                           "leave it out: the shipped signatures are the default\n")
    assert json.loads(proc.stdout.splitlines()[0])["diagnoses"][0]["class"] == "A"
