"""Recorded cluster tools on PATH: each test gets a bin folder of wrappers around
``tests/fixtures/cluster/fake_tool.py`` replaying one scenario folder, and reads back the calls."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CLUSTER = Path(__file__).parent / "fixtures" / "cluster"
EXAMPLES = Path(__file__).parent.parent / "examples"  # the README's examples replay the same way
FAKE = CLUSTER / "fake_tool.py"
ALL_TOOLS = ("scontrol", "sacct", "journalctl", "dmesg", "kubectl")
JOB_UID = 1000  # the recorded jobs' user: alice(1000); a root epilog writes only to her files


@dataclass
class Fakes:
    env: dict[str, str]
    workdir: Path
    calls_file: Path

    def calls(self) -> list[list[str]]:
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dllogscan", *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout)


def fakes(tmp_path: Path, scenario: str, tools: tuple[str, ...] = ALL_TOOLS, **env: str) -> Fakes:
    """Wrappers for ``tools`` only (a tool left out is absent from PATH), the scenario's
    ``workdir/`` copied to a fresh folder, and the environment to run dllogscan in."""
    src = CLUSTER / scenario if (CLUSTER / scenario).is_dir() else EXAMPLES / scenario
    bin_dir, work, replies = tmp_path / "bin", tmp_path / "work", tmp_path / "replies"
    bin_dir.mkdir(parents=True)
    shutil.copytree(src, replies)
    if (src / "workdir").is_dir():
        shutil.copytree(src / "workdir", work)
        if os.geteuid() == 0:  # as Slurm left them: the job's files belong to its user
            for path in work.rglob("*"):
                os.chown(path, JOB_UID, JOB_UID)
    else:
        work.mkdir()
    for tool in tools:
        wrapper = bin_dir / tool
        wrapper.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{FAKE}' {tool} \"$@\"\n")
        wrapper.chmod(0o755)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "GITHUB_"))}
    full.update(PATH=str(bin_dir), FAKE_DIR=str(replies), FAKE_WORKDIR=str(work),
                FAKE_CALLS=str(tmp_path / "calls.jsonl"), PYTHONPATH=str(Path(__file__).parent.parent), **env)
    return Fakes(full, work, tmp_path / "calls.jsonl")
