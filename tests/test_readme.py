"""The README's two set-up commands: the test command is exactly what CI runs."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_commands() -> list[str]:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0].strip() for block in section.split("```sh\n")[1:]]


def test_exactly_two_setup_commands():
    install_and_run, install_and_test = setup_commands()
    assert "pip install" in install_and_run and "dllogscan examples/" in install_and_run
    assert (ROOT / install_and_run.split("dllogscan ", 1)[1].split()[0]).is_file()
    assert "pip install" in install_and_test and "pytest" in install_and_test


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert setup_commands()[1] in ci.splitlines()


def test_log_files_the_readme_names_exist():
    """Every `name.log` the README cites is a committed log (corpus/logs/ or examples/): a renamed
    variant left `e-deadlock-timeout-w2.log` cited for sessions after its file was gone."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z0-9][a-z0-9._-]*\.log)`", text))
    assert named
    missing = [n for n in sorted(named)
               if not (ROOT / "corpus" / "logs" / n).is_file() and not (ROOT / "examples" / n).is_file()]
    assert not missing, missing
